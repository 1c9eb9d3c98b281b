"""GitHub Actions: workflow-command annotations, a plain log listing, and a job-summary table.

GitHub shows at most 10 error and 10 warning annotations per step (50 per job) and drops the
rest silently, so declint emits the first 10 of each level itself and then one notice that
counts what it left out; every finding is still listed in the log (a collapsed group) and in the
Markdown summary, which the CLI appends to `$GITHUB_STEP_SUMMARY` when it is set (capped at the
1 MiB GitHub accepts per step). Text is escaped as GitHub's toolkit escapes it: `%`, CR and LF
in messages; also `:` and `,` in properties.

Every other line (the log listing, the summary line) is plain text that may quote file names and
source text from the pull request, so it is written so that the runner cannot take it for a
workflow command: see `log_text`.

With --diff-base, only findings on changed lines are annotated; those the change causes
elsewhere get a notice and their own section in the log and the summary.
"""

from __future__ import annotations

from collections import Counter

from declint.reporting.model import TOOL_NAME, Item, Report
from declint.reporting.text_format import finding_line, fix_hint
from declint.types import Severity, escape_controls

ANNOTATIONS_PER_LEVEL = 10
SUMMARY_LIMIT = 1024 * 1024
_SUMMARY_RESERVE = 4096  # room for the closing note when the table is cut


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def log_text(line: str) -> str:
    """`line` as plain log text the runner never reads as a workflow command.

    The runner takes a line for a command when it starts with `::` once leading whitespace is
    trimmed, or (the legacy syntax, still read) when it holds `##[` anywhere. A file named
    `::warning file=x,line=1::…` listed as it is would forge an annotation, and `::stop-commands::`
    would silence every later one. Control characters are escaped first (a newline would start a
    new line); then a leading `:` and the `[` of `##[` are percent-escaped, as GitHub escapes them.
    """
    line = escape_controls(line).replace("##[", "##%5B")
    body = line.lstrip()
    if body.startswith("::"):
        line = line[: len(line) - len(body)] + "%3A" + body[1:]
    return line


def _level(item: Item) -> str:
    return "error" if item.finding.severity is Severity.ERROR else "warning"


def annotation(item: Item, report: Report) -> str:
    finding = item.finding
    start, end = finding.span.start, finding.span.end
    props = [f"file={escape_property(report.display_path(finding.path))}", f"line={start.line}"]
    if end.line > start.line:
        props.append(f"endLine={end.line}")
    else:
        props.append(f"col={start.column + 1}")
        if end.column > start.column:
            props.append(f"endColumn={end.column + 1}")
    props.append(f"title={escape_property(f'{TOOL_NAME} {finding.code} ({finding.name})')}")
    message = finding.message
    if item.fix is not None:
        flag = "--fix" if item.fix.applicability.value == "safe" else "--fix --unsafe-fixes"
        message += f"\n\nFix ({item.fix.applicability.value}, `declint check {flag}`): {item.fix.description}"
    if report.docs_url:
        message += f"\n\n{report.doc_url(finding.code, finding.name)}"
    return f"::{_level(item)} {','.join(props)}::{escape_data(message)}"


def render(report: Report) -> str:
    lines: list[str] = []
    shown: Counter[str] = Counter()
    dropped = 0
    for item in report.annotated:
        level = _level(item)
        if shown[level] >= ANNOTATIONS_PER_LEVEL:
            dropped += 1
            continue
        shown[level] += 1
        lines.append(annotation(item, report))
    if dropped:
        lines.append(
            f"::notice title={TOOL_NAME}::{dropped} more finding{'s' if dropped != 1 else ''} not annotated: "
            f"GitHub shows at most {ANNOTATIONS_PER_LEVEL} error and {ANNOTATIONS_PER_LEVEL} warning annotations "
            "per step. All findings are listed in the log and the job summary."
        )
    if report.elsewhere:
        count = len(report.elsewhere)
        lines.append(
            f"::notice title={TOOL_NAME}::{count} finding{'s' if count != 1 else ''} outside the changed lines, "
            "caused by the change: listed in the log and the job summary."
        )
    if report.items:
        lines.append(f"::group::{TOOL_NAME}: {len(report.items)} finding{'s' if len(report.items) != 1 else ''}")
        # The repository-relative paths of the annotations (a project in a subdirectory)
        lines += [
            log_text(finding_line(item.finding, report.display_path(item.finding.path))) for item in report.annotated
        ]
        if report.elsewhere:
            lines.append("Outside the changed lines, caused by the change:")
            lines += [
                log_text(finding_line(item.finding, report.display_path(item.finding.path)))
                for item in report.elsewhere
            ]
        lines.append("::endgroup::")
    lines += [log_text(line) for line in (*fix_hint(report), report.summary_line())]
    return "\n".join(lines) + "\n"


def step_summary(report: Report) -> str:
    """Markdown for `$GITHUB_STEP_SUMMARY`, at most SUMMARY_LIMIT bytes."""
    head = [f"## {TOOL_NAME}", "", _md(report.summary_line()), ""]
    sections: list[tuple[str, tuple[Item, ...]]] = [("", report.annotated)]
    if report.diff is not None:
        sections = [
            (f"### On the lines changed since `{_md(report.diff.rev)}`", report.annotated),
            ("### Outside the changed lines, caused by the change", report.elsewhere),
        ]
    out = "\n".join(head) + "\n"
    budget = SUMMARY_LIMIT - _SUMMARY_RESERVE
    left_out = 0
    for title, items in sections:
        if not items:
            continue
        block = ([title, ""] if title else []) + ["| level | location | rule | message |", "|---|---|---|---|"]
        text = "\n".join(block) + "\n"
        if len((out + text).encode()) > budget:
            left_out += len(items)
            continue
        out += text
        for item in items:
            row = _row(item, report) + "\n"
            if len((out + row).encode()) > budget:
                left_out += 1
                continue
            out += row
        out += "\n"
    if left_out:
        out += f"{left_out} more findings not shown: the job summary is limited to 1 MiB per step.\n"
    return out


def _row(item: Item, report: Report) -> str:
    finding = item.finding
    location = f"`{_md(report.display_path(finding.path))}:{finding.line}:{finding.column + 1}`"
    rule = f"[{finding.code}]({report.doc_url(finding.code, finding.name)})" if report.docs_url else finding.code
    return f"| {_level(item)} | {location} | {rule} {finding.name} | {_md(finding.message)} |"


def _md(text: str) -> str:
    """Table-cell safe: no pipes, no line breaks, no stray HTML."""
    return " ".join(escape_controls(text).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").split())
