"""Differential fuzzing of `--diff-base`'s merge base: after random changes on a branch, the merge
base put back (`declint.base_view`) gives the fingerprints that the extracted merge base gives.

Each sequence copies the demo, commits it on `main` and branches. Each step makes a random edit
of the cache campaign's (tests/test_cache_differential.py): most of the kinds the view puts back
(a line appended, deleted or retyped, a file created or copied, the Literal edited or copied, a
class rebased, a subclass written elsewhere, a declaration dropped, a touch, a save by rename, an
option toggled, a file renamed or deleted), some that make it fall back for the rest of the
sequence (a package marker added or removed, the docs table edited, a .gitignore, a symlink). The
edit is left in the working tree, staged, or committed on the branch. Then the working tree is
checked as the command line checks it (with the cache; without one; without one but with the
check's data kept in memory; in this process or in worker processes, a check worker forked
before the view as on two cores), and the merge base's fingerprints from the view, its check
vouched for by the working tree's as `check` does, are compared with those of the merge base
extracted from git. The first step of each sequence is always one the view puts back, unless it
deleted a package marker (left to the extraction). CI runs a fixed-seed sample; a campaign:

    DECLINT_BASE_FUZZ_SEQUENCES=30 DECLINT_BASE_FUZZ_STEPS=8 DECLINT_BASE_FUZZ_SEED=100 \\
        pytest tests/test_base_view_fuzz.py
"""

from __future__ import annotations

import dataclasses
import os
import random
from pathlib import Path, PurePosixPath

import pytest

from declint.base_view import base_view
from declint.cache import SessionMemory
from declint.changed_lines import archived_base_fingerprints, base_fingerprints, compute
from declint.config import find_config_file, load_config
from declint.engine import Engine, Selection
from declint.rules import ALL_RULES, RULES_BY_CODE
from tests import test_cache_differential as edits
from tests.conftest import DEMO, copy_project
from tests.test_base_view import isolate_git
from tests.test_formats_diff_base import git

SEQUENCES = int(os.environ.get("DECLINT_BASE_FUZZ_SEQUENCES", "2"))
STEPS = int(os.environ.get("DECLINT_BASE_FUZZ_STEPS", "4"))
FIRST_SEED = int(os.environ.get("DECLINT_BASE_FUZZ_SEED", "0"))

PUT_BACK: tuple[edits.Mutation, ...] = (
    edits.append_comment,
    edits.delete_line,
    edits.retype_backend,
    edits.add_line,
    edits.create_copy,
    edits.edit_literal,
    edits.touch_same_bytes,
    edits.save_by_rename,
    edits.toggle_config,
    edits.subclass_elsewhere,
    edits.rebase_class,
    edits.copy_literal,
    edits.drop_declaration,
    edits.rename_file,
    edits.delete_file,
)
FALL_BACK: tuple[edits.Mutation, ...] = (
    edits.new_package,
    edits.drop_package_marker,
    edits.edit_docs,
    edits.toggle_gitignore,
    edits.add_symlink,
)
pytestmark = pytest.mark.usefixtures("cache_on")


def _engine(root: Path, mode: str, jobs: int | None) -> Engine:
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    memory = SessionMemory() if mode == "memory" else None
    cache = mode == "cache"
    return Engine(
        config, ALL_RULES, Selection(("DL",), ()), keep_suppressed=True, jobs=jobs, cache=cache, memory=memory
    )


def _edit(rng: random.Random, root: Path, first: bool) -> str:
    mutations = PUT_BACK if first or rng.random() < 0.85 else FALL_BACK
    done = rng.choice(mutations)(rng, root)
    way = rng.choice(("left in the working tree", "staged", "committed"))
    if way != "left in the working tree":
        git(root, "add", "-A")
    if way == "committed":
        git(root, "commit", "-q", "--allow-empty", "-m", done)
    return f"{done}, {way}"


def _package_marker(path: str | None) -> bool:
    """`delete_file` may delete an `__init__.py`, which the view leaves to the extraction."""
    return path is not None and PurePosixPath(path).name == "__init__.py"


def _compare(rng: random.Random, root: Path, history: list[str], first: bool) -> None:
    mode = rng.choice(("cache", "none", "memory"))
    jobs = rng.choice((None, 2))  # in this process, or in workers (one forked before the view)
    run = _engine(root, mode, jobs)
    result = run.run([root])  # as the command line: the working tree first, then the merge base
    also = {f.path for f in [*result.findings, *(s.finding for s in result.suppressed)]}
    changed = compute(root, "main", [root])
    where = f"{'; '.join(history)} (checked with {mode}, jobs {jobs})"
    if first and not any(_package_marker(path) for entry in changed.project for path in (entry.old, entry.new)):
        assert base_view(run.config, run.enabled_codes, [root], changed) is not None, where
    put_back = base_fingerprints(dataclasses.replace(run, vouched=run.state_token), [root], changed, also)  # as `check`
    extracted = archived_base_fingerprints(run, [root], changed, also)
    assert put_back == extracted, f"{where}: only put back {sorted(put_back - extracted)}, only extracted " + str(
        sorted(extracted - put_back)
    )


@pytest.mark.parametrize("seed", range(FIRST_SEED, FIRST_SEED + SEQUENCES))
def test_the_merge_base_put_back_is_the_merge_base_extracted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    from declint import lazy, stat_check

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)  # workers forked ahead, as with two cores
    monkeypatch.setattr(lazy, "loaded", lambda name: False)  # (this test process may have loaded libcst)
    rng = random.Random(seed)
    root = tmp_path / "repo"
    isolate_git(root, monkeypatch)
    copy_project(DEMO, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "feature")
    history: list[str] = []
    for step in range(STEPS):
        history.append(_edit(rng, root, step == 0))
        edits._age(root)
        _compare(rng, root, history, step == 0)
