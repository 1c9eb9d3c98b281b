"""Rule classes named by the registry, imported on first use.

A run the snapshot answers needs the rules' codes only (for the run key and the selection). Their
modules import the facts, the index, the prefilter and the name resolver: about a third of the
start-up of a warm pre-commit run. `LazyRules` holds each rule's code, module and class name, and
imports every rule module the first time a class is asked for; the codes need no import.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, overload

if TYPE_CHECKING:
    from declint.rule import RuleMeta


class RuleEntry(NamedTuple):
    code: str
    module: str  # absolute module name
    name: str  # the class in it


class LazyRules(Sequence["type[RuleMeta]"]):
    """The registry's rule classes, in its order."""

    def __init__(self, entries: Sequence[RuleEntry]) -> None:
        self.entries = tuple(entries)
        self.codes = tuple(entry.code for entry in self.entries)
        self._loaded: tuple[type[RuleMeta], ...] | None = None

    def _classes(self) -> tuple[type[RuleMeta], ...]:
        if self._loaded is None:
            self._loaded = tuple(_load(entry) for entry in self.entries)
        return self._loaded

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
        return self._rules[self._positions[code]]

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


def _load(entry: RuleEntry) -> type[RuleMeta]:
    rule: type[RuleMeta] = getattr(importlib.import_module(entry.module), entry.name)
    if entry.code != rule.CODE:  # the registry names the code: it must be the class's own
        raise RuntimeError(f"{entry.module}.{entry.name} has the code {rule.CODE}, but the registry says {entry.code}")
    return rule
