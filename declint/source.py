"""Reading and decoding source files, following CPython's rules (BOM, PEP 263 cookies)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from declint.errors import SourceError

# PEP 263, as CPython's tokenizer matches it.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)


@dataclass(frozen=True)
class SourceFile:
    rel: str
    data: bytes
    text: str
    encoding: str


def read_source(path: Path | str, rel: str) -> SourceFile:
    """Bytes and decoded text of `path`; any failure is a SourceError (reported as DL000)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:
        raise SourceError("is a directory, not a file", path=rel) from None
    except OSError as error:
        raise SourceError(f"cannot read file: {error.strerror or error}", path=rel) from None
    return decode_source(data, rel)


def decode_source(data: bytes, rel: str) -> SourceFile:
    if b"\x00" in data:
        raise SourceError("file contains null bytes (binary file?)", path=rel)
    if data.isascii() and b"coding" not in _first_two_lines(data):
        # Most files: no BOM, no cookie, nothing to detect (every ASCII-compatible codec agrees).
        return SourceFile(rel=rel, data=data, text=data.decode("ascii"), encoding="utf-8")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        if _COOKIE.search(b"\n".join(data.splitlines()[:2])):
            raise SourceError(f"bad encoding declaration: {error.msg}", path=rel) from None
        # No cookie: detect_encoding failed to decode the first lines as UTF-8; say so precisely below.
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SourceError(
            f"cannot decode as {encoding}: invalid byte 0x{data[error.start]:02x} at offset {error.start}",
            path=rel,
            line=line,
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(rel=rel, data=data, text=text, encoding="utf-8" if encoding == "utf-8-sig" else encoding)


def _first_two_lines(data: bytes) -> bytes:
    """At least the first two lines (where an encoding cookie may stand); more when lines end in \\r."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    return data if second < 0 else data[:second]
