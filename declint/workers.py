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
import gc
import math
import mmap
import os
import pickle
import select
import signal
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

if TYPE_CHECKING:  # multiprocessing is imported only where there is no fork (Windows)
    import multiprocessing.connection

Item = TypeVar("Item")
Result = TypeVar("Result")
Each = Callable[[int, Any], None]  # called with (index, result or Failure), in index order


class Pending(Protocol):
    """A map begun with `submit`: `results(each)` waits for it and returns what `map` returns."""

    def results(self, each: Each | None = None) -> list[Any]: ...


Handler = Callable[[Any, Any], Any]

_MIB = 2**20
_ORPHAN_CHECK_S = 0.5  # how often a worker looks whether its parent still exists
# Batches left for a busy warmed worker rather than a worker forked for them: a new worker
# imports libcst first (~0.2 s on a 2-core machine), a check of a model file takes ~0.02-0.15 s.
_WARMED_ALONE = 2
_IN_WORKER = False  # set in worker processes (test-only crash hooks fire only there)


def in_worker() -> bool:
    return _IN_WORKER


class Limits(NamedTuple):
    """Per-item time limit (seconds), the worker thread's stack and the worker's address space
    (MiB); 0: no limit."""

    timeout: float = 0.0
    stack_mib: int = 512
    memory_mib: int = 0


class Failure(NamedTuple):
    """An item whose worker crashed, hung or raised; `reason` says which, for a DL000 message."""

    reason: str
    kind: str  # "crash" | "timeout" | "error"


@dataclass
class Stats:
    """What supervision had to do in one run (for tests and `--verbose` style reporting)."""

    workers_started: int = 0
    adopted: int = 0  # of them, warmed ones (`Warmed`)
    crashes: int = 0
    timeouts: int = 0


class InlinePool(Generic[Item, Result]):
    """Runs the handler in this process: same results as the process pool, minus isolation."""

    def __init__(self, handler: Callable[[Any, Item], Result], state: object, guarded: bool = False) -> None:
        self.handler = handler
        self.state = state
        self.guarded = guarded  # an exception becomes the item's Failure, as in a worker (else it propagates)
        self.stats = Stats()

    def map(self, items: Sequence[Item], batch: int = 1, each: Each | None = None) -> list[Result | Failure]:
        if not self.guarded:
            results: list[Result | Failure] = [self.handler(self.state, item) for item in items]
        else:
            outcomes = (guarded_call(self.handler, self.state, item) for item in items)
            results = [value if ok else Failure(str(value), "error") for ok, value in outcomes]  # type: ignore[misc]
        if each is not None:
            for index, result in enumerate(results):
                each(index, result)
        return results

    def submit(self, items: Sequence[Item], batch: int = 1) -> _Deferred[Item, Result]:
        """`map`, run when its results are asked for (one process does one thing at a time)."""
        return _Deferred(self, items, batch)

    def close(self) -> None:
        pass


class _Deferred(Generic[Item, Result]):
    def __init__(self, pool: InlinePool[Item, Result], items: Sequence[Item], batch: int) -> None:
        self.pool, self.items, self.batch = pool, items, batch

    def results(self, each: Each | None = None) -> list[Result | Failure]:
        return self.pool.map(self.items, self.batch, each)


class _Slot:
    """Two doubles a forked worker shares with the parent: its position in the batch, and when it
    started the current item (the parent enforces the time limit from them).

    An anonymous shared mapping, inherited by the fork; `multiprocessing.sharedctypes` would cost
    an import of ctypes (about 16 ms) in every run that starts a worker. Each double is written
    and read whole through a memoryview: `struct.pack_into` zeroes its bytes before writing them,
    and a parent reading in between saw a start time of 0 and failed a healthy item as "timed
    out" (about one run in fifty of tests/test_isolation.py).
    """

    def __init__(self) -> None:
        self._memory = mmap.mmap(-1, 16)
        self._doubles = memoryview(self._memory).cast("d")

    def __getitem__(self, index: int) -> float:
        return float(self._doubles[index])

    def __setitem__(self, index: int, value: float) -> None:
        self._doubles[index] = value


