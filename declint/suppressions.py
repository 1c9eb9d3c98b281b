"""`# declint: ignore[DL101] reason` comments, and the hygiene findings about them (DL901-903).

A suppression applies to a finding when the comment sits on any line the finding's node spans
(a trailing comment on a multi-line call), or alone on the line right above the node's first
line (blank lines and other comments in between are allowed), or anywhere in the statement the
finding starts in, or alone above that statement (a logical line: for a `class`, `def` or `if`,
its header; the argument on the third line of a call is covered by a comment above the call).
The decorators of a class or function count as its lines: a comment on a decorator line, or
alone above the first decorator, also applies to the findings on the `class`/`def` line. A
suppression may follow another comment on its line (`# noqa: E501  # declint: ignore[DL103]
reason`), and one comment may hold several. A bare `# declint: ignore` names no code (DL903).
"""

from __future__ import annotations

import io
import re
import tokenize
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from declint.config import suggest
from declint.types import Applicability, Finding, Fix, Position, Span, SuppressedFinding

MARKER = b"declint:"
# Its "#" starts the comment or follows whitespace: `# type: ignore  # declint: ignore[...]` is
# one comment token holding two comments, while `x#declint:` or `"# declint: ..."` quote one.
# A bare `# declint: ignore` (or one with a space before the bracket) counts too: it is plainly
# meant as a suppression, and an empty code list is reported (DL903) instead of passing unseen.
_SUPPRESSION = re.compile(r"(?:^|(?<=\s))#\s*declint:\s*ignore(?:\s*\[(?P<codes>[^\]]*)\]|\b)")
# Where a reason stops and a comment of another tool begins: "#" after whitespace, followed by
# whitespace, `noqa`, or a word and a colon (ruff's and flake8's pragma with or without a space,
# `# type: ignore`, `#pylint: disable=...`), but not the issue number of a reason (`see #123`).
_OTHER_COMMENT = re.compile(r"\s#(?=\s|noqa\b|[A-Za-z][\w-]*:)")
_REASON_SEPARATORS = " \t:-\u2013\u2014"  # hyphen, en and em dashes
# Tokens that start no code: a standalone comment applies to the line of the next other token.
_LAYOUT = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})
_ENDS_STATEMENT = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})


class Marker(NamedTuple):
    """One `# declint: ignore[...]` in a comment's text, as offsets into that text."""

    start: int  # its "#"
    codes_start: int  # the code list, between the brackets (empty for a bare `ignore`)
    codes_end: int
    reason_start: int  # after the "]", or after a bare `ignore`
    end: int  # where its reason ends: the next suppression in the comment, or the comment's end

    def codes(self, comment: str) -> tuple[str, ...]:
        return tuple(c.strip().upper() for c in comment[self.codes_start : self.codes_end].split(",") if c.strip())

    def reason(self, comment: str) -> str:
        """The text after the codes, up to a comment of another tool (`  # noqa: E501`)."""
        return comment[self.reason_start : self.other_comment(comment)].strip(_REASON_SEPARATORS)

    def other_comment(self, comment: str) -> int:
        """Where a comment of another tool after the reason starts (`  # type: ignore`), else `end`."""
        found = _OTHER_COMMENT.search(comment, self.reason_start, self.end)
        return self.end if found is None else found.start()


def markers(comment: str) -> list[Marker]:
    """The suppressions in a comment token's text, in order."""
    found = list(_SUPPRESSION.finditer(comment))
    ends = [match.start() for match in found[1:]] + [len(comment)] if found else []
    return [_marker(match, end) for match, end in zip(found, ends, strict=True)]


def _marker(match: re.Match[str], end: int) -> Marker:
    if match.group("codes") is None:  # a bare `# declint: ignore`
        return Marker(match.start(), match.end(), match.end(), match.end(), end)
    return Marker(match.start(), match.start("codes"), match.end("codes"), match.end(), end)


