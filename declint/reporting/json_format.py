"""Versioned JSON: `schema_version` bumps on any incompatible change of this layout.

Lines are 1-based, columns 0-based, end positions exclusive (libcst's convention).
"""

from __future__ import annotations

import json
from typing import Any

from declint import __version__
from declint.types import Finding, RunResult

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


def render(result: RunResult) -> str:
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "declint", "version": __version__},
        "summary": {
            "findings": len(result.findings),
            "files_checked": result.files_checked,
            "files_indexed": result.files_indexed,
            "rules": list(result.rule_codes),
        },
        "findings": [finding_to_json(f) for f in result.findings],
    }
    return json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
