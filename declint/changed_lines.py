"""Changed-lines mode (`check --diff-base REV`): which lines a change touched, and what it caused.

The change is everything between the merge base of REV and HEAD and the working tree
(uncommitted edits and untracked files included), as a review bot sees a pull request. A finding
is *annotated* when its span touches a changed line. A finding elsewhere is kept in the report's
summary when the change caused it (it is not among the findings of the same check run on the
merge base, compared by fingerprint: removing a member from the Literal breaks a file the change
never touched); one that was already there is only counted.

A file renamed since the merge base (found by git's rename detection, over the whole project so
that a file moved into the checked paths is found too) is compared with its old self: only the
lines the move changed are changed lines, and its findings are fingerprinted at the merge base
under its new name. A file moved without `git mv` or `git add` is untracked, hence new.

Git is run with a fixed environment and the options that decide its output pinned (`_PINNED`,
`_DIFF`), so the result does not depend on the user's git configuration; hunks are read by the
line counts of their headers, so no added line can pass for a header.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from declint.discovery import display_path
from declint.engine import Engine
from declint.errors import UsageError
from declint.fingerprint import fingerprints
from declint.reporting.sources import SourceCache
from declint.types import Finding, RunResult

_HUNK = re.compile(r"^@@ -(?P<old_start>\d+)(?:,(?P<old_count>\d+))? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")
_WHOLE_FILE = frozenset({0})  # marker: every line of the file is new
# Settings that would change what `git diff` prints, pinned whatever the user's configuration:
# paths unquoted but for control characters, quotes and backslashes; "a/" and "b/" before them
# (not diff.mnemonicPrefix's "c/" and "w/", nor diff.noprefix's nothing); no colour, no external
# diff or text conversion; renames found (a moved file is not new); no context between hunks.
_PINNED = ("-c", "core.quotePath=false", "-c", "diff.mnemonicPrefix=false", "-c", "diff.noprefix=false")
_DIFF = (
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--find-renames",
    "--unified=0",
    "--inter-hunk-context=0",
)


@dataclass(frozen=True)
class ChangedLines:
    rev: str
    merge_base: str
    toplevel: Path
    files: dict[str, frozenset[int]]  # root-relative path -> changed line numbers (_WHOLE_FILE: all)
    renamed: dict[str, str] = field(default_factory=dict)  # root-relative: at the merge base -> now
    # Every file of the diff over the project and PATHS, toplevel-relative (`declint.base_view`).
    project: tuple[FileDiff, ...] = ()

    def touches(self, finding: Finding) -> bool:
        lines = self.files.get(finding.path)
        if lines is None:
            return False
        if lines is _WHOLE_FILE:
            return True
        last = max(finding.span.end.line, finding.span.start.line)
        return any(line in lines for line in range(finding.span.start.line, last + 1))


def git(args: Sequence[str], cwd: Path, *, stdin: bytes | None = None, none_found: int | None = None) -> bytes:
    """git's output; `none_found`: an exit status that means "nothing found" (`git grep`'s 1)."""
    return GitCommand(args, cwd, stdin=stdin).output(none_found)


class GitCommand:
    """A git command started now, its output asked for later: several run side by side. One
    whose output is never asked for is `close`d."""

    def __init__(self, args: Sequence[str], cwd: Path, *, stdin: bytes | None = None) -> None:
        import subprocess  # here: only --diff-base runs git, and every run imports this module

        env = {**os.environ, "GIT_PAGER": "cat", "GIT_EXTERNAL_DIFF": "", "LC_ALL": "C"}
        env.pop("GIT_DIFF_OPTS", None)  # its --unified would win over the command line's
        # (named by its subcommand in errors: the first argument may be an option of git's)
        self.name = next((arg for arg in args if not arg.startswith("-")), "")
        self._stdin = stdin
        self._done = False
        try:
            self._process = subprocess.Popen(
                ["git", *args], cwd=cwd, env=env, stdin=None if stdin is None else subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip
        except FileNotFoundError:
            raise UsageError("--diff-base needs git, which is not on PATH") from None

    def output(self, none_found: int | None = None) -> bytes:
        """What it wrote, once it ended: b"" for the exit status `none_found`; UsageError for any
        other failure."""
        try:
            out, err = self._process.communicate(self._stdin)
        except BaseException:  # (Ctrl-C)
            self.close()
            raise
        self._done = True
        if self._process.returncode == none_found:
            return b""
        if self._process.returncode != 0:
            message = err.decode("utf-8", "replace").strip().splitlines()
            raise UsageError(f"git {self.name} failed: {message[-1] if message else self._process.returncode}")
        return out

    def close(self) -> None:
        """Stop it if it still runs, close its pipes and reap it (once its output was read: nothing)."""
        if self._done:
            return
        self._done = True
        if self._process.poll() is None:
            self._process.kill()
        with self._process:  # (its exit closes the pipes and waits)
            pass


def compute(root: Path, rev: str, paths: Sequence[Path]) -> ChangedLines:
    toplevel = Path(git(["rev-parse", "--show-toplevel"], root).decode().strip())
    try:
        git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], toplevel)
    except UsageError:
        raise UsageError(f'--diff-base: unknown revision "{rev}"') from None
    try:
        merge_base = git(["merge-base", rev, "HEAD"], toplevel).decode().strip()
    except UsageError:
        merge_base = git(["rev-parse", f"{rev}^{{commit}}"], toplevel).decode().strip()
    specs = [os.path.relpath(os.path.abspath(p), toplevel) for p in paths] or ["."]
    # The whole project is compared, so that a file moved into the checked paths is found as a rename.
    scope = sorted({os.path.relpath(root, toplevel), *specs})
    # (the untracked files listed while git diffs: each walks the working tree)
    listing = GitCommand(["ls-files", "--others", "--exclude-standard", "-z", "--", *specs], toplevel)
    try:
        diff = git([*_PINNED, *_DIFF, merge_base, "--", *scope], toplevel)
        untracked = listing.output()
    finally:
        listing.close()  # (nothing once its output was read)
    files: dict[str, frozenset[int]] = {}
    renamed: dict[str, str] = {}
    project = parse_diff(diff.decode("utf-8", "surrogateescape"))
    for change in project:
        if change.new is None or not within(change.new, specs):
            continue
        files[display_path(toplevel / change.new, root)] = change.lines
        if change.old is not None and change.old != change.new:
            renamed[display_path(toplevel / change.old, root)] = display_path(toplevel / change.new, root)
    for name in untracked.decode("utf-8", "surrogateescape").split("\0"):
        if name:
            files[display_path(toplevel / name, root)] = _WHOLE_FILE
    return ChangedLines(rev, merge_base, toplevel, files, renamed, tuple(project))


def within(path: str, specs: Sequence[str]) -> bool:
    """Is `path` one of `specs` or under one (".": everything)? Both relative, with `/`."""
    return any(spec == "." or path == spec or path.startswith(spec.rstrip("/") + "/") for spec in specs)


@dataclass(frozen=True)
class FileDiff:
    """One file of a diff: its path before and after (None: absent), the lines it added (after)."""

    old: str | None
    new: str | None
    lines: frozenset[int]


def parse_diff(text: str) -> list[FileDiff]:
    """The files of `git diff` output (with `_DIFF`'s options).

    A hunk's body is read by the line counts of its header, never by the look of its lines: an
    added line that reads `++ note` is `+++ note` in the diff, not a new file's header.
    """
    files: list[FileDiff] = []
    lines = text.split("\n")  # only git's line ends: a form feed or U+2028 in a line is part of it
    number = 0
    while number < len(lines):
        if not lines[number].startswith("diff --git "):
            number += 1
            continue
        old, new, added, number = _file_diff(lines, number + 1)
        files.append(FileDiff(old, new, frozenset(added)))
    return files


def _file_diff(lines: list[str], number: int) -> tuple[str | None, str | None, set[int], int]:
    """(old path, new path, added lines, where the next file starts) of the file whose header is above `number`."""
    old: str | None = None
    new: str | None = None
    added: set[int] = set()
    while number < len(lines) and not lines[number].startswith("diff --git "):
        line = lines[number]
        number += 1
        if line.startswith("rename from "):
            old = _unquote(line.removeprefix("rename from "))
        elif line.startswith("rename to "):
            new = _unquote(line.removeprefix("rename to "))
        elif line.startswith("--- "):
            old = _header_path(line.removeprefix("--- "), "a/")
        elif line.startswith("+++ "):
            new = _header_path(line.removeprefix("+++ "), "b/")
        elif match := _HUNK.match(line):
            number = _hunk(lines, number, match, added)
    return old, new, added, number


def _hunk(lines: list[str], number: int, header: re.Match[str], added: set[int]) -> int:
    """Read the body of the hunk whose header is `header`, adding its new lines; where it ends."""
    old_left = int(header["old_count"] or "1")
    new_left = int(header["count"] or "1")
    line_number = int(header["start"])
    while (old_left > 0 or new_left > 0) and number < len(lines):
        line = lines[number]
        number += 1
        if line.startswith("\\"):  # "\ No newline at end of file" belongs to the line above
            continue
        if line.startswith("+"):
            added.add(line_number)
            line_number, new_left = line_number + 1, new_left - 1
        elif line.startswith("-"):
            old_left -= 1
        else:  # context (empty when diff.suppressBlankEmpty is set)
            line_number, old_left, new_left = line_number + 1, old_left - 1, new_left - 1
    return number


def _header_path(name: str, prefix: str) -> str | None:
    """The path of a `---`/`+++` line: git ends it with a tab when the path has a space in it."""
    name = _unquote(name.removesuffix("\t"))
    if name == "/dev/null":
        return None
    return name.removeprefix(prefix)


def _unquote(name: str) -> str:
    """git's C-style quoting of unusual paths: "b/caf\\303\\251.py" -> b/café.py."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    raw = codecs.escape_decode(name[1:-1].encode("utf-8", "surrogateescape"))[0]
    assert isinstance(raw, bytes)
    return raw.decode("utf-8", "surrogateescape")


def base_fingerprints(
    engine: Engine, paths: Sequence[Path], changed: ChangedLines, also: Iterable[str] = ()
) -> frozenset[str]:
    """Fingerprints of the same check on the merge base (current configuration, base sources):
    the working tree with the change put back where it can be (`declint.base_view`), else the
    merge base extracted from git."""
    from declint.base_view import base_view
    from declint.engine import warm_check_worker

    # The check of the merge base checks each text put back again, and each file whose index
    # answers a Python file added or put back changes, in a worker that first imports libcst
    # (~0.25 s): forked now, it does so while git gives the texts and that check loads.
    python = any(_python(entry.old) for entry in changed.project) or any(map(_python, changed.files))
    warmed = warm_check_worker(engine) if python else None
    try:
        view = base_view(engine.config, engine.enabled_codes, paths, changed)
        if view is None:  # (the extracted base's check adopts the worker as well)
            return archived_base_fingerprints(replace(engine, warmed=warmed), paths, changed, also)
        if not view.paths:
            return frozenset()
        base = replace(
            engine, overrides=view.texts, absent=view.absent, progress=None, keep_suppressed=True, warmed=warmed
        )
        result = base.run(view.paths)
    finally:
        if warmed is not None:
            warmed.close()  # (a no-op once the run's pool adopted it)
    return _fingerprinted_as_now(result, changed, engine.config.root, view.texts)


def _python(path: str | None) -> bool:
    return path is not None and path.endswith(".py")


def _fingerprinted_as_now(
    result: RunResult, changed: ChangedLines, root: Path, texts: Mapping[str, bytes]
) -> frozenset[str]:
    """The fingerprints of the merge base's findings, those of a renamed file under its new name:
    a finding in a moved file was already there. `texts`: the files' texts at the merge base."""
    renamed = {old: new for old, new in changed.renamed.items() if not os.path.isabs(old)}
    everything = [*result.findings, *(s.finding for s in result.suppressed)]
    named = [replace(f, path=renamed[f.path]) if f.path in renamed else f for f in everything]
    moved = {new: texts[old] for old, new in renamed.items() if old in texts}
    return frozenset(fingerprints(named, SourceCache(root, {**texts, **moved})).values())


def archived_base_fingerprints(
    engine: Engine, paths: Sequence[Path], changed: ChangedLines, also: Iterable[str] = ()
) -> frozenset[str]:
    """`base_fingerprints` from the merge base extracted into a temporary tree, checked there.

    Only what the check reads is taken from git: the configured roots, PATHS, `also` (the
    root-relative files current findings point at, such as a docs table or a JSON schema) and the
    files renamed since. Those are checked under their old names and fingerprinted under their
    new ones: a finding in a moved file was already there.
    """
    root = engine.config.root
    prefix = Path(os.path.relpath(root, changed.toplevel))
    renamed = {old: new for old, new in changed.renamed.items() if not os.path.isabs(old)}
    wanted = {(prefix / r).as_posix() for r in engine.config.str_list("roots")}
    wanted |= {Path(os.path.relpath(os.path.abspath(p), changed.toplevel)).as_posix() for p in paths}
    wanted |= {(prefix / rel).as_posix() for rel in [*also, *renamed] if not os.path.isabs(rel)}
    specs = _existing(changed, sorted(wanted))
    import tarfile
    import tempfile

    with tempfile.TemporaryDirectory(prefix="declint-base-") as directory:
        tree = Path(directory, "tree")
        tree.mkdir()
        if specs:
            archive = Path(directory, "base.tar")
            git(["archive", "--format=tar", "-o", str(archive), changed.merge_base, "--", *specs], changed.toplevel)
            with tarfile.open(archive) as tar:
                tar.extractall(tree, filter="data")
        base_root = tree.resolve() / prefix
        base_root.mkdir(parents=True, exist_ok=True)
        moved = [base_root / os.path.relpath(os.path.abspath(p), root) for p in paths]
        existing = [p for p in [*moved, *(base_root / old for old in renamed)] if p.exists()]
        if not existing:
            return frozenset()
        config = replace(engine.config, root=base_root, source=None)
        result = replace(engine, config=config, overrides={}, progress=None, keep_suppressed=True).run(existing)
        texts = {old: (base_root / old).read_bytes() for old in renamed if (base_root / old).is_file()}
        return _fingerprinted_as_now(result, changed, base_root, texts)


def _existing(changed: ChangedLines, specs: Sequence[str]) -> list[str]:
    """The paths (files or directories) that exist at the merge base; one git process for all."""
    if "." in specs:
        return ["."]
    if not specs:
        return []
    query = "".join(f"{changed.merge_base}:{spec}\n" for spec in specs).encode("utf-8", "surrogateescape")
    answers = git(["cat-file", "--batch-check"], changed.toplevel, stdin=query).decode().splitlines()
    return [spec for spec, answer in zip(specs, answers, strict=True) if not answer.endswith(" missing")]
