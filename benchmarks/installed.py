"""A timed `declint check` of one installed version, for the A/B scripts run from this directory.

A version is a directory made by `pip install --no-deps --target DIR .`, run with the
benchmark's interpreter (`benchmarks/.work/declint-venv`) and DIR first on `PYTHONPATH`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

WORK = Path(__file__).resolve().parent / ".work"
PYTHON = WORK / "declint-venv" / "bin" / "python"


def timed_check(installed: str, cwd: Path, *args: str) -> float:
    """Wall seconds of `declint check ARGS` in `cwd` (its output is not read; a run that fails, any
    exit status but 0 and 1, stops the benchmark: a crash must not be timed as a fast run)."""
    started = time.perf_counter()
    done = subprocess.run(
        [str(PYTHON), "-m", "declint", "check", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": installed},
        capture_output=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        failure = done.stderr.decode(errors="replace")[-2000:]
        sys.exit(f"declint check {' '.join(args)} ({installed}, in {cwd}): exit {done.returncode}\n{failure}")
    return elapsed
