"""`declint check --stdin-filename FILE`: an editor's buffer checked as the file it will be saved as."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from declint.cache import NO_CACHE_ENV
from declint.cli import cli
from tests.conftest import MakeTree

MODEL = "tensorrt_llm/_torch/models/"
RETYPED = 'def is_trtllm(config):\n    return config.attn_backend == "TRTLLM"\n'
DL103 = (
    'DL103 backend name "TRTLLM" retyped as a string literal; read it from the shared Literal '
    "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
)


def check(stdin: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", *args], input=stdin.encode())
    return result.exit_code, result.stdout, result.stderr


def test_an_unsaved_file_is_checked_from_stdin_and_nothing_is_written(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(NO_CACHE_ENV, raising=False)  # the cache is on, as for a user
    root = make_tree({})
    before = sorted(root.rglob("*"))
    target = root / MODEL / "modeling_new.py"
    code, stdout, _ = check(RETYPED, "--stdin-filename", str(target))
    assert (code, stdout) == (1, f"{MODEL}modeling_new.py:2:35: {DL103}\nFound 1 finding in 1 file.\n")
    assert sorted(root.rglob("*")) == before  # no file, no cache directory, no snapshot


def test_the_text_on_stdin_wins_over_the_file_on_disk(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_edited.py": RETYPED})
    fixed = RETYPED.replace('"TRTLLM"', "TRTLLM_NAME")
    assert check(fixed, "--stdin-filename", str(root / MODEL / "modeling_edited.py"), "-")[:2] == (
        0,
        "All clear: 1 file checked.\n",
    )
    # The report shows the checked text, not the file on disk.
    code, stdout, _ = check(
        "\n\n" + RETYPED, "--format", "full", "--stdin-filename", str(root / MODEL / "modeling_edited.py")
    )
    assert code == 1
    assert stdout.splitlines()[0] == f"{MODEL}modeling_edited.py:4:35: {DL103}"
    assert '4 |     return config.attn_backend == "TRTLLM"' in stdout
    assert (root / MODEL / "modeling_edited.py").read_text() == RETYPED


def test_stdin_text_feeds_the_project_index(make_tree: MakeTree) -> None:
    """A buffer of the module holding the shared Literal is what the index reads: with the Literal
    renamed there, DL100 reports it missing, while the file on disk still defines it."""
    root = make_tree({})
    literal_file = root / "tensorrt_llm/llmapi/llm_args.py"
    edited = literal_file.read_text().replace("EncoderAttentionBackend", "EncoderBackendRenamed")
    code, stdout, _ = check(edited, "--select", "DL100", "--stdin-filename", str(literal_file))
    assert (code, stdout.splitlines()[0]) == (
        1,
        'tensorrt_llm/llmapi/llm_args.py:1:1: DL100 shared Literal "EncoderAttentionBackend" is not defined as a '
        "typing.Literal in tensorrt_llm.llmapi.llm_args",
    )
    assert check("", "--select", "DL100", str(literal_file))[:2] == (0, "All clear: 1 file checked.\n")


def test_stdin_filename_refuses_what_needs_files_on_disk(make_tree: MakeTree) -> None:
    root = make_tree({})
    target = str(root / MODEL / "modeling_x.py")
    cases = [
        (("--stdin-filename", target, str(root)), "--stdin-filename checks the text on stdin: pass no PATHS, or '-'"),
        (
            ("--diff-base", "HEAD", "--stdin-filename", target),
            "--baseline and --diff-base compare files on disk; they cannot be combined with --stdin-filename",
        ),
        (
            ("--fix", "--format", "json", "--stdin-filename", target),
            "stdout holds the fixed text; give each report a file: --output-format FMT:FILE",
        ),
    ]
    for args, message in cases:
        assert check("x = 1\n", *args) == (2, "", f"declint: error: {message}\n"), args


WRONG_CASE = (
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
    'class M(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
)


def test_fix_on_stdin_prints_the_fixed_text_and_writes_nothing(make_tree: MakeTree) -> None:
    """As editors use it: the buffer in, the buffer with its safe fixes out; the file on disk (here
    the same declaration two lines higher) and the tree stay as they were."""
    root = make_tree({MODEL + "modeling_m.py": WRONG_CASE})
    target = str(root / MODEL / "modeling_m.py")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    buffer = "\n\n" + WRONG_CASE
    assert check(buffer, "--fix", "--stdin-filename", target) == (
        0,
        buffer.replace('"trtllm"', '"TRTLLM"'),
        "declint: fixed 1 finding in 1 file\n",
    )
    assert check(buffer.replace('"trtllm"', '"TRTLLM"'), "--fix", "--stdin-filename", target) == (
        0,
        buffer.replace('"trtllm"', '"TRTLLM"'),  # nothing to fix: the text as it came
        "declint: fixed 0 findings in 0 files\n",
    )
    code, stdout, stderr = check(buffer, "--diff", "--stdin-filename", target)
    assert (code, stderr) == (1, "declint: would fix 1 finding in 1 file\n")
    assert stdout.splitlines()[:3] == [f"--- a/{MODEL}modeling_m.py", f"+++ b/{MODEL}modeling_m.py", "@@ -4,4 +4,4 @@"]
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_fix_on_stdin_reports_what_is_left_in_the_fixed_text(make_tree: MakeTree) -> None:
    root = make_tree({})
    target = str(root / MODEL / "modeling_m.py")
    report = root / "left.txt"
    buffer = WRONG_CASE + RETYPED
    code, stdout, _ = check(buffer, "--fix", "--output-format", f"text:{report}", "--stdin-filename", target)
    assert (code, stdout) == (1, buffer.replace('"trtllm"', '"TRTLLM"'))
    assert report.read_text() == f"{MODEL}modeling_m.py:7:35: {DL103}\nFound 1 finding in 1 file (1 fixed).\n"


def test_without_paths_or_stdin_filename_click_asks_for_paths() -> None:
    code, _, stderr = check("")
    assert code == 2
    assert stderr.endswith("Error: Missing argument 'PATHS...'.\n")


def test_an_excluded_stdin_filename_is_not_checked(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\nexclude = ["scratch/"]\n'})
    target = root / "tensorrt_llm/scratch/modeling_tmp.py"
    assert check(RETYPED, "--stdin-filename", str(target))[:2] == (0, "All clear: 0 files checked.\n")


def test_a_fix_preview_is_of_the_text_on_stdin_not_of_the_file_on_disk(make_tree: MakeTree) -> None:
    """The preview of a fix in the buffer is computed from the buffer: the file on disk has its
    lines elsewhere (here, two lines higher). No "fixable with --fix" hint: --fix cannot take stdin."""
    declaration = (
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
        'class M(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    )
    root = make_tree({MODEL + "modeling_m.py": declaration})
    target = str(root / MODEL / "modeling_m.py")
    code, stdout, _ = check("\n\n" + declaration, "--select", "DL104", "--format", "json", "--stdin-filename", target)
    (finding,) = json.loads(stdout)["findings"]
    assert (code, finding["line"], finding["fix"]["applicability"]) == (1, 7, "safe")
    assert finding["fix"]["edits"] == [{"line": 7, "column": 46, "end_line": 7, "end_column": 52, "content": "TRTLLM"}]
    code, stdout, _ = check("\n\n" + declaration, "--select", "DL104", "--stdin-filename", target)
    assert stdout.splitlines()[1:] == ["Found 1 finding in 1 file."]
