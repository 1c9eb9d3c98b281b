"""Source text for reports: snippets, byte columns, fingerprints. Read lazily, once per file.

Python files are decoded as the engine decodes them (BOM, PEP 263 cookie); any other file a
finding points at (a config file, a baseline, docs) is read as UTF-8. A file that cannot be
read gives no lines: reporters then print what they can without it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from declint.errors import SourceError
from declint.source import decode_source, read_bytes, split_lines


class SourceCache:
    def __init__(self, root: Path, overrides: Mapping[str, bytes] | None = None) -> None:
        self.root = root
        self._overrides = dict(overrides or {})
        self._texts: dict[str, str | None] = {}
        self._lines: dict[str, list[str]] = {}

    def path_of(self, rel: str) -> Path:
        return Path(rel) if os.path.isabs(rel) else self.root / rel

    def is_override(self, rel: str) -> bool:
        """Is the text of `rel` another than the file's (`--stdin-filename`'s buffer)?"""
        return rel in self._overrides

    def text(self, rel: str) -> str | None:
        if rel not in self._texts:
            self._texts[rel] = self._read(rel)
        return self._texts[rel]

    def lines(self, rel: str) -> list[str]:
        """Lines without their line endings, numbered as Python numbers them (`source.split_lines`).

        Split once per file, like the read: every finding's fingerprint and snippet asks, and
        splitting again for each made a file with many findings quadratic (20,000 findings in a
        1.2 MB file: 42 s). The list is shared: callers must not change it."""
        found = self._lines.get(rel)
        if found is None:
            text = self.text(rel)
            found = self._lines[rel] = split_lines(text) if text is not None else []
        return found

    def line(self, rel: str, number: int) -> str | None:
        lines = self.lines(rel)
        return lines[number - 1] if 1 <= number <= len(lines) else None

    def data(self, rel: str) -> bytes | None:
        """The file's bytes as the run checked them: its override (`--stdin-filename`), else the
        file on disk; None when it cannot be read."""
        data = self._overrides.get(rel)
        if data is None:
            try:
                data, _ = read_bytes(str(self.path_of(rel)), rel)  # refuses a FIFO: a read would block
            except SourceError:
                return None
        return data

    def _read(self, rel: str) -> str | None:
        data = self.data(rel)
        if data is None:
            return None
        if rel.endswith(".py"):
            try:
                return decode_source(data, rel).text
            except SourceError:
                return None
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None


def span_text(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The text between two (line 1-based, column 0-based) positions, end exclusive."""
    (l1, c1), (l2, c2) = start, end
    if not 1 <= l1 <= len(lines):
        return ""
    if (l2, c2) <= (l1, c1):
        return lines[l1 - 1][c1:]
    if l1 == l2:
        return lines[l1 - 1][c1:c2]
    parts = [lines[l1 - 1][c1:], *lines[l1 : min(l2 - 1, len(lines))]]
    if l2 <= len(lines):
        parts.append(lines[l2 - 1][:c2])
    return "\n".join(parts)


def utf8_column(line: str | None, column: int) -> int:
    """A 0-based code-point column as a 1-based UTF-8 byte column (reviewdog's unit)."""
    if line is None:
        return column + 1
    return len(line[:column].encode("utf-8", "surrogatepass")) + 1 + max(0, column - len(line))
