"""Cold runs of two (or more) installed versions of declint, alternating, with medians.

    git worktree add /tmp/base <commit> && pip install --no-deps --target /tmp/ab-base /tmp/base
    pip install --no-deps --target /tmp/ab-head .
    python benchmarks/ab.py --rounds 9 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --target` of declint (its dependencies come from the
interpreter's environment: `benchmarks/.work/declint-venv`, made by `run.py`). Every round runs
each version once on each case, cache removed first, so that both see the machine at the same
moments. The cases are the trees and the corpus `run.py` prepared: the 1k tree and the 20k tree
with 30 models (their difference is the cost of files that cannot match, per 10k of them) and
the transformers sources. Prints the medians, and whether each case's output is the same for the
first and the last version.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from pathlib import Path

from installed import completed, read_sources

WORK = Path(__file__).resolve().parent / ".work"
PYTHON = WORK / "declint-venv" / "bin" / "python"
CASES = {
    "1000": (WORK / "trees" / "1000", "."),
    "20000-30models": (WORK / "trees" / "20000-30models", "."),
    "transformers": (WORK / "transformers", "transformers"),
}
EXTRA_FILES = 19_000  # the 20k tree with 30 models has 19,000 more files than the 1k tree, none can match


def cold_run(installed: str, case: str) -> tuple[float, bytes]:
    cwd, argument = CASES[case]
    shutil.rmtree(cwd / ".declint_cache", ignore_errors=True)
    read_sources(cwd)
    started = time.perf_counter()
    done = completed(
        [str(PYTHON), "-m", "declint", "check", argument], cwd=cwd, env={**os.environ, "PYTHONPATH": installed}
    )
    return time.perf_counter() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    seconds: dict[tuple[str, str], list[float]] = {}
    outputs: dict[tuple[str, str], bytes] = {}
    for _ in range(args.rounds):
        for installed in args.installed:
            for case in CASES:
                wall, output = cold_run(installed, case)
                seconds.setdefault((installed, case), []).append(wall)
                outputs.setdefault((installed, case), output)
    for installed in args.installed:
        medians = {case: statistics.median(seconds[(installed, case)]) for case in CASES}
        per_10k = (medians["20000-30models"] - medians["1000"]) / EXTRA_FILES * 10_000
        shown = ", ".join(f"{case} {value:.3f} s" for case, value in medians.items())
        print(f"{installed}: {shown}; per 10k files that cannot match {per_10k:.3f} s")
    first, last = args.installed[0], args.installed[-1]
    for case in CASES:
        same = outputs[(first, case)] == outputs[(last, case)]
        print(f"{case}: {'same output' if same else 'DIFFERENT output'}")


if __name__ == "__main__":
    main()
