"""A file added to or removed from a tree the last run walked: only the directories whose entries
changed are walked again (`_Run.walk_patched`, `discovery.Subtrees`), for `declint check ROOT`,
for a directory asked for besides the roots (`declint check .`) and for files passed by path (a
pre-commit hook), and the run reports what a run without the cache reports, names every module
as that run names it, and leaves a record of the walk that the next run can trust. The demo's
top holds its one root, `tensorrt_llm`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from declint import engine as engine_module
from declint.cache import NO_CACHE_ENV
from declint.engine import Engine
from tests.conftest import settle
from tests.test_cache import MODELS, engine, lines

pytestmark = pytest.mark.usefixtures("cache_on")

ROOT = "tensorrt_llm"
ROOT_FILES = 37  # the Python files of the demo's root
ALL_DIRECTORIES = [  # those of the demo's root
    ROOT,
    ROOT + "/_torch",
    ROOT + "/_torch/attention_backend",
    ROOT + "/_torch/models",
    ROOT + "/_torch/modules",
    ROOT + "/llmapi",
]
RADIO = MODELS + "modeling_radio.py"
# A copy of modeling_radio.py: its encoder's SDPA call, which no model of the copy declares
# (`lines` gives 0-based columns: 15 in the report).
COPY_DL101 = (
    ":21:14: DL101 `RadioAttention.forward` calls torch.nn.functional.scaled_dot_product_attention"
    " directly in an encoder no model declares"
)


def _listed_by(
    run: Engine, root: Path, monkeypatch: pytest.MonkeyPatch, paths: tuple[Path, ...] = ()
) -> tuple[list[str], Any]:
    """The directories below `ROOT` that `run.run(paths)` lists (relative to `root`; `paths`
    default to `ROOT`), each once, sorted, and its result. (A directory whose stat moved is listed
    once to compare its entries with the last walk's, and once by the walk; DL108 lists the
    directories outside the roots, where it looks for serving schemas, in every run that walks.)"""
    listed: list[str] = []
    real_scandir = os.scandir

    def recording_scandir(path: Any = ".") -> Any:
        listed.append(Path(os.path.relpath(os.fspath(path), root)).as_posix())
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", recording_scandir)
    try:
        result = run.run(list(paths) or [root / ROOT])
    finally:
        monkeypatch.setattr(os, "scandir", real_scandir)
    return sorted({directory for directory in listed if directory.startswith(ROOT)}), result


def _modules(run: Engine, root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], list[str]]:
    """The module names `run` gave every file, and its findings."""
    retained: list[object] = []
    monkeypatch.setattr(engine_module, "RETAINED", retained)
    result = run.run([root / ROOT])
    monkeypatch.setattr(engine_module, "RETAINED", None)
    (last,) = retained
    modules: dict[str, str] = last.modules  # type: ignore[attr-defined]
    return modules, lines(result)


def test_a_file_added_walks_its_directory_alone_and_reports_what_a_run_without_the_cache_reports(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine(demo).run([demo / ROOT])
    shutil.copy(demo / RADIO, demo / MODELS / "modeling_added.py")
    patched = engine(demo)
    listed, result = _listed_by(patched, demo, monkeypatch)
    assert listed == [MODELS.rstrip("/")]
    assert patched.stats.directories_rewalked == 1
    assert patched.stats.files_read == 1  # the new file; the others' stats are the snapshot's
    found = lines(result)
    assert found == lines(engine(demo, cache=False).run([demo / ROOT]))
    assert f"{MODELS}modeling_added.py{COPY_DL101}" in "\n".join(found)


def test_a_file_removed_walks_its_directory_alone_and_its_findings_go(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = lines(engine(demo).run([demo / ROOT]))
    assert any(line.startswith(RADIO + ":") for line in before)
    (demo / RADIO).unlink()
    patched = engine(demo)
    listed, result = _listed_by(patched, demo, monkeypatch)
    assert listed == [MODELS.rstrip("/")] and patched.stats.directories_rewalked == 1
    found = lines(result)
    assert found == lines(engine(demo, cache=False).run([demo / ROOT]))
    assert not any(line.startswith(RADIO + ":") for line in found)


def test_a_new_package_is_walked_with_the_directory_that_holds_it_and_named_as_a_walk_names_it(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine(demo).run([demo / ROOT])
    package = demo / MODELS / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    shutil.copy(demo / RADIO, package / "modeling_inner.py")
    patched = engine(demo)
    listed, _ = _listed_by(patched, demo, monkeypatch)
    assert listed == [MODELS.rstrip("/"), MODELS + "pkg"] and patched.stats.directories_rewalked == 2
    settle(demo)
    (package / "modeling_second.py").write_text("x = 1\n", encoding="utf-8")
    modules, found = _modules(engine(demo), demo, monkeypatch)
    assert modules[MODELS + "pkg/modeling_second.py"] == "tensorrt_llm._torch.models.pkg.modeling_second"
    uncached_modules, uncached = _modules(engine(demo, cache=False), demo, monkeypatch)
    assert (modules, found) == (uncached_modules, uncached)
    assert f"{MODELS}pkg/modeling_inner.py{COPY_DL101}" in "\n".join(found)


def test_a_module_added_beside_a_package_directory_renames_the_files_below_it(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`pkg/` without `__init__.py` is a namespace package of the models package until a module
    `pkg.py` is beside it (which Python imports instead): the file below it is `modeling_inner`
    then. The directory that changed holds `pkg/`, so the walk again covers the file below."""
    (demo / MODELS / "pkg").mkdir()
    shutil.copy(demo / RADIO, demo / MODELS / "pkg" / "modeling_inner.py")
    settle(demo)
    before, _ = _modules(engine(demo), demo, monkeypatch)
    assert before[MODELS + "pkg/modeling_inner.py"] == "tensorrt_llm._torch.models.pkg.modeling_inner"
    (demo / MODELS / "pkg.py").write_text("x = 1\n", encoding="utf-8")
    patched = engine(demo)
    modules, found = _modules(patched, demo, monkeypatch)
    assert patched.stats.directories_rewalked == 2
    assert modules[MODELS + "pkg/modeling_inner.py"] == "modeling_inner"
    assert (modules, found) == _modules(engine(demo, cache=False), demo, monkeypatch)


