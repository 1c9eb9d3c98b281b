"""Find the Python files to index and to check.

Rules: `.gitignore` files are honoured as git honours them: each applies below its own
directory (via pathspec's gitignore semantics), the nearest one that matches a path decides (a
`!pattern` re-includes what a file further up ignores), and when the root lies inside a git work
tree, those of the directories from its top level down to the root apply too, then the
repository's `info/exclude` (not `core.excludesFile`: a user's own setting). `exclude`
patterns apply to explicit paths too (pre-commit passes staged files that may be excluded),
symlinked directories found by the walk are never followed (no loops, nothing outside the root),
and a symlinked file is used only when it resolves inside the root. A path given explicitly that
goes through a symlinked directory is taken as the same path inside the root when it is one
(root-relative paths, the root's excludes), and one that is itself a symlink to a directory is
walked as its target would be, never silently skipped.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import hashlib
import os
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING, NamedTuple

from declint.cache_marks import TAG, foreign_entries, is_declint_gitignore
from declint.config import Config
from declint.errors import UsageError, warn

if TYPE_CHECKING:
    import pathspec
else:
    from declint.lazy import lazy_module

    # ~19 ms to import (it probes its hyperscan and re2 backends): a run the snapshot answers
    # walks nothing and never needs it.
    pathspec = lazy_module("pathspec")

# A gitignore line `name/`: one directory name, no glob, no anchor.
_PLAIN_DIRECTORY = re.compile(r"[^/*?\[\]!#\\\s][^/*?\[\]\\]*/")

# Directories no project wants linted; like ruff's default excludes.
BUILTIN_EXCLUDES = (
    ".git/",
    ".hg/",
    ".svn/",
    ".venv/",
    "venv/",
    ".tox/",
    "__pycache__/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".pytest_cache/",
    ".declint_cache/",
    "node_modules/",
)


# The audit event naming a path whose existence a walk depended on without opening or listing it
# (a `.git` looked for above the root): `cache.InputRecorder` records it as it records an open.
PROBE_EVENT = "declint.probe"


class _GitIgnore(NamedTuple):
    """A directory's .gitignore, parsed. `negates`: it has a `!pattern`, so it can decide that a
    path is *not* ignored (over a file further up); without one, a path its `match_file` passes
    (most paths: the walk asks per entry) is not decided there, and no pattern is asked one by
    one (see `_ignored_by`)."""

    directory: str
    spec: pathspec.GitIgnoreSpec
    negates: bool


# Git reads ignore files as bytes: a leading BOM is skipped, and a byte that is not UTF-8 stays
# in its pattern (matched against names as the walk decodes them, with surrogate escapes), not
# the whole file dropped (red-team 50).
_IGNORE_ENCODING = "utf-8-sig"

# The .gitignore files that apply to a directory's entries, nearest first.
_Applicable = tuple[_GitIgnore, ...]


class SourcePath(NamedTuple):
    """A file to analyse: `rel` is the root-relative POSIX path used in every output.

    A named tuple, not a dataclass: a walk makes one per file of the tree (~0.2 against ~0.6 us),
    and it sorts, compares and pickles as a plain tuple.
    """

    rel: str
    path: str  # a string, not a Path: a walk makes one per file, and every user wants the string


@dataclass(frozen=True, order=True)
class SkippedPath:
    """A path that looked like a Python file but must not be followed (reported as DL000).

    `rel` is the name as the file system gives it (`os.fsdecode`: bytes that are not UTF-8 are
    surrogate escapes), so that a report can point at the real file (SARIF's percent-encoded
    URI); `printable(rel)` is how it is shown."""

    rel: str
    reason: str


class Listing(NamedTuple):
    """What the walk saw in one directory that another walk of the tree needs (DL108's, for the
    serving schemas): its subdirectories (not symlinks, whether or not the walk excluded them)
    and its entries named `*.json` that are not directories, as `os.walk` tells them apart.

    A named tuple: the walk makes one per directory, and the cache keeps them for the runs that
    take the last walk from the snapshot (`Cache.save_listings`, plain tuples in a marshal).
    `signature` is the walk's `entries_signature` of the directory (empty from other listings)."""

    subdirectories: tuple[str, ...]
    json_files: tuple[str, ...]
    signature: bytes = b""


def entries_signature(entries: Sequence[os.DirEntry[str]]) -> bytes:
    """A digest of what the walk decides a directory's entries by: each one's name and kind
    (directory, symlink with its target, anything else), in name order. Listings with the same
    signature are walked alike (the .gitignore files, the package markers and the configuration
    are inputs of their own): a directory whose mtime moved while its entries did not, a file
    saved by renaming a new one over it (as editors and git do) or a temporary file created and
    removed, still holds the same files."""
    parts: list[str] = []
    for entry in entries:
        if entry.is_symlink():
            parts.append(f"l{entry.name}\0{_link_target(entry.path)}")
        else:
            parts.append(("d" if entry.is_dir(follow_symlinks=False) else "f") + entry.name)
    return hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogateescape"), digest_size=16).digest()


