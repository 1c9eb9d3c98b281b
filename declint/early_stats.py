"""Stat'ing the last snapshot's paths while the interpreter is still importing declint.

A warm pre-commit run is mostly start-up: importing click and declint (~0.16 s of CPU on a slow
2-core machine), then a stat of every file and directory of the last walk (27k on a 20k-file
tree, ~0.1 s) to know that the snapshot still holds. Neither needs the other until the snapshot
is compared, so the `declint` command forks, before it imports anything else, a child that stats
the paths of the last snapshot, which `Cache.save_snapshot` also writes with `marshal` (loaded
without importing declint's classes) next to it, while this process imports.

The child finds that file from the working directory up (`.declint_cache/v2/last.walk`): it
cannot know the configured `cache-dir` before the configuration is read. The engine takes the
child's answer only for the snapshot it loaded itself: the same file, and the token written with
that snapshot. Anything else (another cache directory, a snapshot written since, a failed child)
and it stats as before, so a wrong guess costs the other core's time, never a finding. Linux with
a second core only, as `stat_check`'s split.

Imports: os, sys, marshal and `declint.forked` only (this runs before everything else).
"""

from __future__ import annotations

import marshal
import os
import sys
from typing import NamedTuple

from declint import forked

StatKey = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode

CACHE_DIR = ".declint_cache"  # the default of the `cache-dir` option
FORMAT_DIR = "v2"  # `cache.FORMAT`'s directory (tested equal)
WALK_FILE = "last.walk"
NO_CACHE_ENV = "DECLINT_NO_CACHE"

# (token, then the path and recorded key lists of the snapshot's walk, inputs and files)
Lists = tuple[list[str], list[StatKey | None]]


class Answer(NamedTuple):
    """The child's answer: the indices (ascending) of the changed entries of each list."""

    walk: list[int]
    inputs: list[int]
    files: list[int]


class _Child(NamedTuple):
    walk_file: str  # absolute path of the file the child read
    process: forked.Child


_pending: _Child | None = None
# Whether the last `take` found the walk file the child read naming another snapshot (another
# version of declint, or another configuration, wrote it last).
_answered_another = False


def stat_key(stat: os.stat_result) -> StatKey:
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def path_key(path: str) -> StatKey | None:
    try:
        return stat_key(os.stat(path))
    except OSError:
        return None


def cache_off_by_env() -> bool:
    """Does DECLINT_NO_CACHE turn the cache off? Any value but "", "0", "false" and "no" does (the
    cache asks this too: the child must not be skipped for a value that leaves the cache on)."""
    return os.environ.get(NO_CACHE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def start(argv: list[str] | None = None) -> None:
    """Fork the child for a `check` that may use the cache, when a walk file is found."""
    global _pending
    argv = sys.argv[1:] if argv is None else argv
    if _pending is not None or "check" not in argv or "--no-cache" in argv or cache_off_by_env():
        return
    if not sys.platform.startswith("linux") or not hasattr(os, "fork") or len(os.sched_getaffinity(0)) < 2:
        return
    walk_file = _find_walk_file(os.getcwd())
    if walk_file is not None:
        _pending = _fork(walk_file)


def _find_walk_file(directory: str) -> str | None:
    while True:
        candidate = os.path.join(directory, CACHE_DIR, FORMAT_DIR, WALK_FILE)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _fork(walk_file: str) -> _Child | None:
    child = forked.start(lambda: marshal.dumps(_stat_all(walk_file)))
    return None if child is None else _Child(walk_file, child)


def _stat_all(walk_file: str) -> tuple[str, list[int], list[int], list[int]]:
    with open(walk_file, "rb") as handle:
        token, *lists = marshal.loads(handle.read())  # marshal.load reads a file object in small pieces: 10x slower
    changed = [[i for i, (path, key) in enumerate(zip(*pair, strict=True)) if path_key(path) != key] for pair in lists]
    return token, changed[0], changed[1], changed[2]


def take(walk_file: str, token: str) -> Answer | None:
    """The child's answer if it stat'ed the lists written with `token` in `walk_file`, else None.
    Waits for the child; asked once (a later call gets None)."""
    global _pending, _answered_another
    child, _pending = _pending, None
    _answered_another = False
    if child is None:
        return None
    reply = _reply(child)
    if child.walk_file != os.path.abspath(walk_file) or reply is None:
        return None
    if reply[0] != token:
        _answered_another = True
        return None
    return Answer(reply[1], reply[2], reply[3])


def answered_another() -> bool:
    """Did the last `take` find the walk file naming another snapshot than the one asked about?
    The run that asked then writes its own (`Cache.save_walk_file`): otherwise a run the snapshot
    answers, which writes none, would stat in process until its snapshot is written again."""
    return _answered_another


def _reply(child: _Child) -> tuple[str, list[int], list[int], list[int]] | None:
    data = forked.finish(child.process)
    if not data:
        return None
    try:
        reply = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    return reply if isinstance(reply, tuple) and len(reply) == 4 else None


def dump(token: str, walk: Lists, inputs: Lists, files: Lists) -> bytes:
    """The walk file's bytes (`Cache.save_snapshot` writes them)."""
    return marshal.dumps((token, walk, inputs, files))
