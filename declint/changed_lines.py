"""Changed-lines mode (`check --diff-base REV`): which lines a change touched, and what it caused.

The change is everything between the merge base of REV and HEAD and the working tree
(uncommitted edits and untracked files included), as a review bot sees a pull request. A finding
is *annotated* when its span touches a changed line. A finding elsewhere is kept in the report's
summary when the change caused it (it is not among the findings of the same check run on the
merge base, compared by fingerprint: removing a member from the Literal breaks a file the change
never touched); one that was already there is only counted.

Git is run with a fixed environment (no pager, no external diff, no colour, C-quoted paths
decoded), so the result does not depend on the user's git configuration.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from declint.discovery import display_path
from declint.engine import Engine
from declint.errors import UsageError
from declint.fingerprint import fingerprints
from declint.reporting.sources import SourceCache
from declint.types import Finding

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,(?P<count>\d+))? @@")
_WHOLE_FILE = frozenset({0})  # marker: every line of the file is new


@dataclass(frozen=True)
class ChangedLines:
    rev: str
    merge_base: str
    toplevel: Path
    files: dict[str, frozenset[int]]  # root-relative path -> changed line numbers (_WHOLE_FILE: all)

    def touches(self, finding: Finding) -> bool:
        lines = self.files.get(finding.path)
        if lines is None:
            return False
        if lines is _WHOLE_FILE:
            return True
        last = max(finding.span.end.line, finding.span.start.line)
        return any(line in lines for line in range(finding.span.start.line, last + 1))


def git(args: Sequence[str], cwd: Path, *, stdin: bytes | None = None) -> bytes:
    import subprocess  # here: only --diff-base runs git, and every run imports this module

    env = {**os.environ, "GIT_PAGER": "cat", "GIT_EXTERNAL_DIFF": "", "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, env=env, check=False)
    except FileNotFoundError:
        raise UsageError("--diff-base needs git, which is not on PATH") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done.stdout


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
    diff = git(
        ["-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff", "-U0", merge_base, "--", *specs],
        toplevel,
    )
    files: dict[str, frozenset[int]] = {}
    for git_path, lines in _parse_diff(diff.decode("utf-8", "surrogateescape")).items():
        files[display_path(toplevel / git_path, root)] = lines
    untracked = git(["ls-files", "--others", "--exclude-standard", "-z", "--", *specs], toplevel)
    for name in untracked.decode("utf-8", "surrogateescape").split("\0"):
        if name:
            files[display_path(toplevel / name, root)] = _WHOLE_FILE
    return ChangedLines(rev, merge_base, toplevel, files)


def _parse_diff(text: str) -> dict[str, frozenset[int]]:
    files: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in text.split("\n"):  # git ends each line with \n (str.splitlines splits inside them too)
        if line.startswith("+++ "):
            target = line[4:]
            if target == "/dev/null":
                current = None
                continue
            name = _unquote(target)
            current = files.setdefault(name[2:] if name.startswith("b/") else name, set())
        elif current is not None and (match := _HUNK.match(line)):
            start, count = int(match["start"]), int(match["count"] or "1")
            current.update(range(start, start + count))
    return {name: frozenset(lines) for name, lines in files.items()}


def _unquote(name: str) -> str:
    """git's C-style quoting of unusual paths: "b/caf\\303\\251.py" -> b/café.py."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    raw = codecs.escape_decode(name[1:-1].encode("latin-1", "backslashreplace"))[0]
    assert isinstance(raw, bytes)
    return raw.decode("utf-8", "surrogateescape")


def base_fingerprints(
    engine: Engine, paths: Sequence[Path], changed: ChangedLines, also: Iterable[str] = ()
) -> frozenset[str]:
    """Fingerprints of the same check on the merge base (current configuration, base sources).

    Only what the check reads is taken from git: the configured roots, PATHS, and `also` (the
    root-relative files current findings point at, such as a docs table or a JSON schema).
    """
    root = engine.config.root
    prefix = Path(os.path.relpath(root, changed.toplevel))
    wanted = {(prefix / r).as_posix() for r in engine.config.str_list("roots")}
    wanted |= {Path(os.path.relpath(os.path.abspath(p), changed.toplevel)).as_posix() for p in paths}
    wanted |= {(prefix / rel).as_posix() for rel in also if not os.path.isabs(rel)}
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
        existing = [p for p in moved if p.exists()]
        if not existing:
            return frozenset()
        config = replace(engine.config, root=base_root, source=None)
        result = replace(engine, config=config, overrides={}, progress=None, keep_suppressed=True).run(existing)
        everything = [*result.findings, *(s.finding for s in result.suppressed)]
        return frozenset(fingerprints(everything, SourceCache(base_root)).values())


def _existing(changed: ChangedLines, specs: Sequence[str]) -> list[str]:
    """The paths (files or directories) that exist at the merge base; one git process for all."""
    if "." in specs:
        return ["."]
    if not specs:
        return []
    query = "".join(f"{changed.merge_base}:{spec}\n" for spec in specs).encode("utf-8", "surrogateescape")
    answers = git(["cat-file", "--batch-check"], changed.toplevel, stdin=query).decode().splitlines()
    return [spec for spec, answer in zip(specs, answers, strict=True) if not answer.endswith(" missing")]
