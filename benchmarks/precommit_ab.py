"""The pre-commit case of two (or more) installed versions of declint, alternating, with medians.

    python benchmarks/precommit_ab.py --rounds 7 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. On the 20k tree
with 30 models (made by `run.py`), every round runs each version once over the whole tree (so
that its cache and snapshot are the tree's as it is), then times it checking the first three
model files of the manifest by path, as `run.py`'s "pre-commit, 3 files, warm" case does.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path

WORK = Path(__file__).resolve().parent / ".work"
PYTHON = WORK / "declint-venv" / "bin" / "python"
TREE = WORK / "trees" / "20000-30models"
FILES = 3


def declint(installed: str, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [str(PYTHON), "-m", "declint", "check", *args],
        cwd=TREE,
        env={**os.environ, "PYTHONPATH": installed},
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    manifest = json.loads((TREE / "manifest.json").read_text(encoding="utf-8"))
    staged = sorted(manifest["expected"])[:FILES]
    seconds: dict[str, list[float]] = {installed: [] for installed in args.installed}
    for _ in range(args.rounds):
        for installed in args.installed:
            declint(installed, ".")
            seconds[installed].append(declint(installed, *staged))
    for installed, samples in seconds.items():
        shown = ", ".join(f"{sample:.3f}" for sample in samples)
        print(f"{installed}: pre-commit, {FILES} files, warm: median {statistics.median(samples):.3f} s ({shown})")


if __name__ == "__main__":
    main()
