"""`check --diff --unsafe-fixes` when most fixes are refused, for two (or more) installed versions
of declint, alternating.

    python benchmarks/fix_ab.py --rounds 3 /tmp/ab-base /tmp/ab-head

The tree (made under benchmarks/.work/fix-tree): a copy of the demo, examples/mini_trtllm, with
the shared Literal's "VANILLA" retyped "vanilla". Every declaration that lists VANILLA is then a
DL104 whose unsafe fix (the suggested "vanilla") would make the docs table drift, a new DL107, so
the fix verification must refuse it, each refusal found by whole-run re-lints. The files are dated
an hour back, as a checkout's are. Each round, for each version: `--no-cache`, then with the cache
(warmed by a plain check just before, so the timed run finds every file's entry), then the same
session again (`again`: a hook or an editor running it once more with nothing changed, which
versions with a fix memo answer from it). Prints each
version's medians and every time, and what the last run said on stderr. `--tree DIR` times an
existing tree instead (a generated one: `benchmarks/.work/trees/20000-30models`), as it is.
`--stdin FILE` times `--stdin-filename FILE -` with FILE's bytes on stdin instead of `.`, as an
editor fixes its buffer (`--stdin tensorrt_llm/_torch/models/modeling_gemma4.py`: one DL104 fix,
refused).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from pathlib import Path

from installed import PYTHON, WORK, completed, timed_check
from stdin_ab import timed_stdin

DEMO = Path(__file__).resolve().parent.parent / "examples" / "mini_trtllm"
TREE = WORK / "fix-tree"
LITERAL = 'Literal["VANILLA", "TRTLLM"'
CASES = {"--no-cache": ("--no-cache",), "cache": (), "again": ()}


def make_tree() -> None:
    shutil.rmtree(TREE, ignore_errors=True)
    shutil.copytree(DEMO, TREE, ignore=shutil.ignore_patterns(".declint_cache", "__pycache__"))
    literal = TREE / "tensorrt_llm" / "llmapi" / "llm_args.py"
    text = literal.read_text()
    if LITERAL not in text:
        raise SystemExit(f"{literal} no longer holds {LITERAL}: the benchmark's edit needs updating")
    literal.write_text(text.replace(LITERAL, 'Literal["vanilla", "TRTLLM"', 1))
    past = time.time() - 3600
    for path in TREE.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (past, past))


def one_round(installed: str, tree: Path, stdin: str | None) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": installed}
    times = {}
    for case, options in CASES.items():
        if case == "cache":
            completed([str(PYTHON), "-m", "declint", "check", "."], cwd=tree, env=env)  # warms the cache
        # "again": the same session right after "cache", over the same files (the fix memo's case)
        if stdin is None:
            times[case] = timed_check(installed, tree, "--diff", "--unsafe-fixes", *options, ".")
        else:
            data = (tree / stdin).read_bytes()
            times[case] = timed_stdin(installed, tree, stdin, data, "--diff", "--unsafe-fixes", *options)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("installed", nargs="+", help="directories made by pip install --no-deps --target")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", type=Path, help="an existing tree to time, instead of the edited demo")
    parser.add_argument("--stdin", help="a file of the tree, checked with --stdin-filename (its bytes on stdin)")
    args = parser.parse_args()
    tree = args.tree.resolve() if args.tree else TREE
    if args.tree is None:
        make_tree()
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in args.installed}
    for _ in range(args.rounds):
        for installed in args.installed:
            shutil.rmtree(tree / ".declint_cache", ignore_errors=True)
            runs[installed].append(one_round(installed, tree, args.stdin))
    for installed, rounds in runs.items():
        env = {**os.environ, "PYTHONPATH": installed}
        command = [str(PYTHON), "-m", "declint", "check", "--diff", "--unsafe-fixes", "--no-cache"]
        asked = ["."] if args.stdin is None else ["--stdin-filename", args.stdin, "-"]
        data = None if args.stdin is None else (tree / args.stdin).read_bytes()
        said = completed([*command, *asked], cwd=tree, env=env, input=data).stderr.decode()
        refused = sum(line.startswith("declint: not fixed: ") for line in said.splitlines())
        print(f"{installed}: {said.splitlines()[0]}; {refused} refused")
        for case in CASES:
            times = [round(r[case], 2) for r in rounds]
            print(f"  {case:>10}: median {statistics.median(times):.2f} s  {times}")


if __name__ == "__main__":
    main()
