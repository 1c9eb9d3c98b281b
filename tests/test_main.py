"""The console script (`declint.__main__`): it ends with `os._exit` once its output is flushed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from declint import engine
from declint.__main__ import _leave
from declint.cache import NO_CACHE_ENV
from declint.cli import cli


def _script(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, NO_CACHE_ENV: "1"}
    return subprocess.run([sys.executable, "-m", "declint", *args], cwd=cwd, env=env, capture_output=True, check=False)


def test_a_large_report_through_a_pipe_is_whole_and_the_exit_code_kept(demo: Path) -> None:
    """The JSON report of the demo tree (larger than stdout's 8 KiB buffer, whose last part only
    the final flush writes) is the in-process run's, and the exit status the findings' 1:
    nothing is lost to `os._exit`."""
    done = _script("check", "--output-format", "json", ".", cwd=demo)
    in_process = CliRunner().invoke(cli, ["check", "--no-cache", "--output-format", "json", str(demo)])
    assert in_process.exit_code == 1
    assert done.returncode == 1
    assert len(done.stdout) > 8192
    assert done.stdout.decode() == in_process.stdout.replace(str(demo) + os.sep, "")
    assert done.stderr == b""


def test_a_clean_run_exits_0_and_a_usage_error_2(demo: Path) -> None:
    clean = _script("check", "--select", "DL100", ".", cwd=demo)
    assert (clean.returncode, clean.stdout.decode()) == (0, "All clear: 37 files checked.\n")
    wrong = _script("check", "no/such/path", cwd=demo)
    assert wrong.returncode == 2
    assert wrong.stderr.decode() == "declint: error: path does not exist: no/such/path\n"


def test_runs_in_a_library_callers_process_are_not_retained() -> None:
    """Only the console script keeps each run's state until its `os._exit`."""
    assert engine.RETAINED is None


def test_a_message_given_as_the_exit_code_is_left_to_python() -> None:
    """`sys.exit("text")` prints the text and exits 1: `_leave` lets Python do it (no `os._exit`)."""
    with pytest.raises(SystemExit) as raised:
        _leave(SystemExit("declint: out of luck"))
    assert raised.value.code == "declint: out of luck"


def test_the_console_script_keeps_only_the_last_runs_state(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --fix` runs the engine again on fixed texts: an earlier run's state is freed when
    the next one replaces it, so what is kept never grows with the number of runs."""
    from tests.test_cache import engine as make_engine

    monkeypatch.setattr(engine, "RETAINED", [])
    make_engine(demo, cache=False).run([demo])
    assert engine.RETAINED is not None and len(engine.RETAINED) == 1
    first = engine.RETAINED[0]
    make_engine(demo, cache=False).run([demo])
    assert len(engine.RETAINED) == 1 and engine.RETAINED[0] is not first
    assert type(first).__name__ == "_Run"


@pytest.mark.parametrize("command", [["check"], ["baseline", "write"], ["index", "show"], ["table"]])
def test_every_command_that_reads_a_config_file_says_what_config_takes(command: list[str]) -> None:
    shown = CliRunner().invoke(cli, [*command, "--help"], terminal_width=200)
    assert shown.exit_code == 0
    assert "--config PATH" in shown.stdout
    assert "A pyproject.toml ([tool.declint]) or a declint.toml (keys at top level)." in shown.stdout
