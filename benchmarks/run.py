"""declint against ruff, semgrep and Fixit on the transformers 5.24.0 sources, plus scaling runs.

    python benchmarks/run.py                       # everything (about 20 minutes on 2 cores)
    python benchmarks/run.py --part transformers   # only the peer comparison
    python benchmarks/run.py --part trees          # only the generated trees (scaling, memory, pre-commit)

Everything it downloads or generates lives in `benchmarks/.work/` (git-ignored): a virtual
environment with the peer tools at pinned versions (`pip install`), the `transformers==5.24.0`
wheel (`pip download --no-deps`) and its `.py` files, the generated trees. Results are written
to `benchmarks/results.json` (medians, every sample, the exact commands, findings compared);
`benchmarks/plot.py` draws `docs/benchmarks.png` from it and `docs/benchmarks.md` reports it.

Timings are wall clock, in one run, alternating: every round runs each case once, in the same
order, so a slow patch of the machine hits every tool alike; medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from installed import completed, read_sources

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work"
RESULTS = HERE / "results.json"
TOOLS = {"ruff": "0.17.6", "semgrep": "1.170.1", "fixit": "2.2.1", "matplotlib": "3.10.7"}
TRANSFORMERS = "5.24.0"
SDPA = "torch.nn.functional.scaled_dot_product_attention"
TOUCHED = "transformers/integrations/sdpa_attention.py"  # a file with a DL101 call site
FIXIT_EVERY = 25  # Fixit runs on every 25th file (sorted), extrapolated per MB
TREE_SIZES = (1000, 5000, 20000)
PRECOMMIT_FILES = 3

RUFF_JSON = ["--output-format", "json"]
SEMGREP_ARGS = ["scan", "--metrics=off", "--disable-version-check", "--no-git-ignore", "-q"]
SEMGREP_RULE = f"""\
rules:
  - id: direct-sdpa
    languages: [python]
    severity: ERROR
    message: direct call of {SDPA}
    pattern: {SDPA}(...)
"""
RUFF_CONFIG = f"""\
[lint]
select = ["TID251"]
[lint.flake8-tidy-imports.banned-api]
"{SDPA}".msg = "direct SDPA"
"""
FIXIT_RULE = f'''\
import libcst as cst
from libcst.metadata import QualifiedNameProvider

from fixit import LintRule


class DirectSdpa(LintRule):
    """Calls of {SDPA}, resolved with libcst's QualifiedNameProvider."""

    MESSAGE = "direct SDPA call"
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)
    VALID = []
    INVALID = []

    def visit_Call(self, node: cst.Call) -> None:
        names = self.get_metadata(QualifiedNameProvider, node.func, set())
        if any(name.name == "{SDPA}" for name in names):
            self.report(node)
