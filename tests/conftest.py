from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from declint.testing import PRELUDE, write_tree

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "mini_trtllm"
SHARED_DATA = REPO.parent / "shared" / "data"

MakeTree = Callable[[dict[str, str]], Path]


@pytest.fixture
def make_tree(tmp_path: Path) -> MakeTree:
    """A TensorRT-LLM-shaped project (the prelude) plus the given files; returns its root."""

    def make(files: dict[str, str]) -> Path:
        write_tree(tmp_path, {**PRELUDE, **files})
        return tmp_path

    return make
