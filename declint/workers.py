"""Supervised workers: parsing and rules run in child processes that may crash, hang or be killed.

A worker process runs its items in one thread with a large stack (native parsers recurse on the
C stack; a big one turns most stack overflows into clean errors), one item at a time. Before each
item it writes the item's position and start time into a small shared-memory slot, so the parent
always knows which item a worker is on without any message per item. The parent waits on the
workers' pipes and process sentinels with a timeout:

- a worker that dies (a segfault in a native parser, `os.abort()`, the OOM killer) costs exactly
  the item it was on: that item fails with the signal's name, the items before it in the batch are
  queued again (their results died with the worker), and a new worker takes the old one's place;
- an item that runs past the time limit is failed with "timed out after N s" and its worker is
  killed (SIGKILL) and replaced;
- an exception escaping the item's handler fails that item only, with the exception's text.

Every item's outcome is a pure function of the item, so whatever the number of workers, the
order of completion or the crashes, `map` returns the same list in input order.

`InlinePool` runs the same handlers in the calling process: no isolation, for library callers
and tests that want no subprocesses.
"""

from __future__ import annotations

import contextlib
import faulthandler
import mmap
import os
import signal
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # multiprocessing is imported when a pool starts, not by every run
    import multiprocessing.connection
    from multiprocessing.process import BaseProcess

Item = TypeVar("Item")
Result = TypeVar("Result")
Handler = Callable[[Any, Any], Any]

_MIB = 2**20
_ORPHAN_CHECK_S = 0.5  # how often a worker looks whether its parent still exists
_IN_WORKER = False  # set in worker processes (test-only crash hooks fire only there)


def in_worker() -> bool:
    return _IN_WORKER


@dataclass(frozen=True)
class Limits:
    """Per-item time limit (seconds), the worker thread's stack and the worker's address space
    (MiB); 0: no limit."""

    timeout: float = 0.0
    stack_mib: int = 512
    memory_mib: int = 0


@dataclass(frozen=True)
class Failure:
    """An item whose worker crashed, hung or raised; `reason` says which, for a DL000 message."""

    reason: str
    kind: str  # "crash" | "timeout" | "error"


@dataclass
class Stats:
    """What supervision had to do in one run (for tests and `--verbose` style reporting)."""

    workers_started: int = 0
    crashes: int = 0
    timeouts: int = 0


class InlinePool(Generic[Item, Result]):
    """Runs the handler in this process: same results as the process pool, minus isolation."""

    def __init__(self, handler: Callable[[Any, Item], Result], state: object, guarded: bool = False) -> None:
        self.handler = handler
        self.state = state
        self.guarded = guarded  # an exception becomes the item's Failure, as in a worker (else it propagates)
        self.stats = Stats()

    def map(self, items: Sequence[Item], batch: int = 1) -> list[Result | Failure]:
        if not self.guarded:
            return [self.handler(self.state, item) for item in items]
        outcomes = (guarded_call(self.handler, self.state, item) for item in items)
        return [value if ok else Failure(str(value), "error") for ok, value in outcomes]  # type: ignore[misc]

    def close(self) -> None:
        pass


class _Slot:
    """Two doubles a forked worker shares with the parent: its position in the batch, and when it
    started the current item (the parent enforces the time limit from them).

    An anonymous shared mapping, inherited by the fork; `multiprocessing.sharedctypes` would cost
    an import of ctypes (about 16 ms) in every run that starts a worker.
    """

    def __init__(self) -> None:
        self._memory = mmap.mmap(-1, 16)

    def __getitem__(self, index: int) -> float:
        return float(struct.unpack_from("d", self._memory, 8 * index)[0])

    def __setitem__(self, index: int, value: float) -> None:
        struct.pack_into("d", self._memory, 8 * index, value)


@dataclass
class _Worker:
    process: BaseProcess
    conn: multiprocessing.connection.Connection
    slot: Any  # RawArray('d', 2): [position in the batch or -1, start time (time.monotonic())]
    batch: tuple[int, list[int]] | None = None  # (batch id, item indices)
    retries: dict[int, int] = field(default_factory=dict)