def _link_target(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:  # gone meanwhile: a signature no listing has
        return "\0"


def listed_again(directory: str, signature: bytes) -> os.stat_result | None:
    """The directory's stat when its entries are still those `signature` was made of, else None.
    The stat is taken before the listing: a change made in between moves the mtime recorded."""
    try:
        stat = os.stat(directory)
        if not S_ISDIR(stat.st_mode):
            return None
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=_name)
    except OSError:
        return None
    return stat if entries_signature(entries) == signature else None


@dataclass(frozen=True)
class Discovery:
    files: tuple[SourcePath, ...]
    skipped: tuple[SkippedPath, ...]
    # absolute directory -> its Listing, for every directory the walk listed
    listings: Mapping[str, Listing] = field(default_factory=dict, compare=False, repr=False)


def display_path(path: Path, root: Path) -> str:
    """`path` relative to `root` (absolute when outside it), POSIX, printable (see `printable`)."""
    return printable(_relative(path, root))


def _relative(path: Path, root: Path) -> str:
    """`display_path` with the file system's bytes as they are: the walk keeps them, so that a
    name that is not UTF-8 is reported (escaped) instead of checked under another name."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_posix()


# What phase 1 indexes: every Python file under the roots. `include` chooses the files to check,
# never the index: a narrower one would hide the shared Literal and the base classes from it.
INDEX_INCLUDE = ("*.py",)
_GLOB_CHARS = re.compile(r"[*?\[\]/\\]")  # what makes a pattern's text after "*" more than a plain suffix


class _Filter:
    def __init__(self, config: Config, include: tuple[str, ...] | None = None) -> None:
        self.root = config.root
        self._root_str = str(config.root)
        self._root_prefix = self._root_str if self._root_str.endswith(os.sep) else self._root_str + os.sep
        self.include = config.str_list("include") if include is None else include
        excludes = [*BUILTIN_EXCLUDES, *config.str_list("exclude")]
        self._excludes = excludes
        # A directory the walk reached is not below an excluded one: a plain `name/` pattern then
        # matches it by its name alone, a set lookup instead of a regex per pattern (the walk asks
        # once per directory). With a negation anywhere, order matters: the full spec decides.
        negated = any(line.strip().startswith("!") for line in excludes)
        plain = set() if negated else {line for line in excludes if _PLAIN_DIRECTORY.fullmatch(line.strip())}
        self._dir_names = frozenset(line.strip()[:-1] for line in plain)
        self._rest = [line for line in excludes if line not in plain]
        # Patterns ending in "/" only match directories (and what is below them): a file reached
        # by walking directories that were not excluded cannot match them, so it needs no probe.
        self._file_patterns = any(
            line.strip() and not line.strip().startswith("#") and not line.rstrip().endswith("/") for line in excludes
        )
        self._included = re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in self.include) or r"(?!)")
        # Patterns that are all "*" and a plain suffix (the default "*.py"): the same answer from
        # `str.endswith`, asked of the name alone (a rel ends with its name), for every file walked.
        suffixes = tuple(p[1:] for p in self.include if p.startswith("*") and not _GLOB_CHARS.search(p[1:]))
        self.suffixes = suffixes if self.include and len(suffixes) == len(self.include) else None
        self.respect_gitignore = bool(config.get("respect-gitignore"))
        self._gitignores: dict[str, _GitIgnore | None] = {}
        self._applicable_to: dict[str, _Applicable] = {}
        self._nested_repositories: set[str] = set()  # listed directories below the root holding a .git
        self.listings: dict[str, Listing] = {}

    # Compiled on first use: `known_files` tests names alone, and a run the snapshot answers for
    # files passed by path then never imports pathspec.
    @functools.cached_property
    def exclude(self) -> pathspec.GitIgnoreSpec:
        return pathspec.GitIgnoreSpec.from_lines(self._excludes)

    @functools.cached_property
    def _walked_dirs(self) -> pathspec.GitIgnoreSpec | None:
        return pathspec.GitIgnoreSpec.from_lines(self._rest) if self._rest else None

    def included(self, rel: str, name: str | None = None) -> bool:
        """`name`: the rel's last component, when the caller has it (the walk does)."""
        if name is None:
            name = rel.rsplit("/", 1)[-1]
        if self.suffixes is not None:
            return name.endswith(self.suffixes)
        return self._included.match(name) is not None or self._included.match(rel) is not None

    def excluded(
        self, path: Path | str, rel: str, is_dir: bool, *, walked: bool = False, gitignores: bool = True
    ) -> bool:
        """`walked`: an entry found inside a directory the walk did not exclude; `gitignores`:
        False when no .gitignore applies in the entry's directory (`listed` said so)."""
        if walked and is_dir:
            name = rel.rpartition("/")[2]
            if name in self._dir_names or (self._walked_dirs is not None and self._walked_dirs.match_file(rel + "/")):
                return True
        elif not (walked and not self._file_patterns):
            probe = rel + "/" if is_dir else rel
            if self.exclude.match_file(probe):
                return True
        if not (gitignores and self.respect_gitignore):
            return False
        path = str(path)
        # A walked entry's directories were asked on the way down; a path given explicitly (a
        # staged file) is ignored, as git ignores it, when one of them is, whatever a nearer
        # `!pattern` says of the path itself.
        return self._gitignored(path, is_dir) or (not walked and self._below_ignored_directory(path))

    def probes_walked_files(self, gitignores: bool) -> bool:
        """Can `excluded(..., walked=True, gitignores=gitignores)` say True of a file? (See there.)"""
        return self._file_patterns or (gitignores and self.respect_gitignore)

    def listed(
        self,
        directory: str,
        entries: Sequence[os.DirEntry[str]],
        parent: _Applicable | None = None,
    ) -> _Applicable:
        """The walk listed `directory`: open no .gitignore there when none is among its entries,
        and return the .gitignore files that apply to its entries (see `_applicable`; `parent`:
        those of the directory the walk came from, which saves looking them up). Most
        directories have none in a tree without .gitignore files: the walk then skips the
        per-entry probe. The walk keeps the directory's `Listing` itself."""
        has_ignore = has_git = False
        for entry in entries:
            name = entry.name
            if name == ".gitignore":
                has_ignore = True
            elif name == ".git" and _is_git_marker(entry):
                has_git = True
        if has_git and directory != self._root_str:
            self._nested_repositories.add(directory)
        if directory not in self._gitignores and not has_ignore:
            self._gitignores[directory] = None
            if parent is not None and not has_git and directory.startswith(self._root_prefix):
                self._applicable_to[directory] = parent  # nothing of its own: its parent's
        return self._applicable(directory) if self.respect_gitignore else ()

    def applicable_above(self, directory: str) -> _Applicable:
        """What the walk passes `directory` as its parent's .gitignore files (`listed`'s `parent`)."""
        return self._applicable(os.path.dirname(directory)) if self.respect_gitignore else ()

    def _gitignored(self, path: str, is_dir: bool) -> bool:
        """As git decides: the nearest .gitignore with a pattern matching `path` (relative to the
        file's own directory) says whether it is ignored; a file further up is not asked then."""
        return _ignored_by(self._applicable(os.path.dirname(path)), path, is_dir)

    def _below_ignored_directory(self, path: str) -> bool:
        """Is a directory between the root (excluded: the root is always walked) and `path`
        ignored? (Git never looks inside one, so no `!pattern` below re-includes anything.)"""
        directory = os.path.dirname(path)
        while directory.startswith(self._root_prefix):
            if self._gitignored(directory, True):
                return True
            directory = os.path.dirname(directory)
        return False

    def _applicable(self, directory: str) -> _Applicable:
        """The .gitignore files that apply to entries of `directory`, nearest first, up to the
        root and then those above it in its git work tree (see `_above_root`), or up to the first
        directory outside the root."""
        # Memoized on the filter, not with functools.cache: that cache lives on the class, and
        # held every filter (and what it refers to) for the life of the process.
        known = self._applicable_to.get(directory)
        if known is not None:
            return known
        ignore = self._gitignore_of(directory)
        own: _Applicable = (ignore,) if ignore is not None else ()
        parent = os.path.dirname(directory)
        if directory == self._root_str:
            applicable = own + self._above_root()
        elif parent == directory or not directory.startswith(self._root_prefix):
            applicable = own  # a directory outside the root is the last to apply
        elif self._nested_repository(directory):
            # A repository of its own: git applies no .gitignore from around it, and its own exclude.
            applicable = own + _info_exclude(directory)
        else:
            applicable = own + self._applicable(parent)
        self._applicable_to[directory] = applicable
        return applicable

    def _nested_repository(self, directory: str) -> bool:
        """Is `directory` (below the root) the top level of a git repository of its own (a
        vendored checkout, a submodule)? The walk notes those it listed; otherwise (a directory
        with a .gitignore of its own, a path given by name) the file system is asked."""
        if directory in self._nested_repositories:
            return True
        return _is_git_marker_path(os.path.join(directory, ".git"))

    def _above_root(self) -> _Applicable:
        """The .gitignore files of the directories from the root's parent up to its git work
        tree's top level, nearest first, then the repository's `info/exclude` (see
        `_info_exclude`): git applies them to the root's files (a project in a monorepo whose
        top-level .gitignore says `build/`). None outside a work tree, and never one above its
        top level. Read with `open`, as the walk reads the others, so a cache run records each
        (or its absence) as an input of the walk.

        None either when they ignore the root or a directory between it and the top level: git
        would ignore every file of the project (a vendored tree, a build output with a
        configuration of its own), which was asked for by name; `exclude` never excludes the
        root either. (pathspec matches `dir/` against every path below it, so they would.)"""
        top = git_top_level(self._root_str)
        if top is None:
            return ()
        found: list[_GitIgnore] = []
        directory = self._root_str
        while directory != top:
            directory = os.path.dirname(directory)
            ignore = self._gitignore_of(directory)
            if ignore is not None:
                found.append(ignore)
        found += _info_exclude(top)
        directory = self._root_str
        while directory != top:
            above = tuple(ignore for ignore in found if len(ignore.directory) < len(directory))
            if _ignored_by(above, directory, True):
                return ()
            directory = os.path.dirname(directory)
        return tuple(found)

    def _gitignore_of(self, directory: str) -> _GitIgnore | None:
        if directory not in self._gitignores:
            ignore = None
            path = os.path.join(directory, ".gitignore")
            try:
                if os.path.islink(path):
                    # Git does not follow a symlinked .gitignore of the work tree. A cache run
                    # must still see it become a file (an ancestor's directory is not listed).
                    sys.audit(PROBE_EVENT, path)
                    raise OSError("a symbolic link: not read, as git does not read it")
                text = _read_ignore_file(path)
                if not _stray_cache_mark(directory, text):
                    ignore = _parsed_ignore(directory, text)
            except OSError:
                pass
            self._gitignores[directory] = ignore
        return self._gitignores[directory]


