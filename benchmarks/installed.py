"""A timed `declint check` of one installed version, for the A/B scripts run from this directory.

A version is a directory made by `pip install --no-deps --target DIR .`, run with the
benchmark's interpreter (`benchmarks/.work/declint-venv`) and DIR first on `PYTHONPATH`.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

WORK = Path(__file__).resolve().parent / ".work"
PYTHON = WORK / "declint-venv" / "bin" / "python"


def timed_check(installed: str, cwd: Path, *args: str) -> float:
    """Wall seconds of `declint check ARGS` in `cwd` (its output and exit status are not read)."""
    started = time.perf_counter()
    subprocess.run(
        [str(PYTHON), "-m", "declint", "check", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": installed},
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - started
