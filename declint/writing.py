"""Replacing a file atomically without changing what it is: its permission bits and owner stay.

`--fix` and `declint baseline write` never write into the file itself: a crash or a kill in the
middle would leave it truncated. They write a temporary file in the same directory and rename it
over the old one, so a reader sees the old bytes or the new ones, never a part. A rename makes a
new file (a new inode), so what belonged to the old one is copied to it first: the permission bits
(a `0600` file must not become `0644`) and, where the OS allows it, the owner and group. What a
rename cannot keep is refused before writing (`replace_refusal`): the other names of a hard-linked
file would keep the old text, and a read-only file would be replaced although it cannot be
written to (a rename needs only the directory to be writable).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

NEW_FILE_MODE = 0o644
_SUFFIX = ".declint"  # of the temporary files: `.NAME.XXXXXXXX.declint` (tempfile's 8 random characters)
_STALE_S = 3600.0  # a temporary file older than this belongs to a write that was killed
_RANDOM_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


def replace_refusal(path: Path) -> str | None:
    """Why the file at `path` must not be replaced by a new one (None: it may, or it is missing)."""
    try:
        info = path.stat()
    except OSError:
        return None  # reading it fails with its own, better message
    if info.st_nlink > 1:
        return f"has {info.st_nlink} hard links, which a rewrite would leave with the old text"
    # No write bit at all says read-only whoever runs: root (a CI container) may write anything
    # and `os.access` tells it so, but the file was marked not to be changed.
    if not os.access(path, os.W_OK) or not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return "is read-only"
    return None


def replace_atomically(target: Path, data: bytes) -> None:
    """`data` into `target` (a resolved path) through a temporary file and a rename, keeping the
    old file's permission bits, owner and group (a new file gets `NEW_FILE_MODE`)."""
    try:
        old: os.stat_result | None = target.stat()
    except FileNotFoundError:
        old = None
    import tempfile  # here: writing is rare, and tempfile pulls in shutil and random

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=_SUFFIX)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        _take_over(temporary, old)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _drop_stale_temporaries(target)


def _drop_stale_temporaries(target: Path) -> None:
    """Remove the temporary files of writes of `target` killed before their rename (SIGKILL, the
    OOM killer: no handler runs), which stayed next to it in the user's tree: those named as this
    module names them, over an hour old (never one another run may be writing)."""
    prefix = f".{target.name}."
    limit = time.time() - _STALE_S
    with contextlib.suppress(OSError), os.scandir(target.parent) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(_SUFFIX)):
                continue
            token = name[len(prefix) : -len(_SUFFIX)]
            if len(token) != 8 or not _RANDOM_CHARACTERS.issuperset(token):
                continue
            with contextlib.suppress(OSError):
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < limit:
                    os.unlink(entry.path)


def _take_over(temporary: str, old: os.stat_result | None) -> None:
    """Give the new file the old one's owner, group and mode (owner first: chown may clear setgid)."""
    if old is None:
        os.chmod(temporary, NEW_FILE_MODE)
        return
    mine = os.stat(temporary)
    if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid) and hasattr(os, "chown"):
        # Only root may give a file away; anyone may pick one of their own groups. What the OS
        # refuses stays as it is, as when an editor saves a file of somebody else's.
        with contextlib.suppress(PermissionError):
            os.chown(temporary, old.st_uid, old.st_gid)
        with contextlib.suppress(PermissionError):
            os.chown(temporary, -1, old.st_gid)
    os.chmod(temporary, stat.S_IMODE(old.st_mode))