def _info_exclude(top: str) -> _Applicable:
    """The `info/exclude` of the repository whose work tree's top level is `top`, when it holds
    a pattern: git's per-clone ignores, relative to the top level, asked after every .gitignore
    (gitignore(5)). A worktree's or a submodule's `.git` is a file naming its git directory,
    and a worktree's git directory names the common one that holds `info/`. Read with `open`,
    so a cache run records the files (or their absence). `core.excludesFile` is not read: it
    is the user's, and a check must give every user and CI the same answer."""
    marker = os.path.join(top, ".git")
    git_dir: str | None = marker
    if not os.path.isdir(marker):
        git_dir = _named_directory(marker, "gitdir:")
        common = None if git_dir is None else _named_directory(os.path.join(git_dir, "commondir"), "")
        git_dir = common or git_dir
    if git_dir is None:
        return ()
    try:
        exclude = _parsed_ignore(top, _read_ignore_file(os.path.join(git_dir, "info", "exclude")))
    except OSError:
        return ()
    if all(pattern.include is None for pattern in exclude.spec.patterns):
        return ()  # git's template: comments only (most clones); the walk then probes no file
    return (exclude,)


def _read_ignore_file(path: str) -> str:
    """An ignore file's text as git reads its bytes (see `_IGNORE_ENCODING`); OSError if unreadable.
    (With surrogate escapes, no byte fails to decode.)"""
    with open(path, encoding=_IGNORE_ENCODING, errors="surrogateescape", newline="") as handle:
        return handle.read()


