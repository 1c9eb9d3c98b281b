"""benchmarks/floor.py's program: each stage does the work it claims (a crashed stage was once timed as a floor)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks.floor import PROGRAM


def _stage(tree: Path, stage: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROGRAM, stage], cwd=tree, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 'Attention backend METADATA'\n", encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text("y = 1\n", encoding="utf-8")
    (tmp_path / "pkg" / "empty.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "notes.txt").write_text("attention backend\n", encoding="utf-8")
    return tmp_path


def test_the_search_stage_asks_every_gate_of_every_file(tmp_path: Path) -> None:
    # a.py holds three gates once lower-cased (attention, backend, metadata); nothing else has any
    assert _stage(_tree(tmp_path), "search") == "3\n"


def test_the_read_stage_reads_every_python_file(tmp_path: Path) -> None:
    assert _stage(_tree(tmp_path), "read") == "2\n"  # the two .py files with bytes; empty.py reads as b""
