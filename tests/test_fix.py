"""`check --fix / --unsafe-fixes / --diff`: exact rewritten files, validation, safety of the writes."""

from __future__ import annotations

import ast
import codecs
import json
import os
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from declint.cli import cli
from declint.config import find_config_file, load_config
from declint.engine import Engine, RunStats, Selection
from declint.reporting.model import FixPreview
from declint.rules import ALL_RULES, RULES_BY_CODE
from tests.conftest import DEMO, ForgetfulMemory, MakeTree, copy_project, settle

MODEL = "tensorrt_llm/_torch/models/"
IMPORTS = (
    "from torch import nn\n"
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n"
    "from tensorrt_llm._torch.models.modeling_utils import MultimodalPlaceholderMetadata, register_input_processor\n"
)
REGISTRATION_IMPORT = IMPORTS.splitlines(keepends=True)[2]
REGISTER_IMAGE = (
    '@register_input_processor(object, model_type="x", placeholder_metadata=MultimodalPlaceholderMetadata(\n'
    '    placeholder_map={"image": "<i>"}))\n'
)
REGISTER_BOTH = (
    '@register_input_processor(object, model_type="x", placeholder_metadata=MultimodalPlaceholderMetadata(\n'
    '    placeholder_map={"image": "<i>", "audio": "<a>"}))\n'
)
TODO = 'FixedEncoderAttention("TODO: say why it cannot be changed (inserted by declint --unsafe-fixes)")'


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args])


@pytest.fixture
def duplicating_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    """DL104 offers its wrong-case fix even where it would list a backend twice (it offers none
    there): a fix the re-lint refuses, for the tests of how refused fixes are handled."""
    monkeypatch.setattr("declint.rules.invalid_declaration.would_duplicate", lambda *_: False)


def test_safe_fixes_rewrite_exactly_what_they_claim(make_tree: MakeTree) -> None:
    source = (
        IMPORTS + "\n\nclass Tidy(MultimodalModelMixin, nn.Module):\n"
        '    encoder_attention_backends = {"vision": ("VANILLA", "trtllm")}\n\n\n'
        "def pick(attn_backend):\n"
        "    x = 1  # declint: ignore[DL103] kept for the old path\n"
        "    # declint: ignore[DL103] standalone and stale\n"
        "    y = 2\n"
        '    z = attn_backend == "TRTLLM"  # declint: ignore[DL103, DL101] legacy comparison\n'
        "    w = 3  # declint: ignore[DL103] stale  # pragma: no cover\n"
        "    return x, y, z, w\n"
    )
    root = make_tree({MODEL + "modeling_fix.py": source})
    result = run("--fix", str(root / "tensorrt_llm"))
    assert result.stderr == "declint: fixed 5 findings in 1 file\n"
    checked = json.loads(run("--format", "json", str(root / "tensorrt_llm")).stdout)["summary"]["files_checked"]
    assert (result.exit_code, result.stdout) == (0, f"All clear: {checked} files checked (5 fixed).\n")
    assert (root / MODEL / "modeling_fix.py").read_text() == (
        IMPORTS + "\n\nclass Tidy(MultimodalModelMixin, nn.Module):\n"
        '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM")}\n\n\n'
        "def pick(attn_backend):\n"
        "    x = 1\n"
        "    y = 2\n"
        '    z = attn_backend == "TRTLLM"  # declint: ignore[DL103] legacy comparison\n'
        "    w = 3  # pragma: no cover\n"
        "    return x, y, z, w\n"
    )
    again = run("--fix", str(root / "tensorrt_llm"))
    assert (again.exit_code, again.stderr) == (0, "declint: fixed 0 findings in 0 files\n")


def test_unsafe_fixes_need_the_flag(make_tree: MakeTree) -> None:
    source = IMPORTS + "\n" + REGISTER_IMAGE + "class Bare(MultimodalModelMixin, nn.Module):\n    pass\n"
    root = make_tree({MODEL + "modeling_bare.py": source})
    result = run("--fix", str(root / "tensorrt_llm"))
    assert result.exit_code == 1
    assert result.stderr == "declint: fixed 0 findings in 0 files\n"
    assert result.stdout.splitlines()[0].startswith(f"{MODEL}modeling_bare.py:7:7: DL102 ")
    assert (root / MODEL / "modeling_bare.py").read_text() == source
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    assert (root / MODEL / "modeling_bare.py").read_text() == (
        IMPORTS + "\n" + REGISTER_IMAGE + "class Bare(MultimodalModelMixin, nn.Module):\n"
        "    encoder_attention_backends = {\n"
        f'        "vision": {TODO},\n'
        "    }\n"
    )


def test_a_typo_in_a_declaration_is_an_unsafe_fix_to_the_suggested_name(make_tree: MakeTree) -> None:
    """The "did you mean" of a misspelt backend or encoder is a guess: only --unsafe-fixes writes it,
    and a name with no close match gets no fix."""
    source = (
        IMPORTS + "\n\nclass Typo(MultimodalModelMixin, nn.Module):\n"
        '    encoder_attention_backends = {"visoin": ("TRTLLM",), "audio": ("FLASHINFR", "CUDA")}\n'
    )
    root = make_tree({MODEL + "modeling_typo.py": source})
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (1, "declint: fixed 0 findings in 0 files\n")
    assert (root / MODEL / "modeling_typo.py").read_text() == source
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (1, "declint: fixed 2 findings in 1 file\n")
    assert (root / MODEL / "modeling_typo.py").read_text() == source.replace("visoin", "vision").replace(
        "FLASHINFR", "FLASHINFER"
    )
    left = [line for line in result.stdout.splitlines() if "DL104" in line]
    assert left == [
        f'{MODEL}modeling_typo.py:7:82: DL104 encoder "audio": "CUDA" is not a member of EncoderAttentionBackend'
    ]


def test_unsafe_fix_extends_a_declaration_keeping_its_comments(make_tree: MakeTree) -> None:
    source = (
        IMPORTS + "\n" + REGISTER_BOTH + "class Phi(MultimodalModelMixin, nn.Module):\n"
        '    """Docs."""\n\n'
        "    encoder_attention_backends = {  # reviewed\n"
        '        "vision": ("TRTLLM",),  # only TRTLLM for now\n'
        "    }\n"
    )
    root = make_tree({MODEL + "modeling_phi.py": source})
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert result.exit_code == 0, result.output
    assert (root / MODEL / "modeling_phi.py").read_text() == (
        IMPORTS + "\n" + REGISTER_BOTH + "class Phi(MultimodalModelMixin, nn.Module):\n"
        '    """Docs."""\n\n'
        "    encoder_attention_backends = {  # reviewed\n"
        '        "vision": ("TRTLLM",),  # only TRTLLM for now\n'
        f'        "audio": {TODO},\n'
        "    }\n"
    )


