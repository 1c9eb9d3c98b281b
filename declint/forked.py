"""A forked child that computes some bytes and writes them to a pipe, and the parent's read of them.

Both of declint's children (`early_stats`, stat'ing the last snapshot's paths while declint
imports; `stat_check`, stat'ing half of a long list) work this way: the child touches nothing of
the parent's but its end of the pipe and leaves with `os._exit` (no cleanup of the parent's
objects, no buffered output flushed twice). Any failure reads as None, and the caller then does
the work itself. Imports: os only (`early_stats` runs before everything else).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable


class Child(NamedTuple):
    pid: int
    read_end: int


def start(produce: Callable[[], bytes]) -> Child | None:
    """A child writing `produce()`; None when no pipe or process could be made."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        status = 1
        try:
            os.close(read_end)
            view = memoryview(produce())
            while view:
                view = view[os.write(write_end, view) :]
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    return Child(pid, read_end)


def finish(child: Child) -> bytes | None:
    """What the child wrote, once it exited with status 0; None when it failed."""
    chunks: list[bytes] = []
    try:
        while chunk := os.read(child.read_end, 1 << 16):
            chunks.append(chunk)
    except OSError:
        chunks = []
    finally:
        os.close(child.read_end)
    try:
        _, status = os.waitpid(child.pid, 0)
    except OSError:
        return None
    return b"".join(chunks) if status == 0 else None
