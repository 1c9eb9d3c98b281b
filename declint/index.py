"""The project index: cross-file facts built once (phase 1) and read by every rule (phase 2).

It answers the questions no single file can: is this class a multimodal model (through an
ancestor in another file)? which declaration does it inherit? which model owns the encoder
class that calls SDPA? what are the members of the shared Literal?
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from declint.config import Config
from declint.facts import (
    ClassFacts,
    Declaration,
    DeclEntry,
    FunctionFacts,
    LiteralDef,
    ModuleFacts,
    ValueFacts,
    name_matches,
)
from declint.hints import hinted_encoder
from declint.members import DYNAMIC_ATTRIBUTES

_MAX_REEXPORT_HOPS = 8
# Bases outside the project that add no instance attributes a metadata object could lack.
_OPAQUE_FREE_BASES = frozenset({"object", "Generic", "ABC", "Protocol"})
_MAX_OWNERSHIP_DEPTH = 8


class Ownership(NamedTuple):
    """`model` owns the class/function through `path` (model first); `encoder` is the guess."""

    model: str
    encoder: str
    path: tuple[str, ...]


def _imported(candidates: list[ModuleFacts]) -> ModuleFacts:
    """Of several files with one module name, the one Python imports, whatever their order: a
    module with a package of its name beside it (`x/a.py` next to `x/a/__init__.py`) is never
    imported, as the import system's finder looks for the directory first; of the others, the
    smaller path (two roots: either could come first on `sys.path`, and the answer must not
    change from run to run; red-team 45 found a pairwise rule that depended on the order)."""
    paths = {fact.path for fact in candidates}
    shadowed = {path for path in paths if path.endswith(".py") and path[:-3] + "/__init__.py" in paths}
    return min((fact for fact in candidates if fact.path not in shadowed), key=lambda fact: fact.path)


@dataclass
class ProjectIndex:
    modules: dict[str, ModuleFacts]
    model_mixins: tuple[str, ...]
    model_decorators: tuple[str, ...]
    modality_encoders: dict[str, str]
    encoder_hints: dict[str, tuple[str, ...]]
    literal_qualname: str
    metadata_base: str = "AttentionMetadata"
    backend_base: str = "AttentionBackend"
    language_model_decorators: tuple[str, ...] = ()
    _owners: dict[str, list[Ownership]] | None = field(default=None, repr=False)
    _language_owned: frozenset[str] = field(default=frozenset(), repr=False)

    @classmethod
    def build(cls, facts: Iterable[ModuleFacts], config: Config) -> ProjectIndex:
        first: dict[str, ModuleFacts] = {}
        shared: dict[str, list[ModuleFacts]] = {}  # the module names more than one file has
        for fact in facts:
            known = first.setdefault(fact.module, fact)
            if known is not fact:
                shared.setdefault(fact.module, [known]).append(fact)
        for module, candidates in shared.items():
            first[module] = _imported(candidates)
        # Ordered by module name; sorting the names is ~3x cheaper than the facts by (module, path)
        # (every file of the tree has a fact here, placeholders included).
        return cls(
            modules={module: first[module] for module in sorted(first)},
            model_mixins=config.str_list("model-mixins"),
            model_decorators=config.str_list("model-decorators"),
            modality_encoders=dict(config.get("modality-encoders")),
            encoder_hints={k: tuple(v) for k, v in dict(config.get("encoder-name-hints")).items()},
            literal_qualname=str(config.get("shared-literal")),
            metadata_base=str(config.get("metadata-base")),
            backend_base=str(config.get("backend-base")),
            language_model_decorators=config.str_list("language-model-decorators"),
        )

    def __post_init__(self) -> None:
        # Most modules of a tree are placeholders with nothing defined: one pass sets them aside.
        defining = [m for m in self.modules.values() if m.classes or m.functions or m.values or m.literals]
        self.classes: dict[str, ClassFacts] = {c.qualname: c for m in defining for c in m.classes}
        self.functions = {f.qualname for m in defining for f in m.functions}
        self.values: dict[str, ValueFacts] = {v.qualname: v for m in defining for v in m.values}
        self.module_of_path = {m.path: m for m in self.modules.values()}
        # Every module that defines a Literal holds the word, so the prefilter indexes its Literals.
        self._literal_names = frozenset(lit.name for m in defining for lit in m.literals)
        self._bound_names: dict[tuple[str, ...], tuple[str, ...]] = {}  # `names_bound_to`, memoized

    # ---- names -------------------------------------------------------------------------
    def resolve(self, dotted: str, hops: int = _MAX_REEXPORT_HOPS, _seen: dict[str, int] | None = None) -> str:
        """Follow re-exports (`from .x import Y` in a package, `from .x import *`) to where a
        name is defined. (`_seen`: the star-imported names one query already followed, with the
        hops they had left; see `_star_imported`.)"""
        for _ in range(hops):
            if dotted in self.classes or dotted in self.functions or dotted in self.modules:
                return dotted
            module, _, name = dotted.rpartition(".")
            facts = self.modules.get(module)
            target = dict(facts.imports).get(name) if facts else None
            if target is None and facts is not None and facts.star_imports:
                target = self._star_imported(facts, name, hops - 1, {} if _seen is None else _seen)
            if target is None or target == dotted:
                return dotted
            dotted = target
        return dotted

    def _star_imported(self, facts: ModuleFacts, name: str, hops: int, seen: dict[str, int]) -> str | None:
        """`name` as the module's `from X import *` bind it: the last of them that defines or
        imports it wins, as when Python runs them in order. A star-imported name already followed
        in this query with as many hops left is not followed again: modules that star-import
        each other made the search exponential (red-team 45)."""
        for star in reversed(facts.star_imports) if hops > 0 else ():
            dotted = f"{star}.{name}"
            if seen.get(dotted, -1) >= hops:
                continue
            seen[dotted] = hops
            found = self.resolve(dotted, hops, seen)
            if found in self.classes or found in self.functions or found in self.modules:
                return found
        return None

    def resolve_callable(self, dotted: str, hops: int = _MAX_REEXPORT_HOPS) -> str:
        """What a call of `dotted` calls: `resolve`, then on through a module-level
        `name = functools.partial(f, ...)` to `f` (a partial calls its function), and through a
        `from X import *` that brings a name X imports or aliases (`resolve` follows stars to
        classes and functions only)."""
        for _ in range(hops):
            dotted = self.resolve(dotted)
            if dotted in self.classes or dotted in self.functions:
                return dotted
            module, _, name = dotted.rpartition(".")
            facts = self.modules.get(module)
            if facts is None:
                return dotted
            target = dict(facts.partials).get(name) or self._star_bound(facts, name)
            if target is None or target == dotted:
                return dotted
            dotted = target
        return dotted

    def _star_bound(self, facts: ModuleFacts, name: str, seen: set[str] | None = None) -> str | None:
        """`star.name` for the last `from star import *` of the module whose module binds `name`
        by an import, an alias or a partial, or brings it by a star import of its own (a chain of
        them); None when the module binds `name` itself. Each module is looked into once (`seen`):
        modules that star-import each other made the search exponential (red-team 45)."""
        if any(target == name for target, _ in facts.assignments):
            return None
        seen = set() if seen is None else seen
        for star in reversed(facts.star_imports):
            bound = self.modules.get(star)
            if bound is None or star in seen:
                continue
            seen.add(star)
            if name in dict(bound.imports) or name in dict(bound.partials):
                return f"{star}.{name}"
            if self._star_bound(bound, name, seen) is not None:
                return f"{star}.{name}"
        return None

    def names_bound_to(self, targets: tuple[str, ...]) -> tuple[str, ...]:
        """The short names modules bind at module level, by an import, an alias (`x = F.f`) or a
        `functools.partial`, to one of `targets` as their own imports name it, directly or
        through another module's such name, also re-exported under a name of its own (`from
        .attn_utils import sdpa as attention`) or by `from m import *`: what another module
        calls it when it imports it (DL101's needles). An over-approximation (a star-importing
        module may rebind the name): `resolve_callable` has the last word on each call. Only
        indexed modules are read; the modules an owned encoder imports from are (ownership
        resolves its references). Memoized per index."""
        found = self._bound_names.get(targets)
        if found is None:
            found = self._bound_names[targets] = self._names_bound_to(frozenset(targets))
        return found

    def _names_bound_to(self, targets: frozenset[str]) -> tuple[str, ...]:
        """A breadth-first walk from `targets` over who binds or star-imports what (one pass over
        the modules to invert their bindings, then each binding at most once)."""
        binders: dict[str, list[str]] = {}  # target -> the `module.name`s bound to it
        star_importers: dict[str, list[str]] = {}  # module -> the modules doing `from module import *`
        for facts in self.modules.values():
            if not (facts.imports or facts.partials or facts.star_imports):
                continue  # a placeholder's empty tuples
            for name, target in (*facts.imports, *facts.partials):
                binders.setdefault(target, []).append(f"{facts.module}.{name}")
            for star in facts.star_imports:
                star_importers.setdefault(star, []).append(facts.module)
        seen = set(targets)
        frontier = deque(targets)
        names: set[str] = set()
        while frontier:
            module, _, name = frontier.popleft().rpartition(".")
            bound = binders.get(f"{module}.{name}", [])
            starred = [f"{importer}.{name}" for importer in star_importers.get(module, ())]
            for dotted in (*bound, *starred):
                if dotted not in seen:
                    seen.add(dotted)
                    names.add(dotted.rpartition(".")[2])
                    frontier.append(dotted)
        return tuple(sorted(names))

    def constant(self, value: str | None) -> str | None:
        """A fact value: a string as is, or `=module.NAME` looked up among module-level constants."""
        if value is None or not value.startswith("="):
            return value
        module, _, name = self.resolve(value[1:]).rpartition(".")
        facts = self.modules.get(module)
        return dict(facts.constants).get(name) if facts else None

    def class_facts(self, dotted: str) -> ClassFacts | None:
        return self.classes.get(self.resolve(dotted))

    # ---- classes -----------------------------------------------------------------------
    def ancestors(self, cls: ClassFacts) -> Iterator[tuple[str, ClassFacts | None]]:
        """Depth-first, left-to-right, each once: (resolved base name, its facts if indexed)."""
        seen: set[str] = {cls.qualname}
        stack = [self.resolve(b) for b in reversed(cls.bases)]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            facts = self.classes.get(name)
            yield name, facts
            if facts is not None:
                stack.extend(self.resolve(b) for b in reversed(facts.bases))

    def is_mixin(self, dotted: str) -> bool:
        return any(name_matches(dotted, mixin) for mixin in self.model_mixins)

    def is_model(self, cls: ClassFacts) -> bool:
        if self.is_mixin(cls.qualname):
            return False
        if any(name_matches(d, wanted) for d in cls.decorators for wanted in self.model_decorators):
            return True
        return any(self.is_mixin(name) for name, _ in self.ancestors(cls))

    def effective_declaration(self, cls: ClassFacts) -> tuple[Declaration, ClassFacts] | None:
        """The declaration Python finds first along the class's MRO; a mixin's default declares
        nothing, and one that comes before every declaration wins at run time (red-team 53:
        `class M(MultimodalModelMixin, ConfigurableVisionMixin)` has the mixin's default)."""
        for candidate in self._mro(cls):
            if candidate.declaration is not None:
                return None if self.is_mixin(candidate.qualname) else (candidate.declaration, candidate)
        return None

    def hidden_declaration(self, cls: ClassFacts) -> tuple[ClassFacts, ClassFacts] | None:
        """(the model mixin, the class) when the mixin's default, earlier in the MRO, hides the
        class's declaration from `cls` (see `effective_declaration`)."""
        declaring = [c for c in self._mro(cls) if c.declaration is not None]
        if not declaring or not self.is_mixin(declaring[0].qualname):
            return None
        hidden = next((c for c in declaring if not self.is_mixin(c.qualname)), None)
        return None if hidden is None else (declaring[0], hidden)

    def _mro(self, cls: ClassFacts) -> list[ClassFacts]:
        """`cls` and its indexed ancestors in method resolution order (C3, as Python computes it,
        a base that is not indexed taken as having no bases); depth-first where C3 cannot order
        them (a cycle, an inconsistent order: Python rejects those classes anyway)."""
        order = self._c3(cls.qualname, cls, set())
        if order is None:
            return [cls, *(facts for _, facts in self.ancestors(cls) if facts is not None)]
        return [facts for name in order if (facts := cls if name == cls.qualname else self.classes.get(name))]

    def _c3(self, name: str, facts: ClassFacts | None, visiting: set[str]) -> list[str] | None:
        if facts is None:
            return [name]
        if name in visiting or len(visiting) > _MAX_MRO_DEPTH:
            return None
        visiting.add(name)
        try:
            bases = list(dict.fromkeys(self.resolve(base) for base in facts.bases))
            linears = [self._c3(base, self.classes.get(base), visiting) for base in bases]
        finally:
            visiting.discard(name)
        if any(linear is None for linear in linears):
            return None
        merged = _c3_merge([linear for linear in linears if linear is not None] + [bases])
        return None if merged is None else [name, *merged]

    def required_encoders(self, cls: ClassFacts) -> tuple[dict[str, str], ClassFacts] | None:
        """Encoder -> the modality requiring it, from the nearest registration with a placeholder map."""
        chain = [cls, *(facts for _, facts in self.ancestors(cls) if facts is not None)]
        for candidate in chain:
            if candidate.modalities is not None:
                required: dict[str, str] = {}
                for modality in candidate.modalities:
                    encoder = self.modality_encoders.get(modality)
                    if encoder is not None:
                        required.setdefault(encoder, modality)
                return required, candidate
        return None

    def models(self) -> list[ClassFacts]:
        return [c for _, c in sorted(self.classes.items()) if self.is_model(c)]

    # ---- backends and their metadata classes (DL105) ------------------------------------
    def is_metadata_class(self, cls: ClassFacts) -> bool:
        if name_matches(cls.qualname, self.metadata_base):
            return True
        return any(name_matches(name, self.metadata_base) for name, _ in self.ancestors(cls))

    def is_backend(self, cls: ClassFacts) -> bool:
        return any(name_matches(name, self.backend_base) for name, _ in self.ancestors(cls))

    def provided(self, cls: ClassFacts) -> frozenset[str] | None:
        """Everything an instance of `cls` has, over its bases; None when that cannot be known:
        a base is unknown, or a class defines `__getattr__` (any attribute may exist)."""
        names = set(cls.members)
        for name, facts in self.ancestors(cls):
            if facts is not None:
                names.update(facts.members)
            elif name.rpartition(".")[2] not in _OPAQUE_FREE_BASES:
                return None
        return None if self._answers_any(cls) else frozenset(names)

    def _answers_any(self, cls: ClassFacts) -> bool:
        """A class of `cls`'s own (not the metadata base every metadata class shares, nor what is
        above it) defines `__getattr__`: a base's serves the aliases it knows and raises for the
        rest, it does not make every metadata class provide everything."""
        chain = [cls, *(facts for _, facts in self.ancestors(cls) if facts is not None)]
        base = next((c for c in chain if name_matches(c.qualname, self.metadata_base)), None)
        shared = {base.qualname, *(name for name, _ in self.ancestors(base))} if base is not None else set()
        return any(c.qualname not in shared and not DYNAMIC_ATTRIBUTES.isdisjoint(c.members) for c in chain)

    def metadata_pairing(self, cls: ClassFacts) -> tuple[str | None, str | None]:
        """(type argument of the generic backend base, `Metadata = X`), inherited when not own."""
        chain = [cls, *(facts for _, facts in self.ancestors(cls) if facts is not None)]
        type_arg = next((self.backend_type_arg(c) for c in chain if self.backend_type_arg(c)), None)
        attr = next((self.resolve(v) for c in chain for k, v in c.class_attrs if k == "Metadata" and v), None)
        return type_arg, attr

    def backend_type_arg(self, cls: ClassFacts) -> str | None:
        """The class's own `AttentionBackend[X]` argument, resolved, if X is in the project."""
        for base, args in zip(cls.bases, cls.base_args, strict=True):
            if args and name_matches(self.resolve(base), self.backend_base):
                resolved = self.resolve(args[0])
                return resolved if resolved in self.classes else None
        return None

    def passes_metadata_type_on(self, cls: ClassFacts) -> bool:
        """`class PagedBase(AttentionBackend[TMetadata])` with no `Metadata` of its own: a generic
        intermediate, whose forward gets the metadata class a subclass binds (not the interface's
        default `Metadata`, which it only inherits)."""
        if any(name == "Metadata" for name, _ in cls.class_attrs):
            return False
        module = cls.qualname.rpartition(".")[0]
        return any(
            self._is_typevar(arg, module)
            for base, args in zip(cls.bases, cls.base_args, strict=True)
            if args and self._is_backend_name(base)
            for arg in args
        )

    def _is_backend_name(self, dotted: str) -> bool:
        resolved = self.resolve(dotted)
        facts = self.classes.get(resolved)
        return name_matches(resolved, self.backend_base) or (facts is not None and self.is_backend(facts))

    def _is_typevar(self, dotted: str, module: str) -> bool:
        """A module-level `T = TypeVar(...)`; a name the defining module uses unqualified is looked
        up there."""
        for candidate in (self.resolve(dotted), self.resolve(f"{module}.{dotted}")):
            value = self.values.get(candidate)
            if value is not None and any(name_matches(ref, "TypeVar") for ref in value.references):
                return True
        return False

    def metadata_classes(self) -> list[ClassFacts]:
        return [c for _, c in sorted(self.classes.items()) if self.is_metadata_class(c)]

    def providers(self, attribute: str) -> list[str]:
        """Short names of the metadata classes that provide `attribute`."""
        return [c.name for c in self.metadata_classes() if attribute in (self.provided(c) or ())]

    # ---- the shared Literal -------------------------------------------------------------
    def literal_definitions(self) -> list[LiteralDef]:
        """The shared Literal's definitions, in its module or, when the configured name is a
        re-export (`llm_args` importing it from `_backends`, a package's `__init__`), in the module
        the re-exports lead to."""
        module, _, name = self.literal_home.rpartition(".")
        facts = self.modules.get(module)
        return [lit for lit in facts.literals if lit.name == name and not lit.optional] if facts else []

    @property
    def literal_home(self) -> str:
        """Where the configured shared Literal is defined, through re-exports inside the project
        (an alias of something outside it, `EncoderAttentionBackend = str`, is no re-export)."""
        resolved = self.resolve(self.literal_qualname)
        return resolved if resolved.rpartition(".")[0] in self.modules else self.literal_qualname

    @property
    def literal(self) -> LiteralDef | None:
        definitions = self.literal_definitions()
        return definitions[0] if definitions else None

    @property
    def literal_members(self) -> tuple[str, ...] | None:
        return self.literal.members if self.literal else None

    @property
    def literal_name(self) -> str:
        return self.literal_qualname.rpartition(".")[2]

    def is_shared_literal(self, dotted: str) -> bool:
        """Does `dotted` (as a module imports it) name the shared Literal, through re-exports?"""
        return bool(dotted) and self.resolve(dotted) == self.literal_home

    def entry_backends(self, entry: DeclEntry) -> tuple[str, ...] | None:
        """The backends a configurable entry declares (none known while the shared Literal is
        not found: DL100 says so); None for an invalid entry or `get_args` of another Literal."""
        if entry.kind == "configurable":
            return entry.backends
        if entry.kind == "all" and self.is_shared_literal(entry.literal):
            return self.literal_members or ()
        return None

    def has_literal_named(self, name: str) -> bool:
        """Whether some module defines a Literal called `name`: the cheap question to ask before
        resolving a name to its definition (which needs the asking file's imports)."""
        return name in self._literal_names

    def literal_members_of(self, dotted: str) -> tuple[str, ...] | None:
        """The members of the module-level `Literal` that `dotted` names (through re-exports);
        None when it names no indexed Literal. One call per name, so the cache records exactly
        the answer a file depends on."""
        module, _, name = self.resolve(dotted).rpartition(".")
        facts = self.modules.get(module)
        found = [lit.members for lit in facts.literals if lit.name == name] if facts else []
        return found[0] if found else None

    def field_literal_members(self, cls_dotted: str, field: str) -> tuple[tuple[str, ...], ...] | None:
        """The members of each indexed Literal the annotation of `field` names, in the class
        `cls_dotted` names (as a module imports it, through re-exports) or, when it does not
        annotate the field, the first class of its MRO that does (DL103: a config class whose
        field is typed by another namespace's Literal). None when the class is not indexed or no
        class of its MRO annotates the field; () when the annotation names no indexed Literal
        (`str`, a class)."""
        cls = self.classes.get(self.resolve(cls_dotted))
        if cls is None:
            return None
        for candidate in self._mro(cls):
            names = dict(candidate.fields).get(field)
            if names is not None:
                found = (self.literal_members_of(name) for name in names)
                return tuple(members for members in found if members is not None)
        return None

    # ---- ownership: which model's encoder a class or function belongs to ----------------
    def owners(self, qualname: str) -> list[Ownership]:
        """The multimodal models reaching `qualname`, each with the encoder it belongs to there."""
        return self._ownership().get(qualname, [])

    def language_owned(self, qualname: str) -> bool:
        """Does a language model (`is_language_model`) reach `qualname`? Its code is no encoder's."""
        self._ownership()
        return qualname in self._language_owned

    def _ownership(self) -> dict[str, list[Ownership]]:
        """Computed once per index (`_compute_owners` sets `_language_owned` on the way)."""
        if self._owners is None:
            self._owners = self._compute_owners()
        return self._owners

    def is_language_model(self, cls: ClassFacts) -> bool:
        """A class registered as a model (`language-model-decorators`: TensorRT-LLM's
        `register_auto_model`) that is no multimodal model and whose name hints at no encoder: a
        language model, which a multimodal model may wrap (`self.llm = Qwen2ForCausalLM(...)`)
        without owning its code. TensorRT-LLM registers vision towers too (`SiglipVisionModel`,
        `CLIPVisionModel`): named after their encoder, they stay the encoder's (red-team 49)."""
        wanted = self.language_model_decorators
        if not any(name_matches(d, w) for d in cls.decorators for w in wanted):
            return False
        return hinted_encoder(cls.name, self.encoder_hints) is None and not self.is_model(cls)

    def _compute_owners(self) -> dict[str, list[Ownership]]:
        graph = self._reference_graph()
        models = self.models()
        language = [c.qualname for _, c in sorted(self.classes.items()) if self.is_language_model(c)]
        owners: dict[str, list[Ownership]] = {}
        for model in models:
            encoders = self._encoders(model)
            hints = {e: h for e, h in self.encoder_hints.items() if not encoders or e in encoders}
            for node, path in _reachable(model.qualname, graph, frozenset(language)):
                owners.setdefault(node, []).append(Ownership(model.qualname, _encoder_of(path, encoders, hints), path))
        multimodal = frozenset(model.qualname for model in models)
        self._language_owned = frozenset(node for start in language for node, _ in _reachable(start, graph, multimodal))
        return owners

    def _reference_graph(self) -> dict[str, tuple[str, ...]]:
        graph: dict[str, tuple[str, ...]] = {}
        for module in self.modules.values():
            items: list[ClassFacts | FunctionFacts | ValueFacts] = [*module.classes, *module.functions, *module.values]
            for item in items:
                targets = {self.resolve(ref) for ref in item.references}
                graph[item.qualname] = tuple(sorted(t for t in targets if self.is_referable(t)))
        return graph

    def is_referable(self, qualname: str) -> bool:
        """A node of the reference graph: a class, a function, or a module-level value (a registry
        of towers is a step from the model that indexes it to the towers it holds)."""
        return qualname in self.classes or qualname in self.functions or qualname in self.values

    def _encoders(self, model: ClassFacts) -> set[str]:
        """The encoders the model declares or its registered modalities require."""
        declared = self.effective_declaration(model)
        required = self.required_encoders(model)
        return {*(declared[0].encoders if declared else ()), *(required[0] if required else ())}

    # ---- serialisation (declint index show) --------------------------------------------
    def to_json(self) -> dict[str, Any]:
        literal = self.literal
        return {
            "shared_literal": {
                "qualname": self.literal_qualname,
                "found": literal is not None,
                "members": list(literal.members) if literal else None,
            },
            "models": [self._model_json(c) for c in self.models()],
            "modules": len(self.modules),
            "classes": len(self.classes),
        }

    def _model_json(self, cls: ClassFacts) -> dict[str, Any]:
        declared = self.effective_declaration(cls)
        required = self.required_encoders(cls)
        return {
            "qualname": cls.qualname,
            "path": self.modules[cls.qualname.rpartition(".")[0]].path,
            "bases": list(cls.bases),
            "declared_in": declared[1].qualname if declared else None,
            "declaration": None
            if declared is None
            else [
                {"encoder": e.encoder, "kind": e.kind, "backends": list(e.backends), "reason": e.reason}
                for e in declared[0].entries
            ],
            "required_encoders": sorted(required[0]) if required else None,
        }


def _reachable(
    start: str, graph: dict[str, tuple[str, ...]], stops: frozenset[str] = frozenset()
) -> Iterator[tuple[str, tuple[str, ...]]]:
    """Breadth-first: every node reachable from `start` without passing through `stops` (other
    models, which own their own code), with the shortest path to it."""
    paths: dict[str, tuple[str, ...]] = {start: (start,)}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        yield node, paths[node]
        if len(paths[node]) > _MAX_OWNERSHIP_DEPTH:
            continue
        for target in graph.get(node, ()):
            if target not in paths and target not in stops:
                paths[target] = (*paths[node], target)
                queue.append(target)


def _encoder_of(path: tuple[str, ...], encoders: set[str], hints: Mapping[str, Sequence[str]]) -> str:
    """The encoder a class reached through `path` belongs to: the model's only encoder, else the
    one the nearest class on the path (from the class up) names by its `hints`."""
    if len(encoders) == 1:
        return next(iter(encoders))
    for qualname in reversed(path[1:]):
        named = hinted_encoder(qualname.rpartition(".")[2], hints)
        if named is not None:
            return named
    return "vision"


_MAX_MRO_DEPTH = 64  # bases deeper than this (or cyclic) fall back to the depth-first order


def _c3_merge(sequences: list[list[str]]) -> list[str] | None:
    """Python's C3 merge: repeatedly the first head that is in no other sequence's tail."""
    pending = [list(sequence) for sequence in sequences if sequence]
    merged: list[str] = []
    while pending:
        tails = {name for sequence in pending for name in sequence[1:]}
        head = next((sequence[0] for sequence in pending if sequence[0] not in tails), None)
        if head is None:
            return None
        merged.append(head)
        pending = [rest for sequence in pending if (rest := [n for n in sequence if n != head])]
    return merged