def test_unsafe_fix_on_a_subclass_copies_the_inherited_entries_and_imports_the_marker(make_tree: MakeTree) -> None:
    base = (
        IMPORTS.split("\n", 1)[1] + "\n" + REGISTER_IMAGE + "class Base(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM")}\n'
    )
    child = (
        "from tensorrt_llm._torch.models.modeling_base import Base\n"
        + REGISTRATION_IMPORT
        + "\n"
        + REGISTER_BOTH
        + "class WithAudio(Base):\n    pass\n"
    )
    root = make_tree({MODEL + "modeling_base.py": base, MODEL + "modeling_child.py": child})
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    assert (root / MODEL / "modeling_child.py").read_text() == (
        "from tensorrt_llm._torch.models.modeling_base import Base\n"
        + REGISTRATION_IMPORT
        + "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention\n"
        "\n" + REGISTER_BOTH + "class WithAudio(Base):\n"
        "    encoder_attention_backends = {\n"
        '        "vision": ("VANILLA", "TRTLLM"),\n'
        f'        "audio": {TODO},\n'
        "    }\n"
    )
    assert (root / MODEL / "modeling_base.py").read_text() == base


def test_a_wrong_case_of_a_listed_member_is_offered_no_fix(make_tree: MakeTree) -> None:
    """Its fix would list the member twice: it was counted fixable, then refused by the re-lint
    ("backend "TRTLLM" is listed twice"). The finding stays, with its did-you-mean, and no fix."""
    source = (
        IMPORTS
        + '\nclass Twice(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("TRTLLM", "trtllm")}\n'
    )
    root = make_tree({MODEL + "modeling_twice.py": source})
    result = run("--statistics", str(root / "tensorrt_llm"))
    assert result.exit_code == 1
    finding = (
        f'{MODEL}modeling_twice.py:6:56: DL104 encoder "vision": "trtllm" is not a member of '
        'EncoderAttentionBackend (did you mean "TRTLLM"?)'
    )
    assert finding in result.stdout.splitlines()
    assert "fixable" not in result.stdout
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (1, "declint: fixed 0 findings in 0 files\n")
    assert (root / MODEL / "modeling_twice.py").read_text() == source


def test_no_fix_lists_a_name_or_an_encoder_twice(make_tree: MakeTree) -> None:
    """Of two wrong-case copies only the first is rewritten (the second would then be listed
    twice), and an unknown key is not renamed to a key the dict has."""
    source = (
        IMPORTS + "\nclass Twice(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("trtllm", "trtllm", "Trtllm"), "Vision": ("VANILLA",),\n'
        '        "audoi": ("TRTLLM",), "Audio": ("TRTLLM",)}\n'
    )
    root = make_tree({MODEL + "modeling_twice.py": source})
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (1, "declint: fixed 2 findings in 1 file\n")
    fixed = source.replace('("trtllm", "trtllm", "Trtllm")', '("TRTLLM", "trtllm", "Trtllm")').replace(
        '"audoi"', '"audio"'
    )
    assert (root / MODEL / "modeling_twice.py").read_text() == fixed
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (1, "declint: fixed 0 findings in 0 files\n")
    assert [line.split(": DL104 ")[1] for line in result.stdout.splitlines() if ": DL104 " in line] == [
        'encoder "vision": "trtllm" is not a member of EncoderAttentionBackend (did you mean "TRTLLM"?)',
        'encoder "vision": "Trtllm" is not a member of EncoderAttentionBackend (did you mean "TRTLLM"?)',
        'unknown encoder "Vision" (did you mean "vision"?); known encoders: vision, audio',
        'unknown encoder "Audio" (did you mean "audio"?); known encoders: vision, audio',
    ]


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("modeling_cr.py", b"x = 1\ry = 2\n", "contains a lone carriage return; not rewritten"),
        ("modeling_ff.py", b"x = 1\n\x0c\ny = 2\n", "contains a form feed; not rewritten"),
    ],
)
def test_files_libcst_may_not_reproduce_are_left_untouched(
    make_tree: MakeTree, name: str, data: bytes, reason: str
) -> None:
    body = (
        IMPORTS.encode()
        + b'\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    )
    root = make_tree({})
    path = root / MODEL / name
    path.write_bytes(data + body)
    result = run("--fix", str(path))
    assert result.exit_code == 1
    line = 2 + data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n") + 4
    assert (
        result.stderr.splitlines()[-1] == f"declint: not fixed: {MODEL}{name}:{line}:46: DL104: {MODEL}{name} {reason}"
    )
    assert path.read_bytes() == data + body


def test_diff_shows_the_fixes_and_writes_nothing(make_tree: MakeTree) -> None:
    source = IMPORTS + '\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    root = make_tree({MODEL + "modeling_case.py": source})
    result = run("--diff", str(root / "tensorrt_llm"))
    assert result.exit_code == 1
    assert result.stdout == (
        f"--- a/{MODEL}modeling_case.py\n+++ b/{MODEL}modeling_case.py\n@@ -3,4 +3,4 @@\n"
        f" {REGISTRATION_IMPORT}"
        " \n"
        " class Case(MultimodalModelMixin):\n"
        '-    encoder_attention_backends = {"vision": ("trtllm",)}\n'
        '+    encoder_attention_backends = {"vision": ("TRTLLM",)}\n'
    )
    assert result.stderr == "declint: would fix 1 finding in 1 file\n"
    assert (root / MODEL / "modeling_case.py").read_text() == source
    report = root / "report.json"
    result = run("--diff", "--output-format", f"json:{report}", str(root / "tensorrt_llm"))
    assert json.loads(report.read_text())["summary"]["fixable"] == {"safe": 1, "unsafe": 0}
    result = run("--diff", "--output-format", "json", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (
        2,
        "declint: error: stdout holds the diff; give each report a file: --output-format FMT:FILE\n",
    )
    (root / MODEL / "modeling_case.py").write_text(source.replace("trtllm", "TRTLLM"))
    result = run("--diff", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stdout) == (0, "")


def test_diff_is_the_bytes_of_a_file_with_a_bom_or_another_encoding(make_tree: MakeTree) -> None:
    """`git apply` and `patch` compare bytes: the diff's lines are in the file's encoding, with
    its BOM (they were UTF-8 text without the BOM, and applied to neither file)."""
    declaration = '    encoder_attention_backends = {"vision": ("%s",)}\n'
    root = make_tree({})
    files = {
        "modeling_bom.py": (codecs.BOM_UTF8 + "# café\n".encode(), "utf-8"),
        "modeling_latin.py": ("# -*- coding: latin-1 -*-\n# café\n".encode("latin-1"), "latin-1"),
    }
    for name, (head, encoding) in files.items():
        (root / MODEL / name).write_bytes(head + ("class M:\n" + declaration % "trtllm").encode(encoding))
    result = run("--diff", str(root / MODEL))
    assert result.exit_code == 1
    bom_lines, latin_lines = (b"\xef\xbb\xbf# caf\xc3\xa9\n", 3), (b"# -*- coding: latin-1 -*-\n# caf\xe9\n", 4)
    expected = b""
    for name, (context, count) in zip(files, (bom_lines, latin_lines), strict=True):
        expected += f"--- a/{MODEL}{name}\n+++ b/{MODEL}{name}\n@@ -1,{count} +1,{count} @@\n".encode()
        expected += b"".join(b" " + line + b"\n" for line in context.splitlines()) + b" class M:\n"
        expected += b"-" + (declaration % "trtllm").encode() + b"+" + (declaration % "TRTLLM").encode()
    assert result.stdout_bytes == expected
    run("--fix", str(root / MODEL))  # what --diff shows is what --fix writes
    for name, (head, encoding) in files.items():
        assert (root / MODEL / name).read_bytes() == head + ("class M:\n" + declaration % "TRTLLM").encode(encoding)


def test_diff_quotes_a_file_name_with_a_newline_as_git_does(make_tree: MakeTree) -> None:
    """A newline in the name split the `---` line in two; git quotes such a name, and applies it."""
    source = IMPORTS + '\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    name = MODEL + 'modeling_a\n+++ b/"x".py'
    root = make_tree({name: source, MODEL + "modeling_plain.py": source})
    result = run("--diff", str(root / MODEL))
    assert result.exit_code == 1
    headers = [line for line in result.stdout.splitlines() if line.startswith(("---", "+++"))]
    assert headers == [
        f'--- "a/{MODEL}modeling_a\\n+++ b/\\"x\\".py"',
        f'+++ "b/{MODEL}modeling_a\\n+++ b/\\"x\\".py"',
        f"--- a/{MODEL}modeling_plain.py",  # a name that needs no quotes keeps none
        f"+++ b/{MODEL}modeling_plain.py",
    ]
    full = run("--output-format", "full", str(root / MODEL)).stdout
    assert "modeling_a\n" not in full and f"    {headers[0]}" in full.splitlines()  # the report's diffs too
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "apply"], input=result.stdout.encode(), cwd=root, check=True)
    fixed = source.replace("trtllm", "TRTLLM")
    assert (root / name).read_text() == fixed and (root / MODEL / "modeling_plain.py").read_text() == fixed


