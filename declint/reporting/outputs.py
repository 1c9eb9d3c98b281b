"""Where reports go: `--output-format FMT[:FILE]` (repeatable), the legacy `--format`/`--output`,
and GitHub's job summary. At most one report goes to stdout; files get their parent directories.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from declint.config import suggest
from declint.errors import OutputError, UsageError
from declint.reporting import RENDERERS
from declint.reporting.github_format import step_summary
from declint.reporting.model import Report
from declint.reporting.text_format import statistics

DEFAULT_FORMAT = "text"
TEXT_FORMATS = frozenset({"text", "full"})


@dataclass(frozen=True)
class Target:
    format: str
    path: Path | None  # None: stdout

    @classmethod
    def parse(cls, spec: str) -> Target:
        name, separator, file = spec.partition(":")
        name = name.strip().lower()
        if name not in RENDERERS:
            known = frozenset(RENDERERS)
            raise UsageError(f'unknown output format "{name}"{suggest(name, known)}; known: {", ".join(sorted(known))}')
        if separator and not file:
            raise UsageError(f'--output-format "{spec}": a file name must follow the colon')
        return cls(name, Path(file) if file else None)


def targets(
    output_format: str | None, output: Path | None, specs: Sequence[str], *, stdout_taken: str | None = None
) -> list[Target]:
    """The reports to write; `stdout_taken` (what stdout holds instead: "the diff" for --diff)
    drops the implicit stdout report."""
    chosen = [Target.parse(spec) for spec in specs]
    if output_format is not None or output is not None or not chosen:
        legacy = Target(output_format or DEFAULT_FORMAT, output)
        implicit = output_format is None and output is None
        if not (implicit and (stdout_taken or chosen)):
            chosen.insert(0, legacy)
    to_stdout = [t for t in chosen if t.path is None]
    if len(to_stdout) > 1:
        raise UsageError("only one report can go to stdout; give the others a file: --output-format FMT:FILE")
    if to_stdout and stdout_taken:
        raise UsageError(f"stdout holds {stdout_taken}; give each report a file: --output-format FMT:FILE")
    _refuse_shared_files(chosen)
    return chosen


def _refuse_shared_files(chosen: Sequence[Target]) -> None:
    """Two reports written to one file would leave only the last: refused, comparing the paths
    as the file system resolves them (`./r.out`, `r.out`, a symlink to it)."""
    seen: dict[str, Target] = {}
    for target in chosen:
        if target.path is None:
            continue
        resolved = os.path.realpath(target.path)
        earlier = seen.setdefault(resolved, target)
        if earlier is not target:
            raise UsageError(
                f"two reports ({earlier.format}, {target.format}) would be written to the same file {target.path}; "
                "give each report its own file"
            )


def emit(
    chosen: Sequence[Target],
    report: Report,
    *,
    show_statistics: bool,
    echo: Callable[[str], None],
    echo_err: Callable[[str], None],
) -> None:
    """Render each target; statistics follow the first text report (else they go to stderr)."""
    counts = statistics(report.findings) if show_statistics else ""
    placed = False
    for target in chosen:
        text = RENDERERS[target.format](report)
        if counts and target.format in TEXT_FORMATS and not placed:
            text += counts
            placed = True
        if target.path is None:
            echo(text)
        else:
            _write(target.path, text, f"the {target.format} report")
    if counts and not placed:
        echo_err(counts)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and any(t.format == "github" for t in chosen):
        try:
            with open(summary, "a", encoding="utf-8") as stream:
                stream.write(step_summary(report))
        except OSError as error:
            raise OutputError(f"cannot append the job summary: {error.strerror or error}", path=summary) from None


def _write(path: Path, text: str, what: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise OutputError(f"cannot write {what}: {error.strerror or error}", path=str(path)) from None
