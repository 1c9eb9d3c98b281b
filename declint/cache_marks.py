"""What declint's cache directory holds, and the marks declint writes into it.

declint marks its cache directory with a `.gitignore` of "*" (git, and declint's own walk, skip
it) and a `CACHEDIR.TAG` (backup tools skip it). Written into a directory of sources, those marks
would hide the project from the walk, from git and from backups, so declint writes them only
into a directory that holds nothing but its own entries, and its walk honours a `.gitignore`
declint wrote only in such a directory (an earlier version wrote them wherever `cache-dir` said).
"""

from __future__ import annotations

import os
import re

GITIGNORE = ".gitignore"
TAG = "CACHEDIR.TAG"
GITIGNORE_TEXT = "# created by declint\n*\n"
TAG_TEXT = "Signature: 8a477f597d28d172789f06886806bc55\n# declint's cache; see https://bford.info/cachedir/\n"
# what declint writes
CACHE_SUFFIXES = frozenset({".pickle", ".snapshot", ".journal", ".previews", ".walk", ".listings", ".held"})
_FORMAT_DIRECTORY = re.compile(r"v[0-9]+")  # one per cache format: v1/, v2/...


def foreign_entries(directory: str) -> list[str]:
    """The entries of `directory` that declint does not write into a cache directory, sorted
    (an OSError of the listing propagates)."""
    names = os.listdir(directory)
    marked = TAG in names or _reads(os.path.join(directory, GITIGNORE)) == GITIGNORE_TEXT
    return sorted(name for name in names if not _is_cache_entry(directory, name, marked))


def _is_cache_entry(directory: str, name: str, marked: bool) -> bool:
    if name in (GITIGNORE, TAG):
        return True
    path = os.path.join(directory, name)
    if _FORMAT_DIRECTORY.fullmatch(name) is None or os.path.islink(path) or not os.path.isdir(path):
        return False
    if marked:
        return True  # a marked cache: another tool's file may sit beside declint's (a full write keeps it)
    try:
        entries = os.listdir(path)
    except OSError:
        return False
    # Unmarked (its marks deleted): declint's files tell a format directory from `api/v1/` of sources.
    return not entries or any(os.path.splitext(entry)[1] in CACHE_SUFFIXES for entry in entries)


def _reads(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(len(GITIGNORE_TEXT) + 1)
    except (OSError, UnicodeDecodeError):
        return None


def is_declint_gitignore(text: str) -> bool:
    """Is this the `.gitignore` declint writes into its cache directory?"""
    return text == GITIGNORE_TEXT