def test_writes_keep_mode_encoding_bom_and_symlinks(make_tree: MakeTree) -> None:
    declaration = '\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    root = make_tree({})
    latin = root / MODEL / "modeling_latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + IMPORTS.encode() + declaration.encode())
    latin.chmod(0o640)
    bom = root / MODEL / "modeling_bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + IMPORTS.encode() + declaration.encode())
    target = root / "real_model.py"
    target.write_text(IMPORTS + declaration)
    link = root / MODEL / "modeling_link.py"
    link.symlink_to(target)
    result = run("--fix", str(root / "tensorrt_llm"))
    assert result.stderr == "declint: fixed 3 findings in 3 files\n"
    assert (
        latin.read_bytes()
        == b"# -*- coding: latin-1 -*-\n# caf\xe9\n"
        + IMPORTS.encode()
        + declaration.replace("trtllm", "TRTLLM").encode()
    )
    assert stat.S_IMODE(latin.stat().st_mode) == 0o640
    assert bom.read_bytes().startswith(b"\xef\xbb\xbf" + IMPORTS.encode())
    assert b'("TRTLLM",)' in bom.read_bytes()
    assert link.is_symlink() and '("TRTLLM",)' in target.read_text()
    leftovers = [p for p in root.rglob("*") if p.name.endswith(".declint")]
    assert leftovers == []


