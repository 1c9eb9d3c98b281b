"""Expected failures. The CLI maps every DeclintError to exit status 2."""

from __future__ import annotations

import sys


class DeclintError(Exception):
    """Base of every expected failure; `context` names the file/key/rule involved."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.message}"


class ConfigError(DeclintError):
    """The configuration is unreadable or invalid."""


class UsageError(DeclintError):
    """The command line asks for something that cannot be done."""


class OutputError(DeclintError):
    """A report, a baseline or a fixed file cannot be written."""


class SourceError(DeclintError):
    """A file cannot be read, decoded or parsed; becomes a DL000 finding, never exit 2."""


_WARNED: set[str] = set()


def warn(message: str) -> None:
    """Print `declint: warning: message` on stderr, once per process: a problem that does not stop
    the run (and changes no finding) but that the user must not miss."""
    if message not in _WARNED:
        _WARNED.add(message)
        print(f"declint: warning: {message}", file=sys.stderr, flush=True)
