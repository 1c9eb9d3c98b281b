"""`declint table`: the declared matrix as Markdown/JSON, and --check against a docs page (DL107)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import DEMO, REPO, MakeTree

GOLDEN = REPO / "tests" / "fixtures" / "table_demo.md"
DOCS = DEMO / "docs" / "encoder_attention_backends.md"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["table", *args])
    return result.exit_code, result.stdout


def test_markdown_matches_the_golden_file() -> None:
    code, output = invoke(str(DEMO))
    if os.environ.get("DECLINT_REGENERATE"):
        GOLDEN.write_text(output, encoding="utf-8")
    assert code == 0
    assert output == GOLDEN.read_text(encoding="utf-8")


def test_json_rows() -> None:
    code, output = invoke("--format", "json", str(DEMO))
    rows = json.loads(output)
    assert code == 0
    assert {
        "model": "Gemma4UnifiedModel",
        "encoder": "(none)",
        "backends": "not configurable",
        "reason": "no attention encoder",
        "default": "-",
    } in rows
    assert {
        "model": "Mistral3VLM",
        "encoder": "vision",
        "backends": "VANILLA, TRTLLM, FLASHINFER",
        "reason": "",
        "default": "FLASHINFER",
    } in rows


def test_check_against_the_unchanged_golden_exits_0() -> None:
    assert invoke("--check", str(GOLDEN), str(DEMO)) == (0, "All clear: 1 file checked.\n")


def test_check_against_the_drifted_page_reports_each_drifted_row() -> None:
    code, output = invoke("--check", str(DOCS), str(DEMO))
    assert code == 1
    lines = [line for line in output.splitlines() if " DL107 " in line]
    sidecar = (DEMO / "expected-findings.txt").read_text().splitlines()
    expected = [tuple(e.split(":")[:2]) for e in sidecar if e.endswith("DL107")]
    assert [tuple(line.split(":")[:2]) for line in lines] == expected
    assert len(lines) == 8
    assert lines[1] == (
        "docs/encoder_attention_backends.md:15:1: DL107 Glm5NextVModel / vision: backends is 'VANILLA, TRTLLM' "
        "in the docs but 'TRTLLM' in the code"
    )


def test_page_without_a_table() -> None:
    code, output = invoke("--check", str(REPO / "README.md"), str(DEMO))
    assert code == 1
    assert "DL107 no encoder support table found" in output


ODD_REASONS = """\
from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin


class ZzModel(MultimodalModelMixin):
    encoder_attention_backends = {
        "vision": FixedEncoderAttention("uses a | pipe"),
        "audio": FixedEncoderAttention(" line one\\nline two\\x1b[31m "),
    }
