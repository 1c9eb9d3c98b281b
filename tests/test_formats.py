"""Output formats on a small tree with every kind of finding: fixable (safe, unsafe), suppressed,
non-ASCII on the line; validated against the consumers' schemas where one exists."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.reporting.github_format import escape_data, escape_property, log_text
from declint.testing import PRELUDE, write_tree
from tests.conftest import SHARED_DATA, MakeTree

MODEL = "tensorrt_llm/_torch/models/"
FMT = MODEL + "modeling_fmt.py"
SOURCE = """from torch import nn
from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin
from tensorrt_llm._torch.models.modeling_utils import MultimodalPlaceholderMetadata, register_input_processor


def pick(attn_backend="TRTLLM"):
    return attn_backend


class Tidy(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {"vision": ("trtllm",)}


@register_input_processor(
    object, model_type="x", placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "<i>"}))
class Untidy(MultimodalModelMixin, nn.Module):
    pass


def legacy(attn_backend):
    x = 1  # declint: ignore[DL103] kept for the old path
    y = pick(attn_backend="FLASHINFER")  # declint: ignore[DL103] migration pending
    label = "\u00fcn\u00ef"; z = pick(attn_backend="VANILLA")
    return x, y, z, label
"""
# (code, line, 0-based column) of every finding SOURCE gives, in report order.
EXPECTED = [("DL103", 6, 22), ("DL104", 11, 45), ("DL102", 16, 6), ("DL902", 21, 11), ("DL103", 23, 41)]


def load_schema(name: str) -> dict[str, Any]:
    return json.loads((SHARED_DATA / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture
def tree(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_tree({FMT: SOURCE})
    monkeypatch.chdir(root)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return root


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", *args])
    return result.exit_code, result.output


def checked() -> int:
    """Files a check of the tree covers (the prelude grows with the rules)."""
    return int(json.loads(check("--format", "json", "tensorrt_llm")[1])["summary"]["files_checked"])


def render(fmt: str, *extra: str) -> str:
    code, output = check("--output-format", fmt, *extra, "tensorrt_llm")
    assert code == 1, output
    return output


def test_json_carries_fingerprint_and_fixes(tree: Path) -> None:
    document = json.loads(render("json"))
    assert document["schema_version"] == 1
    found = [(f["code"], f["line"], f["column"]) for f in document["findings"]]
    assert found == EXPECTED
    assert document["summary"]["fixable"] == {"safe": 2, "unsafe": 1}
    by_code = {f["code"]: f for f in document["findings"]}
    assert by_code["DL104"]["fix"] == {
        "applicability": "safe",
        "description": 'Replace "trtllm" with "TRTLLM"',
        "edits": [{"line": 11, "column": 46, "end_line": 11, "end_column": 52, "content": "TRTLLM"}],
    }
    assert by_code["DL902"]["fix"]["edits"] == [
        {"line": 21, "column": 9, "end_line": 21, "end_column": 57, "content": ""}
    ]
    assert by_code["DL102"]["fix"]["applicability"] == "unsafe"
    assert by_code["DL103"]["fix"] is None
    assert all(len(f["fingerprint"]) == 16 for f in document["findings"])
    assert len({f["fingerprint"] for f in document["findings"]}) == 5
    assert "suppressed" not in document


def test_jsonl_is_the_json_findings_one_per_line(tree: Path) -> None:
    lines = render("jsonl").splitlines()
    document = json.loads(render("json"))
    assert [json.loads(line) for line in lines] == document["findings"]


def test_sarif_validates_and_carries_rules_fingerprints_fixes(tree: Path) -> None:
    document = json.loads(render("sarif"))
    jsonschema.Draft4Validator(load_schema("sarif-schema-2.1.0.json")).validate(document)
    run = document["runs"][0]
    assert document["version"] == "2.1.0"
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tree.resolve().as_uri() + "/"}}
    rules = run["tool"]["driver"]["rules"]
    from declint.rules import ALL_RULES

    assert [r["id"] for r in rules] == [rule.CODE for rule in ALL_RULES]
    dl104 = next(r for r in rules if r["id"] == "DL104")
    assert "helpUri" not in dl104  # no --docs-url: no absolute URI to give
    assert dl104["help"]["text"].startswith("DL104 invalid-declaration: ")
    assert "```python" in dl104["help"]["markdown"]
    results = run["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        (code, line) for code, line, _ in EXPECTED
    ]
    first = results[0]
    assert first["ruleIndex"] == [rule.CODE for rule in ALL_RULES].index("DL103")
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": FMT, "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 6, "startColumn": 23, "endLine": 6, "endColumn": 31},
    }
    assert first["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "pick"}]
    # a point (the suppression comment) has no end: its region runs to the end of the line
    assert results[3]["locations"][0]["physicalLocation"]["region"] == {"startLine": 21, "startColumn": 12}
    json_prints = [f["fingerprint"] for f in json.loads(render("json"))["findings"]]
    assert [r["partialFingerprints"]["declint/v1"] for r in results] == json_prints
    replacement = results[1]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement == {
        "deletedRegion": {"startLine": 11, "startColumn": 47, "endLine": 11, "endColumn": 53},
        "insertedContent": {"text": "TRTLLM"},
    }
    assert all("suppressions" not in r for r in results)


def test_sarif_suppressed_results_only_when_asked(tree: Path) -> None:
    document = json.loads(render("sarif", "--include-suppressed"))
    jsonschema.Draft4Validator(load_schema("sarif-schema-2.1.0.json")).validate(document)
    suppressed = [r for r in document["runs"][0]["results"] if "suppressions" in r]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in suppressed] == [
        ("DL103", 22)
    ]
    assert suppressed[0]["suppressions"] == [{"kind": "inSource", "justification": "migration pending"}]
    document = json.loads(render("json", "--include-suppressed"))
    assert [(s["code"], s["line"], s["justification"]) for s in document["suppressed"]] == [
        ("DL103", 22, "migration pending")
    ]


def test_rdjson_validates_with_byte_columns_and_suggestions(tree: Path) -> None:
    document = json.loads(render("rdjson"))
    jsonschema.Draft4Validator(load_schema("rdjson-schema/DiagnosticResult.json")).validate(document)
    diagnostics = document["diagnostics"]
    assert [(d["code"]["value"], d["location"]["range"]["start"]["line"]) for d in diagnostics] == [
        (code, line) for code, line, _ in EXPECTED
    ]
    # "ü" and "ï" take two bytes each: code-point column 42 is byte column 44
    assert diagnostics[4]["location"]["range"] == {
        "start": {"line": 23, "column": 44},
        "end": {"line": 23, "column": 53},
    }
    assert diagnostics[1]["suggestions"] == [
        {
            "range": {"start": {"line": 11, "column": 1}, "end": {"line": 12, "column": 1}},
            "text": '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n',
        }
    ]
    assert diagnostics[3]["suggestions"] == [
        {"range": {"start": {"line": 21, "column": 1}, "end": {"line": 22, "column": 1}}, "text": "    x = 1\n"}
    ]
    assert "suggestions" not in diagnostics[0]


def test_rdjsonl_lines_validate_as_diagnostics(tree: Path) -> None:
    schema = load_schema("rdjson-schema/Diagnostic.json")
    lines = render("rdjsonl").splitlines()
    assert len(lines) == 5
    for line in lines:
        jsonschema.Draft4Validator(schema).validate(json.loads(line))
    assert json.loads(lines[2])["suggestions"][1]["text"].startswith("    encoder_attention_backends = {\n")


def test_gitlab_code_quality(tree: Path) -> None:
    issues = json.loads(render("gitlab"))
    prints = [f["fingerprint"] for f in json.loads(render("json"))["findings"]]
    assert [i["fingerprint"] for i in issues] == prints
    assert issues[0] == {
        "type": "issue",
        "check_name": "DL103",
        "description": 'DL103 backend name "TRTLLM" retyped as a string literal; read it from the shared Literal '
        "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift",
        "content": {"body": "backend-literal: docs/rules.md#dl103-backend-literal"},
        "categories": ["Bug Risk"],
        "fingerprint": prints[0],
        "severity": "major",
        "location": {"path": FMT, "lines": {"begin": 6, "end": 6}},
    }


def test_junit_one_failure_per_finding(tree: Path) -> None:
    root = ET.fromstring(render("junit"))
    assert root.attrib == {"name": "declint", "tests": "5", "failures": "5", "errors": "0"}
    cases = root.findall("./testsuite/testcase")
    assert [c.attrib["name"] for c in cases][:2] == [
        "DL103 backend-literal at 6:23",
        "DL104 invalid-declaration at 11:46",
    ]
    failure = cases[0].find("failure")
    assert failure is not None and failure.attrib["type"] == "DL103"


def test_junit_clean_run_is_one_passing_case(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(make_tree({}))
    code, output = check("--output-format", "junit", "tensorrt_llm")
    assert code == 0
    root = ET.fromstring(output)
    assert [(c.attrib["name"], c.find("failure")) for c in root.iter("testcase")] == [("declint check", None)]


def test_github_annotations_are_escaped(tree: Path) -> None:
    lines = render("github").splitlines()
    assert lines[0] == (
        f"::error file={FMT},line=6,col=23,endColumn=31,title=declint DL103 (backend-literal)::"
        'backend name "TRTLLM" retyped as a string literal; read it from the shared Literal EncoderAttentionBackend '
        "(tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
    )
    assert lines[1].endswith(
        '(did you mean "TRTLLM"?)%0A%0AFix (safe, `declint check --fix`): Replace "trtllm" with "TRTLLM"'
    )
    assert lines[3].startswith(f"::error file={FMT},line=21,col=12,title=")
    assert lines[5] == "::group::declint: 5 findings"
    assert lines[-1] == f"Found 5 findings in {checked()} files."
    assert escape_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert escape_property("a: b, c%") == "a%3A b%2C c%25"


def test_github_caps_annotations_and_writes_the_step_summary(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    many = "".join(f'def f{n}(attn_backend="TRTLLM"):\n    pass\n' for n in range(12))
    root = make_tree({MODEL + "modeling_many.py": many, MODEL + "modeling_odd,name:x.py": CONFIG})
    monkeypatch.chdir(root)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, output = check("--output-format", "github", "tensorrt_llm")
    assert code == 1
    lines = output.splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 10
    assert lines[10] == (
        "::notice title=declint::3 more findings not annotated: GitHub shows at most 10 error and 10 warning "
        "annotations per step. All findings are listed in the log and the job summary."
    )
    assert lines[0].startswith(f"::error file={MODEL}modeling_many.py,line=1,col=")
    odd = [line for line in lines if "odd" in line and line.startswith("::")]
    assert odd == []  # sorted after modeling_many: beyond the cap, but in the log group
    assert f"{MODEL}modeling_odd,name:x.py:2:35: DL103 " in output
    text = summary.read_text()
    assert text.startswith(f"earlier step\n## declint\n\nFound 13 findings in {checked()} files.\n")
    assert text.count("\n| error | `") == 13
    assert f"| error | `{MODEL}modeling_odd,name:x.py:2:35` | DL103 backend-literal |" in text


CONFIG = 'def is_trtllm(config):\n    return config.attn_backend == "TRTLLM"\n'


def test_github_escapes_file_property(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(make_tree({MODEL + "modeling_odd,name:x.py": CONFIG}))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    lines = render("github").splitlines()
    assert lines[0].startswith(f"::error file={MODEL}modeling_odd%2Cname%3Ax.py,line=2,col=35,endColumn=43,")


def test_a_report_on_stdout_is_the_report_written_to_a_file(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """stdout is not a terminal in CI, and click strips ANSI sequences from what it echoes there:
    the github annotation of `esc\\x1b[31m.py` named `esc.py`, another file, and stdout differed
    from the same report written to a file."""
    monkeypatch.chdir(make_tree({MODEL + "esc\x1b[31m.py": CONFIG}))
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for output_format in ("github", "text", "json"):
        code, output = check("--no-cache", "--format", output_format, "tensorrt_llm")
        written = tmp_path / f"report.{output_format}"
        assert check("--no-cache", "--output-format", f"{output_format}:{written}", "tensorrt_llm") == (code, "")
        assert code == 1
        assert output == written.read_text(encoding="utf-8")
    code, output = check("--no-cache", "--format", "github", "tensorrt_llm")
    assert output.startswith(f"::error file={MODEL}esc\x1b[31m.py,line=2,col=35,")


def test_paths_are_relative_to_the_working_directory_for_annotations(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree.parent)
    code, output = check("--output-format", "gitlab", str(tree / "tensorrt_llm"))
    assert code == 1
    assert json.loads(output)[0]["location"]["path"] == f"{tree.name}/{FMT}"
    code, output = check("--output-format", "json", str(tree / "tensorrt_llm"))
    assert json.loads(output)["findings"][0]["path"] == FMT  # json stays root-relative


def test_paths_from_a_directory_inside_the_project(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """reviewdog joins a path to the directory it runs in: from below the root, rdjson paths
    climb out with `../` (they were root-relative, so reviewdog looked for `MODEL/MODEL/...`).
    GitHub and GitLab read paths from the repository root and cannot resolve `../`: theirs stay
    project-root-relative, as the README says."""
    monkeypatch.chdir(tree / MODEL)
    code, output = check("--output-format", "rdjsonl", ".")
    assert code == 1
    assert {json.loads(line)["location"]["path"] for line in output.splitlines()} == {"modeling_fmt.py"}
    monkeypatch.chdir(tree / "tensorrt_llm" / "llmapi")
    code, output = check("--output-format", "rdjson", "../_torch/models")
    assert {d["location"]["path"] for d in json.loads(output)["diagnostics"]} == {"../_torch/models/modeling_fmt.py"}
    code, output = check("--output-format", "gitlab", "../_torch/models")
    assert {issue["location"]["path"] for issue in json.loads(output)} == {FMT}
    code, output = check("--output-format", "github", "../_torch/models")
    assert output.startswith(f"::error file={FMT},line=6,")
    code, output = check("--output-format", "junit", "../_torch/models")
    assert {case.attrib["file"] for case in ET.fromstring(output).iter("testcase")} == {FMT}


@pytest.mark.parametrize("git", ["directory", "file"])  # a checkout; a worktree or submodule
def test_annotation_paths_start_at_the_repository_root_that_holds_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, git: str
) -> None:
    """A project in a subdirectory of its repository, checked from inside it: GitHub and GitLab
    read paths from the repository root, so theirs carry the subdirectory; rdjson stays relative
    to the working directory, json to the project root."""
    project = tmp_path / "repo" / "python"
    write_tree(project, {**PRELUDE, FMT: SOURCE})
    marker = tmp_path / "repo" / ".git"
    if git == "directory":
        marker.mkdir()
        (marker / "HEAD").write_text("ref: refs/heads/main\n")
    else:
        marker.write_text("gitdir: /elsewhere/.git/worktrees/x\n")
    monkeypatch.chdir(project / MODEL)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, output = check("--output-format", "github", ".")
    assert code == 1
    assert output.startswith(f"::error file=python/{FMT},line=6,")
    # The log's list names the files as the annotations do (red-team 47: project-relative there)
    logged = [line for line in output.splitlines() if "DL" in line and not line.startswith("::")]
    assert logged and all(line.startswith(f"python/{FMT}:") for line in logged)
    code, output = check("--output-format", "gitlab", ".")
    assert {issue["location"]["path"] for issue in json.loads(output)} == {f"python/{FMT}"}
    code, output = check("--output-format", "junit", ".")
    assert {case.attrib["file"] for case in ET.fromstring(output).iter("testcase")} == {f"python/{FMT}"}
    code, output = check("--output-format", "rdjsonl", ".")
    assert {json.loads(line)["location"]["path"] for line in output.splitlines()} == {"modeling_fmt.py"}
    code, output = check("--output-format", "json", ".")
    assert {finding["path"] for finding in json.loads(output)["findings"]} == {FMT}


def test_rdjson_paths_from_a_directory_beside_the_project(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tree.parent / f"{tree.name}-elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, output = check("--output-format", "rdjsonl", str(tree / "tensorrt_llm"))
    assert code == 1
    assert {json.loads(line)["location"]["path"] for line in output.splitlines()} == {f"../{tree.name}/{FMT}"}
    code, output = check("--output-format", "gitlab", str(tree / "tensorrt_llm"))
    assert code == 1
    assert {issue["location"]["path"] for issue in json.loads(output)} == {FMT}


def test_several_outputs_in_one_run(tree: Path) -> None:
    code, output = check(
        "--output-format",
        "text",
        "--output-format",
        "sarif:reports/declint.sarif",
        "--output-format",
        "gitlab:reports/gl.json",
        "tensorrt_llm",
    )
    assert code == 1
    assert output.splitlines()[-1] == f"Found 5 findings in {checked()} files."
    sarif = json.loads((tree / "reports" / "declint.sarif").read_text())
    gitlab = json.loads((tree / "reports" / "gl.json").read_text())
    assert [r["partialFingerprints"]["declint/v1"] for r in sarif["runs"][0]["results"]] == [
        i["fingerprint"] for i in gitlab
    ]


def test_output_targets_are_validated(tree: Path) -> None:
    code, output = check("--output-format", "json", "--output-format", "sarif", "tensorrt_llm")
    assert code == 2 and "only one report can go to stdout" in output
    code, output = check("--output-format", "sarf:x.json", "tensorrt_llm")
    assert code == 2 and 'unknown output format "sarf" (did you mean "sarif"?)' in output
    code, output = check("--output-format", "json:", "tensorrt_llm")
    assert code == 2 and "a file name must follow the colon" in output


def test_two_reports_to_one_file_are_refused(tree: Path) -> None:
    """The second report silently overwrote the first."""
    (tree / "reports").mkdir()
    (tree / "link.out").symlink_to(tree / "reports" / "r.out")
    spellings = [
        ("--output-format", "json:r.out", "--output-format", "sarif:r.out"),
        ("--format", "json", "--output", "r.out", "--output-format", "sarif:./r.out"),
        ("--output-format", "json:reports/../r.out", "--output-format", f"gitlab:{tree / 'r.out'}"),
        ("--output-format", "json:link.out", "--output-format", "junit:reports/r.out"),
        ("--output-format", "json:r.out", "--output-format", "text", "--output-format", "json:r.out"),
    ]
    for args in spellings:
        code, output = check(*args, "tensorrt_llm")
        assert code == 2, args
        assert output.startswith("declint: error: two reports ("), output
        assert output.rstrip().endswith("give each report its own file")
        assert not (tree / "r.out").exists() and not (tree / "reports" / "r.out").exists()
    assert check(*spellings[0], "tensorrt_llm")[1] == (
        "declint: error: two reports (json, sarif) would be written to the same file r.out; "
        "give each report its own file\n"
    )
    code, output = check("--output-format", "json:r.out", "--output-format", "sarif:reports/r.out", "tensorrt_llm")
    assert (code, output) == (1, "")  # the same name in two directories is two files
    assert json.loads((tree / "r.out").read_text())["schema_version"] == 1
    assert json.loads((tree / "reports" / "r.out").read_text())["version"] == "2.1.0"


def test_legacy_format_and_output_still_work(tree: Path) -> None:
    code, output = check("--format", "json", "--output", "out.json", "tensorrt_llm")
    assert (code, output) == (1, "")
    assert len(json.loads((tree / "out.json").read_text())["findings"]) == 5


def test_full_shows_snippet_and_fix_diff(tree: Path) -> None:
    output = render("full")
    block = output.split("\n\n")[1]
    assert block.splitlines() == [
        f'{FMT}:11:46: DL104 encoder "vision": "trtllm" is not a member of EncoderAttentionBackend '
        '(did you mean "TRTLLM"?)',
        "   |",
        "10 | class Tidy(MultimodalModelMixin, nn.Module):",
        '11 |     encoder_attention_backends = {"vision": ("trtllm",)}',
        "   |                                              ^^^^^^^^",
        "12 |",
        "   |",
        "  = in Tidy; DL104 invalid-declaration: docs/rules.md#dl104-invalid-declaration",
        '  = safe fix (--fix): Replace "trtllm" with "TRTLLM"',
        f"    --- a/{FMT}",
        f"    +++ b/{FMT}",
        "    @@ -10,3 +10,3 @@",
        "     class Tidy(MultimodalModelMixin, nn.Module):",
        '    -    encoder_attention_backends = {"vision": ("trtllm",)}',
        '    +    encoder_attention_backends = {"vision": ("TRTLLM",)}',
        "     ",
    ]
    assert output.endswith(
        f"[*] 2 fixable with --fix; 1 more with --fix --unsafe-fixes.\nFound 5 findings in {checked()} files.\n"
    )


def test_text_keeps_its_first_release_shape(tree: Path) -> None:
    code, output = check("tensorrt_llm")
    assert code == 1
    assert output.splitlines() == [
        f'{FMT}:6:23: DL103 backend name "TRTLLM" retyped as a string literal; read it from the shared Literal '
        "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift",
        f'{FMT}:11:46: DL104 encoder "vision": "trtllm" is not a member of EncoderAttentionBackend '
        '(did you mean "TRTLLM"?)',
        f'{FMT}:16:7: DL102 multimodal model "Untidy" has no encoder_attention_backends declaration (own or '
        "inherited); declare its encoders: vision (registered modalities: image)",
        f"{FMT}:21:12: DL902 unused suppression: no DL103 finding here",
        f'{FMT}:23:42: DL103 backend name "VANILLA" retyped as a string literal; read it from the shared Literal '
        "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift",
        "[*] 2 fixable with --fix; 1 more with --fix --unsafe-fixes.",
        f"Found 5 findings in {checked()} files.",
    ]


def test_statistics_go_with_text_and_to_stderr_otherwise(tree: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--statistics", "--format", "json", "tensorrt_llm"])
    assert json.loads(result.stdout)["summary"]["findings"] == 5
    assert result.stderr.splitlines() == [
        "    1  DL102  missing-declaration",
        "    2  DL103  backend-literal",
        "    1  DL104  invalid-declaration",
        "    1  DL902  unused-suppression",
    ]


def test_docs_url_makes_links_absolute(tree: Path) -> None:
    url = "https://example.org/declint/docs/rules.md"
    document = json.loads(render("sarif", "--docs-url", url))
    assert document["runs"][0]["tool"]["driver"]["rules"][3]["helpUri"] == f"{url}#dl102-missing-declaration"
    assert (
        json.loads(render("rdjsonl", "--docs-url", url).splitlines()[0])["code"]["url"]
        == f"{url}#dl103-backend-literal"
    )


def _help_uris(document: dict[str, Any]) -> list[str]:
    return [rule["helpUri"] for run in document["runs"] for rule in run["tool"]["driver"]["rules"] if "helpUri" in rule]


@pytest.mark.parametrize(
    ("args", "count"), [((), 0), (("--docs-url", "https://example.org/declint/docs/rules.md"), 14)]
)
def test_every_sarif_help_uri_is_absolute(tree: Path, args: tuple[str, ...], count: int) -> None:
    """SARIF 2.1.0 declares helpUri `"format": "uri"`: an absolute URI, or none at all."""
    document = json.loads(render("sarif", *args))
    uris = _help_uris(document)
    assert len(uris) == count
    for uri in uris:
        parts = urllib.parse.urlsplit(uri)
        assert parts.scheme and parts.netloc, uri
    # jsonschema checks "format": "uri" only with rfc3987 installed, so the test above does it.
    jsonschema.Draft4Validator(load_schema("sarif-schema-2.1.0.json")).validate(document)
    # The help's Markdown links only to an absolute URL too (a relative link is broken in a viewer).
    links = [
        target
        for rule in document["runs"][0]["tool"]["driver"]["rules"]
        for target in re.findall(r"\]\(([^)]*)\)", rule["help"]["markdown"])
    ]
    assert len(links) == count and all(urllib.parse.urlsplit(link).scheme for link in links), links


@pytest.mark.parametrize("url", ["docs/rules.md", "example.org/docs/rules.md", "C:/declint/docs/rules.md"])
def test_a_docs_url_without_a_scheme_is_a_usage_error(tree: Path, url: str) -> None:
    assert check("--format", "sarif", "--docs-url", url, ".") == (
        2,
        f"declint: error: --docs-url must be an absolute URL with a scheme, such as https://host/docs/rules.md, "
        f'got "{url}"\n',
    )


@pytest.mark.parametrize("fmt", ["sarif", "rdjson", "github", "gitlab", "junit", "full", "jsonl"])
def test_every_format_is_identical_across_hash_seeds(tree: Path, fmt: str) -> None:
    outputs = set()
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env.pop("GITHUB_STEP_SUMMARY", None)
        done = subprocess.run(
            [sys.executable, "-m", "declint", "check", "--output-format", fmt, "tensorrt_llm"],
            cwd=tree,
            capture_output=True,
            env=env,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_report_sources_are_split_into_lines_once_per_file(tmp_path: Path) -> None:
    """Every finding's fingerprint and snippet asks for its file's lines: splitting the text again
    for each made a file with 20,000 findings take 42 s instead of 4 s."""
    from declint.reporting.sources import SourceCache

    (tmp_path / "m.py").write_text("a = 1\r\nb = 2\rc = 3\n", encoding="utf-8")
    sources = SourceCache(tmp_path)
    first = sources.lines("m.py")
    assert first == ["a = 1", "b = 2", "c = 3"]
    assert sources.lines("m.py") is first
    assert sources.line("m.py", 2) == "b = 2" and sources.line("m.py", 4) is None
    assert sources.lines("missing.py") == []


# What GitHub's runner acts on (actions/runner ActionCommandManager.TryProcessCommand): its
# command extensions plus stop-commands, then a stop token while commands are stopped.
RUNNER_COMMANDS = frozenset(
    {
        *("set-env", "set-output", "save-state", "add-mask", "add-path", "add-matcher", "remove-matcher"),
        *("debug", "warning", "error", "notice", "group", "endgroup", "echo", "stop-commands"),
    }
)


def _runner_command(line: str, registered: frozenset[str]) -> tuple[str, str] | None:
    """(command, text after its name) as ActionCommand.TryParseV2, then the legacy TryParse,
    read `line`: `::name ...::data` once leading whitespace is trimmed, or `##[name ...]` anywhere."""
    body = line.lstrip()
    if body.startswith("::") and (end := body.find("::", 2)) >= 0:
        name, _, rest = body[2:end].partition(" ")
        if name in registered:
            return name, rest + "::" + body[end + 2 :]
    start = line.find("##[")
    if start >= 0 and (end := line.find("]", start)) >= 0:
        name, _, rest = line[start + 3 : end].partition(" ")
        if name in registered:
            return name, rest + "]" + line[end + 1 :]
    return None


def runner_commands(output: str) -> list[tuple[str, str]]:
    """The workflow commands GitHub's runner would take from `output`, line by line."""
    taken: list[tuple[str, str]] = []
    token = None
    for line in re.split(r"\r\n|\r|\n", output):
        command = _runner_command(line, RUNNER_COMMANDS | ({token} if token else set()))
        if command is None or (token is not None and command[0] != token):
            continue
        taken.append(command)
        if command[0] == "stop-commands":
            token = command[1].partition("::")[2]
        elif command[0] == token:
            token = None
    return taken


