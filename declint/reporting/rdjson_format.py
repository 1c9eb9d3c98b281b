"""reviewdog's Diagnostic Format: `rdjson` (one DiagnosticResult) and `rdjsonl` (a Diagnostic a line).

Positions are 1-based lines and 1-based columns counted in UTF-8 bytes, ends exclusive, as the
format defines them. Paths are relative to the working directory (`../` included when it lies
inside the project): reviewdog joins them to the directory it runs in. A fix becomes a
suggestion that replaces whole lines (the form GitHub's suggested changes need), so
`reviewdog -reporter=github-pr-review` offers it as a one-click change; unsafe fixes are
offered too, since a suggestion is reviewed before it is applied.
"""

from __future__ import annotations

from typing import Any

from declint.reporting.model import TOOL_NAME, Edit, Item, Report
from declint.reporting.sources import utf8_column
from declint.types import Position, Severity


def render(report: Report) -> str:
    import json

    document = {
        "source": _source(report),
        "severity": "ERROR" if any(i.finding.severity is Severity.ERROR for i in report.items) else "WARNING",
        "diagnostics": [diagnostic(item, report) for item in report.items],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render_lines(report: Report) -> str:
    import json

    return "".join(json.dumps(diagnostic(item, report), ensure_ascii=False) + "\n" for item in report.items)


def _source(report: Report) -> dict[str, str]:
    source = {"name": TOOL_NAME}
    if report.docs_url:
        source["url"] = report.docs_url
    return source


def diagnostic(item: Item, report: Report) -> dict[str, Any]:
    finding = item.finding
    path = report.cwd_path(finding.path)
    data: dict[str, Any] = {
        "message": finding.message,
        "location": {"path": path, "range": _range(report, finding.path, finding.span.start, finding.span.end)},
        "severity": "ERROR" if finding.severity is Severity.ERROR else "WARNING",
        "source": _source(report),
        "code": {"value": finding.code, "url": report.doc_url(finding.code, finding.name)},
    }
    if item.fix is not None:
        data["suggestions"] = [_suggestion(report, finding.path, edit) for edit in item.fix.line_edits]
    return data


def _range(report: Report, rel: str, start: Position, end: Position) -> dict[str, Any]:
    begin = _position(report, rel, start)
    if (end.line, end.column) <= (start.line, start.column):
        return {"start": begin}
    return {"start": begin, "end": _position(report, rel, end)}


def _position(report: Report, rel: str, position: Position) -> dict[str, int]:
    return {"line": position.line, "column": utf8_column(report.sources.line(rel, position.line), position.column)}


def _suggestion(report: Report, rel: str, edit: Edit) -> dict[str, Any]:
    return {
        "range": {"start": _position(report, rel, edit.start), "end": _position(report, rel, edit.end)},
        "text": edit.content,
    }
