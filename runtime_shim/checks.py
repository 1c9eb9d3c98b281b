"""The runtime checks: before a model's __init__, after it, and at encoder metadata creation.

Each function returns violations; the caller routes them by mode (raise, log, record).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from declint.runtime_shim import contract
from declint.runtime_shim.conventions import Conventions
from declint.runtime_shim.declarations import ModelFacts, suggest_member
from declint.runtime_shim.recording import Group, Recorder
from declint.runtime_shim.report import Violation

Resolve = Callable[[str], type | None]  # backend name -> backend class (the original lookup)


@dataclass
class Selection:
    """What the config asks of a model's encoders."""

    overrides: dict[str, str]
    default: str | None
    disabled: bool
    cuda_graph: bool

    @classmethod
    def read(cls, config: Any, conventions: Conventions) -> Selection:
        multimodal = getattr(config, "multimodal_config", None)
        overrides = getattr(multimodal, conventions.override_attribute, None) or {}
        default = getattr(config, "attn_backend", None)
        return cls(
            overrides={str(k): str(v) for k, v in dict(overrides).items()},
            default=str(default) if default is not None else None,
            disabled=bool(getattr(multimodal, conventions.disable_encoder_attribute, False)),
            cuda_graph=bool(getattr(multimodal, conventions.cuda_graph_attribute, False)),
        )

    def selected(self, facts: ModelFacts, encoder: str) -> str | None:
        """The override, else the LLM's backend when the declaration allows it for this encoder."""
        if encoder in self.overrides:
            return self.overrides[encoder].upper()
        entry = facts.entry(encoder)
        default = (self.default or "").upper()
        if entry is not None and entry.kind == "configurable" and default in entry.backends:
            return default
        return None


@dataclass
class Construction:
    """One model being built: filled in by the hooks that run inside its __init__."""

    model: type
    facts: ModelFacts
    selection: Selection
    config: Any
    encoder_configs: dict[str, list[Any]] = field(default_factory=dict)
    recorder: Recorder | None = None  # the backends created during __init__ (None: not recorded)
    derived_early: frozenset[str] = frozenset()  # encoders whose config was checked before __init__


def flashinfer_importable(conventions: Conventions) -> bool:
    try:
        return importlib.util.find_spec(conventions.flashinfer_module) is not None
    except (ImportError, ValueError):
        return False


# ---- before __init__ -----------------------------------------------------------------------
def before_construction(
    facts: ModelFacts, selection: Selection, members: tuple[str, ...] | None, conventions: Conventions
) -> list[Violation]:
    found = list(facts.violations)
    for encoder, backend in sorted(selection.overrides.items()):
        found += _override(facts, encoder, backend, members, conventions)
    # The LLM's own backend may be one the Literal of encoder backends leaves out (star attention),
    # as get_attention_backend accepts it; an encoder override may not.
    default = selection.default
    known = () if members is None else (*members, *conventions.extra_backend_names)
    if default is not None and members is not None and default.upper() not in known:
        literal = conventions.shared_literal.rpartition(".")[2]
        found.append(
            Violation(
                "DL104",
                "unknown-backend",
                f'attn_backend "{default}" is not a member of {literal}'
                f"{suggest_member(default, members)}; get_attention_backend would silently fall back",
                facts.model,
            )
        )
    rejected = {v.encoder for v in found}
    for encoder in sorted(facts.entries or {}):
        chosen = selection.selected(facts, encoder)
        if chosen is not None and encoder not in rejected:
            found += selected_backend_usable(facts.model, encoder, chosen, selection, conventions)
    return found


