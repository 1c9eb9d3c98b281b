"""Fingerprints and the baseline: known findings stay quiet, moved ones too, new ones fail, fixed
ones leave stale entries (DL904), and `baseline write` never grows the file unless asked."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from declint.cli import cli
from tests.conftest import MakeTree

MODEL = "tensorrt_llm/_torch/models/"
A = MODEL + "modeling_a.py"
B = MODEL + "modeling_b.py"
SOURCE_A = (
    "def pick(attn_backend):\n"
    '    if attn_backend == "TRTLLM":\n'
    '        return "VANILLA" == attn_backend\n'
    '    return attn_backend == "TRTLLM"\n'
)
SOURCE_B = 'def other(attn_backend="FLASHINFER"):\n    return attn_backend\n'
MESSAGE = (
    'backend name "{}" retyped as a string literal; read it from the shared Literal EncoderAttentionBackend '
    "(tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def fingerprints(*args: str) -> list[tuple[str, int, str]]:
    document = json.loads(invoke("check", "--format", "json", *args).stdout)
    return [(f["path"], f["line"], f["fingerprint"]) for f in document["findings"]]


def checked() -> int:
    """Files a check of the project covers (the prelude grows with the rules)."""
    summary = json.loads(invoke("check", "--format", "json", "tensorrt_llm").stdout)["summary"]
    return int(summary["files_checked"])


@pytest.fixture
def project(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_tree({A: SOURCE_A, B: SOURCE_B})
    monkeypatch.chdir(root)
    return root


def test_fingerprints_survive_moves_and_reindentation_but_not_edits(project: Path) -> None:
    before = fingerprints("tensorrt_llm")
    assert [(path, line) for path, line, _ in before] == [(A, 2), (A, 3), (A, 4), (B, 1)]
    assert len({fp for _, _, fp in before}) == 4  # the two "TRTLLM" comparisons in pick are told apart
    (project / A).write_text("# a comment\n\n\n" + SOURCE_A)
    moved = fingerprints("tensorrt_llm")
    assert [line for _, line, _ in moved] == [5, 6, 7, 1]
    assert [fp for _, _, fp in moved] == [fp for _, _, fp in before]
    (project / A).write_text("class Holder:\n    pass\n\n\n" + SOURCE_A.replace("    ", "\t"))
    assert [fp for _, _, fp in fingerprints("tensorrt_llm")] == [fp for _, _, fp in before]
    (project / A).write_text(SOURCE_A.replace("def pick", "def choose"))
    assert {fp for _, _, fp in fingerprints("tensorrt_llm")} & {fp for _, _, fp in before[:3]} == set()


def test_baseline_write_then_check(project: Path) -> None:
    result = invoke("baseline", "write", "declint-baseline.json")
    assert result.exit_code == 0
    assert result.stderr == (
        "declint: wrote 4 entries to declint-baseline.json (4 added, 0 no longer found, 0 kept from outside this run)\n"
    )
    prints = fingerprints("tensorrt_llm")
    lines = (project / "declint-baseline.json").read_text().splitlines()
    assert lines[:4] == ["{", '  "schema_version": 1,', '  "tool": "declint",', '  "entries": [']
    assert lines[-2:] == ["  ]", "}"]
    entries = [json.loads(line.strip().rstrip(",")) for line in lines[4:-2]]
    assert [(e["path"], e["code"], e["context"]) for e in entries] == [
        (A, "DL103", "pick"),
        (A, "DL103", "pick"),
        (A, "DL103", "pick"),
        (B, "DL103", "other"),
    ]
    assert sorted(e["fingerprint"] for e in entries) == sorted(fp for _, _, fp in prints)
    assert entries[3] == {
        "fingerprint": prints[3][2],
        "code": "DL103",
        "path": B,
        "context": "other",
        "message": MESSAGE.format("FLASHINFER"),
    }

    result = invoke("check", "--baseline", "declint-baseline.json", "tensorrt_llm")
    assert (result.exit_code, result.stdout) == (
        0,
        f"All clear: {checked()} files checked (4 more in the baseline declint-baseline.json).\n",
    )


def test_moved_finding_is_still_baselined_and_new_ones_fail(project: Path) -> None:
    invoke("baseline", "write", "declint-baseline.json")
    (project / A).write_text("import os\n\n\n" + SOURCE_A + '\n\ndef fresh(attn_backend="VANILLA"):\n    pass\n')
    result = invoke("check", "--baseline", "declint-baseline.json", "tensorrt_llm")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{A}:10:24: DL103 " + MESSAGE.format("VANILLA"),
        f"Found 1 finding in {checked()} files (4 more in the baseline declint-baseline.json).",
    ]


def test_fixed_findings_leave_stale_entries(project: Path) -> None:
    invoke("baseline", "write", "declint-baseline.json")
    gone = fingerprints("tensorrt_llm")[3][2]
    (project / B).write_text("def other(attn_backend):\n    return attn_backend\n")
    result = invoke("check", "--baseline", "declint-baseline.json", "tensorrt_llm")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"declint-baseline.json:8:5: DL904 stale baseline entry {gone}: no DL103 finding in {B} (other) matches it "
        "any more; run `declint baseline write` to drop it",
        f"Found 1 finding in {checked()} files (3 more in the baseline declint-baseline.json).",
    ]
    assert invoke("check", "--baseline", "declint-baseline.json", "--ignore", "DL904", "tensorrt_llm").exit_code == 0
    # a run that did not look at modeling_b.py cannot tell the entry is stale
    assert invoke("check", "--baseline", "declint-baseline.json", str(project / A)).exit_code == 0

    result = invoke("baseline", "write", "declint-baseline.json")
    assert result.stderr == (
        "declint: wrote 3 entries to declint-baseline.json (0 added, 1 no longer found, 0 kept from outside this run)\n"
    )
    assert gone not in (project / "declint-baseline.json").read_text()
    assert invoke("check", "--baseline", "declint-baseline.json", "tensorrt_llm").exit_code == 0


def test_baseline_write_never_grows_unless_asked(project: Path) -> None:
    invoke("baseline", "write", "declint-baseline.json")
    written = (project / "declint-baseline.json").read_bytes()
    (project / B).write_text(SOURCE_B + '\n\ndef more(attn_backend="TRTLLM"):\n    pass\n')
    result = invoke("baseline", "write", "declint-baseline.json")
    assert result.exit_code == 1
    assert result.stderr == (
        "declint: error: declint-baseline.json would grow by 1 entry; fix these findings, or accept them with "
        f"--allow-grow:\n  {B}: DL103 " + MESSAGE.format("TRTLLM") + "\n"
    )
    assert (project / "declint-baseline.json").read_bytes() == written
    result = invoke("baseline", "write", "--allow-grow", "declint-baseline.json")
    assert result.exit_code == 0
    assert "(1 added, 0 no longer found, 0 kept from outside this run)" in result.stderr
    assert invoke("check", "--baseline", "declint-baseline.json", "tensorrt_llm").exit_code == 0


def test_partial_write_keeps_entries_of_other_files(project: Path) -> None:
    invoke("baseline", "write", "declint-baseline.json")
    before = (project / "declint-baseline.json").read_text()
    result = invoke("baseline", "write", "declint-baseline.json", str(project / A))
    assert "(0 added, 0 no longer found, 1 kept from outside this run)" in result.stderr
    assert (project / "declint-baseline.json").read_text() == before
    result = invoke("baseline", "write", "--select", "DL101", "declint-baseline.json", "tensorrt_llm")
    assert "(0 added, 0 no longer found, 4 kept from outside this run)" in result.stderr
    assert (project / "declint-baseline.json").read_text() == before


def test_baselined_results_in_sarif(project: Path) -> None:
    invoke("baseline", "write", "declint-baseline.json")
    (project / B).write_text(SOURCE_B + '\n\ndef more(attn_backend="TRTLLM"):\n    pass\n')
    args = ("check", "--baseline", "declint-baseline.json", "--output-format", "sarif")
    plain = json.loads(invoke(*args, "tensorrt_llm").stdout)["runs"][0]["results"]
    assert [(r["locations"][0]["physicalLocation"]["region"]["startLine"], r["baselineState"]) for r in plain] == [
        (5, "new")
    ]
    full = json.loads(invoke(*args, "--include-suppressed", "tensorrt_llm").stdout)["runs"][0]["results"]
    states = [(r["baselineState"], r.get("suppressions")) for r in full]
    external = [{"kind": "external", "justification": "listed in the baseline declint-baseline.json"}]
    assert states == [("unchanged", external)] * 3 + [("unchanged", external), ("new", None)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "declint-baseline.json:1: baseline is not valid JSON"),
        ('{"schema_version": 9, "entries": []}', "not a declint baseline (schema_version 1 expected)"),
        ('{"schema_version": 1, "entries": [{"code": "DL103"}]}', "entry 0 needs string fields"),
    ],
)
def test_bad_baselines_are_usage_errors(project: Path, content: str, message: str) -> None:
    (project / "declint-baseline.json").write_text(content)
    result = invoke("check", "--baseline", "declint-baseline.json", "tensorrt_llm")
    assert result.exit_code == 2 and message in result.output


def test_an_empty_file_is_written_as_a_new_baseline_and_one_entry_is_an_entry(project: Path) -> None:
    """`touch baseline.json` then `baseline write`: the empty file was "not valid JSON"."""
    (project / "declint-baseline.json").write_text("\n")
    result = invoke("baseline", "write", "declint-baseline.json", B)
    assert (result.exit_code, result.stderr) == (
        0,
        "declint: wrote 1 entry to declint-baseline.json (1 added, 0 no longer found, 0 kept from outside this run)\n",
    )


def test_missing_baseline_says_how_to_create_it(project: Path) -> None:
    result = invoke("check", "--baseline", "nope.json", "tensorrt_llm")
    assert result.exit_code == 2
    assert "baseline not found: nope.json (create it with `declint baseline write nope.json`)" in result.output


@pytest.mark.parametrize("separator", ["\u2028", "\x0c", "\x85"])
def test_a_line_separator_above_a_finding_keeps_fingerprint_and_snippet_on_its_line(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch, separator: str
) -> None:
    """Reports split the file with str.splitlines, which also splits at U+2028, \\f, \\x85...:
    the offending text of a finding came from the line above it, so editing that line changed its
    fingerprint (new finding, stale entry), and `full` printed the wrong line."""
    model = MODEL + "modeling_x.py"
    source = (
        f'X = "a{separator}b"\n\n\ndef f(attn_backend):\n'
        '    log("checking the attention backend name now")\n'
        '    return attn_backend == "TRTLLM"\n'
    )
    root = make_tree({model: source})
    monkeypatch.chdir(root)
    [(_, line, fingerprint)] = fingerprints(model)
    (root / model).write_text(source.replace(separator, " "))
    assert fingerprints(model) == [(model, line, fingerprint)]  # the same offending text, line 6
    (root / model).write_text(source)
    invoke("baseline", "write", "declint-baseline.json")
    (root / model).write_text(source.replace("the attention backend name now", "the backend"))
    result = invoke("check", "--baseline", "declint-baseline.json", model)
    assert (result.exit_code, result.stdout) == (
        0,
        "All clear: 1 file checked (1 more in the baseline declint-baseline.json).\n",
    )
    full = invoke("check", "--format", "full", model).stdout.splitlines()
    assert full[1:5] == [
        "  |",
        '5 |     log("checking the backend")',
        '6 |     return attn_backend == "TRTLLM"',
        "  |                            ^^^^^^^^",
    ]


def test_baseline_write_keeps_the_files_mode(project: Path) -> None:
    """A 0600 baseline became 0644 when written again (a new file is 0644, as before)."""
    baseline = project / "declint-baseline.json"
    assert invoke("baseline", "write", baseline.name).exit_code == 0
    assert stat.S_IMODE(baseline.stat().st_mode) == 0o644
    baseline.chmod(0o600)
    (project / B).write_text("")
    result = invoke("baseline", "write", baseline.name)
    assert (result.exit_code, result.stderr) == (
        0,
        f"declint: wrote 3 entries to {baseline.name} (0 added, 1 no longer found, 0 kept from outside this run)\n",
    )
    assert stat.S_IMODE(baseline.stat().st_mode) == 0o600
    assert [p.name for p in project.iterdir() if p.name.endswith(".declint")] == []


def _declaring(name: str) -> str:
    return (
        "from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n\n\n"
        f"class {name}(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": FixedEncoderAttention("HF tower")}\n'
    )


def test_rows_missing_from_the_docs_table_are_told_apart_by_their_row(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every row missing from the docs table is reported at its header line, with the same text
    there: the fingerprint tells them apart by the row (the finding's context). By position alone,
    a model added ahead of a baselined one took the baselined fingerprint, and the check reported
    the baselined model as the new drift."""
    header = "| model | encoder | backends | reason | default |\n|---|---|---|---|---|\n"
    root = make_tree(
        {
            "pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\ndocs-table = "docs.md"\n',
            "docs.md": header,
            MODEL + "modeling_m.py": _declaring("MModel"),
        }
    )
    monkeypatch.chdir(root)
    assert invoke("baseline", "write", "b.json").exit_code == 0
    (root / MODEL / "modeling_a.py").write_text(_declaring("AModel"))
    result = invoke("check", "--baseline", "b.json", "--format", "json", "tensorrt_llm")
    new = [(f["path"], f["line"], f["context"], f["message"]) for f in json.loads(result.stdout)["findings"]]
    assert new == [
        (
            "docs.md",
            1,
            "AModel / vision",
            "AModel / vision is declared (not configurable) but missing from the docs table",
        )
    ]
