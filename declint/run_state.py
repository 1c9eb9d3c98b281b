"""The state a run's workers need, and the records they send back.

Apart from the engine so that a run the snapshot answers, which starts no worker, does not
create these classes: a dataclass costs ~1.3 ms to create (the methods it generates are compiled
from source), and start-up is most of a warm pre-commit run. Forked workers inherit the state;
otherwise it is pickled once per pool.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from declint import prefilter as _prefilter
from declint.suppressions import MARKER

if TYPE_CHECKING:
    from declint.cache import Dep
    from declint.config import Config
    from declint.engine import _ScanItem, _Stat
    from declint.facts import FactOptions, ModuleFacts
    from declint.index import ProjectIndex
    from declint.prefilter import NeedleSet, ScanRecord
    from declint.previews import Memoized
    from declint.rule import FactRule, FileGate
    from declint.rule_set import GatedRule
    from declint.types import Finding, SuppressedFinding


def scan_needles(
    gates: tuple[tuple[str, tuple[bytes, ...]], ...],
    seeds: tuple[bytes, ...],
    rule_seeds: tuple[tuple[tuple[bytes, ...], type[FileGate]], ...],
) -> tuple[bytes, ...]:
    """Every needle a scan looks for: the rules', the index's, the Literal's and the marker. A
    file holding none of them is a placeholder that no rule reads (`ScanRecord.rules` empty)."""
    asked = [needle for needles, _ in rule_seeds for needle in needles]
    ruled = [needle for _, needles in gates for needle in needles]
    return tuple(sorted({*ruled, *seeds, *asked, _prefilter.LITERAL_NEEDLE, MARKER}))


@dataclass(frozen=True)
class PrepareState:
    config: Config
    gates: tuple[tuple[str, tuple[bytes, ...]], ...]  # (code, needles) of the enabled per-file rules
    seeds: tuple[bytes, ...]
    options: FactOptions
    max_size: int
    overrides: Mapping[str, bytes]
    # The scan's items, when the pool starts for them: a forked reader inherits them, and is sent
    # their positions only (pickling an item per file was ~3 us of the main process's time).
    scan_items: Sequence[_ScanItem] = ()
    # (needles, rule) of the rules that ask for files to index (`FileGate.index_needles`)
    rule_seeds: tuple[tuple[tuple[bytes, ...], type[FileGate]], ...] = ()

    def is_seed(self, found: frozenset[bytes], data: bytes) -> bool:
        """Is a file whose bytes hold `found` indexed in full?"""
        if not found.isdisjoint(self.seeds):
            return True
        return any(
            not found.isdisjoint(needles) and rule.indexes(data, self.config) for needles, rule in self.rule_seeds
        )

    @functools.cached_property
    def needle_codes(self) -> dict[bytes, tuple[str, ...]]:
        """Each distinct needle once, with the rules it opens (rules share needles and their cases)."""
        codes: dict[bytes, list[str]] = {}
        for code, needles in self.gates:
            for needle in needles:
                codes.setdefault(needle, []).append(code)
        return {needle: tuple(found) for needle, found in sorted(codes.items())}

    @functools.cached_property
    def needles(self) -> NeedleSet:
        return _prefilter.NeedleSet(scan_needles(self.gates, self.seeds, self.rule_seeds))


class Scanned(NamedTuple):
    record: ScanRecord
    facts: ModuleFacts | None
    stat: _Stat | None  # of the file read (None: an override, or it could not be read)


@dataclass(frozen=True)
class CheckState:
    config: Config
    file_rules: tuple[type[FileGate] | GatedRule, ...]  # `_Run.file_plan`
    fact_rules: tuple[type[FactRule], ...]
    known_codes: frozenset[str]
    enabled_codes: frozenset[str]
    index: ProjectIndex
    facts: Mapping[str, ModuleFacts]
    overrides: Mapping[str, bytes]
    max_size: int
    previews: bool  # compute the previews of the fixes found (a report will show them)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickled for a warmed or spawned worker (no fork: Windows) as its inputs, the index
        rebuilt there.

        `index` is `build_index(list(facts.values()), config)` wherever a run makes a CheckState,
        and the index `build_index` returns holds a closure that pickle cannot carry. The facts
        of a placeholder (most of a tree) travel as their module name, and the paths and those
        names as two joined strings: a tuple of a string pair per file took ~0.03 s to load on
        a 20k-file tree (a warmed worker loads it after importing libcst, while the run waits).
        """
        paths, modules, held = [], [], []
        for position, (rel, facts) in enumerate(self.facts.items()):
            paths.append(rel)
            if type(facts) is _prefilter.PlaceholderFacts and facts.path == rel:
                modules.append(facts.module)
            else:
                held.append((position, facts))
        entries = (_SEPARATOR.join(paths), _SEPARATOR.join(modules), tuple(held))
        fields = (self.config, self.file_rules, self.fact_rules, self.known_codes, self.enabled_codes)
        return _rebuilt_check_state, (fields, entries, self.overrides, self.max_size, self.previews)


# Between the joined paths and module names: no path or module name holds it (a path cannot
# hold a NUL on any platform declint runs on).
_SEPARATOR = "\0"


def _rebuilt_check_state(
    fields: tuple[
        Config, tuple[type[FileGate] | GatedRule, ...], tuple[type[FactRule], ...], frozenset[str], frozenset[str]
    ],
    entries: tuple[str, str, tuple[tuple[int, ModuleFacts], ...]],
    overrides: Mapping[str, bytes],
    max_size: int,
    previews: bool,
) -> CheckState:
    """`CheckState.__reduce__`'s inverse."""
    joined_paths, joined_modules, held = entries
    paths = joined_paths.split(_SEPARATOR) if joined_paths else []  # (a path is never empty)
    given = dict(held)
    # (counted, not tested for an empty string: one placeholder whose module name is empty joins
    # to one; `discovery.module_name` never gives one, a state built by hand may)
    modules = iter(joined_modules.split(_SEPARATOR) if len(paths) > len(given) else ())
    placeholder = _prefilter.PlaceholderFacts.at
    facts = {rel: given[n] if n in given else placeholder(next(modules), rel) for n, rel in enumerate(paths)}
    config, file_rules, fact_rules, known_codes, enabled_codes = fields
    index = _prefilter.build_index(list(facts.values()), config)
    return CheckState(
        config, file_rules, fact_rules, known_codes, enabled_codes, index, facts, overrides, max_size, previews
    )


class CheckItem(NamedTuple):
    rel: str
    path: str
    syntax_pending: bool  # in the syntax scope, and the scan did not parse it


class Checked(NamedTuple):
    digest: str
    findings: tuple[Finding, ...]
    suppressed: tuple[SuppressedFinding, ...]
    deps: tuple[Dep, ...] | None  # None: not cacheable
    touched: frozenset[str]  # placeholder modules the rules read
    final: bool = False  # does not depend on the index (a read error, a crash, a timeout)
    previews: tuple[tuple[str, Memoized], ...] = ()  # never cached: the preview memo keeps them
