"""Draw docs/benchmarks.png (time against tree size) from benchmarks/results.json.

    benchmarks/.work/tools/bin/python benchmarks/plot.py

matplotlib is installed in the benchmark tools' environment by `benchmarks/run.py`, not in
declint's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after use(): the backend must be chosen first

HERE = Path(__file__).resolve().parent
SERIES = (
    ("cold", "cold (default: files no rule can match are read, not parsed)", "o-"),
    ("cold, check-syntax = true", "cold, check-syntax = true (every file parsed)", "s-"),
    ("warm", "warm cache, nothing changed", "^-"),
    ("pre-commit, 3 files, 1 edited", "pre-commit, 3 files passed, 1 just edited", "d-"),
    ("pre-commit, 3 files, warm", "pre-commit, 3 files passed, warm", "v-"),
)


def main() -> None:
    results = json.loads((HERE / "results.json").read_text(encoding="utf-8"))
    trees = results["scaling"]["trees"]
    sizes = sorted((label for label in trees if label.isdigit()), key=int)
    figure, axis = plt.subplots(figsize=(8, 5), dpi=120)
    for key, label, style in SERIES:
        xs = [trees[size]["files"] for size in sizes]
        ys = [trees[size]["timings"][key]["median_s"] for size in sizes]
        axis.plot(xs, ys, style, label=label)
    few = trees.get("20000, 30 models")
    if few is not None:
        for number, (key, _, style) in enumerate(SERIES[:2]):
            axis.plot(
                [few["files"]],
                [few["timings"][key]["median_s"]],
                style[0],
                color="grey",
                markersize=9,
                label="20k files of which only 30 model files (cold, as above)" if number == 0 else None,
            )
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("Python files in the generated TensorRT-LLM-shaped tree")
    axis.set_ylabel("wall time, median (s)")
    axis.set_title(f"declint check, {results['machine']['cpus']} CPUs, Python {results['machine']['python']}")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    out = HERE.parent / "docs" / "benchmarks.png"
    figure.savefig(out)
    print(f"wrote {out.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
