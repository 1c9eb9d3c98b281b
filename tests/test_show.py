"""`declint check --show-settings / --show-files`: what a run would use, printed without running it."""

from __future__ import annotations

import tomllib

from click.testing import CliRunner

from declint.cli import cli
from declint.config import OPTIONS
from tests.conftest import MakeTree

MODEL = "tensorrt_llm/_torch/models/"
PYPROJECT = (
    "[tool.declint]\n"
    'roots = ["tensorrt_llm"]\n'
    'exclude = ["scratch/"]\n'
    'per-path-ignores = { "tests/**" = ["DL101", "DL103"] }\n'
    'docs-table = "docs/\\"quoted\\" caf\\u00e9.md"\n'
    "jobs = 3\n"
)


def test_show_settings_prints_toml_that_reads_back_as_the_effective_configuration(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": PYPROJECT})
    result = CliRunner().invoke(cli, ["check", "--show-settings", str(root / "tensorrt_llm")])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"# configuration: {root / 'pyproject.toml'}", f"# project root: {root}"]
    assert 'per-path-ignores = { "tests/**" = ["DL101", "DL103"] }' in lines
    assert "jobs = 3" in lines and "respect-gitignore = true  # default" in lines
    written = {"roots", "exclude", "per-path-ignores", "docs-table", "jobs"}
    assert {line.split(" = ")[0] for line in lines[2:] if not line.endswith("  # default")} == written
    parsed = tomllib.loads(result.stdout)
    assert parsed["docs-table"] == 'docs/"quoted" café.md'
    expected = {spec.key: spec.default for spec in OPTIONS} | tomllib.loads(PYPROJECT)["tool"]["declint"]
    assert parsed == expected


def test_show_settings_without_a_configuration_says_so(make_tree: MakeTree) -> None:
    root = make_tree({})
    (root / "pyproject.toml").unlink()
    result = CliRunner().invoke(cli, ["check", "--show-settings", str(root / MODEL)])
    assert result.stdout.splitlines()[0] == "# configuration: none (defaults)"


def test_show_files_lists_the_files_a_check_would_check_and_why_others_are_skipped(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": PYPROJECT, MODEL + "modeling_a.py": "x = 1\n", "tensorrt_llm/scratch/b.py": ""})
    (root / MODEL / "modeling_link.py").symlink_to(root / MODEL / "missing.py")
    result = CliRunner().invoke(cli, ["check", "--show-files", str(root / MODEL)])
    assert result.exit_code == 0
    on_disk = sorted(p.relative_to(root).as_posix() for p in (root / MODEL).glob("*.py") if p.exists())
    assert result.stdout.splitlines() == on_disk
    assert f"{MODEL}modeling_a.py" in on_disk
    assert result.stderr == f"{MODEL}modeling_link.py: broken symlink or symlink loop; not followed\n"
    excluded = CliRunner().invoke(cli, ["check", "--show-files", str(root / "tensorrt_llm")])
    assert "tensorrt_llm/scratch/b.py" not in excluded.stdout.splitlines()
    assert f"{MODEL}modeling_a.py" in excluded.stdout.splitlines()


def test_show_files_of_a_stdin_filename_is_that_file_even_before_it_exists(make_tree: MakeTree) -> None:
    root = make_tree({})
    target = root / MODEL / "modeling_unsaved.py"
    result = CliRunner().invoke(cli, ["check", "--show-files", "--stdin-filename", str(target)])
    assert (result.exit_code, result.stdout) == (0, f"{MODEL}modeling_unsaved.py\n")


def test_a_declint_table_is_recognised_as_toml_reads_it_and_another_tools_is_not(make_tree: MakeTree) -> None:
    """Quoted or spaced table names and a dotted key under [tool] are declint's table; a
    [tool.declint-plugin] table is not (the parent's configuration applies); a pyproject.toml
    that does not parse is still claimed when its header names [tool.declint]."""
    root = make_tree({})
    for header in ('[tool."declint"]\njobs = 3\n', "[tool . declint]\njobs = 3\n", "[tool]\ndeclint = { jobs = 3 }\n"):
        (root / "pyproject.toml").write_text(header, encoding="utf-8")
        shown = CliRunner().invoke(cli, ["check", "--show-settings", str(root / MODEL)]).stdout.splitlines()
        assert (shown[0], "jobs = 3" in shown) == (f"# configuration: {root / 'pyproject.toml'}", True), header
    sub = root / "plugin"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.declint-plugin]\nname = "x"\n', encoding="utf-8")
    shown = CliRunner().invoke(cli, ["check", "--show-settings", str(sub)]).stdout.splitlines()
    assert shown[0] == f"# configuration: {root / 'pyproject.toml'}"
    (sub / "pyproject.toml").write_text("[tool.declint]\njobs = = 3\n", encoding="utf-8")
    broken = CliRunner().invoke(cli, ["check", "--show-settings", str(sub)])
    assert broken.exit_code == 2
    assert f"{sub / 'pyproject.toml'}" in broken.output and "invalid TOML" in broken.output
