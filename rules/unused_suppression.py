"""DL902 unused-suppression (reported by the engine)."""

from __future__ import annotations

from typing import ClassVar

from declint.rule import EngineCode, Invalid, Valid


class UnusedSuppression(EngineCode):
    """A suppression that suppresses nothing.

    Once the code it excused is fixed or moved, a stale suppression would silently hide the
    next real finding on that line. Only codes that are enabled in the run are judged.

    A suppression covers a finding when it sits on any line of the reported node, or alone on
    the line above it (blank lines and comments may come between), or anywhere in the statement
    the finding starts in, or alone above that statement (for a `class`, `def`, `if` or loop, its
    header). The decorators of a class or function are lines of it: a comment on a decorator line, or alone above the first
    decorator, covers the findings on the `class` or `def` line. A suppression may follow
    another comment on its line (`# noqa: E501  # declint: ignore[DL103] reason`).
    """

    CODE = "DL902"
    NAME = "unused-suppression"
    SUMMARY = "a suppression comment that matches no finding"
    FIX = (
        "safe: removes the unused code from the comment. With no code left, the suppression and its "
        "reason go (the whole line when nothing else is left of a comment that stands alone); a "
        "comment before it stays, and so does one of another tool after its reason (a `# noqa`)."
    )
    VALID: ClassVar = (
        Valid(
            "def f(attn_backend):\n    # declint: ignore[DL103] kept for the legacy path\n"
            "    return attn_backend == 'TRTLLM'\n"
        ),
        Valid(
            "import functools\n\n\n# declint: ignore[DL103] the default of old configs\n@functools.cache\n"
            "def f(attn_backend='TRTLLM'):\n    return attn_backend\n"
        ),
        Valid(
            "def f(attn_backend):\n    return attn_backend == 'TRTLLM'  # noqa: E501  # declint: ignore[DL103] legacy\n"
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            "def f(backend):\n    return backend  # declint: ignore[DL103] old\n",
            expect=((2, 20),),
            message="unused suppression: no DL103 finding here",
        ),
    )
