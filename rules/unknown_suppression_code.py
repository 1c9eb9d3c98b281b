"""DL903 unknown-suppression-code (reported by the engine)."""

from __future__ import annotations

from typing import ClassVar

from declint.rule import EngineCode, Invalid


class UnknownSuppressionCode(EngineCode):
    """A suppression names a code no rule has.

    A typo in a suppression (`DL13`) suppresses nothing and reads as if it did. The message
    suggests the closest existing code. A suppression that names no code at all (`# declint:
    ignore[]`, or a bare `# declint: ignore`) is reported too.
    """

    CODE = "DL903"
    NAME = "unknown-suppression-code"
    SUMMARY = "a suppression comment naming an unknown rule code"
    INVALID: ClassVar = (
        Invalid(
            "x = 1  # declint: ignore[DL1033] typo\n",
            expect=((1, 7),),
            message='suppression names unknown rule code "DL1033" (did you mean "DL103"?)',
        ),
    )
