"""`declint check --show-settings / --show-files`: what a run would use, printed without running it."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.config import OPTIONS, Config
from declint.show import settings_text
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


def test_show_settings_shows_what_the_command_line_sets(make_tree: MakeTree) -> None:
    """--select, --ignore and --jobs are the check's settings too: --select starts a selection of
    its own, --ignore adds to the configuration's, and an unknown code is refused as the check
    refuses it. They printed the configuration's values."""
    root = make_tree({"pyproject.toml": PYPROJECT.replace("jobs = 3\n", 'select = ["DL1"]\nignore = ["DL103"]\n')})

    def shown(*args: str) -> tuple[int, list[str]]:
        result = CliRunner().invoke(cli, ["check", "--show-settings", *args, str(root / "tensorrt_llm")])
        keys = ("select", "ignore", "jobs")
        return result.exit_code, [line for line in result.output.splitlines() if line.split(" = ")[0] in keys]

    assert shown() == (0, ['select = ["DL1"]', 'ignore = ["DL103"]', "jobs = 0  # default"])
    assert shown("--select", "DL101,DL9", "-j", "2") == (
        0,
        ['select = ["DL101", "DL9"]  # command line', "ignore = []  # command line", "jobs = 2  # command line"],
    )
    assert shown("--ignore", "DL9") == (
        0,
        ['select = ["DL1"]', 'ignore = ["DL103", "DL9"]  # command line', "jobs = 0  # default"],
    )
    code, _ = shown("--select", "DL999")
    assert code == 2


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


HOSTILE_STRINGS = [
    "a\x7fb",
    "tab\there",
    'nl\nquote"back\\slash',
    "\x00\x1b[31m",
    "\u2028\U000e0001",
    "caf\u00e9 \U0001f600",
]


def test_show_settings_prints_valid_toml_for_every_value(make_tree: MakeTree) -> None:
    """DEL (0x7F) was written raw, which TOML forbids in a string; a float was written as JSON
    spells it (`Infinity`), which is no TOML value."""
    root = make_tree({})
    config_text = (
        "[tool.declint]\n"
        'roots = ["tensorrt_llm"]\n'
        'exclude = ["a\\u007fb", "tab\\there", "nl\\nquote\\"back\\\\slash", "\\u0000\\u001b[31m", '
        '"\\u2028\\U000e0001", "caf\u00e9 \U0001f600"]\n'
        'per-path-ignores = { "a\\u007f/**" = ["DL101"] }\n'
        "file-timeout = 0.5\n"
    )
    (root / "pyproject.toml").write_text(config_text, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "--show-settings", str(root / MODEL)])
    assert result.exit_code == 0, result.output
    assert 'exclude = ["a\\u007Fb", "tab\\there", "nl\\nquote\\"back\\\\slash", "\\u0000\\u001B[31m", ' in result.stdout
    parsed = tomllib.loads(result.stdout)
    assert parsed["exclude"] == HOSTILE_STRINGS
    assert parsed["per-path-ignores"] == {"a\x7f/**": ["DL101"]}
    assert parsed["file-timeout"] == 0.5


@pytest.mark.parametrize(
    ("value", "written"),
    [(math.inf, "inf"), (-math.inf, "-inf"), (1e16, "1e+16"), (1e-05, "1e-05"), (3.0, "3.0"), (60, "60")],
)
def test_show_settings_writes_numbers_as_toml_spells_them(value: float, written: str) -> None:
    text = settings_text(Config(root=Path("/project"), source=None, values={"file-timeout": value}))
    assert f"file-timeout = {written}" in text.splitlines()
    assert tomllib.loads(text)["file-timeout"] == value


def test_show_settings_nan_reads_back_as_nan() -> None:
    text = settings_text(Config(root=Path("/project"), source=None, values={"file-timeout": math.nan}))
    assert "file-timeout = nan" in text.splitlines() and math.isnan(tomllib.loads(text)["file-timeout"])


def test_show_settings_comments_hold_no_control_characters() -> None:
    """The project root is written in a comment line: a newline there began a line of garbage."""
    root = Path("/tmp/odd\n= project\x7f")
    text = settings_text(Config(root=root, source=root / "pyproject.toml", values={}))
    assert text.splitlines()[:2] == [
        "# configuration: /tmp/odd\\n= project\\x7f/pyproject.toml",
        "# project root: /tmp/odd\\n= project\\x7f",
    ]
    assert tomllib.loads(text)["roots"] == ["."]