"""


def test_a_reason_with_control_characters_stays_on_its_row_and_checks_against_itself(make_tree: MakeTree) -> None:
    """A reason's newline ended the table in the middle of a row (and hid the rows after it from
    `table --check`), and its ESC reached the terminal: cells escape them, and the page declint
    writes checks clean against the code it came from."""
    root = make_tree({"tensorrt_llm/_torch/models/modeling_zz.py": ODD_REASONS})
    code, output = invoke(str(root))
    assert code == 0
    assert output.splitlines()[2:] == [
        "| ZzModel | audio | not configurable | line one\\nline two\\x1b[31m | - |",
        "| ZzModel | vision | not configurable | uses a \\| pipe | - |",
    ]
    page = root / "docs.md"
    page.write_text(output, encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (0, "All clear: 1 file checked.\n")
    page.write_text(output.replace("line two", "line 2"), encoding="utf-8")
    code, output = invoke("--check", str(page), str(root))
    assert code == 1
    assert output == (
        "docs.md:3:1: DL107 ZzModel / audio: reason is 'line one\\\\nline 2\\\\x1b[31m' in the docs but "
        "'line one\\\\nline two\\\\x1b[31m' in the code\nFound 1 finding in 1 file.\n"
    )


ROW = "| MModel | vision | not configurable | HF tower | - |"
TABLE = "| model | encoder | backends | reason | default |\n|---|---|---|---|---|\n" + ROW + "\n"


@pytest.mark.parametrize(
    ("page", "header_line"),
    [
        # An example in a fenced code block (``` or ~~~) or an HTML comment is no table.
        ("# Backends\n\n```markdown\n" + TABLE.replace("MModel", "Example") + "```\n\n" + TABLE, 9),
        ("~~~~\n" + TABLE.replace("MModel", "Example") + "```\n~~~~\n" + TABLE, 7),
        ("<!-- how a row looks:\n" + TABLE.replace("MModel", "Example") + "-->\n" + TABLE, 6),
        # Outer pipes are optional in GitHub-flavoured Markdown; a BOM may precede the first line.
        ("\n".join(line.strip("|").strip() for line in TABLE.splitlines()) + "\n", 1),
        ("\ufeff" + TABLE, 1),
    ],
)
def test_the_docs_table_is_read_as_markdown_renders_it(page: str, header_line: int) -> None:
    from declint.table import Row, parse_docs_table

    table = parse_docs_table(page)
    assert table is not None
    assert (table.header_line, table.rows) == (
        header_line,
        ((header_line + 2, Row("MModel", "vision", "not configurable", "HF tower", "-")),),
    )


PIPELESS = "\n".join(line.strip("|").strip() for line in TABLE.splitlines()) + "\n"
# Lines after the table that hold a pipe but start another block (GFM): a list item, a quote,
# a heading, a fence, an HTML block. Each ends the table.
BLOCKS = [
    "- the LLM's `attn_backend` is separate; pipe it through `declint table | tee x`",
    "* a | b",
    "+ a | b",
    "1. a | b",
    "2) a | b",
    "> Note | quoted",
    "## a | b",
    "```sh | b",
    "~~~ a | b",
    "<div>a | b</div>",
]


@pytest.mark.parametrize("table", [TABLE, PIPELESS], ids=["outer pipes", "no outer pipes"])
@pytest.mark.parametrize("block", BLOCKS)
def test_a_block_with_a_pipe_right_after_the_table_is_no_row(table: str, block: str) -> None:
    from declint.table import Row, parse_docs_table

    parsed = parse_docs_table(table + block + "\n" + "  " + block + "\n")
    assert parsed is not None
    assert parsed.rows == ((3, Row("MModel", "vision", "not configurable", "HF tower", "-")),)


def test_under_a_header_with_a_leading_pipe_a_row_needs_one_too() -> None:
    from declint.table import Row, parse_docs_table

    parsed = parse_docs_table(TABLE + "NModel | audio | not configurable | x | -\n")
    assert parsed is not None
    assert parsed.rows == ((3, Row("MModel", "vision", "not configurable", "HF tower", "-")),)


def test_under_a_header_without_outer_pipes_any_line_with_a_pipe_is_a_row() -> None:
    from declint.table import Row, parse_docs_table

    parsed = parse_docs_table(PIPELESS + "| NModel | audio | not configurable | x | - |\nOModel | audio\n-1 | x\n")
    assert parsed is not None
    assert parsed.rows == (
        (3, Row("MModel", "vision", "not configurable", "HF tower", "-")),
        (4, Row("NModel", "audio", "not configurable", "x", "-")),
        (5, Row("OModel", "audio", "", "", "")),
        (6, Row("-1", "x", "", "", "")),
    )


def test_a_list_item_and_a_quote_after_the_table_are_not_reported(make_tree: MakeTree) -> None:
    """They were read as rows, each reported as 'in the docs table but no model declares it'."""
    root = make_tree({"tensorrt_llm/_torch/models/modeling_zz.py": ODD_REASONS})
    code, output = invoke(str(root))
    assert code == 0
    page = root / "docs.md"
    page.write_text(output + BLOCKS[0] + "\n" + "> Note | quoted\n", encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (0, "All clear: 1 file checked.\n")


def test_the_models_left_out_of_the_table_are_named_on_stderr() -> None:
    """A tree that predates the declarations printed an empty table and nothing else."""
    result = CliRunner().invoke(cli, ["table", str(DEMO)])
    assert result.exit_code == 0
    assert result.stdout == GOLDEN.read_text(encoding="utf-8")
    assert result.stderr == (
        "declint: 2 multimodal models with no declaration declint can read, not in the table: HCXVisionModel, "
        "LlavaNextModel (see DL102, DL104)\n"
    )


def test_an_entry_naming_a_backend_by_a_constant_is_an_invalid_row(make_tree: MakeTree) -> None:
    """Red-team 48: `("VANILLA", BACKEND_TRTLLM)` (DL104: names must be string literals) made a
    row listing VANILLA alone, with a default, as if the encoder accepted only that."""
    model = (
        "from tensorrt_llm.llmapi.llm_args import BACKEND_TRTLLM\n"
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
        "class KModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("VANILLA", BACKEND_TRTLLM)}\n'
    )
    root = make_tree({"tensorrt_llm/_torch/models/modeling_k.py": model})
    code, output = invoke(str(root))
    assert (code, output.splitlines()[2:]) == (0, ["| KModel | vision | invalid declaration |  | - |"])


DEFAULTS = """\
from typing import Any

