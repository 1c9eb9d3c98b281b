"""A timed `declint check` of one installed version, for the A/B scripts run from this directory.

A version is a directory made by `pip install --no-deps --target DIR .`, run with the
benchmark's interpreter (`benchmarks/.work/declint-venv`) and DIR first on `PYTHONPATH`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

WORK = Path(__file__).resolve().parent / ".work"
PYTHON = WORK / "declint-venv" / "bin" / "python"
TREES = WORK / "trees"  # the generated trees (`run.py`, `gen_tree.py`)


def completed(command: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
    """`command` run to its end, output captured; any exit status but 0 and 1 (findings, for
    declint and ruff) stops the benchmark: a crash must not be timed as a fast run."""
    done = subprocess.run(command, capture_output=True, check=False, **options)
    if done.returncode not in (0, 1):
        failure = done.stderr.decode(errors="replace")[-2000:]
        sys.exit(f"{' '.join(command[:4])} ... in {options.get('cwd', '.')}: exit {done.returncode}\n{failure}")
    return done


def read_sources(root: Path) -> None:
    """Read every Python file under `root`, so that the timed run finds them in the page cache
    (the machine of 2026-12-05 dropped it within minutes: the 20k tree with 30 models read at
    109 us a file after a pause, 12 us right after; a cold run would time the disk)."""
    for path in sorted(root.rglob("*.py")):
        path.read_bytes()


def median_of(samples: list[float]) -> str:
    """ "median M s (every sample)", as the A/B scripts print a case."""
    shown = ", ".join(f"{sample:.3f}" for sample in samples)
    return f"median {statistics.median(samples):.3f} s ({shown})"


def timed_check(installed: str, cwd: Path, *args: str) -> float:
    """Wall seconds of `declint check ARGS` in `cwd` (its output is not read; see `completed`)."""
    return timed_report(installed, cwd, *args)[0]


def timed_report(installed: str, cwd: Path, *args: str) -> tuple[float, bytes]:
    """(wall seconds, stdout) of `declint check ARGS` in `cwd`: A/B scripts compare the reports."""
    environment = {**os.environ, "PYTHONPATH": installed}
    started = time.perf_counter()
    done = completed([str(PYTHON), "-m", "declint", "check", *args], cwd=cwd, env=environment)
    return time.perf_counter() - started, done.stdout


def tree_ab_parser(doc: str | None, rounds: int, tree: str) -> argparse.ArgumentParser:
    """The arguments every A/B script over a generated tree takes: the installed versions,
    `--rounds` and `--tree` (a directory of `benchmarks/.work/trees`)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--tree", default=tree, help="a directory of benchmarks/.work/trees")
    return parser
