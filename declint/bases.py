"""The identifiers written in a file's class statements' bases, from its bytes, unparsed.

Its own module, with nothing but `re`: the scan records them for every file, and a run that the
snapshot answers compares them for a file edited without gaining a needle (`engine`), without
importing the prefilter, the facts or the index.
"""

from __future__ import annotations

import re

_HEADER = re.compile(rb"class[ \t]+[A-Za-z_\x80-\xff][\w\x80-\xff]*[ \t]*(?:\[[^\]\n]*\][ \t]*)?\(")
_BASES = re.compile(rb"(?:[^()]|\((?:[^()]|\([^()]*\))*\))*")
_IDENT = re.compile(rb"[A-Za-z_\x80-\xff][\w\x80-\xff]*")
_ALIASED = re.compile(rb"([A-Za-z_\x80-\xff][\w\x80-\xff]*)[ \t]+as[ \t]+$")


def class_bases(data: bytes) -> frozenset[str]:
    """Identifiers written in the bases of the file's class statements, plus what they alias.

    An over-approximation by design (it also sees class statements in strings): it decides which
    files to index, and indexing one file too many only costs a parse.
    """
    names: set[bytes] = set()
    header = _HEADER.search(data)
    while header is not None:  # every "class" that starts a header, as a find loop would see them
        position = header.start()
        line_start = max(data.rfind(b"\n", 0, position), data.rfind(b"\r", 0, position)) + 1
        if not data[line_start:position].strip(b" \t\f"):
            bases = _BASES.match(data, header.end())  # always matches (it may match nothing)
            end = bases.end() if bases is not None else header.end()
            if data[end : end + 1] != b")":  # deeper nesting than the pattern follows
                end = min(len(data), header.end() + 2000)
            names.update(_IDENT.findall(data, header.end(), end))
        header = _HEADER.search(data, position + 5)
    if names and b" as " in data:  # (a search for " as " costs ~5 us on a 5 kB file: only when needed)
        _add_aliased(data, names)
    return frozenset(name.decode("utf-8", "replace") for name in names)


def _add_aliased(data: bytes, names: set[bytes]) -> None:
    """`from m import Base as B` ... `class X(B)`: Base counts too."""
    for name in list(names):
        needle = b" as " + name
        found = data.find(needle)
        while found >= 0:
            after = found + len(needle)
            if after >= len(data) or not (data[after : after + 1].isalnum() or data[after : after + 1] == b"_"):
                before = _ALIASED.search(data, max(0, found - 200), found + 4)
                if before is not None:
                    names.add(before.group(1))
            found = data.find(needle, found + 1)