class ProcessPool(Generic[Item, Result]):
    """`jobs` supervised worker processes, started on demand and replaced when they die."""

    def __init__(
        self,
        handler: Callable[[Any, Item], Result],
        state: object,
        jobs: int,
        limits: Limits,
    ) -> None:
        self.handler = handler
        self.state = state
        self.jobs = max(1, jobs)
        self.limits = limits
        self.stats = Stats()
        import multiprocessing

        methods = multiprocessing.get_all_start_methods()
        # fork shares the parent's index copy-on-write and starts in milliseconds; elsewhere
        # (macOS, Windows) the state is pickled to each worker once.
        self._context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._workers: list[_Worker] = []

    # ---- public ---------------------------------------------------------------------------
    def map(self, items: Sequence[Item], batch: int = 1) -> list[Result | Failure]:
        results: list[Result | Failure | None] = [None] * len(items)
        batch = max(1, batch)
        queue: deque[list[int]] = deque(
            list(range(start, min(start + batch, len(items)))) for start in range(0, len(items), batch)
        )
        unattributed: dict[tuple[int, ...], int] = {}
        next_id = 0
        while queue or any(w.batch is not None for w in self._workers):
            while queue:
                worker = self._idle_worker(len(queue))
                if worker is None:
                    break
                indices = queue.popleft()
                worker.slot[0] = -1.0
                worker.batch = (next_id, indices)
                next_id += 1
                worker.conn.send([items[i] for i in indices])
            self._wait(results, queue, unattributed)
        return [r if r is not None else Failure("no result", "error") for r in results]

    def close(self) -> None:
        for worker in self._workers:
            with contextlib.suppress(OSError, ValueError):
                worker.conn.send(None)
        for worker in self._workers:
            worker.process.join(timeout=1.0)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
        self._workers = []

    def __enter__(self) -> ProcessPool[Item, Result]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- supervision ------------------------------------------------------------------------
    def _idle_worker(self, queued: int) -> _Worker | None:
        for worker in self._workers:
            if worker.batch is None:
                return worker
        if len(self._workers) < self.jobs:
            return self._start()
        return None

    def _start(self) -> _Worker:
        parent_end, child_end = self._context.Pipe(duplex=True)
        slot: Any
        if self._context.get_start_method() == "fork":
            slot = _Slot()
        else:  # a spawned child gets its arguments pickled: only multiprocessing's own shared memory travels
            from multiprocessing.sharedctypes import RawArray

            slot = RawArray("d", 2)
        slot[0] = -1.0
        process = self._context.Process(
            target=_worker_main,
            args=(child_end, self.handler, self.state, slot, self.limits, os.getpid()),
            daemon=True,
            name="declint-worker",
        )
        process.start()
        child_end.close()
        self.stats.workers_started += 1
        worker = _Worker(process, parent_end, slot)
        self._workers.append(worker)
        return worker

    def _wait(
        self,
        results: list[Result | Failure | None],
        queue: deque[list[int]],
        unattributed: dict[tuple[int, ...], int],
    ) -> None:
        busy = [w for w in self._workers if w.batch is not None]
        if not busy:
            return
        from multiprocessing.connection import wait

        handles: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = wait(handles, timeout=self._next_deadline(busy))
        for worker in busy:
            if worker.conn in ready:
                try:
                    outcomes = worker.conn.recv()
                except (EOFError, OSError):
                    self._died(worker, results, queue, unattributed)
                    continue
                assert worker.batch is not None
                for index, (ok, value) in zip(worker.batch[1], outcomes, strict=True):
                    results[index] = value if ok else Failure(value, "error")
                worker.batch = None
            elif worker.process.sentinel in ready:
                self._died(worker, results, queue, unattributed)
        if self.limits.timeout > 0:
            now = time.monotonic()
            for worker in busy:
                if worker.batch is not None and worker.slot[0] >= 0:
                    if now - worker.slot[1] > self.limits.timeout:
                        self._timed_out(worker, results, queue)

    def _next_deadline(self, busy: list[_Worker]) -> float | None:
        if self.limits.timeout <= 0:
            return None
        now = time.monotonic()
        waits = [
            max(0.0, w.slot[1] + self.limits.timeout - now) + 0.01 if w.slot[0] >= 0 else self.limits.timeout
            for w in busy
        ]
        return min(waits)

    def _died(
        self,
        worker: _Worker,
        results: list[Result | Failure | None],
        queue: deque[list[int]],
        unattributed: dict[tuple[int, ...], int],
    ) -> None:
        assert worker.batch is not None
        worker.process.join(timeout=5.0)
        position = int(worker.slot[0])
        indices = worker.batch[1]
        self.stats.crashes += 1
        self._discard(worker)
        reason = _death_reason(worker.process.exitcode)
        if 0 <= position < len(indices):
            results[indices[position]] = Failure(reason, "crash")
            rest = indices[:position] + indices[position + 1 :]
            if rest:
                queue.appendleft(rest)
            return
        # Died between items (while receiving or sending): retry the batch once, then give up.
        key = tuple(indices)
        unattributed[key] = unattributed.get(key, 0) + 1
        if unattributed[key] > 1:
            for index in indices:
                results[index] = Failure(reason, "crash")
        else:
            queue.appendleft(indices)

    def _timed_out(self, worker: _Worker, results: list[Result | Failure | None], queue: deque[list[int]]) -> None:
        assert worker.batch is not None
        position = int(worker.slot[0])
        indices = worker.batch[1]
        worker.process.kill()
        worker.process.join()
        self.stats.timeouts += 1
        self._discard(worker)
        results[indices[position]] = Failure(f"timed out after {self.limits.timeout:g} s", "timeout")
        rest = indices[:position] + indices[position + 1 :]
        if rest:
            queue.appendleft(rest)

    def _discard(self, worker: _Worker) -> None:
        worker.batch = None
        worker.conn.close()
        self._workers.remove(worker)


