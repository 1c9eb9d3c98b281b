"""Where the time of a file that cannot match goes: the reader's work, and the main process's phases.

    python benchmarks/attribution.py [--rounds N]

Two measures on the trees `floor.py` uses (`benchmarks/.work/trees/1000` and
`.../20000-30models`, the same 30 model files, 19,000 more files no rule can match):

- `reader`: CPU time of the scan's per-file handler (`declint.engine._prepare_handler`: read,
  search the needles, collect the class bases) in a hot loop over the first 5,000 files of the
  large tree, in this process: what a worker spends on each such file, without the pipe.
- `main`: an in-process cold run (`Engine.run`, two workers, the collector off as the CLI runs it)
  on each tree, alternating, with the wall time of the main process's phases and of a few of its
  per-file methods summed (wrapped here, not changed); per file, the difference between the trees
  divided by 19,000. Most phases run while the workers wait; `_scan` overlaps with them.

A diagnostic, not a target: it wraps private functions, so it follows the engine's internals
(it fails loudly when one is renamed). Results go to `benchmarks/attribution.json`.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TREES = HERE / ".work" / "trees"
SMALL, LARGE = "1000", "20000-30models"
READER_FILES = 5000

# (owner, attribute) pairs timed in `main`; the owner is looked up in declint's modules.
WRAPPED = (
    ("engine", "discover"),
    ("engine", "_module_names"),
    ("engine._Run", "_scan"),
    ("engine._Run", "_scanned"),
    ("engine._Run", "_index"),
    ("engine._Run", "_build"),
    ("engine._Run", "_signature"),
    ("engine._Run", "_project_findings"),
    ("engine._Run", "_finish_check"),
    ("engine._Run", "_snapshot"),
    ("cache.Cache", "save"),
    ("cache.Cache", "save_snapshot"),
)


def _config(root: Path) -> Any:
    from declint.cli import ALL_RULES
    from declint.config import load_config

    return load_config(None, default_root=root, known_codes=frozenset(r.CODE for r in ALL_RULES))


def reader(rounds: int) -> dict[str, float]:
    from declint.cli import ALL_RULES
    from declint.discovery import discover
    from declint.engine import Engine, Selection, _module_names, _prepare_handler, _Run, _ScanItem
    from declint.run_state import PrepareState

    root = (TREES / LARGE).resolve()
    config = _config(root)
    files = list(discover([root], config).files)[:READER_FILES]
    modules = _module_names(files, str(root))
    items = [_ScanItem(f.rel, f.path, modules[f.rel], True, False, False) for f in files]
    run = _Run(Engine(config, ALL_RULES, Selection(("DL",), ()), jobs=2, cache=False))
    # every needle the scan asks, the rules' requests to index included (as `_Run._prepare` builds it)
    state = PrepareState(config, run.gates, run.seeds, run.options, run.max_size, {}, (), run.rule_seeds)
    best = min(_cpu(lambda: [_prepare_handler(state, item) for item in items]) for _ in range(rounds))
    return {"files": len(items), "us_per_file": round(best / len(items) * 1e6, 1)}


def _cpu(work: Callable[[], object]) -> float:
    start = time.process_time()
    work()
    return time.process_time() - start


def main_phases(rounds: int) -> dict[str, dict[str, float]]:
    import declint.cache
    import declint.engine
    from declint.cli import ALL_RULES
    from declint.engine import Engine, Selection

    spent: collections.Counter[str] = collections.Counter()
    for owner_path, name in WRAPPED:
        owner: Any = declint
        for part in owner_path.split("."):
            owner = getattr(owner, part)
        setattr(owner, name, _timed(getattr(owner, name), name, spent))
    samples: dict[str, list[dict[str, float]]] = {SMALL: [], LARGE: []}
    for _ in range(rounds):
        for label in samples:
            root = (TREES / label).resolve()
            os.chdir(root)
            shutil.rmtree(root / ".declint_cache", ignore_errors=True)
            engine = Engine(_config(root), ALL_RULES, Selection(("DL",), ()), jobs=2, cache=True)
            spent.clear()
            start = time.perf_counter()
            engine.run([root])
            spent["run (wall)"] = time.perf_counter() - start
            samples[label].append(dict(spent))
    extra = sum(1 for _ in (TREES / LARGE).rglob("*.py")) - sum(1 for _ in (TREES / SMALL).rglob("*.py"))
    result = {}
    for phase in samples[LARGE][0]:
        small = statistics.median(s.get(phase, 0.0) for s in samples[SMALL])
        large = statistics.median(s.get(phase, 0.0) for s in samples[LARGE])
        result[phase] = {
            "ms": {SMALL: round(small * 1e3, 1), LARGE: round(large * 1e3, 1)},
            "us_per_file": round((large - small) / extra * 1e6, 2),
        }
    return result


def _timed(function: Callable[..., Any], name: str, spent: collections.Counter[str]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - start

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    missing = [label for label in (SMALL, LARGE) if not (TREES / label).is_dir()]
    if missing:
        sys.exit(f"missing trees (run `python benchmarks/run.py --part trees` first): {', '.join(missing)}")
    gc.freeze()
    gc.disable()  # as `declint.cli.main` runs
    result = {"rounds": args.rounds, "reader": reader(args.rounds), "main": main_phases(args.rounds)}
    print(f"reader: {result['reader']['us_per_file']} us of CPU a file")
    for phase, row in result["main"].items():
        print(f"{phase:20s} {row['ms'][SMALL]:8.1f} -> {row['ms'][LARGE]:8.1f} ms  {row['us_per_file']:6.2f} us a file")
    (HERE / "attribution.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
