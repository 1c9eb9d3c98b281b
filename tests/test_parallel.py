"""Workers and the prefilter change how much work a run does, never what it reports.

Same findings, byte for byte, with the work in this process or in 1, 2 or 3 worker processes,
whatever the hash seed, and with the index prefilter or with every file indexed in full.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.config import find_config_file, load_config
from declint.engine import Engine, Selection
from declint.rule import Invalid, Valid
from declint.rules import ALL_RULES, RULES_BY_CODE
from declint.testing import PRELUDE, write_tree
from declint.workers import Failure, InlinePool, Limits, ProcessPool, Warmed
from tests.conftest import DEMO, REPO, copy_project


def engine(root: Path, **options: object) -> Engine:
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    return Engine(config, ALL_RULES, Selection(("DL",), ()), **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parallel") / "demo"
    copy_project(DEMO, root)
    return root


def test_the_job_count_changes_nothing(demo: Path) -> None:
    inline = engine(demo).run([demo])
    assert len(inline.findings) == 24
    for jobs in (1, 2, 3):
        assert engine(demo, jobs=jobs).run([demo]) == inline, f"--jobs {jobs}"


def test_the_files_are_checked_while_the_project_rules_run(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's workers get their files before the project rules start in this process (a
    worker's first file imports libcst, ~0.1 s); the findings are those of a run in one process."""
    from declint.engine import _Run

    events: list[str] = []
    submit, project = ProcessPool.submit, _Run._project_findings

    def recorded_submit(pool: ProcessPool[object, object], items: list[object], batch: int = 1) -> object:
        pending = submit(pool, items, batch)
        events.append(f"{pool.handler.__name__}: {pool.stats.workers_started} workers")
        return pending

    def recorded_project(run: _Run, index: object) -> object:
        events.append("project rules")
        return project(run, index)  # type: ignore[arg-type]

    inline = engine(demo).run([demo])
    monkeypatch.setattr(ProcessPool, "submit", recorded_submit)
    monkeypatch.setattr(_Run, "_project_findings", recorded_project)
    assert engine(demo, jobs=2).run([demo]) == inline
    # (the scan's and the index's reads, then the check, started before the project rules)
    assert events[-2:] == ["_check_handler: 2 workers", "project rules"]
    assert set(events[:-2]) == {"_prepare_handler: 2 workers"}


