"""What every output format renders: the findings of one run, already sorted, fingerprinted,
split by baseline and changed lines, with fix previews. Formats only read it; nothing here runs
the engine, so that rendering the same report twice gives the same bytes.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from declint.reporting.sources import SourceCache
from declint.types import Applicability, Finding, Position, RunResult, escape_controls

if TYPE_CHECKING:
    from declint.rule import RuleMeta

TOOL_NAME = "declint"


@dataclass(frozen=True)
class Edit:
    """Replace the text from `start` to `end` (exclusive) with `content`; lines 1-based, columns 0-based."""

    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class FixPreview:
    """A finding's fix as edits of the file on disk. `line_edits` cover whole lines (review-bot suggestions)."""

    applicability: Applicability
    description: str
    edits: tuple[Edit, ...]
    line_edits: tuple[Edit, ...]
    diff: str


@dataclass(frozen=True)
class Item:
    finding: Finding
    fingerprint: str
    fix: FixPreview | None = None
    # --diff-base: False for a finding outside the changed lines (summarised, never annotated).
    on_changed_lines: bool = True
    # Suppressed items only: why, and by what ("inSource": a comment; "external": the baseline).
    justification: str | None = None
    suppression_kind: str = "inSource"


@dataclass(frozen=True)
class DiffScope:
    """--diff-base: what the change is compared with, and what was left out of the report."""

    rev: str
    merge_base: str
    changed_files: int
    preexisting_elsewhere: int


@dataclass(frozen=True)
class BaselineInfo:
    path: str
    entries: int
    matched: int


@dataclass
class Report:
    items: tuple[Item, ...]
    files_checked: int
    files_indexed: int
    rule_codes: tuple[str, ...]
    rules: Sequence[type[RuleMeta]]
    root: Path
    sources: SourceCache
    version: str
    suppressed: tuple[Item, ...] = ()
    include_suppressed: bool = False
    # Where rule documentation lives (the URL of docs/rules.md); None: the repository-relative anchor.
    docs_url: str | None = None
    # Prepended to root-relative paths for GitHub, GitLab and JUnit (see `display_path`).
    workspace_prefix: str = ""
    # The working directory, resolved (reviewdog's paths start there); None: the project root.
    cwd: Path | None = None
    # Reported path -> the name as the file system gives it, where they differ (see RunResult).
    file_names: Mapping[str, str] = field(default_factory=dict)
    diff: DiffScope | None = None
    baseline: BaselineInfo | None = None
    fixed: int = 0
    # False after --fix/--diff: what is still fixable there was refused, so "run --fix" would not help.
    fix_hint: bool = True

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(item.finding for item in self.items)

    @property
    def annotated(self) -> tuple[Item, ...]:
        return tuple(item for item in self.items if item.on_changed_lines)

    @property
    def elsewhere(self) -> tuple[Item, ...]:
        return tuple(item for item in self.items if not item.on_changed_lines)

    def doc_url(self, code: str, name: str) -> str:
        anchor = f"{code.lower()}-{name}"
        return f"{self.docs_url}#{anchor}" if self.docs_url else f"docs/rules.md#{anchor}"

    def display_path(self, rel: str) -> str:
        """A path for consumers that read it from the repository root (GitHub annotations, GitLab
        Code Quality, JUnit views): from the repository that holds the project root, or outside
        one from the working directory when the project root lies inside it, else from the
        project root (`workspace_prefix`); never with `..`, which they cannot resolve."""
        return rel if rel.startswith("/") else self.workspace_prefix + rel

    def cwd_path(self, rel: str) -> str:
        """A path from the working directory, `..` included: reviewdog joins it to the
        directory it runs in (the same as declint's when the report is piped to it)."""
        if rel.startswith("/") or self.cwd is None or self.cwd == self.root:
            return rel
        return Path(os.path.relpath(self.root / rel, self.cwd)).as_posix()

    def file_name(self, rel: str) -> str:
        """The file system's name of the file reported as `rel` (for URIs)."""
        return self.file_names.get(rel, rel)

    def fixable(self) -> Counter[Applicability]:
        return Counter(item.fix.applicability for item in self.items if item.fix is not None)

    def summary_line(self) -> str:
        """The text formats' last line; the plain wording is kept from the first release."""
        count = len(self.items)
        noun = "finding" if count == 1 else "findings"
        files = f"{self.files_checked} file{'' if self.files_checked == 1 else 's'}"
        head = f"Found {count} {noun} in {files}" if count else f"All clear: {files} checked"
        notes: list[str] = []
        if self.diff is not None:
            on, off = len(self.annotated), len(self.elsewhere)
            rev = escape_controls(self.diff.rev)
            notes.append(f"{on} on the lines changed since {rev}, {off} elsewhere caused by the change")
            if self.diff.preexisting_elsewhere:
                notes.append(f"{self.diff.preexisting_elsewhere} older ones outside the changed lines not shown")
        if self.baseline is not None and self.baseline.matched:
            notes.append(f"{self.baseline.matched} more in the baseline {escape_controls(self.baseline.path)}")
        if self.fixed:
            notes.append(f"{self.fixed} fixed")
        return head + ("" if not notes else " (" + "; ".join(notes) + ")") + "."


def plain_report(result: RunResult, root: Path | None = None) -> Report:
    """A report of bare findings (no fingerprints, fixes, baseline): for callers holding a RunResult only."""
    from declint import __version__

    base = root if root is not None else Path.cwd()
    return Report(
        items=tuple(Item(finding, "") for finding in result.findings),
        files_checked=result.files_checked,
        files_indexed=result.files_indexed,
        rule_codes=result.rule_codes,
        rules=(),
        file_names=dict(result.file_names),
        root=base,
        sources=SourceCache(base),
        version=__version__,
    )
