"""DL901 suppression-without-reason (reported by the engine)."""

from __future__ import annotations

from typing import ClassVar

from declint.rule import EngineCode, Invalid, Valid


class SuppressionWithoutReason(EngineCode):
    """A `# declint: ignore[...]` comment does not say why.

    A suppression hides a real finding from every later reader; the reason is what lets a
    reviewer decide whether it still holds. Write it after the codes:
    `# declint: ignore[DL101] window merger stays on SDPA on purpose`. The suppression still
    applies; this finding asks for the reason.
    """

    CODE = "DL901"
    NAME = "suppression-without-reason"
    SUMMARY = "a suppression comment without a reason"
    VALID: ClassVar = (
        Valid("def f(attn_backend):\n    return attn_backend == 'TRTLLM'  # declint: ignore[DL103] legacy\n"),
    )
    INVALID: ClassVar = (
        Invalid(
            "def f(attn_backend):\n    return attn_backend == 'TRTLLM'  # declint: ignore[DL103]\n",
            expect=((2, 37),),
            message="suppression has no reason; write why after the codes: # declint: ignore[<code>] <reason>",
        ),
    )
