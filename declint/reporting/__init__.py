"""Output formats: one module each, all fed from the same sorted findings."""

from __future__ import annotations

from collections.abc import Callable

from declint.reporting import json_format, text_format
from declint.reporting.json_format import doc_anchor
from declint.types import RunResult

Formatter = Callable[[RunResult], str]

__all__ = ["FORMATS", "Formatter", "doc_anchor"]

FORMATS: dict[str, Formatter] = {
    "text": text_format.render,
    "json": json_format.render,
}
