"""What does each parsing layer cost? Justifies using `ast` for the phase-1 index.

    python benchmarks/parse_cost.py [DIR] [--repeat N]

DIR defaults to the installed `pip` package's sources (present wherever declint is installed).
Prints the median wall time over N rounds (alternating the methods inside each round) of:
stdlib ast.parse, libcst.parse_module, and libcst parse + QualifiedNameProvider resolution.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameProvider


def corpus(directory: Path) -> list[str]:
    texts = []
    for path in sorted(directory.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
            ast.parse(text)
            cst.parse_module(text)
        except (SyntaxError, UnicodeDecodeError, cst.ParserSyntaxError, RecursionError):
            continue
        texts.append(text)
    return texts


def with_qualified_names(text: str) -> None:
    MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True).resolve(QualifiedNameProvider)


METHODS: dict[str, Callable[[str], object]] = {
    "ast.parse": ast.parse,
    "libcst.parse_module": cst.parse_module,
    "libcst parse + QualifiedNameProvider": with_qualified_names,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    default = Path(__import__("pip").__file__).parent
    parser.add_argument("directory", nargs="?", type=Path, default=default)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    texts = corpus(args.directory)
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    times: dict[str, list[float]] = {name: [] for name in METHODS}
    for _ in range(args.repeat):
        for name, method in METHODS.items():
            start = time.perf_counter()
            for text in texts:
                method(text)
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["ast.parse"])
    print(f"corpus: {args.directory} ({len(texts)} files, {megabytes:.1f} MB), median of {args.repeat}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<40} {median:8.2f} s  {megabytes / median:6.2f} MB/s  {median / base:5.1f}x ast")


if __name__ == "__main__":
    main()
