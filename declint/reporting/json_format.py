"""Versioned JSON: `schema_version` bumps on any incompatible change of this layout.

Lines are 1-based, columns 0-based, end positions exclusive (libcst's convention). Fields added
since version 1 (compatible): per finding `fingerprint` and `fix`; `summary.fixable`; and, only
when their option is used, `on_changed_lines` per finding plus the top-level `changed_lines`
(--diff-base), `baseline` (--baseline) and `suppressed` (--include-suppressed).
"""

from __future__ import annotations

from typing import Any

from declint.reporting.model import Edit, FixPreview, Item, Report
from declint.types import Applicability, Finding

SCHEMA_VERSION = 1


def doc_anchor(code: str, name: str) -> str:
    """Where a rule is explained; `declint rule CODE` prints the same text."""
    return f"docs/rules.md#{code.lower()}-{name}"


def finding_to_json(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "path": finding.path,
        "line": finding.span.start.line,
        "column": finding.span.start.column,
        "end_line": finding.span.end.line,
        "end_column": finding.span.end.column,
        "message": finding.message,
        "context": finding.context,
        "doc": doc_anchor(finding.code, finding.name),
    }


def edit_to_json(edit: Edit) -> dict[str, Any]:
    return {
        "line": edit.start.line,
        "column": edit.start.column,
        "end_line": edit.end.line,
        "end_column": edit.end.column,
        "content": edit.content,
    }


def fix_to_json(fix: FixPreview | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "description": fix.description,
        "edits": [edit_to_json(edit) for edit in fix.edits],
    }


def item_to_json(item: Item, report: Report) -> dict[str, Any]:
    data = finding_to_json(item.finding)
    data["fingerprint"] = item.fingerprint
    data["fix"] = fix_to_json(item.fix)
    if report.diff is not None:
        data["on_changed_lines"] = item.on_changed_lines
    return data


def render(report: Report) -> str:
    import json

    fixable = report.fixable()
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "declint", "version": report.version},
        "summary": {
            "findings": len(report.items),
            "files_checked": report.files_checked,
            "files_indexed": report.files_indexed,
            "rules": list(report.rule_codes),
            "fixable": {"safe": fixable[Applicability.SAFE], "unsafe": fixable[Applicability.UNSAFE]},
        },
        "findings": [item_to_json(item, report) for item in report.items],
    }
    if report.diff is not None:
        document["changed_lines"] = {
            "rev": report.diff.rev,
            "merge_base": report.diff.merge_base,
            "changed_files": report.diff.changed_files,
            "preexisting_elsewhere": report.diff.preexisting_elsewhere,
        }
    if report.baseline is not None:
        document["baseline"] = {
            "path": report.baseline.path,
            "entries": report.baseline.entries,
            "matched": report.baseline.matched,
        }
    if report.include_suppressed:
        document["suppressed"] = [
            {**item_to_json(item, report), "suppression": item.suppression_kind, "justification": item.justification}
            for item in report.suppressed
        ]
    return json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