def test_fix_on_a_copy_of_the_demo(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    copy_project(DEMO, demo)
    qwen = demo / MODEL / "modeling_qwen3vl.py"
    original = qwen.read_text()
    broken = original.replace(
        "    encoder_attention_backends = {\n",
        "    encoder_attention_backends = {  # declint: ignore[DL103] obsolete\n",
        1,
    ).replace('"vision": ("VANILLA", "TRTLLM", "FLASHINFER"),', '"vision": ("VANILLA", "trtllm", "FLASHINFER"),', 1)
    assert broken != original
    qwen.write_text(broken)
    # Two files declint must not rewrite, each with a wrong-case backend name.
    declaration = '\nclass Odd(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    untouchable = {
        demo / MODEL / "modeling_cr.py": b"x = 1\ry = 2\n" + IMPORTS.encode() + declaration.encode(),
        demo / MODEL / "modeling_ff.py": b"x = 1\n\x0c\ny = 2\n" + IMPORTS.encode() + declaration.encode(),
    }
    for path, data in untouchable.items():
        path.write_bytes(data)

    def findings() -> list[dict[str, Any]]:
        document = json.loads(run("--format", "json", str(demo)).stdout)
        return list(document["findings"])

    def safe_fixable(items: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
        return [
            (f["code"], f["path"], f["line"])
            for f in items
            if f["fix"] is not None and f["fix"]["applicability"] == "safe"
        ]

    before = findings()
    assert safe_fixable(before) == [
        ("DL902", f"{MODEL}modeling_qwen3vl.py", 100),
        ("DL104", f"{MODEL}modeling_qwen3vl.py", 101),
    ]
    wrong_case = [(f["path"], f["line"]) for f in before if f["code"] == "DL104" and '"trtllm"' in f["message"]]
    assert wrong_case == [
        (f"{MODEL}modeling_cr.py", 8),
        (f"{MODEL}modeling_ff.py", 9),
        (f"{MODEL}modeling_qwen3vl.py", 101),
    ]
    snapshot = {p: p.read_bytes() for p in demo.rglob("*") if p.is_file()}

    result = run("--fix", str(demo))
    assert result.stderr.splitlines() == [
        "declint: fixed 2 findings in 1 file",
        f"declint: not fixed: {MODEL}modeling_cr.py:8:46: DL104: {MODEL}modeling_cr.py contains a lone carriage "
        "return; not rewritten",
        f"declint: not fixed: {MODEL}modeling_ff.py:9:46: DL104: {MODEL}modeling_ff.py contains a form feed; "
        "not rewritten",
    ]
    after = findings()
    assert safe_fixable(after) == []
    assert {(f["code"], f["path"], f["message"]) for f in after} <= {
        (f["code"], f["path"], f["message"]) for f in before
    }
    assert len(after) < len(before)
    assert qwen.read_text() == original
    for path, data in untouchable.items():
        assert path.read_bytes() == data
    for path in demo.rglob("*.py"):
        ast.parse(path.read_bytes(), filename=str(path))
    assert {p for p, data in snapshot.items() if p.read_bytes() != data} == {qwen}

    fixed_state = {p: p.read_bytes() for p in demo.rglob("*") if p.is_file()}
    again = run("--fix", str(demo))
    assert again.stderr.startswith("declint: fixed 0 findings in 0 files")
    assert {p: p.read_bytes() for p in demo.rglob("*") if p.is_file()} == fixed_state


def test_unsafe_fix_is_refused_when_it_would_add_another_finding(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inserted declaration would be a DL104 (made so here: a blank reason; an unknown encoder
    did it before `encoders` kept the defaults to itself), so nothing is written."""
    monkeypatch.setattr("declint.rules.missing_declaration.TODO_REASON", " ")
    source = IMPORTS + "\n" + REGISTER_BOTH + "class Phi(MultimodalModelMixin, nn.Module):\n    pass\n"
    root = make_tree({MODEL + "modeling_phi.py": source})
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[1] == (
        f"declint: not fixed: {MODEL}modeling_phi.py:7:7: DL102: re-linting the fixed text reports DL104 in "
        f'{MODEL}modeling_phi.py: encoder "audio" is declared FixedEncoderAttention without a reason; say why '
        "its attention cannot be changed"
    )
    assert (root / MODEL / "modeling_phi.py").read_text() == source


def test_good_fixes_go_in_when_another_fix_in_the_same_run_is_refused(
    make_tree: MakeTree, duplicating_fixes: None
) -> None:
    twice = (
        IMPORTS + "\n\nclass Twice(MultimodalModelMixin):\n"
        "    # declint: ignore[DL103] stale note\n"
        '    encoder_attention_backends = {"vision": ("TRTLLM", "trtllm")}\n'
    )
    case = IMPORTS + '\n\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    root = make_tree({MODEL + "modeling_twice.py": twice, MODEL + "modeling_case.py": case})
    result = run("--fix", str(root / "tensorrt_llm"))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "declint: fixed 2 findings in 2 files",
        f"declint: not fixed: {MODEL}modeling_twice.py:7:56: DL104: re-linting the fixed text reports DL104 in "
        f'{MODEL}modeling_twice.py: encoder "vision": backend "TRTLLM" is listed twice',
    ]
    assert (root / MODEL / "modeling_twice.py").read_text() == twice.replace(
        "    # declint: ignore[DL103] stale note\n", ""
    )
    assert (root / MODEL / "modeling_case.py").read_text() == case.replace("trtllm", "TRTLLM")
    assert run("--fix", str(root / "tensorrt_llm")).stderr.startswith("declint: fixed 0 findings in 0 files\n")


def test_a_file_edited_while_its_fix_was_computed_is_kept_and_the_others_are_written(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    from declint import fixes

    model = (
        IMPORTS
        + "\n\nclass Tidy(MultimodalModelMixin, nn.Module):\n"
        + '    encoder_attention_backends = {"vision": ("VANILLA", "trtllm")}\n'
    )
    root = make_tree({MODEL + "modeling_a.py": model, MODEL + "modeling_b.py": model.replace("Tidy", "Neat")})
    edited, other = root / MODEL / "modeling_a.py", root / MODEL / "modeling_b.py"
    rounds = fixes._Session.rounds

    def rounds_then_the_user_saves(self: Any, result: Any, unsafe: bool) -> Any:
        outcome = rounds(self, result, unsafe)
        edited.write_text(model + "# saved meanwhile\n")
        return outcome

    monkeypatch.setattr(fixes._Session, "rounds", rounds_then_the_user_saves)
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (
        2,
        f"declint: error: wrote 1 of 2 fixed files; not written: {MODEL}modeling_a.py (changed on disk while "
        "declint was fixing it)\n",
    )
    assert edited.read_text() == model + "# saved meanwhile\n"  # the user's edit, untouched
    assert other.read_text() == model.replace("Tidy", "Neat").replace('"trtllm"', '"TRTLLM"')


def test_the_previews_of_one_file_share_one_position_pass_and_match_each_fix(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each preview re-rendered the module after a fresh position pass: 250 fixable findings in one
    module ran past the 60 s file timeout (one DL000 instead of the findings). The previews now
    share one pass per file, and each fix's transform only descends where its target is; a
    replace-string preview (DL104) and a remove-suppression-code one (DL902) are spliced as text
    and need no pass at all."""
    from declint import fix_transforms

    stale = "  # declint: ignore[DL101] stale"
    declaration = f'    encoder_attention_backends = {{"vision": ("VANILLA", "trtllm")}}{stale}\n'
    classes = "".join(f"\n\nclass M{i}(MultimodalModelMixin, nn.Module):\n{declaration}" for i in range(6))
    root = make_tree({MODEL + "modeling_many.py": IMPORTS + classes})
    passes: list[object] = []
    prepare = fix_transforms.prepare
    monkeypatch.setattr(fix_transforms, "prepare", lambda tree: passes.append(tree) or prepare(tree))
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    Engine(config, ALL_RULES, Selection(("DL",), ())).run([root / "tensorrt_llm"])  # jobs=None: in this process
    assert passes == []  # the six DL902 previews are spliced at their comments too
    result = run("--no-cache", "--format", "json", str(root / "tensorrt_llm"))
    findings = json.loads(result.stdout)["findings"]
    assert [f["fix"]["edits"] for f in findings if f["code"] == "DL104"] == [
        [{"line": 7 + 4 * i, "column": 57, "end_line": 7 + 4 * i, "end_column": 63, "content": "TRTLLM"}]
        for i in range(6)
    ]
    assert [f["fix"]["edits"] for f in findings if f["code"] == "DL902"] == [
        [{"line": 7 + 4 * i, "column": 66, "end_line": 7 + 4 * i, "end_column": 66 + len(stale), "content": ""}]
        for i in range(6)  # the comment and the spaces before it go
    ]


def test_previews_past_the_worker_budget_come_from_the_main_process_the_same(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    from declint import previews

    declaration = '    encoder_attention_backends = {"vision": ("VANILLA", "trtllm")}\n'
    classes = "".join(f"\n\nclass M{i}(MultimodalModelMixin, nn.Module):\n{declaration}" for i in range(4))
    root = make_tree({MODEL + "modeling_many.py": IMPORTS + classes})
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))

    def worker_previews() -> int:
        engine = Engine(config, ALL_RULES, Selection(("DL",), ()))  # jobs=None: the "worker" is this process
        engine.run([root / "tensorrt_llm"])
        return sum(isinstance(value, FixPreview) for value in engine.previews.values())

    def report(*formats: str) -> list[str]:
        return [run("--no-cache", "--format", name, str(root / "tensorrt_llm")).stdout for name in formats]

    assert worker_previews() == 4
    whole = report("json", "full")
    assert whole[1].count('+    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM")}') == 4
    monkeypatch.setattr(previews, "WORKER_PREVIEW_BUDGET", 0)  # a worker previews a file's first fix only
    assert worker_previews() == 1
    assert report("json", "full") == whole  # the main process computed the other three


def test_a_fix_that_rewords_a_finding_in_another_file_is_applied(tmp_path: Path) -> None:
    """The demo's docs table lists Kimi K2.5 as VANILLA, TRTLLM, FLASHINFER. With "trtllm" in its
    declaration, DL107 quotes the declaration; the safe DL104 fix changes that quote, not the
    drift (FLASHINFR stays): the same DL107, reworded, at the same place of the docs file. Before,
    counting the reworded DL107 as new refused the fix."""
    demo = tmp_path / "demo"
    copy_project(DEMO, demo)
    kimi = demo / MODEL / "modeling_kimi_k25.py"
    kimi.write_text(kimi.read_text().replace('"TRTLLM", "FLASHINFR"', '"trtllm", "FLASHINFR"', 1))
    result = run("--fix", "--select", "DL104,DL107", str(demo))
    assert result.stderr == "declint: fixed 1 finding in 1 file\n"
    assert '"vision": ("VANILLA", "TRTLLM", "FLASHINFR"),' in kimi.read_text()
    assert (
        "docs/encoder_attention_backends.md:17:1: DL107 KimiK25Model / vision: backends is 'VANILLA, TRTLLM, "
        "FLASHINFER' in the docs but 'VANILLA, TRTLLM, FLASHINFR' in the code"
    ) in result.stdout.splitlines()


def test_a_fix_that_rewords_a_finding_in_the_fixed_file_is_applied(tmp_path: Path) -> None:
    """The demo's Step3 vision attention calls SDPA directly (DL101), and DL101's message quotes
    the model's declaration. With "FLASHINFR" there, the unsafe DL104 fix corrects the quote, not
    the direct call: the same DL101 at the same call, reworded. Before, in the fixed file, a
    finding was told from a new one by its message too, so this fix was always refused."""
    demo = tmp_path / "demo"
    copy_project(DEMO, demo)
    step3 = demo / MODEL / "modeling_step3vl.py"
    declared = '"vision": ("VANILLA", "TRTLLM", "FLASHINFER"),'
    step3.write_text(step3.read_text().replace(declared, declared.replace("FLASHINFER", "FLASHINFR"), 1))
    result = run("--fix", "--unsafe-fixes", "--select", "DL101,DL104", str(demo))
    assert result.stderr == "declint: fixed 2 findings in 2 files\n"  # (and Kimi K2.5's own FLASHINFR)
    assert declared in step3.read_text()
    assert (
        "tensorrt_llm/_torch/models/modeling_step3vl.py:59:15: DL101 `Step3VisionAttention.forward` calls "
        "torch.nn.functional.scaled_dot_product_attention directly, but Step3p7VLModel declares its vision encoder "
        "configurable (VANILLA, TRTLLM, FLASHINFER): an encoder_attention_backend override is silently bypassed; "
        "route the call through the attention backend or declare the encoder FixedEncoderAttention(reason)"
    ) in result.stdout.splitlines()


def test_a_refused_fix_names_a_finding_it_brings_not_one_already_at_that_place(tmp_path: Path) -> None:
    """With a copy of the demo's HCXVisionModel (a LlavaNextModel), the DL102 fix declaring
    LlavaNextModel makes both copies inherit a declaration: two new DL107s "missing from the docs
    table", anchored where KimiK3Model's DL107 already stands. The fix is refused; the reason
    names a new one (before, the first DL107 at that place, which was there all along)."""
    demo = tmp_path / "demo"
    copy_project(DEMO, demo)
    hcx = demo / MODEL / "modeling_hyperclovax.py"
    (demo / MODEL / "modeling_hyperclovax_copy.py").write_bytes(hcx.read_bytes())
    result = run("--diff", "--unsafe-fixes", str(demo))
    assert (
        f"declint: not fixed: {MODEL}modeling_llava_next.py:87:7: DL102: re-linting the fixed text reports DL107 in "
        "docs/encoder_attention_backends.md: modeling_hyperclovax.HCXVisionModel / vision is declared (not "
        "configurable) but missing from the docs table"
    ) in result.stderr.splitlines()


# ---- DL902's fix on suppression comments -----------------------------------------------------------
FIX_MODEL = MODEL + "modeling_x.py"


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        # A "#" in the reason is part of it: before, the fix kept "#123 before removing".
        ("    return backend  # declint: ignore[DL103] see issue #123 before removing\n", "    return backend\n"),
        ("    # declint: ignore[DL103] standalone; issue #9 tracks it\n    return backend\n", "    return backend\n"),
        # A comment of another tool after the reason stays, before or after the suppression.
        ("    return backend  # declint: ignore[DL103] see #123  # noqa: E501\n", "    return backend  # noqa: E501\n"),
        (
            "    return backend  # noqa: E501  # declint: ignore[DL103] stale, see #4\n",
            "    return backend  # noqa: E501\n",
        ),
        (
            "    return backend  # type: ignore  # declint: ignore[DL103] stale\t# pylint: disable=C0301\n",
            "    return backend  # type: ignore  # pylint: disable=C0301\n",  # the spacing before it stays
        ),
        # Of two suppressions in one comment, only the unused one goes.
        (
            '    return attn_backend == "TRTLLM"  # declint: ignore[DL101] stale  # declint: ignore[DL103] legacy\n',
            '    return attn_backend == "TRTLLM"  # declint: ignore[DL103] legacy\n',
        ),
        (
            '    return attn_backend == "TRTLLM"  # declint: ignore[DL103] legacy  # declint: ignore[DL101] x\n',
            '    return attn_backend == "TRTLLM"  # declint: ignore[DL103] legacy\n',
        ),
    ],
)
def test_the_unused_suppression_fix_removes_exactly_the_suppression(make_tree: MakeTree, line: str, fixed: str) -> None:
    root = make_tree({FIX_MODEL: "def f(attn_backend, backend):\n" + line})
    result = run("--no-cache", "--fix", str(root / FIX_MODEL))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    assert (root / FIX_MODEL).read_text() == "def f(attn_backend, backend):\n" + fixed


