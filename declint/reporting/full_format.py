"""Full text: each finding with its source snippet, where it is, its rule, and its fix as a diff.

ASCII only (no box-drawing characters), so that it survives every CI log viewer; tabs in source
lines are expanded so the carets line up. Other control characters of the source (an ANSI escape
in a string, a bare CR) are shown escaped, as Python writes them: printed raw, they would drive
the reader's terminal (recolour, overwrite or hide lines), and the carets count them as written.
"""

from __future__ import annotations

from declint.reporting.model import Item, Report
from declint.reporting.text_format import ELSEWHERE_HEADING, finding_line, fix_hint
from declint.source import split_lines
from declint.types import Applicability, escape_controls

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
        lines += ["    " + _escaped(line) if line else "" for line in split_lines(item.fix.diff)]
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
        out.append(f"{number:>{width}} | {_shown(text)}".rstrip())
        if start.line <= number <= last:
            caret = _carets(text, number, start.line, start.column, end.line, end.column)
            if caret:
                out.append(f"{gutter} {caret}".rstrip())
    out.append(gutter)
    return out


def _carets(text: str, number: int, l1: int, c1: int, l2: int, c2: int) -> str:
    begin = c1 if number == l1 else len(text) - len(text.lstrip())
    stop = c2 if number == l2 else len(text.rstrip(" \t"))  # not the controls `rstrip()` drops: they are shown
    if (l1, c1) >= (l2, c2):  # a point: one caret
        stop = begin + 1
    begin_col = len(_shown(text[:begin]))
    stop_col = max(begin_col + 1, len(_shown(text[:stop])))
    return " " * begin_col + "^" * (stop_col - begin_col)


def _shown(text: str) -> str:
    """A source line as printed: tabs expanded, other unprintable characters escaped. The
    carets' columns are the lengths of the shown prefixes, so they stay under their text."""
    return text if text.isprintable() else _escaped(text).expandtabs(_TAB)


def _escaped(text: str) -> str:
    """`text` with its unprintable characters escaped, its tabs kept (a diff keeps them as is)."""
    return "\t".join(escape_controls(part) for part in text.split("\t"))
