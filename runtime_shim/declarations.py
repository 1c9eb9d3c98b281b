"""The declarations as the running process sees them, checked like DL102 and DL104 check them.

Reads the same class attribute (`encoder_attention_backends`), the same fixed marker and the
same Literal (`typing.get_args`); the messages are the static rules' messages, so a runtime
finding and a lint finding about the same mistake read the same.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import sys
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from declint.runtime_shim.conventions import Conventions
from declint.runtime_shim.report import Violation


@dataclass(frozen=True)
class Entry:
    encoder: str
    kind: str  # "configurable" | "fixed" | "invalid"
    backends: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class ModelFacts:
    """One model class: its effective declaration, required encoders, and what is wrong with them."""

    model: str
    declared_in: str | None
    entries: Mapping[str, Entry] | None  # None: no declaration at all
    required: Mapping[str, str]  # encoder -> the registered modality requiring it
    violations: tuple[Violation, ...] = field(default=())
    encoder_free: bool = False  # an explicit `{}`, not a declaration none of whose entries could be read

    def entry(self, encoder: str) -> Entry | None:
        return None if self.entries is None else self.entries.get(encoder)

    @functools.cached_property
    def configurable(self) -> tuple[tuple[str, Entry], ...]:
        """(encoder, entry) of the configurable encoders, by name (each construction's checks ask)."""
        return tuple(item for item in sorted((self.entries or {}).items()) if item[1].kind == "configurable")


def suggest(word: str, candidates: tuple[str, ...]) -> str:
    matches = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.6)
    return f' (did you mean "{matches[0]}"?)' if matches else ""


def suggest_member(name: str, members: tuple[str, ...]) -> str:
    exact_case = [member for member in members if member.upper() == name.upper()]
    if exact_case:
        return f' (did you mean "{exact_case[0]}"?)'
    return suggest(name.upper(), members)


def literal_members(conventions: Conventions) -> tuple[str, ...] | None:
    """`typing.get_args` of the shared Literal, or None when it cannot be found."""
    module_name, _, name = conventions.shared_literal.rpartition(".")
    try:
        module = sys.modules.get(module_name) or importlib.import_module(module_name)
    except ImportError:
        return None
    literal = getattr(module, name, None)
    members = typing.get_args(literal) if literal is not None else ()
    return tuple(str(m) for m in members) if members else None


def declaration_of(cls: type, conventions: Conventions) -> tuple[Any, type] | None:
    """The nearest own-or-inherited declaration; the mixin's own default does not count."""
    attribute = conventions.declaration_attribute
    for klass in cls.__mro__:
        if attribute in vars(klass) and klass.__name__ != conventions.model_mixin:
            return vars(klass)[attribute], klass
    return None


def is_model_class(cls: type, conventions: Conventions, registered: Mapping[type, tuple[str, ...]]) -> bool:
    if cls.__name__ == conventions.model_mixin:
        return False
    return cls in registered or any(k.__name__ == conventions.model_mixin for k in cls.__mro__[1:])


def model_facts(
    cls: type,
    conventions: Conventions,
    members: tuple[str, ...] | None,
    modalities: tuple[tuple[str, ...], type] | None,
) -> ModelFacts:
    found = declaration_of(cls, conventions)
    required = _required(modalities, conventions)
    if found is None:
        message = _missing_message(cls, conventions, required, modalities)
        return ModelFacts(
            cls.__name__, None, None, required, (Violation("DL102", "declaration", message, cls.__name__),)
        )
    value, owner = found
    entries, violations = _parse(value, conventions, members)
    violations += _missing_encoders(cls, owner, value, entries, required)
    model = cls.__name__
    tagged = tuple(Violation(v.code, v.check, v.message, model, v.encoder) for v in violations)
    empty = isinstance(value, Mapping) and not value
    return ModelFacts(model, f"{owner.__module__}.{owner.__qualname__}", entries, required, tagged, empty)


def _required(modalities: tuple[tuple[str, ...], type] | None, conventions: Conventions) -> dict[str, str]:
    required: dict[str, str] = {}
    for modality in sorted(modalities[0]) if modalities else ():
        encoder = conventions.encoder_for_modality(modality)
        if encoder is not None:
            required.setdefault(encoder, modality)
    return required