@pytest.mark.parametrize(
    ("comment", "left", "finding"),
    [
        (
            "# declint: ignore[DL101, DL103]",
            "# declint: ignore[DL103]",
            "DL901 suppression has no reason; write why after the codes: # declint: ignore[<code>] <reason>",
        ),
        (
            "# declint: ignore[DL999, DL101, DL103] legacy",
            "# declint: ignore[DL999, DL103] legacy",
            'DL903 suppression names unknown rule code "DL999" (did you mean "DL904"?)',
        ),
    ],
)
def test_the_unused_suppression_fix_applies_next_to_another_finding_on_the_comment(
    make_tree: MakeTree, comment: str, left: str, finding: str
) -> None:
    """The DL901 (or DL903) of the comment the fix shortens is the one that was there: before,
    its offending text (the rest of the line) changed with the code list, so it counted as new
    and the fix was refused."""
    source = f'def f(attn_backend):\n    return attn_backend == "TRTLLM"  {comment}\n'
    root = make_tree({FIX_MODEL: source})
    result = run("--no-cache", "--fix", str(root / FIX_MODEL))
    assert result.stderr == "declint: fixed 1 finding in 1 file\n"
    assert (result.exit_code, result.stdout.splitlines()[0]) == (1, f"{FIX_MODEL}:2:38: {finding}")
    assert (root / FIX_MODEL).read_text() == source.replace(comment, left)


