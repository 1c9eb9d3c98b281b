"""Cold runs of installed versions of declint beside semgrep and ruff, alternating, with ratios.

    python benchmarks/peer_ab.py --rounds 5 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. Every round runs,
on the transformers sources `run.py` unpacked, each version cold (cache removed first), then
semgrep and ruff with `run.py`'s rule and flags: the ratio to semgrep of issue 5's first target,
measured at the same moments of a machine whose speed drifts. Needs `run.py`'s tools
environment (`benchmarks/.work/tools`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from installed import completed

WORK = Path(__file__).resolve().parent / ".work"
CORPUS = WORK / "transformers"
TOOLS = WORK / "tools" / "bin"
SEMGREP = [str(TOOLS / "semgrep"), "scan", "--metrics=off", "--disable-version-check", "--no-git-ignore", "-q"]
SEMGREP += ["-j", "2", "--config", str(WORK / "semgrep.yml"), "transformers"]
RUFF = [str(TOOLS / "ruff"), "check", "--no-cache", "--config", str(WORK / "ruff.toml"), "transformers"]


def timed(command: list[str], env: dict[str, str] | None = None, before: Callable[[], None] | None = None) -> float:
    if before is not None:
        before()
    started = time.perf_counter()
    completed(command, cwd=CORPUS, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    declint = [str(WORK / "declint-venv" / "bin" / "python"), "-m", "declint", "check", "transformers"]
    samples: dict[str, list[float]] = {}

    def clear() -> None:
        shutil.rmtree(CORPUS / ".declint_cache", ignore_errors=True)

    for _ in range(args.rounds):
        for installed in args.installed:
            env = {**os.environ, "PYTHONPATH": installed}
            samples.setdefault(installed, []).append(timed(declint, env, clear))
        samples.setdefault("semgrep -j 2", []).append(timed(SEMGREP))
        samples.setdefault("ruff --no-cache", []).append(timed(RUFF))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name, values in samples.items():
        print(f"{name}: median {medians[name]:.3f} s ({', '.join(f'{value:.2f}' for value in values)})")
    for installed in args.installed:
        print(f"{installed}: cold {medians[installed] / medians['semgrep -j 2']:.3f} x semgrep")


if __name__ == "__main__":
    main()
