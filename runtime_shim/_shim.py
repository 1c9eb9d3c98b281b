"""The installed shim: target lookup and patching, and the wrappers that run the checks."""

from __future__ import annotations

import functools
import inspect
import os
import sys
import threading
import types
import typing
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from declint.runtime_shim import checks, contract, probe
from declint.runtime_shim.conventions import Conventions
from declint.runtime_shim.declarations import (
    ModelFacts,
    is_model_class,
    literal_members,
    model_facts,
    suggest_member,
)
from declint.runtime_shim.patching import ImportHook, PatchSet
from declint.runtime_shim.recording import Recorder, recording_init
from declint.runtime_shim.report import LayerCheck, Mode, Reporter, ShimTargetError, Violation, logger
from declint.runtime_shim.targets import TARGETS, Target, signature_problem


class ShimTargetWarning(UserWarning):
    """A patch target is missing or has an incompatible signature; that check is off."""


@dataclass(frozen=True)
class _Known:
    """A model class's facts, and what they were read from."""

    facts: ModelFacts
    declared: Any  # what the class's declaration attribute resolved to (own, inherited or the mixin's)
    items: Any  # its items then, to notice a declaration changed in place
    members: tuple[str, ...] | None


def _items(declared: Any) -> Any:
    return tuple(declared.items()) if isinstance(declared, Mapping) else None


def _same_items(items: Any, declared: Any) -> bool:
    """`declared` still holds the very keys and values it held (identity: comparing the values
    with == ran their dataclass __eq__, a third of a cached lookup; an equal copy is read again)."""
    now = _items(declared)
    if items is None or now is None:
        return items is now
    return len(items) == len(now) and all(
        key is key_now and value is value_now for (key, value), (key_now, value_now) in zip(items, now, strict=True)
    )


class _ThreadState(threading.local):
    """Per thread: the tracked constructions in progress (innermost last) and their recorder."""

    def __init__(self) -> None:
        self.entered: set[int] = set()
        self.stack: list[checks.Construction] = []
        self.recorder: Recorder | None = None


@dataclass(frozen=True)
class TargetStatus:
    key: str
    state: str  # "pending" (module not imported) | "patched" | "found" | "missing" | "incompatible"
    where: str
    detail: str = ""