class _Channel:
    """Length-prefixed pickles over two pipes, one each way: the part of multiprocessing's
    `Connection` the pool uses. Importing multiprocessing and its connection module (socket,
    tempfile, subprocess, bz2, lzma...) was ~9 ms of every run that starts a worker, about a
    third of what a run after a one-file edit adds to a warm one."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read, self._write = read_fd, write_fd

    def fileno(self) -> int:
        return self._read

    def fds(self) -> tuple[int, int]:
        return self._read, self._write

    def send(self, obj: object) -> None:
        self.send_bytes(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))

    def send_bytes(self, data: bytes) -> None:
        """One message, pickled already."""
        view = memoryview(struct.pack("!Q", len(data)) + data)
        while view:
            view = view[os.write(self._write, view) :]

    def recv(self) -> Any:
        return pickle.loads(self.recv_bytes())

    def recv_bytes(self) -> bytearray:
        """One message, not unpickled."""
        (size,) = struct.unpack("!Q", self._read_exactly(8))
        return self._read_exactly(size)

    def _read_exactly(self, size: int) -> bytearray:
        data = bytearray()
        while len(data) < size:
            chunk = os.read(self._read, min(size - len(data), _MIB))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def close(self) -> None:
        _close_all(self._read, self._write)
        self._read = self._write = -1


class _Forked:
    """A forked child running `target(*args)`, which ends the child with `os._exit`; the part of
    multiprocessing's `Process` the pool uses. `sentinel` becomes readable when the child exits
    (only the child holds its pipe's write end)."""

    def __init__(self, target: Callable[..., None], args: tuple[Any, ...], close_in_child: Sequence[int]) -> None:
        self.exitcode: int | None = None
        sentinel, held_by_child = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # else the child would write the parent's buffer again
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            self.pid = os.fork()
        except OSError:
            _close_all(sentinel, held_by_child)
            raise
        if self.pid == 0:  # the child
            try:
                _close_all(sentinel, *close_in_child)
                target(*args)
            finally:
                os._exit(1)
        os.close(held_by_child)
        self.sentinel = sentinel

    def join(self, timeout: float | None = None) -> None:
        if self.exitcode is None and timeout is not None and not _readable([self.sentinel], timeout):
            return  # still running
        if self.exitcode is None:
            _, status = os.waitpid(self.pid, 0)  # it closed the sentinel: it is exiting
            self.exitcode = os.waitstatus_to_exitcode(status)
            os.close(self.sentinel)

    def is_alive(self) -> bool:
        self.join(0)
        return self.exitcode is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


class Warmed:
    """A worker forked before its pool exists, which does the slow part of a worker's start
    (`warm_up`: importing libcst, ~0.2 s on a 2-core machine) while this process goes on; the
    first pool that starts a worker adopts it. A worker forked then inherits the pool's handler
    and state but starts cold; this one gets them pickled (`adopt`), read by a thread of its own
    while it imports, so the send does not wait for the imports. Needs `os.fork`.

    A run forks one when it knows a file must be checked again and the check comes later (an
    edit of a checked file that the patch declined: the cache load, the scan and the index come
    first). One that no pool adopts is killed with the run (`close`). Raises OSError when no
    pipe or process can be made (nothing is left open then)."""

    def __init__(self, warm_up: Callable[[], None]) -> None:
        parent = os.getpid()
        worker = _fork_worker_process(_warmed_main, lambda conn, slot: (conn, warm_up, slot, parent))
        _widen(worker.conn.fds()[1])
        self.process: _Forked | None = worker.process
        self.conn: _Channel = worker.conn
        self.slot = worker.slot

    def adopt(self, handler: Handler, state: object, limits: Limits) -> _Worker | None:
        """This worker, given `handler`, `state` and `limits`: None once it is gone (then the
        pool forks one as usual)."""
        if self.process is None:
            return None
        try:
            self.conn.send_bytes(pickle.dumps((handler, state, limits), pickle.HIGHEST_PROTOCOL))
        except Exception:  # it died (EPIPE), or the state does not pickle: a worker forked now instead
            self.close()
            return None
        process, self.process = self.process, None
        return _Worker(process, self.conn, self.slot)

    def close(self) -> None:
        """Kill it, unless a pool adopted it (the pool closes it then)."""
        process, self.process = self.process, None
        if process is not None:
            process.kill()
            process.join()
            self.conn.close()


def _fork_worker_process(
    target: Callable[..., None], args: Callable[[_Channel, _Slot], tuple[Any, ...]], theirs: Sequence[int] = ()
) -> _Worker:
    """A child running `target(*args(its channel, the slot))` over two new pipes, as the parent
    holds it. The child closes the parent's ends and `theirs` (another worker's parent ends,
    inherited, would keep that worker's pipe open after the parent closed it). Raises OSError
    when no pipe or process can be made, with nothing left open."""
    to_child, from_parent = os.pipe()[::-1]  # (write end, read end)
    try:
        from_child, to_parent = os.pipe()
    except OSError:
        _close_all(to_child, from_parent)
        raise
    slot = _Slot()
    slot[0] = -1.0
    try:
        process = _Forked(target, args(_Channel(from_parent, to_parent), slot), [to_child, from_child, *theirs])
    except OSError:
        _close_all(to_child, from_parent, from_child, to_parent)
        raise
    _close_all(from_parent, to_parent)
    return _Worker(process, _Channel(from_child, to_child), slot)


def _close_all(*fds: int) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _widen(write_end: int) -> None:
    """Make the pipe hold a large state whole (Linux: up to /proc/sys/fs/pipe-max-size, 1 MiB by
    default), so the parent's send rarely waits on the child's reader thread."""
    with contextlib.suppress(ImportError, AttributeError, OSError):
        import fcntl

        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _MIB)


