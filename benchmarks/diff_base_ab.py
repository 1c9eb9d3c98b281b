"""`declint check --diff-base main .` of two (or more) installed versions, alternating.

    python benchmarks/diff_base_ab.py --rounds 3 /tmp/ab-base /tmp/ab-head [--tree 5000]

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. The generated
tree (`.work/trees/N`, made by `run.py`) is copied to `.work/diff-base-N`, committed on `main`,
and changed on a branch as a pull request would be: a backend literal appended to one model and
an untracked module added. Every round, for each version: the run with `--no-cache` (`no cache`,
DECLINT_NO_CACHE in CI), the cache removed and the run timed (`cold`, a CI job on a fresh clone),
then the same run again (`warm`, a developer's second run).
Every run must print the same bytes as the first (a faster wrong answer is not timed). Prints
each version's medians and every sample.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from pathlib import Path

from installed import WORK, median_of, read_sources, timed_report

EDITED = "tensorrt_llm/_torch/models/modeling_family0.py"
ADDED = "tensorrt_llm/_torch/models/modeling_added_in_branch.py"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
GIT_ENV |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


def prepared(size: str) -> Path:
    """The tree as a repository with a change on a branch (made once, kept under .work)."""
    root = WORK / f"diff-base-{size}"
    if (root / ".git").is_dir():
        return root
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(WORK / "trees" / size, root, ignore=shutil.ignore_patterns(".declint_cache"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "feature")
    with (root / EDITED).open("a") as handle:
        handle.write('\nBACKEND_NAME = "TRTLLM"\n')
    (root / ADDED).write_text('ATTN_BACKEND = "VANILLA"\n')
    return root


CASES = {"no cache": ("--no-cache",), "cold": (), "warm": ()}


def timed(installed: str, root: Path, *options: str) -> tuple[float, bytes]:
    return timed_report(installed, root, *options, "--diff-base", "main", ".")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", default="5000", help="a tree of .work/trees (run.py makes 1000, 5000, 20000)")
    args = parser.parse_args()
    root = prepared(args.tree)
    samples: dict[str, dict[str, list[float]]] = {name: {case: [] for case in CASES} for name in args.installed}
    reference: bytes | None = None
    for _ in range(args.rounds):
        for installed in args.installed:
            shutil.rmtree(root / ".declint_cache", ignore_errors=True)
            read_sources(root)
            for case, options in CASES.items():
                seconds, report = timed(installed, root, *options)
                reference = report if reference is None else reference
                if report != reference:
                    raise SystemExit(f"{installed}, {case}: another report than the first run's")
                samples[installed][case].append(seconds)
    print((reference or b"").decode().splitlines()[-1])
    for installed in args.installed:
        for case in CASES:
            print(f"{installed} {case}: {median_of(samples[installed][case])}")


if __name__ == "__main__":
    main()
