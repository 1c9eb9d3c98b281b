"""Fuzzing the fixes: random edits of a copy of the demo, then `check --diff` and `check --fix`
with `--unsafe-fixes` must agree and be safe, whatever the edits made of the tree.

After each sequence of edits (the cache fuzzer's, `test_cache_differential.MUTATIONS`):
- `--diff` writes nothing, and says what it says when its runs share nothing (`SessionMemory`
  off: every re-lint reads and checks every file again);
- `--fix` creates and removes no file, and every Python file it rewrites that parsed before
  still parses;
- the diff, applied with `git apply`, gives exactly the files `--fix` wrote;
- the findings `--fix` reports are those a plain check of the fixed tree reports, line for line
  (the summary lines differ: the count of fixes, and the fixes a plain check offers that --fix
  refused);
- the fixed tree is a fixpoint: `--diff` then offers nothing, unless the round limit stopped
  the fixing (it says so);
- a fix that brings a finding is refused: no rule reports more findings on the fixed tree than
  on the edited one, and every finding of the per-file rules (DL101-DL106) on the fixed tree
  has a fingerprint the edited tree's findings had (code, scope and offending text: a finding
  that only moved or was reworded keeps it).

And `--fix` run with a cache warmed on the unedited tree (with `-j 1` or the default jobs)
writes the same files and prints the same as `--fix --no-cache` on a copy, and a check of the
fixed tree with that cache prints what one without it prints; `--diff` run twice before it and
twice after it (the second session of each pair takes the first's answers, `declint.fix_memo`)
prints what `--diff --no-cache` prints.

An ad-hoc campaign of the first test (60 sequences) found a DL104 fix that was always refused in a file
where DL101 quotes the declaration it corrects, and a refusal that named a finding already there
(tests/test_fix.py has both). CI runs a fixed-seed sample; a longer run:

    DECLINT_FIX_FUZZ_SEQUENCES=60 DECLINT_FIX_FUZZ_CACHE_SEQUENCES=30 DECLINT_FIX_FUZZ_SEED=100 \
        pytest tests/test_fix_fuzz.py
"""

from __future__ import annotations

import ast
import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from declint.cache import NO_CACHE_ENV
from declint.cli import cli
from declint.reporting import pipeline
from tests.conftest import DEMO, ForgetfulMemory, copy_project, settle
from tests.test_cache_differential import MUTATIONS, _age

SEQUENCES = int(os.environ.get("DECLINT_FIX_FUZZ_SEQUENCES", "3"))
CACHE_SEQUENCES = int(os.environ.get("DECLINT_FIX_FUZZ_CACHE_SEQUENCES", "2"))
FIRST_SEED = int(os.environ.get("DECLINT_FIX_FUZZ_SEED", "3"))  # 4 and 5 bring refused fixes
ROUND_LIMIT = "run --fix again"  # how the round limit's message ends (`fixes._Session.rounds`)
# The rules whose findings sit on the code they are about: the project rules' stand on an
# anchor, and the suppression rules' on a comment whose code list a DL902 fix may shorten
PER_FILE_CODES = frozenset({"DL101", "DL102", "DL103", "DL104", "DL105", "DL106"})


def check(root: Path, *options: str) -> Result:
    result = CliRunner().invoke(cli, ["check", "--no-cache", *options, str(root)])
    assert result.exit_code in (0, 1), (options, result.exit_code, result.stderr, result.exception)
    return result


