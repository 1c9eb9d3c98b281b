"""Byte-identical output whatever order the file system lists the tree in."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import DEMO, copy_project

FORMATS = ["text", "full", "json", "jsonl", "sarif", "github", "rdjson", "rdjsonl", "gitlab", "junit"]


class _Listing:
    """os.scandir's result with its entries reversed (the context-manager protocol kept)."""

    def __init__(self, entries: list[Any]) -> None:
        self.entries = iter(entries)

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        return next(self.entries)

    def close(self) -> None:
        return None

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.mark.parametrize("output_format", FORMATS)
def test_output_does_not_depend_on_directory_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output_format: str
) -> None:
    root = tmp_path / "demo"
    copy_project(DEMO, root)
    plain = CliRunner().invoke(cli, ["check", "--output-format", output_format, str(root)])
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path=".": _Listing(list(reversed(list(real_scandir(path))))))
    reversed_order = CliRunner().invoke(cli, ["check", "--output-format", output_format, str(root)])
    assert plain.exit_code == reversed_order.exit_code == 1
    assert plain.output == reversed_order.output
