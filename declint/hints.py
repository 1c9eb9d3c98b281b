"""Which encoder a class belongs to, from its name: shared by the linter (DL101's owners) and the
runtime shim, so that both read a name the same way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def hinted_encoder(name: str, hints: Mapping[str, Sequence[str]]) -> str | None:
    """The encoder a class name hints at; of several, the one whose hint ends last in the name,
    its head noun (`ImageBindAudioEncoder` is an audio encoder, `SiglipVisionTower` a vision one,
    a holder of both towers, `ImageAudioEmbedding`, counts as audio: its towers' own names, nearer
    on the path, decide first). None when no hint occurs."""
    lowered = name.lower()
    ends = [
        (at + len(hint), encoder)
        for encoder, words in sorted(hints.items())
        for hint in words
        if (at := lowered.rfind(hint.lower())) >= 0
    ]
    return max(ends, key=lambda end: end[0])[1] if ends else None
