"""Differential fuzzing of the cache: after any sequence of edits, a run that uses the cache (the
snapshot, its patch, the per-file entries, the walk it keeps) reports exactly what a run without
it reports.

Each sequence copies the demo tree (or generates a small tree with the benchmarks' generator,
whose fillers name no needle), runs once to fill the cache, then applies random edits of the
kinds a working tree sees (a comment appended, a line deleted, a line's comment replaced in
place, a comment or blank line inserted, a backend name retyped, a suppression added, a file
created, copied, renamed or deleted, a package marker removed, the shared Literal or the docs
table changed, a touch with the same bytes, a save by rename, an option of the configuration
toggled, a .gitignore added or removed, a symlink added, a subclass of a class from another file
written anywhere, a class's bases replaced, a declaration renamed away, a copy of the shared
Literal written anywhere, an import appended to a model file), each followed by a run with the
cache and one without, in this process (`Engine.run`, inline or in workers) or through the
command line (`python -m declint check --output-format json`, its start-up stats child and
workers included, against `--no-cache`). In process, the demo is also checked by its one root
(`tensorrt_llm`: the checked files are the index's) and by the files of its models directory
passed by path (a pre-commit hook's request), the requests whose walk a file added or removed
patches, and by a few files passed by path (three models, a mutation appends an import to one of
them: an edit that changes a model's facts is then patched, the findings of the files asked for
confirmed or checked again). Most steps age what they wrote past the racy window, so that the
cache trusts the stats (the paths that can go stale); some leave it racy. In process, the run
without the cache is also compared with a run that indexes every file in full (`full_index`):
the prefilter may make a run faster, never change what it reports.
The same holds for runs over texts in place of files (an editor's buffer, `--stdin-filename`;
the fixed texts `--fix` re-lints), which start from the snapshot the last run left, the text
taken as an edit of its file: after each step, such runs with the cache report what they report
without it, in process and through the command line.
CI runs a fixed-seed sample; a longer campaign:

    DECLINT_CACHE_FUZZ_SEQUENCES=200 DECLINT_CACHE_FUZZ_CLI_SEQUENCES=50 DECLINT_CACHE_FUZZ_STEPS=15 \
        pytest tests/test_cache_differential.py
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from benchmarks.gen_tree import generate
from declint import lazy
from declint.discovery import glob_match
from declint.types import RunResult
from tests.conftest import DEMO, copy_project, settle
from tests.test_cache import LITERAL, engine

SEQUENCES = int(os.environ.get("DECLINT_CACHE_FUZZ_SEQUENCES", "2"))
CLI_SEQUENCES = int(os.environ.get("DECLINT_CACHE_FUZZ_CLI_SEQUENCES", "1"))
STEPS = int(os.environ.get("DECLINT_CACHE_FUZZ_STEPS", "6"))
FIRST_SEED = int(os.environ.get("DECLINT_CACHE_FUZZ_SEED", "0"))
DOCS = "docs/encoder_attention_backends.md"
BACKENDS = ("VANILLA", "TRTLLM", "FLASHINFER")

Mutation = Callable[[random.Random, Path], str]


pytestmark = pytest.mark.usefixtures("cache_on")


@pytest.fixture(autouse=True)
def warmed_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs with workers warm their check worker as a fresh `declint` process would, though this
    test process loaded libcst (which turns the warming off: a fork inherits it)."""
    loaded = lazy.loaded
    monkeypatch.setattr(lazy, "loaded", lambda name: name != "libcst" and loaded(name))


def _sources(root: Path) -> list[Path]:
    """The Python files under the package (a symlink whose target is gone is not one)."""
    return sorted(p for p in (root / "tensorrt_llm").rglob("*.py") if ".declint_cache" not in p.parts and p.exists())