def _parsed_ignore(directory: str, text: str) -> _GitIgnore:
    spec = pathspec.GitIgnoreSpec.from_lines(_ignore_lines(text))
    return _GitIgnore(directory, spec, any(pattern.include is False for pattern in spec.patterns))


def _ignore_lines(text: str) -> list[str]:
    """An ignore file's lines as git splits them: at "\n" only, a "\r" before it dropped (a lone
    "\r", a form feed or U+2028 is part of its pattern, where `str.splitlines` split; red-team 51).
    Read with `newline=""`: universal newlines made a lone "\r" a line break. (pathspec strips
    trailing whitespace itself, a vertical tab included, which git keeps: not mended.)"""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _named_directory(path: str, prefix: str) -> str | None:
    """The directory a git pointer file names after `prefix` (`gitdir: ../.git/modules/x` in a
    `.git` file, `../..` in a worktree's `commondir`), relative to the file's own directory."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read(4096).strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(prefix) or not text[len(prefix) :].strip():
        return None
    return os.path.normpath(os.path.join(os.path.dirname(path), text[len(prefix) :].strip()))


def _ignored_by(applicable: _Applicable, path: str, is_dir: bool) -> bool:
    """Git's answer for `path` under the .gitignore files `applicable` (nearest first): the
    nearest file with a pattern matching the path itself decides (see `_own_decision`)."""
    for directory, spec, negates in applicable:
        relative = path[len(directory) :].lstrip(os.sep).replace(os.sep, "/") + ("/" if is_dir else "")
        # Without a `!pattern`, a file that matches nothing (most paths) is passed by one call.
        if negates or spec.match_file(relative):
            decided = _own_decision(spec, relative)
            if decided is not None:
                return decided
    return False


def _own_decision(spec: pathspec.GitIgnoreSpec, relative: str) -> bool | None:
    """Ignored (True) or re-included (False) by the last pattern of `spec` that matches
    `relative` itself; None when none does. A directory pattern (`gen/`, `!gen/`, `*/`) also
    matches every path below the directory, which is how pathspec excludes them; but git decides
    a directory when the walk reaches it (an ignored one is never entered, and a path given by
    name below it is refused by `_below_ignored_directory`), and a file below it only by the
    patterns matching the file: `!gen/` in a nearer .gitignore re-includes the directory, not the
    `*.py` files below it that a further one ignores (red-team 44). Checked against git by a
    differential fuzzer (red-team 45)."""
    for pattern in reversed(spec.patterns):
        if pattern.include is None or pattern.regex is None:
            continue
        if _matches_itself(pattern.regex, relative):
            return bool(pattern.include)
    return None


def _matches_itself(regex: re.Pattern[str], relative: str) -> bool:
    """Does a pattern's regex (pathspec's, matched with `search`) match `relative` itself, not
    only a directory above it? One with a directory mark (`ps_d`) must match up to the end of
    the path (`*/` on `a/b/`, not on `a/m.py`); one that ends in `/` (`dir/**`, `^dir/`) matches
    what lies below the directory, not the directory itself."""
    if "ps_d" in regex.groupindex:
        return _to_the_end(regex.pattern, regex.flags).search(relative) is not None
    found = regex.search(relative)
    if found is None:
        return False
    return not (regex.pattern.endswith("/") and relative.endswith("/") and found.end() == len(relative))


@functools.lru_cache(maxsize=4096)
def _to_the_end(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(f"(?:{pattern})$", flags)


def _is_git_marker(entry: os.DirEntry[str]) -> bool:
    """A `.git` entry as `git_top_level` counts one: a directory, or a file (a worktree's, a
    submodule's), symlinks followed as a stat follows them."""
    try:
        return entry.is_dir() or entry.is_file()
    except OSError:
        return False


def _is_git_marker_path(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return S_ISDIR(mode) or S_ISREG(mode)


def git_top_level(directory: str) -> str | None:
    """The top level of the git work tree holding `directory` (absolute, normalized): the
    nearest directory at or above it with a `.git` entry, a directory or (a worktree's, a
    submodule's) a file, as git finds it; None outside any. No git process: a stat per level.

    What a cache run must see again (see PROBE_EVENT) is recorded: each `.git` looked for and not
    found (one created later moves the top level), and the top level itself when it lies above
    `directory` (its mtime moves when its `.git` goes; the root's own listing covers that below).
    Never the `.git` found: every git command that writes the index moves its mtime."""
    start = directory
    while True:
        marker = os.path.join(directory, ".git")
        if _is_git_marker_path(marker):
            if directory != start:
                sys.audit(PROBE_EVENT, directory)
            return directory
        sys.audit(PROBE_EVENT, marker)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _stray_cache_mark(directory: str, text: str) -> bool:
    """Is this a `.gitignore` declint wrote as its cache directory's mark, in a directory that is
    not a cache (an earlier version wrote it wherever `cache-dir` said, the project root
    included)? Its "*" would hide every file below it: the walk does not honour it, and says so."""
    if not is_declint_gitignore(text) or not foreign_entries(directory):
        return False
    warn(
        f"{os.path.join(directory, '.gitignore')} was written by declint to mark a cache directory, but "
        f'{directory} holds other files; declint does not honour its "*" (git still does): delete it, and '
        f"the {TAG} next to it"
    )
    return True


NOT_UTF8 = "file name is not valid UTF-8 (Python cannot import it); not checked"


def discover(
    paths: Iterable[Path], config: Config, virtual: Collection[str] = (), *, include: tuple[str, ...] | None = None
) -> Discovery:
    """Files under `paths` (files or directories), sorted by their display path.

    `virtual`: absolute paths of files whose text comes from elsewhere (`--stdin-filename`): each
    counts as a file even when nothing exists there yet (an editor's unsaved buffer). `include`:
    the name patterns of the files wanted (default: the `include` option; the index walk passes
    INDEX_INCLUDE).
    """
    flt = _Filter(config, include)
    files: dict[str, SourcePath] = {}
    skipped: dict[str, SkippedPath] = {}
    for given in paths:
        absolute = Path(os.path.abspath(given))
        if not absolute.exists() and not absolute.is_symlink() and str(absolute) not in virtual:
            raise UsageError(f"path does not exist: {given}")
        found: list[SourcePath | SkippedPath] = []
        _walk(absolute if str(absolute) in virtual else _typed(absolute, flt), flt, found, explicit=True)
        for item in found:
            if isinstance(item, SourcePath) and is_utf8(item.rel):
                files[item.rel] = item
            else:
                reason = item.reason if isinstance(item, SkippedPath) else NOT_UTF8
                skipped[item.rel] = SkippedPath(item.rel, reason)
    # By rel alone (unique here): string comparisons in C, not a dataclass's __lt__ per pair.
    ordered_skips = tuple(sorted(skipped.values(), key=lambda skip: (printable(skip.rel), skip.reason)))
    return Discovery(tuple(sorted(files.values(), key=_rel)), ordered_skips, flt.listings)


class Subtrees:
    """The part of a walk of the whole tree (`discover` of the roots) that lies under some of its
    directories: the directories of a last walk whose entries changed (a file added or removed)
    are walked again, and the rest of that walk is kept.

    Each directory must be one the last walk listed (so neither it nor a directory above it was
    excluded), strictly below the paths that walk was given, under the same configuration, with
    every .gitignore above it unchanged (the caller has checked all of it against that walk's
    recorded stats): the walk then reaches it with the .gitignore files that apply above it, as
    `applicable_above` computes them here, and walks it as it would. Those are computed before
    the walk is recorded: the walk records only the .gitignore files it opens, and opens none in a
    directory whose entries hold none, as these ancestors' did (a recorded absent .gitignore would
    only cost the next run a stat, but the record should be the walk's)."""

    def __init__(self, config: Config, directories: Iterable[str], include: tuple[str, ...] | None = None) -> None:
        self._filter = _Filter(config, include)
        tops = sorted(set(directories))
        # The outermost only: a directory below another is walked with it.
        self.tops = [d for i, d in enumerate(tops) if not any(d.startswith(t + os.sep) for t in tops[:i])]
        # What the rels of the files below them start with (`str.startswith` takes a tuple: one
        # call a file for the ~20k files of the walk kept).
        self.prefixes = tuple(_relative(Path(d), self._filter.root) + "/" for d in self.tops)
        self._above = [self._filter.applicable_above(d) for d in self.tops]

    def walk(self) -> tuple[list[SourcePath], dict[str, Listing]] | None:
        """The files a walk of the whole tree finds under the directories, in its order, and the
        listings of the directories it lists there; None when it skips a path there (a directory
        it cannot list, a symlink it cannot follow, a name that is not UTF-8): the caller walks
        the whole tree, whose skipped paths are reported."""
        found: list[SourcePath | SkippedPath] = []
        for directory, above in zip(self.tops, self._above, strict=True):
            # Its rel, and whether it is inside the root, found as the walk finds them at a path given.
            _walk_dir(directory, self._filter, found, parent=above)
        prefixes = self.prefixes
        below = [item for item in found if isinstance(item, SourcePath) and item.rel.startswith(prefixes)]
        files = [item for item in below if is_utf8(item.rel)]
        if len(files) != len(found):
            return None
        return sorted(files, key=_rel), self._filter.listings


def known_files(
    paths: Iterable[str], config: Config, walked: Mapping[str, tuple[object, ...]]
) -> tuple[str, ...] | None:
    """The rels `discover(paths, config)` gives for files that a walk under the same
    configuration found, each by the very path given (`walked`: rel -> (path, ...)); None when a
    path is anything else, and `discover` decides.

    Such a file passed the excludes and the .gitignore files on that walk, as a path given alone
    would, so only the name patterns of `include` are asked (the walk may have been the index's,
    which takes every `.py` file). A symlink on the way, or a path outside the root, goes to
    `discover`, which handles both. Compiling the excludes imports pathspec (~19 ms): a
    pre-commit run over staged files that the snapshot answers needs neither.
    """
    flt = _Filter(config)
    rels: set[str] = set()
    for given in paths:
        path = os.path.abspath(given)
        rel = _relative(Path(path), flt.root)
        entry = walked.get(rel)
        if entry is None or entry[0] != path or os.path.realpath(path) != path or not flt.included(rel):
            return None
        rels.add(rel)
    return tuple(sorted(rels))


def is_utf8(name: str) -> bool:
    """False for a name the file system gave with bytes that are not UTF-8 (which `os.fsdecode`
    carries as surrogate escapes: no output format, cache key or module name can hold them)."""
    return name.isascii() or not any("\udc80" <= char <= "\udcff" for char in name)


def printable(name: str) -> str:
    """`name` with the bytes that are not UTF-8 escaped as Python prints them (`\\xff`)."""
    return name if is_utf8(name) else os.fsencode(name).decode("utf-8", "backslashreplace")


def _typed(path: Path, flt: _Filter) -> Path:
    """What to walk for a path given on the command line, which may be reached through symlinks
    (a CI workspace, a checkout linked into place): through a symlinked parent, the same path
    inside the root, so its rels are root-relative and the root's excludes and .gitignore files
    apply; a symlink to a directory, its target, as if the target had been given (the walk never
    follows a symlinked directory it finds, and the typed one was silently skipped: "0 files
    checked"). A symlinked file stays a link: `_symlink` decides about it as the walk does."""
    given = path
    if not _inside(path, flt.root):
        through = Path(os.path.realpath(path.parent), path.name)
        path = through if _inside(through, flt.root) else path
    path = Path(os.path.realpath(path)) if path.is_symlink() and path.is_dir() else path
    if path != given:
        # What the given path leads to is an input of the walk: a cache run sees the link
        # re-pointed (`ln -sfn v2 src`), which no stat of the old target's files shows (red-team 46).
        sys.audit(PROBE_EVENT, str(given))
    return path


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _walk(path: Path, flt: _Filter, found: list[SourcePath | SkippedPath], *, explicit: bool) -> None:
    """Append what `path` yields (itself, or the files under it) to `found`, in walk order."""
    rel = _relative(path, flt.root)
    inside = rel != path.as_posix() or path == flt.root
    if path.is_symlink():
        found.extend(_symlink(path, rel, flt))
        return
    if path.is_dir():
        if not (explicit and path == flt.root) and inside and flt.excluded(path, rel, True):
            return
        _walk_dir(os.fspath(path), flt, found)
        return
    if flt.included(rel) and not (inside and flt.excluded(path, rel, False)):
        found.append(SourcePath(rel, str(path)))


def _walk_dir(
    directory: str,
    flt: _Filter,
    found: list[SourcePath | SkippedPath],
    base: str | None = None,
    inside: bool | None = None,
    parent: _Applicable | None = None,
) -> None:
    # Appends instead of yielding: a generator per directory passed each file up through every
    # level above it. Entries in name order: `discover` sorts what was found, and sorting files
    # found in order is linear. Directories are strings: a Path per directory was ~2 us of the walk.
    try:
        entries = sorted(os.scandir(directory), key=_name)
    except OSError as error:
        found.append(SkippedPath(_relative(Path(directory), flt.root), f"cannot list directory: {error.strerror}"))
        return
    applicable = flt.listed(directory, entries, parent)
    gitignores = bool(applicable)
    if base is None or inside is None:
        as_path = Path(directory)
        base = _relative(as_path, flt.root)
        inside = base != as_path.as_posix() or as_path == flt.root
    # Whether an included file found here can be excluded at all: in most directories neither a
    # file pattern nor a .gitignore applies, and the walk skips the probe (a call per file).
    probe_files = flt.probes_walked_files(gitignores)
    suffixes = flt.suffixes
    prefix = "" if base == "." else f"{base}/"
    # The directory's Listing, gathered on the way (a pass of its own was a tenth of the walk).
    subdirectories: list[str] = []
    json_files: list[str] = []
    for entry in entries:
        # What `_walk` does for one entry, with strings and the entry's cached type (the hot path).
        name = entry.name
        rel = prefix + name
        if entry.is_symlink():
            if name.endswith(".json") and not _is_dir(entry):
                json_files.append(name)
            path = Path(entry.path)
            found.extend(_symlink(path, rel if inside else _relative(path, flt.root), flt))
        elif entry.is_dir(follow_symlinks=False):
            subdirectories.append(name)
            if not (inside and flt.excluded(entry.path, rel, True, walked=True, gitignores=gitignores)):
                _walk_dir(entry.path, flt, found, rel if inside else None, inside or None, applicable)
        else:
            if name.endswith(".json"):
                json_files.append(name)
            if not inside:
                _walk(Path(entry.path), flt, found, explicit=False)
            elif (name.endswith(suffixes) if suffixes is not None else flt.included(rel, name)) and not (
                probe_files and flt.excluded(entry.path, rel, False, walked=True, gitignores=gitignores)
            ):
                found.append(SourcePath(rel, entry.path))
    flt.listings[directory] = Listing(tuple(subdirectories), tuple(json_files), entries_signature(entries))


_name = attrgetter("name")
_rel = attrgetter("rel")


def _listing(entries: Sequence[os.DirEntry[str]]) -> Listing:
    subdirectories = tuple(entry.name for entry in entries if entry.is_dir(follow_symlinks=False))
    return Listing(
        subdirectories, tuple(entry.name for entry in entries if entry.name.endswith(".json") and not _is_dir(entry))
    )


def _is_dir(entry: os.DirEntry[str]) -> bool:
    """`os.walk`'s test: a symlink to a directory counts as one, an error as none."""
    try:
        return entry.is_dir()
    except OSError:
        return False


# The run's walk, lent to the project rules while they run (`Engine` sets it): a second walk of
# the same tree (DL108's) reads the directories this one listed from here.
_LISTINGS: ContextVar[Mapping[str, Listing] | None] = ContextVar("declint_listings", default=None)


@contextlib.contextmanager
def listings_lent(listings: Mapping[str, Listing]) -> Iterator[None]:
    token = _LISTINGS.set(listings)
    try:
        yield
    finally:
        _LISTINGS.reset(token)


def json_files_under(root: Path, pruned: frozenset[str]) -> list[Path]:
    """The `*.json` files under `root` (in no particular order), as `os.walk(root)` finds them with
    directories named in `pruned` skipped (no exclude, no .gitignore, symlinked directories not
    followed). Directories the run's walk listed (see `listings_lent`) are not listed again."""
    lent = _LISTINGS.get() or {}
    found: list[Path] = []
    pending = [os.fspath(root)]
    while pending:
        directory = pending.pop()
        listing = lent.get(directory)
        if listing is None:
            try:
                with os.scandir(directory) as scan:
                    listing = _listing(list(scan))
            except OSError:  # as os.walk: a directory that cannot be listed is skipped
                continue
        found += (Path(directory, name) for name in listing.json_files)
        pending += (os.path.join(directory, name) for name in listing.subdirectories if name not in pruned)
    return found


def _symlink(path: Path, rel: str, flt: _Filter) -> Iterator[SourcePath | SkippedPath]:
    if not flt.included(rel):
        return  # a symlinked directory, or a non-Python file: never followed
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        yield SkippedPath(rel, "broken symlink or symlink loop; not followed")
        return
    if target.is_dir():
        return
    if flt.root != target and flt.root not in target.parents:
        yield SkippedPath(rel, "symlink points outside the project root; not followed")
        return
    if not flt.excluded(path, rel, False):
        yield SourcePath(rel, str(path))


def module_name(path: Path, root: Path) -> str:
    """Dotted module name from the package structure (`__init__.py` files) around `path`; a
    directory below `root` without one is a namespace package when a package holds it (see
    `engine._module_names`, which names a whole tree)."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    namespaces: list[str] = []  # directories without __init__.py, named if a package holds them
    directory = path.parent
    while True:
        if (directory / "__init__.py").is_file():
            parts += namespaces
            namespaces = []
            parts.append(directory.name)
        elif (
            root in directory.parents
            and directory.name.isidentifier()
            and not directory.with_name(directory.name + ".py").is_file()
        ):
            namespaces.append(directory.name)
        else:
            break
        if directory.parent == directory:
            break
        directory = directory.parent
    return ".".join(reversed(parts)) or path.stem


class DirectoryMatcher:
    """`glob_match(rel, patterns)` for every file of a tree, asked once per directory when it can.

    When every pattern ends in "/**" (everything below a directory, as the default
    syntax-paths do), all files of one directory get the same answer; any other pattern set is
    asked per file. (A match per file was ~1.3 us; a tree has ~3 files per directory.)
    """

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        by_directory = bool(patterns) and all(p.endswith("/**") and not p.startswith("!") for p in patterns)
        self._answers: dict[str, bool] | None = {} if by_directory else None

    def __call__(self, rel: str) -> bool:
        if self._answers is None:
            return glob_match(rel, self.patterns)
        directory = rel.rpartition("/")[0]
        found = self._answers.get(directory)
        if found is None:
            found = self._answers[directory] = glob_match(rel, self.patterns)
        return found


def glob_match(rel: str, patterns: tuple[str, ...]) -> bool:
    """Gitignore-style match of a root-relative path (used for per-path options)."""
    if not patterns:  # an option set to []: no need to import pathspec (~6 ms) to match nothing
        return False
    return _matcher(patterns)(rel)


@functools.lru_cache(maxsize=128)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """pathspec's `match_file`, or the same answer in one regex search per pattern.

    Without a negated pattern, a path matches when any pattern's regex does (the spec's
    last-match and directory-priority rules only choose between including and excluding).
    `match_file` spends ~3 us a path on that choice, and the scan asks once per file.
    """
    spec = pathspec.GitIgnoreSpec.from_lines(list(patterns))
    if any(pattern.include is False for pattern in spec.patterns):
        return spec.match_file
    regexes = tuple(pattern.regex for pattern in spec.patterns if pattern.include and pattern.regex is not None)
    normalize_file = pathspec.util.normalize_file

    def match(rel: str) -> bool:
        path = normalize_file(rel)
        return any(regex.search(path) for regex in regexes)

    return match
