"""Concise text: `path:line:col: CODE message`, columns 1-based like every editor expects."""

from __future__ import annotations

from collections import Counter

from declint.types import RunResult


def render(result: RunResult) -> str:
    lines = [f"{f.path}:{f.line}:{f.column + 1}: {f.code} {f.message}" for f in result.findings]
    count = len(result.findings)
    noun = "finding" if count == 1 else "findings"
    lines.append(
        f"Found {count} {noun} in {result.files_checked} files."
        if count
        else f"All clear: {result.files_checked} files checked."
    )
    return "\n".join(lines) + "\n"


def statistics(result: RunResult) -> str:
    counts = Counter((f.code, f.name) for f in result.findings)
    rows = [f"{count:>5}  {code}  {name}" for (code, name), count in sorted(counts.items())]
    return "\n".join(rows) + ("\n" if rows else "")
