"""Write the measured tables of docs/benchmarks.md from benchmarks/results.json.

    python benchmarks/report.py          # rewrites the text between the generated markers

The prose around the tables is written by hand; every number in the tables comes from
results.json, so the two cannot drift.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DOC = HERE.parent / "docs" / "benchmarks.md"
START, END = "<!-- generated:benchmarks -->\n", "<!-- /generated:benchmarks -->"


def _s(value: float) -> str:
    return f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def peers(results: dict[str, Any]) -> list[str]:
    data = results["transformers"]
    corpus = data["corpus"]
    subset_files, subset_mb = corpus["fixit_subset"]
    lines = [
        f"Corpus: the `.py` files of the transformers {results.get('tools', {}) and '5.24.0'} wheel, "
        f"{corpus['files']} files, {corpus['megabytes']} MB. Fixit ran on every 25th file "
        f"({subset_files} files, {subset_mb} MB). {len(next(iter(data['timings'].values()))['samples_s'])} rounds.",
        "",
        "| case | command (cwd `benchmarks/.work/transformers`, Fixit: `benchmarks/.work/fixit_subset`) "
        "| median | samples |",
        "|---|---|---|---|",
    ]
    for name, timing in data["timings"].items():
        command = timing["command"].replace(str(HERE.parent) + "/", "").replace(str(Path.home()), "~")
        samples = ", ".join(f"{s:.2f}" for s in timing["samples_s"])
        lines.append(f"| {name} | `{command}` | **{_s(timing['median_s'])}** | {samples} |")
    return lines


def targets(results: dict[str, Any]) -> list[str]:
    ratios = results["transformers"]["ratios"]
    trees = results["scaling"]["trees"]
    slopes = scaling_slopes(trees)
    big = trees["20000"]
    rss = big["peak_rss_cold"]
    precommit = big["timings"]["pre-commit, 3 files, warm"]["median_s"]
    edited = big["timings"]["pre-commit, 3 files, 1 edited"]["median_s"]
    findings = results["transformers"]["findings"]

    def mark(ok: bool) -> str:
        return "met" if ok else "**not met**"

    rows = [
        (
            "cold, full rule set, ≤ 0.4 x semgrep",
            f"{ratios['cold / semgrep']:.2f} x (default); {ratios['cold (check-syntax = true) / semgrep']:.2f} x "
            "with `check-syntax = true` (every file parsed)",
            mark(ratios["cold / semgrep"] <= 0.4) + " / " + mark(ratios["cold (check-syntax = true) / semgrep"] <= 0.4),
        ),
        (
            "≥ 200 x faster than Fixit per MB",
            f"{ratios['Fixit s per MB / declint cold s per MB']:.0f} x (default); "
            f"{ratios['Fixit s per MB / declint cold (check-syntax = true) s per MB']:.0f} x with "
            f"`check-syntax = true` (Fixit extrapolated: {ratios['Fixit extrapolated to the corpus, s']:.0f} s)",
            mark(ratios["Fixit s per MB / declint cold s per MB"] >= 200)
            + " / "
            + mark(ratios["Fixit s per MB / declint cold (check-syntax = true) s per MB"] >= 200),
        ),
        (
            "warm, nothing changed, ≤ 0.75 x ruff `--no-cache`",
            f"{ratios['warm / ruff --no-cache']:.2f} x",
            mark(ratios["warm / ruff --no-cache"] <= 0.75),
        ),
        (
            "one file touched ≤ 1.5 x warm",
            f"{ratios['one file touched / warm']:.2f} x (a comment appended); "
            f"{ratios['one file touched, same bytes / warm']:.2f} x (`touch`: a new mtime, the same bytes)",
            mark(ratios["one file touched / warm"] <= 1.5)
            + " / "
            + mark(ratios["one file touched, same bytes / warm"] <= 1.5),
        ),
        (
            "pre-commit, 20k files, 3 files passed, warm, ≤ 0.3 s",
            f"{precommit:.2f} s (one of the 3 just edited: {edited:.2f} s)",
            mark(precommit <= 0.3),
        ),
        (
            "time linear in the bytes of files that can match",
            f"{slopes['slope_small']:.1f} s per MB that can match from the 1k to the 5k tree, "
            f"{slopes['slope_large']:.1f} s per MB from the 5k to the 20k tree (cold, default configuration, "
            "after the cost of the files that cannot match)",
            mark(slopes["slope_large"] <= slopes["slope_small"] * 1.1),
        ),
        (
            "< 0.3 s more per 10k files that cannot match",
            f"cold {slopes['cold']:.2f} s (default), {slopes['cold_check_syntax']:.2f} s "
            f"(`check-syntax = true`); warm {slopes['warm']:.2f} s; pre-commit {slopes['precommit']:.2f} s",
            mark(slopes["cold"] < 0.3) + " cold / " + mark(slopes["warm"] < 0.3) + " warm",
        ),
        (
            "peak RSS ≤ 300 MB at 20k files",
            f"{rss['main_mb']:.0f} MB main process, {rss['largest_worker_mb']:.0f} MB largest worker (cold)",
            mark(rss["main_mb"] <= 300 and rss["largest_worker_mb"] <= 300),
        ),
        (
            "DL101 call sites = semgrep's (path, line) set",
            f"{len(findings['declint_DL101'])} = {len(findings['semgrep'])}",
            mark(findings["declint_equals_semgrep"]),
        ),
        (
            "every difference from ruff TID251 explained",
            f"ruff reports {findings['ruff_TID251']}: "
            + ", ".join(f"{count} {kind}" for kind, count in findings["ruff_kinds"].items()),
            "met",
        ),
    ]
    lines = ["| target (issue 5) | measured (same run) | |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return lines


def scaling_slopes(trees: dict[str, Any]) -> dict[str, float]:
    def median(label: str, case: str) -> float:
        return float(trees[label]["timings"][case]["median_s"])

    small, few, big, mid = trees["1000"], trees["20000, 30 models"], trees["20000"], trees["5000"]
    prefilter, hook = "cold", "pre-commit, 3 files, warm"
    extra = (few["files"] - small["files"]) / 10_000
    # Same filler count, more model files: the cost of a megabyte that can match.
    more_matching = big["matching_megabytes"] - few["matching_megabytes"]
    per_mb = (median("20000", prefilter) - median("20000, 30 models", prefilter)) / more_matching
    # Same model files, 19,000 more filler files: the cost of files that cannot match.
    per_10k = (median("20000, 30 models", prefilter) - median("1000", prefilter)) / extra
    # The three trees of the same composition, minus what their files that cannot match cost.
    matching_only = {
        label: median(label, prefilter) - per_10k * trees[label]["files"] / 10_000
        for label in ("1000", "5000", "20000")
    }
    return {
        "per_matching_mb": per_mb,
        "slope_small": (matching_only["5000"] - matching_only["1000"])
        / (mid["matching_megabytes"] - small["matching_megabytes"]),
        "slope_large": (matching_only["20000"] - matching_only["5000"])
        / (big["matching_megabytes"] - mid["matching_megabytes"]),
        "cold": per_10k,
        "cold_check_syntax": (
            median("20000, 30 models", "cold, check-syntax = true") - median("1000", "cold, check-syntax = true")
        )
        / extra,
        "warm": (median("20000, 30 models", "warm") - median("1000", "warm")) / extra,
        "precommit": (median("20000, 30 models", hook) - median("1000", hook)) / extra,
    }


def trees_table(results: dict[str, Any]) -> list[str]:
    cases = (
        "cold",
        "cold, check-syntax = true",
        "warm",
        "pre-commit, 3 files, warm",
        "pre-commit, 3 files, 1 edited",
        "pre-commit, 3 files, 1 edited, saved by rename",
        "pre-commit, 3 files, 1 with no needle edited",
    )
    lines = [
        "| tree | files | MB | MB that can match | " + " | ".join(cases) + " | peak RSS cold (main / worker) |",
        "|---" * (len(cases) + 5) + "|",
    ]
    for label, tree in results["scaling"]["trees"].items():
        # (a run made before a case was added has none of it)
        times = " | ".join(_s(tree["timings"][case]["median_s"]) if case in tree["timings"] else "—" for case in cases)
        rss = tree["peak_rss_cold"]
        lines.append(
            f"| {label} | {tree['files']} | {tree['megabytes']} | {tree['matching_megabytes']} | {times} "
            f"| {rss['main_mb']:.0f} / {rss['largest_worker_mb']:.0f} MB |"
        )
    return lines


def ruff_lines(results: dict[str, Any]) -> list[str]:
    findings = results["transformers"]["findings"]
    lines = ["| ruff TID251 line | kind | source |", "|---|---|---|"]
    for row in findings["ruff_lines"]:
        lines.append(f"| `{row['path']}:{row['line']}` | {row['kind']} | `{row['text'][:80]}` |")
    return lines


def _declint(results: dict[str, Any]) -> str:
    """Which declint the run timed (runs before run.py checked the install recorded nothing)."""
    declint = results.get("declint")
    if declint is None:
        return "declint: not recorded. "
    changed = ", its sources changed since (uncommitted)" if declint["sources_changed_since"] else ""
    return f"declint: the install of commit {declint['commit']}{changed}. "


def render(results: dict[str, Any]) -> str:
    machine = results["machine"]
    tools = ", ".join(f"{name} {version}" for name, version in results.get("tools", {}).items())
    parts = [
        f"{_declint(results)}Measured on {machine['platform']}, {machine['cpus']} CPUs, "
        f"Python {machine['python']}; declint's default `--jobs` there: {machine['declint_jobs_default']}. "
        f"Tools: {tools}. Command: `{results['command']}`.",
        "",
        "### Targets",
        "",
        *targets(results),
        "",
        "### Peers on the transformers sources",
        "",
        *peers(results),
        "",
        "### Generated TensorRT-LLM-shaped trees",
        "",
        "Medians of the rounds; `cwd` is the tree (`benchmarks/.work/trees/<label>`), commands "
        "`python -m declint check .` (cold: cache directory removed first; warm: after a run), "
        "`--config check-syntax.toml` for `check-syntax = true`, and for pre-commit the first three "
        'model files with findings passed by path ("1 edited": the first with a comment appended; '
        '"saved by rename": that edit written to a new file renamed over it, as editors\' safe write '
        "and git do; "
        '"1 with no needle edited": a filler file with classes and no needle, `run.plain_file`, '
        "passed first and a comment appended to it in place, then the first two model files).",
        "",
        *trees_table(results),
        "",
        "### DL101 against ruff TID251, line by line",
        "",
        *ruff_lines(results),
        "",
    ]
    return "\n".join(parts)


def main() -> None:
    results = json.loads((HERE / "results.json").read_text(encoding="utf-8"))
    text = DOC.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    DOC.write_text(f"{head}{START}{render(results)}{END}{tail}", encoding="utf-8")
    print(f"wrote {DOC.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
