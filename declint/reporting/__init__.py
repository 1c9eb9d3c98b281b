"""Output formats: one module each, all fed from the same sorted findings (a `Report`).

The JSON formats import `json` where they render: a text run (pre-commit) never loads it.
"""

from __future__ import annotations

from collections.abc import Callable

from declint.reporting import (
    full_format,
    github_format,
    gitlab_format,
    json_format,
    jsonl_format,
    junit_format,
    rdjson_format,
    sarif_format,
    text_format,
)
from declint.reporting.json_format import doc_anchor
from declint.reporting.model import Report, plain_report
from declint.types import RunResult

Renderer = Callable[[Report], str]
Formatter = Callable[[RunResult], str]

__all__ = ["FORMATS", "RENDERERS", "Formatter", "Renderer", "Report", "doc_anchor", "plain_report"]

RENDERERS: dict[str, Renderer] = {
    "text": text_format.render,
    "full": full_format.render,
    "json": json_format.render,
    "jsonl": jsonl_format.render,
    "sarif": sarif_format.render,
    "github": github_format.render,
    "rdjson": rdjson_format.render,
    "rdjsonl": rdjson_format.render_lines,
    "gitlab": gitlab_format.render,
    "junit": junit_format.render,
}


def _plain(renderer: Renderer) -> Formatter:
    return lambda result: renderer(plain_report(result))


# For callers that hold only a RunResult (no fingerprints, fixes or baseline in the output).
FORMATS: dict[str, Formatter] = {name: _plain(renderer) for name, renderer in RENDERERS.items()}
