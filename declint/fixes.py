"""Autofix: libcst transforms for the fixes rules attach to findings, and the safe way to apply them.

Kinds of fix (`Fix.kind`), each one transform, located by `Fix.target` (a node's start):
- `replace-string` (DL104): the string literal at `target` gets the body `args[0]`, keeping its
  prefix and quotes (`"trtllm"` -> `"TRTLLM"`, safe; `"FLASHINFR"` -> `"FLASHINFER"`, the
  "did you mean" of a typo, unsafe).
- `remove-suppression-code` (DL902, safe): the comment at `target` loses the code `args[0]`
  from the `# declint: ignore[...]` list that starts `args[1]` characters into it; with no code
  left that suppression and its reason go (the whole line, when nothing else is left of a comment
  that stood alone), but a comment before it or of another tool after it (`# noqa`) stays.
- `add-declaration-entries` (DL102, unsafe): the class whose name starts at `target` gets the
  entries `args[3:]` (Python source of dict entries) in its declaration `args[0]`, created when
  it has none; the marker `args[1]` is imported from `args[2]` when the module lacks it.

Applying (`check --fix`): fixes are grouped per file and applied in one pass over the parsed
module. A new text is written only when it parses, and re-linting the whole run with it finds
every fixed finding gone and nothing new (in the fixed files counted without positions, so
findings that merely moved do not count as new, nor a DL901 on a comment a DL902 fix shortened;
in the others, where nothing moves, by code and place, so a reworded one does not either). Files
libcst cannot reproduce byte for byte, or that hold a lone carriage return or a form feed, are
never rewritten. Writes go to a temporary file in the same directory, then `os.replace`. Rounds
repeat until nothing more applies, so a second `--fix` finds nothing to do.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING

from declint.discovery import module_name
from declint.engine import Engine
from declint.errors import OutputError, SourceError
from declint.fingerprint import identity
from declint.lazy import lazy_module
from declint.previews import encode, unified_diff, unrewritable
from declint.reporting.sources import SourceCache
from declint.source import decode_source
from declint.suppressions import without_code_lists
from declint.types import Applicability, Finding, Fix, RunResult

if TYPE_CHECKING:
    from declint import fix_transforms as transforms
else:
    transforms = lazy_module("declint.fix_transforms")  # libcst: only when a fix is previewed or applied

MAX_ROUNDS = 10


# ---- applying, with validation ----------------------------------------------------------------
@dataclass(frozen=True)
class FileChange:
    rel: str
    path: Path
    before: bytes
    after: bytes
    fixed: tuple[Finding, ...]

    def diff(self) -> str:
        before, after = decode_source(self.before, self.rel), decode_source(self.after, self.rel)
        return unified_diff(self.rel, before.text, after.text)


@dataclass(frozen=True)
class NotFixed:
    finding: Finding
    reason: str


@dataclass(frozen=True)
class FixOutcome:
    changes: tuple[FileChange, ...]
    not_fixed: tuple[NotFixed, ...]
    before: RunResult
    after: RunResult
    written: bool

    @property
    def fixed(self) -> int:
        return sum(len(change.fixed) for change in self.changes)


def wants(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def fix_run(engine: Engine, paths: Sequence[Path], *, unsafe: bool, write: bool) -> FixOutcome:
    """Fix what can be fixed safely; write it only when `write` (else the outcome is a dry run)."""
    session = _Session(engine, list(paths))
    first = session.lint({})
    state, result = session.rounds(first, unsafe)
    changes = tuple(
        FileChange(rel, session.path(rel), session.original[rel], data, tuple(session.fixed[rel]))
        for rel, data in sorted(state.items())
        if data != session.original[rel]
    )
    if write:
        _write_all(changes)
    not_fixed = tuple(sorted(session.given_up.values(), key=lambda n: n.finding.sort_key()))
    return FixOutcome(changes, not_fixed, first, result, write)


def _write_all(changes: Sequence[FileChange]) -> None:
    """Write every change that can be written; then one error naming those that could not (a
    file saved meanwhile keeps the user's bytes, and never stops the other files' fixes)."""
    failed: list[str] = []
    for change in changes:
        try:
            write_checked(change.path, change.before, change.after)
        except SourceError as error:
            failed.append(f"{change.rel} ({error.message.removesuffix('; not written')})")
        except OSError as error:
            failed.append(f"{change.rel} ({error.strerror or error})")
    if failed:
        written = len(changes) - len(failed)
        raise OutputError(f"wrote {written} of {len(changes)} fixed files; not written: {', '.join(failed)}")


class _Session:
    def __init__(self, engine: Engine, paths: list[Path]) -> None:
        self.engine = engine
        self.paths = paths
        self.original: dict[str, bytes] = {}
        self.fixed: dict[str, list[Finding]] = {}
        self.given_up: dict[tuple[str, int, int, str, str], NotFixed] = {}

    def path(self, rel: str) -> Path:
        return Path(rel) if os.path.isabs(rel) else self.engine.config.root / rel

    def lint(self, overrides: Mapping[str, bytes]) -> RunResult:
        # The engine's own overrides (`--stdin-filename`'s text) stand under every proposal.
        texts = {**self.engine.overrides, **overrides}
        return replace(self.engine, overrides=texts, progress=None, keep_suppressed=False).run(self.paths)

    def data(self, rel: str, state: Mapping[str, bytes]) -> bytes:
        if rel not in self.original:
            given = self.engine.overrides.get(rel)
            self.original[rel] = given if given is not None else self.path(rel).read_bytes()
        return state.get(rel, self.original[rel])

    def give_up(self, finding: Finding, reason: str) -> None:
        self.given_up[_key(finding)] = NotFixed(finding, reason)

    def rounds(self, result: RunResult, unsafe: bool) -> tuple[dict[str, bytes], RunResult]:
        state: dict[str, bytes] = {}
        for _ in range(MAX_ROUNDS):
            candidates = [f for f in result.findings if wants(f.fix, unsafe) and _key(f) not in self.given_up]
            proposals = self._propose(candidates, state)
            if not proposals:
                break
            accepted, result = self._validate(result, state, proposals)
            if not accepted:
                break
            for rel, (data, findings) in accepted.items():
                state[rel] = data
                self.fixed.setdefault(rel, []).extend(findings)
        return state, result

    def _propose(self, candidates: list[Finding], state: Mapping[str, bytes]) -> dict[str, tuple[bytes, list[Finding]]]:
        proposals: dict[str, tuple[bytes, list[Finding]]] = {}
        for rel, group in groupby(sorted(candidates, key=Finding.sort_key), key=lambda f: f.path):
            findings = list(group)
            try:
                data = self.data(rel, state)
            except OSError as error:
                for finding in findings:
                    self.give_up(finding, f"cannot read the file: {error.strerror or error}")
                continue
            reason = unrewritable(data, rel)
            if reason is not None:
                for finding in findings:
                    self.give_up(finding, f"{rel} {reason}")
                continue
            source = decode_source(data, rel)
            fixes = {finding.fix: finding for finding in findings if finding.fix is not None}
            applied = transforms.apply_fixes(source, list(fixes), module_name(self.path(rel)))
            for fix in applied.not_applied:
                self.give_up(fixes[fix], "the fix does not apply to the code as it is")
            if not applied.applied:
                continue
            try:
                new = encode(source, applied.text)
            except UnicodeEncodeError:
                for fix in applied.applied:
                    self.give_up(fixes[fix], f"the fixed text cannot be encoded as {source.encoding}")
                continue
            proposals[rel] = (new, [fixes[fix] for fix in applied.applied])
        return proposals

    def _validate(
        self,
        before: RunResult,
        state: Mapping[str, bytes],
        proposals: Mapping[str, tuple[bytes, list[Finding]]],
    ) -> tuple[dict[str, tuple[bytes, list[Finding]]], RunResult]:
        """Accept all proposals when they pass together, else file by file, else fix by fix.

        Fix by fix, only the first fix that passes is kept: the others' targets are positions in
        the text before it, so they wait for the next round, which re-lints and re-locates them.
        """
        after, problem = self._check(before, state, proposals)
        if after is not None:
            return dict(proposals), after
        accepted: dict[str, tuple[bytes, list[Finding]]] = {}
        current_state, current = dict(state), before
        for rel, (data, findings) in sorted(proposals.items()):
            after, problem = self._check(current, current_state, {rel: (data, findings)})
            if after is not None:
                current_state[rel] = data
                accepted[rel] = (data, findings)
                current = after
                continue
            if len(findings) == 1:
                self.give_up(findings[0], problem)
                continue
            for finding in findings:
                single = self._propose_one(finding, current_state)
                if single is None:
                    continue
                trial, problem = self._check(current, current_state, {rel: single})
                if trial is None:
                    self.give_up(finding, problem)
                    continue
                current_state[rel] = single[0]
                accepted[rel] = single
                current = trial
                break
        return accepted, current

    def _propose_one(self, finding: Finding, state: Mapping[str, bytes]) -> tuple[bytes, list[Finding]] | None:
        assert finding.fix is not None
        source = decode_source(self.data(finding.path, state), finding.path)
        applied = transforms.apply_fixes(source, [finding.fix], module_name(self.path(finding.path)))
        if not applied.applied:
            self.give_up(finding, "the fix does not apply to the code as it is")
            return None
        return encode(source, applied.text), [finding]

    def _check(
        self,
        before: RunResult,
        state: Mapping[str, bytes],
        proposals: Mapping[str, tuple[bytes, list[Finding]]],
    ) -> tuple[RunResult | None, str]:
        """The new result when the proposals parse, fix what they claim and add nothing; else why not."""
        overrides = {**state, **{rel: data for rel, (data, _) in proposals.items()}}
        for rel, (data, _) in proposals.items():
            try:
                transforms.parse(decode_source(data, rel))
            except SourceError as error:
                return None, f"the fixed text does not parse ({error.message})"
        after = self.lint(overrides)
        old_sources = SourceCache(self.engine.config.root, {**self.original, **state})
        new_sources = SourceCache(self.engine.config.root, {**self.original, **overrides})
        changed = frozenset(proposals)
        allowed = Counter(_identity(f, old_sources, changed) for f in before.findings)
        allowed.subtract(_identity(f, old_sources, changed) for _, findings in proposals.values() for f in findings)
        identified = [(_identity(f, new_sources, changed), f) for f in sorted(after.findings, key=Finding.sort_key)]
        seen = Counter(key for key, _ in identified)
        excess = min((key for key, count in seen.items() if count > allowed[key]), default=None)
        if excess is not None:
            new = next(finding for key, finding in identified if key == excess)
            return None, f"re-linting the fixed text reports {new.code} in {new.path}: {new.message}"
        return after, ""


def _identity(finding: Finding, sources: SourceCache, changed: frozenset[str]) -> tuple[str, str, str, str, str]:
    """What a finding is, to tell new ones from old: in a file the fixes change, its identity and
    message (it may move); in any other file, where nothing moves, its code and place. There a
    finding's wording may follow the fixed code (DL107's message quotes the declaration a DL104
    fix corrects: the same drift, not a new one).

    In a changed file, the code lists of suppression comments are left out of the offending text:
    a DL902 fix edits that list, and the other findings about the comment (DL901, DL903), whose
    offending text is the rest of its line, are still the same findings, not new ones."""
    if finding.path not in changed:
        return (finding.code, finding.path, str(finding.line), str(finding.column), "")
    code, path, context, text = identity(finding, sources)
    return (code, path, context, without_code_lists(text), finding.message)


def _key(finding: Finding) -> tuple[str, int, int, str, str]:
    return (finding.path, finding.line, finding.column, finding.code, finding.message)


def write_checked(path: Path, expected: bytes, data: bytes) -> None:
    """Replace `path` with `data` atomically, unless it changed since it was read."""
    target = path.resolve()  # a symlinked file: write its target, keep the link
    if target.read_bytes() != expected:
        raise SourceError("changed on disk while declint was fixing it; not written", path=str(path))
    mode = stat.S_IMODE(target.stat().st_mode)
    import tempfile  # here: writing is rare, and tempfile pulls in shutil and random

    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".declint")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