def _pick(rng: random.Random, root: Path) -> Path:
    return rng.choice(_sources(root))


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _rewrite(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def append_comment(rng: random.Random, root: Path) -> str:
    path = _pick(rng, root)
    _rewrite(path, path.read_text(encoding="utf-8") + f"# edited {rng.randrange(10**6)}\n")
    return f"comment appended to {_rel(path, root)}"


def delete_line(rng: random.Random, root: Path) -> str:
    path = _pick(rng, root)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if not lines:
        return f"nothing to delete in {_rel(path, root)}"
    number = rng.randrange(len(lines))
    del lines[number]
    _rewrite(path, "".join(lines))
    return f"line {number + 1} deleted from {_rel(path, root)}"


def retype_backend(rng: random.Random, root: Path) -> str:
    candidates = [p for p in _sources(root) if any(b in p.read_text(encoding="utf-8") for b in BACKENDS)]
    if not candidates:
        return "no backend name left to retype"
    path = rng.choice(candidates)
    text = path.read_text(encoding="utf-8")
    spots = list(re.finditer("|".join(BACKENDS), text))
    spot = rng.choice(spots)
    replacement = rng.choice([*BACKENDS, spot.group()[:-1], spot.group().lower(), "CUTLASS"])
    _rewrite(path, text[: spot.start()] + replacement + text[spot.end() :])
    return f"{spot.group()} at offset {spot.start()} of {_rel(path, root)} retyped as {replacement}"


ADDED_LINES = (
    'ENCODER_BACKEND = "FLASHINFER"\n',
    "import torch.nn.functional as F\n\n\ndef attend(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n",
    "x = 1  # declint: ignore[DL101] measured: the kernel is exact here\n",
    "x = 2  # declint: ignore[DL999]\n",
    "from typing import Literal\n\nBackends = Literal['VANILLA', 'TRTLLM', 'FLASHINFER']\n",
    "class Extra(object):\n    pass\n",
    "def broken(:\n",
)


def add_line(rng: random.Random, root: Path) -> str:
    path = _pick(rng, root)
    line = rng.choice(ADDED_LINES)
    _rewrite(path, path.read_text(encoding="utf-8") + "\n" + line)
    return f"{line.splitlines()[0]!r}... appended to {_rel(path, root)}"


def insert_line(rng: random.Random, root: Path) -> str:
    """A comment or a blank line inserted anywhere: every fact below it moves down (above a
    class of a file the index holds in full: an edit the patch takes, the project rules run
    again)."""
    path = _pick(rng, root)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    number = rng.randrange(len(lines) + 1)
    following = lines[number] if number < len(lines) else ""
    indent = following[: len(following) - len(following.lstrip(" \t"))]  # (a comment keeps the block's indent)
    lines.insert(number, rng.choice(["\n", f"{indent}# inserted {rng.randrange(10**6)}\n"]))
    _rewrite(path, "".join(lines))
    return f"line inserted before line {number + 1} of {_rel(path, root)}"


IN_PLACE = ("  # changed {number}", "  # declint: ignore[DL101] kept on purpose", "  # declint: ignore[DL105]")


def edit_line_in_place(rng: random.Random, root: Path) -> str:
    """A line's comment replaced or added, no line added or removed: the code's lines and
    columns stay, so a file the index holds in full keeps its facts (the patched path)."""
    path = _pick(rng, root)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    if not lines:
        return f"no line to edit in {_rel(path, root)}"
    number = rng.randrange(len(lines))
    comment = rng.choice(IN_PLACE).format(number=rng.randrange(10**6))
    lines[number] = lines[number].rstrip("\n").split("  #", 1)[0] + comment + "\n"
    _rewrite(path, "".join(lines))
    return f"line {number + 1} of {_rel(path, root)} given the comment {comment.strip()!r}"


def create_copy(rng: random.Random, root: Path) -> str:
    source = _pick(rng, root)
    target = source.with_name(f"modeling_copy{rng.randrange(1000)}.py")
    _rewrite(target, source.read_text(encoding="utf-8"))
    return f"{_rel(source, root)} copied to {_rel(target, root)}"


def rename_file(rng: random.Random, root: Path) -> str:
    source = _pick(rng, root)
    if source.name == "__init__.py" or _rel(source, root) == LITERAL:
        return f"{_rel(source, root)} kept"
    target = source.with_name(f"renamed_{rng.randrange(1000)}_{source.name}")
    os.replace(source, target)
    return f"{_rel(source, root)} renamed to {_rel(target, root)}"


def delete_file(rng: random.Random, root: Path) -> str:
    path = _pick(rng, root)
    path.unlink()
    return f"{_rel(path, root)} deleted"


def new_package(rng: random.Random, root: Path) -> str:
    package = root / "tensorrt_llm" / "_torch" / "models" / f"pkg{rng.randrange(100)}"
    package.mkdir(exist_ok=True)
    if rng.random() < 0.5:
        _rewrite(package / "__init__.py", "")
    source = rng.choice([p for p in _sources(root) if p.name.startswith("modeling_")] or _sources(root))
    _rewrite(package / "modeling_inner.py", source.read_text(encoding="utf-8"))
    return f"{_rel(source, root)} copied into {_rel(package, root)}"


def drop_package_marker(rng: random.Random, root: Path) -> str:
    markers = [p for p in _sources(root) if p.name == "__init__.py" and p.parent != root / "tensorrt_llm"]
    if not markers:
        return "no package marker left"
    path = rng.choice(markers)
    path.unlink()
    return f"{_rel(path, root)} deleted (a namespace package now)"


def edit_literal(rng: random.Random, root: Path) -> str:
    path = root / LITERAL
    if not path.exists():
        return "the shared Literal's module is gone"
    text = path.read_text(encoding="utf-8")
    name = rng.choice(BACKENDS)
    replacement = rng.choice(["", f'"{name}", "XFORMERS"', f'"{name.lower()}"'])
    quoted = f'"{name}"'
    if quoted not in text:
        _rewrite(path, text + f'\nEXTRA = "{name}"\n')
        return f"{name} not in the Literal; a constant added"
    edited = text.replace(quoted + ", ", replacement + (", " if replacement else ""), 1)
    if edited == text:
        edited = text.replace(quoted, replacement or '"NONE"', 1)
    _rewrite(path, edited)
    return f"{name} in the shared Literal replaced by {replacement or 'nothing'!r}"


def edit_docs(rng: random.Random, root: Path) -> str:
    path = root / DOCS
    if not path.exists():
        return "no docs table"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    rows = [i for i, line in enumerate(lines) if line.startswith("|") and not set(line) <= set("|-: \n")]
    if len(rows) < 2:
        _rewrite(path, text + "\nA note.\n")
        return "docs note appended"
    row = rng.choice(rows[1:])
    lines[row] = lines[row].replace("FLASHINFER", "TRTLLM", 1) if "FLASHINFER" in lines[row] else ""
    _rewrite(path, "".join(lines))
    return f"docs table row {row + 1} changed"


def touch_same_bytes(rng: random.Random, root: Path) -> str:
    path = _pick(rng, root)
    os.utime(path)
    return f"{_rel(path, root)} touched"


def save_by_rename(rng: random.Random, root: Path) -> str:
    path = _pick(rng, root)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(path.read_bytes() + b"\n# saved\n")
    os.replace(temporary, path)
    return f"{_rel(path, root)} saved by rename"


def toggle_config(rng: random.Random, root: Path) -> str:
    """One option of the configuration set when absent, removed when present."""
    path = root / "pyproject.toml"
    line = rng.choice(
        [
            'exclude = ["tensorrt_llm/_torch/models/modeling_mllama.py"]',
            'exclude = ["tensorrt_llm/_torch/attention_backend/"]',
            'ignore = ["DL103"]',
            'sdpa-allowed-paths = ["tensorrt_llm/_torch/models/*"]',
            'per-path-ignores = { "tensorrt_llm/_torch/models/*" = ["DL101"] }',
            "respect-gitignore = false",
        ]
    )
    key = line.split(" =")[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    kept = [existing for existing in lines if not existing.startswith(key + " =")]
    _rewrite(path, "\n".join(kept if kept != lines else [*lines, line]) + "\n")
    return f"{key} {'removed from' if kept != lines else 'set in'} the configuration"


def toggle_gitignore(rng: random.Random, root: Path) -> str:
    """A .gitignore that names an entry of its directory, or its removal."""
    directory = _pick(rng, root).parent
    path = directory / ".gitignore"
    if path.exists():
        path.unlink()
        return f"{_rel(path, root)} removed"
    name = rng.choice(sorted(entry.name for entry in directory.iterdir()))
    _rewrite(path, name + "\n")
    return f"{_rel(path, root)} ignores {name}"


def add_symlink(rng: random.Random, root: Path) -> str:
    """A symlink to a file beside it, or to a package directory (which the walk never follows)."""
    source = _pick(rng, root)
    if rng.random() < 0.5:
        link = source.with_name(f"linked_{rng.randrange(1000)}.py")
        target = source.name
    else:
        link = source.parent.with_name(f"{source.parent.name}_link{rng.randrange(1000)}")
        target = source.parent.name
    if link.exists() or link.is_symlink():
        return f"{_rel(link, root)} exists"
    link.symlink_to(target)
    return f"{_rel(link, root)} -> {target}"


def _module(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _plain_sources(root: Path) -> list[Path]:
    """Sources that hold none of the gates of the default needles (placeholders, mostly)."""
    gates = re.compile(r"(?i)attention|backend|metadata|literal|declint|multimodal|register_input")
    return [p for p in _sources(root) if not gates.search(p.read_text(encoding="utf-8"))]


def subclass_elsewhere(rng: random.Random, root: Path) -> str:
    """A class inheriting one defined in another file, written in any file or a new one (which may
    hold no needle: the prefilter's closure must index it through its bases, and the cache must
    see the base's file change)."""
    classes = [(p, name) for p in _sources(root) for name in re.findall(r"^class (\w+)", p.read_text("utf-8"), re.M)]
    if not classes:
        return "no class to inherit"
    models = [(p, name) for p, name in classes if name.endswith("Model")]
    source, base = rng.choice(models if models and rng.random() < 0.5 else classes)
    number = rng.randrange(1000)
    new = root / "tensorrt_llm" / "_torch" / f"helpers_{number}.py"
    target = rng.choice([rng.choice(_plain_sources(root) or _sources(root)), _pick(rng, root), new])
    module = _module(source, root)
    header, reference = rng.choice(
        [
            (f"from {module} import {base}", base),
            (f"from {module} import {base} as Base{number}", f"Base{number}"),
            (f"import {module} as parent{number}", f"parent{number}.{base}"),
        ]
    )
    body = rng.choice(["    pass", '    encoder_attention_backends = {"vision": ("VANILLA",)}', "    size = 3"])
    old = target.read_text(encoding="utf-8") if target.exists() else ""
    _rewrite(target, f"{old}\n{header}\n\n\nclass Sub{number}({reference}):\n{body}\n")
    return f"Sub{number}({reference}) of {_rel(source, root)} written in {_rel(target, root)}"


def rebase_class(rng: random.Random, root: Path) -> str:
    """A class statement's bases replaced: by another class of the file, by none, or by one of
    its bases alone (a model stops or starts being one, a subclass elsewhere follows)."""
    spots = [(p, m) for p in _sources(root) for m in re.finditer(r"^class \w+\(([^)]*)\):", p.read_text("utf-8"), re.M)]
    if not spots:
        return "no class with bases"
    path, spot = rng.choice(spots)
    text = path.read_text(encoding="utf-8")
    names = re.findall(r"^class (\w+)", text, re.M)
    bases = [b.strip() for b in spot.group(1).split(",") if b.strip()] or ["object"]
    replacement = rng.choice(["object", rng.choice(names), rng.choice(bases)])
    _rewrite(path, text[: spot.start(1)] + replacement + text[spot.end(1) :])
    return f"bases ({spot.group(1)}) at offset {spot.start(1)} of {_rel(path, root)} now ({replacement})"


def copy_literal(rng: random.Random, root: Path) -> str:
    """A copy of the shared Literal (DL100) in a file that may hold no other needle: the index reads
    such a file for its Literals only."""
    path = rng.choice(_plain_sources(root) or _sources(root)) if rng.random() < 0.5 else _pick(rng, root)
    members = ", ".join(f'"{name}"' for name in rng.sample(BACKENDS, 3))
    value = rng.choice([f"Literal[{members}]", f"Optional[Literal[{members}]]"])
    copy = f"from typing import Literal, Optional\n\nCopied{rng.randrange(1000)} = {value}\n"
    _rewrite(path, path.read_text(encoding="utf-8") + "\n" + copy)
    return f"{value} copied into {_rel(path, root)}"


def drop_declaration(rng: random.Random, root: Path) -> str:
    """A declaration renamed away (its model, and the subclasses that inherit it, lose it)."""
    candidates = [p for p in _sources(root) if "encoder_attention_backends =" in p.read_text(encoding="utf-8")]
    if not candidates:
        return "no declaration left"
    path = rng.choice(candidates)
    text = path.read_text(encoding="utf-8")
    _rewrite(path, text.replace("encoder_attention_backends =", "legacy_attention_backends =", 1))
    return f"a declaration of {_rel(path, root)} renamed away"


def import_in_asked_model(rng: random.Random, root: Path) -> str:
    """An import appended to one of the files `_few_staged` asks for: what it imports changes,
    nothing the closure starts from does (the patch of a changed index)."""
    path = rng.choice(_few_staged(root))
    _rewrite(path, path.read_text(encoding="utf-8") + f"\nimport os as _imported_{rng.randrange(10**6)}\n")
    return f"an import appended to {_rel(path, root)}"


MUTATIONS: tuple[Mutation, ...] = (
    append_comment,
    delete_line,
    retype_backend,
    add_line,
    edit_line_in_place,
    insert_line,
    create_copy,
    rename_file,
    delete_file,
    new_package,
    drop_package_marker,
    edit_literal,
    edit_docs,
    touch_same_bytes,
    save_by_rename,
    toggle_config,
    toggle_gitignore,
    add_symlink,
    subclass_elsewhere,
    rebase_class,
    drop_declaration,
    copy_literal,
    import_in_asked_model,
)


def _age(root: Path) -> None:
    """`settle`, and the directories written in the last seconds too (a walk within a directory's
    racy window writes no snapshot); the others keep their stats, so the listings a snapshot
    holds still hold and the runs after an edit take the paths that reuse them."""
    settle(root)
    now = time.time()
    for path in [root, *root.rglob("*")]:
        if path.is_symlink() or not path.is_dir() or ".declint_cache" in path.parts:
            continue
        if path.stat().st_mtime > now - 30:
            os.utime(path, (now - 60, now - 60))


def _observed(result: RunResult) -> tuple[object, ...]:
    return result.findings, result.suppressed, result.files_checked, result.files_indexed


def _cli(root: Path, *options: str) -> str:
    """The JSON report of `declint check` run as a user runs it (start-up stats, workers)."""
    command = [sys.executable, "-m", "declint", "check", "--output-format", "json", *options, "."]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


class Runner(NamedTuple):
    with_cache: Callable[[random.Random, Path], object]
    without_cache: Callable[[Path], object]
    # How `without_cache`'s answer differs from a run that indexes every file in full (the
    # prefilter may make a run faster, never change what it reports); None: not compared
    against_full_index: Callable[[Path, object], list[str]] | None = None


def _against_full_index(root: Path, observed: object) -> list[str]:
    """The differences between `observed` (a prefiltered run's) and a run that indexes every file
    in full. That run's index parses every file, so it also reports the syntax errors (DL000) of
    files outside `syntax-paths` that no rule or index needle matches (never parsed by default,
    README: `check-syntax`); apart from those, the same findings, suppressed findings and files
    checked."""
    assert isinstance(observed, tuple)
    findings, suppressed, checked, _ = observed  # (files_indexed: the prefilter's point is to index fewer)
    full_index = engine(root, cache=False, full_index=True)
    full = full_index.run([root])
    syntax_paths = full_index.config.str_list("syntax-paths")
    unparsed = [f for f in full.findings if f.code == "DL000" and not glob_match(f.path, syntax_paths)]
    differences = [f"only with the prefilter: {f}" for f in findings if f not in full.findings]
    differences += [f"only in full: {f}" for f in full.findings if f not in findings and f not in unparsed]
    if (suppressed, checked) != (full.suppressed, full.files_checked):
        differences.append(
            f"suppressed or files checked: {(suppressed, checked)} != {(full.suppressed, full.files_checked)}"
        )
    return differences


IN_PROCESS = Runner(
    lambda rng, root: _observed(engine(root, jobs=rng.choice((None, 2))).run([root])),  # inline, or workers
    lambda root: _observed(engine(root, cache=False).run([root])),
    _against_full_index,
)
THROUGH_THE_CLI = Runner(lambda rng, root: _cli(root), lambda root: _cli(root, "--no-cache"))


def _the_root(root: Path) -> list[Path]:
    """`declint check tensorrt_llm` on the demo: its one root, so the checked files are the index's
    (the walk a file added or removed patches; `.` walks the docs and schemas besides)."""
    return [root / "tensorrt_llm"]


def _staged(root: Path) -> list[Path]:
    """Files passed by path, as a pre-commit hook passes the staged ones: those of the models
    directory as it is now, where the mutations add, copy, rename and delete files."""
    return sorted((root / "tensorrt_llm" / "_torch" / "models").glob("*.py"))


def _few_staged(root: Path) -> list[Path]:
    """A pre-commit hook's request of a few files: the first three model files by name, the same
    from step to step (a snapshot holds the findings of the files its run checked: a file asked
    for anew takes the full path). An edit, of one of them or of another file, that changes what
    a model imports, defines, declares or calls is then patched, the findings of the files asked
    for confirmed or checked again against the index with the new facts (`_Run._with_others`)."""
    return sorted((root / "tensorrt_llm" / "_torch" / "models").glob("modeling_*.py"))[:3]


def _asking(paths: Callable[[Path], list[Path]]) -> Runner:
    return Runner(
        lambda rng, root: _observed(engine(root, jobs=rng.choice((None, 2))).run(paths(root))),
        lambda root: _observed(engine(root, cache=False).run(paths(root))),
    )


Tree = Callable[[int, Path], None]


def demo_tree(seed: int, root: Path) -> None:
    copy_project(DEMO, root)


def generated_tree(seed: int, root: Path) -> None:
    """A small tree of the benchmarks' generator: fillers that name no needle (placeholders the
    index holds, and bases the closure follows), a tenth of them models, hubs they import."""
    generate(root, 80, seed=seed, model_share=0.1)


def _sequence(seed: int, root: Path, runner: Runner, tree: Tree = demo_tree) -> None:
    rng = random.Random(seed)
    tree(seed, root)
    _age(root)
    runner.with_cache(random.Random(seed), root)  # fills the cache
    history: list[str] = []
    for step in range(STEPS):
        history.append(rng.choice(MUTATIONS)(rng, root))
        if rng.random() < 0.8:  # else: leave it racy, the cache must then re-read what it cannot trust
            _age(root)
        cached = runner.with_cache(rng, root)
        uncached = runner.without_cache(root)
        assert cached == uncached, f"seed {seed}, step {step}: " + "; ".join(history)
        if runner.against_full_index is not None:
            differences = runner.against_full_index(root, uncached)
            assert not differences, f"the prefilter, seed {seed}, step {step}: {'; '.join(history)}\n" + "\n".join(
                differences
            )


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_a_run_with_the_cache_reports_what_a_run_without_it_reports(tmp_path: Path, seed: int) -> None:
    _sequence(seed, tmp_path / "demo", IN_PROCESS)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_the_same_holds_on_a_generated_tree(tmp_path: Path, seed: int) -> None:
    _sequence(seed, tmp_path / "generated", IN_PROCESS, generated_tree)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_the_same_holds_checking_the_root_alone(tmp_path: Path, seed: int) -> None:
    _sequence(seed, tmp_path / "demo", _asking(_the_root))


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_the_same_holds_checking_files_passed_by_path(tmp_path: Path, seed: int) -> None:
    _sequence(seed, tmp_path / "demo", _asking(_staged))


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_the_same_holds_checking_a_few_files_passed_by_path(tmp_path: Path, seed: int) -> None:
    _sequence(seed, tmp_path / "demo", _asking(_few_staged))


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + CLI_SEQUENCES))
def test_the_command_line_with_the_cache_reports_what_it_reports_without(tmp_path: Path, seed: int) -> None:
    _sequence(seed, tmp_path / "demo", THROUGH_THE_CLI)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + CLI_SEQUENCES))
