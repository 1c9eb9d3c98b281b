"""A module added to a warm tree, then removed: two (or more) installed versions, alternating.

    cd benchmarks && .work/declint-venv/bin/python added_ab.py --rounds 5 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `touch_ab.py`. Each
version checks its own copy of a generated tree (`--tree`, default the 20k-file one), made warm
once: versions sharing a tree would each find the other's walk file, and the start-up child
would stat nothing for them. Every round, for each version: a module without a needle
(`MODULE`) is written, and after the racy window (as a file saved a moment before the run)
declint runs ("added": its directory's entries changed, so the tree is walked again), runs again
("warm"), then the module is removed and, after the racy window, declint runs ("removed").
Every version must print the same report after the module is added; prints each case's medians.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from installed import WORK, median_of, read_sources, timed_report, tree_ab_parser

MODULE = Path("tensorrt_llm/_torch/models/modeling_added.py")
RACY_WINDOW = 2.1  # declint trusts a stat older than 2 s (`cache._RACY_SECONDS`)


def run(installed: str, tree: Path) -> tuple[float, bytes]:
    return timed_report(installed, tree, ".")


def prepared(installed: str, label: str, number: int) -> Path:
    """A copy of the generated tree `label` for `installed` (the `number`th version), its cache warm."""
    tree = Path("/tmp") / f"added-ab-{label}-{number}"
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["cp", "-a", str(WORK / "trees" / label), str(tree)], check=True)
    shutil.rmtree(tree / ".declint_cache", ignore_errors=True)
    run(installed, tree)
    time.sleep(RACY_WINDOW)
    run(installed, tree)
    return tree


def one_round(installed: str, tree: Path) -> tuple[float, float, float, bytes]:
    read_sources(tree)
    (tree / MODULE).write_text("VALUE = 1\n", encoding="utf-8")
    time.sleep(RACY_WINDOW)
    added, report = run(installed, tree)
    warm, _ = run(installed, tree)
    (tree / MODULE).unlink()
    time.sleep(RACY_WINDOW)
    removed, _ = run(installed, tree)
    time.sleep(RACY_WINDOW)
    return added, warm, removed, report


def main() -> None:
    parser = tree_ab_parser(__doc__, rounds=5, tree="20000")
    args = parser.parse_args()
    trees = {installed: prepared(installed, args.tree, number) for number, installed in enumerate(args.installed)}
    samples: dict[str, list[tuple[float, float, float]]] = {name: [] for name in args.installed}
    reports: set[bytes] = set()
    for _ in range(args.rounds):
        for installed in args.installed:
            added, warm, removed, report = one_round(installed, trees[installed])
            samples[installed].append((added, warm, removed))
            reports.add(report)
    if len(reports) != 1:
        raise SystemExit("the versions printed different reports after the module was added")
    for installed, rows in samples.items():
        print(installed)
        for position, case in enumerate(("added", "warm", "removed")):
            print(f"  {case}: {median_of([row[position] for row in rows])}")
    for tree in trees.values():
        shutil.rmtree(tree, ignore_errors=True)


if __name__ == "__main__":
    main()
