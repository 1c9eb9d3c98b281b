"""`declint baseline write FILE [PATHS]`: the baseline from the current findings; it never grows
unless asked (`--allow-grow`), so a baseline can only be paid down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click

from declint import baseline as baseline_file
from declint.engine import Engine
from declint.fingerprint import fingerprints
from declint.reporting.pipeline import scope_of
from declint.reporting.sources import SourceCache
from declint.types import escape_controls

CLEAN, GREW = 0, 1


def write_baseline(engine: Engine, file: Path, paths: Sequence[Path], *, allow_grow: bool) -> int:
    result = replace(engine, keep_suppressed=True).run(paths)
    prints = fingerprints([*result.findings, *(s.finding for s in result.suppressed)], SourceCache(engine.config.root))
    current = [baseline_file.Entry.of(finding, prints[finding]) for finding in result.findings]
    old = baseline_file.load(file) if _holds_anything(file) else None
    scope = scope_of(engine, paths)
    scope = replace(scope, files=scope.files | {finding.path for finding in result.findings})
    update = baseline_file.update(old, current, scope=scope)
    if old is not None and update.added and not allow_grow:
        count = len(update.added)
        click.echo(
            f"declint: error: {file} would grow by {_entries(count)}; "
            "fix these findings, or accept them with --allow-grow:",
            err=True,
        )
        for entry in update.added:
            click.echo(f"  {escape_controls(entry.path)}: {entry.code} {escape_controls(entry.message)}", err=True)
        return GREW
    baseline_file.write(file, update.entries)
    # "No longer found": fixed, suppressed in the source since, or moved; the baseline cannot tell.
    click.echo(
        f"declint: wrote {_entries(len(update.entries))} to {file} ({len(update.added)} added, "
        f"{len(update.dropped)} no longer found, {update.kept_outside} kept from outside this run)",
        err=True,
    )
    return CLEAN


def _entries(count: int) -> str:
    return f"{count} entr{'ies' if count != 1 else 'y'}"


def _holds_anything(file: Path) -> bool:
    """An existing baseline to update; an empty file (`touch`ed for the first write) is none."""
    try:
        return bool(file.read_bytes().strip())
    except FileNotFoundError:
        return False