def test_the_command_line_holds_on_a_generated_tree(tmp_path: Path, seed: int) -> None:
    _sequence(seed, tmp_path / "generated", THROUGH_THE_CLI, generated_tree)


# ---- texts checked in place of their files (`--stdin-filename`, the fixes `--fix` tries) --------


def _edited_text(rng: random.Random, text: str) -> tuple[bytes, str]:
    """A text in place of a file's `text`, and what was done to it."""
    kind = rng.randrange(6)
    if kind == 1:
        return (text + f"# edited {rng.randrange(10**6)}\n").encode(), "a comment appended"
    if kind == 2 and text:
        lines = text.splitlines(keepends=True)
        number = rng.randrange(len(lines))
        return "".join(lines[:number] + lines[number + 1 :]).encode(), f"line {number + 1} deleted"
    spots = list(re.finditer("|".join(BACKENDS), text))
    if kind == 3 and spots:
        spot = rng.choice(spots)
        edited = text[: spot.start()] + spot.group().lower() + text[spot.end() :]
        return edited.encode(), f"{spot.group()} at offset {spot.start()} lower-cased"
    if kind == 4:
        line = rng.choice(ADDED_LINES)
        return (text + "\n" + line).encode(), f"{line.splitlines()[0]!r}... appended"
    if kind == 5:
        return b"\xff" + text.encode(), "an undecodable byte prepended"
    return text.encode(), "the same bytes"


