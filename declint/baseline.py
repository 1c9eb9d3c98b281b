"""The baseline: known findings that do not fail a run, so that only new ones gate a pull request.

A baseline is a JSON file of entries keyed by fingerprint (see fingerprint.py), sorted, one entry
a line so that its diffs read well in review. `check --baseline FILE` moves the findings it lists
out of the report (SARIF can still show them, suppressed) and reports each entry that no longer
matches a finding as DL904, so the file only ever shrinks. `baseline write` rewrites the file
from the current findings, refusing to add entries unless told `--allow-grow`; entries about
files outside the run (or codes not selected) are kept as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from declint.errors import OutputError, UsageError
from declint.rules.stale_baseline_entry import StaleBaselineEntry
from declint.source import split_lines
from declint.types import Finding, Position, Span
from declint.writing import replace_atomically

SCHEMA_VERSION = 1
_FIELDS = ("fingerprint", "code", "path", "context", "message")


@dataclass(frozen=True, order=True)
class Entry:
    # Field order is the sort order of the file.
    path: str
    code: str
    context: str
    message: str
    fingerprint: str

    @classmethod
    def of(cls, finding: Finding, fingerprint: str) -> Entry:
        return cls(finding.path, finding.code, finding.context, finding.message, fingerprint)

    def to_json(self) -> dict[str, str]:
        return {key: getattr(self, key) for key in _FIELDS}


@dataclass(frozen=True)
class Baseline:
    entries: tuple[Entry, ...]
    text: str = ""

    @property
    def fingerprints(self) -> frozenset[str]:
        return frozenset(entry.fingerprint for entry in self.entries)

    def position_of(self, entry: Entry) -> Position:
        """Where the entry sits in the file (its line, at its opening brace), for DL904."""
        needle = f'"fingerprint": {json.dumps(entry.fingerprint)}'
        for number, line in enumerate(split_lines(self.text), 1):
            if needle in line:
                return Position(number, len(line) - len(line.lstrip()))
        return Position(1, 0)


def load(path: Path) -> Baseline:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"baseline not found: {path} (create it with `declint baseline write {path}`)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read baseline {path}: {error}") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}: baseline is not valid JSON: {error.msg}") from None
    return Baseline(_entries(document, path), text)


def _entries(document: Any, path: Path) -> tuple[Entry, ...]:
    if not isinstance(document, dict) or document.get("schema_version") != SCHEMA_VERSION:
        raise UsageError(f"{path}: not a declint baseline (schema_version {SCHEMA_VERSION} expected)")
    raw = document.get("entries")
    if not isinstance(raw, list):
        raise UsageError(f'{path}: a baseline needs an "entries" list')
    entries: list[Entry] = []
    for number, item in enumerate(raw):
        if not isinstance(item, dict) or not all(isinstance(item.get(key), str) for key in _FIELDS):
            raise UsageError(f"{path}: entry {number} needs string fields {', '.join(_FIELDS)}")
        entries.append(Entry(item["path"], item["code"], item["context"], item["message"], item["fingerprint"]))
    return tuple(sorted(set(entries)))


def dumps(entries: Iterable[Entry]) -> str:
    rows = [json.dumps(entry.to_json(), ensure_ascii=False) for entry in sorted(set(entries))]
    body = ",\n".join("    " + row for row in rows)
    return (
        "{\n"
        f'  "schema_version": {SCHEMA_VERSION},\n'
        '  "tool": "declint",\n'
        '  "entries": [' + ("\n" + body + "\n  " if rows else "") + "]\n"
        "}\n"
    )


def write(path: Path, entries: Iterable[Entry]) -> None:
    """Atomically, keeping the old file's mode and owner (see `declint.writing`)."""
    try:
        replace_atomically(path.resolve(), dumps(entries).encode("utf-8"))
    except OSError as error:
        raise OutputError(f"cannot write the baseline: {error.strerror or error}", path=str(path)) from None


@dataclass(frozen=True)
class Scope:
    """What a run could have reported: the files it checked, the directories it was given, its codes."""

    files: frozenset[str]
    directories: tuple[str, ...]  # root-relative; "." is the whole project
    enabled: Callable[[str], bool]

    def covers(self, entry: Entry) -> bool:
        if not self.enabled(entry.code):
            return False
        if entry.path in self.files:
            return True
        return any(d == "." or entry.path == d or entry.path.startswith(d + "/") for d in self.directories)


@dataclass(frozen=True)
class Filtered:
    reported: tuple[Finding, ...]
    matched: tuple[Finding, ...]
    stale: tuple[Finding, ...]


def apply(
    baseline: Baseline,
    findings: Sequence[Finding],
    fingerprints: Mapping[Finding, str],
    *,
    scope: Scope,
    baseline_rel: str,
) -> Filtered:
    """Split findings into new and baselined; stale entries (in this run's scope) become DL904."""
    known = baseline.fingerprints
    reported = tuple(f for f in findings if fingerprints[f] not in known)
    matched = tuple(f for f in findings if fingerprints[f] in known)
    current = {fingerprints[f] for f in findings}
    stale: list[Finding] = []
    if scope.enabled(StaleBaselineEntry.CODE):
        for entry in baseline.entries:
            if entry.fingerprint in current or not scope.covers(entry):
                continue
            stale.append(stale_finding(entry, baseline.position_of(entry), baseline_rel))
    return Filtered(reported, matched, tuple(stale))


def stale_finding(entry: Entry, position: Position, baseline_rel: str) -> Finding:
    where = f"{entry.path} ({entry.context})" if entry.context else entry.path
    return Finding(
        code=StaleBaselineEntry.CODE,
        name=StaleBaselineEntry.NAME,
        path=baseline_rel,
        span=Span(position, position),
        message=(
            f"stale baseline entry {entry.fingerprint}: no {entry.code} finding in {where} matches it any more; "
            "run `declint baseline write` to drop it"
        ),
        severity=StaleBaselineEntry.SEVERITY,
    )


@dataclass(frozen=True)
class Update:
    entries: tuple[Entry, ...]
    added: tuple[Entry, ...]
    dropped: tuple[Entry, ...]
    kept_outside: int


def update(old: Baseline | None, current: Iterable[Entry], *, scope: Scope) -> Update:
    """The new baseline: the current entries plus the old entries this run could not see."""
    fresh = set(current)
    previous = set(old.entries) if old is not None else set()
    outside = {entry for entry in previous if not scope.covers(entry)}
    known = {entry.fingerprint for entry in previous}
    fresh_prints = {entry.fingerprint for entry in fresh}
    added = tuple(sorted(entry for entry in fresh if entry.fingerprint not in known))
    dropped = tuple(sorted(e for e in previous - outside if e.fingerprint not in fresh_prints))
    return Update(tuple(sorted(fresh | outside)), added, dropped, len(outside))
