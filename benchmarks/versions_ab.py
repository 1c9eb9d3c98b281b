"""Warm runs of two installed versions of declint on one tree, each run right after the other's.

    python benchmarks/versions_ab.py --rounds 5 /tmp/ab-b1 /tmp/ab-b2 /tmp/ab-h1 /tmp/ab-h2

The arguments are pairs of `pip install --no-deps --target` directories, as for `ab.py`; two
installs of one commit at different paths have different code fingerprints, so they act as two
versions of declint (a pre-commit hook's and a virtual environment's). For each pair, on the
20k tree (`--tree` names another of `benchmarks/.work/trees`), both run once, then `--rounds`
times each in turn, and the median of all those runs is printed with every sample: what a
tree pays when two versions take turns on it.
"""

from __future__ import annotations

import argparse

from installed import WORK, median_of, timed_check


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="pairs of directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tree", default="20000", help="a directory of benchmarks/.work/trees")
    args = parser.parse_args()
    if len(args.installed) % 2:
        parser.error("give the installed versions in pairs")
    tree = WORK / "trees" / args.tree
    for first, second in zip(args.installed[::2], args.installed[1::2], strict=True):
        timed_check(first, tree, ".")
        timed_check(second, tree, ".")
        samples = [timed_check(installed, tree, ".") for _ in range(args.rounds) for installed in (first, second)]
        print(f"{first} / {second}: {median_of(samples)}")


if __name__ == "__main__":
    main()