def _overridden(rng: random.Random, root: Path, most: int = 3) -> tuple[dict[str, bytes], list[Path], str]:
    """Texts in place of one to `most` files (a file that does not exist, sometimes), and the
    paths a run over them is asked for: the tree, as `--fix` re-lints it, or the one file, as
    `--stdin-filename` checks it."""
    texts: dict[str, bytes] = {}
    said = []
    for _ in range(rng.choice((1, 1, 2, 3)[: most + 1])):
        if rng.random() < 0.1:
            rel, text = f"tensorrt_llm/_torch/models/modeling_new{rng.randrange(100)}.py", ""
        else:
            path = _pick(rng, root)
            rel, text = _rel(path, root), path.read_text(encoding="utf-8")
        texts[rel], what = _edited_text(rng, text)
        said.append(f"{rel}: {what}")
    one = len(texts) == 1 and (rng.random() < 0.5 or not (root / next(iter(texts))).exists())
    paths = [root / next(iter(texts))] if one else [root]
    return texts, paths, f"over {'the file' if one else 'the tree'}, " + "; ".join(said)


def _overridden_run(root: Path, texts: dict[str, bytes], paths: list[Path], **options: Any) -> object:
    return _observed(dataclasses.replace(engine(root, **options), overrides=texts).run(paths))


