"""Result types shared by the engine, the rules and the reporters.

Everything here is a frozen, picklable dataclass so results can cross process boundaries
(the process pool) and be cached without copying concerns. Lines are 1-based, columns
0-based (libcst's convention), end positions exclusive of the last column.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


class Applicability(enum.Enum):
    """Whether `--fix` applies a fix alone (safe) or only with `--unsafe-fixes` (it needs review)."""

    SAFE = "safe"
    UNSAFE = "unsafe"


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
class Fix:
    """A proposed change, applied by `declint.fixes` with the libcst transform named by `kind`.

    `target` is the start of the node the transform rewrites (not always the finding's own
    position); `args` are the transform's parameters, documented with each kind in fixes.py.
    """

    kind: str
    applicability: Applicability
    description: str
    target: Position
    args: tuple[str, ...] = ()


def escape_controls(text: str) -> str:
    """`text` with every character that is not printable escaped as Python writes it (`\\n`,
    `\\x01`, `\\u2028`): one line, no terminal escapes, no character XML 1.0 forbids."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


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
    # How to fix it, when declint knows (`check --fix`); never part of what is reported as text.
    fix: Fix | None = None

    @property
    def line(self) -> int:
        return self.span.start.line

    @property
    def column(self) -> int:
        return self.span.start.column

    def printable(self) -> Finding:
        """This finding with control characters in its message escaped (`\\n`, `\\x1b`).

        Messages quote source text (encoder names, strings, schema values). A raw newline or
        escape sequence there would break every line-based format and let an analysed file
        forge CI annotations (`::error ...` on a line of its own); escaping once here covers
        every rule and every output format. A fix's description quotes source text too (`Replace
        "trtllm\x1b[2J" with "TRTLLM"`) and is escaped the same way; its edits are not.
        """
        fix = self.fix
        if fix is not None and not fix.description.isprintable():
            fix = replace(fix, description=escape_controls(fix.description))
        if self.message.isprintable() and fix is self.fix:
            return self
        return replace(self, message=escape_controls(self.message), fix=fix)

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
class SuppressedFinding:
    """A finding a `# declint: ignore[...]` comment suppressed, with that comment's reason."""

    finding: Finding
    justification: str


# A checked file's findings and suppressed findings, as a snapshot holds them.
FileFindings = tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]]


@dataclass(frozen=True)
class RunResult:
    findings: tuple[Finding, ...]
    files_checked: int
    files_indexed: int
    rule_codes: tuple[str, ...] = field(default=())
    # Filled only when the engine is asked to keep them (SARIF suppressions, fingerprints).
    suppressed: tuple[SuppressedFinding, ...] = field(default=())
    # (path as reported, name as the file system gives it) where the two differ: a name that is
    # not UTF-8 is reported with its bytes escaped (`\\xff`), but a URI must encode the bytes.
    file_names: tuple[tuple[str, str], ...] = field(default=())