FORGED = MODEL + "modeling_a\n::warning file=README.md,line=1::forged.py"
LEGACY = MODEL + "modeling_##[error]x.py"
STOPPER = "::stop-commands::tok.py"
DL103_TRTLLM = (
    'DL103 backend name "TRTLLM" retyped as a string literal; read it from the shared Literal '
    "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
)


@pytest.fixture
def hostile(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> Path:
    """File names that are workflow commands: after a newline, at the start of a root-relative
    path, and in the legacy syntax the runner reads anywhere in a line; and a message quoting one."""
    declared = 'class M:\n    encoder_attention_backends = {"vision": ("##[error]forged",)}\n'
    root = make_tree({FORGED: CONFIG, LEGACY: CONFIG, STOPPER: CONFIG, MODEL + "modeling_msg.py": declared})
    monkeypatch.chdir(root)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return root


def test_github_log_lines_cannot_be_read_as_workflow_commands(hostile: Path) -> None:
    code, output = check("--output-format", "github", "--select", "DL103,DL104", MODEL, STOPPER)
    assert code == 1, output
    assert [name for name, _ in runner_commands(output)] == ["error"] * 4 + ["group", "endgroup"]
    annotated = [rest.partition(",")[0] for name, rest in runner_commands(output) if name == "error"]
    assert annotated == [
        "file=%3A%3Astop-commands%3A%3Atok.py",
        f"file={LEGACY}",
        f"file={MODEL}modeling_a%0A%3A%3Awarning file=README.md%2Cline=1%3A%3Aforged.py",
        f"file={MODEL}modeling_msg.py",
    ]
    lines = output.splitlines()
    group = lines[lines.index("::group::declint: 4 findings") + 1 : lines.index("::endgroup::")]
    assert group[:3] == [
        f"%3A:stop-commands::tok.py:2:35: {DL103_TRTLLM}",
        f"{MODEL}modeling_##%5Berror]x.py:2:35: {DL103_TRTLLM}",
        f"{MODEL}modeling_a\\n::warning file=README.md,line=1::forged.py:2:35: {DL103_TRTLLM}",
    ]
    assert group[3].startswith(f'{MODEL}modeling_msg.py:2:46: DL104 encoder "vision": "##%5Berror]forged" is not')
    assert len(group) == 4 and lines[-1].startswith("Found 4 findings in ")


def test_github_summary_line_cannot_be_read_as_a_workflow_command(tree: Path) -> None:
    """The summary names the baseline file, which the configuration or the command line gives."""
    name = "base\n::stop-commands::x.json"
    written = CliRunner().invoke(cli, ["baseline", "write", name, "tensorrt_llm"])
    assert written.exit_code == 0, written.output
    code, output = check("--output-format", "github", "--baseline", name, "tensorrt_llm")
    assert code == 0, output
    assert runner_commands(output) == []
    assert output.splitlines()[-1] == (
        f"All clear: {checked()} files checked (5 more in the baseline base\\n::stop-commands::x.json)."
    )


@pytest.mark.parametrize(
    ("line", "written"),
    [
        ("::warning::x", "%3A:warning::x"),
        ("  ::error::x", "  %3A:error::x"),
        ("a ##[warning]b ##[error]c", "a ##%5Bwarning]b ##%5Berror]c"),
        ("a\n::warning::b", "a\\n::warning::b"),
        ("\u2003::warning::b", "\\u2003::warning::b"),
        ("tensorrt_llm/a.py:1:1: DL103 text :: more", "tensorrt_llm/a.py:1:1: DL103 text :: more"),
        (": one colon", ": one colon"),
        ("# ##", "# ##"),
    ],
)
def test_github_log_text_escapes_only_what_the_runner_would_read(line: str, written: str) -> None:
    assert log_text(line) == written
    assert runner_commands(written) == []


def test_line_formats_escape_control_characters_in_file_names(hostile: Path) -> None:
    forged = f"{MODEL}modeling_a\\n::warning file=README.md,line=1::forged.py"
    code, output = check("--select", "DL103", MODEL)
    assert code == 1
    assert f"{forged}:2:35: {DL103_TRTLLM}" in output.splitlines()
    full = render("full", "--select", "DL103")
    assert f"{forged}:2:35: {DL103_TRTLLM}" in full.splitlines()
    assert "forged.py:2:35" not in full.replace(forged, "")  # the name is never split over two lines
    listed = CliRunner().invoke(cli, ["check", "--show-files", MODEL]).stdout.splitlines()
    assert forged in listed and "::warning file=README.md,line=1::forged.py" not in listed


def test_junit_is_well_formed_xml_whatever_the_file_names(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    odd = MODEL + "modeling_\x01\x1b[31m\ufffe.py"
    monkeypatch.chdir(make_tree({odd: CONFIG, FORGED: CONFIG}))
    output = render("junit", "--select", "DL103")
    root = ET.fromstring(output)  # raised "not well-formed (invalid token)" on the \x01
    suites = [suite.attrib["name"] for suite in root.iter("testsuite")]
    assert suites == [
        f"{MODEL}modeling_\\x01\\x1b[31m\\ufffe.py",
        f"{MODEL}modeling_a\\n::warning file=README.md,line=1::forged.py",
    ]
    cases = list(root.iter("testcase"))
    assert [(case.attrib["classname"], case.attrib["file"]) for case in cases] == [(name, name) for name in suites]
    failure = cases[0].find("failure")
    assert failure is not None and failure.text == f"{suites[0]}:2:35: {DL103_TRTLLM}\nin is_trtllm"


def test_full_shows_control_characters_of_the_source_escaped_with_the_carets_under_their_text(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An ANSI "erase line" and a form feed before the span, a tab inside it: printed raw, the
    # escape would rewrite the reader's terminal line; escaped, it moves the carets along.
    source = 'class M:\n    encoder_attention_backends = {"\x1b[2K": 1, "vision":\x0c ("trtllm",\t)}\n'
    root = make_tree({MODEL + "modeling_esc.py": source})
    monkeypatch.chdir(root)
    output = render("full", "--select", "DL104")
    blocks = output.split("\n\n")
    assert "expected a tuple of backend names" in blocks[1]  # the unknown key's entry, `1`, is checked too
    key, value = (block.splitlines()[3:6] for block in (blocks[0], blocks[2]))
    shown = '2 |     encoder_attention_backends = {"\\x1b[2K": 1, "vision":\\x0c ("trtllm",    )}'
    assert key == [shown, "  |" + " " * (shown.index('"\\x1b') - 3) + "^" * 9, "  |"]  # the key, escaped
    assert value == [shown, "  |" + " " * (shown.index('"trtllm"') - 3) + "^" * 8, "  |"]
    assert "\x1b" not in output and "\x0c" not in output


@pytest.mark.parametrize("marker", ["empty directory", "broken link"])
def test_a_git_entry_git_would_pass_over_is_no_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str
) -> None:
    """Red-team case (2026-12-02): an empty `.git/` or a dangling `.git` link in a subdirectory
    of the real repository is not its root (git passes over both)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    project = repo / "sub" / "python"
    write_tree(project, {**PRELUDE, FMT: SOURCE})
    stray = repo / "sub" / ".git"
    stray.mkdir() if marker == "empty directory" else stray.symlink_to(tmp_path / "nowhere")
    monkeypatch.chdir(project)
    code, output = check("--output-format", "gitlab", ".")
    assert code == 1
    assert {issue["location"]["path"] for issue in json.loads(output)} == {f"sub/python/{FMT}"}


def test_a_fix_description_quoting_control_characters_is_escaped_in_every_format(
    make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red-team case (2026-12-02): the message was escaped, the fix's description (which quotes
    the string) was printed raw in `full` and GitHub annotations: a clear-screen on the terminal."""
    root = make_tree(
        {MODEL + "modeling_esc.py": 'class M:\n    encoder_attention_backends = {"vision": ("trtllm\x1b[2J",)}\n'}
    )
    monkeypatch.chdir(root)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    described = 'Replace "trtllm\\x1b[2J" with "TRTLLM"'
    for fmt in ("full", "github", "text"):
        output = render(fmt, "--select", "DL104")
        assert "\x1b" not in output, fmt
    assert described in render("full", "--select", "DL104")
    (finding,) = json.loads(render("json", "--select", "DL104"))["findings"]
    assert finding["fix"]["description"] == described


def test_carets_of_a_middle_line_reach_its_shown_trailing_controls() -> None:
    from declint.reporting.full_format import _carets

    # The second of three lines of a span: the carets run from its indent to its last character.
    assert _carets("    k,  # \x1f\x0b", 2, 1, 0, 3, 0) == "    " + "^" * len("k,  # \\x1f\\x0b")
