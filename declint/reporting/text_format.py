"""Concise text: `path:line:col: CODE message`, columns 1-based like every editor expects."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from declint.reporting.model import Report
from declint.types import Applicability, Finding, RunResult, escape_controls

ELSEWHERE_HEADING = "Outside the changed lines, caused by the change (not annotated):"


def finding_line(finding: Finding, path: str | None = None) -> str:
    """One line whatever the file is called: a newline or escape sequence in a file name is
    written escaped (`\\n`), as control characters in messages already are. `path`: the file as
    the format names it (default: the finding's own, relative to the project root)."""
    path, message = escape_controls(finding.path if path is None else path), escape_controls(finding.message)
    return f"{path}:{finding.line}:{finding.column + 1}: {finding.code} {message}"


def render(report: Report) -> str:
    lines = [finding_line(item.finding) for item in report.annotated]
    lines += elsewhere_heading(report)
    lines += [finding_line(item.finding) for item in report.elsewhere]
    lines += fix_hint(report)
    lines.append(report.summary_line())
    return "\n".join(lines) + "\n"


def elsewhere_heading(report: Report) -> list[str]:
    """--diff-base: findings the change causes outside its own lines come last, under a heading."""
    return ["", ELSEWHERE_HEADING] if report.elsewhere else []


def fix_hint(report: Report) -> list[str]:
    if not report.fix_hint:
        return []
    fixable = report.fixable()
    safe, unsafe = fixable[Applicability.SAFE], fixable[Applicability.UNSAFE]
    if not safe:
        return []
    more = f"; {unsafe} more with --fix --unsafe-fixes" if unsafe else ""
    return [f"[*] {safe} fixable with --fix{more}."]


def statistics(findings: Iterable[Finding] | RunResult) -> str:
    items = findings.findings if isinstance(findings, RunResult) else findings
    counts = Counter((f.code, f.name) for f in items)
    rows = [f"{count:>5}  {code}  {name}" for (code, name), count in sorted(counts.items())]
    return "\n".join(rows) + ("\n" if rows else "")