def test_a_fix_that_strips_a_reason_would_still_be_refused(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The near miss: leaving the code lists out of the identity does not let a new DL901 in."""
    from declint import fix_transforms

    source = 'def f(attn_backend):\n    return attn_backend == "TRTLLM"  # declint: ignore[DL101, DL103] legacy\n'
    root = make_tree({FIX_MODEL: source})
    monkeypatch.setattr(fix_transforms, "strip_suppression_codes", lambda comment, unused: "# declint: ignore[DL103]")
    result = run("--no-cache", "--fix", str(root / FIX_MODEL))
    assert result.stderr.splitlines() == [
        "declint: fixed 0 findings in 0 files",
        f"declint: not fixed: {FIX_MODEL}:2:38: DL902: re-linting the fixed text reports DL901 in {FIX_MODEL}: "
        "suppression has no reason; write why after the codes: # declint: ignore[<code>] <reason>",
    ]
    assert (root / FIX_MODEL).read_text() == source


def test_the_unused_suppression_fix_after_a_line_separator(make_tree: MakeTree) -> None:
    """A U+2028 above shifted str.splitlines' lines: the used suppression on line 6 was called
    unused and the safe fix deleted it; the preview's edit pointed at the wrong line."""
    head = 'X = "a\u2028b"\n\n\ndef f(attn_backend):\n    y = 1  # declint: ignore[DL101] stale\n'
    used = '    # declint: ignore[DL103] legacy\n    return attn_backend == "TRTLLM"\n'
    root = make_tree({FIX_MODEL: head + used})
    [finding] = json.loads(run("--no-cache", "--format", "json", str(root / FIX_MODEL)).stdout)["findings"]
    assert (finding["code"], finding["line"], finding["column"]) == ("DL902", 5, 11)
    assert finding["fix"]["edits"] == [{"line": 5, "column": 9, "end_line": 5, "end_column": 41, "content": ""}]
    result = run("--no-cache", "--fix", str(root / FIX_MODEL))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    assert (root / FIX_MODEL).read_text() == head.replace("  # declint: ignore[DL101] stale", "") + used


@pytest.mark.parametrize(
    ("body", "comment", "statements"),
    [
        ("pass", "  # type: ignore[misc]  -- keep: mypy needs this", ""),
        ("x = 1; y = 2", "  # keep me too", "    x = 1; y = 2\n"),
    ],
)
def test_unsafe_fix_on_a_one_line_class_body_keeps_its_comment(
    make_tree: MakeTree, body: str, comment: str, statements: str
) -> None:
    """The comment of `class C(Base): pass  # ...` was dropped with the one-line body: it stays
    on the `class` line, where line-based pragmas (`# type: ignore`, `# noqa`) were written."""
    source = IMPORTS + "\n" + REGISTER_IMAGE + f"class OneLine(MultimodalModelMixin, nn.Module): {body}{comment}\n"
    root = make_tree({MODEL + "modeling_one.py": source})
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    assert (root / MODEL / "modeling_one.py").read_text() == (
        IMPORTS + "\n" + REGISTER_IMAGE + f"class OneLine(MultimodalModelMixin, nn.Module):{comment}\n"
        "    encoder_attention_backends = {\n"
        f'        "vision": {TODO},\n'
        "    }\n" + statements
    )


def test_a_fix_that_would_drop_a_comment_is_refused(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    """Validation re-lints, and a lost `# type: ignore` changes no finding: the fixed text is
    also checked for every comment of the file. Here the one-line-body transform as it was (it
    dropped the comment) is refused, and the file's other fix still goes in."""
    import libcst as cst

    from declint import fix_transforms

    declare = fix_transforms._declare

    def dropping_the_comment(body: cst.BaseSuite, *args: Any) -> cst.BaseSuite | None:
        if isinstance(body, cst.SimpleStatementSuite):
            body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=body.body)])
        return declare(body, *args)

    monkeypatch.setattr(fix_transforms, "_declare", dropping_the_comment)
    source = (
        IMPORTS + "\n" + REGISTER_IMAGE + "class OneLine(MultimodalModelMixin, nn.Module): pass  # type: ignore[misc]\n"
        '\n\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    )
    root = make_tree({MODEL + "modeling_one.py": source})
    result = run("--fix", "--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr.splitlines()) == (
        1,
        [
            "declint: fixed 1 finding in 1 file",
            f"declint: not fixed: {MODEL}modeling_one.py:7:7: DL102: the fix would drop the comment "
            "'# type: ignore[misc]'",
        ],
    )
    assert (root / MODEL / "modeling_one.py").read_text() == source.replace('"trtllm"', '"TRTLLM"')


# Its case fix would list TRTLLM twice: validation refuses it.
TWICE = (
    '\n\nclass Twice(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trt\\x6clm", "TRTLLM")}\n'
)


def test_all_fixes_that_pass_go_in_in_one_round(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch, duplicating_fixes: None
) -> None:
    """Twelve good case fixes and, last in the file, one that would list TRTLLM twice. Fix by
    fix, only the first fix that passed was kept in each round, so every round proposed the bad
    fix again with one good one: after 10 rounds two good fixes were silently left for a second
    `--fix`. Now the fixes are halved until each part passes: one round, one run."""
    from declint import fixes

    classes = "".join(
        f'\n\nclass M{i}(MultimodalModelMixin):\n    encoder_attention_backends = {{"vision": ("trtllm",)}}\n'
        for i in range(12)
    )
    root = make_tree({MODEL + "modeling_many.py": IMPORTS + classes + TWICE})
    rounds: list[object] = []
    validate = fixes._Session._validate
    monkeypatch.setattr(fixes._Session, "_validate", lambda *args: rounds.append(args) or validate(*args))
    result = run("--fix", str(root / "tensorrt_llm"))
    refused = (
        f"declint: not fixed: {MODEL}modeling_many.py:55:46: DL104: re-linting the fixed text reports DL104 in "
        f'{MODEL}modeling_many.py: encoder "vision": backend "TRTLLM" is listed twice'
    )
    assert (result.exit_code, result.stderr.splitlines()) == (1, ["declint: fixed 12 findings in 1 file", refused])
    assert len(rounds) == 1
    assert (root / MODEL / "modeling_many.py").read_text() == IMPORTS + classes.replace("trtllm", "TRTLLM") + TWICE
    again = run("--fix", str(root / "tensorrt_llm"))
    assert (again.exit_code, again.stderr.splitlines()) == (1, ["declint: fixed 0 findings in 0 files", refused])


@pytest.mark.parametrize(
    ("pattern", "relints"),
    [
        ("gggggggggggb", 7),  # one bad fix, last of 12 (halving alone: 9)
        ("bbbbbbbb", 11),  # all 8 fail (halving alone: 15; one by one after the first: 9)
        ("bgbgbbgbbgbg", 15),  # 7 of 12, spread out (halving alone: 23)
    ],
)
def test_fixes_that_fail_together_are_sorted_out_in_few_relints(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch, duplicating_fixes: None, pattern: str, relints: int
) -> None:
    """Each re-lint is a whole run: the fixes that fail together are sorted out in groups that
    follow the share refused so far (`fixes._Trials`), every good fix still goes in, every bad one
    is refused, in one round."""
    from declint import fixes

    good = '{"vision": ("trtllm",)}'
    bad = '{"vision": ("trt\\x6clm", "TRTLLM")}'  # the fix would list TRTLLM twice
    classes = "".join(
        f"\n\nclass M{i}(MultimodalModelMixin):\n    encoder_attention_backends = {good if kind == 'g' else bad}\n"
        for i, kind in enumerate(pattern)
    )
    root = make_tree({MODEL + "modeling_many.py": IMPORTS + classes})
    checks: list[object] = []
    check = fixes._Session._check
    monkeypatch.setattr(fixes._Session, "_check", lambda *args: checks.append(args) or check(*args))
    result = run("--fix", str(root / "tensorrt_llm"))
    lines = result.stderr.splitlines()
    assert lines[0] == f"declint: fixed {pattern.count('g')} findings in {'1 file' if 'g' in pattern else '0 files'}"
    refused = [line.split(": ")[2] for line in lines[1:]]
    assert refused == [f"{MODEL}modeling_many.py:{7 + 4 * i}:46" for i, kind in enumerate(pattern) if kind == "b"]
    assert len(checks) == relints
    fixed = (root / MODEL / "modeling_many.py").read_text()
    assert fixed.count('("TRTLLM",)') == pattern.count("g")
    assert fixed.count('("trt\\x6clm", "TRTLLM")') == pattern.count("b")


def _refusing_demo(root: Path) -> Path:
    """A copy of the demo whose shared Literal spells VANILLA "vanilla": every VANILLA in a
    declaration is then a DL104 whose fix a DL107 refuses (the docs table keeps VANILLA)."""
    copy_project(DEMO, root)
    literal = root / "tensorrt_llm/llmapi/llm_args.py"
    literal.write_text(literal.read_text().replace('Literal["VANILLA", "TRTLLM"', 'Literal["vanilla", "TRTLLM"', 1))
    settle(root)
    return root


def _count_runs(monkeypatch: pytest.MonkeyPatch, count: Callable[[RunStats], int]) -> list[int]:
    """`count` of each `Engine.run`'s stats, in the order the runs end."""
    from declint import engine

    counts: list[int] = []
    run_engine = engine.Engine.run

    def counting(self: Engine, paths: Any) -> Any:
        result = run_engine(self, paths)
        counts.append(count(self.stats))
        return result

    monkeypatch.setattr(engine.Engine, "run", counting)
    return counts


def test_relints_without_a_cache_directory_reuse_the_first_lints_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the cache off (the suite sets DECLINT_NO_CACHE), the re-lints that verify the fixes,
    and the run that reports after them, reuse what the first lint read and checked
    (`SessionMemory`) for the files whose stat holds: the same diff and refusals as runs that read
    and check every file again."""
    from declint.reporting import pipeline

    root = _refusing_demo(tmp_path / "demo")
    hits = _count_runs(monkeypatch, lambda stats: stats.check_cache_hits)
    shared = run("--diff", "--unsafe-fixes", str(root))
    shared_hits = hits[:]
    hits.clear()

    monkeypatch.setattr(pipeline, "SessionMemory", ForgetfulMemory)
    alone = run("--diff", "--unsafe-fixes", str(root))
    assert (shared.exit_code, shared.stdout, shared.stderr) == (alone.exit_code, alone.stdout, alone.stderr)
    refused = [line for line in shared.stderr.splitlines() if line.startswith("declint: not fixed: ")]
    assert len(refused) == 7 and all("DL107" in line for line in refused)
    assert len(shared_hits) == len(hits) > 2
    assert shared_hits[0] == 0 and all(count > 0 for count in shared_hits[1:])
    assert hits == [0] * len(hits)


def test_a_stdin_fix_without_a_cache_directory_reuses_the_first_lints_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--stdin-filename --fix` with the cache off: its first lint runs over the buffer, and its
    data (which holds no entry of the buffer) serves the re-lints, which then read the buffer
    alone; the same text out and the same refusal as runs that read every file again."""
    from declint.reporting import pipeline

    buffer = _refusing_demo(tmp_path / "demo") / MODEL / "modeling_gemma4.py"
    reads = _count_runs(monkeypatch, lambda stats: stats.files_read)
    options = ["check", "--fix", "--unsafe-fixes", "--stdin-filename", str(buffer)]
    shared = CliRunner().invoke(cli, options, input=buffer.read_bytes())
    shared_reads = reads[:]
    reads.clear()
    monkeypatch.setattr(pipeline, "SessionMemory", ForgetfulMemory)
    alone = CliRunner().invoke(cli, options, input=buffer.read_bytes())
    assert (shared.exit_code, shared.stdout, shared.stderr) == (alone.exit_code, alone.stdout, alone.stderr)
    assert shared.stdout == buffer.read_text()  # the one fix offered is refused: the buffer as it came
    assert shared.stderr.splitlines()[-1].startswith(
        f"declint: not fixed: {MODEL}modeling_gemma4.py:175:20: DL104: re-linting the fixed text reports DL107"
    )
    assert len(shared_reads) == len(reads) == 4
    assert shared_reads[0] == reads[0] > 30 and shared_reads[1:] == [1, 1, 1]
    assert reads == [reads[0]] * 4


@pytest.mark.parametrize("memo_characters", [None, 1])
def test_the_trials_parse_each_text_once_and_a_full_memo_changes_nothing(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch, duplicating_fixes: None, memo_characters: int | None
) -> None:
    """Sorting out failed fixes applies the same texts' fixes again and again: each text is parsed
    (with its positions) once, and a memo too small to hold two files parses again but fixes the
    same."""
    from declint import fix_transforms, fixes

    classes = "".join(
        f'\n\nclass M{i}(MultimodalModelMixin):\n    encoder_attention_backends = {{"vision": ("trtllm",)}}\n'
        for i in range(6)
    )
    root = make_tree({MODEL + "modeling_a.py": IMPORTS + classes + TWICE, MODEL + "modeling_b.py": IMPORTS + classes})
    if memo_characters is not None:
        monkeypatch.setattr(fixes, "PREPARED_CHARACTERS", memo_characters)
    parsed: list[str] = []
    prepare = fix_transforms.prepare
    monkeypatch.setattr(fix_transforms, "prepare", lambda tree: parsed.append(tree.code) or prepare(tree))
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr.splitlines()) == (
        1,
        [
            "declint: fixed 12 findings in 2 files",
            f"declint: not fixed: {MODEL}modeling_a.py:31:46: DL104: re-linting the fixed text reports DL104 in "
            f'{MODEL}modeling_a.py: encoder "vision": backend "TRTLLM" is listed twice',
        ],
    )
    assert (root / MODEL / "modeling_a.py").read_text() == IMPORTS + classes.replace("trtllm", "TRTLLM") + TWICE
    assert (root / MODEL / "modeling_b.py").read_text() == IMPORTS + classes.replace("trtllm", "TRTLLM")
    if memo_characters is None:
        assert sorted(parsed) == [IMPORTS + classes, IMPORTS + classes + TWICE]
    else:
        assert len(parsed) > 2


