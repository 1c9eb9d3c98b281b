"""`declint check` beyond the engine: fixes, fingerprints, baseline, changed lines, one Report.

Order matters and is fixed: fixes are applied first (so the report describes the files as they
are afterwards), then every finding is fingerprinted (suppressed ones too, see fingerprint.py),
then the baseline moves known findings out and adds DL904 for its stale entries, then
--diff-base splits what is left into annotated findings, findings the change caused elsewhere,
and older ones elsewhere (counted, not reported).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from declint import __version__
from declint.cache import Cache, SessionMemory
from declint.discovery import discover, display_path
from declint.engine import Engine, RunStats
from declint.fingerprint import fingerprints
from declint.previews import PreviewMemo, previews
from declint.reporting.model import BaselineInfo, DiffScope, FixPreview, Item, Report
from declint.reporting.sources import SourceCache
from declint.types import Finding

if TYPE_CHECKING:  # imported where used: a plain check (a pre-commit run) needs none of them
    from declint import baseline as baseline_file
    from declint.fixes import FixOutcome
    from declint.rule import RuleMeta


@dataclass(frozen=True)
class CheckRequest:
    paths: tuple[Path, ...]
    baseline: Path | None = None
    diff_base: str | None = None
    include_suppressed: bool = False
    docs_url: str | None = None
    fix: bool = False
    unsafe_fixes: bool = False
    diff_only: bool = False  # --diff: compute the fixes, write nothing
    cwd: Path = field(default_factory=Path.cwd)


@dataclass(frozen=True)
class CheckOutcome:
    report: Report
    fixes: FixOutcome | None = None
    stats: RunStats | None = None  # of the run that produced the report (`--timings`)
    # rel -> the text the report describes in place of the file (`--stdin-filename`'s, as --fix left it)
    texts: Mapping[str, bytes] = field(default_factory=dict)


def run(engine: Engine, request: CheckRequest, rules: Sequence[type[RuleMeta]]) -> CheckOutcome:
    paths = list(request.paths)
    outcome = None
    memory = None
    if request.fix or request.diff_only:
        from declint.fixes import fix_run

        # Without a cache directory, the runs after the fixes' first lint reuse what it read.
        memory = SessionMemory()
        # A text that is not the file's (`--stdin-filename`) is fixed in memory, never written.
        outcome = fix_run(
            engine, paths, unsafe=request.unsafe_fixes, write=not request.diff_only and not engine.overrides,
            memory=memory,
        )  # fmt: skip
    if request.diff_base is not None and memory is None and not engine.uses_cache:
        memory = SessionMemory()  # the check of the merge base (`declint.base_view`) reads what this one read
    checker = replace(engine, keep_suppressed=True, overrides=_after_fixes(engine, request, outcome), memory=memory)
    result = checker.run(paths)
    root = engine.config.root
    sources = SourceCache(root, checker.overrides)  # a file checked from stdin is shown as it was checked
    prints = fingerprints([*result.findings, *(s.finding for s in result.suppressed)], sources)
    findings = list(result.findings)
    suppressed = [Item(s.finding, prints[s.finding], justification=s.justification) for s in result.suppressed]

    info = None
    if request.baseline is not None:
        findings, matched, info = _apply_baseline(engine, request, findings, prints, sources)
        suppressed += [
            Item(f, prints[f], justification=f"listed in the baseline {info.path}", suppression_kind="external")
            for f in matched
        ]

    scope = None
    on_diff: dict[Finding, bool] = {}
    if request.diff_base is not None:
        # The check of the merge base sees the disk as the check just made saw it (`Engine.vouched`).
        base = replace(engine, memory=memory, vouched=checker.state_token)
        findings, on_diff, scope = _apply_diff(base, request, findings, prints)

    fixable = _previews(checker, findings, sources)  # with the previews its workers computed
    items = tuple(
        Item(f, prints[f], fixable.get(f), on_changed_lines=on_diff.get(f, True))
        for f in sorted(findings, key=Finding.sort_key)
    )
    report = Report(
        items=items,
        files_checked=result.files_checked,
        files_indexed=result.files_indexed,
        rule_codes=result.rule_codes,
        rules=rules,
        root=root,
        sources=sources,
        version=__version__,
        suppressed=tuple(sorted(suppressed, key=lambda item: item.finding.sort_key())),
        include_suppressed=request.include_suppressed,
        docs_url=request.docs_url,
        workspace_prefix=workspace_prefix(root, request.cwd),
        cwd=request.cwd.resolve(),
        file_names=dict(result.file_names),
        diff=scope,
        baseline=info,
        fixed=outcome.fixed if outcome is not None and not request.diff_only else 0,
        fix_hint=outcome is None and not engine.overrides,  # --fix cannot take stdin's text
    )
    return CheckOutcome(report, outcome, checker.stats, checker.overrides)


def _after_fixes(engine: Engine, request: CheckRequest, outcome: FixOutcome | None) -> dict[str, bytes]:
    """The texts the report describes: the overridden ones (`--stdin-filename`) as --fix left
    them, since they are never written (files on disk were, and are read again)."""
    if outcome is None or request.diff_only or not engine.overrides:
        return dict(engine.overrides)
    return {**engine.overrides, **{change.rel: change.after for change in outcome.changes}}


def workspace_prefix(root: Path, cwd: Path) -> str:
    """The project root as seen from the repository root, where GitHub and GitLab read paths
    from: the nearest directory at or above the project root holding `.git` (a directory, or the
    file of a worktree or submodule). Outside a repository, as seen from the working directory.
    "" when they are the same or unrelated (never `..`, which those readers cannot resolve)."""
    relative = os.path.relpath(root, _repository_root(root) or cwd.resolve())
    if relative == "." or relative == ".." or relative.startswith(".." + os.sep):
        return ""
    return Path(relative).as_posix() + "/"


def _repository_root(root: Path) -> Path | None:
    # Looked up on disk, not asked of git: git may be missing, and a report runs no programs.
    for directory in (root, *root.parents):
        if _is_repository(directory / ".git"):
            return directory
    return None


def _is_repository(marker: Path) -> bool:
    """What git takes for a repository: a `.git` directory holding HEAD, or a `.git` file (a
    worktree's or submodule's `gitdir: ...` link); not an empty directory, an empty file or a
    broken link, which git passes over. Asked with stats alone: nothing outside the project is
    opened."""
    try:
        if marker.is_dir():
            return (marker / "HEAD").exists()
        return marker.is_file() and marker.stat().st_size > 0
    except OSError:
        return False


def scope_of(engine: Engine, paths: Sequence[Path]) -> baseline_file.Scope:
    from declint import baseline as baseline_file

    root = engine.config.root
    files = frozenset(item.rel for item in discover(paths, engine.config).files)
    directories = tuple(display_path(p, root) for p in paths if Path(p).is_dir())
    return baseline_file.Scope(files, directories, engine.selection.enabled)


def _apply_baseline(
    engine: Engine,
    request: CheckRequest,
    findings: list[Finding],
    prints: dict[Finding, str],
    sources: SourceCache,
) -> tuple[list[Finding], tuple[Finding, ...], BaselineInfo]:
    from declint import baseline as baseline_file

    assert request.baseline is not None
    known = baseline_file.load(request.baseline)
    rel = display_path(request.baseline, engine.config.root)
    scope = scope_of(engine, list(request.paths))
    scope = replace(scope, files=scope.files | {f.path for f in findings})
    split = baseline_file.apply(known, findings, prints, scope=scope, baseline_rel=rel)
    prints.update(fingerprints(split.stale, sources))
    info = BaselineInfo(rel, len(known.entries), len(split.matched))
    return [*split.reported, *split.stale], split.matched, info


def _apply_diff(
    engine: Engine, request: CheckRequest, findings: list[Finding], prints: dict[Finding, str]
) -> tuple[list[Finding], dict[Finding, bool], DiffScope]:
    from declint.changed_lines import base_fingerprints, compute

    assert request.diff_base is not None
    changed = compute(engine.config.root, request.diff_base, list(request.paths))
    older = base_fingerprints(engine, list(request.paths), changed, also={f.path for f in findings})
    kept: list[Finding] = []
    on_diff: dict[Finding, bool] = {}
    preexisting = 0
    for finding in findings:
        touches = changed.touches(finding)
        if not touches and prints[finding] in older:
            preexisting += 1
            continue
        kept.append(finding)
        on_diff[finding] = touches
    return kept, on_diff, DiffScope(request.diff_base, changed.merge_base, len(changed.files), preexisting)


def _previews(engine: Engine, findings: list[Finding], sources: SourceCache) -> dict[Finding, FixPreview]:
    """Fix previews, reusing those of earlier runs when the cache is on."""
    store = Cache.for_config(engine.config) if engine.uses_cache else None
    memo = PreviewMemo(store.load_previews() if store is not None else None)
    memo.seed(engine.previews)
    fixable = previews(findings, sources, memo)
    if store is not None and memo.changed and not engine.overrides:  # --stdin-filename writes nothing
        store.save_previews(memo.to_store())
    return fixable
