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
module. A new text is written only when it keeps every comment of the file (but the suppression
comments DL902's fixes edit), parses, and re-linting the whole run with it finds every fixed
finding gone and nothing new (in the fixed files by code, context and offending text, without
positions, so findings that merely moved do not count as new, nor a DL901 on a comment a DL902
fix shortened; in the others, where nothing moves, by code and place; in both, a finding whose
message merely quotes the fixed code is the same finding reworded). Fixes that fail together are
sorted out in groups (`_Trials`) until each group passes or is one fix, which is refused, so
every fix that passes goes in the same round; another round only takes findings the previous
one's fixes made fixable, up to `MAX_ROUNDS` (said when it stops the fixing). Files libcst
cannot reproduce byte for byte, that hold a lone carriage return or a form feed, that are
read-only or have other hard links, are never rewritten. Two checked paths that are one file (a
symlink) are fixed under one name. Writes go to a temporary file in the same directory, then
`os.replace` (`declint.writing`). With no cache directory, the re-lints reuse what the first
lint read (`SessionMemory`); with one, a session over the files the last one read takes that
session's re-lints, applications and verdicts (`declint.fix_memo`).
"""

from __future__ import annotations

import codecs
import functools
import io
import math
import os
import tokenize
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING

from declint.cache import SessionMemory
from declint.discovery import module_name
from declint.engine import Engine
from declint.errors import OutputError, SourceError
from declint.fingerprint import identity
from declint.fix_memo import AppliedEntry, FixMemo
from declint.lazy import lazy_module
from declint.previews import encode, unified_diff, unrewritable
from declint.reporting.sources import SourceCache
from declint.rule import ProjectRule
from declint.source import SourceFile, decode_source, split_lines_keepends
from declint.suppressions import without_code_lists
from declint.types import Applicability, Finding, Fix, RunResult
from declint.writing import replace_atomically, replace_refusal

if TYPE_CHECKING:
    import libcst as cst

    from declint import fix_transforms as transforms
else:
    transforms = lazy_module("declint.fix_transforms")  # libcst: only when a fix is previewed or applied

MAX_ROUNDS = 10
PREPARED_CHARACTERS = 400_000  # the texts whose parsed trees a fix session keeps (~100 MB)


# ---- applying, with validation ----------------------------------------------------------------
@dataclass(frozen=True)
class FileChange:
    rel: str
    path: Path
    before: bytes
    after: bytes
    fixed: tuple[Finding, ...]

    def diff(self) -> bytes:
        """The change as `git apply` and `patch` read it: a unified diff of the file's bytes, its
        lines in the file's own encoding and its BOM on the first line (the headers in UTF-8).
        Lines diffed and written as UTF-8 text did not apply to a Latin-1 file or one with a BOM."""
        before, after = decode_source(self.before, self.rel), decode_source(self.after, self.rel)
        text = unified_diff(self.rel, _with_bom(self.before, before.text), _with_bom(self.after, after.text))
        lines = split_lines_keepends(text)
        headers = b"".join(line.encode("utf-8") for line in lines[:2])
        return headers + b"".join(_diff_line(line, before.encoding) for line in lines[2:])


def _with_bom(data: bytes, text: str) -> str:
    return "\ufeff" + text if data.startswith(codecs.BOM_UTF8) else text


def _diff_line(line: str, encoding: str) -> bytes:
    """A hunk header or "\\ No newline" marker as ASCII; a line of the file in its encoding."""
    return line.encode("utf-8" if line.startswith(("@@", "\\")) else encoding)


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
    stopped_after: int | None = None  # rounds, when the limit stopped fixing with fixes left (each in `not_fixed`)
    memo: tuple[int, int] = (0, 0)  # answers the fix memo held, and answers computed (`declint.fix_memo`)

    @property
    def fixed(self) -> int:
        return sum(len(change.fixed) for change in self.changes)


def wants(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def fix_run(
    engine: Engine, paths: Sequence[Path], *, unsafe: bool, write: bool, memory: SessionMemory | None = None
) -> FixOutcome:
    """Fix what can be fixed safely; write it only when `write` (else the outcome is a dry run).
    `memory`: where the runs keep their data when no cache directory serves (`SessionMemory`)."""
    session = _Session(engine, list(paths), memory if memory is not None else SessionMemory())
    first = session.lint({})
    state, result = session.rounds(first, unsafe)
    session.memo.save()
    changes = tuple(
        FileChange(rel, session.path(rel), session.original[rel], data, tuple(session.fixed[rel]))
        for rel, data in sorted(state.items())
        if data != session.original[rel]
    )
    if write:
        _write_all(changes)
    memo = (session.memo.found, session.memo.computed)
    return FixOutcome(changes, session.not_fixed(state, result), first, result, write, session.stopped_after, memo)


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
    def __init__(self, engine: Engine, paths: list[Path], memory: SessionMemory) -> None:
        self.engine = engine
        self.paths = paths
        self.original: dict[str, bytes] = {}
        self.fixed: dict[str, list[Finding]] = {}
        # Each refused finding by its place when refused, with what it is (`_what`) wherever the
        # fixes of later rounds move it: by place alone, a refused fix below a line an accepted
        # fix removed was proposed (and listed) again.
        self.given_up: dict[tuple[str, int, int, str, str], tuple[tuple[str, ...], NotFixed]] = {}
        self.refused: set[tuple[str, ...]] = set()
        self.stopped_after: int | None = None  # MAX_ROUNDS, when it ended the loop with fixes left
        # Checked paths that are one file (a symlink, a hard link): each name -> the one it is
        # fixed under, whose text the others mirror. Fixed under each name, the first write
        # made the second look like a concurrent edit.
        self.names: dict[str, str] = {}
        self._files: dict[tuple[int, int], str] = {}
        self.sources = self.sources_of({})  # the texts of this round
        self.memory = memory  # what the first lint read, for the re-lints when no cache directory serves
        # The last texts parsed with their positions, and whether each fixed text parses: sorting
        # out failed fixes applies and checks the same texts again and again (re-parsing
        # and re-resolving positions each time cost more than the re-lints, with a warm cache).
        self._prepared: OrderedDict[tuple[str, str], transforms.Prepared] = OrderedDict()
        # The re-lints, applications and verdicts of this session, and of the last one over the
        # same files (`declint.fix_memo`): in memory until the first lint names their state.
        self.memo = FixMemo(None, None, ())
        self._first_lint = True

    def path(self, rel: str) -> Path:
        return Path(rel) if os.path.isabs(rel) else self.engine.config.root / rel

    def lint(self, overrides: Mapping[str, bytes]) -> RunResult:
        # The engine's own overrides (`--stdin-filename`'s text) stand under every proposal.
        texts = {**self.engine.overrides, **self.mirrored(overrides)}
        engine = replace(self.engine, overrides=texts, progress=None, keep_suppressed=False, memory=self.memory)
        if not self._first_lint:

            def relint() -> tuple[RunResult, bool]:
                result = engine.run(self.paths)
                return result, not (engine.stats.worker_crashes or engine.stats.worker_timeouts)

            return self.memo.lint(texts, relint)
        result = engine.run(self.paths)
        # The state of the files the first lint read is the one every re-lint builds on.
        request = map(os.path.abspath, self.paths)
        self.memo = FixMemo.open(engine.config, engine.uses_cache, engine.state_token, request)
        self._first_lint = False
        return result

    def sources_of(self, state: Mapping[str, bytes]) -> SourceCache:
        return SourceCache(self.engine.config.root, {**self.engine.overrides, **self.mirrored(state)})

    def learn_names(self, rels: Iterable[str]) -> None:
        """Which names are one file: the first plain path (not through a symlink) of each is its own."""
        plain_first = sorted(set(rels) - self.names.keys(), key=lambda r: (not self._plain(r), r))
        for rel in plain_first:
            try:
                info = self.path(rel).stat()
            except OSError:
                info = None
            if info is None or rel in self.engine.overrides:
                self.names[rel] = rel
            else:
                self.names[rel] = self._files.setdefault((info.st_dev, info.st_ino), rel)

    def _plain(self, rel: str) -> bool:
        path = self.path(rel).absolute()
        return path.resolve() == path

    def mirrored(self, texts: Mapping[str, bytes]) -> dict[str, bytes]:
        """`texts` with each file's text under all its names."""
        mirrors = {name: texts[own] for name, own in self.names.items() if name != own and own in texts}
        return {**texts, **mirrors}

    def data(self, rel: str, state: Mapping[str, bytes]) -> bytes:
        if rel not in self.original:
            given = self.engine.overrides.get(rel)
            self.original[rel] = given if given is not None else self.path(rel).read_bytes()
        return state.get(rel, self.original[rel])

    def _what(self, finding: Finding) -> tuple[str, ...]:
        return (*identity(finding, self.sources), finding.message)

    def give_up(self, finding: Finding, reason: str) -> None:
        what = self._what(finding)
        self.refused.add(what)
        self.given_up[_key(finding)] = (what, NotFixed(finding, reason))

    def candidates(self, result: RunResult, unsafe: bool) -> list[Finding]:
        return [f for f in result.findings if wants(f.fix, unsafe) and self._what(f) not in self.refused]

    def not_fixed(self, state: Mapping[str, bytes], result: RunResult) -> tuple[NotFixed, ...]:
        """What was refused, each finding where the fixed texts (`result`) have it, as the report does."""
        self.sources = self.sources_of(state)
        now: dict[tuple[str, ...], list[Finding]] = {}
        for finding in sorted((f for f in result.findings if f.fix is not None), key=Finding.sort_key):
            now.setdefault(self._what(finding), []).append(finding)
        placed = []
        for what, left in sorted(self.given_up.values(), key=lambda item: item[1].finding.sort_key()):
            there = now.get(what)
            placed.append(replace(left, finding=there.pop(0)) if there else left)
        return tuple(sorted(placed, key=lambda n: n.finding.sort_key()))

    def rounds(self, result: RunResult, unsafe: bool) -> tuple[dict[str, bytes], RunResult]:
        """Apply fixes round by round: a round applies every fix that passes, so another round is
        needed only for a finding that the fixes of the previous one brought up."""
        state: dict[str, bytes] = {}
        for _ in range(MAX_ROUNDS):
            self.sources = self.sources_of(state)
            candidates = self.candidates(result, unsafe)
            self.learn_names(f.path for f in candidates)
            proposals = self._propose([f for f in candidates if self.names[f.path] == f.path], state)
            if not proposals:
                break
            accepted, result = self._validate(result, state, proposals)
            if not accepted:
                break
            for rel, (data, findings) in accepted.items():
                state[rel] = data
                self.fixed.setdefault(rel, []).extend(findings)
        else:
            self.sources = self.sources_of(state)
            for finding in self.candidates(result, unsafe):
                self.stopped_after = MAX_ROUNDS
                rounds = f"{MAX_ROUNDS} round{'s' if MAX_ROUNDS != 1 else ''}"
                self.give_up(finding, f"still fixable after {rounds} of fixes; run --fix again")
        for finding in self.candidates(result, unsafe):  # under another name of a fixed file, unlike it
            self.give_up(finding, f"the same file as {self.names[finding.path]}; fixed under that name only")
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
            reason = self._unrewritable(rel, data) or self._refusal(rel)
            if reason is not None:
                for finding in findings:
                    self.give_up(finding, f"{rel} {reason}")
                continue
            source = decode_source(data, rel)
            fixes = {finding.fix: finding for finding in findings if finding.fix is not None}
            text, applied = self._apply(source, fixes)
            if not applied:
                continue
            try:
                new = encode(source, text)
            except UnicodeEncodeError:
                for fix in applied:
                    self.give_up(fixes[fix], f"the fixed text cannot be encoded as {source.encoding}")
                continue
            proposals[rel] = (new, [fixes[fix] for fix in applied])
        return proposals

    def _unrewritable(self, rel: str, data: bytes) -> str | None:
        return self.memo.verdict(rel, data, lambda: unrewritable(data, rel, self._tree(rel, data)))

    def _tree(self, rel: str, data: bytes) -> cst.Module | None:
        """The text parsed, the tree `_apply` then fixes (one parse for both); None when it does not
        decode or parse (`unrewritable` says why)."""
        try:
            return self._prepare(decode_source(data, rel)).tree
        except SourceError:
            return None

    def _refusal(self, rel: str) -> str | None:
        """Why the file at `rel` must not be replaced (a text on stdin is never written)."""
        if rel in self.engine.overrides:
            return None
        refusal = replace_refusal(self.path(rel))
        return None if refusal is None else f"{refusal}; not rewritten"

    def _apply(self, source: SourceFile, fixes: Mapping[Fix, Finding]) -> tuple[str, list[Fix]]:
        """The text with the fixes applied in one pass, less those that would drop a comment of
        the user's, and the fixes that went in (the others are given up)."""
        module = module_name(self.path(source.rel), self.engine.config.root)
        order = list(fixes)
        text, applied, given_up = self.memo.applied(
            source.rel, module, source.data, order, lambda: self._applied(source, module, order)
        )
        for position, reason in given_up:
            self.give_up(fixes[order[position]], reason)
        return text, [order[position] for position in applied]

    def _applied(self, source: SourceFile, module: str, order: list[Fix]) -> AppliedEntry:
        """`_apply` computed with libcst: the fixed text, and the fixes (by position in `order`)
        that went in and those given up, with why, in the order they were."""
        position = {fix: index for index, fix in enumerate(order)}
        given_up: list[tuple[int, str]] = []

        def outcome(applied: transforms.Applied) -> AppliedEntry:
            return applied.text, tuple(position[fix] for fix in applied.applied), tuple(given_up)

        prepared = self._prepare(source)
        applied = transforms.apply_fixes(source, order, module, prepared)
        given_up += [(position[fix], "the fix does not apply to the code as it is") for fix in applied.not_applied]
        if not applied.applied or dropped_comment(source.text, applied) is None:
            return outcome(applied)
        kept = []
        for fix in applied.applied:  # rare: find the fixes that drop one, keep the others
            reason = dropped_comment(source.text, transforms.apply_fixes(source, [fix], module, prepared))
            if reason is None:
                kept.append(fix)
            else:
                given_up.append((position[fix], reason))
        applied = transforms.apply_fixes(source, kept, module, prepared)
        reason = dropped_comment(source.text, applied) if applied.applied else None
        if reason is None and not applied.not_applied:
            return outcome(applied)
        # only together do they drop one (or no longer apply): none goes in
        given_up += [(position[fix], reason or "the fix does not apply to the code as it is") for fix in kept]
        return source.text, (), tuple(given_up)

    def _prepare(self, source: SourceFile) -> transforms.Prepared:
        """The text parsed, positions resolved on first use (`apply_fixes` builds new nodes, never
        changes these: the previews of one file share them the same way)."""
        key = (source.rel, source.text)
        if key in self._prepared:
            self._prepared.move_to_end(key)
            return self._prepared[key]
        prepared = self._prepared[key] = transforms.prepare(transforms.parse(source))
        # A tree with its positions holds ~250 bytes a character: the least recently used go.
        while sum(len(text) for _, text in self._prepared) > PREPARED_CHARACTERS and len(self._prepared) > 1:
            self._prepared.popitem(last=False)
        return prepared

    def _parse_error(self, rel: str, data: bytes) -> str | None:
        """Why the fixed text `data` does not parse (None: it does)."""

        def error() -> str | None:
            try:
                transforms.parse(decode_source(data, rel))
            except SourceError as failure:
                return failure.message
            return None

        return self.memo.parse_error(rel, data, error)

    def _validate(
        self,
        before: RunResult,
        state: Mapping[str, bytes],
        proposals: Mapping[str, tuple[bytes, list[Finding]]],
    ) -> tuple[dict[str, tuple[bytes, list[Finding]]], RunResult]:
        """Accept all proposals when they pass together; else find the fixes that fail (`_Trials`),
        so that every fix that passes goes in this round (fix by fix, keeping only the first that
        passed, took a round per fix: 10 rounds left fixes for a second `--fix`)."""
        after, _ = self._check(before, state, proposals)
        if after is not None:
            return dict(proposals), after
        findings = sorted((f for _, group in proposals.values() for f in group), key=Finding.sort_key)
        trials = _Trials(self, before, state)
        trials.sort_out(findings)
        return trials.accepted

    def _check(
        self,
        before: RunResult,
        state: Mapping[str, bytes],
        proposals: Mapping[str, tuple[bytes, list[Finding]]],
    ) -> tuple[RunResult | None, str]:
        """The new result when the proposals parse, fix what they claim and add nothing; else why not."""
        overrides = self.mirrored({**state, **{rel: data for rel, (data, _) in proposals.items()}})
        for rel, (data, _) in proposals.items():
            error = self._parse_error(rel, data)
            if error is not None:
                return None, f"the fixed text does not parse ({error})"
        after = self.lint(overrides)
        old_sources = SourceCache(self.engine.config.root, self.mirrored({**self.original, **state}))
        new_sources = SourceCache(self.engine.config.root, {**self.original, **overrides})
        changed = frozenset(self.mirrored({rel: data for rel, (data, _) in proposals.items()}))
        project = frozenset(rule.CODE for rule in self.engine.rules if issubclass(rule, ProjectRule))
        known = [(_identity(f, old_sources, changed, project), f) for f in before.findings]
        allowed = Counter(key for key, _ in known)
        allowed.subtract(
            _identity(f, old_sources, changed, project) for _, findings in proposals.values() for f in findings
        )
        identified = [
            (_identity(f, new_sources, changed, project), f) for f in sorted(after.findings, key=Finding.sort_key)
        ]
        seen = Counter(key for key, _ in identified)
        excess = min((key for key, count in seen.items() if count > allowed[key]), default=None)
        if excess is not None:
            # Several findings may share a place (DL107 anchors every row missing from the docs
            # table on one line): name one whose message was not there before, if any.
            there = {finding.message for key, finding in known if key == excess}
            at_place = [finding for key, finding in identified if key == excess]
            new = next((finding for finding in at_place if finding.message not in there), at_place[0])
            return None, f"re-linting the fixed text reports {new.code} in {new.path}: {new.message}"
        return after, ""


def _identity(
    finding: Finding, sources: SourceCache, changed: frozenset[str], project: frozenset[str]
) -> tuple[str, str, str, str, str]:
    """What a finding is, to tell new ones from old. In a file the fixes change, where it may
    move: its identity (code, context, offending text), as baselines and fingerprints know it. In
    any other file, where nothing moves: its code and place. Not its wording (but a project
    rule's, below), which may follow the fixed code: DL107's message quotes the declaration a
    DL104 fix corrects, DL101's quotes it too from the same file, DL106's names a line a fix
    above it moves. The same problem reworded is not a new one; a fixed finding still there at
    the same place is not gone.

    In a changed file, the code lists of suppression comments are left out of the offending text:
    a DL902 fix edits that list, and the other findings about the comment (DL901, DL903), whose
    offending text is the rest of its line, are still the same findings, not new ones. A project
    rule's finding (`project`) in a changed file is its message: where it stands there is an anchor,
    not its subject (DL100 without a configuration stands on line 1 of the first file, whose fixes
    it refused; red-team 50)."""
    if finding.path not in changed:
        return (finding.code, finding.path, str(finding.line), str(finding.column), "")
    if finding.code in project:
        return (finding.code, finding.path, "", "", finding.message)
    code, path, context, text = identity(finding, sources)
    return (code, path, context, without_code_lists(text), "")


class _Trials:
    """The fixes of a round that failed together, sorted out by re-linting groups of them: each
    group is applied to the round's texts with the groups accepted before it, and is accepted
    when it passes; a single fix that fails is refused. Every re-lint is a whole run, so few are
    made: a group that fails is searched by halves, and when the first half passes, the second
    is split without being tried whole (it holds the failure); the next group's size follows the
    share of fixes refused so far (ln 2 over that share, as in group testing: one fix at a time
    once most fail). Halving alone took 2n - 1 re-lints when all n fixes fail (a shared
    Literal's member retyped makes every DL104 suggestion a new DL107): 23 for 12, now 15."""

    def __init__(self, session: _Session, before: RunResult, state: Mapping[str, bytes]) -> None:
        self.session = session
        self.before = before
        self.state = state
        self.accepted: tuple[dict[str, tuple[bytes, list[Finding]]], RunResult] = ({}, before)
        self.taken: list[Finding] = []
        self.passed = 0  # fixes tried that passed
        self.refused = 0

    def sort_out(self, findings: list[Finding]) -> None:
        queue, size = findings, max(1, len(findings) // 2)
        while queue:
            part, queue = queue[:size], queue[size:]
            passed = self.attempt(part)
            if not passed and len(part) > 1:
                queue = self.locate(part) + queue
            if self.refused:
                size = max(1, int(math.log(2) * (self.passed + self.refused) / self.refused))
            else:
                size = size * 2 if passed else max(1, size // 2)

    def attempt(self, part: list[Finding]) -> bool:
        """Try `part` on top of the fixes taken: True when it passes (or none of it applies any
        more), False when it fails; a single fix that fails is refused."""
        trial = self.session._propose([*self.taken, *part], self.state)
        applied = [f for _, group in trial.values() for f in group]
        if len(applied) == len(self.taken):  # none of `part` applies (each is given up)
            return True
        after, problem = self.session._check(self.before, self.state, trial)
        if after is not None:
            self.accepted, self.taken = (trial, after), applied
            self.passed += len(part)
            return True
        if len(part) == 1:
            self.session.give_up(part[0], problem)
            self.refused += 1
        return False

    def locate(self, part: list[Finding]) -> list[Finding]:
        """Sort out the halves of `part` (more than one fix), which fails: its first half is tried;
        when it passes, the failure is in the second half, searched in turn; else the first half
        is searched and the second, not yet tried, is returned to try later."""
        middle = len(part) // 2
        first, second = part[:middle], part[middle:]
        if not self.attempt(first):
            return (self.locate(first) if len(first) > 1 else []) + second
        if len(second) == 1:
            self.attempt(second)
            return []
        return self.locate(second)


def dropped_comment(before: str, applied: transforms.Applied) -> str | None:
    """Why the fixed text is refused when it lacks a comment of `before` (None: it has them all).

    A comment may only go, or change, where the purpose of a fix is to edit it: the suppression
    comments that `remove-suppression-code` fixes target. Rules and validation cannot see a lost
    `# type: ignore` or `# noqa` (no finding changes), so this is checked on the text itself."""
    editable = {(f.target.line, f.target.column) for f in applied.applied if f.kind == "remove-suppression-code"}
    try:
        old = _comments(before)
        new = Counter(text for _, text in _comments(applied.text))
    except (tokenize.TokenError, SyntaxError) as error:
        return f"the comments of the fixed text cannot be checked ({error})"
    for start, text in old:
        if start in editable:
            continue
        if new[text] == 0:
            return f"the fix would drop the comment {text!r}"
        new[text] -= 1
    return None


@functools.lru_cache(maxsize=16)  # the text before the fixes, tokenized once for all its trials
def _comments(text: str) -> tuple[tuple[tuple[int, int], str], ...]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return tuple((token.start, token.string) for token in tokens if token.type == tokenize.COMMENT)


def _key(finding: Finding) -> tuple[str, int, int, str, str]:
    return (finding.path, finding.line, finding.column, finding.code, finding.message)


def write_checked(path: Path, expected: bytes, data: bytes) -> None:
    """Replace `path` with `data` atomically, unless it changed since it was read (see `declint.writing`)."""
    target = path.resolve()  # a symlinked file: write its target, keep the link
    if target.read_bytes() != expected:
        raise SourceError("changed on disk while declint was fixing it; not written", path=str(path))
    refusal = replace_refusal(target)  # checked when the fix was proposed; again, as the file may have changed
    if refusal is not None:
        raise SourceError(f"{refusal}; not written", path=str(path))
    replace_atomically(target, data)
