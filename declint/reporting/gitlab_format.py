"""GitLab Code Quality: a JSON array of issues (the Code Climate subset GitLab reads).

GitLab merges issues by `fingerprint`, so it is the same stable fingerprint as the json output
and the baseline (unique per finding). Errors are `major`, warnings `minor`.
"""

from __future__ import annotations

from typing import Any

from declint.reporting.model import Item, Report
from declint.types import Severity


def issue(item: Item, report: Report) -> dict[str, Any]:
    finding = item.finding
    return {
        "type": "issue",
        "check_name": finding.code,
        "description": f"{finding.code} {finding.message}",
        "content": {"body": f"{finding.name}: {report.doc_url(finding.code, finding.name)}"},
        "categories": ["Bug Risk"],
        "fingerprint": item.fingerprint,
        "severity": "major" if finding.severity is Severity.ERROR else "minor",
        "location": {
            "path": report.display_path(finding.path),
            "lines": {"begin": finding.span.start.line, "end": max(finding.span.end.line, finding.span.start.line)},
        },
    }


def render(report: Report) -> str:
    import json

    return json.dumps([issue(item, report) for item in report.items], indent=2, ensure_ascii=False) + "\n"
