"""The snapshot's stat comparison: the same indices whether or not a forked child does half."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from declint import forked, stat_check
from declint.cache import StatKey, path_key

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the split forks on Linux only")


def _tree(tmp_path: Path, count: int) -> list[tuple[str, StatKey | None]]:
    pairs: list[tuple[str, StatKey | None]] = []
    for number in range(count):
        path = tmp_path / f"f{number}.py"
        path.write_text("x = 1\n")
        pairs.append((str(path), path_key(str(path))))
    return pairs


def _change(pairs: list[tuple[str, StatKey | None]]) -> list[int]:
    """Edit one file early and one late (in the child's half), delete one, and record a path as
    missing that now exists: the indices that must be reported."""
    Path(pairs[3][0]).write_text("x = 22\n")
    Path(pairs[-5][0]).write_text("y = 333\n")
    os.remove(pairs[-2][0])
    pairs[10] = (pairs[10][0], None)
    return [3, 10, len(pairs) - 5, len(pairs) - 2]


@linux_only
def test_a_long_list_is_split_and_gives_every_change_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stat_check, "SPLIT_AT", 8)
    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)
    forks: list[int] = []
    real_fork = os.fork

    def counting_fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counting_fork)
    pairs = _tree(tmp_path, 40)
    assert stat_check.changed(pairs) == []
    expected = _change(pairs)
    assert stat_check.changed(pairs) == expected
    assert len(forks) == 2


def test_a_short_list_is_compared_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked for a short list")

    monkeypatch.setattr(os, "fork", no_fork)
    pairs = _tree(tmp_path, 40)
    assert stat_check.changed(pairs) == []
    assert stat_check.changed(pairs) == [] and len(pairs) < stat_check.SPLIT_AT
    assert stat_check.changed(pairs[:0]) == []
    expected = _change(pairs)
    assert stat_check.changed(pairs) == expected
    assert stat_check.changed([(path, key, "module") for path, key in pairs]) == expected  # a snapshot's entries


@linux_only
def test_a_fork_that_fails_costs_only_the_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stat_check, "SPLIT_AT", 8)
    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)

    def failing_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", failing_fork)
    pairs = _tree(tmp_path, 40)
    expected = _change(pairs)
    assert stat_check.changed(pairs) == expected


@linux_only
def test_a_child_that_dies_leaves_its_half_to_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child exits with status 1 after writing part of an answer: the answer is discarded."""
    monkeypatch.setattr(stat_check, "SPLIT_AT", 8)
    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)

    def dying_start(pairs: object, start: int, stop: int) -> forked.Child:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(write_end, b"\x01\x00\x00")  # a torn index
            os._exit(1)
        os.close(write_end)
        return forked.Child(pid, read_end)

    monkeypatch.setattr(stat_check, "_start", dying_start)
    pairs = _tree(tmp_path, 40)
    expected = _change(pairs)
    assert stat_check.changed(pairs) == expected
