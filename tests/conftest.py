from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from declint.cache import NO_CACHE_ENV, CacheData, SessionMemory
from declint.testing import PRELUDE, write_tree

# The CLI caches under the project root; tests that check examples/ must leave nothing behind
# (subprocesses inherit this too). Cache tests opt back in with the `cache_on` fixture.
os.environ[NO_CACHE_ENV] = "1"

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "mini_trtllm"


def _shared_data() -> Path:
    """The official SARIF and rdjson schemas: `../shared/data` beside the checkout (the
    workplace's layout), the nearest such folder above it (a clone made deeper), or the folder
    DECLINT_SHARED_DATA names. Tests read them there; the project never ships a copy."""
    given = os.environ.get("DECLINT_SHARED_DATA")
    if given:
        return Path(given)
    found = (parent / "shared" / "data" for parent in REPO.parents)
    return next((path for path in found if path.is_dir()), REPO.parent / "shared" / "data")


SHARED_DATA = _shared_data()

MakeTree = Callable[[dict[str, str]], Path]


def copy_project(source: Path, destination: Path) -> None:
    """Copy a checked-in tree without what running it locally leaves there: the README's
    `declint check examples/mini_trtllm` writes a (git-ignored) .declint_cache into the demo, and
    a copy that kept it would start warm."""
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(".declint_cache", "__pycache__"))


def settle(root: Path) -> None:
    """Age the mtime of files written in the last seconds past the racy window (the others keep
    theirs, so their cached stat still holds)."""
    now = time.time()
    for path in root.rglob("*"):
        if path.is_file() and ".declint_cache" not in path.parts and path.stat().st_mtime > now - 30:
            os.utime(path, (now - 60, now - 60))


@pytest.fixture
def cache_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache read and written, as a user's run does (`pytestmark = pytest.mark.usefixtures("cache_on")`)."""
    monkeypatch.delenv(NO_CACHE_ENV, raising=False)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo tree whose files are past the racy window (a warm run trusts their stats)."""
    root = tmp_path / "demo"
    copy_project(DEMO, root)
    settle(root)
    return root


@pytest.fixture
def make_tree(tmp_path: Path) -> MakeTree:
    """A TensorRT-LLM-shaped project (the prelude) plus the given files; returns its root."""

    def make(files: dict[str, str]) -> Path:
        write_tree(tmp_path, {**PRELUDE, **files})
        return tmp_path

    return make


class ForgetfulMemory(SessionMemory):
    """A `SessionMemory` that serves nothing: every run of a fix session reads and checks every
    file again (the runs that reuse a first lint's results must say the same)."""

    def load(self, key: str) -> CacheData:
        return CacheData(key)