def _missing_message(
    cls: type,
    conventions: Conventions,
    required: Mapping[str, str],
    modalities: tuple[tuple[str, ...], type] | None,
) -> str:
    head = (
        f'multimodal model "{cls.__name__}" has no {conventions.declaration_attribute} declaration (own or inherited)'
    )
    if not required or modalities is None:
        return f"{head}; declare its encoders, or {{}} when it has no attention encoder"
    return (
        f"{head}; declare its encoders: {', '.join(sorted(required))} "
        f"(registered modalities: {', '.join(sorted(modalities[0]))})"
    )


def _parse(
    value: Any, conventions: Conventions, members: tuple[str, ...] | None
) -> tuple[dict[str, Entry], tuple[Violation, ...]]:
    attribute = conventions.declaration_attribute
    if not isinstance(value, Mapping):
        message = f"{attribute} must be a dict mapping encoder names to backends"
        return {}, (Violation("DL104", "declaration", message),)
    entries: dict[str, Entry] = {}
    violations: list[Violation] = []
    for encoder, spec in value.items():
        if encoder not in conventions.encoders:
            known = ", ".join(conventions.encoders)
            message = (
                f'unknown encoder "{encoder}"{suggest(str(encoder), conventions.encoders)}; known encoders: {known}'
            )
            violations.append(Violation("DL104", "declaration", message, encoder=str(encoder)))
            continue
        entry, problems = _entry(encoder, spec, conventions, members)
        entries[encoder] = entry
        violations += [Violation("DL104", "declaration", p, encoder=encoder) for p in problems]
    return entries, tuple(violations)


def _entry(
    encoder: str, spec: Any, conventions: Conventions, members: tuple[str, ...] | None
) -> tuple[Entry, list[str]]:
    marker = conventions.fixed_marker
    if type(spec).__name__ == marker:
        reason = getattr(spec, "reason", "")
        if reason is not None and not isinstance(reason, str):  # as DL104 says statically
            return Entry(encoder, "fixed"), [
                f'encoder "{encoder}": the reason of {marker} must be a string, not {reason!r}'
            ]
        if reason is None or not reason.strip():
            return Entry(encoder, "fixed"), [
                f'encoder "{encoder}" is declared {marker} without a reason; say why its attention cannot be changed'
            ]
        return Entry(encoder, "fixed", reason=reason), []
    if not isinstance(spec, tuple | list | set | frozenset):
        return Entry(encoder, "invalid"), [
            f'encoder "{encoder}": expected a tuple of backend names or {marker}("<reason>")'
        ]
    problems: list[str] = []
    if not spec:
        problems.append(f'encoder "{encoder}" lists no backends; declare it {marker}("<reason>") instead')
    seen: set[str] = set()
    for name in spec:
        if name in seen:
            problems.append(f'encoder "{encoder}": backend "{name}" is listed twice')
        seen.add(name)
        if members is not None and name not in members:
            literal = conventions.shared_literal.rpartition(".")[2]
            problems.append(
                f'encoder "{encoder}": "{name}" is not a member of {literal}{suggest_member(str(name), members)}'
            )
    # Still configurable with a bad member: an override is then checked against what is listed.
    return Entry(encoder, "configurable", tuple(str(n) for n in spec)), problems


def _missing_encoders(
    cls: type, owner: type, value: Any, entries: Mapping[str, Entry], required: Mapping[str, str]
) -> tuple[Violation, ...]:
    # `{}` is explicitly encoder-free, and a value that is no mapping is DL104's alone (as the
    # static rules have it); a mapping whose keys are all unknown (`{"visoin": ...}`) misses them.
    if not isinstance(value, Mapping) or not value:
        return ()
    violations = []
    for encoder, modality in sorted(required.items()):
        if encoder in entries:
            continue
        if owner is cls:
            message = (
                f'the declaration of "{cls.__name__}" misses encoder "{encoder}" (registered modality "{modality}")'
            )
        else:
            message = (
                f'"{cls.__name__}" inherits the declaration of "{owner.__name__}" ({owner.__module__}), '
                f'which misses encoder "{encoder}" (registered modality "{modality}"); declare it on "{cls.__name__}"'
            )
        violations.append(Violation("DL102", "declaration", message, encoder=encoder))
    return tuple(violations)
