"""Where a run after a one-file edit spends the time a warm run does not: a diagnostic.

    python benchmarks/touched_attribution.py [--rounds N]

On run.py's transformers corpus, each round, in this order: the cache removed and two runs
(cold, then warm); a warm run; a run after a comment is appended to
`transformers/integrations/sdpa_attention.py` (run.py's "one file touched"); the same edit with
the modules only such a run imports already imported before its clock starts. Each edit
appends other bytes (a counter): bytes checked before would find their result in the cache. The
file is restored and dated an hour back after each edit, and run once more, so that the next run
finds a snapshot. Each measured run is a fresh interpreter started as
`python -m declint check transformers` starts (`early_stats` first), whose main process times:

- `start-up`: from the interpreter's first line of the driver to the CLI's call (the imports
  `python -m declint` makes first, and the preloaded modules of the third case);
- `run`: the CLI's call, split into the wall time of the engine's phases, wrapped here
  (exclusive: a phase's time leaves out the wrapped phases it calls, so `_Run.check` is its
  own glue; `other` is the rest: configuration, output, the reports);
- `wall`: the subprocess as the benchmark sees it (the driver leaves with `os._exit` too).

Modules are imported on first use (`declint.lazy`), inside the phases: `run` of the edit minus
`run` of the preloaded edit is what the imports of such a run cost. A diagnostic, not a target:
it wraps private methods, so it follows the engine's internals (it fails loudly when one is
renamed). Results go to `benchmarks/touched_attribution.json`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from installed import PYTHON, WORK, completed

HERE = Path(__file__).resolve().parent
CORPUS = WORK / "transformers"
TOUCHED = CORPUS / "transformers" / "integrations" / "sdpa_attention.py"
CASES = ("warm", "touched", "touched, its modules preloaded")
EDITS = itertools.count()

# (module, owner, attribute) of what the driver times: the phases of a run after an edit.
WRAPPED = (
    ("declint.engine", "_Run", "from_snapshot"),
    ("declint.engine", "_Run", "files_from_snapshot"),
    ("declint.engine", "_Run", "last_listings"),
    ("declint.engine", "_Run", "check"),
    ("declint.cache", "Cache", "load"),
    ("declint.engine", "_Run", "_scan"),
    ("declint.engine", "_Run", "_index"),
    ("declint.engine", "_Run", "_signature"),
    ("declint.engine", "_Run", "_start_check"),
    ("declint.engine", "_Run", "_project_findings"),
    ("declint.engine", "_Run", "_finish_check"),
    ("declint.engine", "_Run", "_snapshot"),
    ("declint.cache", "Cache", "save"),
    ("declint.cache", "Cache", "save_snapshot"),
    # a run that patches the snapshot (`declint.patching`; absent from versions before it)
    ("declint.engine", "_Run", "_patch"),
    ("declint.engine", "_Run", "_scan_changed"),
    ("declint.cache", "Cache", "load_held"),
    ("declint.engine", "_Run", "_check_items"),
    ("declint.engine", "_Run", "_with_new_stats"),
)

DRIVER = r"""
import json, os, sys, time
started = time.perf_counter()
sys.argv = ["declint", "check", "transformers"]
from declint import early_stats
early_stats.start()
from declint import engine
from declint.cli import main
for name in filter(None, os.environ["ATTRIBUTION_PRELOAD"].split(",")):
    __import__(name)
spent, stack = {}, []

def timed(function, label):
    def wrapper(*args, **kwargs):
        stack.append(0.0)
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            total = time.perf_counter() - start
            inner = stack.pop()
            spent[label] = spent.get(label, 0.0) + total - inner
            if stack:
                stack[-1] += total

    return wrapper

for module, owner, attribute in json.loads(os.environ["ATTRIBUTION_WRAPPED"]):
    target = getattr(__import__(module, fromlist=[owner]), owner)
    if hasattr(target, attribute):  # (an older version has not every phase)
        setattr(target, attribute, timed(getattr(target, attribute), owner + "." + attribute))
