"""Result types shared by the engine, the rules and the reporters.

Everything here is a frozen, picklable dataclass so results can cross process boundaries
(the process pool) and be cached without copying concerns. Lines are 1-based, columns
0-based (libcst's convention), end positions exclusive of the last column.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Position:
    line: int
    column: int


@dataclass(frozen=True)
class Span:
    start: Position
    end: Position

    @classmethod
    def at(cls, line: int, column: int = 0) -> Span:
        return cls(Position(line, column), Position(line, column))


@dataclass(frozen=True)
class Finding:
    """One reported problem. `path` is root-relative POSIX (or absolute outside the root)."""

    code: str
    name: str
    path: str
    span: Span
    message: str
    severity: Severity = Severity.ERROR
    # The enclosing qualified name ("Class.method"), kept for fingerprints and messages.
    context: str = ""

    @property
    def line(self) -> int:
        return self.span.start.line

    @property
    def column(self) -> int:
        return self.span.start.column

    def sort_key(self) -> tuple[str, int, int, str, str, int, int]:
        # A total key: two findings that compare equal here are the same finding.
        return (
            self.path,
            self.span.start.line,
            self.span.start.column,
            self.code,
            self.message,
            self.span.end.line,
            self.span.end.column,
        )


@dataclass(frozen=True)
class FileResult:
    """What checking one file produced."""

    path: str
    findings: tuple[Finding, ...] = ()
    checked: bool = True


@dataclass(frozen=True)
class RunResult:
    findings: tuple[Finding, ...]
    files_checked: int
    files_indexed: int
    rule_codes: tuple[str, ...] = field(default=())
