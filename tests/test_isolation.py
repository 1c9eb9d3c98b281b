"""Crash isolation: a file that kills, hangs or bloats its worker costs exactly one DL000.

A real parser segfault needs input CPython itself rejects first (declint parses with `ast`
before libcst, so such a file is a DL000 before libcst sees it); the crash is therefore simulated
with the test-only hooks of `declint.engine` (`DECLINT_TEST_CRASH_ON` / `DECLINT_TEST_HANG_ON`:
inside a worker process, a file whose bytes contain the variable's value segfaults or hangs it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.config import find_config_file, load_config
from declint.engine import CRASH_HOOK_ENV, HANG_HOOK_ENV, Engine, Selection, _failure_message
from declint.rules import ALL_RULES, RULES_BY_CODE
from declint.testing import PRELUDE, write_tree
from declint.workers import Failure

MODELS = "tensorrt_llm/_torch/models/"
COUNT = 100


def _tree(root: Path, marked: set[int], config: str = "") -> Path:
    files = {
        MODELS + f"modeling_m{i:03}.py": (
            f"# {'MARKED' if i in marked else 'plain'} file\n"
            f"def route_{i}(config):\n"
            f'    return config.attn_backend == "TRTLLM"\n'
        )
        for i in range(COUNT)
    }
    write_tree(root, {**PRELUDE, "pyproject.toml": PRELUDE["pyproject.toml"] + config, **files})
    return root


def _lines(root: Path, *extra: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", *extra, str(root / MODELS)])
    return result.exit_code, [line for line in result.output.splitlines() if ": DL" in line]


def test_a_segfaulting_file_among_99_costs_one_dl000(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path, {42})
    clean_code, clean = _lines(root, "--jobs", "2")
    assert clean_code == 1 and len(clean) == COUNT

    monkeypatch.setenv(CRASH_HOOK_ENV, "MARKED")
    code, lines = _lines(root, "--jobs", "2")
    assert code == 1
    crashed = MODELS + "modeling_m042.py"
    assert [line for line in lines if line.startswith(crashed)] == [
        f"{crashed}:1:1: DL000 worker process killed by SIGSEGV while checking this file "
        "(nesting too deep for the parser?)"
    ]
    # The other 99 results are exactly those of the clean run.
    assert [line for line in lines if not line.startswith(crashed)] == [
        line for line in clean if not line.startswith(crashed)
    ]


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (
            "worker process killed by SIGSEGV",
            "worker process killed by SIGSEGV while checking this file (nesting too deep for the parser?)",
        ),
        (
            "worker process killed by SIGBUS",
            "worker process killed by SIGBUS while checking this file (nesting too deep for the parser?)",
        ),
        (
            "worker process killed by SIGKILL",
            "worker process killed by SIGKILL while checking this file "
            "(killed from outside the worker: out of memory?)",
        ),
        ("worker process killed by SIGTERM", "worker process killed by SIGTERM while checking this file"),
        ("worker process exited with status 3", "worker process exited with status 3 while checking this file"),
    ],
)
def test_a_crash_message_guesses_the_cause_only_from_how_the_worker_died(reason: str, message: str) -> None:
    """A parser's stack overflow faults; SIGKILL comes from outside (the OOM killer) and said
    "nesting too deep" too, sending the user to a file that had nothing wrong."""
    assert _failure_message(Failure(reason, "crash")) == message
    assert _failure_message(Failure("timed out after 5 s", "timeout")) == "timed out after 5 s"


def test_every_crash_costs_only_its_file_and_the_pool_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path, {0, 7, 8, 99})
    monkeypatch.setenv(CRASH_HOOK_ENV, "MARKED")
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    engine = Engine(config, ALL_RULES, Selection(("DL",), ()), jobs=1)
    result = engine.run([root / MODELS])
    dl000 = sorted(f.path for f in result.findings if f.code == "DL000")
    assert dl000 == [MODELS + f"modeling_m{i:03}.py" for i in (0, 7, 8, 99)]
    assert sum(f.code == "DL103" for f in result.findings) == COUNT - 4
    assert engine.stats.worker_crashes == 4  # one worker at a time, replaced after each death


def test_a_hanging_file_times_out_and_the_rest_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path, {3}, config="file-timeout = 1\n")
    monkeypatch.setenv(HANG_HOOK_ENV, "MARKED")
    code, lines = _lines(root, "--jobs", "2")
    assert code == 1
    hung = MODELS + "modeling_m003.py"
    assert [line for line in lines if line.startswith(hung)] == [f"{hung}:1:1: DL000 timed out after 1 s"]
    assert sum(": DL103 " in line for line in lines) == COUNT - 1


def test_hooks_never_fire_outside_a_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path, {5})
    monkeypatch.setenv(CRASH_HOOK_ENV, "MARKED")
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    result = Engine(config, ALL_RULES, Selection(("DL",), ())).run([root / MODELS])  # in this process
    assert sum(f.code == "DL103" for f in result.findings) == COUNT


def test_a_file_over_the_size_cap_is_one_dl000(tmp_path: Path) -> None:
    root = _tree(tmp_path, set(), config="max-file-size = 200\n")
    big = root / MODELS / "modeling_big.py"
    big.write_text("def f(config):\n    return config.attn_backend == 'TRTLLM'\n" + "# padding\n" * 50)
    code, lines = _lines(root, "--jobs", "1")
    assert code == 1
    assert [line for line in lines if "modeling_big" in line] == [
        f"{MODELS}modeling_big.py:1:1: DL000 file too large to check (558 bytes; max-file-size is 200)"
    ]
    assert sum(": DL103 " in line for line in lines) == COUNT


def test_a_rule_exception_in_a_worker_is_that_files_dl000(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from declint.rules.backend_literal import BackendLiteral

    root = _tree(tmp_path, set())
    original = BackendLiteral._message

    def boom(self: BackendLiteral, string: object) -> str | None:
        if self.context.rel.endswith("m010.py"):
            raise ValueError("boom")
        return original(self, string)  # type: ignore[arg-type]

    monkeypatch.setattr(BackendLiteral, "_message", boom)  # inherited by the forked workers
    code, lines = _lines(root, "--jobs", "2")
    assert code == 1
    assert f"{MODELS}modeling_m010.py:1:1: DL000 rule DL103 crashed: ValueError: boom" in lines
    assert sum(": DL103 " in line for line in lines) == COUNT - 1


def test_the_installed_entry_point_survives_a_segfault(tmp_path: Path) -> None:
    root = _tree(tmp_path, {1})
    env = {"DECLINT_NO_CACHE": "1", CRASH_HOOK_ENV: "MARKED", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "declint", "check", "--jobs", "2", str(root / MODELS)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.count(": DL103 ") == COUNT - 1
    assert "modeling_m001.py:1:1: DL000 worker process killed by SIGSEGV" in done.stdout


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's reaping is left


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_exit_when_the_main_process_is_killed(tmp_path: Path) -> None:
    import os
    import signal
    import time

    # One worker hangs on the marked file (the parent would time it out after 60 s); the other
    # finishes the rest and waits for more work. Then the parent is SIGKILLed.
    root = _tree(tmp_path, {0}, config="file-timeout = 60\n")
    env = {"DECLINT_NO_CACHE": "1", HANG_HOOK_ENV: "MARKED", "PATH": "/usr/bin:/bin"}
    main = subprocess.Popen(
        [sys.executable, "-m", "declint", "check", "--jobs", "2", str(root / MODELS)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    # The read pool's workers come and go first; then the check pool's two stay: one hanging,
    # one idle once the other files are done.
    workers: set[int] = set()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and main.poll() is None:
        time.sleep(0.5)
        now = {pid for pid in _children(main.pid) if _running(pid)}
        if len(now) == 2 and now == workers:
            break
        workers = now
    assert len(workers) == 2, "the check pool's two workers were not seen"
    os.kill(main.pid, signal.SIGKILL)
    main.wait()
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in workers if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