def _override(
    facts: ModelFacts, encoder: str, backend: str, members: tuple[str, ...] | None, conventions: Conventions
) -> list[Violation]:
    def reject(check: str, message: str) -> list[Violation]:
        return [Violation("DL104", check, message, facts.model, encoder)]

    setting = f'{conventions.override_attribute}["{encoder}"]'
    if members is not None and backend.upper() not in members:
        literal = conventions.shared_literal.rpartition(".")[2]
        return reject(
            "unknown-backend",
            f'{setting} = "{backend}" is not a member of {literal}{suggest_member(backend, members)}; '
            "get_attention_backend would silently fall back to another backend",
        )
    if facts.entries is None:
        return []  # DL102 (no declaration) is already among the facts' violations
    entry = facts.entry(encoder)
    attribute = conventions.declaration_attribute
    if facts.encoder_free:
        return reject(
            "encoder-free-override",
            f"{facts.model} declares no attention encoder ({attribute} = {{}}); remove the {setting} override",
        )
    if not facts.entries:
        return []  # no entry could be read: the declaration's own DL104 says why
    if entry is None:
        declared = ", ".join(sorted(facts.entries))
        return reject(
            "unknown-encoder-override",
            f'{facts.model} declares no "{encoder}" encoder (declared: {declared}); remove the {setting} override',
        )
    if entry.kind == "fixed":
        return reject(
            "fixed-encoder-override",
            f"the {encoder} encoder of {facts.model} has fixed attention ({entry.reason or 'no reason given'}); "
            f"remove the {setting} override",
        )
    if entry.kind == "configurable" and backend.upper() not in entry.backends:
        supported = ", ".join(entry.backends) or "no backend"
        return reject(
            "undeclared-backend",
            f"the {encoder} encoder of {facts.model} supports {supported}, not {backend.upper()} ({setting})",
        )
    return []


def selected_backend_usable(
    model: str, encoder: str, backend: str, selection: Selection, conventions: Conventions
) -> list[Violation]:
    found = []
    if backend in conventions.flashinfer_backends and not flashinfer_importable(conventions):
        found.append(
            Violation(
                "DL105",
                "flashinfer-missing",
                f"the {encoder} encoder would run on {backend}, but the {conventions.flashinfer_module} package is "
                "not importable: the first attention call would fail; install the flashinfer-python version "
                "tensorrt_llm pins (`declint doctor` shows it) or select another backend",
                model,
                encoder,
            )
        )
    if backend in conventions.host_boundary_backends and selection.cuda_graph:
        found.append(
            Violation(
                "DL105",
                "host-boundaries-cuda-graph",
                f"the {encoder} encoder would run on {backend} with {conventions.cuda_graph_attribute}: {backend} "
                "derives segment boundaries on the host, so a graph replay would reuse the captured ones; "
                "select TRTLLM or disable encoder CUDA graphs",
                model,
                encoder,
            )
        )
    return found


# ---- per-encoder config derivation -----------------------------------------------------------
def kv_quantized(config: Any) -> bool:
    return bool(getattr(getattr(config, "quant_config", None), "kv_cache_quant_algo", None))


def encoder_config(model: str, encoder: str, config: Any, conventions: Conventions) -> list[Violation]:
    quant = getattr(config, "quant_config", None)
    algo = getattr(quant, "kv_cache_quant_algo", None)
    backend = str(getattr(config, "attn_backend", "") or "").upper()
    if not algo or backend not in conventions.kv_quant_rejecting_backends:
        return []
    return [
        Violation(
            "DL105",
            "kv-cache-quant",
            f"the {encoder} encoder's config keeps the KV-cache quantization {algo} (the decoder's), which {backend} "
            "rejects without a KV cache, and encoders have none; derive the encoder config with "
            "quant_config.kv_cache_quant_algo=None, or select TRTLLM",
            model,
            encoder,
        )
    ]


# ---- after __init__ ----------------------------------------------------------------------------
def _children(module: Any) -> Any:
    # nn.Module keeps submodules in `_modules`; walking it directly skips named_modules()' string
    # building, which dominates the shim's cost on a model with hundreds of modules.
    return vars(module).get("_modules", {}).items()


