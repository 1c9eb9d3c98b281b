"""`declint check --stdin-filename`, as an editor runs it, for two (or more) installed versions
of declint, alternating, with medians.

    python benchmarks/stdin_ab.py --rounds 5 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. On the 20k tree
with 30 models (made by `run.py`; `--tree` names another of `benchmarks/.work/trees`), every
round runs each version once over the whole tree (its snapshots removed first, so that it writes
its own and the walk file the start-up child stats, as `precommit_ab.py` explains; untimed), then
times `check --stdin-filename FILE -` with three buffers on stdin:

- `model, unchanged`: the first model file of the manifest, its own bytes (a buffer just saved);
- `model, edited`: the same with a comment appended (an edit of a file whose facts the index holds);
- `no needle, edited`: a filler file no needle matches (`run.plain_file`), a comment appended.

Nothing is written to the tree: the buffers come on stdin, and a run over them writes no cache.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from installed import PYTHON, TREES, completed, median_of, timed_check, tree_ab_parser
from run import plain_file


def timed_stdin(installed: str, tree: Path, rel: str, data: bytes, *options: str) -> float:
    """Wall seconds of `declint check OPTIONS --stdin-filename rel -` with `data` on stdin."""
    env = {**os.environ, "PYTHONPATH": installed}
    command = [str(PYTHON), "-m", "declint", "check", *options, "--stdin-filename", rel, "-"]
    started = time.perf_counter()
    completed(command, cwd=tree, env=env, input=data)
    return time.perf_counter() - started


def main() -> None:
    parser = tree_ab_parser(__doc__, rounds=5, tree="20000-30models")
    args = parser.parse_args()
    tree = TREES / args.tree
    models = sorted(json.loads((tree / "manifest.json").read_text(encoding="utf-8"))["expected"])
    model, plain = models[0], plain_file(tree, models)
    cases = {
        "model, unchanged": (model, (tree / model).read_bytes()),
        "model, edited": (model, (tree / model).read_bytes() + b"\n# edited in the editor\n"),
        "no needle, edited": (plain, (tree / plain).read_bytes() + b"\n# edited in the editor\n"),
    }
    seconds: dict[str, dict[str, list[float]]] = {name: {case: [] for case in cases} for name in args.installed}
    for _ in range(args.rounds):
        for installed in args.installed:
            for snapshot in (tree / ".declint_cache").glob("v*/*.snapshot"):
                snapshot.unlink()
            timed_check(installed, tree, ".")
            for case, (rel, data) in cases.items():
                seconds[installed][case].append(timed_stdin(installed, tree, rel, data))
    for installed, by_case in seconds.items():
        for case, samples in by_case.items():
            print(f"{installed}: --stdin-filename on {args.tree}, {case}: {median_of(samples)}")


if __name__ == "__main__":
    main()
