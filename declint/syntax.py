"""CPython's syntax errors, worded for DL000 the same way wherever a file is parsed.

declint parses with the `ast` of the interpreter that runs it, so a file written for a later
Python (a `type` statement or a generic class under 3.11, say) fails there though it is valid
code. libcst's parser reads every grammar it knows, whatever the interpreter: when it parses a
text CPython rejected, the message says so and names the way out, instead of blaming the file.
"""

from __future__ import annotations

import sys

Problem = tuple[str, int, int]  # (message, line, 0-based column)
# CPython's own limits, which no later Python lifts and libcst does not share (2,000 nested
# parentheses parse there): "too many nested parentheses", "too many levels of indentation".
_LIMITS = ("too many ",)


def syntax_problem(error: SyntaxError, text: str) -> Problem:
    """(message, line, column) of CPython's `error` on `text`."""
    message = f"syntax error: {error.msg}"
    if not error.msg.startswith(_LIMITS) and _later_grammar(text):
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        message += (
            f" (under Python {running}, which runs declint; the file is valid for a later Python:"
            " run declint with that one)"
        )
    return message, error.lineno or 1, max((error.offset or 1) - 1, 0)


def _later_grammar(text: str) -> bool:
    """Does libcst parse the text CPython rejected? Only files with a syntax error pay for it
    (libcst is imported then, ~0.2 s, once). libcst rejects what CPython rejects on the same
    grammar (assignments to calls, misplaced `*`, bad f-string conversions: checked in the
    tests), so a parse means newer syntax, not a lax parser."""
    try:
        import libcst as cst

        cst.parse_module(text)
    except Exception:  # any failure (syntax, recursion, a bug of libcst's) means: no hint
        return False
    return True