def backend_layers(module: Any, base: type) -> list[tuple[str, Any]]:
    """(path, backend instance) of every attention layer under `module`.

    After a construction the recording (recording.py) usually stands in for this walk; it runs at
    metadata setup, and after a construction the recording cannot vouch for or that has something
    to report (its messages name layer paths). Each module is first screened with one C-level
    `isdisjoint` over the types of its attributes; only the few modules that hold a backend are
    looked at name by name, and paths are built only for what is descended into.
    """
    kinds = {base, *_all_subclasses(base)}
    found: list[tuple[str, Any]] = []
    stack: list[tuple[str, Any]] = [("", module)]
    while stack:
        path, child = stack.pop()
        attributes = vars(child)
        if not kinds.isdisjoint(map(type, attributes.values())):
            found += [
                (f"{path}.{name}" if path else name, value)
                for name, value in attributes.items()
                if type(value) in kinds
            ]
        children = attributes.get("_modules")
        if children:
            prefix = f"{path}." if path else ""
            # reversed: the stack pops them in declaration order
            stack.extend((prefix + name, sub) for name, sub in reversed(children.items()) if sub is not None)
    return found


def _all_subclasses(cls: type) -> list[type]:
    found: list[type] = []
    stack: list[type] = list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        found.append(sub)
        stack.extend(sub.__subclasses__())
    return found


def locate_encoders(
    model: Any, construction: Construction, encoder_mixin: type | None, conventions: Conventions
) -> dict[str, list[tuple[str, Any]]]:
    """Top-most submodules built from an encoder's derived config, or encoder-mixin instances."""
    found: dict[str, list[tuple[str, Any]]] = {}
    _locate(_children(model), "", _encoder_test(construction, encoder_mixin, conventions), found)
    for modules in found.values():
        modules.sort(key=_PATH)
    return found


def _locate(
    children: Any, prefix: str, encoder_of: Callable[[Any], str | None], found: dict[str, list[tuple[str, Any]]]
) -> None:
    stack: list[tuple[str, Any]] = [(prefix + name, sub) for name, sub in children if sub is not None]
    while stack:
        path, module = stack.pop()
        encoder = encoder_of(module)
        if encoder is not None:
            found.setdefault(encoder, []).append((path, module))
            continue  # top-most only
        stack.extend((f"{path}.{name}", sub) for name, sub in _children(module) if sub is not None)


def _encoder_test(
    construction: Construction, encoder_mixin: type | None, conventions: Conventions
) -> Callable[[Any], str | None]:
    """module -> the encoder it was built for, or None: its `model_config` is a config
    encoder_model_config returned (the first encoder that returned it), or it is an encoder-mixin
    instance (the encoder from its class name)."""
    by_config: dict[int, str] = {}
    for encoder, configs in construction.encoder_configs.items():
        for config in configs:  # alive with the construction: ids are not reused
            by_config.setdefault(id(config), encoder)

    def encoder_of(module: Any) -> str | None:
        config = vars(module).get("model_config")
        if config is not None and by_config:
            encoder = by_config.get(id(config))
            if encoder is not None:
                return encoder
        if encoder_mixin is not None and isinstance(module, encoder_mixin):
            return conventions.encoder_from_name(type(module).__name__)
        return None

    return encoder_of


_PATH = itemgetter(0)
_LAYER = itemgetter(1)


def after_construction(
    model: Any,
    construction: Construction,
    base: type,
    encoder_mixin: type | None,
    resolve: Resolve,
    names: dict[type, str],
    conventions: Conventions,
) -> tuple[list[Violation], dict[str, list[tuple[str, Any]]]]:
    """Violations of the built model, and its encoders' top-most modules (by walking the model)."""
    facts, selection = construction.facts, construction.selection
    encoders = locate_encoders(model, construction, encoder_mixin, conventions)
    found: list[Violation] = []
    for encoder, entry in facts.configurable:
        modules = encoders.get(encoder, [])
        if not modules:
            found.append(_absent(facts.model, encoder, selection))
            continue
        layers = [
            (f"{where}.{path}", layer) for where, module in modules for path, layer in backend_layers(module, base)
        ]
        found += _layers(facts, encoder, entry.backends, layers, selection, names, resolve, conventions)
    return found, encoders