from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin


class AModel(MultimodalModelMixin):
    encoder_attention_backends = {"vision": ("VANILLA", "FLASHINFER")}

    @classmethod
    def get_model_defaults(cls, llm_args: Any) -> dict[str, Any]:
        return dict(attn_backend="FLASHINFER")


class BModel(MultimodalModelMixin):
    encoder_attention_backends = {"vision": ("VANILLA", "FLASHINFER")}

    @classmethod
    def get_model_defaults(cls, llm_args: Any) -> dict[str, Any]:
        defaults = super().get_model_defaults(llm_args) if hasattr(super(), "get_model_defaults") else {}
        defaults["attn_backend"] = "FLASHINFER"
        return defaults


class CModel(MultimodalModelMixin):
    encoder_attention_backends = {"vision": ("VANILLA", "FLASHINFER")}

    @classmethod
    def get_model_defaults(cls, llm_args: Any) -> dict[str, Any]:
        return {"attn_backend": "FLASHINFER" if llm_args.fast else "VANILLA"}


class DModel(MultimodalModelMixin):
    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM")}

    @classmethod
    def get_model_defaults(cls, llm_args: Any) -> dict[str, Any]:
        return {"max_seq_len": 4096}
"""


def test_a_default_given_by_dict_call_or_set_on_the_returned_dict_is_the_model_default(make_tree: MakeTree) -> None:
    """Red-team b/t2: `return dict(attn_backend=...)` and `defaults["attn_backend"] = ...; return
    defaults` were not read: the table claimed the default-backend option (TRTLLM, which AModel
    does not even accept) and DL107 reported the correct docs row. A default only known at run
    time is `<dynamic>`, and any docs value passes for it; a method that sets none leaves TRTLLM."""
    root = make_tree({"tensorrt_llm/_torch/models/modeling_d.py": DEFAULTS})
    code, output = invoke(str(root))
    assert (code, output.splitlines()[2:]) == (
        0,
        [
            "| AModel | vision | VANILLA, FLASHINFER |  | FLASHINFER |",
            "| BModel | vision | VANILLA, FLASHINFER |  | FLASHINFER |",
            "| CModel | vision | VANILLA, FLASHINFER |  | \\<dynamic> |",  # `<` escaped: no HTML tag
            "| DModel | vision | VANILLA, TRTLLM |  | TRTLLM |",
        ],
    )
    page = root / "docs.md"
    page.write_text(output.replace("\\<dynamic>", "FLASHINFER on Hopper"), encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (0, "All clear: 1 file checked.\n")
    page.write_text(output.replace("FLASHINFER |\n", "TRTLLM |\n", 1), encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (
        1,
        "docs.md:3:1: DL107 AModel / vision: default is 'TRTLLM' in the docs but 'FLASHINFER' in the code\n"
        "Found 1 finding in 1 file.\n",
    )


def test_a_subclass_whose_defaults_replace_its_parents_gets_the_option(make_tree: MakeTree) -> None:
    """Red-team 61: a subclass whose `get_model_defaults` returns a dict of its own without
    attn_backend (or pops it) showed its parent's default; the method replaces the parent's, so
    the `default-backend` option applies. One that hands on the parent's keeps it."""
    model = (
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
        "class Parent(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("TRTLLM", "FLASHINFER")}\n\n'
        "    @classmethod\n"
        "    def get_model_defaults(cls, llm_args):\n"
        '        return {"attn_backend": "FLASHINFER"}\n\n\n'
        "class Replaced(Parent):\n"
        "    @classmethod\n"
        "    def get_model_defaults(cls, llm_args):\n"
        '        return {"max_batch_size": 8}\n\n\n'
        "class HandedOn(Parent):\n"
        "    @classmethod\n"
        "    def get_model_defaults(cls, llm_args):\n"
        "        return dict(super().get_model_defaults(llm_args), max_batch_size=8)\n"
    )
    root = make_tree({"tensorrt_llm/_torch/models/modeling_p.py": model})
    code, output = invoke(str(root))
    assert (code, output.splitlines()[2:]) == (
        0,
        [
            "| HandedOn | vision | TRTLLM, FLASHINFER |  | FLASHINFER |",
            "| Parent | vision | TRTLLM, FLASHINFER |  | FLASHINFER |",
            "| Replaced | vision | TRTLLM, FLASHINFER |  | TRTLLM |",
        ],
    )


