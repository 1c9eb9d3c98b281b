"""The least a Python linter can spend on a file that cannot match: declint's per-file cost in context.

    python benchmarks/floor.py [--rounds N]

Times, on two generated trees that hold the same 30 model files (`benchmarks/.work/trees/1000`
and `.../20000-30models`, made by `benchmarks/run.py --part trees`), fresh interpreters running:

- `walk`: list every directory (`os.scandir`, entries sorted), collect the `.py` files;
- `walk + read`: the same, and worker processes (one per core, forked, paths sent in batches of
  256, one count back per batch) read every file (`os.open`, one `os.read`);
- `walk + read + search`: the same, and each worker lower-cases the bytes and searches them for
  the gates of declint's own prefilter (`NeedleSet.groups` of the default configuration);
- `declint`: `python -m declint check .`, cold (its cache directory removed first).

Each case runs once per round, alternating with the others; medians over the rounds. The cost of
a file that cannot match is the difference between the two trees, divided by the 19,000 files
that differ, as in the issue's target (less than 0.3 s per 10k such files, 30 us a file). The
first three cases are a floor no design can go under in Python with these needles: none keeps a
record of a file, hashes it, caches it, or looks at its class statements.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREES = HERE / ".work" / "trees"
SMALL, LARGE = "1000", "20000-30models"

# Run in a fresh interpreter per case (as the CLI is): argv[1] is the stage, cwd the tree.
PROGRAM = r"""
import os, sys
from multiprocessing import get_context

def walk(directory, found):
    entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if not entry.name.startswith("."):
                walk(entry.path, found)
        elif entry.name.endswith(".py"):
            found.append(entry.path)

def gates():
    from pathlib import Path
    from declint.cli import ALL_RULES
    from declint.config import load_config
    from declint.engine import Engine, Selection, _Run
    from declint.prefilter import NeedleSet
    from declint.run_state import scan_needles
    config = load_config(None, default_root=Path(".").resolve(), known_codes=frozenset(r.CODE for r in ALL_RULES))
    with _Run(Engine(config, ALL_RULES, Selection(("DL",), ()), jobs=2, cache=False)) as run:
        needles = NeedleSet(scan_needles(run.gates, run.seeds, run.rule_seeds))
    return tuple(gate for gate, _ in needles.groups)

GATES = ()
FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)

def read(path):
    fd = os.open(path, FLAGS)
    try:
        return os.read(fd, os.fstat(fd).st_size + 1)
    finally:
        os.close(fd)

def read_batch(paths):
    return sum(len(read(path)) > 0 for path in paths)

def search_batch(paths):
    hits = 0
    for path in paths:
        lowered = read(path).lower()
        hits += sum(gate in lowered for gate in GATES)  # every gate, as declint's scan asks them all
    return hits

if __name__ == "__main__":
    stage = sys.argv[1]
    found = []
    walk(".", found)
    if stage != "walk":
        if stage == "search":
            GATES = gates()  # before the fork: the workers inherit them
        batches = [found[i : i + 256] for i in range(0, len(found), 256)]
        handler = search_batch if stage == "search" else read_batch
        with get_context("fork").Pool(len(os.sched_getaffinity(0))) as pool:
            print(sum(pool.imap(handler, batches)))
"""

CASES = {
    "walk": [sys.executable, "-c", PROGRAM, "walk"],
    "walk + read": [sys.executable, "-c", PROGRAM, "read"],
    "walk + read + search": [sys.executable, "-c", PROGRAM, "search"],
    "declint": [sys.executable, "-m", "declint", "check", "."],
}


def timed(command: list[str], tree: Path) -> float:
    shutil.rmtree(tree / ".declint_cache", ignore_errors=True)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=tree, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # declint exits 1 with findings; a crash must not pass for a time
        failure = done.stderr.decode(errors="replace")[-2000:]
        sys.exit(f"{' '.join(command[:3])} ... in {tree}: exit {done.returncode}\n{failure}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    trees = {label: TREES / label for label in (SMALL, LARGE)}
    missing = [str(tree) for tree in trees.values() if not tree.is_dir()]
    if missing:
        sys.exit(f"missing trees (run `python benchmarks/run.py --part trees` first): {', '.join(missing)}")
    extra = sum(1 for _ in trees[LARGE].rglob("*.py")) - sum(1 for _ in trees[SMALL].rglob("*.py"))
    samples: dict[tuple[str, str], list[float]] = {(case, label): [] for case in CASES for label in trees}
    for _ in range(args.rounds):
        for case, command in CASES.items():
            for label, tree in trees.items():
                samples[case, label].append(timed(command, tree))
    result = {"rounds": args.rounds, "files_that_cannot_match": extra, "cases": {}}
    for case in CASES:
        small = statistics.median(samples[case, SMALL])
        large = statistics.median(samples[case, LARGE])
        per_file = (large - small) / extra
        result["cases"][case] = {
            "median_s": {SMALL: round(small, 3), LARGE: round(large, 3)},
            "us_per_file": round(per_file * 1e6, 1),
            "s_per_10k": round(per_file * 10_000, 3),
        }
        cost = f"{per_file * 1e6:5.1f} us a file, {per_file * 1e4:.3f} s per 10k"
        print(f"{case:22s} {small:6.3f} s -> {large:6.3f} s   {cost}")
    (HERE / "floor.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