def recorded_after_construction(
    model: Any,
    construction: Construction,
    recorder: Recorder,
    base: type,
    encoder_mixin: type | None,
    resolve: Resolve,
    names: dict[type, str],
    conventions: Conventions,
) -> tuple[dict[str, list[tuple[str, Any]]], bool] | None:
    """after_construction from a recording, for a model it finds nothing wrong with: (encoders,
    complete), or None when the model must be walked (something may be wrong, and the walk gives
    the exact violations and paths; or the recording cannot stand for the walk).

    Only the model's direct children are looked at, not their subtrees: an encoder module among
    them gets the backends recorded under its construction (or, without any, its own subtree is
    walked). A non-encoder child is walked for deeper encoder modules only when it has recorded
    backends that some encoder's checks would reject were they its layers; a child without
    recorded backends, or with only backends every configurable encoder accepts, cannot change
    the outcome, and `complete` is then False: an encoder module inside it is not in `encoders`.
    """
    if not recorder.trusted:
        return None
    groups: dict[int, Group] = {}
    for recorded in recorder.groups:
        if min(map(sys.getrefcount, recorded)) <= 2:  # only the group holds it: a backend dropped (or replaced)
            return None
        groups[id(recorded.module)] = recorded
    facts, selection = construction.facts, construction.selection
    encoder_of = _encoder_test(construction, encoder_mixin, conventions)
    configurable = facts.configurable

    def accepts(encoder: str, declared: tuple[str, ...], kinds: set[type]) -> bool:
        override = selection.overrides.get(encoder)
        if not kinds:
            return override is None
        _, wrong, usable = _judge(facts, encoder, declared, kinds, override, selection, names, resolve, conventions)
        return not wrong and not usable

    found: dict[str, list[tuple[str, Any]]] = {}
    complete = True
    direct: set[int] = set()
    for name, child in _children(model):
        if child is None:
            continue
        direct.add(id(child))
        encoder = encoder_of(child)
        if encoder is not None:
            found.setdefault(encoder, []).append((name, child))
            continue
        group = groups.get(id(child))
        kinds = set(map(type, group)) if group else set()
        if kinds and not all(accepts(encoder, entry.backends, kinds) for encoder, entry in configurable):
            _locate(_children(child), name + ".", encoder_of, found)  # where exactly do they sit?
        else:
            complete = False
    if not direct.issuperset(groups):
        return None  # a top module attached deeper than a direct child
    for modules in found.values():
        modules.sort(key=_PATH)
    for encoder, entry in configurable:
        located = found.get(encoder)
        if not located:
            return None  # DL102, or an encoder module deeper than the children looked at
        kinds = set()
        for _, module in located:
            group = groups.get(id(module))
            kinds.update(map(type, group if group is not None else map(_LAYER, backend_layers(module, base))))
        if not accepts(encoder, entry.backends, kinds):
            return None
    return found, complete


def backend_names(members: tuple[str, ...], resolve: Resolve) -> dict[type, str]:
    """Backend class -> its name in the Literal, for the names the lookup resolves."""
    return {cls: name for name in members if (cls := resolve(name)) is not None}


def _absent(model: str, encoder: str, selection: Selection) -> Violation:
    override = selection.overrides.get(encoder)
    tail = f'; the "{override}" override cannot reach it' if override else ""
    return Violation(
        "DL102",
        "encoder-presence",
        f"{model} declares its {encoder} encoder configurable, but no submodule was built from the config "
        f'encoder_model_config(model_config, "{encoder}") returned{tail}',
        model,
        encoder,
    )


def _layers(
    facts: ModelFacts,
    encoder: str,
    declared: tuple[str, ...],
    layers: list[tuple[str, Any]],
    selection: Selection,
    names: dict[type, str],
    resolve: Resolve,
    conventions: Conventions,
) -> list[Violation]:
    override = selection.overrides.get(encoder)
    if not layers:
        if override is None:
            return []  # the SDPA probe looks at how it computes attention
        return [
            Violation(
                "DL101",
                "override-ignored",
                f"the {encoder} encoder of {facts.model} has no attention-backend layers (it computes attention "
                f'itself), so the encoder_attention_backend override "{override}" is silently ignored; route its '
                "attention through the backend or declare the encoder FixedEncoderAttention(reason)",
                facts.model,
                encoder,
            )
        ]
    kinds = set(map(type, map(_LAYER, layers)))  # the checks depend on the classes only
    expected, wrong, usable = _judge(facts, encoder, declared, kinds, override, selection, names, resolve, conventions)
    if wrong:
        path, layer = next(item for item in layers if type(item[1]) in wrong)  # the first, in walk order
        actual = type(layer)
        if expected is not None:
            return [_ignored(facts.model, encoder, path, actual, expected, override or "")]
        return [_undeclared(facts.model, encoder, path, actual, declared)]
    return usable