def _stdin_cli(root: Path, texts: dict[str, bytes], paths: list[Path], *options: str) -> str:
    """The JSON report of `declint check --stdin-filename` run as an editor runs it."""
    ((rel, text),) = texts.items()
    command = [sys.executable, "-m", "declint", "check", "--output-format", "json", *options, "--stdin-filename", rel]
    done = subprocess.run(command, cwd=root, input=text, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.decode()


class OverrideRunner(NamedTuple):
    most: int  # texts overridden at most in one run
    with_cache: Callable[[random.Random, Path, dict[str, bytes], list[Path]], object]
    without_cache: Callable[[Path, dict[str, bytes], list[Path]], object]


OVERRIDES_IN_PROCESS = OverrideRunner(
    3,
    lambda rng, root, texts, paths: _overridden_run(root, texts, paths, jobs=rng.choice((None, 2))),
    lambda root, texts, paths: _overridden_run(root, texts, paths, cache=False),
)
STDIN_THROUGH_THE_CLI = OverrideRunner(
    1,
    lambda rng, root, texts, paths: _stdin_cli(root, texts, paths),
    lambda root, texts, paths: _stdin_cli(root, texts, paths, "--no-cache"),
)


def _overrides_sequence(seed: int, root: Path, tree: Tree, runner: OverrideRunner = OVERRIDES_IN_PROCESS) -> None:
    rng = random.Random(seed)
    tree(seed, root)
    _age(root)
    history: list[str] = []
    for step in range(STEPS):
        engine(root, jobs=rng.choice((None, 2))).run([root])  # the snapshot the runs below start from
        for _ in range(2):
            texts, paths, said = _overridden(rng, root, runner.most)
            cached = runner.with_cache(rng, root, texts, paths)
            uncached = runner.without_cache(root, texts, paths)
            assert cached == uncached, f"seed {seed}, step {step}: {'; '.join(history)}; then {said}"
        history.append(rng.choice(MUTATIONS)(rng, root))
        if rng.random() < 0.8:
            _age(root)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_texts_in_place_of_files_are_reported_the_same_with_the_cache(tmp_path: Path, seed: int) -> None:
    _overrides_sequence(seed, tmp_path / "demo", demo_tree)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_texts_in_place_of_files_on_a_generated_tree(tmp_path: Path, seed: int) -> None:
    _overrides_sequence(seed, tmp_path / "generated", generated_tree)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + CLI_SEQUENCES))
def test_stdin_through_the_command_line_is_reported_the_same_with_the_cache(tmp_path: Path, seed: int) -> None:
    _overrides_sequence(seed, tmp_path / "generated", generated_tree, STDIN_THROUGH_THE_CLI)