engine.RETAINED = []
called = time.perf_counter()
try:
    main()
except SystemExit:
    pass
ended = time.perf_counter()
loaded = sorted(n for n, m in sys.modules.items() if m is not None and type(m).__name__ != "_LazyModule")
report = {"start-up": called - started, "run": ended - called, "phases": spent, "modules": loaded}
with open(os.environ["ATTRIBUTION_OUT"], "w", encoding="utf-8") as handle:
    json.dump(report, handle)
os._exit(0)  # as `python -m declint` leaves: no teardown of the run's objects
"""


def measured(preload: list[str]) -> dict[str, Any]:
    """One run of the driver: its report, with the subprocess's wall time."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "report.json"
        env = {
            **os.environ,
            "ATTRIBUTION_PRELOAD": ",".join(preload),
            "ATTRIBUTION_WRAPPED": json.dumps(WRAPPED),
            "ATTRIBUTION_OUT": str(out),
        }
        started = time.perf_counter()
        subprocess.run([str(PYTHON), "-c", DRIVER], cwd=CORPUS, env=env, capture_output=True, check=False)
        wall = time.perf_counter() - started
        report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    report["wall"] = wall
    return report


def plain_run() -> None:
    completed([str(PYTHON), "-m", "declint", "check", "transformers"], cwd=CORPUS)


def edited(original: bytes, preload: list[str]) -> dict[str, Any]:
    TOUCHED.write_bytes(original + f"\n# touched {next(EDITS)}\n".encode())
    try:
        return measured(preload)
    finally:
        TOUCHED.write_bytes(original)
        past = time.time() - 3600  # as the checkout's other files: not within the racy window
        os.utime(TOUCHED, (past, past))
        plain_run()  # the restored bytes' snapshot, for the next warm run


def one_round(original: bytes, preload: list[str]) -> dict[str, dict[str, Any]]:
    shutil.rmtree(CORPUS / ".declint_cache", ignore_errors=True)
    plain_run()
    plain_run()
    return {
        CASES[0]: measured([]),
        CASES[1]: edited(original, []),
        CASES[2]: edited(original, preload),
    }


def summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians in milliseconds of a case's samples."""
    labels = sorted({label for sample in samples for label in sample["phases"]})

    def median_ms(values: list[float]) -> float:
        return round(statistics.median(values) * 1e3, 1)

    phases = {label: median_ms([s["phases"].get(label, 0.0) for s in samples]) for label in labels}
    phases["other"] = median_ms([s["run"] - sum(s["phases"].values()) for s in samples])
    return {key: median_ms([s[key] for s in samples]) for key in ("wall", "start-up", "run")} | {"phases": phases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not TOUCHED.is_file():
        sys.exit("missing corpus (run `python benchmarks/run.py --part transformers` first)")
    original = TOUCHED.read_bytes()
    first = one_round(original, [])  # which modules only the edit's run imports
    preload = sorted(set(first[CASES[1]]["modules"]) - set(first[CASES[0]]["modules"]))
    samples: dict[str, list[dict[str, Any]]] = {case: [] for case in CASES}
    for _ in range(args.rounds):
        for case, report in one_round(original, preload).items():
            samples[case].append(report)
    result = {case: summary(reports) for case, reports in samples.items()}
    imports = round(result[CASES[1]]["run"] - result[CASES[2]]["run"], 1)
    document = {
        "rounds": args.rounds,
        "modules only the edit imports": preload,
        "cases": result,
        "their imports (ms)": imports,
    }
    for case, row in result.items():
        phases = ", ".join(f"{label} {ms}" for label, ms in row["phases"].items() if ms >= 0.1)
        print(f"{case}: wall {row['wall']} ms, start-up {row['start-up']}, run {row['run']} ({phases})")
    print(f"the {len(preload)} modules only the edit's run imports: {imports} ms")
    (HERE / "touched_attribution.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
