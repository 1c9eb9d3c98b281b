"""The demo tree reports exactly its `# expect:` annotations; its fixed copy reports nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import DEMO, REPO, copy_project

FIXES = REPO / "tests" / "fixtures" / "demo_fixes"
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>DL\d{3}(?:\s*,\s*DL\d{3})*)\s*$")


def expectations(root: Path) -> set[tuple[str, int, str]]:
    """`# expect:` comments in Python files, plus the sidecar list for Markdown and JSON files."""
    expected = set()
    sidecar = root / "expected-findings.txt"
    if sidecar.exists():
        for line in sidecar.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                path, number, code = (part.strip() for part in line.split(":"))
                expected.add((path, int(number), code))
    for path in sorted(root.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            match = EXPECT.search(line)
            if match:
                for code in match.group("codes").split(","):
                    expected.add((path.relative_to(root).as_posix(), number, code.strip()))
    return expected


def findings(*args: str) -> tuple[int, set[tuple[str, int, str]]]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", *args])
    document = json.loads(result.output)
    return result.exit_code, {(f["path"], f["line"], f["code"]) for f in document["findings"]}


def test_demo_reports_exactly_the_expectations() -> None:
    expected = expectations(DEMO)
    assert len(expected) == 23
    code, found = findings(str(DEMO))
    assert found == expected
    assert code == 1


def test_demo_covers_every_rule_of_the_foundation() -> None:
    assert {code for _, _, code in expectations(DEMO)} == {
        "DL101",
        "DL102",
        "DL103",
        "DL104",
        "DL105",
        "DL106",
        "DL107",
        "DL108",
    }


def test_fixed_copy_is_clean(tmp_path: Path) -> None:
    copy = tmp_path / "demo"
    copy_project(DEMO, copy)
    files_with_expectations = {path for path, _, _ in expectations(DEMO)}
    fixes = {p.relative_to(FIXES).as_posix() for p in FIXES.rglob("*") if p.is_file()}
    assert fixes == files_with_expectations
    shutil.copytree(FIXES, copy, dirs_exist_ok=True)
    (copy / "expected-findings.txt").unlink()
    assert expectations(copy) == set()
    result = CliRunner().invoke(cli, ["check", str(copy)])
    assert (result.exit_code, result.output) == (0, "All clear: 37 files checked.\n")


def test_two_files_still_see_ancestors_in_other_files() -> None:
    """pre-commit passes only staged files; the index still covers the configured roots."""
    models = DEMO / "tensorrt_llm" / "_torch" / "models"
    code, found = findings(str(models / "modeling_hyperclovax.py"), str(models / "modeling_cosmos3.py"))
    found = {f for f in found if f[0].endswith(".py")}  # docs/schema drift is reported on every run
    # HCXVisionModel is multimodal only through LlavaNextModel (another file); Cosmos3 inherits
    # its declaration from Qwen3-VL (another file) and is clean.
    assert found == {("tensorrt_llm/_torch/models/modeling_hyperclovax.py", 31, "DL102")}
    assert code == 1


def test_installed_entry_point_on_the_demo_is_deterministic() -> None:
    outputs = set()
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        declint = shutil.which("declint", path=os.path.dirname(sys.executable)) or "declint"
        done = subprocess.run(
            [declint, "check", "examples/mini_trtllm"], cwd=REPO, env=env, capture_output=True, check=False
        )
        assert done.returncode == 1
        assert done.stdout.decode().splitlines()[-1] == "Found 24 findings in 37 files."
        outputs.add(done.stdout)
    assert len(outputs) == 1