def _judge(
    facts: ModelFacts,
    encoder: str,
    declared: tuple[str, ...],
    kinds: set[type],
    override: str | None,
    selection: Selection,
    names: dict[type, str],
    resolve: Resolve,
    conventions: Conventions,
) -> tuple[type | None, set[type], list[Violation]]:
    """The backend classes of an encoder's layers against its selection: (the class the override
    selects, the classes that are wrong, the violations of the backends otherwise in use)."""
    expected = resolve(override.upper()) if override else None
    if expected is not None:
        wrong = kinds - {expected}
    else:
        wrong = {kind for kind in kinds if kind in names and names[kind] not in declared}
    if wrong:
        return expected, wrong, []
    checked_before = selection.selected(facts, encoder)  # reported before __init__ already
    used = sorted({names.get(kind, "") for kind in kinds} - {"", checked_before})
    return (
        expected,
        wrong,
        [v for backend in used for v in selected_backend_usable(facts.model, encoder, backend, selection, conventions)],
    )


def _ignored(model: str, encoder: str, path: str, actual: type, expected: type, override: str) -> Violation:
    return Violation(
        "DL106",
        "override-ignored",
        f"the {encoder} override selected {override.upper()} ({expected.__name__}), but layer {path} was built "
        f"with {actual.__name__}: the override was accepted and silently ignored; build every attention layer "
        f'of the encoder from the config encoder_model_config(model_config, "{encoder}") returns',
        model,
        encoder,
    )


def _undeclared(model: str, encoder: str, path: str, actual: type, declared: tuple[str, ...]) -> Violation:
    return Violation(
        "DL106",
        "undeclared-layer-backend",
        f"layer {path} of the {encoder} encoder runs on {actual.__name__}, a backend its declaration "
        f"({', '.join(declared)}) does not list",
        model,
        encoder,
    )


# ---- encoder metadata ----------------------------------------------------------------------------
def metadata(encoder: Any, metadata_cls: type, base: type, model: str, conventions: Conventions) -> list[Violation]:
    """The metadata class must be the `Metadata` of every layer's backend, and provide what it reads."""
    found: list[Violation] = []
    seen: set[type] = set()
    name = conventions.encoder_from_name(type(encoder).__name__)
    for path, layer in backend_layers(encoder, base):
        backend = type(layer)
        if backend in seen:
            continue
        seen.add(backend)
        wanted = getattr(backend, "Metadata", None)
        if isinstance(wanted, type) and not issubclass(metadata_cls, wanted):
            found.append(_mismatch(type(encoder).__name__, path, backend, wanted, metadata_cls, model, name))
        absent = contract.missing(backend, metadata_cls, conventions.metadata_base)
        if absent:
            found.append(_contract(backend, metadata_cls, wanted, absent, model, name))
    return found


def _mismatch(
    encoder_cls: str, path: str, backend: type, wanted: type, got: type, model: str, encoder: str
) -> Violation:
    return Violation(
        "DL106",
        "metadata-mismatch",
        f"{encoder_cls} creates {got.__name__}, but layer {path} runs on {backend.__name__}, which expects "
        f"{wanted.__name__}: the first attention call would fail (e.g. AttributeError: '{got.__name__}' object "
        "has no attribute ...); derive metadata_cls from the same config as the layers: "
        "get_attention_backend(<encoder config>.attn_backend).Metadata",
        model,
        encoder,
    )


def _contract(backend: type, got: type, wanted: Any, absent: tuple[str, ...], model: str, encoder: str) -> Violation:
    reads = ", ".join(f"metadata.{name}" for name in absent)
    owner = f"; {wanted.__name__} provides them" if isinstance(wanted, type) and wanted is not got else ""
    return Violation(
        "DL105",
        "metadata-contract",
        f"{backend.__name__} reads {reads}, which {got.__name__} does not provide{owner}",
        model,
        encoder,
        contract.location(backend, absent[0]),
    )
