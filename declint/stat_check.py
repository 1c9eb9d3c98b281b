"""Comparing recorded stat keys with the disk: what a warm run cannot avoid.

A snapshot is replayed only when nothing it read changed since, so every file and directory it
holds is stat'ed again (as `git status` stats every file of its index). A stat is a system call
of ~3 us on Linux, plus ~1 us of Python around it: the 27k stats of a 20k-file tree were ~0.1 s
of a ~0.37 s pre-commit run. A long list is split with a forked child, which stats the second
half while this process stats the first (threads do not help: measured twice as slow, each stat
handing the GIL back and forth). Any failure of the child only costs its half done here.
"""

from __future__ import annotations

import os
import sys
from array import array
from collections.abc import Sequence

from declint import forked
from declint.cache import StatKey, path_key

Recorded = tuple[str, StatKey | None] | tuple[str, StatKey | None, str]

SPLIT_AT = 4096  # below this, the fork (~1-2 ms) costs more than half the stats save


def changed(pairs: Sequence[Recorded]) -> list[int]:
    """Indices (ascending) of the paths whose stat key is no longer the recorded one (None: the
    path did not exist, and a path that cannot be stat'ed now has the key None). Each item is
    (path, key) or (path, key, anything else)."""
    if len(pairs) < SPLIT_AT or not fork_pays():
        return _changed(pairs, 0, len(pairs))
    middle = len(pairs) // 2
    child = _start(pairs, middle, len(pairs))
    first = _changed(pairs, 0, middle)
    second = _finish(child) if child is not None else None
    return first + (second if second is not None else _changed(pairs, middle, len(pairs)))


def _changed(pairs: Sequence[Recorded], start: int, stop: int) -> list[int]:
    return [i for i in range(start, stop) if path_key(pairs[i][0]) != pairs[i][1]]


def fork_pays() -> bool:
    """A second core to run the child on, and a fork that shares this process's memory (Linux;
    elsewhere a fork without exec is not safe with every system library)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    return len(os.sched_getaffinity(0)) > 1


def _start(pairs: Sequence[Recorded], start: int, stop: int) -> forked.Child | None:
    """A child writing the changed indices of pairs[start:stop]."""
    return forked.start(lambda: array("q", _changed(pairs, start, stop)).tobytes())


def _finish(child: forked.Child) -> list[int] | None:
    """The child's indices; None when it failed (its half is then done here)."""
    data = forked.finish(child)
    if data is None or len(data) % 8:
        return None
    indices = array("q")
    indices.frombytes(data)
    return indices.tolist()