'''
FIXIT_CONFIG = '[tool.fixit]\nroot = true\nenable = [".direct_sdpa_rule"]\ndisable = ["fixit.rules"]\n'
DECLINT_CONFIG = '[tool.declint]\nroots = ["transformers"]\nsdpa-allowed-paths = []\n'


@dataclass
class Case:
    """One timed command; `before` runs untimed first (clear a cache, touch a file)."""

    name: str
    command: list[str]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    before: Callable[[], None] | None = None
    after: Callable[[], None] | None = None
    samples: list[float] = field(default_factory=list)
    codes: list[int] = field(default_factory=list)

    def run(self) -> None:
        read_sources(self.cwd)  # untimed: the tool reads its sources from the page cache
        if self.before is not None:
            self.before()
        env = {**os.environ, **self.env}
        start = time.perf_counter()
        done = subprocess.run(self.command, cwd=self.cwd, env=env, capture_output=True, check=False)
        self.samples.append(time.perf_counter() - start)
        self.codes.append(done.returncode)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{self.name} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
        if self.after is not None:
            self.after()

    def summary(self) -> dict[str, Any]:
        return {
            "command": " ".join(self.command),
            "cwd": str(self.cwd.relative_to(REPO)) if self.cwd.is_relative_to(REPO) else str(self.cwd),
            "env": self.env,
            "median_s": round(statistics.median(self.samples), 3),
            "min_s": round(min(self.samples), 3),
            "samples_s": [round(s, 3) for s in self.samples],
            "exit_codes": sorted(set(self.codes)),
        }


def alternate(cases: Sequence[Case], rounds: int, label: str) -> None:
    for number in range(1, rounds + 1):
        for case in cases:
            case.run()
        line = ", ".join(f"{c.name} {c.samples[-1]:.2f}s" for c in cases)
        print(f"[{label}] round {number}/{rounds}: {line}", flush=True)


# ---- setup ------------------------------------------------------------------------------------------


def tools_python() -> Path:
    venv = WORK / "tools"
    python = venv / "bin" / "python"
    wanted = [f"{name}=={version}" for name, version in TOOLS.items()]
    marker = venv / "installed.txt"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if not marker.exists() or marker.read_text() != "\n".join(wanted):
        subprocess.run([str(python), "-m", "pip", "install", "-q", *wanted], check=True)
        marker.write_text("\n".join(wanted))
    return python


def transformers_corpus() -> Path:
    corpus = WORK / "transformers"
    if (corpus / "transformers" / "__init__.py").exists():
        return corpus
    download = WORK / "download"
    download.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", f"transformers=={TRANSFORMERS}", "-d", str(download)],
        check=True,
    )
    (wheel,) = download.glob(f"transformers-{TRANSFORMERS}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith("transformers/") and name.endswith(".py"):
                archive.extract(name, corpus)
    _age(corpus)
    return corpus


def _age(root: Path) -> None:
    """Sources as a checkout has them: not written in the last seconds (declint re-reads a file
    whose mtime is within two seconds of its hashing, as git does for racily clean entries)."""
    past = time.time() - 3600
    for path in [root, *root.rglob("*")] if root.is_dir() else [root]:
        os.utime(path, (past, past))


def write_configs(corpus: Path) -> dict[str, Path]:
    (corpus / "pyproject.toml").write_text(DECLINT_CONFIG, encoding="utf-8")
    (corpus / "declint-check-syntax.toml").write_text(
        DECLINT_CONFIG.replace("[tool.declint]\n", "") + "check-syntax = true\n", encoding="utf-8"
    )
    configs = {"ruff": WORK / "ruff.toml", "semgrep": WORK / "semgrep.yml"}
    configs["ruff"].write_text(RUFF_CONFIG, encoding="utf-8")
    configs["semgrep"].write_text(SEMGREP_RULE, encoding="utf-8")
    subset = WORK / "fixit_subset"
    if subset.exists():
        shutil.rmtree(subset)
    files = sorted((corpus / "transformers").rglob("*.py"))[::FIXIT_EVERY]
    for path in files:
        target = subset / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    (subset / "pyproject.toml").write_text(FIXIT_CONFIG, encoding="utf-8")
    (subset / "direct_sdpa_rule.py").write_text(FIXIT_RULE, encoding="utf-8")
    configs["fixit"] = subset
    return configs


def megabytes(root: Path) -> tuple[int, float]:
    files = [p for p in root.rglob("*.py") if ".declint_cache" not in p.parts and p.name != "direct_sdpa_rule.py"]
    return len(files), sum(p.stat().st_size for p in files) / 1e6


# ---- the peer comparison ---------------------------------------------------------------------------


def declint_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "declint", "check", *args]


def peer_comparison(rounds: int, python: Path) -> dict[str, Any]:
    corpus = transformers_corpus()
    configs = write_configs(corpus)
    bin_dir = python.parent
    cache = corpus / ".declint_cache"
    touched = corpus / TOUCHED
    original = touched.read_bytes()

    def clear() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    def touch() -> None:
        touched.write_bytes(original + b"\n# touched by the benchmark\n")

    def untouch() -> None:
        touched.write_bytes(original)
        _age(touched)

    def touch_only() -> None:  # `touch`: a new mtime, the same bytes
        os.utime(touched)

    _age(corpus)
    semgrep_env = {"SEMGREP_ENABLE_VERSION_CHECK": "0", "SEMGREP_SEND_METRICS": "off"}
    cases = [
        Case("declint cold", declint_command("transformers"), corpus, before=clear),
        Case("declint warm", declint_command("transformers"), corpus),
        # Right after the warm run, whose snapshot holds the file's digest (after the case below
        # the cache holds the appended comment, and the file's bytes differ from it).
        Case(
            "declint one file touched, same bytes",
            declint_command("transformers"),
            corpus,
            before=touch_only,
            after=lambda: _age(touched),
        ),
        Case("declint one file touched", declint_command("transformers"), corpus, before=touch, after=untouch),
        Case(
            "declint cold, check-syntax = true",
            declint_command("--config", "declint-check-syntax.toml", "transformers"),
            corpus,
            before=clear,
        ),
        Case("declint cold, 1 job", declint_command("--jobs", "1", "transformers"), corpus, before=clear),
        Case(
            "ruff TID251 --no-cache",
            [str(bin_dir / "ruff"), "check", "--no-cache", "--config", str(configs["ruff"]), "transformers"],
            corpus,
        ),
        Case(
            "semgrep -j 2",
            [str(bin_dir / "semgrep"), *SEMGREP_ARGS, "-j", "2", "--config", str(configs["semgrep"]), "transformers"],
            corpus,
            env=semgrep_env,
        ),
        Case(
            f"Fixit QualifiedNameProvider rule, every {FIXIT_EVERY}th file",
            [str(bin_dir / "fixit"), "lint", "."],
            configs["fixit"],
        ),
    ]
    try:
        alternate(cases, rounds, "transformers")
    finally:
        untouch()
        clear()
    files, size = megabytes(corpus / "transformers")
    subset_files, subset_size = megabytes(configs["fixit"])
    timings = {case.name: case.summary() for case in cases}
    return {
        "corpus": {"files": files, "megabytes": round(size, 2), "fixit_subset": [subset_files, round(subset_size, 2)]},
        "timings": timings,
        "ratios": _ratios(timings, size, subset_size),
        "findings": compare_findings(corpus, configs, bin_dir, semgrep_env),
    }


def _ratios(timings: dict[str, Any], size: float, subset_size: float) -> dict[str, float]:
    def median(name: str) -> float:
        return float(timings[name]["median_s"])

    fixit = next(name for name in timings if name.startswith("Fixit"))
    fixit_s_per_mb = median(fixit) / subset_size
    return {
        "cold / semgrep": round(median("declint cold") / median("semgrep -j 2"), 3),
        "cold (check-syntax = true) / semgrep": round(
            median("declint cold, check-syntax = true") / median("semgrep -j 2"), 3
        ),
        "Fixit s per MB / declint cold s per MB": round(fixit_s_per_mb / (median("declint cold") / size), 1),
        "Fixit s per MB / declint cold (check-syntax = true) s per MB": round(
            fixit_s_per_mb / (median("declint cold, check-syntax = true") / size), 1
        ),
        "Fixit extrapolated to the corpus, s": round(fixit_s_per_mb * size, 1),
        "warm / ruff --no-cache": round(median("declint warm") / median("ruff TID251 --no-cache"), 3),
        "one file touched / warm": round(median("declint one file touched") / median("declint warm"), 3),
        "one file touched, same bytes / warm": round(
            median("declint one file touched, same bytes") / median("declint warm"), 3
        ),
    }


def compare_findings(corpus: Path, configs: dict[str, Path], bin_dir: Path, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        declint_command("--no-cache", "--select", "DL101", "--format", "json", "transformers"),
        cwd=corpus,
        capture_output=True,
        check=False,
    )
    declint = {(f["path"], f["line"]) for f in json.loads(out.stdout)["findings"]}
    out = subprocess.run(
        [
            str(bin_dir / "semgrep"),
            *SEMGREP_ARGS,
            "--json",
            "-j",
            "2",
            "--config",
            str(configs["semgrep"]),
            "transformers",
        ],
        cwd=corpus,
        capture_output=True,
        env={**os.environ, **env},
        check=False,
    )
    semgrep = {(r["path"], r["start"]["line"]) for r in json.loads(out.stdout)["results"]}
    out = subprocess.run(
        [str(bin_dir / "ruff"), "check", "--no-cache", "--config", str(configs["ruff"]), *RUFF_JSON, "transformers"],
        cwd=corpus,
        capture_output=True,
        check=False,
    )
    ruff = sorted((r["filename"], r["location"]["row"]) for r in json.loads(out.stdout))
    ruff_rel = [(str(Path(name).relative_to(corpus)), row) for name, row in ruff]
    explained = [_explain(corpus, path, row, declint) for path, row in ruff_rel]
    return {
        "declint_DL101": sorted(declint),
        "semgrep": sorted(semgrep),
        "declint_equals_semgrep": declint == semgrep,
        "ruff_TID251": len(ruff_rel),
        "ruff_kinds": {kind: sum(1 for k, _ in explained if k == kind) for kind in sorted({k for k, _ in explained})},
        "ruff_lines": [
            {"path": p, "line": r, "kind": k, "text": t} for (p, r), (k, t) in zip(ruff_rel, explained, strict=True)
        ],
    }


def _explain(corpus: Path, path: str, row: int, declint: set[tuple[str, int]]) -> tuple[str, str]:
    """Why ruff's TID251 reports a line: the call declint reports too, or an import or reference."""
    text = (corpus / path).read_text(encoding="utf-8").splitlines()[row - 1].strip()
    if (path, row) in declint:
        return "call (declint reports it too)", text
    if text.startswith(("import ", "from ")):
        return "import", text
    if "scaled_dot_product_attention(" in text:
        return "call on a later line of a multi-line expression, or in a comment/string", text
    return "reference, not a call", text


# ---- generated trees --------------------------------------------------------------------------------


def tree(size: int, model_share: float = 0.03, suffix: str = "", mention_files: int | None = None) -> Path:
    """The generated tree (made once, and again when asked with another `mention_files`)."""
    root = WORK / "trees" / f"{size}{suffix}"
    manifest = root / "manifest.json"
    made = json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else None
    if made is None or (mention_files is not None and made.get("mention_files") != mention_files):
        if root.exists():
            shutil.rmtree(root)
        command = [sys.executable, str(HERE / "gen_tree.py"), str(root), "--files", str(size)]
        command += ["--model-share", str(model_share)]
        command += ["--mention-files", str(mention_files)] if mention_files is not None else []
        subprocess.run(command, check=True)
        _age(root)
    return root


def mention_files(root: Path) -> int:
    """How many filler files of a generated tree mention attn_backend (see gen_tree.py)."""
    made = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    if "mention_files" in made:
        return int(made["mention_files"])
    marker = b"def choose(config, fallback):"  # a tree generated before the manifest counted them
    return sum(marker in path.read_bytes() for path in root.rglob("*.py"))


def tree_cases(root: Path, label: str) -> list[Case]:
    cache = root / ".declint_cache"
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    models = sorted(manifest["expected"])[:PRECOMMIT_FILES]
    edited = root / models[0]
    plain = plain_file(root, sorted(manifest["expected"]))
    with_plain = [plain, *models[: PRECOMMIT_FILES - 1]]

    def clear() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    touch, untouch = _edit_in_place(edited)
    renamed, unrenamed = _edit_by_rename(edited)
    edit_plain, restore_plain = _edit_in_place(root / plain)

    return [
        Case(f"{label} cold", declint_command("."), root, before=clear),
        Case(
            f"{label} cold, check-syntax = true",
            declint_command("--config", "check-syntax.toml", "."),
            root,
            before=clear,
        ),
        Case(f"{label} warm", declint_command("."), root, before=lambda: _warm(root)),
        Case(f"{label} pre-commit, {PRECOMMIT_FILES} files, warm", declint_command(*models), root),
        Case(
            f"{label} pre-commit, {PRECOMMIT_FILES} files, 1 edited",
            declint_command(*models),
            root,
            before=touch,
            after=untouch,
        ),
        Case(
            f"{label} pre-commit, {PRECOMMIT_FILES} files, 1 edited, saved by rename",
            declint_command(*models),
            root,
            before=renamed,
            after=unrenamed,
        ),
        Case(
            f"{label} pre-commit, {PRECOMMIT_FILES} files, 1 with no needle edited",
            declint_command(*with_plain),
            root,
            before=edit_plain,
            after=restore_plain,
        ),
    ]


def _edit_in_place(path: Path) -> tuple[Callable[[], None], Callable[[], None]]:
    """(append a comment, restore the bytes and age them): written in place, as an editor saves."""
    original = path.read_bytes()

    def edit() -> None:
        path.write_bytes(original + b"\n# edited\n")

    def restore() -> None:
        path.write_bytes(original)
        _age(path)

    return edit, restore


def _edit_by_rename(path: Path) -> tuple[Callable[[], None], Callable[[], None]]:
    """(append a comment, restore the bytes and age them): saved as editors' safe write and git
    do, a new file renamed over the old one (its directory's mtime moves; its entries do not).
    Other bytes than `_edit_in_place`'s: the check of those is cached by the case before."""
    original = path.read_bytes()
    fresh = path.with_name(path.name + ".tmp")

    def edit() -> None:
        fresh.write_bytes(original + b"\n# edited, saved by rename\n")
        os.replace(fresh, path)

    def restore() -> None:
        path.write_bytes(original)
        _age(path)

    return edit, restore


def plain_file(tree: Path, models: list[str]) -> str:
    """The first filler file (sorted) with a class statement and without the words every needle
    of declint's default configuration contains one of: a file no needle matches."""
    gates = (b"backend", b"attention", b"metadata", b"literal", b"declint", b"multimodal", b"register_input")
    for path in sorted(tree.rglob("*.py")):
        rel, data = path.relative_to(tree).as_posix(), path.read_bytes()
        if rel not in models and b"\nclass " in data and not any(gate in data.lower() for gate in gates):
            return rel
    raise SystemExit(f"no file without a needle in {tree}")


def _warm(root: Path) -> None:
    """Make sure the default configuration's cache is the one of the tree as it is."""
    completed(declint_command("."), cwd=root)  # a failure here would leave the warm cases timing something else


def peak_rss(root: Path, *args: str) -> dict[str, float]:
    """Peak RSS (MB) of the declint process and of its largest worker, cold."""
    shutil.rmtree(root / ".declint_cache", ignore_errors=True)
    code = (
        "import json, resource, sys\nfrom declint.cli import main\n"
        f"sys.argv = ['declint', 'check', *{list(args)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps({'main_mb': round(own, 1), 'largest_worker_mb': round(worker, 1)}), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, check=False)
    return dict(json.loads(done.stderr.decode().strip().splitlines()[-1]))


def scaling(rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {"trees": {}}
    roots = {f"{size}": tree(size) for size in TREE_SIZES}
    # Same 30 model files and as many files mentioning attn_backend as the 1k tree, the rest filler
    # that no needle matches: what files that cannot match cost. (Until 2026-12-02 this tree had
    # 1% of its filler mention attn_backend, as the others do: ~190 files that can match, counted
    # as files that cannot.)
    roots["20000, 30 models"] = tree(20000, 30 / 20000, "-30models", mention_files(roots["1000"]))
    cases_of: dict[str, list[Case]] = {}
    for label, root in roots.items():
        (root / "check-syntax.toml").write_text('roots = ["."]\ncheck-syntax = true\n', encoding="utf-8")
        cases_of[label] = tree_cases(root, label)
    # Each round runs every case of every tree: the slopes compare trees measured at the same
    # moments of a shared machine, not one tree's rounds against another's minutes later.
    alternate([case for cases in cases_of.values() for case in cases], rounds, "trees")
    for label, root in roots.items():
        manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
        cases = cases_of[label]
        matching = sum((root / rel).stat().st_size for rel in _matching(root))
        results["trees"][label] = {
            "files": manifest["files"],
            "megabytes": round(manifest["bytes"] / 1e6, 2),
            "model_files": manifest["model_files"],
            "files_with_findings": manifest["files_with_findings"],
            "matching_megabytes": round(matching / 1e6, 3),
            "timings": {case.name.removeprefix(f"{label} "): case.summary() for case in cases},
            "peak_rss_cold": peak_rss(root, "."),
        }
        shutil.rmtree(root / ".declint_cache", ignore_errors=True)
    return results


def _matching(root: Path) -> list[str]:
    """Files whose bytes hold a rule's or the index's needle (what the prefilter lets through)."""
    needles = (b"scaled_dot_product_attention", b"attn_backend", b"attention_backend", b"backend_name")
    needles += (b"encoder_attention_backends", b"metadata_cls", b"MultimodalModelMixin", b"register_input_processor")
    needles += (b"AttentionMetadata", b"AttentionBackend", b"Literal", b"FixedEncoderAttention")
    found = []
    for path in root.rglob("*.py"):
        data = path.read_bytes()
        if any(needle in data for needle in needles):
            found.append(str(path.relative_to(root)))
    return found


# ---- main -------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "declint_jobs_default": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
    }


# The installed packages and the checkout's sources they come from (pyproject.toml's package-dir).
_SOURCES = {"declint": "declint", "declint.rules": "rules", "declint.runtime_shim": "runtime_shim"}


def installed_declint() -> dict[str, Any]:
    """The commit of the declint this interpreter runs, after checking that it is the checkout's.

    `python -m declint` runs the copy `pip install .` put into the interpreter's environment; a
    run made after the sources changed, without installing them again, timed an older declint
    and said nothing (the run labelled 157752d in docs/benchmarks.md timed the install of
    e7f020e). Every `.py` file of the sources must be in the installed package, byte for byte."""
    where = "os.path.dirname(importlib.import_module(name).__file__)"
    code = f"import importlib, os\nfor name in {list(_SOURCES)!r}:\n    print({where})"
    found = subprocess.run([sys.executable, "-c", code], cwd=WORK, capture_output=True, text=True, check=True)
    stale = []
    for package, source in zip(found.stdout.splitlines(), _SOURCES.values(), strict=True):
        for path in sorted((REPO / source).glob("**/*.py")):
            copy = Path(package) / path.relative_to(REPO / source)
            if not copy.is_file() or copy.read_bytes() != path.read_bytes():
                stale.append(str(path.relative_to(REPO)))
    if stale:
        raise SystemExit(
            f"the declint installed for {sys.executable} is not this checkout's ({', '.join(stale[:5])}"
            f"{', ...' if len(stale) > 5 else ''} differ): run `{sys.executable} -m pip install .` first"
        )
    git = ["git", "-C", str(REPO)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
    changed = subprocess.run([*git, "status", "--porcelain", *_SOURCES.values()], capture_output=True, text=True)
    return {"commit": commit.stdout.strip(), "sources_changed_since": bool(changed.stdout.strip())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("all", "transformers", "trees"), default="all")
    parser.add_argument("--rounds", type=int, default=5, help="rounds for the transformers comparison")
    parser.add_argument("--tree-rounds", type=int, default=3)
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["declint"] = installed_declint()
    results["machine"] = machine()
    results["command"] = "python benchmarks/run.py " + " ".join(sys.argv[1:])
    if args.part in ("all", "transformers"):
        python = tools_python()
        results["tools"] = TOOLS
        results["transformers"] = peer_comparison(args.rounds, python)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    if args.part in ("all", "trees"):
        results["scaling"] = scaling(args.tree_rounds)
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS.relative_to(REPO)}")


if __name__ == "__main__":
    main()