class Shim:
    def __init__(
        self,
        mode: Mode,
        report_path: str | os.PathLike[str] | None,
        *,
        strict: bool,
        probe_sdpa: bool,
        conventions: Conventions,
        activated_by: str,
        layer_check: LayerCheck = "first-use",
    ) -> None:
        self.reporter = Reporter(mode, report_path)
        self.strict = strict
        self.probe_sdpa = probe_sdpa
        self.layer_check: LayerCheck = layer_check
        self.conventions = conventions
        self.activated_by = activated_by
        self.patches = PatchSet()
        self.hook = ImportHook(conventions.watched_prefix, self._on_import)
        self.statuses: dict[str, TargetStatus] = {
            t.key: TargetStatus(t.key, "pending", " | ".join(t.modules)) for t in TARGETS
        }
        self.resolved: dict[str, Any] = {}
        self.registered: dict[type, tuple[str, ...]] = {}
        self._facts: dict[type, _Known] = {}
        self._members: tuple[str, ...] | None = None
        self._known_backends: frozenset[str] | None = None
        self._recording = False  # AttentionBackend.__init__ is wrapped: backends are recorded at creation
        self._lookup: Callable[..., Any] | None = None
        self._derive: Callable[..., Any] | None = None  # the mixin's own encoder_model_config
        self._names: tuple[tuple[str, ...], Any, dict[type, str]] | None = None
        self._wrapped: set[type] = set()
        self._bound: weakref.WeakSet[Any] = weakref.WeakSet()
        self._owners: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        # models whose subtrees a recorded construction did not walk -> that construction
        self._unwalked: weakref.WeakKeyDictionary[Any, checks.Construction] = weakref.WeakKeyDictionary()
        # layer_check "first-use": built models whose layers are checked at their first use ->
        # (their construction, the handle of the one-shot forward pre-hook or None)
        self._pending: weakref.WeakKeyDictionary[Any, tuple[checks.Construction, Any]] = weakref.WeakKeyDictionary()
        self._said: set[str] = set()
        self._state = _ThreadState()
        self._lock = threading.RLock()

    # ---- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        self.hook.insert()
        prefix = self.conventions.watched_prefix
        for name in sorted(n for n in list(sys.modules) if n == prefix or n.startswith(prefix + ".")):
            module = sys.modules.get(name)
            if module is not None:
                self._on_import(module)

    def stop(self) -> None:
        self.hook.remove()
        self.patches.restore_all(self._watched_modules())
        with self._lock:  # models still waiting for their first use keep no hook of an uninstalled shim
            waiting = list(self._pending.values())
            self._pending.clear()
        for _, handle in waiting:
            if handle is not None:
                handle.remove()
        contract.provided.cache_clear()
        contract.reads.cache_clear()

    def emit(self, violations: list[Violation]) -> None:
        if violations:
            self.reporter.emit(violations)

    def info_once(self, key: str, message: str) -> None:
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
        logger.info("%s", message)

    # ---- targets ----------------------------------------------------------------------------------
    def _on_import(self, module: types.ModuleType) -> None:
        for target in TARGETS:
            if module.__name__ in target.modules and self.statuses[target.key].state in ("pending", "missing"):
                try:
                    self._apply(target, module)
                except ShimTargetError:
                    raise
                except Exception as error:  # never break the import of TensorRT-LLM itself
                    self._problem(target, module, "missing", f"{type(error).__name__}: {error}")

    def _apply(self, target: Target, module: types.ModuleType) -> None:
        where = f"{module.__name__}.{target.qualname}"
        found, problem = _locate(target, module)
        if problem is not None:
            self._problem(target, module, "missing" if found is None else "incompatible", problem)
            return
        self.resolved[target.key] = found
        unpatched = None  # a patcher that leaves its target alone says why
        if target.patched:
            unpatched = getattr(self, "_patch_" + target.key.replace("-", "_"))(found, module)
        state = "patched" if target.patched and not unpatched else "found"
        self.statuses[target.key] = TargetStatus(target.key, state, where, unpatched or "")

    def _problem(self, target: Target, module: types.ModuleType, state: str, detail: str) -> None:
        where = f"{module.__name__}.{target.qualname}"
        self.statuses[target.key] = TargetStatus(target.key, state, where, detail)
        message = f"declint runtime shim: target {target.key} ({where}) is {state}: {detail}; {target.purpose} is off"
        if self.strict:
            raise ShimTargetError(message)
        logger.warning("%s", message)
        warnings.warn(message, ShimTargetWarning, stacklevel=2)

    def members(self) -> tuple[str, ...] | None:
        if self._members is None:
            self._members = literal_members(self.conventions)
        return self._members

    def backend_names(self) -> dict[type, str]:
        """Backend class -> its Literal name; resolved once per Literal and lookup (each
        construction's checks need it, and resolving every member was a tenth of them)."""
        members, lookup = self.members() or (), self._lookup
        cached = self._names
        if cached is None or cached[0] is not members or cached[1] is not lookup:
            cached = self._names = (members, lookup, checks.backend_names(members, self._resolve))
        return cached[2]

    def known_backends(self) -> frozenset[str] | None:
        """The names get_attention_backend accepts (the Literal's and the extra ones); None: unknown."""
        if self._known_backends is None:
            members = self.members()
            if members:
                self._known_backends = frozenset((*members, *self.conventions.extra_backend_names))
        return self._known_backends

    # ---- patchers (one per patched target) -----------------------------------------------------------
    def _patch_model_mixin(self, mixin: type, module: types.ModuleType) -> None:
        shim = self
        parent: Any = mixin
        own = vars(mixin).get("__init_subclass__")

        def __init_subclass__(cls: Any, /, **kwargs: Any) -> None:
            if isinstance(own, classmethod):
                own.__func__(cls, **kwargs)
            else:
                super(parent, cls).__init_subclass__(**kwargs)
            shim.wrap_model(cls)

        self.patches.set(mixin, "__init_subclass__", classmethod(__init_subclass__))
        for cls in _subclasses(mixin):
            self.wrap_model(cls)

    def _patch_encoder_config(self, method: classmethod[Any, Any, Any], module: types.ModuleType) -> None:
        shim, func, mixin = self, method.__func__, self.resolved["model-mixin"]
        self._derive = func

        @functools.wraps(func)
        def encoder_model_config(cls: type, model_config: Any, encoder: str, *args: Any, **kwargs: Any) -> Any:
            config = func(cls, model_config, encoder, *args, **kwargs)
            shim.on_encoder_config(encoder, config)
            return config

        self.patches.set(mixin, "encoder_model_config", classmethod(encoder_model_config))

    def _patch_model_registration(self, register: Callable[..., Any], module: types.ModuleType) -> None:
        shim = self

        @functools.wraps(register)
        def register_input_processor(*args: Any, **kwargs: Any) -> Any:
            decorator = register(*args, **kwargs)
            placeholder = kwargs.get("placeholder_metadata", args[2] if len(args) > 2 else None)
            modalities = tuple(getattr(placeholder, "placeholder_map", None) or ())

            def decorate(cls: type) -> Any:
                result = decorator(cls)
                shim.register(cls, modalities)
                return result

            return decorate

        self.patches.set(module, "register_input_processor", register_input_processor)
        self.patches.rebind(register, register_input_processor, self._watched_modules())

    def _patch_metadata_setup(self, original: Callable[..., Any], module: types.ModuleType) -> None:
        shim, owner = self, _owner(module, "metadata-setup")

        @functools.wraps(original)
        def setup_attn_metadata(encoder: Any, *args: Any, **kwargs: Any) -> Any:
            planned = getattr(encoder, "metadata_cls", None)
            shim.check_metadata(encoder, planned)  # before anything is allocated
            result = original(encoder, *args, **kwargs)
            created = getattr(encoder, "attn_metadata", None)
            if created is not None and type(created) is not planned:
                shim.check_metadata(encoder, type(created))
            shim._bound.add(encoder)
            return result

        self.patches.set(owner, original.__name__, setup_attn_metadata)

    def _patch_metadata_bind(self, original: Callable[..., Any], module: types.ModuleType) -> None:
        shim, owner = self, _owner(module, "metadata-bind")

        @functools.wraps(original)
        def prepare_attn_metadata(encoder: Any, *args: Any, **kwargs: Any) -> Any:
            if encoder not in shim._bound:  # once per encoder: steady-state forwards pay one set lookup
                shim._bound.add(encoder)
                bound = getattr(encoder, "attn_metadata", None)
                if bound is not None:
                    shim.check_metadata(encoder, type(bound))
            return original(encoder, *args, **kwargs)

        self.patches.set(owner, original.__name__, prepare_attn_metadata)

    def _patch_get_attention_backend(self, original: Callable[..., Any], module: types.ModuleType) -> None:
        shim = self
        self._lookup = original
        accepted: set[Any] = set()  # names already found in the Literal: each layer asks, keep that cheap

        @functools.wraps(original)
        def get_attention_backend(backend_name: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                seen = backend_name in accepted
            except TypeError:  # not hashable: checked below (not a str, so not checked at all)
                seen = False
            if not seen:
                shim._check_backend_name(backend_name, accepted)
            return original(backend_name, *args, **kwargs)

        self.patches.set(module, "get_attention_backend", get_attention_backend)
        self.patches.rebind(original, get_attention_backend, self._watched_modules())

    def _check_backend_name(self, backend_name: Any, accepted: set[Any]) -> None:
        known = self.known_backends()
        if known is None or not isinstance(backend_name, str):
            return
        if backend_name.upper() in known:
            if len(accepted) < 64:
                accepted.add(backend_name)
            return
        members = self.members() or ()
        literal = self.conventions.shared_literal.rpartition(".")[2]
        self.emit(
            [
                Violation(
                    "DL104",
                    "unknown-backend",
                    f'get_attention_backend("{backend_name}"): not a member of {literal}'
                    f"{suggest_member(backend_name, members)}; it would silently fall back to another backend",
                )
            ]
        )

    def _patch_attention_backend_base(self, base: type, module: types.ModuleType) -> str | None:
        """Record every backend created while a tracked model is built (see recording.py), when
        the layers are checked at construction. Checked at first use, they are found by a walk
        then, and a construction runs no code of the shim per layer."""
        if self.layer_check == "construction":
            return self.record_backends()
        return _NOT_RECORDED

    def record_backends(self) -> str | None:
        """Wrap the backend base's __init__ (once); None, or why it was not wrapped."""
        base = self.resolved.get("attention-backend-base")
        if self._recording or not isinstance(base, type):
            return None
        __init__ = recording_init(base, vars(base).get("__init__"), self._state)
        try:
            self.patches.set(base, "__init__", __init__)
        except (AttributeError, TypeError) as error:  # e.g. an extension type: the checks walk instead
            logger.info("declint runtime shim: %s.__init__ not wrapped (%s); backends are found by a walk", base, error)
            return f"__init__ not wrapped ({error}); backends are found by a walk"
        self._recording = True
        old = self.statuses["attention-backend-base"]
        self.statuses[old.key] = TargetStatus(old.key, "patched", old.where)
        return None

    def _watched_modules(self) -> list[types.ModuleType]:
        prefix = self.conventions.watched_prefix
        return [
            m for n, m in list(sys.modules.items()) if m is not None and (n == prefix or n.startswith(prefix + "."))
        ]

    # ---- models --------------------------------------------------------------------------------------
    def register(self, cls: type, modalities: tuple[str, ...]) -> None:
        with self._lock:
            self.registered[cls] = modalities
            self._facts.pop(cls, None)
        self.wrap_model(cls)
        self._prime(cls)

    def wrap_model(self, cls: type) -> None:
        with self._lock:
            if cls in self._wrapped or not is_model_class(cls, self.conventions, self.registered):
                return
            self._wrapped.add(cls)
            self._prime(cls)
            self._wrap_load_weights(cls)
            original = vars(cls).get("__init__")
            if original is None:
                owner = next(k for k in cls.__mro__ if "__init__" in vars(k))
                if owner in self._wrapped:
                    return  # inherits a wrapped __init__
                original = vars(owner)["__init__"]
            self.patches.set(cls, "__init__", self._init_wrapper(original))

    def _init_wrapper(self, original: Callable[..., None]) -> Callable[..., None]:
        shim = self

        @functools.wraps(original)
        def __init__(model: Any, *args: Any, **kwargs: Any) -> None:
            shim.construct(original, model, args, kwargs)

        return __init__

    def _wrap_load_weights(self, cls: type) -> None:
        """Loading the weights is a model's first use: its layers are checked before any is loaded."""
        owner = next((k for k in cls.__mro__ if "load_weights" in vars(k)), None)
        if owner is None or (owner is not cls and owner in self._wrapped):
            return  # none, or inherits a wrapped one
        original, shim = vars(owner)["load_weights"], self
        if not inspect.isfunction(original):
            return  # a staticmethod, classmethod or other descriptor: not a method that gets the model

        @functools.wraps(original)
        def load_weights(model: Any, *args: Any, **kwargs: Any) -> Any:
            shim.check_pending(model)
            return original(model, *args, **kwargs)

        self.patches.set(cls, "load_weights", load_weights)

    def construct(
        self, original: Callable[..., None], model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        state = self._state
        if id(model) in state.entered:  # a wrapped __init__ calling a wrapped super().__init__
            original(model, *args, **kwargs)
            return
        construction = self.begin(type(model), _config_argument(args, kwargs))
        outer = state.recorder
        if outer is not None:
            outer.trusted = False  # a model built inside another's __init__: the outer one walks
        if (
            self._recording
            and self.layer_check == "construction"
            and not self.probe_sdpa
            and construction.facts.entries is not None
        ):
            if not construction.selection.disabled:
                construction.recorder = Recorder(model, sys._getframe(), getattr(original, "__code__", None))
        state.entered.add(id(model))
        state.stack.append(construction)
        state.recorder = construction.recorder
        try:
            original(model, *args, **kwargs)
        except BaseException:
            if construction.recorder is not None:  # its frames would keep the half-built model alive
                construction.recorder.done()
            raise
        finally:
            state.entered.discard(id(model))
            state.stack.pop()
            state.recorder = outer
        self.finish(model, construction)

    def facts(self, cls: type) -> ModelFacts:
        """The model class's declaration as read now: cached, and read again when the declaration
        its attribute resolves to (the value, or its items) or the Literal's members changed."""
        known = self._facts.get(cls)
        declared = getattr(cls, self.conventions.declaration_attribute, None)
        members = self.members()
        if known is not None and known.declared is declared and known.members is members:
            if _same_items(known.items, declared):
                return known.facts
        with self._lock:
            facts = model_facts(cls, self.conventions, members, self._modalities(cls))
            self._facts[cls] = _Known(facts, declared, _items(declared), members)
            return facts

    def _prime(self, cls: type) -> None:
        """Read a model class's declaration when the shim meets the class (install(), its creation,
        its registration), so that its first construction only checks it is still current."""
        if self._members is None and self.conventions.shared_literal.rpartition(".")[0] not in sys.modules:
            return  # reading the Literal would import its module from here: the first construction reads it
        try:
            self.facts(cls)
        except Exception:  # never break an import or install(): the first construction reads it again
            self._facts.pop(cls, None)

    def _modalities(self, cls: type) -> tuple[tuple[str, ...], type] | None:
        registry = getattr(
            sys.modules.get("tensorrt_llm._torch.models.modeling_utils"), "INPUT_PROCESSOR_REGISTRY", None
        )
        for klass in cls.__mro__:
            if klass in self.registered:
                return self.registered[klass], klass
            entry = registry.get(klass.__name__) if isinstance(registry, dict) else None
            mapping = getattr(getattr(entry, "placeholder_metadata", None), "placeholder_map", None)
            if mapping:
                return tuple(mapping), klass
        return None

    def begin(self, cls: type, config: Any) -> checks.Construction:
        facts = self.facts(cls)
        selection = checks.Selection.read(config, self.conventions) if config is not None else _no_selection()
        found = checks.before_construction(facts, selection, self.members(), self.conventions)
        early, derived = self._derive_early(cls, facts, selection, config, {v.encoder for v in found})
        self.emit(found + early)
        return checks.Construction(cls, facts, selection, config, derived_early=derived)

    def _derive_early(
        self, cls: type, facts: ModelFacts, selection: checks.Selection, config: Any, rejected: set[str | None]
    ) -> tuple[list[Violation], frozenset[str]]:
        """The encoder configs a KV-cache quantization could break, derived before `__init__` with
        the mixin's own method (config only, no weights): a model that builds its LLM first (Gemma
        4) allocated the LLM's weights before its encoder's config was derived and checked."""
        if self._derive is None or config is None or not checks.kv_quantized(config):
            return [], frozenset()
        found: list[Violation] = []
        derived: set[str] = set()
        for encoder in sorted(facts.entries or {}):
            if encoder in rejected or selection.selected(facts, encoder) is None:
                continue
            try:
                encoder_config = self._derive(cls, config, encoder)
            except Exception:  # the model's own error, raised where the model derives it
                continue
            derived.add(encoder)
            found += checks.encoder_config(facts.model, encoder, encoder_config, self.conventions)
        return found, frozenset(derived)

    def on_encoder_config(self, encoder: str, config: Any) -> None:
        stack = self._state.stack
        if not stack:
            return
        construction = stack[-1]
        construction.encoder_configs.setdefault(encoder, []).append(config)
        if encoder not in construction.derived_early:  # checked, and said, before __init__
            self.emit(checks.encoder_config(construction.facts.model, encoder, config, self.conventions))

    def finish(self, model: Any, construction: checks.Construction) -> None:
        facts = construction.facts
        if construction.selection.disabled:
            self.info_once(
                f"disabled:{facts.model}",
                f"declint runtime shim: {facts.model}: multimodal encoder disabled "
                f"({self.conventions.disable_encoder_attribute}); encoder-presence checks skipped, "
                "the declaration was checked",
            )
            return
        base = self.resolved.get("attention-backend-base")
        if not isinstance(base, type) or facts.entries is None:
            return
        if self.layer_check == "first-use" and not self.probe_sdpa and self._defer(model, construction):
            return
        recorder, construction.recorder = construction.recorder, None  # let the model go with it
        mixin, names = self.resolved.get("encoder-mixin"), self.backend_names()
        recorded = None
        if recorder is not None:
            recorder.done()
            if not self.probe_sdpa:  # the probes go on every encoder module: the walk finds them all
                recorded = checks.recorded_after_construction(
                    model, construction, recorder, base, mixin, self._resolve, names, self.conventions
                )
        if recorded is None:  # something to report, or nothing recorded: walk the model
            violations, encoders = checks.after_construction(
                model, construction, base, mixin, self._resolve, names, self.conventions
            )
        else:
            violations, (encoders, complete) = [], recorded
            if not complete:  # encoder modules may sit in subtrees not looked at: found if ever needed
                with self._lock:
                    self._unwalked[model] = construction
        self._own(encoders, facts.model)
        self.emit(violations)
        if self.probe_sdpa:
            self._attach_probes(facts, encoders)

    # ---- layers checked at first use ---------------------------------------------------------------
    def _defer(self, model: Any, construction: checks.Construction) -> bool:
        """Check the model's layers at its first use; False: it cannot be tracked, check them now."""
        register = getattr(model, "register_forward_pre_hook", None)
        handle = register(_first_forward) if callable(register) else None
        try:
            with self._lock:
                self._pending[model] = (construction, handle)
        except TypeError:  # not weakly referenceable or not hashable
            if handle is not None:
                handle.remove()
            return False
        return True

    def check_pending(self, model: Any) -> None:
        """Check the layers of `model` if it is waiting for its first use (each model once)."""
        if not self._pending:  # the common case once every model was used: one length test
            return
        with self._lock:
            entry = self._pending.pop(model, None)
        if entry is None:
            return
        construction, handle = entry
        if handle is not None:
            handle.remove()
        self.emit(self._walk_layers(model, construction))

    def _pending_owner(self, encoder: Any) -> Any:
        """The waiting model that `encoder` is an encoder module of, if any."""
        with self._lock:
            waiting = list(self._pending.items())
        mixin = self.resolved.get("encoder-mixin")
        for model, (construction, _) in waiting:
            located = checks.locate_encoders(model, construction, mixin, self.conventions)
            if any(module is encoder for modules in located.values() for _, module in modules):
                return model
        return None

    def _walk_layers(self, model: Any, construction: checks.Construction) -> list[Violation]:
        base = self.resolved.get("attention-backend-base")
        if not isinstance(base, type):
            return []
        violations, encoders = checks.after_construction(
            model,
            construction,
            base,
            self.resolved.get("encoder-mixin"),
            self._resolve,
            self.backend_names(),
            self.conventions,
        )
        self._own(encoders, construction.facts.model)
        return violations

    def _attach_probes(self, facts: ModelFacts, encoders: dict[str, list[tuple[str, Any]]]) -> None:
        for encoder, modules in encoders.items():
            entry = facts.entry(encoder)
            if entry is None or entry.kind != "configurable":
                continue
            for _, module in modules:
                report = functools.partial(self._probe_report, facts.model, encoder, entry.backends)
                probe.attach(module, self.conventions.sdpa_allowed_paths, report)

    def _probe_report(self, model: str, encoder: str, backends: tuple[str, ...], calls: tuple[probe.Call, ...]) -> None:
        self.emit([probe.message(call, model, encoder, backends) for call in calls])

    def _resolve(self, name: str) -> type | None:
        if self._lookup is None:
            return None
        try:
            found = self._lookup(name)
        except Exception:
            return None
        return found if isinstance(found, type) else None

    def check_metadata(self, encoder: Any, metadata_cls: Any) -> None:
        if self._pending:  # the encoder's model not used yet: its layers first
            owner = self._pending_owner(encoder)
            if owner is not None:
                self.check_pending(owner)
        base = self.resolved.get("attention-backend-base")
        if not isinstance(metadata_cls, type) or not isinstance(base, type):
            return
        model = self._owners.get(encoder)
        if model is None:
            model = self._owner_from_unwalked(encoder)
        self.emit(checks.metadata(encoder, metadata_cls, base, model, self.conventions))

    def _owner_from_unwalked(self, encoder: Any) -> str:
        """The model of an encoder module that a recorded construction did not locate (see finish)."""
        with self._lock:
            unwalked = list(self._unwalked.items())
            self._unwalked.clear()
        for model, construction in unwalked:
            located = checks.locate_encoders(model, construction, self.resolved.get("encoder-mixin"), self.conventions)
            self._own(located, construction.facts.model)
        return self._owners.get(encoder, "")

    def _own(self, encoders: dict[str, list[tuple[str, Any]]], model: str) -> None:
        """Remember which model each encoder module belongs to (metadata findings name it)."""
        for modules in encoders.values():
            for _, module in modules:
                self._owners[module] = model


# ---- helpers -------------------------------------------------------------------------------------------
def _first_forward(model: Any, args: Any) -> None:
    """The one-shot forward pre-hook of a model waiting for its first use. A module-level function,
    not a bound method: a model copied (copy.deepcopy) or pickled with its hooks must not drag the
    shim, its locks and its patches along; on a copy, which never waited, it does nothing."""
    from declint import runtime_shim  # the installed shim; importing it here: it imports this module

    shim = runtime_shim._ACTIVE
    if shim is not None:
        shim.check_pending(model)


_NOT_RECORDED = "not wrapped: layer_check is first-use (backends are found by a walk at each model's first use)"


def _locate(target: Target, module: types.ModuleType) -> tuple[Any, str | None]:
    """(object, problem): the target inside `module`, or why it does not fit."""
    head, _, member = target.qualname.partition(".")
    found = getattr(module, head, None)
    if found is None:
        return None, "not found"
    if member:
        if not isinstance(found, type):
            return None, f"{head} is not a class"
        found = inspect.getattr_static(found, member, None)
        if found is None:
            return None, "not found"
    return found, _kind_problem(target, found)


def _kind_problem(target: Target, found: Any) -> str | None:
    if target.kind == "class":
        return None if isinstance(found, type) else "not a class"
    if target.kind == "literal":
        return None if typing.get_args(found) else "not a typing.Literal with members"
    if target.kind == "classmethod":
        if not isinstance(found, classmethod):
            return "not a classmethod"
        found = found.__func__
    if not callable(found) or isinstance(found, staticmethod | classmethod):
        return f"not a {target.kind}"
    try:
        parameters = list(inspect.signature(found).parameters.values())
    except (TypeError, ValueError):
        return None
    if target.kind in ("method", "classmethod"):
        parameters = parameters[1:]
    plain = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)
    return signature_problem(target, plain, variadic=variadic)


def _owner(module: types.ModuleType, key: str) -> Any:
    target = next(t for t in TARGETS if t.key == key)
    return getattr(module, target.qualname.partition(".")[0])


def _subclasses(cls: type) -> list[type]:
    seen: list[type] = []
    stack: list[type] = list(cls.__subclasses__())
    while stack:
        sub = stack.pop()
        if sub not in seen:
            seen.append(sub)
            stack.extend(sub.__subclasses__())
    return sorted(seen, key=lambda c: len(c.__mro__))  # bases first: subclasses then see them wrapped


def _config_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    for key in ("model_config", "config"):
        if key in kwargs:
            return kwargs[key]
    return args[0] if args else None


def _no_selection() -> checks.Selection:
    return checks.Selection(overrides={}, default=None, disabled=False, cuda_graph=False)