def _death_reason(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"worker process killed by {name}"
    return f"worker process exited with status {exitcode}"


# ---- the worker side ----------------------------------------------------------------------------
def _worker_main(
    conn: multiprocessing.connection.Connection,
    handler: Handler,
    state: object,
    slot: Any,
    limits: Limits,
    parent: int,  # the parent's pid as the parent saw it: it may be gone before this runs
) -> None:
    global _IN_WORKER
    _IN_WORKER = True
    # The parent handles Ctrl-C and shuts workers down; a worker must not die half-way on it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The parent reports a crash as the file's DL000; a traceback dump of a worker is only noise.
    faulthandler.disable()
    # A platform or rlimit refusing the size leaves the default stack.
    with contextlib.suppress(ValueError, RuntimeError):
        threading.stack_size(max(limits.stack_mib, 1) * _MIB)
    if limits.memory_mib > 0:
        # A runaway parse then fails (MemoryError, or an abort in native code) instead of
        # taking the machine's memory; either way it costs this one file.
        with contextlib.suppress(ImportError, ValueError, OSError):
            import resource

            wanted = (limits.memory_mib + limits.stack_mib) * _MIB
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(
                resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard)
            )
    thread = threading.Thread(target=_serve, args=(conn, handler, state, slot), name="declint-work")
    thread.start()
    # A killed parent (SIGKILL, the OOM killer) must not leave its workers behind: an idle one may
    # never see EOF (workers forked after it hold a copy of its pipe's parent end), a busy one
    # would finish its item for no one. Re-parented, the worker exits.
    while thread.is_alive():
        thread.join(_ORPHAN_CHECK_S)
        if os.getppid() != parent:
            os._exit(1)
    sys.stdout.flush()
    os._exit(0)  # no atexit handlers or finalizers of the parent's copied state


def guarded_call(handler: Handler, state: object, item: object) -> tuple[bool, object]:
    """(True, result), or (False, why) when the handler raised: one item's bug never takes others down."""
    try:
        return True, handler(state, item)
    except RecursionError:
        return False, "nesting too deep for the parser"
    except MemoryError:
        return False, "out of memory"
    except Exception as error:
        return False, f"internal error: {type(error).__name__}: {error}"


def _serve(conn: multiprocessing.connection.Connection, handler: Handler, state: object, slot: Any) -> None:
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        outcomes: list[tuple[bool, object]] = []
        for position, item in enumerate(batch):
            slot[1] = time.monotonic()
            slot[0] = float(position)
            outcomes.append(guarded_call(handler, state, item))
        slot[0] = -1.0
        try:
            conn.send(outcomes)
        except (OSError, ValueError):
            return