def files_of(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` (symlinks are followed by the fixes, never replaced)."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink() and ".declint_cache" not in path.parts
    }


def parses(data: bytes) -> bool:
    try:
        ast.parse(data)
    except (SyntaxError, ValueError):
        return False
    return True


def findings_lines(report: str) -> list[str]:
    """A text report but its summary: the count of fixes, and the fixable ones a plain check
    counts (it offers the fixes that --fix refused: only --fix verifies them)."""
    return [line for line in report.splitlines() if not line.startswith(("Found ", "[*] "))]


def findings_of(root: Path) -> tuple[Counter[str], set[str]]:
    """How many findings each rule reports, and the fingerprints of the per-file rules' findings."""
    findings = json.loads(check(root, "--format", "json").stdout)["findings"]
    per_file = {finding["fingerprint"] for finding in findings if finding["code"] in PER_FILE_CODES}
    return Counter(finding["code"] for finding in findings), per_file


def apply_diff(root: Path, files: dict[str, bytes], diff: str, into: Path) -> dict[str, bytes]:
    """The files of `root` as `files` had them, with `diff` applied by git (a copy in `into`)."""
    shutil.copytree(root, into, symlinks=True)
    for rel, data in files.items():
        (into / rel).write_bytes(data)
    if diff:
        subprocess.run(["git", "apply", "-p1", "-"], cwd=into, input=diff.encode(), check=True, capture_output=True)
    return files_of(into)


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_diff_and_fix_agree_and_leave_a_fixpoint(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    root = tmp_path / "demo"
    copy_project(DEMO, root)
    history = [rng.choice(MUTATIONS)(rng, root) for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.7:  # else too fresh for the re-lints to trust their stats (`SessionMemory`)
        settle(root)
    where = f"seed {seed}: " + "; ".join(history)
    edited = files_of(root)
    shared = check(root, "--diff", "--unsafe-fixes")
    diff = shared.stdout
    assert files_of(root) == edited, f"--diff wrote files ({where})"
    with monkeypatch.context() as patch:
        patch.setattr(pipeline, "SessionMemory", ForgetfulMemory)
        alone = check(root, "--diff", "--unsafe-fixes")
    assert (alone.stdout, alone.stderr) == (diff, shared.stderr), f"runs that reuse nothing differ ({where})"
    counts, fingerprints = findings_of(root)

    fixed = check(root, "--fix", "--unsafe-fixes")
    after = files_of(root)
    assert after.keys() == edited.keys(), where
    for rel, data in after.items():
        if data != edited[rel] and rel.endswith(".py") and parses(edited[rel]):
            assert parses(data), f"{rel} no longer parses ({where})"
    assert apply_diff(root, edited, diff, tmp_path / "patched") == after, f"--diff is not what --fix wrote ({where})"

    assert findings_lines(fixed.stdout) == findings_lines(check(root).stdout), f"--fix reported otherwise ({where})"
    again = check(root, "--diff", "--unsafe-fixes").stdout
    assert ROUND_LIMIT in fixed.stderr or again == "", f"not a fixpoint ({where}):\n{again}"
    counts_after, fingerprints_after = findings_of(root)
    assert counts_after - counts == Counter(), f"a fix brought findings ({where}): {counts_after - counts}"
    assert fingerprints_after <= fingerprints, f"a fix brought findings ({where})"


def declint_check(root: Path, *options: str) -> tuple[str, str]:
    """(stdout, stderr) of `declint check` run as a user runs it, the cache on unless told off."""
    command = [sys.executable, "-m", "declint", "check", *options, "."]
    env = {name: value for name, value in os.environ.items() if name != NO_CACHE_ENV}
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout, done.stderr


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + CACHE_SEQUENCES))
def test_fix_with_a_warm_cache_does_what_it_does_without(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    cached = tmp_path / "cached"
    copy_project(DEMO, cached)
    _age(cached)
    declint_check(cached)  # the cache, warmed on the tree before the edits
    history = [rng.choice(MUTATIONS)(rng, cached) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.7:  # else the edited files are too fresh for their stats to be trusted
        _age(cached)
    uncached = tmp_path / "uncached"
    shutil.copytree(cached, uncached, symlinks=True, ignore=shutil.ignore_patterns(".declint_cache"))
    jobs = rng.choice([(), ("-j", "1")])
    where = f"seed {seed}, jobs {jobs}: " + "; ".join(history)

    # `--diff` twice: the second session over the same files takes the first's answers (`fix_memo`)
    diff = declint_check(uncached, "--diff", "--unsafe-fixes", "--no-cache")
    assert declint_check(cached, "--diff", "--unsafe-fixes", *jobs) == diff, where
    assert declint_check(cached, "--diff", "--unsafe-fixes", *jobs) == diff, where

    with_cache = declint_check(cached, "--fix", "--unsafe-fixes", *jobs)
    assert with_cache == declint_check(uncached, "--fix", "--unsafe-fixes", "--no-cache"), where
    assert files_of(cached) == files_of(uncached), where
    assert declint_check(cached) == declint_check(uncached, "--no-cache"), where

    # And on the fixed tree, with the memo of the sessions before it.
    _age(cached)
    diff = declint_check(uncached, "--diff", "--unsafe-fixes", "--no-cache")
    assert declint_check(cached, "--diff", "--unsafe-fixes", *jobs) == diff, where
    assert declint_check(cached, "--diff", "--unsafe-fixes", *jobs) == diff, where
