"""The merge base of `check --diff-base`, checked as the working tree with the change put back.

`changed_lines.base_fingerprints` needs the findings of the same check on the merge base. Extracting
the merge base into a temporary tree and checking that cold took ~9 s on a 5,000-file tree, two
thirds of it writing the files (docs/benchmarks.md). Most files are the same at the merge base, so
here the base is the working tree with what the change touched as it was: a Python file modified
since, its text at the merge base in place of the file (as `check --fix` re-lints candidate texts);
one deleted or renamed since, its text at the merge base under its old name, named to the run
(the walk cannot find a file that is not on disk), its findings fingerprinted under the new name
as the extracted base's are; one the merge base does not have (added, untracked, or checked
though git ignores it), left out (`Engine.absent`). Every other file is read as the check of the
working tree read it, through the cache.

`base_view` returns None for a change that cannot be put back so, and the base is extracted as
before:

- a package marker (`__init__.py`) added, deleted or renamed, a module added or deleted beside a
  directory of its name, or one deleted from a directory that is gone: module names ask the disk
  for those;
- a symlink among the files put back or left out;
- a change to any other file the check reads (a .gitignore, the docs table, a JSON file: the
  serving schemas), or a serving schema that git does not track;
- a Python file over `max-file-size` at the merge base (its text would be checked, not refused);
- an `include` beyond `*.py`, or a path given outside the project root;
- a .gitattributes asking `git archive` to leave out or rewrite files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from declint.changed_lines import ChangedLines, GitCommand, git, within
from declint.config import Config
from declint.discovery import BUILTIN_EXCLUDES, INDEX_INCLUDE, SourcePath, discover, glob_match, json_files_under

_SYMLINK_MODE = "120000"
_LITERAL = "--literal-pathspecs"  # a path is a path: `modeling_[a].py` is no pattern
_PATHS_PER_ARCHIVE = 500  # a command line's worth of paths
_SCHEMA_RULE = "DL108"  # the rule that reads every serving schema under the root


@dataclass(frozen=True)
class BaseView:
    """The merge base as the working tree with the change put back (root-relative paths)."""

    texts: dict[str, bytes]  # Python files modified, deleted or renamed since: their text at the merge base
    absent: frozenset[str]  # Python files the merge base does not have
    paths: tuple[Path, ...]  # the paths given that exist at the merge base, and the files gone since


def base_view(config: Config, enabled: frozenset[str], paths: Sequence[Path], changed: ChangedLines) -> BaseView | None:
    """The merge base of `changed` as texts in place of files and files left out; None when the
    change holds something they cannot express (the module's docstring)."""
    with _Project(config, changed) as project:
        return _view(project, config, enabled, paths)


def _view(project: _Project, config: Config, enabled: frozenset[str], paths: Sequence[Path]) -> BaseView | None:
    given = [project.rel_of(path) for path in paths]
    if tuple(config.str_list("include")) != INDEX_INCLUDE or any(rel is None for rel in given):
        return None
    if not project.changes_expressible() or not project.inputs_tracked(_SCHEMA_RULE in enabled):
        return None
    if project.archive_attributes():
        return None
    gone = project.gone([rel for rel in given if rel is not None])
    found = _modified_and_new(project, paths)
    if gone is None or found is None:
        return None
    texts = project.texts([*gone, *found[0]], int(config.get("max-file-size")))
    if texts is None:
        return None
    at_base = [path for path, rel in zip(paths, given, strict=True) if rel is not None and project.exists(rel)]
    return BaseView(texts, found[1], (*at_base, *(config.root / rel for rel in gone)))


def _modified_and_new(project: _Project, paths: Sequence[Path]) -> tuple[list[str], frozenset[str]] | None:
    """(the Python files the check reads that the change modified, those the merge base does not
    have), or None when one of them cannot be put back."""
    modified: list[str] = []
    new: set[str] = set()
    for item in _python_files(project.config, paths):
        where = project.top(item.rel)
        if where not in project.tracked:
            if not _may_leave_out(item):
                return None
            new.add(item.rel)
        elif where in project.modified:
            if project.tracked[where] == _SYMLINK_MODE or os.path.islink(item.path):
                return None
            modified.append(item.rel)
    return modified, frozenset(new)


def _python_files(config: Config, paths: Sequence[Path]) -> Iterator[SourcePath]:
    """The files the check of the working tree reads: those under PATHS and the index's (one
    walk when PATHS are the roots, as `Engine` walks them)."""
    roots = [config.root / name for name in config.str_list("roots") if (config.root / name).exists()]
    yield from discover(paths, config).files
    if sorted(map(os.path.abspath, paths)) != sorted(map(os.path.abspath, roots)):
        yield from discover(roots, config, include=INDEX_INCLUDE).files


def _may_leave_out(item: SourcePath) -> bool:
    """Is leaving this file out all that its absence changes? Module names look on disk for
    package markers and for a module beside a directory of its name; a symlink is left to git."""
    if os.path.basename(item.rel) == "__init__.py" or os.path.islink(item.path):
        return False
    return not os.path.isdir(item.path.removesuffix(".py"))


class _Project:
    """The project root inside the repository, and what git says of it at the merge base."""

    def __init__(self, config: Config, changed: ChangedLines) -> None:
        self.config = config
        self.changed = changed
        self.prefix = PurePosixPath(Path(os.path.relpath(config.root, changed.toplevel)).as_posix())
        self.at_top = str(self.prefix) == "."  # the project root is the repository's
        self.docs_rel = str(config.get("docs-table"))  # "" when DL107 has no table
        self.docs = self.top(PurePosixPath(self.docs_rel).as_posix()) if self.docs_rel else None
        # git's answers that the view may need, asked at once: they run beside the listing.
        self._asked: list[GitCommand] = []
        try:
            self._untracked = self._ask(
                [_LITERAL, "ls-files", "-z", "--others", "--exclude-standard", "--", str(self.prefix)]
            )
            self._attributes = self._ask(
                ["grep", "-l", "-e", "export-ignore", "-e", "export-subst", changed.merge_base, "--",
                 ":(glob)**/.gitattributes"]
            )  # fmt: skip
            self.tracked = self._tracked()
        except BaseException:
            self.__exit__()
            raise
        self.modified = {c.new for c in changed.project if c.new is not None and c.old == c.new}

    def __enter__(self) -> _Project:
        return self

    def __exit__(self, *exc: object) -> None:
        for command in self._asked:
            command.close()

    def _ask(self, args: list[str]) -> GitCommand:
        command = GitCommand(args, self.changed.toplevel)
        self._asked.append(command)
        return command

    def top(self, rel: str) -> str:
        """A root-relative path (normalized, as the walk's are), relative to the repository's top
        level (as git names it)."""
        # (joined as strings: pathlib's join took ~30 ms for the 5,000 files of a tree)
        return rel if self.at_top else f"{self.prefix}/{rel}"

    def rel_of_top(self, where: str) -> str | None:
        """The root-relative path of a path git names (None: outside the project root)."""
        if self.at_top:
            return where
        return where.removeprefix(f"{self.prefix}/") if where.startswith(f"{self.prefix}/") else None

    def rel_of(self, path: Path) -> str | None:
        rel = os.path.relpath(os.path.abspath(path), self.config.root)
        return None if rel == ".." or rel.startswith(".." + os.sep) else Path(rel).as_posix()

    def exists(self, rel: str) -> bool:
        """Does a root-relative path exist at the merge base (the root always does)?"""
        if rel == ".":
            return True
        where = self.top(rel)
        return where in self.tracked or any(path.startswith(where + "/") for path in self.tracked)

    def _tracked(self) -> dict[str, str]:
        """Every file git has at the merge base under the project root -> its mode."""
        listing = git(
            [_LITERAL, "ls-tree", "-r", "-z", self.changed.merge_base, "--", str(self.prefix)], self.changed.toplevel
        )
        tracked: dict[str, str] = {}
        for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
            if entry:
                header, path = entry.split("\t", 1)
                tracked[path] = header.split(" ", 1)[0]
        return tracked

    def _may_be_read(self, path: str) -> bool:
        return path.endswith((".py", ".json")) or PurePosixPath(path).name == ".gitignore" or path == self.docs

    def changes_expressible(self) -> bool:
        """No file the check may read other than a Python one changed, deleted, renamed or added
        (tracked or not)."""
        for change in self.changed.project:
            if any(self._read_beside_python(p) for p in (change.old, change.new) if p is not None):
                return False
        names = self._untracked.output().decode("utf-8", "surrogateescape").split("\0")
        return not any(name and self._read_beside_python(name) for name in names)

    def _read_beside_python(self, path: str) -> bool:
        """A file other than a Python source that the check may read."""
        return not path.endswith(".py") and self._may_be_read(path)

    def gone(self, given: Sequence[str]) -> list[str] | None:
        """The Python files deleted or renamed since the merge base that its check reads
        (root-relative): those under the roots or PATHS, and those renamed into PATHS (which the
        extracted base checks by their old names too). None when one of them cannot be put back
        (the module's docstring)."""
        scopes = [*given, *(PurePosixPath(name).as_posix() for name in self.config.str_list("roots"))]
        found: list[str] = []
        for change in self.changed.project:
            if change.old is None or change.old == change.new or not change.old.endswith(".py"):
                continue
            rel = self.rel_of_top(change.old)
            if rel is None or not (rel in self.changed.renamed or within(rel, scopes)):
                continue  # not read by the check of the merge base: not extracted there either
            path = self.config.root / rel
            if path.name == "__init__.py" or self.tracked.get(change.old) == _SYMLINK_MODE:
                return None
            if not path.parent.is_dir() or path.with_suffix("").is_dir():
                return None
            found.append(rel)
        return found

    def inputs_tracked(self, with_schemas: bool) -> bool:
        """The docs table and (when DL108 reads them) the serving schemas are files git tracks,
        or absent in both: one that git ignores is not at the merge base, yet on disk."""
        if self.docs is not None and (self.docs in self.tracked) != (self.config.root / self.docs_rel).is_file():
            return False
        if not with_schemas:
            return True
        patterns = self.config.str_list("serving-schemas")
        pruned = frozenset(entry.rstrip("/") for entry in BUILTIN_EXCLUDES)
        for path in json_files_under(self.config.root, pruned):
            rel = Path(os.path.relpath(path, self.config.root)).as_posix()
            if glob_match(rel, patterns) and self.top(rel) not in self.tracked:
                return False
        return True

    def archive_attributes(self) -> bool:
        """Does a .gitattributes at the merge base ask `git archive` to leave files out or to
        rewrite them (`export-ignore`, `export-subst`)? The extracted base follows them."""
        return bool(self._attributes.output(none_found=1).strip())

    def texts(self, rels: Sequence[str], max_size: int) -> dict[str, bytes] | None:
        """The texts of `rels` at the merge base; None when one is missing from `git archive`'s
        output or over `max_size` (a text in place of a file is not refused for its size, as
        the file would be)."""
        blobs = self._blobs(sorted({self.top(rel) for rel in rels}))
        if any(self.top(rel) not in blobs for rel in rels):
            return None
        texts = {rel: blobs[self.top(rel)] for rel in rels}
        if max_size and any(len(text) > max_size for text in texts.values()):
            return None
        return texts

    def _blobs(self, paths: Sequence[str]) -> dict[str, bytes]:
        """The texts of `paths` at the merge base, as `git archive` writes them (the extracted
        base's texts: the same attributes and line-end conversions), read from memory."""
        import io
        import tarfile

        texts: dict[str, bytes] = {}
        for start in range(0, len(paths), _PATHS_PER_ARCHIVE):
            chunk = paths[start : start + _PATHS_PER_ARCHIVE]
            archive = git(
                [_LITERAL, "archive", "--format=tar", self.changed.merge_base, "--", *chunk], self.changed.toplevel
            )
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                for member in tar:
                    handle = tar.extractfile(member) if member.isfile() else None
                    if handle is not None:
                        texts[member.name] = handle.read()
        return texts
