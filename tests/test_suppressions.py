"""Suppression placement: on any line of the reported node, or alone on the line above it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from declint.cli import cli
from declint.suppressions import Suppression, SuppressionIndex, parse_suppressions
from declint.types import Finding, Position, Span
from tests.conftest import MakeTree

MODEL = "tensorrt_llm/_torch/models/modeling_x.py"


def run(make_tree: MakeTree, source: str) -> list[str]:
    root = make_tree({MODEL: source})
    result = CliRunner().invoke(cli, ["check", str(root / MODEL)])
    findings = [line for line in result.output.splitlines() if re.match(r"\S+:\d+:\d+: DL\d{3} ", line)]
    return [" ".join(line.split(" ")[:2]) for line in findings]


def test_trailing_comment_on_the_last_line_of_a_multiline_call(make_tree: MakeTree) -> None:
    source = (
        "import torch.nn.functional as F\n\n"
        "def encode(q, k, v):\n"
        "    return F.scaled_dot_product_attention(\n"
        "        q, k, v)  # declint: ignore[DL101] measured: faster than a backend launch here\n"
    )
    assert run(make_tree, source) == []


def test_standalone_comment_above_applies_across_blank_lines_and_comments(make_tree: MakeTree) -> None:
    source = (
        "import torch.nn.functional as F\n\n"
        "def encode(q, k, v):\n"
        "    # declint: ignore[DL101] window merger stays on SDPA on purpose\n"
        "    # (see the support table)\n"
        "    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    assert run(make_tree, source) == []


def test_comment_two_statements_above_does_not_apply(make_tree: MakeTree) -> None:
    source = (
        "import torch.nn.functional as F\n\n"
        "def encode(q, k, v):\n"
        "    # declint: ignore[DL101] stale\n"
        "    q = q * 2\n"
        "    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    assert run(make_tree, source) == [
        "tensorrt_llm/_torch/models/modeling_x.py:4:5: DL902",
        "tensorrt_llm/_torch/models/modeling_x.py:6:12: DL101",
    ]


STATEMENT_COMMENTS = {
    "alone above the statement": (
        "    # declint: ignore[DL103] legacy default\n    return get_attention_backend(\n        'TRTLLM',\n    )\n"
    ),
    "trailing its first line": (
        "    return get_attention_backend(  # declint: ignore[DL103] legacy default\n        'TRTLLM',\n    )\n"
    ),
    "on its closing bracket": (
        "    return get_attention_backend(\n        'TRTLLM',\n    )  # declint: ignore[DL103] legacy default\n"
    ),
    "alone after its argument": (
        "    return get_attention_backend(\n        'TRTLLM',\n        # declint: ignore[DL103] legacy default\n    )\n"
    ),
}


@pytest.mark.parametrize("where", list(STATEMENT_COMMENTS))
def test_a_suppression_covers_the_statement_a_finding_starts_in(make_tree: MakeTree, where: str) -> None:
    """The finding is the string on a continuation line; a comment anywhere in the statement, or
    alone above it, covers it (it was DL902 "unused" plus the DL103)."""
    source = "def pick():\n" + STATEMENT_COMMENTS[where]
    assert run(make_tree, source) == []


def test_a_suppression_covers_only_its_own_statement_or_header(make_tree: MakeTree) -> None:
    source = (
        "def pick(attn_backend):  # declint: ignore[DL103] the header only\n"
        "    return attn_backend == 'TRTLLM'\n"
        "\n\n"
        "def other(attn_backend):\n"
        "    x = attn_backend == 'TRTLLM'  # declint: ignore[DL103] this statement only\n"
        "    return attn_backend == 'VANILLA'\n"
    )
    assert run(make_tree, source) == [
        "tensorrt_llm/_torch/models/modeling_x.py:1:26: DL902",
        "tensorrt_llm/_torch/models/modeling_x.py:2:28: DL103",
        "tensorrt_llm/_torch/models/modeling_x.py:7:28: DL103",
    ]


def test_a_bare_or_spaced_suppression_is_read(make_tree: MakeTree) -> None:
    """`# declint: ignore` names no code: DL903 instead of nothing; a space before the bracket
    still suppresses; prose that only starts alike (`ignored`) is no suppression."""
    source = (
        "def f(attn_backend):\n"
        "    a = attn_backend == 'TRTLLM'  # declint: ignore legacy\n"
        "    b = attn_backend == 'TRTLLM'  # declint: ignore [DL103] legacy\n"
        "    c = attn_backend == 'TRTLLM'  # declint: ignored files are listed elsewhere\n"
        "    return a, b, c\n"
    )
    root = make_tree({MODEL: source})
    result = CliRunner().invoke(cli, ["check", "--select", "DL103,DL9", str(root / MODEL)])
    assert result.output.splitlines()[:-1] == [
        "tensorrt_llm/_torch/models/modeling_x.py:2:25: " + DL103,
        "tensorrt_llm/_torch/models/modeling_x.py:2:35: DL903 suppression names no rule code",
        "tensorrt_llm/_torch/models/modeling_x.py:4:25: " + DL103,
    ]


def test_a_reason_stops_where_another_tool_s_comment_starts() -> None:
    """The reason a report carries (SARIF's justification) is the suppression's own; a `# noqa`
    after it belongs to another tool (the DL902 fix already keeps it apart)."""
    source = (
        "a = 1  # declint: ignore[DL103] legacy default  # noqa: E501\n"
        "b = 1  # declint: ignore[DL103] see #123 for why\n"
        "c = 1  # declint: ignore[DL103] - legacy  # type: ignore[arg-type]\n"
    )
    assert [s.reason for s in parse_suppressions(source)] == ["legacy default", "see #123 for why", "legacy"]


def test_several_codes_and_hygiene(make_tree: MakeTree) -> None:
    source = "def f(attn_backend='TRTLLM'):  # declint: ignore[DL103, DL101]\n    return attn_backend\n"
    # DL103 suppressed; DL101 not enabled-and-unused? it is enabled: unused. No reason: DL901.
    assert run(make_tree, source) == [
        "tensorrt_llm/_torch/models/modeling_x.py:1:32: DL901",
        "tensorrt_llm/_torch/models/modeling_x.py:1:32: DL902",
    ]


def test_unused_is_not_judged_for_disabled_codes(make_tree: MakeTree) -> None:
    root = make_tree({MODEL: "x = 1  # declint: ignore[DL101] legacy\n"})
    result = CliRunner().invoke(cli, ["check", "--ignore", "DL101", str(root / MODEL)])
    assert (result.exit_code, result.output) == (0, "All clear: 1 file checked.\n")


# ---- which comment hides a finding: found by line, same answer as trying each comment ------------
_CODES = ("DL101", "DL103")


def _covers(suppression: Suppression, finding: Finding) -> bool:
    """The placement rule as the module doc states it (the reference the index must agree with)."""
    start, end = finding.span.start.line, finding.span.end.line
    statement = suppression.statement
    return (
        start <= suppression.line <= end
        or start in (suppression.applies_from, suppression.decorated_line)
        or (statement is not None and statement[0] <= start <= statement[1])
    )


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    comments=st.lists(
        st.tuples(
            st.integers(1, 30),
            st.integers(0, 4),
            st.sets(st.sampled_from(_CODES), max_size=2),
            st.one_of(st.none(), st.integers(1, 4)),  # on or above decorators: the `class` line is this far below
            st.one_of(st.none(), st.tuples(st.integers(0, 2), st.integers(0, 4))),  # its statement: (before, length)
        ),
        max_size=12,
    ),
    spans=st.lists(st.tuples(st.integers(1, 30), st.integers(-2, 6), st.sampled_from(_CODES)), max_size=12),
)
def test_the_index_finds_the_first_covering_comment_as_trying_each_would(
    comments: list[tuple[int, int, set[str], int | None, tuple[int, int] | None]], spans: list[tuple[int, int, str]]
) -> None:
    suppressions = sorted(
        (
            Suppression(
                line,
                0,
                tuple(sorted(codes)),
                "r",
                line + below,
                decorated_line=None if to is None else line + below + to,
                statement=None if within is None else (line - within[0], line - within[0] + within[1]),
            )
            for line, below, codes, to, within in comments
        ),
        key=lambda s: (s.line, s.applies_from),  # source order, as parse_suppressions gives them
    )
    index = SuppressionIndex(suppressions)
    for start, length, code in spans:
        finding = Finding(code, "x", "m.py", Span(Position(start, 0), Position(start + length, 0)), "m")
        expected = next((s for s in suppressions if code in s.codes and _covers(s, finding)), None)
        assert index.hiding(finding) is expected


# ---- lines as Python numbers them ----------------------------------------------------------------
DL103 = (
    'DL103 backend name "TRTLLM" retyped as a string literal; read it from the shared Literal '
    "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
)


def report(make_tree: MakeTree, source: str) -> tuple[int, list[str]]:
    """Exit code and every finding line (path:line:col: CODE message) of checking the model file."""
    return check(make_tree({MODEL: source}))


def check(root: Path, *args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", *args, str(root / MODEL)])
    return result.exit_code, [line for line in result.output.splitlines() if re.match(r"\S+:\d+:\d+: DL\d{3} ", line)]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x85"])
def test_a_character_str_splitlines_splits_at_does_not_shift_a_standalone_suppression(
    make_tree: MakeTree, separator: str
) -> None:
    """Before, the next code line was looked up in str.splitlines' lines, one off after the
    separator: the comment seemed to apply to line 8, so it was unused (DL902), DL103 was
    reported, and the safe DL902 fix deleted the comment."""
    source = (
        f'X = "a{separator}b"\n\n\ndef f(attn_backend):\n    y = 1\n'
        "    # declint: ignore[DL103] legacy\n"
        '    return (                    attn_backend == "TRTLLM")\n'
    )
    assert report(make_tree, source) == (0, [])


def test_a_form_feed_line_above_a_standalone_suppression(make_tree: MakeTree) -> None:
    source = (
        "X = 1\n\x0c\n\ndef f(attn_backend):\n    # declint: ignore[DL103] legacy path\n"
        '    return attn_backend == "TRTLLM"\n'
    )
    assert report(make_tree, source) == (0, [])


def test_after_a_line_separator_a_suppression_two_statements_above_still_does_not_apply(make_tree: MakeTree) -> None:
    source = (
        'X = "a\u2028b"\n\n\ndef f(attn_backend):\n    # declint: ignore[DL103] legacy\n    y = 1\n'
        '    return attn_backend == "TRTLLM"\n'
    )
    assert report(make_tree, source) == (
        1,
        [f"{MODEL}:5:5: DL902 unused suppression: no DL103 finding here", f"{MODEL}:7:28: {DL103}"],
    )


# ---- decorators are lines of the class or function they decorate ---------------------------------
REGISTER = (
    '@register_input_processor(object, model_type="x", placeholder_metadata=MultimodalPlaceholderMetadata(\n'
    '    placeholder_map={"image": "<i>"}))\n'
)
MODELS = (
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n"
    "from tensorrt_llm._torch.models.modeling_utils import MultimodalPlaceholderMetadata, register_input_processor\n"
    "\n\n"
)
WHY = "  # declint: ignore[DL102] encoder-free wrapper, declared by its subclasses\n"


def test_a_suppression_on_or_above_the_decorators_applies_to_the_class_line(make_tree: MakeTree) -> None:
    """A: alone above the first decorator; B: after the first decorator line; C: after the last
    line of a multi-line decorator; D: alone between two decorators; f: after a decorator, for a
    finding on the `def` line. Before, only a comment between the decorators and `class` applied,
    and the safe DL902 fix deleted all of these."""
    first, last = REGISTER.splitlines(keepends=True)
    source = (
        MODELS
        + WHY.lstrip()
        + REGISTER
        + "class A(MultimodalModelMixin):\n    pass\n\n\n"
        + first.rstrip("\n")
        + WHY
        + last
        + "class B(MultimodalModelMixin):\n    pass\n\n\n"
        + first
        + last.rstrip("\n")
        + WHY
        + "class C(MultimodalModelMixin):\n    pass\n\n\n"
        + "@staticmethod\n"
        + WHY.lstrip()
        + REGISTER
        + "class D(MultimodalModelMixin):\n    pass\n\n\n"
        + "@staticmethod  # declint: ignore[DL103] legacy default\n"
        + 'def f(attn_backend="TRTLLM"):\n    return attn_backend\n'
    )
    root = make_tree({MODEL: source})
    assert check(root) == (0, [])
    assert check(root, "--fix") == (0, [])
    assert (root / MODEL).read_text() == source  # the safe fix deletes none of them


def test_a_suppression_above_the_decorators_does_not_reach_into_the_body(make_tree: MakeTree) -> None:
    source = (
        MODELS
        + "# declint: ignore[DL103] not on the class line\n"
        + "@staticmethod\n"
        + 'def f(attn_backend):\n    return attn_backend == "TRTLLM"\n\n\n'
        + "# declint: ignore[DL102] two statements above\n"
        + "X = 1\n"
        + REGISTER
        + "class A(MultimodalModelMixin):\n    pass\n"
    )
    assert report(make_tree, source) == (
        1,
        [
            f"{MODEL}:5:1: DL902 unused suppression: no DL103 finding here",
            f"{MODEL}:8:28: {DL103}",
            f"{MODEL}:11:1: DL902 unused suppression: no DL102 finding here",
            f'{MODEL}:15:7: DL102 multimodal model "A" has no encoder_attention_backends declaration (own or '
            "inherited); declare its encoders: vision (registered modalities: image)",
        ],
    )


# ---- a suppression after another comment -----------------------------------------------------------
def test_a_suppression_after_another_comment_applies(make_tree: MakeTree) -> None:
    source = (
        "def f(attn_backend):\n"
        '    return attn_backend == "TRTLLM"  # noqa: E501  # declint: ignore[DL103] legacy path, see ADR-7\n'
    )
    assert report(make_tree, source) == (0, [])


def test_each_suppression_of_a_comment_is_judged_at_its_own_column(make_tree: MakeTree) -> None:
    source = (
        "def f(attn_backend):\n"
        '    return attn_backend == "TRTLLM"  # declint: ignore[DL101] stale  # declint: ignore[DL103]\n'
    )
    assert report(make_tree, source) == (
        1,
        [
            f"{MODEL}:2:38: DL902 unused suppression: no DL101 finding here",
            f"{MODEL}:2:70: DL901 suppression has no reason; write why after the codes: "
            "# declint: ignore[<code>] <reason>",
        ],
    )


@pytest.mark.parametrize(
    "comment",
    [
        "# see x#declint: ignore[DL103] legacy",  # no whitespace before the "#": text of the comment
        '# write "# declint: ignore[DL103] reason" to silence it',  # quoted
    ],
)
def test_a_suppression_quoted_inside_another_comment_does_not_apply(make_tree: MakeTree, comment: str) -> None:
    source = f'def f(attn_backend):\n    return attn_backend == "TRTLLM"  {comment}\n'
    assert report(make_tree, source) == (1, [f"{MODEL}:2:28: {DL103}"])