@dataclass
class _Worker:
    process: Any  # _Forked, or a spawned multiprocessing Process where there is no fork
    conn: Any  # _Channel, or a multiprocessing Connection
    slot: Any  # [position in the batch or -1, start time (time.monotonic())]
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
        # fork shares the parent's index copy-on-write and starts in milliseconds; where there is
        # no fork (Windows) multiprocessing spawns workers and pickles the state to each once.
        self._fork = hasattr(os, "fork")
        self._workers: list[_Worker] = []
        self._warmed: Warmed | None = None  # the first worker, when it is still there (see `adopting`)

    # ---- public ---------------------------------------------------------------------------
    def adopting(self, warmed: Warmed | None) -> None:
        """Start with `warmed` as the first worker (this pool closes it, adopted or not)."""
        self._warmed = warmed

    def map(self, items: Sequence[Item], batch: int = 1, each: Each | None = None) -> list[Result | Failure]:
        """Results in the order of `items`. `each(index, result)` is called in that order too, as
        soon as every result up to `index` is in, while the workers go on with later batches."""
        return self.submit(items, batch).results(each)

    def submit(self, items: Sequence[Item], batch: int = 1) -> _Mapping[Item, Result]:
        """`map`, started: the first batches go to the workers (forked now if need be) and this
        returns at once, so that this process can work while they do; `results()` finishes it."""
        mapping = _Mapping(self, items, batch)
        mapping.hand_out()
        return mapping

    def close(self) -> None:
        if self._warmed is not None:  # never needed: it goes as an unused one does
            self._warmed.close()
            self._warmed = None
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
        if self.stats.adopted and self._workers and queued <= _WARMED_ALONE:
            return None  # a worker forked now would take longer to import libcst than to wait
        if len(self._workers) < self.jobs:
            return self._start()
        return None

    def _start(self) -> _Worker:
        warmed, self._warmed = self._warmed, None
        adopted = warmed.adopt(self.handler, self.state, self.limits) if warmed is not None else None
        worker = adopted or (self._fork_worker() if self._fork else self._spawn_worker())
        self.stats.adopted += adopted is not None
        self.stats.workers_started += 1
        self._workers.append(worker)
        return worker

    def _fork_worker(self) -> _Worker:
        theirs = [fd for w in self._workers for fd in (*w.conn.fds(), w.process.sentinel)]
        parent = os.getpid()
        return _fork_worker_process(
            _worker_main, lambda conn, slot: (conn, self.handler, self.state, slot, self.limits, parent), theirs
        )

    def _spawn_worker(self) -> _Worker:
        import multiprocessing
        from multiprocessing.sharedctypes import RawArray

        context = multiprocessing.get_context("spawn")
        parent_end, child_end = context.Pipe(duplex=True)
        slot: Any = RawArray("d", 2)  # a spawned child gets its arguments pickled: only this shared memory travels
        slot[0] = -1.0
        process = context.Process(
            target=_worker_main,
            args=(child_end, self.handler, self.state, slot, self.limits, os.getpid()),
            daemon=True,
            name="declint-worker",
        )
        process.start()
        child_end.close()
        return _Worker(process, parent_end, slot)

    def _wait(
        self,
        results: list[Result | Failure | None],
        queue: deque[list[int]],
        unattributed: dict[tuple[int, ...], int],
    ) -> None:
        busy = [w for w in self._workers if w.batch is not None]
        if not busy:
            return
        handles: list[Any] = [w.conn for w in busy] + [w.process.sentinel for w in busy]
        ready = self._ready(handles, self._next_deadline(busy))
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

    def _ready(self, handles: list[Any], timeout: float | None) -> list[Any]:
        """The handles (channels, sentinel fds) ready to read, or [] after `timeout` seconds."""
        if not self._fork:
            from multiprocessing.connection import wait

            return wait(handles, timeout=timeout)
        by_fd = {h if isinstance(h, int) else h.fileno(): h for h in handles}
        return [by_fd[fd] for fd in _readable(list(by_fd), timeout)]

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
        if worker.process.is_alive():  # its pipe broke but it lingers: it must not outlive the pool
            worker.process.kill()
            worker.process.join()
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


