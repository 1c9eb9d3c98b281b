"""Golden files: every output format on the demo tree, byte for byte, from one run that writes
them all (`--output-format FMT:FILE` repeated, with `--include-suppressed`).

Regenerate only on purpose, after checking the difference is wanted:
    DECLINT_REGEN_GOLDEN=1 pytest tests/test_formats_golden.py
The run is on a copy of the demo outside any git repository, so that paths read from the
repository root (github, gitlab, junit) do not depend on where declint is checked out. The
absolute project root (in SARIF's originalUriBaseIds) is written as file:///DEMO_ROOT.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.reporting import RENDERERS
from tests.conftest import DEMO, REPO, SHARED_DATA, copy_project

GOLDEN = REPO / "tests" / "golden"
REGENERATE = os.environ.get("DECLINT_REGEN_GOLDEN") == "1"
ROOT_PLACEHOLDER = "file:///DEMO_ROOT"
NAMES = {
    "text": "demo.txt",
    "full": "demo.full.txt",
    "json": "demo.json",
    "jsonl": "demo.jsonl",
    "sarif": "demo.sarif",
    "github": "demo.github.txt",
    "rdjson": "demo.rdjson",
    "rdjsonl": "demo.rdjsonl",
    "gitlab": "demo.gitlab.json",
    "junit": "demo.junit.xml",
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    directory = tmp_path_factory.mktemp("golden")
    demo = tmp_path_factory.mktemp("golden-demo") / "demo"
    copy_project(DEMO, demo)
    args = ["check", "--include-suppressed"]
    for fmt, name in NAMES.items():
        args += ["--output-format", f"{fmt}:{directory / name}"]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(demo)
        patch.delenv("GITHUB_STEP_SUMMARY", raising=False)
        result = CliRunner().invoke(cli, [*args, "."])
    assert (result.exit_code, result.output) == (1, "")
    yield {
        fmt: (directory / name).read_bytes().decode("utf-8").replace(demo.resolve().as_uri(), ROOT_PLACEHOLDER)
        for fmt, name in NAMES.items()
    }


@pytest.mark.parametrize("fmt", sorted(NAMES))
def test_golden(fmt: str, outputs: dict[str, str]) -> None:
    path: Path = GOLDEN / NAMES[fmt]
    if REGENERATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(outputs[fmt].encode("utf-8"))
    expected = path.read_bytes().decode("utf-8") if path.exists() else None
    assert outputs[fmt] == expected, (
        f"{path} differs; if the change is wanted: DECLINT_REGEN_GOLDEN=1 pytest {__file__}"
    )


def test_every_format_has_a_golden_file() -> None:
    assert set(NAMES) == set(RENDERERS)


def test_demo_reports_validate_against_their_schemas(outputs: dict[str, str]) -> None:
    sarif_schema = json.loads((SHARED_DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(sarif_schema).validate(json.loads(outputs["sarif"]))
    rdjson = SHARED_DATA / "rdjson-schema"
    result_schema = json.loads((rdjson / "DiagnosticResult.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(result_schema).validate(json.loads(outputs["rdjson"]))
    line_validator = jsonschema.Draft4Validator(json.loads((rdjson / "Diagnostic.json").read_text(encoding="utf-8")))
    lines = outputs["rdjsonl"].splitlines()
    assert len(lines) == len(json.loads(outputs["json"])["findings"])
    for line in lines:
        line_validator.validate(json.loads(line))