def test_the_backends_of_a_row_are_compared_as_a_set(make_tree: MakeTree) -> None:
    """Red-team b/c1: code `("TRTLLM", "VANILLA")` against a docs row `VANILLA, TRTLLM` was a
    drift, though the encoder accepts the same backends either way."""
    model = (
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
        "class EModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("TRTLLM", "VANILLA")}\n'
    )
    root = make_tree({"tensorrt_llm/_torch/models/modeling_e.py": model})
    page = root / "docs.md"
    page.write_text(TABLE.replace(ROW, "| EModel | vision | VANILLA, TRTLLM |  | TRTLLM |"), encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (0, "All clear: 1 file checked.\n")
    page.write_text(
        TABLE.replace(ROW, "| EModel | vision | VANILLA, TRTLLM, FLASHINFER |  | TRTLLM |"), encoding="utf-8"
    )
    assert invoke("--check", str(page), str(root)) == (
        1,
        "docs.md:3:1: DL107 EModel / vision: backends is 'VANILLA, TRTLLM, FLASHINFER' in the docs but "
        "'TRTLLM, VANILLA' in the code\nFound 1 finding in 1 file.\n",
    )


def test_models_sharing_a_class_name_are_told_apart_by_their_module(make_tree: MakeTree) -> None:
    """Red-team b/t4: two `LlavaModel`s in modeling_a.py and modeling_b.py made two rows keyed
    alike, and DL107 matched one docs row to either (the other was never reported missing). Each
    is named by the shortest dotted tail of its module path that tells them apart."""
    model = (
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
        "class LlavaModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n'
    )
    root = make_tree(
        {
            "tensorrt_llm/_torch/models/modeling_a.py": model,
            "tensorrt_llm/_torch/models/modeling_b.py": model.replace('"TRTLLM",', '"TRTLLM", "VANILLA"'),
        }
    )
    code, output = invoke(str(root))
    assert (code, output.splitlines()[2:]) == (
        0,
        [
            "| modeling_a.LlavaModel | vision | TRTLLM |  | TRTLLM |",
            "| modeling_b.LlavaModel | vision | TRTLLM, VANILLA |  | TRTLLM |",
        ],
    )
    page = root / "docs.md"
    page.write_text(output, encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (0, "All clear: 1 file checked.\n")
    page.write_text(TABLE.replace(ROW, "| LlavaModel | vision | TRTLLM |  | TRTLLM |"), encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (
        1,
        "docs.md:1:1: DL107 modeling_a.LlavaModel / vision is declared (TRTLLM) but missing from the docs table\n"
        "docs.md:1:1: DL107 modeling_b.LlavaModel / vision is declared (TRTLLM, VANILLA) but missing from the "
        "docs table\n"
        # red-team 61: the row's name is now ambiguous, not declared by nothing
        "docs.md:3:1: DL107 LlavaModel / vision is in the docs table, but 2 models are named LlavaModel now; "
        "the table names them modeling_a.LlavaModel, modeling_b.LlavaModel\n"
        "Found 3 findings in 1 file.\n",
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('return {"attn_backend": "A", "max_seq_len": 1}', "'A'"),
        ("return dict(attn_backend=BACKEND_A, max_seq_len=1)", "BACKEND_A"),
        ('return {**super().get_model_defaults(llm_args), "max_seq_len": 1}', None),
        ('return {**super().get_model_defaults(llm_args), "attn_backend": "A"}', "'A'"),
        ('return {**load(), "max_seq_len": 1}', "..."),
        ('d = {"max_seq_len": 1}\n        d["attn_backend"] = "A"\n        return d', "'A'"),
        ('d = dict(attn_backend="A")\n        d["attn_backend"] = "B"\n        return d', "'B'"),
        ('d = {}\n        d.update(attn_backend="A")\n        return d', "'A'"),
        ('d = {}\n        d.update({"attn_backend": "A"})\n        return d', "'A'"),
        ('d = {}\n        d |= {"attn_backend": "A"}\n        return d', "'A'"),
        # model_defaults.UNSET (unparsed "NotImplemented"): a dict of its own without the key, or
        # with it popped, replaces the parent's: the option applies (red-team 61)
        ("d = {}\n        d.update(max_seq_len=1)\n        return d", "NotImplemented"),
        ('return {"max_batch_size": 8}', "NotImplemented"),
        ('d = {"attn_backend": "A"}\n        d.pop("attn_backend")\n        return d', "NotImplemented"),
        ('return dict(super().get_model_defaults(llm_args), attn_backend="V")', "'V'"),
        ("return dict(super().get_model_defaults(llm_args), max_seq_len=1)", None),
        ("d = load()\n        return d", "..."),
        ('d = {}\n        if llm_args.fast:\n            d["attn_backend"] = "A"\n        return d', "..."),
        ('d = {}\n        with ctx():\n            d["attn_backend"] = "A"\n        return d', "'A'"),
        ('if llm_args.fast:\n            return {"attn_backend": "A"}\n        return {}', "..."),
        ('if llm_args.fast:\n            return {"attn_backend": "A"}\n        return dict(attn_backend="A")', "'A'"),
        ('return {"attn_backend": "A" if llm_args.fast else "B"}', "'A' if llm_args.fast else 'B'"),
        ('return {"attn_backend": "A"} if llm_args.fast else dict(attn_backend="A")', "'A'"),
        ('def inner():\n            return {"attn_backend": "B"}\n        return {"attn_backend": "A"}', "'A'"),
        ('d = {}\n        d = {**d, "attn_backend": "A"}\n        return d', "'A'"),
        ("return None", None),
        ("pass", None),
    ],
)
def test_the_default_backend_get_model_defaults_returns(body: str, expected: str | None) -> None:
    """The returned dict's attn_backend, written in place or filled through a local name; `...`
    (model_defaults.UNKNOWN) where only running the method would tell: a call's dict, a write
    under an `if`, returns that disagree."""
    import ast

    from declint.model_defaults import model_default_backend

    source = f"class M:\n    @classmethod\n    def get_model_defaults(cls, llm_args):\n        {body}\n"
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.ClassDef)
    found = model_default_backend(node)
    assert (None if found is None else ast.unparse(found)) == expected


def test_a_dynamic_reason_is_written_escaped_and_read_back(make_tree: MakeTree) -> None:
    """Red-team 61: `<dynamic>` in a cell is an HTML tag GitHub drops (an empty cell on the page):
    the table writes `\\<dynamic>`, which renders as the text, and DL107 reads it back as written."""
    model = (
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, "
        "MultimodalModelMixin\n\n"
        "REASON = 'relative-position bias'\n\n\n"
        "class AudioModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"audio": FixedEncoderAttention(REASON)}\n'
    )
    root = make_tree({"tensorrt_llm/_torch/models/modeling_audio.py": model})
    code, output = invoke(str(root))
    assert (code, output.splitlines()[2:]) == (0, ["| AudioModel | audio | not configurable | \\<dynamic> | - |"])
    page = root / "docs.md"
    page.write_text(output, encoding="utf-8")
    assert invoke("--check", str(page), str(root)) == (0, "All clear: 1 file checked.\n")
    page.write_text(output.replace("\\<dynamic>", "<dynamic>"), encoding="utf-8")  # as written before
    assert invoke("--check", str(page), str(root)) == (0, "All clear: 1 file checked.\n")
