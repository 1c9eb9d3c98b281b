"""Warm runs after another configuration wrote the walk file, for installed versions of declint.

    python benchmarks/shared_walk_ab.py --rounds 3 --tree 20000 /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. Every round, for
each version in turn, on a tree of `benchmarks/.work/trees` (made by `run.py`): the cache
removed, a run of the default configuration, one with `--select DL101` (another run key: its
own snapshot, and the walk file the start-up child stats), one of the default configuration
again (answered by its snapshot), then 3 more timed. Prints each version's median and samples.
"""

from __future__ import annotations

import shutil

from installed import TREES, median_of, timed_check, tree_ab_parser

TIMED = 3


def main() -> None:
    parser = tree_ab_parser(__doc__, rounds=3, tree="20000")
    args = parser.parse_args()
    tree = TREES / args.tree
    seconds: dict[str, list[float]] = {installed: [] for installed in args.installed}
    for _ in range(args.rounds):
        for installed in args.installed:
            shutil.rmtree(tree / ".declint_cache", ignore_errors=True)
            for options in ([], ["--select", "DL101"], []):
                timed_check(installed, tree, *options, ".")
            seconds[installed] += [timed_check(installed, tree, ".") for _ in range(TIMED)]
    for installed, samples in seconds.items():
        print(f"{installed}: warm on {args.tree} after another configuration's run: {median_of(samples)}")


if __name__ == "__main__":
    main()
