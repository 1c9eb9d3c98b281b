"""DL000 parse-error (reported by the engine)."""

from __future__ import annotations

from typing import ClassVar

from declint.rule import EngineCode, Invalid


class ParseError(EngineCode):
    """A file could not be read, decoded or parsed, or a rule crashed on it.

    declint reports the problem on that file and goes on with the others: one broken file
    never hides the findings of the rest, and never stops a CI run with a traceback. The
    message says what went wrong ("syntax error: ...", "cannot decode as utf-8: ...",
    "rule DL101 crashed: ..."). A DL000 finding makes the run exit 1, like any finding.

    A file is parsed when a rule or the project index needs it (its bytes hold one of their
    needles), when it lies in `syntax-paths` (the modeling and attention-backend packages by
    default), or always with `check-syntax = true`. Any other file is only read and searched:
    a syntax error in it is not reported (that is the job of ruff or `python -m compileall`),
    which keeps files no rule can match nearly free.

    Files are parsed by the Python that runs declint. A file written for a later Python (a
    `type` statement or a generic class under Python 3.11) cannot be analysed there; when
    libcst, which reads later grammars too, parses it, the message says so: "syntax error:
    invalid syntax (under Python 3.11, which runs declint; the file is valid for a later
    Python: ...)". Run declint with the Python the code is written for.
    """

    CODE = "DL000"
    NAME = "parse-error"
    SUMMARY = "a file that cannot be read, decoded or parsed (or that makes a rule crash)"
    INVALID: ClassVar = (
        Invalid("def broken(:\n    pass\n", expect=((1, 11),), message="syntax error: invalid syntax"),
    )
