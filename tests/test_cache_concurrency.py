"""Several `declint check` processes at once over one cache directory (an editor's lint, a
pre-commit hook and a terminal in the same checkout): none of them reports anything but what a
run without the cache reports, and none leaves the cache saying anything else.

Each sequence copies the demo tree (or generates one, as `tests/test_cache_differential.py`
does), fills the cache, then repeats a step: an edit of the kinds that module makes, the expected
reports (each request run alone with `--no-cache`), and a wave of processes started together with
the cache on: the whole tree, the whole tree with one job, two files by path, one file's
edited text on stdin (`--stdin-filename`, which reads the cache and writes none), and two fix
sessions (`--diff --unsafe-fixes`, which write the fix memo). Each reports what it reports alone
without the cache. In some steps a second edit lands while the wave runs (its
reports are then not compared: the tree changed under them); either way, a run after the wave,
with the cache, reports what a run without it reports, before and after the files written during
the wave age past the racy window, and so do two fix sessions then (the second answered by the
first's memo). The cache's files are replaced whole (`os.replace`) and name
one another by token (the journal its full write, the snapshot its held facts and listings, the
walk file its snapshot), so a run that loses a race with another costs speed, never a finding.
CI runs a fixed-seed sample; a longer campaign:

    DECLINT_CONCURRENCY_FUZZ_SEQUENCES=20 DECLINT_CONCURRENCY_FUZZ_STEPS=8 pytest tests/test_cache_concurrency.py
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.test_cache_differential import MUTATIONS, Tree, _age, _pick, _rel, demo_tree, generated_tree

SEQUENCES = int(os.environ.get("DECLINT_CONCURRENCY_FUZZ_SEQUENCES", "1"))
STEPS = int(os.environ.get("DECLINT_CONCURRENCY_FUZZ_STEPS", "4"))
FIRST_SEED = int(os.environ.get("DECLINT_CONCURRENCY_FUZZ_SEED", "0"))


pytestmark = pytest.mark.usefixtures("cache_on")


class Request(NamedTuple):
    """One `declint check` of a wave: its arguments, and the text it reads on stdin (if any)."""

    arguments: tuple[str, ...]
    stdin: bytes = b""

    def command(self, *options: str) -> list[str]:
        output = () if self.fixes else ("--output-format", "json")  # a fix session prints its diff
        return [sys.executable, "-m", "declint", "check", *output, *options, *self.arguments]

    @property
    def fixes(self) -> bool:
        return "--diff" in self.arguments

    def report(self, stdout: bytes, stderr: bytes) -> str:
        """What it says: the report, or a fix session's diff and what it says of the fixes."""
        return (stdout + stderr).decode() if self.fixes else stdout.decode()


# A fix session: its first lint and its report are runs like the others (they may write the
# cache); it also writes the fix memo (`declint.fix_memo`).
FIXES = Request(("--diff", "--unsafe-fixes", "."))


def _requests(rng: random.Random, root: Path) -> list[Request]:
    """A wave: the tree, the tree with one job, two files by path, one file's edited text on
    stdin, and two fix sessions (`--diff`, with the default jobs and one)."""
    staged = sorted({_rel(_pick(rng, root), root) for _ in range(2)})
    edited = _pick(rng, root)
    text = edited.read_bytes() + f"# buffer {rng.randrange(10**6)}\n".encode()
    return [
        Request((".",)),
        Request(("--jobs", "1", ".")),
        Request(tuple(staged)),
        Request(("--stdin-filename", _rel(edited, root), "-"), text),
        FIXES,
        Request(("--diff", "--unsafe-fixes", "--jobs", "1", ".")),
    ]


def _alone(root: Path, request: Request, *options: str) -> str:
    done = subprocess.run(request.command(*options), cwd=root, input=request.stdin, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr.decode()
    return request.report(done.stdout, done.stderr)


def _wave(root: Path, requests: list[Request], edit: random.Random | None) -> tuple[list[str], str]:
    """The requests' reports, run at once with the cache; `edit`: a second edit made meanwhile.
    A text for stdin is read from a file (written first): every process then starts at once."""
    processes = []
    for number, request in enumerate(requests):
        given = root.parent / f"stdin-{number}"
        given.write_bytes(request.stdin)
        with given.open("rb") as stdin:
            processes.append(
                subprocess.Popen(
                    request.command(), cwd=root, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE
                )
            )
    said = ""
    if edit is not None:
        time.sleep(edit.uniform(0.0, 0.3))
        said = edit.choice(MUTATIONS)(edit, root)
    reports = []
    for request, process in zip(requests, processes, strict=True):
        stdout, stderr = process.communicate()
        # An edit meanwhile may be read half-written: a configuration cut short is a clean error
        # on it (exit 2, no traceback), never a crash.
        torn = edit is not None and process.returncode == 2 and b"Traceback" not in stderr
        assert process.returncode in (0, 1) or torn, stderr.decode()
        reports.append(request.report(stdout, stderr))
    return reports, said


def _concurrent_sequence(seed: int, root: Path, tree: Tree) -> None:
    rng = random.Random(seed)
    tree(seed, root)
    _age(root)
    whole = Request((".",))
    _alone(root, whole)  # fills the cache
    history: list[str] = []
    for step in range(STEPS):
        history.append(rng.choice(MUTATIONS)(rng, root))
        if rng.random() < 0.8:
            _age(root)
        requests = _requests(rng, root)
        expected = [_alone(root, request, "--no-cache") for request in requests]
        during = random.Random(rng.randrange(10**9)) if rng.random() < 0.4 else None
        reports, said = _wave(root, requests, during)
        where = f"seed {seed}, step {step}: {'; '.join(history)}"
        if during is None:
            for request, report, alone in zip(requests, reports, expected, strict=True):
                assert report == alone, f"{where}; concurrent {request.arguments}"
        else:
            history.append(f"{said} (while a wave ran)")
        assert _alone(root, whole) == _alone(root, whole, "--no-cache"), f"{where}; after the wave"
        _age(root)
        assert _alone(root, whole) == _alone(root, whole, "--no-cache"), f"{where}; after the wave, aged"
        # the fix memo the sessions of the wave wrote, then this one's, answer as no memo does
        fixes = _alone(root, FIXES, "--no-cache")
        assert _alone(root, FIXES) == fixes, f"{where}; a fix session after the wave"
        assert _alone(root, FIXES) == fixes, f"{where}; a fix session after the wave, again"


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_runs_at_once_report_what_runs_without_the_cache_report(tmp_path: Path, seed: int) -> None:
    _concurrent_sequence(seed, tmp_path / "demo", demo_tree)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_runs_at_once_on_a_generated_tree(tmp_path: Path, seed: int) -> None:
    _concurrent_sequence(seed, tmp_path / "generated", generated_tree)