def test_workers_spawned_where_there_is_no_fork_find_the_same(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `os.fork` (Windows) the pools spawn their workers and pickle their state to them:
    the check's state travels as its inputs and its index is rebuilt there (the index holds a
    closure pickle cannot carry; every check of such a run failed on it)."""
    inline = engine(demo).run([demo])
    spawned: list[str] = []
    spawn = ProcessPool._spawn_worker

    def counted(pool: ProcessPool[object, object]) -> object:
        spawned.append(pool.handler.__name__)
        return spawn(pool)

    monkeypatch.setattr(ProcessPool, "_spawn_worker", counted)
    monkeypatch.delattr(os, "fork")
    assert engine(demo, jobs=2).run([demo]) == inline
    assert spawned == ["_prepare_handler", "_prepare_handler", "_check_handler", "_check_handler"]


def test_cli_output_is_byte_identical_across_jobs(demo: Path) -> None:
    outputs = {
        jobs: CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "--jobs", jobs, str(demo)]).output
        for jobs in ("1", "2", "3")
    }
    assert outputs["1"] == outputs["2"] == outputs["3"]
    assert '"code": "DL101"' in outputs["1"]


def test_identical_across_hash_seeds_with_workers(demo: Path) -> None:
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "DECLINT_NO_CACHE": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "declint", "check", "--jobs", "2", str(demo)],
            capture_output=True,
            env=env,
            check=False,
        )
        assert done.returncode == 1
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_warm_and_cold_give_the_same_bytes(demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DECLINT_NO_CACHE", raising=False)
    root = tmp_path / "demo"
    copy_project(demo, root)
    runs = [CliRunner().invoke(cli, ["check", "--jobs", "2", str(root)]).output for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert (root / ".declint_cache").is_dir()


# ---- the index prefilter -----------------------------------------------------------------------


def _example_trees() -> list[tuple[str, dict[str, str], str]]:
    trees = []
    for rule in ALL_RULES:
        if getattr(rule, "example_findings", None) is not None:
            continue  # checked outside the engine
        for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID)):
            for number, example in enumerate(examples):
                trees.append((f"{rule.CODE}-{kind}-{number}", _files(example), example.path))
    return trees


def _files(example: Valid | Invalid) -> dict[str, str]:
    pyproject = PRELUDE["pyproject.toml"] + example.config
    return {**PRELUDE, "pyproject.toml": pyproject, **dict(example.files), example.path: example.code}


def test_the_index_prefilter_changes_no_finding_in_any_rule_example() -> None:
    compared = 0
    for name, files, checked in _example_trees():
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            write_tree(root, files)
            prefiltered = engine(root).run([root / checked])
            full = engine(root, full_index=True).run([root / checked])
            assert prefiltered == full, name
            whole = engine(root).run([root])
            assert whole == engine(root, full_index=True).run([root]), name
            compared += 1
    assert compared > 80


@pytest.mark.parametrize(
    "tree",
    [DEMO, *sorted(p for p in (REPO / "tests" / "fixtures").iterdir() if (p / "pyproject.toml").is_file())],
    ids=lambda p: p.name,
)
def test_the_index_prefilter_changes_no_finding_in_the_fixture_trees(tree: Path, tmp_path: Path) -> None:
    root = tmp_path / tree.name
    copy_project(tree, root)
    prefiltered = engine(root)
    result = prefiltered.run([root])
    assert result == engine(root, full_index=True).run([root])
    assert prefiltered.stats.safety_rounds == 0  # the closure found every file the rules read


def test_a_subclass_in_a_file_without_index_needles_is_still_indexed(tmp_path: Path) -> None:
    # `modeling_child.py` names no mixin, decorator or declaration: only its base class ties it
    # to a model, in another file, through an aliased import.
    write_tree(
        tmp_path,
        {
            **PRELUDE,
            "tensorrt_llm/_torch/models/modeling_base.py": (
                "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n"
                "class BaseVL(MultimodalModelMixin):\n"
                '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}\n'
            ),
            "tensorrt_llm/_torch/models/modeling_child.py": (
                "import torch.nn.functional as F\n"
                "from tensorrt_llm._torch.models.modeling_base import BaseVL as Base\n\n"
                "class ChildVL(Base):\n    def __init__(self):\n        self.tower = Tower()\n\n"
                "class Tower:\n    def forward(self, q, k, v):\n"
                "        return F.scaled_dot_product_attention(q, k, v)\n"
            ),
        },
    )
    run = engine(tmp_path)
    findings = run.run([tmp_path])
    assert [f.message.split(" declares ")[0] for f in findings.findings if f.code == "DL101"] == [
        "`Tower.forward` calls torch.nn.functional.scaled_dot_product_attention directly, but ChildVL"
    ]
    assert findings == engine(tmp_path, full_index=True).run([tmp_path])


SYNTAX_TREE = {
    "tensorrt_llm/_torch/models/modeling_plain.py": "def broken(:\n",
    # A needle whose rule then declines the file (no string close to a backend name).
    "tensorrt_llm/_torch/models/modeling_declined.py": "def broken(attn_backend:\n",
    # A needle of a rule that parses the file.
    "tensorrt_llm/_torch/models/modeling_needle.py": "def f(q):\n    F.scaled_dot_product_attention(q\n",
    # Outside the modeling and backend packages, no needle.
    "tensorrt_llm/_torch/pyexecutor/plain.py": "def broken(:\n",
}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        # Default: files in syntax-paths (the modeling and backend packages) and files a rule parses.
        ("", ["modeling_declined.py:1", "modeling_needle.py:2", "modeling_plain.py:1"]),
        # Nothing in scope: a file no rule needs is read and searched, never parsed.
        ("check-syntax = false\nsyntax-paths = []\n", ["modeling_needle.py:2"]),
        (
            "check-syntax = true\n",
            ["modeling_declined.py:1", "modeling_needle.py:2", "modeling_plain.py:1", "plain.py:1"],
        ),
    ],
    ids=["default", "off", "everything"],
)
def test_syntax_scope_decides_which_files_no_rule_needs_are_parsed(
    tmp_path: Path, options: str, expected: list[str]
) -> None:
    write_tree(tmp_path, {**PRELUDE, "pyproject.toml": PRELUDE["pyproject.toml"] + options, **SYNTAX_TREE})
    findings = engine(tmp_path).run([tmp_path]).findings
    assert all(f.code == "DL000" and f.message.startswith("syntax error: ") for f in findings)
    assert [f"{f.path.rpartition('/')[2]}:{f.line}" for f in findings] == expected
    everything = engine(tmp_path, full_index=True).run([tmp_path]).findings  # parses every file
    assert len(everything) == 4


# ---- the pool itself ----------------------------------------------------------------------------


def _square_slowly(state: object, item: int) -> int:
    time.sleep((item % 3) / 200)
    if item == 13:
        raise ValueError("thirteen")
    return item * item


def _pid_of_worker(state: object, item: int) -> tuple[int, int]:
    return item, os.getpid()


def test_a_submitted_map_runs_in_the_workers_while_the_caller_works() -> None:
    """`submit` forks the workers and hands them their first batches before it returns (the
    engine checks files while it runs the project rules); `results()` gives what `map` gives."""
    with ProcessPool(_pid_of_worker, None, 2, Limits(timeout=30)) as pool:
        pending = pool.submit(list(range(10)), batch=3)
        assert pool.stats.workers_started == 2
        assert sum(worker.batch is not None for worker in pool._workers) == 2  # both busy already
        results = pending.results()
        assert [r[0] for r in results] == list(range(10))  # type: ignore[index]
        assert {r[1] for r in results} <= {w.process.pid for w in pool._workers}  # type: ignore[index]
        assert os.getpid() not in {r[1] for r in results}  # type: ignore[index]
    inline = InlinePool(_square_slowly, None)
    deferred = inline.submit([2, 3])
    assert deferred.results() == [4, 9]


def test_process_pool_keeps_input_order_and_isolates_exceptions() -> None:
    items = list(range(40))
    expected = [Failure("internal error: ValueError: thirteen", "error") if i == 13 else i * i for i in items]
    with ProcessPool(_square_slowly, None, 3, Limits(timeout=30)) as pool:
        assert pool.map(items, batch=4) == expected
        assert pool.stats.workers_started == 3
    inline = InlinePool(_square_slowly, None)
    with pytest.raises(ValueError, match="thirteen"):
        inline.map(items)
    assert inline.map([2, 3]) == [4, 9]


def test_each_result_is_handed_over_in_order_while_later_batches_run() -> None:
    items = list(range(40))
    expected = [Failure("internal error: ValueError: thirteen", "error") if i == 13 else i * i for i in items]
    handed: list[tuple[int, object]] = []
    pending: list[int] = []  # batches still out when each result was handed over

    def each(index: int, result: object) -> None:
        handed.append((index, result))
        pending.append(sum(w.batch is not None for w in pool._workers))

    with ProcessPool(_square_slowly, None, 2, Limits(timeout=30)) as pool:
        assert pool.map(items, batch=4, each=each) == expected
    assert handed == list(enumerate(expected))
    assert max(pending) >= 1  # some results were taken in while a worker was still busy
    inline: list[tuple[int, object]] = []
    InlinePool(_square_slowly, None, guarded=True).map(items, each=lambda i, r: inline.append((i, r)))
    assert inline == handed


_WARMED_IN: list[int] = []  # the process a warm-up ran in (a warmed worker's own copy of this list)


def _note_warm_up() -> None:
    _WARMED_IN.append(os.getpid())


def _warm_and_state(state: object, item: int) -> tuple[int, list[int], object]:
    return item, list(_WARMED_IN), state


def _warm_and_keys(state: dict[str, object], item: int) -> tuple[int, list[int], list[str]]:
    return item, list(_WARMED_IN), sorted(state)


def test_a_warmed_worker_is_adopted_with_the_pools_handler_and_state() -> None:
    """A worker forked ahead (`Warmed`) does its warm-up, then serves the first pool that starts
    a worker, with that pool's handler and state (pickled to it, not inherited)."""
    warmed = Warmed(_note_warm_up)
    state = {"sent": [1, 2]}
    with ProcessPool(_warm_and_state, state, 2, Limits(timeout=30)) as pool:
        pool.adopting(warmed)
        results = pool.map([7])
        (adopted,) = pool._workers
        assert results == [(7, [adopted.process.pid], state)]
        assert (pool.stats.workers_started, pool.stats.adopted) == (1, 1)
        # Up to three batches wait for it rather than for a worker forked cold (libcst's import).
        few = pool.map([1, 2, 3], batch=1)
        assert few == [(item, [adopted.process.pid], state) for item in (1, 2, 3)]
        assert pool.stats.workers_started == 1
        # More: the pool forks the second as usual, without the warm-up.
        more = pool.map(list(range(6)), batch=1)
        assert [r[0] for r in more] == list(range(6))  # type: ignore[index]
        assert {tuple(r[1]) for r in more} <= {(adopted.process.pid,), ()}  # type: ignore[index]
        assert pool.stats.workers_started == 2
    assert _WARMED_IN == []  # the warm-up ran in the worker only


