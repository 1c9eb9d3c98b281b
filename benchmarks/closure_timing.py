"""The closure's questions after an edit that changes a model's facts, timed alone, of two (or
more) installed versions of declint, alternating, with medians.

    python benchmarks/closure_timing.py --rounds 5 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. Every round, for
each version: declint checks the 20k tree (`--tree` names another of `benchmarks/.work/trees`)
and then its first three model files (warm), an import is added at the top of the first of them
(as `precommit_ab.py --imported` does), and a child process runs `declint check` on the three
in process with `patching.closure_holds` wrapped and timed: the closure's questions
(`prefilter.Demand.more`) asked on the index with the new facts, which both the patch and the
full path ask after such an edit. The file is restored afterwards. Prints each version's median
and samples of that one function's seconds (`precommit_ab.py --imported` times the whole run).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from typing import Any

from installed import PYTHON, TREES, completed, median_of, tree_ab_parser

FILES = 3


def main() -> None:
    parser = tree_ab_parser(__doc__, rounds=5, tree="20000")
    args = parser.parse_args()
    tree = TREES / args.tree
    models = sorted(json.loads((tree / "manifest.json").read_text(encoding="utf-8"))["expected"])[:FILES]
    first = tree / models[0]
    original = first.read_bytes()
    seconds: dict[str, list[float]] = {installed: [] for installed in args.installed}
    try:
        for number in range(args.rounds):
            for installed in args.installed:
                environment = {**os.environ, "PYTHONPATH": installed}
                for request in (["."], models):
                    completed([str(PYTHON), "-m", "declint", "check", *request], cwd=tree, env=environment)
                first.write_bytes(f"import os as _edited_{number}\n".encode() + original)
                timed = completed([str(PYTHON), __file__, "--child", *models], cwd=tree, env=environment)
                first.write_bytes(original)
                seconds[installed].append(float(timed.stdout.decode().split()[-1]))
    finally:
        first.write_bytes(original)
    for installed, samples in seconds.items():
        print(f"{installed}: closure_holds on {args.tree} after an import added: {median_of(samples)}")
    if len(args.installed) > 1:
        first_median = statistics.median(seconds[args.installed[0]])
        print(f"ratio last / first: {statistics.median(seconds[args.installed[-1]]) / first_median:.2f}")


def child(models: list[str]) -> None:
    """In the tree, with the version first on the path: one check of `models`, the closure timed."""
    from declint import patching
    from declint.cli import main as declint_main

    spent: list[float] = []
    real = patching.closure_holds

    def timed(*args: Any, **kwargs: Any) -> bool:
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    patching.closure_holds = timed  # the engine calls it through the module
    with contextlib.suppress(SystemExit):  # its exit status says whether there were findings
        declint_main(["check", *models])
    if not spent:
        sys.exit("closure_holds was not called: the run took neither the patch nor its closure")
    print(f"\n{sum(spent):.6f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
