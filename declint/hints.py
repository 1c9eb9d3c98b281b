"""Which encoder a class belongs to, from its name: shared by the linter (DL101's owners) and the
runtime shim, so that both read a name the same way."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

# The words of a class name: CamelCase parts, runs of capitals (an acronym), digits; `_` splits.
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def hinted_encoder(name: str, hints: Mapping[str, Sequence[str]]) -> str | None:
    """The encoder a class name hints at: a hint that starts a word of the name (`SiglipVisionTower`,
    `SigLIPEncoder`; not `ConformerSubdivision`, whose "vision" is inside a word), or lies in a run
    of capitals (`CLAPAUDIOEncoder`); of several, the one starting last, the name's head noun
    (`ImageBindAudioEncoder` is an audio encoder; a holder of both towers, `ImageAudioEmbedding`,
    counts as audio: its towers' own names, nearer on the path, decide first). None when there is
    no such hint."""
    lowered = name.lower()
    starts = {match.start() for match in _WORDS.finditer(name)}
    found = [
        (start, encoder)
        for encoder, listed in sorted(hints.items())
        for hint in listed
        for start in (match.start() for match in re.finditer(re.escape(hint.lower()), lowered))
        # at a word's start, or inside a run of capitals, whose words are not told (`HFAUDIOEncoder`)
        if start in starts or name[start : start + len(hint)].isupper()
    ]
    return max(found, key=lambda item: item[0])[1] if found else None