class _Mapping(Generic[Item, Result]):
    """One `map` of a process pool: the batches not yet handed out, and the results in so far."""

    def __init__(self, pool: ProcessPool[Item, Result], items: Sequence[Item], batch: int) -> None:
        self.pool = pool
        self.items = items
        self.outcomes: list[Result | Failure | None] = [None] * len(items)
        batch = max(1, batch)
        self.queue: deque[list[int]] = deque(
            list(range(start, min(start + batch, len(items)))) for start in range(0, len(items), batch)
        )
        self.unattributed: dict[tuple[int, ...], int] = {}
        self.next_id = 0

    def hand_out(self) -> None:
        """Send queued batches to the idle workers, starting workers up to the pool's count."""
        pool = self.pool
        while self.queue:
            worker = pool._idle_worker(len(self.queue))
            if worker is None:
                return
            indices = self.queue.popleft()
            worker.slot[0] = -1.0
            worker.batch = (self.next_id, indices)
            self.next_id += 1
            try:
                worker.conn.send([self.items[i] for i in indices])
            except (OSError, ValueError):  # EPIPE: the worker died since its last batch (the OOM killer)
                pool._died(worker, self.outcomes, self.queue, self.unattributed)

    def results(self, each: Each | None = None) -> list[Result | Failure]:
        """Every result, in the order of the items (see `ProcessPool.map` for `each`)."""
        handed = 0  # results before this index went to `each`
        pool = self.pool
        while self.queue or any(w.batch is not None for w in pool._workers):
            self.hand_out()
            if each is not None:  # after handing out the next batches: this overlaps their work
                handed = _hand_over(self.outcomes, handed, each)
            pool._wait(self.outcomes, self.queue, self.unattributed)
        final = [r if r is not None else Failure("no result", "error") for r in self.outcomes]
        if each is not None:
            _hand_over(final, handed, each)
        return final


