"""Rule classes named by the registry, imported on first use.

A run the snapshot answers needs the rules' codes only (for the run key and the selection). Their
modules import the facts, the index, the prefilter and the name resolver: about a third of the
start-up of a warm pre-commit run. `LazyRules` holds each rule's code, module, class name and
kind, and imports a rule module the first time its class is asked for; the codes need no import.
A run that patches the snapshot after an edit runs the per-file rules only (`rules_of_kind`), so
the project rules' and the engine codes' modules (and `json`, which DL108 imports) stay unimported:
a few milliseconds of the ~40 such an edit adds (docs/benchmarks.md, 2026-12-05). Of those, the
rules whose entries name their needles (`RuleEntry.needles`) are imported only by a check of a
file holding one (`GatedRule`): an edited file seldom holds DL103's, DL104's or DL106's.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, TypeVar, cast, overload

if TYPE_CHECKING:
    from declint.config import Config
    from declint.rule import RuleMeta

_R = TypeVar("_R", bound="RuleMeta")


# What a rule class subclasses, by kind (`declint.rule`'s bases, named: this module imports none).
KINDS = {"file": "FileGate", "fact": "FactRule", "project": "ProjectRule", "engine": "EngineCode"}
_KIND_OF_BASE = {base: kind for kind, base in KINDS.items()}


class RuleEntry(NamedTuple):
    code: str
    module: str  # absolute module name
    name: str  # the class in it
    kind: str  # a key of KINDS: the class's base, checked when it is imported
    # A per-file rule that can fire only on a file holding one of these needles, whatever the
    # index holds: the rule's own `needles`, without importing it (see `declint.needles`)
    needles: Callable[[Config], tuple[bytes, ...]] | None = None


class GatedRule(NamedTuple):
    """A per-file rule not imported yet, that can fire only on a file holding one of `needles`:
    a check imports it for the first such file (`load`), and skips it for the others."""

    entry: RuleEntry
    needles: tuple[bytes, ...]

    def load(self) -> type[RuleMeta]:
        return _load(self.entry)


class LazyRules(Sequence["type[RuleMeta]"]):
    """The registry's rule classes, in its order."""

    def __init__(self, entries: Sequence[RuleEntry]) -> None:
        self.entries = tuple(entries)
        self.codes = tuple(entry.code for entry in self.entries)
        self._loaded: list[type[RuleMeta] | None] = [None] * len(self.entries)

    def _class(self, position: int) -> type[RuleMeta]:
        rule = self._loaded[position]
        if rule is None:
            rule = self._loaded[position] = _load(self.entries[position])
        return rule

    def _classes(self) -> tuple[type[RuleMeta], ...]:
        return tuple(self._class(position) for position in range(len(self.entries)))

    def of_kind(self, kind: str) -> tuple[type[RuleMeta], ...]:
        """The classes of the entries of `kind`, in registry order; no other rule module is imported."""
        return tuple(self._class(position) for position, entry in enumerate(self.entries) if entry.kind == kind)

    def gated(
        self, kind: str, enabled: Callable[[str], bool], config: Config
    ) -> tuple[type[RuleMeta] | GatedRule, ...]:
        """The enabled entries of `kind`, in registry order: each that names its needles as a
        `GatedRule` (not imported), every other as its class."""
        return tuple(
            self._class(position) if entry.needles is None else GatedRule(entry, entry.needles(config))
            for position, entry in enumerate(self.entries)
            if entry.kind == kind and enabled(entry.code)
        )

    @overload
    def __getitem__(self, index: int) -> type[RuleMeta]: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[type[RuleMeta]]: ...
    def __getitem__(self, index: int | slice) -> type[RuleMeta] | Sequence[type[RuleMeta]]:
        return self._classes()[index]

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[type[RuleMeta]]:
        return iter(self._classes())

    def by_code(self) -> LazyRulesByCode:
        return LazyRulesByCode(self)


class LazyRulesByCode(Mapping[str, "type[RuleMeta]"]):
    """code -> rule class; its keys need no import."""

    def __init__(self, rules: LazyRules) -> None:
        self._rules = rules
        self._positions = {code: position for position, code in enumerate(rules.codes)}

    def __getitem__(self, code: str) -> type[RuleMeta]:
        return self._rules._class(self._positions[code])

    def __iter__(self) -> Iterator[str]:
        return iter(self._rules.codes)

    def __len__(self) -> int:
        return len(self._rules.codes)

    def __contains__(self, code: object) -> bool:
        return code in self._positions


def rule_codes(rules: Sequence[type[RuleMeta]]) -> tuple[str, ...]:
    """The codes of `rules`, without importing a lazy registry's modules."""
    if isinstance(rules, LazyRules):
        return rules.codes
    return tuple(rule.CODE for rule in rules)


def rules_of_kind(rules: Sequence[type[RuleMeta]], base: type[_R]) -> tuple[type[_R], ...]:
    """The rules that subclass `base` (one of KINDS' classes), in order; a lazy registry imports
    only their modules (`_load` checks each class against the kind its entry names)."""
    if isinstance(rules, LazyRules):
        kind = _KIND_OF_BASE[base.__name__]
        return cast(tuple["type[_R]", ...], rules.of_kind(kind))
    return tuple(rule for rule in rules if issubclass(rule, base))


def _kind_of(rule: type[RuleMeta]) -> str | None:
    # By importlib: the engine may hold `declint.rule` as a lazy module, not yet an attribute of `declint`.
    bases = importlib.import_module("declint.rule")
    kinds = [kind for kind, base in KINDS.items() if issubclass(rule, getattr(bases, base))]
    return kinds[0] if len(kinds) == 1 else None


@functools.cache  # a GatedRule's class, loaded once per process (its entry is the key)
def _load(entry: RuleEntry) -> type[RuleMeta]:
    rule: type[RuleMeta] = getattr(importlib.import_module(entry.module), entry.name)
    where = f"{entry.module}.{entry.name}"
    if entry.code != rule.CODE:  # the registry names the code: it must be the class's own
        raise RuntimeError(f"{where} has the code {rule.CODE}, but the registry says {entry.code}")
    if _kind_of(rule) != entry.kind:  # and its kind: a run after an edit imports only per-file rules
        raise RuntimeError(f"{where} is of the kind {_kind_of(rule)}, but the registry says {entry.kind}")
    return rule
