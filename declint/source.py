"""Reading and decoding source files, following CPython's rules (BOM, PEP 263 cookies)."""

from __future__ import annotations

import functools
import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from stat import S_ISDIR, S_ISREG

from declint.errors import SourceError

# PEP 263, as CPython's tokenizer matches it.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)


@dataclass(frozen=True)
class SourceFile:
    """A file's bytes and, on first use, its text (validated as decodable when it was made)."""

    rel: str
    data: bytes
    encoding: str
    decoded: str | None = field(default=None, repr=False)  # None: ASCII, decoded on first use

    @functools.cached_property
    def text(self) -> str:
        # Most files of a tree are searched, never parsed: decoding them (~3.5 us of a ~5 kB
        # file) would be wasted. An ASCII file decodes without error, so it waits until asked.
        return self.decoded if self.decoded is not None else self.data.decode("ascii")


def read_bytes(path: str, rel: str, max_size: int = 0) -> tuple[bytes, os.stat_result]:
    """A regular file's bytes and its stat; any failure is a SourceError.

    The stat is taken on the open file before its bytes are read, so a cache entry never pairs
    a newer stat with older bytes. Plain `os` calls, not `open()`: the io objects cost about a
    third of reading a typical module (~5 of ~15 us), and every file of a tree is read.
    `max_size` (0: no limit): larger files are refused before they are read.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except IsADirectoryError:  # Windows; elsewhere a directory opens, and fstat says what it is
        raise SourceError("is a directory, not a file", path=rel) from None
    except OSError as error:
        raise SourceError(f"cannot read file: {error.strerror or error}", path=rel) from None
    try:
        stat = os.fstat(fd)
        size = stat.st_size
        if not S_ISREG(stat.st_mode):
            if S_ISDIR(stat.st_mode):
                raise SourceError("is a directory, not a file", path=rel)
            raise SourceError("not a regular file (a FIFO, socket or device); not read", path=rel)
        if max_size and size > max_size:
            raise SourceError(f"file too large to check ({size:,} bytes; max-file-size is {max_size:,})", path=rel)
        return _read_all(fd, size), stat
    except OSError as error:
        raise SourceError(f"cannot read file: {error.strerror or error}", path=rel) from None
    finally:
        os.close(fd)


def read_input_text(path: str, rel: str, max_size: int = 0) -> str:
    """A project rule's input that is not Python (the docs table, a serving schema), as UTF-8
    text, read as a source file is (`read_bytes`): a FIFO, a device or a file over `max_size`
    is refused unread, not waited on or read without end. Any failure is a SourceError whose
    message says why, without read_bytes' "cannot read file: " (the rule names what it reads)."""
    try:
        data, _ = read_bytes(path, rel, max_size)
    except SourceError as error:
        raise SourceError(error.message.removeprefix("cannot read file: "), path=rel) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SourceError(
            f"cannot decode as utf-8: invalid byte 0x{data[error.start]:02x} at offset {error.start}",
            path=rel,
            line=data.count(b"\n", 0, error.start) + 1,
        ) from None


# O_NONBLOCK: a FIFO named like a module opens at once (and is refused below) instead of blocking
# its reader until a writer appears; it changes nothing for a regular file.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)


def _read_all(fd: int, size: int) -> bytes:
    """Everything up to end of file (it may have grown since the stat).

    A regular file's read returns less than asked only at its end, so a file that did not grow
    takes one read (asking for one byte more than its size), and one that did shows it.
    """
    data = os.read(fd, size + 1)
    if len(data) <= size:
        return data
    chunks = [data]
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def is_plain(data: bytes) -> bool:
    """Bytes `decode_source` takes as they are: ASCII, no null byte, no encoding cookie (most
    files: no BOM, no cookie, nothing to detect; every ASCII-compatible codec agrees)."""
    return data.isascii() and b"\x00" not in data and b"coding" not in _first_two_lines(data)


def decode_source(data: bytes, rel: str) -> SourceFile:
    if is_plain(data):
        return SourceFile(rel=rel, data=data, encoding="utf-8")
    if b"\x00" in data:
        raise SourceError("file contains null bytes (binary file?)", path=rel)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        # (after a UTF-8 byte-order mark too: with a cookie naming another encoding, CPython
        # refuses the file, "encoding problem: iso-8859-1 with BOM")
        cookie = _COOKIE.search(b"\n".join(data.removeprefix(b"\xef\xbb\xbf").splitlines()[:2]))
        if cookie is not None and data.startswith(b"\xef\xbb\xbf"):
            declared = cookie.group(1).decode("ascii", "replace")
            message = f"bad encoding declaration: {declared} in a file that starts with a UTF-8 byte-order mark"
            raise SourceError(message, path=rel) from None
        if cookie is not None:
            raise SourceError(f"bad encoding declaration: {error.msg}", path=rel) from None
        # No cookie: detect_encoding failed to decode the first lines as UTF-8; say so precisely below.
        encoding = "utf-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = _line_of(data, error.start)
        raise SourceError(
            f"cannot decode as {encoding}: invalid byte 0x{data[error.start]:02x} at offset {error.start}",
            path=rel,
            line=line,
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceFile(rel=rel, data=data, encoding="utf-8" if encoding == "utf-8-sig" else encoding, decoded=text)


def _first_two_lines(data: bytes) -> bytes:
    """At least the first two lines (where an encoding cookie may stand); more when lines end in \\r."""
    first = data.find(b"\n")
    second = data.find(b"\n", first + 1) if first >= 0 else -1
    return data if second < 0 else data[:second]


def _line_of(data: bytes, offset: int) -> int:
    """The 1-based line, as Python numbers lines, that holds the byte at `offset`."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


# ---- lines, numbered as Python numbers them -----------------------------------------------------
# The tokenizer, ast and libcst end a line at "\r\n", "\n" or a lone "\r", nowhere else.
# str.splitlines also splits at \v, \f, \x1c-\x1e, \x85, U+2028 and U+2029, which Python reads as
# text (in a string, a comment, or \f as whitespace): every line after one would be off by one.


def split_lines(text: str) -> list[str]:
    """`text`'s lines without their endings, line N at index N-1 as Python numbers it. Like
    str.splitlines, a final line ending starts no empty last line."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def split_lines_keepends(text: str) -> list[str]:
    """`text`'s lines with their endings (`"".join` gives `text` back), split as `split_lines`."""
    return io.StringIO(text, newline="").readlines()  # newline="": split at \r\n, \r, \n; kept as they are
