"""Fingerprints: one stable identity per finding, shared by json, sarif, gitlab and the baseline.

A fingerprint hashes what a finding *is*, never where it currently sits: the rule code, the
root-relative path, the enclosing qualified name (`Finding.context`), the offending source text
with its whitespace collapsed, and an occurrence index that tells apart identical findings in
the same scope (counted in source order). Inserting or deleting lines above a finding, or
re-indenting it, keeps its fingerprint; editing the offending text or moving it to another
function changes it, which is what a reviewer wants.

The occurrence index is counted over every finding of a file, suppressed ones included, so that
suppressing one of two twins does not re-number the other.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from declint.reporting.sources import SourceCache, span_text
from declint.types import Finding

VERSION = "v1"
_LENGTH = 16  # hex digits (64 bits): unique enough per project, short enough to read in a baseline


def offending_text(finding: Finding, sources: SourceCache) -> str:
    """The finding's source text, whitespace-normalised; a zero-width span takes the rest of its line."""
    lines = sources.lines(finding.path)
    start, end = finding.span.start, finding.span.end
    text = span_text(lines, (start.line, start.column), (end.line, end.column))
    return " ".join(text.split())


def identity(finding: Finding, sources: SourceCache) -> tuple[str, str, str, str]:
    """What stays equal when a finding only moves: (code, path, context, offending text)."""
    return (finding.code, finding.path, finding.context, offending_text(finding, sources))


def fingerprints(findings: Iterable[Finding], sources: SourceCache) -> dict[Finding, str]:
    """Fingerprint of every finding; `findings` should hold all of a file's findings (see module doc)."""
    seen: Counter[tuple[str, str, str, str]] = Counter()
    result: dict[Finding, str] = {}
    for finding in sorted(set(findings), key=Finding.sort_key):
        key = identity(finding, sources)
        occurrence = seen[key]
        seen[key] += 1
        result[finding] = digest(*key, str(occurrence))
    return result


def digest(*parts: str) -> str:
    payload = "\0".join(("declint", VERSION, *parts)).encode("utf-8", "surrogatepass")
    return hashlib.sha256(payload).hexdigest()[:_LENGTH]