def without_code_lists(text: str) -> str:
    """`text` with the code list of each suppression in it left empty (`# declint: ignore[] reason`)."""

    def emptied(match: re.Match[str]) -> str:
        if match.group("codes") is None:
            return match.group(0)
        return match.group(0)[: match.start("codes") - match.start()] + "]"

    return _SUPPRESSION.sub(emptied, text)


@dataclass
class Suppression:
    line: int
    column: int  # of its "#", where its hygiene findings are reported
    codes: tuple[str, ...]
    reason: str
    applies_from: int  # first line of the node it covers when standalone, else `line`
    used: set[str] = field(default_factory=set)
    # The `class`/`def` line, when the comment sits on or above that statement's decorators.
    decorated_line: int | None = None
    # (first, last) line of the statement it sits in, or alone above: its findings are covered
    # wherever they start in it (the argument on the third line of a call, a closing bracket).
    statement: tuple[int, int] | None = None
    comment_column: int | None = None  # where its comment token starts, when not at `column`


def parse_suppressions(text: str) -> list[Suppression]:
    """Every suppression of the module, in source order. Lines come from the tokenizer, so they
    are the lines the findings (ast, libcst) are numbered by."""
    try:
        # newline="": a lone \r ends a line here too, as in ast (StringIO's readline splits at \n only).
        tokens = list(tokenize.generate_tokens(io.StringIO(text, newline="").readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    found: list[Suppression] = []
    standalone: list[Suppression] = []  # waiting for the next line of code
    decorated: list[tuple[int, int]] = []  # (first decorator line, `class`/`def` line)
    statements = _Statements()
    decorators_from: int | None = None
    statement_start = True
    for token in tokens:
        if token.type == tokenize.COMMENT:
            alone = token.line[: token.start[1]].strip() == ""
            for suppression in _in_comment(token):
                found.append(suppression)
                statements.add(suppression)
                if alone:
                    standalone.append(suppression)
            continue
        if token.type == tokenize.NEWLINE:
            statements.end(token.start[0])
        if token.type in _LAYOUT or token.type == tokenize.ENDMARKER:
            statement_start = statement_start or token.type in _ENDS_STATEMENT
            continue
        line = token.start[0]
        statements.code_at(line)
        for suppression in standalone:
            suppression.applies_from = line
        standalone.clear()
        if statement_start:  # a statement starting with "@" is a decorator
            if token.exact_type == tokenize.AT:
                decorators_from = line if decorators_from is None else decorators_from
            elif decorators_from is not None:
                decorated.append((decorators_from, line))
                decorators_from = None
        statement_start = False
    _mark_decorated(found, decorated)
    return found


class _Statements:
    """Gives each suppression the statement (a logical line: a header, for `class`, `def`, `if`)
    it sits in, or the next one when it sits alone between statements."""

    def __init__(self) -> None:
        self.first: int | None = None  # the current statement's first line; None between statements
        self.inside: list[Suppression] = []  # those in the current statement
        self.waiting: list[Suppression] = []  # those alone before the next statement

    def add(self, suppression: Suppression) -> None:
        (self.waiting if self.first is None else self.inside).append(suppression)

    def code_at(self, line: int) -> None:
        if self.first is None:
            self.first = line
            self.inside += self.waiting
            self.waiting = []

    def end(self, line: int) -> None:
        if self.first is not None:
            for suppression in self.inside:
                suppression.statement = (self.first, line)
        self.first, self.inside = None, []


def _in_comment(token: tokenize.TokenInfo) -> list[Suppression]:
    line, column = token.start
    out: list[Suppression] = []
    for marker in markers(token.string):
        where = column + marker.start
        out.append(
            Suppression(
                line,
                where,
                marker.codes(token.string),
                marker.reason(token.string),
                line,
                comment_column=None if where == column else column,
            )
        )
    return out


def _mark_decorated(suppressions: list[Suppression], decorated: list[tuple[int, int]]) -> None:
    """A suppression on a decorator line, or applying from one, also covers the `class`/`def` line."""
    starts = [first for first, _ in decorated]
    for suppression in suppressions:
        at = bisect_right(starts, suppression.applies_from) - 1
        if at >= 0 and suppression.applies_from < decorated[at][1]:
            suppression.decorated_line = decorated[at][1]


class SuppressionIndex:
    """The suppression that hides a finding: the first, in source order, that names its code and
    covers it. Found by line (the comments on the lines the finding spans, those that apply from
    its first line or cover the statement it starts in, and those on or above the decorators of
    the `class`/`def` on that line)
    instead of trying every comment for every finding, which made a file with thousands of
    suppressed findings quadratic (10,000: 16 s, most of it here)."""

    def __init__(self, suppressions: list[Suppression]) -> None:
        self.suppressions = suppressions
        self._by_line = sorted(range(len(suppressions)), key=lambda i: suppressions[i].line)
        self._lines = [suppressions[i].line for i in self._by_line]
        self._from: dict[int, list[int]] = {}
        for index, suppression in enumerate(suppressions):
            lines = {suppression.applies_from, suppression.decorated_line}
            if suppression.statement is not None:
                lines.update(range(suppression.statement[0], suppression.statement[1] + 1))
            for line in lines:
                if line is not None:
                    self._from.setdefault(line, []).append(index)

    def hiding(self, finding: Finding) -> Suppression | None:
        start, end = finding.span.start.line, finding.span.end.line
        on_lines = self._by_line[bisect_left(self._lines, start) : bisect_right(self._lines, end)]
        candidates = (i for i in (*on_lines, *self._from.get(start, ())) if finding.code in self.suppressions[i].codes)
        first = min(candidates, default=None)
        return None if first is None else self.suppressions[first]


class HygieneCodes(NamedTuple):
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
            # The same words whatever the codes: a fix that drops one code leaves the same finding.
            "suppression has no reason; write why after the codes: # declint: ignore[<code>] <reason>",
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
            target, args = _fix_place(suppression, code)
            fix = Fix("remove-suppression-code", Applicability.SAFE, f"Remove the unused {code}", target, args)
            add(codes.unused, "unused-suppression", f"unused suppression: no {code} finding here", fix)
    return out


def _fix_place(suppression: Suppression, code: str) -> tuple[Position, tuple[str, ...]]:
    """The fix's target (the comment's start, where the transform finds it) and its arguments
    (the code, and where in the comment this suppression starts)."""
    start = suppression.column if suppression.comment_column is None else suppression.comment_column
    return Position(suppression.line, start), (code, str(suppression.column - start))


def strip_suppression_codes(comment: str, unused: Mapping[int, set[str]]) -> str | None:
    """The comment without the `unused` codes of its suppressions (keyed by where each starts in
    the comment); "" when nothing worth keeping is left; None when no suppression starts there."""
    found = {marker.start: marker for marker in markers(comment)}
    if not unused or any(start not in found for start in unused):
        return None
    for start in sorted(unused, reverse=True):  # from the right: the offsets before it stay valid
        comment = _strip_marker(comment, found[start], unused[start])
    return comment


def _strip_marker(comment: str, marker: Marker, codes: set[str]) -> str:
    listed = comment[marker.codes_start : marker.codes_end].split(",")
    kept = [c.strip() for c in listed if c.strip() and c.strip().upper() not in codes]
    if kept:
        return comment[: marker.codes_start] + ", ".join(kept) + comment[marker.codes_end :]
    # No code left: the suppression and its reason go (a "#" inside the reason, as in "see
    # #123", is part of it); a comment before it, or of another tool after it, stays.
    before = comment[: marker.start].rstrip()
    after = comment[marker.other_comment(comment) :].strip()
    if before and after:
        return before + comment[len(before) : marker.start] + after
    return before or after