def test_a_refused_fix_that_another_fix_moves_is_tried_and_listed_once(
    make_tree: MakeTree, duplicating_fixes: None
) -> None:
    """The DL104 fix is refused in the same round as the DL902 fix above it is accepted, which
    removes a line: remembered by place, the refused fix would be proposed again one line up in
    the next round and listed twice. It is listed once, where it is in the fixed file (as the
    report shows it)."""
    source = IMPORTS + "# declint: ignore[DL103] stale\nX = 1\n" + TWICE
    root = make_tree({MODEL + "modeling_twice.py": source})
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr.splitlines()) == (
        1,
        [
            "declint: fixed 1 finding in 1 file",
            f"declint: not fixed: {MODEL}modeling_twice.py:8:46: DL104: re-linting the fixed text reports DL104 in "
            f'{MODEL}modeling_twice.py: encoder "vision": backend "TRTLLM" is listed twice',
        ],
    )
    assert result.stdout.splitlines()[0].startswith(f"{MODEL}modeling_twice.py:8:46: DL104 ")
    assert (root / MODEL / "modeling_twice.py").read_text() == source.replace("# declint: ignore[DL103] stale\n", "")


def test_the_round_limit_says_when_it_stops_the_fixes(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fix that needs another round past the limit is listed, and the limit is named."""
    from declint import fixes

    case = IMPORTS + '\n\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    root = make_tree({MODEL + "modeling_a.py": case, MODEL + "modeling_b.py": case})
    candidates = fixes._Session.candidates
    monkeypatch.setattr(fixes._Session, "candidates", lambda *args: candidates(*args)[:1])  # one fix a round
    monkeypatch.setattr(fixes, "MAX_ROUNDS", 1)
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr.splitlines()) == (
        1,
        [
            "declint: fixed 1 finding in 1 file",
            "declint: stopped after 1 round of fixes (the limit); fixable findings remain",
            f"declint: not fixed: {MODEL}modeling_b.py:7:46: DL104: still fixable after 1 round of fixes; "
            "run --fix again",
        ],
    )
    monkeypatch.setattr(fixes, "MAX_ROUNDS", 2)  # near miss: the limit not reached, nothing said
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")


CASE = IMPORTS + '\n\nclass Case(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'


def test_a_file_checked_under_two_names_is_fixed_once(make_tree: MakeTree) -> None:
    """A symlink to another checked file: both names were fixed, and writing the second looked
    like a concurrent edit (exit 2). The file is fixed once, under its own name."""
    root = make_tree({MODEL + "modeling_x.py": CASE})
    (root / MODEL / "modeling_alias.py").symlink_to("modeling_x.py")
    diff = run("--diff", str(root / "tensorrt_llm"))
    assert (diff.stderr, diff.stdout.splitlines()[:2]) == (
        "declint: would fix 1 finding in 1 file\n",
        [f"--- a/{MODEL}modeling_x.py", f"+++ b/{MODEL}modeling_x.py"],
    )
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    assert (root / MODEL / "modeling_x.py").read_text() == CASE.replace("trtllm", "TRTLLM")
    assert (root / MODEL / "modeling_alias.py").is_symlink()


def test_a_file_with_other_hard_links_is_not_rewritten(make_tree: MakeTree) -> None:
    """A rewrite is a new file: the other names of a hard-linked one kept the old text. Such a
    file is left alone (and, checked under two names, listed under each); without the other
    link it is fixed."""
    root = make_tree({MODEL + "modeling_x.py": CASE})
    fixed, other = root / MODEL / "modeling_x.py", root / MODEL / "modeling_y.py"
    other.hardlink_to(fixed)
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr.splitlines()) == (
        1,
        [
            "declint: fixed 0 findings in 0 files",
            f"declint: not fixed: {MODEL}modeling_x.py:7:46: DL104: {MODEL}modeling_x.py has 2 hard links, which a "
            "rewrite would leave with the old text; not rewritten",
            f"declint: not fixed: {MODEL}modeling_y.py:7:46: DL104: the same file as {MODEL}modeling_x.py; fixed "
            "under that name only",
        ],
    )
    assert fixed.read_text() == other.read_text() == CASE and fixed.stat().st_nlink == 2
    # A check offers no fix --fix would refuse (red-team 47: "[*] 1 fixable with --fix")
    checked = run(str(root / "tensorrt_llm" / "_torch" / "models" / "modeling_x.py"))
    assert (checked.exit_code, checked.stdout.splitlines()[1:]) == (1, ["Found 1 finding in 1 file."])
    other.unlink()
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")


def test_unsafe_fixes_without_fix_or_diff_says_it_does_nothing(make_tree: MakeTree) -> None:
    """Red-team 47: `--unsafe-fixes` alone was silently ignored (a user believing it fixed)."""
    root = make_tree({MODEL + "modeling_x.py": CASE})
    result = run("--unsafe-fixes", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (
        1,
        "declint: warning: --unsafe-fixes does nothing without --fix or --diff; nothing is fixed\n",
    )
    assert (root / MODEL / "modeling_x.py").read_text() == CASE


def test_a_read_only_file_is_not_rewritten(make_tree: MakeTree) -> None:
    """A rename needs only the directory to be writable: a 0444 file was replaced; and root (a CI
    container), whom `os.access` lets write anything, replaced it too (red-team 47)."""
    root = make_tree({MODEL + "modeling_x.py": CASE})
    (root / MODEL / "modeling_x.py").chmod(0o444)
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr.splitlines()[1:]) == (
        1,
        [f"declint: not fixed: {MODEL}modeling_x.py:7:46: DL104: {MODEL}modeling_x.py is read-only; not rewritten"],
    )
    assert (root / MODEL / "modeling_x.py").read_text() == CASE


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a file to another user")
def test_a_rewritten_file_keeps_its_owner(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_x.py": CASE})
    path = root / MODEL / "modeling_x.py"
    os.chown(path, 65534, 65534)
    path.chmod(0o664)
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (65534, 65534, 0o664)
    assert path.read_text() == CASE.replace("trtllm", "TRTLLM")


def test_a_fix_on_the_line_a_project_finding_is_anchored_to_goes_in(tmp_path: Path) -> None:
    """Red-team 50: without a shared Literal, DL100 stands on line 1 of the first file; its
    identity held that line's text, so any fix editing the line made it "new" and was refused."""
    (tmp_path / "a.py").write_text("x = 1  # declint: ignore[DL101] reason\n")
    result = run("--no-cache", "--fix", str(tmp_path / "a.py"))
    assert result.stderr == "declint: fixed 1 finding in 1 file\n"
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_a_fix_removes_the_temporary_files_of_killed_writes_of_that_file(make_tree: MakeTree) -> None:
    """A write killed before its rename leaves `.NAME.XXXXXXXX.declint` next to the file (no
    handler runs on SIGKILL); the next write of that file removes those over an hour old, and
    nothing else: not a fresh one (another run may be writing it), not another file's, not a
    name declint would not have made."""
    root = make_tree({MODEL + "modeling_x.py": CASE})
    models = root / MODEL
    old = time.time() - 7200
    names = {
        "stale": ".modeling_x.py.k2_9abcd.declint",
        "fresh": ".modeling_x.py.q8zz01ab.declint",
        "another file's": ".modeling_y.py.k2_9abcd.declint",
        "not declint's": ".modeling_x.py.NOT-OURS.declint",
        "longer": ".modeling_x.py.k2_9abcdef.declint",
    }
    for kind, name in names.items():
        (models / name).write_text("half a file")
        if kind != "fresh":
            os.utime(models / name, (old, old))
    result = run("--fix", str(root / "tensorrt_llm"))
    assert (result.exit_code, result.stderr) == (0, "declint: fixed 1 finding in 1 file\n")
    assert (models / "modeling_x.py").read_text() == CASE.replace("trtllm", "TRTLLM")
    left = {path.name for path in models.iterdir() if path.name.endswith(".declint")}
    assert left == set(names.values()) - {names["stale"]}