def test_a_warmed_worker_that_died_before_its_adoption_is_replaced_by_a_forked_one() -> None:
    import select
    import signal

    warmed = Warmed(_note_warm_up)
    assert warmed.process is not None
    os.kill(warmed.process.pid, signal.SIGKILL)
    # Gone once its end of the pipe is (the kernel closes a dead process's files one by one: its
    # exit can show before a send to it fails; then the pool takes that as the worker's death).
    poller = select.poll()
    poller.register(warmed.conn.fds()[1], select.POLLOUT)
    deadline = time.monotonic() + 10
    while not any(events & select.POLLERR for _, events in poller.poll(100)) and time.monotonic() < deadline:
        pass
    with ProcessPool(_warm_and_state, None, 1, Limits(timeout=30)) as pool:
        pool.adopting(warmed)
        assert pool.map([1, 2]) == [(1, [], None), (2, [], None)]  # a worker forked now: no warm-up
        assert (pool.stats.workers_started, pool.stats.adopted) == (1, 0)
        assert pool.stats.crashes == 0
    assert warmed.process is None  # killed and reaped


def test_a_state_that_does_not_pickle_goes_to_a_forked_worker_instead() -> None:
    warmed = Warmed(_note_warm_up)
    state = {"unpicklable": lambda: None}
    with ProcessPool(_warm_and_keys, state, 1, Limits(timeout=30)) as pool:
        pool.adopting(warmed)
        assert pool.map([5]) == [(5, [], ["unpicklable"])]  # the forked worker's: no warm-up
        assert (pool.stats.workers_started, pool.stats.adopted, pool.stats.crashes) == (1, 0, 0)
    assert warmed.process is None


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts this process's descriptors in /proc")
def test_a_warmed_worker_that_cannot_be_forked_leaves_nothing_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """No process to spare (EAGAIN): `Warmed` raises OSError with every pipe it made closed, and
    a run then goes on without one (its check forks its worker later)."""
    import errno

    def refused() -> int:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    before = sorted(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", refused)
    with pytest.raises(OSError, match="temporarily unavailable"):
        Warmed(_note_warm_up)
    assert sorted(os.listdir("/proc/self/fd")) == before


def test_a_warmed_worker_no_pool_adopts_is_ended_with_the_pool() -> None:
    warmed = Warmed(_note_warm_up)
    assert warmed.process is not None
    pid = warmed.process.pid
    with ProcessPool(_warm_and_state, None, 1, Limits(timeout=30)) as pool:
        pool.adopting(warmed)  # and no map: no worker is started
    assert warmed.process is None
    with pytest.raises(ChildProcessError):  # reaped: no zombie left behind
        os.waitpid(pid, os.WNOHANG)


def _explode_on_seven(state: object, item: int) -> int:
    if item == 7:
        os.kill(os.getpid(), 9)
    return item


def test_a_killed_worker_costs_its_item_and_is_replaced() -> None:
    with ProcessPool(_explode_on_seven, None, 1, Limits(timeout=30)) as pool:
        results = pool.map(list(range(20)), batch=5)
        assert results[7] == Failure("worker process killed by SIGKILL", "crash")
        assert [r for i, r in enumerate(results) if i != 7] == [i for i in range(20) if i != 7]
        assert pool.stats.crashes == 1
        assert pool.stats.workers_started == 2  # the one worker, then its replacement


def _identity(state: object, item: int) -> int:
    return item


def test_a_worker_killed_while_idle_is_replaced_when_the_next_batch_is_sent() -> None:
    """The OOM killer may take a worker between two batches: writing the next batch to its pipe
    then fails (EPIPE), which is that worker's death, never the run's (was a BrokenPipeError)."""
    import select
    import signal

    with ProcessPool(_identity, None, 1, Limits(timeout=30)) as pool:
        assert pool.map([1, 2]) == [1, 2]
        (worker,) = pool._workers
        os.kill(worker.process.pid, signal.SIGKILL)
        assert select.select([worker.process.sentinel], [], [], 10)[0]  # dead: its pipe has no reader
        assert pool.map(list(range(10)), batch=5) == list(range(10))  # both batches retried on a new worker
        assert pool.stats.crashes == 1
        assert pool.stats.workers_started == 2


def test_workers_that_die_at_start_fail_every_item_as_a_crash() -> None:
    """A worker that cannot start its thread (an impossible stack size) exits at once; whether the
    pool sees the exit first or a failed write to its pipe, each batch is retried once, then
    every item is a crash Failure: the map returns."""
    for _ in range(10):
        with ProcessPool(_identity, None, 2, Limits(timeout=30, stack_mib=100_000_000)) as pool:
            assert pool.map(list(range(6)), batch=2) == [Failure("worker process exited with status 1", "crash")] * 6


def _allocate_mib(state: object, mib: int) -> int:
    return len(bytearray(mib * 2**20)) // 2**20


def test_the_memory_limit_comes_on_top_of_what_a_worker_starts_with() -> None:
    """A worker is a fork of the main process: with the limit taken as its whole address space, a
    large main process (a big project's index, a test runner) left every parse out of memory."""
    import mmap

    large = mmap.mmap(-1, 4 << 30)  # 4 GiB mapped (never touched) in the main process, and so in each worker
    try:
        with ProcessPool(_allocate_mib, None, 1, Limits(timeout=60, stack_mib=8, memory_mib=256)) as pool:
            assert pool.map([100, 2048, 100]) == [100, Failure("out of memory", "error"), 100]
    finally:
        large.close()
