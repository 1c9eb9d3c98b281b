"""Full text: each finding with its source snippet, where it is, its rule, and its fix as a diff.

ASCII only (no box-drawing characters), so that it survives every CI log viewer; tabs in source
lines are expanded so the carets line up.
"""

from __future__ import annotations

from declint.reporting.model import Item, Report
from declint.reporting.text_format import ELSEWHERE_HEADING, finding_line, fix_hint
from declint.source import split_lines
from declint.types import Applicability

_CONTEXT_LINES = 1
_MAX_SPAN_LINES = 6
_TAB = 4


def render(report: Report) -> str:
    blocks = [render_item(item, report) for item in report.annotated]
    if report.elsewhere:
        blocks.append(ELSEWHERE_HEADING + "\n")
        blocks += [render_item(item, report) for item in report.elsewhere]
    tail = [*fix_hint(report), report.summary_line()]
    return "\n".join([*blocks, "\n".join(tail) + "\n"])


def render_item(item: Item, report: Report) -> str:
    finding = item.finding
    lines = [finding_line(finding)]
    lines += snippet(item, report)
    where = f"in {finding.context}; " if finding.context else ""
    lines.append(f"  = {where}{finding.code} {finding.name}: {report.doc_url(finding.code, finding.name)}")
    if item.fix is not None:
        how = "--fix" if item.fix.applicability is Applicability.SAFE else "--fix --unsafe-fixes"
        lines.append(f"  = {item.fix.applicability.value} fix ({how}): {item.fix.description}")
        lines += ["    " + line if line else "" for line in split_lines(item.fix.diff)]
    return "\n".join(lines) + "\n"


def snippet(item: Item, report: Report) -> list[str]:
    finding = item.finding
    source = report.sources.lines(finding.path)
    start, end = finding.span.start, finding.span.end
    if not 1 <= start.line <= len(source):
        return []
    last = min(max(end.line, start.line), len(source), start.line + _MAX_SPAN_LINES - 1)
    first_shown = max(1, start.line - _CONTEXT_LINES)
    last_shown = min(len(source), last + _CONTEXT_LINES)
    width = len(str(last_shown))
    gutter = " " * width + " |"
    out = [gutter]
    for number in range(first_shown, last_shown + 1):
        text = source[number - 1]
        out.append(f"{number:>{width}} | {text.expandtabs(_TAB)}".rstrip())
        if start.line <= number <= last:
            caret = _carets(text, number, start.line, start.column, end.line, end.column)
            if caret:
                out.append(f"{gutter} {caret}".rstrip())
    out.append(gutter)
    return out


def _carets(text: str, number: int, l1: int, c1: int, l2: int, c2: int) -> str:
    begin = c1 if number == l1 else len(text) - len(text.lstrip())
    stop = c2 if number == l2 else len(text.rstrip())
    if (l1, c1) >= (l2, c2):  # a point: one caret
        stop = begin + 1
    begin_col = len(text[:begin].expandtabs(_TAB))
    stop_col = max(begin_col + 1, len(text[:stop].expandtabs(_TAB)))
    return " " * begin_col + "^" * (stop_col - begin_col)
