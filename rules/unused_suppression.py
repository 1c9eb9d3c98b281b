"""DL902 unused-suppression (reported by the engine)."""

from __future__ import annotations

from typing import ClassVar

from declint.rule import EngineCode, Invalid, Valid


class UnusedSuppression(EngineCode):
    """A suppression that suppresses nothing.

    Once the code it excused is fixed or moved, a stale suppression would silently hide the
    next real finding on that line. Only codes that are enabled in the run are judged.
    """

    CODE = "DL902"
    NAME = "unused-suppression"
    SUMMARY = "a suppression comment that matches no finding"
    FIX = (
        "safe: removes the unused code from the comment, and the comment (the whole line when it stands "
        "alone) when no code is left; a second comment after it stays."
    )
    VALID: ClassVar = (
        Valid(
            "def f(attn_backend):\n    # declint: ignore[DL103] kept for the legacy path\n"
            "    return attn_backend == 'TRTLLM'\n"
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            "def f(backend):\n    return backend  # declint: ignore[DL103] old\n",
            expect=((2, 20),),
            message="unused suppression: no DL103 finding here",
        ),
    )