def test_a_gitignore_added_excludes_what_it_names_and_the_next_run_takes_the_walk_it_recorded(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine(demo).run([demo / ROOT])
    (demo / MODELS / ".gitignore").write_text("modeling_radio.py\n", encoding="utf-8")
    settle(demo)  # (a .gitignore within the racy window: the run would write no snapshot)
    patched = engine(demo)
    found = lines(patched.run([demo / ROOT]))
    assert patched.stats.directories_rewalked == 1
    assert found == lines(engine(demo, cache=False).run([demo / ROOT]))
    assert not any(line.startswith(RADIO + ":") for line in found)
    again = engine(demo)
    listed, result = _listed_by(again, demo, monkeypatch)
    assert listed == [] and lines(result) == found and again.stats.files_read == 0


@pytest.mark.parametrize("change", ["a file added at the top of the root", "a .gitignore edited"])
def test_a_change_the_last_walk_cannot_place_walks_the_whole_tree(
    demo: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """The root given is walked whole when its own entries changed, as it is when a path of the
    last walk's record that is not a directory it listed moved (an ignore file's content)."""
    (demo / MODELS / ".gitignore").write_text("# nothing ignored\n", encoding="utf-8")
    settle(demo)
    engine(demo).run([demo / ROOT])
    if change == "a file added at the top of the root":
        shutil.copy(demo / RADIO, demo / ROOT / "modeling_top.py")
    else:
        (demo / MODELS / ".gitignore").write_text("modeling_radio.py\n", encoding="utf-8")
    full = engine(demo)
    listed, result = _listed_by(full, demo, monkeypatch)
    assert full.stats.directories_rewalked == 0 and listed == ALL_DIRECTORIES
    assert lines(result) == lines(engine(demo, cache=False).run([demo / ROOT]))


def test_a_pre_commit_run_passing_a_file_just_added_walks_its_directory_alone(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook passes the staged files by path: the new one, found afresh as the full path finds
    it, and the index's walk of the roots patched around its directory."""
    engine(demo).run([demo / ROOT])
    shutil.copy(demo / RADIO, demo / MODELS / "modeling_added.py")
    staged = (demo / MODELS / "modeling_added.py", demo / MODELS / "modeling_step3vl.py")
    patched = engine(demo)
    listed, result = _listed_by(patched, demo, monkeypatch, staged)
    assert listed == [MODELS.rstrip("/")] and patched.stats.directories_rewalked == 1
    uncached = engine(demo, cache=False).run(list(staged))
    assert lines(result) == lines(uncached) and (result.files_checked, result.files_indexed) == (2, ROOT_FILES + 1)
    assert f"{MODELS}modeling_added.py{COPY_DL101}" in "\n".join(lines(result))


def test_a_file_outside_the_roots_checked_by_the_last_run_is_indexed_only_when_asked_for_again(
    demo: Path,
) -> None:
    """The index holds the roots' files and the files asked for: a run that does not ask for a
    file outside the roots again indexes what a run without the cache indexes, though the last
    run's snapshot holds that file (until 2026-12-07 it was counted, and indexed, again)."""
    (demo / "scripts").mkdir()
    shutil.copy(demo / RADIO, demo / "scripts" / "tool.py")
    settle(demo)
    step3 = demo / MODELS / "modeling_step3vl.py"
    first = engine(demo).run([step3, demo / "scripts" / "tool.py"])
    assert first.files_indexed == ROOT_FILES + 1  # and the script
    for asked in ([step3], [demo / ROOT], [step3, demo / "scripts" / "tool.py"]):
        cached = engine(demo).run(asked)
        uncached = engine(demo, cache=False).run(asked)
        assert (lines(cached), cached.files_indexed) == (lines(uncached), uncached.files_indexed)
        assert cached.files_indexed == ROOT_FILES + (len(asked) == 2)
    # The last run asked for the script too; a file added then, and the hook passing it, patches
    # the walk of the roots without it.
    shutil.copy(demo / RADIO, demo / MODELS / "modeling_added.py")
    staged = [step3, demo / MODELS / "modeling_added.py"]
    patched = engine(demo)
    result = patched.run(staged)
    assert patched.stats.directories_rewalked == 1 and result.files_indexed == ROOT_FILES + 1
    assert lines(result) == lines(engine(demo, cache=False).run(staged))


def test_a_gitignore_above_the_directory_walked_again_applies_to_the_file_added(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (demo / ROOT / ".gitignore").write_text("generated_*.py\n", encoding="utf-8")
    settle(demo)
    engine(demo).run([demo / ROOT])
    shutil.copy(demo / RADIO, demo / MODELS / "generated_radio.py")
    shutil.copy(demo / RADIO, demo / MODELS / "modeling_added.py")
    patched = engine(demo)
    listed, result = _listed_by(patched, demo, monkeypatch)
    assert listed == [MODELS.rstrip("/")] and patched.stats.directories_rewalked == 1
    found = lines(result)
    assert found == lines(engine(demo, cache=False).run([demo / ROOT]))
    assert f"{MODELS}modeling_added.py{COPY_DL101}" in "\n".join(found) and "generated_radio" not in "\n".join(found)
    assert result.files_indexed == ROOT_FILES + 1


def test_a_name_the_walk_skips_in_the_directory_walked_again_walks_the_whole_tree(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A skipped path is reported where the walk found it: the full walk finds them all."""
    engine(demo).run([demo / ROOT])
    (demo / MODELS / "modeling_added.py").write_text("x = 1\n", encoding="utf-8")
    os.close(os.open(os.fsencode(demo / MODELS) + b"/modeling_\xff.py", os.O_CREAT | os.O_WRONLY, 0o644))
    full = engine(demo)
    listed, result = _listed_by(full, demo, monkeypatch)
    assert full.stats.directories_rewalked == 0 and listed == ALL_DIRECTORIES
    found = lines(result)
    assert found == lines(engine(demo, cache=False).run([demo / ROOT]))
    assert any(line.startswith(MODELS + "modeling_\\xff.py:1:0: DL000 ") for line in found)


def test_timings_say_how_many_directories_were_walked_again(demo: Path) -> None:
    def check(*options: str) -> subprocess.CompletedProcess[str]:
        env = {name: value for name, value in os.environ.items() if name != NO_CACHE_ENV}
        command = [sys.executable, "-m", "declint", "check", *options, ROOT]
        return subprocess.run(command, cwd=demo, env=env, capture_output=True, text=True, check=False)

    check()
    shutil.copy(demo / RADIO, demo / MODELS / "modeling_added.py")
    timed = check("--timings")
    assert timed.stdout == check("--no-cache").stdout and "modeling_added.py:21:15: DL101 " in timed.stdout
    said = "declint: a file added or removed since the last run: 1 directory walked again, the rest of its walk kept"
    assert said in timed.stderr.splitlines()


@pytest.mark.parametrize("where", [MODELS, "docs/", "", ROOT + "/"])
def test_checking_the_project_top_patches_both_walks(demo: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """`declint check .` on the demo walks the top for the files to check and `tensorrt_llm` for
    the index: a file added in the models directory patches both walks, one added in `docs/`
    (outside the roots) the first alone; one added at the top, or at the top of the root (where
    the index's walk begins), walks both again."""
    engine(demo).run([demo])
    shutil.copy(demo / RADIO, demo / where / "modeling_added.py")
    run = engine(demo)
    listed, result = _listed_by(run, demo, monkeypatch, (demo,))
    uncached = engine(demo, cache=False).run([demo])
    assert (lines(result), result.files_indexed) == (lines(uncached), uncached.files_indexed)
    assert f"{where}modeling_added.py{COPY_DL101}" in "\n".join(lines(result))
    assert result.files_indexed == ROOT_FILES + 1  # (a file checked is indexed too)
    patched = where in (MODELS, "docs/")
    assert run.stats.directories_rewalked == (1 if patched else 0)
    assert listed == ([MODELS.rstrip("/")] if where == MODELS else [] if patched else ALL_DIRECTORIES)
