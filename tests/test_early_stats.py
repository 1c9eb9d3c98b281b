"""The child forked at start-up that stats the last snapshot's files (`declint.early_stats`)."""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from declint import early_stats, stat_check
from declint.cache import FORMAT, NO_CACHE_ENV, Cache, Snapshot, disabled_by_env
from declint.config import OPTIONS
from tests.test_cache import MODELS, edit, engine, lines, move_facts

RADIO = MODELS + "modeling_radio.py"
RADIO_DL101 = f"{RADIO}:21:15: DL101 "


pytestmark = pytest.mark.usefixtures("cache_on")


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child is forked only with a second core to run it on; the machine may have one."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})


def test_its_constants_are_the_caches_and_the_configurations() -> None:
    """It cannot import them (it runs before any other import): they are copies, kept equal here."""
    defaults = {option.key: option.default for option in OPTIONS}
    assert defaults["cache-dir"] == early_stats.CACHE_DIR
    assert f"v{FORMAT}" == early_stats.FORMAT_DIR
    assert early_stats.NO_CACHE_ENV == NO_CACHE_ENV


def test_the_child_answers_what_stat_check_answers_for_the_snapshot_written_with_it(
    demo: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine(demo).run([demo])
    store = Cache.open(demo, early_stats.CACHE_DIR)
    assert store is not None
    walk_file = demo / ".declint_cache" / f"v{FORMAT}" / "last.walk"
    assert store.walk_file == walk_file and walk_file.is_file()
    snapshot = _snapshot(demo)
    assert len(snapshot.token) == 16
    edit(demo / RADIO, "out = torch.nn.functional", "out  = torch.nn.functional")
    os.mkdir(demo / MODELS / "new_package")  # a listed directory changes: the walk's list
    monkeypatch.chdir(demo / MODELS)  # found from a directory below the root too
    early_stats.start(["check", "x.py"])
    answer = early_stats.take(str(walk_file), snapshot.token)
    files = list(snapshot.files.values())
    assert answer is not None
    assert answer.files == stat_check.changed(files) == [list(snapshot.files).index(RADIO)]
    assert answer.walk == stat_check.changed(snapshot.walk) != []
    assert answer.inputs == stat_check.changed(snapshot.inputs) == []
    assert early_stats.take(str(walk_file), snapshot.token) is None  # asked once


@pytest.mark.parametrize("asked", ["another token", "another file"])
def test_an_answer_for_another_snapshot_is_not_taken(
    demo: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch, asked: str
) -> None:
    engine(demo).run([demo])
    walk_file = demo / ".declint_cache" / f"v{FORMAT}" / "last.walk"
    snapshot = _snapshot(demo)
    monkeypatch.chdir(demo)
    early_stats.start(["check"])
    if asked == "another token":
        assert early_stats.take(str(walk_file), "0123456789abcdef") is None
        assert early_stats.answered_another()  # the walk file names another snapshot: written again
    else:
        assert early_stats.take(str(demo / "elsewhere" / "last.walk"), snapshot.token) is None
        assert not early_stats.answered_another()  # another cache directory's: not this run's to write
    assert early_stats.take(str(walk_file), snapshot.token) is None  # asked once
    assert not early_stats.answered_another()  # each `take` answers for itself


@pytest.mark.parametrize(
    ("argv", "environment"),
    [(["rule", "DL101"], {}), (["check", "--no-cache"], {}), (["check"], {NO_CACHE_ENV: "1"})],
)
def test_no_child_without_a_check_that_uses_the_cache(
    demo: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch, argv: list[str], environment: dict[str, str]
) -> None:
    engine(demo).run([demo])
    monkeypatch.chdir(demo)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    early_stats.start(argv)
    assert early_stats._pending is None


@pytest.mark.parametrize("value", ["0", "false", "No", ""])
def test_a_value_of_declint_no_cache_that_leaves_the_cache_on_still_starts_the_child(
    demo: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """The cache reads DECLINT_NO_CACHE=0 as "on"; until 2026-12-06 the start-up child read any
    value as "off", and such a run stat'ed every file of the snapshot after its imports."""
    engine(demo).run([demo])
    monkeypatch.chdir(demo)
    monkeypatch.setenv(NO_CACHE_ENV, value)
    assert not disabled_by_env()
    early_stats.start(["check"])
    try:
        assert early_stats._pending is not None
    finally:
        early_stats.take("", "")  # reaps the child


def _check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != NO_CACHE_ENV}
    return subprocess.run(
        [sys.executable, "-m", "declint", "check", *args], cwd=root, env=env, capture_output=True, text=True
    )


STARTED = "declint: the snapshot's files were stat'ed while declint started (a child process)"
WARMED = "declint: check workers forked ahead to import libcst: 1, used by the check: 1"
SECOND_CORE = len(os.sched_getaffinity(0)) > 1 if hasattr(os, "sched_getaffinity") else False


@pytest.mark.parametrize("walk_file", ["as written", "damaged", "of another snapshot"])
def test_a_warm_pre_commit_run_reports_what_a_run_without_cache_reports(demo: Path, walk_file: str) -> None:
    """The console entry point forks the child; whatever the walk file holds, the findings are
    those of a run without the cache, before and after an edit that removes one."""
    _check(demo, ".")
    path = demo / ".declint_cache" / f"v{FORMAT}" / "last.walk"
    if walk_file == "damaged":
        path.write_bytes(b"\x00not marshal")
    elif walk_file == "of another snapshot":
        path.write_bytes(early_stats.dump("0123456789abcdef", ([], []), ([], []), ([], [])))
    uncached = _check(demo, "--no-cache", RADIO).stdout
    warm = _check(demo, "--timings", RADIO)
    assert warm.returncode == 1 and warm.stdout == uncached and RADIO_DL101 in uncached
    assert (STARTED in warm.stderr.splitlines()) is (walk_file == "as written" and SECOND_CORE)
    edit(demo / RADIO, "out = torch.nn.functional.scaled_dot_product_attention(q, k, v)", "out = q")
    move_facts(demo / RADIO)  # the full path (an edit that keeps the file's facts is patched)
    edited = _check(demo, "--timings", RADIO)
    assert edited.stdout == _check(demo, "--no-cache", RADIO).stdout
    assert RADIO_DL101 not in edited.stdout and edited.stdout != warm.stdout
    assert ", 1 checked, 0 results from the cache," in edited.stderr  # the edit was seen: checked again
    # ... by a worker forked as the run began, to import libcst meanwhile (given a second core)
    assert (WARMED in edited.stderr.splitlines()) is SECOND_CORE


def test_a_run_finding_the_walk_file_of_another_configuration_writes_its_own(demo: Path) -> None:
    """Two configurations (here two rule selections) keep their own snapshots but share the walk
    file, which the last one written names. A run of the other one, answered by its snapshot
    (which writes nothing else), writes its walk file again, so that its next runs get the child's
    stats (where there is a child: Linux, a second core); the findings stay those of a run
    without the cache."""
    _check(demo, ".")
    path = demo / ".declint_cache" / f"v{FORMAT}" / "last.walk"
    mine = _token(path)
    _check(demo, "--select", "DL101", ".")  # another run key: its own snapshot, and the walk file
    assert _token(path) != mine
    uncached = _check(demo, "--no-cache", ".").stdout
    first = _check(demo, "--timings", ".")
    assert first.stdout == uncached and STARTED not in first.stderr.splitlines()
    assert (_token(path) == mine) is SECOND_CORE  # its snapshot's, written again
    again = _check(demo, "--timings", ".")
    assert again.stdout == uncached
    assert (STARTED in again.stderr.splitlines()) is SECOND_CORE
    assert "cache save" not in again.stderr  # nothing written: the walk file names its snapshot


def _token(walk_file: Path) -> str:
    token: str = marshal.loads(walk_file.read_bytes())[0]
    return token


def test_a_file_added_walks_again_and_stats_in_process_only_the_files_the_child_saw_move(
    demo: Path, two_cores: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file added changes its directory's entries, so the last walk no longer holds and the
    tree is walked again; the child's stats of the snapshot's files still hold, and the scan
    takes in process only those of the files it saw move (a new file's reader stats it)."""
    engine(demo).run([demo])
    snapshot_files = set(_snapshot(demo).files)
    edit(demo / RADIO, "out = torch.nn.functional", "out  = torch.nn.functional")
    (demo / MODELS / "modeling_added.py").write_text("import torch\n", encoding="utf-8")
    monkeypatch.chdir(demo)
    early_stats.start(["check"])
    stated: list[str] = []
    real_stat = os.stat

    def recording_stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        stated.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", recording_stat)
    warm = engine(demo)
    found = lines(warm.run([demo]))
    monkeypatch.setattr(os, "stat", real_stat)
    assert warm.stats.stats_at_start
    in_process = {os.path.relpath(path, demo) for path in stated if path.endswith(".py")}
    assert in_process & snapshot_files == {RADIO}
    assert found == lines(engine(demo, cache=False).run([demo]))
    assert f"{RADIO}:21:15: DL101 " in "\n".join(found)  # the edit seen (0-based: 14 before it)


def _snapshot(root: Path) -> Snapshot:
    """The snapshot the last run over `root` wrote (one configuration: one snapshot)."""
    store = Cache.open(root, early_stats.CACHE_DIR)
    assert store is not None
    (path,) = (root / ".declint_cache" / f"v{FORMAT}").glob("*.snapshot")
    snapshot = store.load_snapshot(path.stem)
    assert snapshot is not None
    return snapshot