def _hand_over(results: Sequence[Any], start: int, each: Each) -> int:
    """Call `each` for the results from `start` on that are in, up to the first missing one."""
    index = start
    while index < len(results) and results[index] is not None:
        each(index, results[index])
        index += 1
    return index


def _readable(fds: list[int], timeout: float | None) -> list[int]:
    """The fds ready to read (or closed by their writer), waiting at most `timeout` seconds
    (rounded up to the next millisecond: a deadline is never reported early)."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _ in poller.poll(_poll_ms(timeout))]


_POLL_MAX_MS = 2**31 - 1  # poll()'s timeout is a C int of milliseconds (about 24.8 days)


def _poll_ms(timeout: float | None) -> int | None:
    """`timeout` seconds as poll()'s milliseconds; None (no limit) for None or infinity, and at
    most what poll() takes: a longer limit (a library caller's Limits) wakes up once on the way."""
    if timeout is None or math.isinf(timeout):
        return None
    return min(max(0, int(timeout * 1000) + 1), _POLL_MAX_MS)


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
    conn: _Channel | multiprocessing.connection.Connection,
    handler: Handler,
    state: object,
    slot: Any,
    limits: Limits,
    parent: int,  # the parent's pid as the parent saw it: it may be gone before this runs
) -> None:
    global _IN_WORKER
    _IN_WORKER = True
    # The parent's objects stay as they are for the worker's life: out of the collector's sight, a
    # full collection here never walks (and copies, page by page) the parent's heap. The CLI runs
    # with the collector off (`declint.cli.main`); a worker parses with libcst and turns it on.
    gc.freeze()
    gc.enable()
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
        with contextlib.suppress(ImportError, ValueError, OSError, OverflowError):
            import resource

            wanted = _mapped_bytes() + (limits.memory_mib + limits.stack_mib) * _MIB
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(
                resource.RLIMIT_AS, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard)
            )
    thread = threading.Thread(target=_serve, args=(conn, handler, state, slot), name="declint-work")
    thread.start()
    # A killed parent (SIGKILL, the OOM killer) must not leave its workers behind: a busy one would
    # finish its item for no one, and a spawned idle one may never see EOF (workers started after
    # it may hold a copy of its pipe's parent end; forked ones close theirs). Re-parented, the
    # worker exits.
    _join_unless_orphaned(thread, parent)
    sys.stdout.flush()
    os._exit(0)  # no atexit handlers or finalizers of the parent's copied state


def _warmed_main(conn: _Channel, warm_up: Callable[[], None], slot: Any, parent: int) -> None:
    """A `Warmed` worker: warm up while a thread takes in the pool's handler, state and limits,
    then serve as any worker does. Ends, as a worker does, when its parent is gone or closes it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    received: list[bytearray] = []

    def receive() -> None:
        with contextlib.suppress(EOFError, OSError):
            received.append(conn.recv_bytes())

    reader = threading.Thread(target=receive, name="declint-adopt")
    reader.start()
    with contextlib.suppress(Exception):  # a warm-up that fails leaves the work to the first item
        warm_up()
    _join_unless_orphaned(reader, parent)
    if not received:  # closed unadopted
        os._exit(0)
    handler, state, limits = pickle.loads(received.pop())
    _worker_main(conn, handler, state, slot, limits, parent)


def _join_unless_orphaned(thread: threading.Thread, parent: int) -> None:
    """Wait for `thread`; exit at once if the parent is gone meanwhile (re-parented)."""
    while thread.is_alive():
        thread.join(_ORPHAN_CHECK_S)
        if os.getppid() != parent:
            os._exit(1)


def _mapped_bytes() -> int:
    """The address space this process already maps (Linux; 0 elsewhere). A worker is a fork of the
    main process and starts with all of it (the interpreter, libcst, the index, a test runner's
    modules): the limit is `worker-memory-mib` on top of that, or a large project (or a large
    parent) would leave its workers nothing to parse with."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return 0


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


def _serve(conn: _Channel | multiprocessing.connection.Connection, handler: Handler, state: object, slot: Any) -> None:
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
