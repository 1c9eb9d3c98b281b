"""`# declint: ignore[DL101] reason` comments, and the hygiene findings about them (DL901-903).

A suppression applies to a finding when the comment sits on any line the finding's node spans
(a trailing comment on a multi-line call), or alone on the line right above the node's first
line (blank lines and other comments in between are allowed).
"""

from __future__ import annotations

import io
import re
import tokenize
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from declint.config import suggest
from declint.source import split_lines
from declint.types import Applicability, Finding, Fix, Position, Span, SuppressedFinding

MARKER = b"declint:"
_PATTERN = re.compile(r"#\s*declint:\s*ignore\[(?P<codes>[^\]]*)\](?P<reason>.*)$")
_REASON_SEPARATORS = " \t:-\u2013\u2014"  # hyphen, en and em dashes


@dataclass
class Suppression:
    line: int
    column: int
    codes: tuple[str, ...]
    reason: str
    applies_from: int  # first line of the node it covers when standalone, else `line`
    used: set[str] = field(default_factory=set)


def parse_suppressions(text: str) -> list[Suppression]:
    lines = split_lines(text)
    found: list[Suppression] = []
    try:
        # newline="": a lone \r ends a line here too, as in ast (StringIO's readline splits at \n only).
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline="").readline))
    except (tokenize.TokenError, SyntaxError):
        return found
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        match = _PATTERN.match(token.string)
        if match is None:
            continue
        line, column = token.start
        codes = tuple(c.strip().upper() for c in match.group("codes").split(",") if c.strip())
        reason = match.group("reason").strip(_REASON_SEPARATORS)
        standalone = token.line[:column].strip() == ""
        applies_from = _next_code_line(lines, line) if standalone else line
        found.append(Suppression(line, column, codes, reason, applies_from))
    return found


def _next_code_line(lines: list[str], line: int) -> int:
    for number in range(line + 1, len(lines) + 1):
        stripped = lines[number - 1].strip()
        if stripped and not stripped.startswith("#"):
            return number
    return line


class SuppressionIndex:
    """The suppression that hides a finding: the first, in source order, that names its code and
    covers it. Found by line (the comments on the lines the finding spans, and those that apply
    from its first line) instead of trying every comment for every finding, which made a file
    with thousands of suppressed findings quadratic (10,000: 16 s, most of it here)."""

    def __init__(self, suppressions: list[Suppression]) -> None:
        self.suppressions = suppressions
        self._by_line = sorted(range(len(suppressions)), key=lambda i: suppressions[i].line)
        self._lines = [suppressions[i].line for i in self._by_line]
        self._from: dict[int, list[int]] = {}
        for index, suppression in enumerate(suppressions):
            self._from.setdefault(suppression.applies_from, []).append(index)

    def hiding(self, finding: Finding) -> Suppression | None:
        start, end = finding.span.start.line, finding.span.end.line
        on_lines = self._by_line[bisect_left(self._lines, start) : bisect_right(self._lines, end)]
        candidates = (i for i in (*on_lines, *self._from.get(start, ())) if finding.code in self.suppressions[i].codes)
        first = min(candidates, default=None)
        return None if first is None else self.suppressions[first]


@dataclass(frozen=True)
class HygieneCodes:
    missing_reason: str = "DL901"
    unused: str = "DL902"
    unknown_code: str = "DL903"


def apply_suppressions(
    findings: Iterable[Finding],
    suppressions: list[Suppression],
    *,
    known_codes: frozenset[str],
    enabled_codes: frozenset[str],
    rules_ran: bool,
    rel: str,
) -> tuple[list[Finding], list[Finding], list[SuppressedFinding]]:
    """(kept findings, hygiene findings, the hidden findings with the reason of the comment that hid each)."""
    kept: list[Finding] = []
    hidden: list[SuppressedFinding] = []
    index = SuppressionIndex(suppressions)
    for finding in findings:
        match = index.hiding(finding)
        if match is None:
            kept.append(finding)
        else:
            match.used.add(finding.code)
            hidden.append(SuppressedFinding(finding, match.reason))
    hygiene: list[Finding] = []
    for suppression in suppressions:
        hygiene.extend(_hygiene(suppression, known_codes, enabled_codes, rules_ran, rel))
    return kept, hygiene, hidden


def _hygiene(
    suppression: Suppression, known: frozenset[str], enabled: frozenset[str], rules_ran: bool, rel: str
) -> list[Finding]:
    codes = HygieneCodes()
    span = Span(Position(suppression.line, suppression.column), Position(suppression.line, suppression.column))
    out: list[Finding] = []

    def add(code: str, name: str, message: str, fix: Fix | None = None) -> None:
        out.append(Finding(code=code, name=name, path=rel, span=span, message=message, fix=fix))

    if not suppression.codes:
        add(codes.unknown_code, "unknown-suppression-code", "suppression names no rule code")
    if not suppression.reason:
        add(
            codes.missing_reason,
            "suppression-without-reason",
            "suppression has no reason; write why after the codes: # declint: ignore[DL101] <reason>",
        )
    for code in suppression.codes:
        if code not in known:
            add(
                codes.unknown_code,
                "unknown-suppression-code",
                f'suppression names unknown rule code "{code}"{suggest(code, known)}',
            )
        elif rules_ran and code in enabled and code not in suppression.used:
            # Safe to drop: the comment suppresses nothing, so removing the code changes no result.
            fix = Fix("remove-suppression-code", Applicability.SAFE, f"Remove the unused {code}", span.start, (code,))
            add(codes.unused, "unused-suppression", f"unused suppression: no {code} finding here", fix)
    return out
