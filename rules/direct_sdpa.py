"""DL101 direct-sdpa."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections.abc import Iterator
from typing import ClassVar, NamedTuple, TypeGuard

from declint.config import Config
from declint.discovery import glob_match
from declint.facts import DeclEntry
from declint.hints import hinted_encoder
from declint.index import Ownership, ProjectIndex
from declint.names import NameResolver, Scope
from declint.rule import FileContext, Invalid, TreeRule, Valid
from declint.types import Finding

_HEADER = """\
import functools
import torch
import torch.nn.functional as F
from torch import nn
from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin
from tensorrt_llm._torch.models.modeling_utils import register_input_processor
"""

_CONFIGURABLE_MODEL = """
@register_input_processor(object, model_type="x", placeholder_metadata=dict(placeholder_map={"image": "<i>"}))
class VLModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}

    def __init__(self):
        self.tower = VisionTower()
"""

_FIXED_MODEL = _CONFIGURABLE_MODEL.replace(
    '("VANILLA", "TRTLLM", "FLASHINFER")', 'FixedEncoderAttention("eager SDPA tower")'
).replace("import register_input_processor", "import register_input_processor, FixedEncoderAttention")


def _tower(body: str) -> str:
    return f"\nclass VisionTower(nn.Module):\n    def forward(self, q, k, v):\n{body}"


# Values an alias can be assigned from: a name chain, `a if c else b`, `(x := v)`, or a call
# (partial, getattr, staticmethod); anything else (a constant, an operation) is never SDPA itself.
_ALIAS_VALUES = (ast.Name, ast.Attribute, ast.IfExp, ast.NamedExpr, ast.Call)
_COLLECTED = frozenset({ast.Call, ast.Attribute, ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.ClassDef})
# Class methods that build a Hugging Face model (`transformers.AutoModel.from_config(...)`).
_HF_BUILDERS = frozenset({"from_config", "from_pretrained", "_from_config"})
# Words of an attribute or config name that say a generic `AutoModel` is the language model
# (`self.language_model = AutoModel.from_config(config.text_config)`, LLaVA's pattern), read
# as encoder-name hints are.
_LANGUAGE_HINTS = {"language": ("language", "text", "llm", "lm")}


class _Pending(NamedTuple):
    call: ast.Call
    scope: str
    top: str


class DirectSdpa(TreeRule):
    """An encoder calls scaled-dot-product attention directly.

    A user picks an encoder's attention backend with
    `multimodal_config.encoder_attention_backend`. An encoder that calls
    `torch.nn.functional.scaled_dot_product_attention` itself never reaches that backend, so the
    user's choice is silently ignored while the model claims to honour it.

    Every alias form within the file is resolved: `F.` / `nn.functional.` / the full path,
    from-imports with `as`, `from torch.nn.functional import *`, module aliases,
    `functools.partial(...)`, `getattr(F, "scaled_dot_product_attention")`, and names and
    `self.` attributes assigned from any of these: by a plain, annotated or walrus (`:=`)
    assignment (also a walrus called in place), as a class attribute, through
    `staticmethod(...)` or `torch.compile(...)` (also `torch.compile(mode=...)(f)`), or as
    either branch of `a if c else b`. A `self.` attribute counts in
    the class that assigns it and in its subclasses defined in the same file. Names follow
    Python's scoping: an alias assigned in a function counts there and in nested functions that
    do not rebind the name, a module-level alias everywhere a parameter or a local assignment
    that is no alias does not shadow it; a subclass that assigns `self.x` something else shadows
    its base's alias, and so does one that defines `x` otherwise when the alias is a class
    attribute (an instance attribute hides class attributes). A name imported from another
    module of the project (directly, as `module.name`, also `pkg.mod.name` or `pkg.name` after a
    plain `import pkg.mod`, or through a re-export by name or `*`, also under another name: `from
    .attn_utils import sdpa as attention` in a third module, imported from there) counts when that
    module binds it at module level to SDPA: an import, a plain alias or `functools.partial(...)`,
    in a file the index reads in full (one whose
    encoder classes a model reaches, and the modules those import from; the alias's module when
    its bytes show the binding at column 0, or within three continued lines, or an `import ...
    as`). A module's binding of a name is its last at module level, as Python runs the module
    top to bottom: an import of SDPA that the module then rebinds (an assignment, `def`,
    `class`, `del`) is no alias in its functions, in module-level code below the rebinding, or
    for a module importing the name; a rebinding in an `if`, `try`, `with` or loop may not run
    and leaves the name SDPA (reported), and an import in a function or class body binds no
    module-level name. Not followed: other alias forms in another module, an imported alias
    called in a file whose classes no model reaches (an encoder no model declares: only a
    direct call is reported there), and a base class defined in another module.

    An encoder built on a Hugging Face model and kept by a module (`self.tower = ...`:
    `transformers.AutoModel.from_config(...)` or `from_pretrained`, or a transformers model class
    named after an encoder, `SiglipVisionModel(config)` or `CLIPVisionModel.from_pretrained(...)`,
    through imports; also kept through a method call or an attribute of the result,
    `.to(dtype)`, `SiglipVisionModel(config).vision_model`) is reported where a model declares the encoder configurable: the model's
    attention is its own, so the override is silently ignored (a subclass swapping its tower for
    a Hugging Face one under an inherited declaration). Not a config, tokenizer or processor, a
    language model (`AutoModelForCausalLM`, or an `AutoModel` built from a config named for one,
    `config.text_config`, or else kept as one, `self.language_model`: words `language`, `text`,
    `llm`, `lm`, against the encoder hints), or a model loaded into a local to read its weights;
    nor under a fixed declaration, or in code no model owns.

    Not reported: calls inside the attention-backend packages (`sdpa-allowed-paths`: the VANILLA
    backend *is* SDPA), and calls in an encoder every owning model declares fixed with
    `FixedEncoderAttention(reason)`. A model declaring `encoder_attention_backends = {}` has no
    attention encoder and owns none (an encoder-free subclass leaves its base's declaration in
    charge). A model owns what it references, directly or through the classes, functions and
    module-level values (a registry `{"siglip": Tower}`, a list, `a if c else b`, also imported
    from another module) it references, except a language model it wraps (a class registered
    with `register_auto_model`, see `language-model-decorators`, that is no multimodal model and
    whose name hints at no encoder: `SiglipVisionModel`, registered too, is a vision tower):
    a language model's code (a draft head, an indexer) is no encoder's, and a call no
    multimodal model reaches is not reported there when the language model's file is indexed
    (it holds the call, or a multimodal model references the language model). The message says
    whether the owning model declares the encoder configurable (the override is bypassed) or
    nobody declares it.
    """

    # Names are resolved by declint's light resolver (`declint.names`: Python's scoping rules
    # over the `ast` tree) rather than libcst's scope analysis, which costs about 15x the parse.

    CODE = "DL101"
    NAME = "direct-sdpa"
    SUMMARY = "encoder code calls scaled-dot-product attention directly"
    OPTIONS = ("sdpa-names", "sdpa-allowed-paths", "encoder-name-hints", "language-model-decorators")

    _BYPASS = (
        "{what} calls {sdpa} directly, but {model} declares its {encoder} encoder configurable "
        "({backends}): an encoder_attention_backend override is silently bypassed; route the call "
        "through the attention backend or declare the encoder FixedEncoderAttention(reason)"
    )
    _HF_BYPASS = (
        "{what} builds a Hugging Face model ({built}), whose attention never reaches the attention "
        "backend, but {model} declares its {encoder} encoder configurable ({backends}): an "
        "encoder_attention_backend override is silently ignored; build the encoder on TensorRT-LLM's "
        "attention or declare it FixedEncoderAttention(reason)"
    )
    _UNDECLARED = (
        "{what} calls {sdpa} directly in an encoder no model declares; declare the encoder "
        'FixedEncoderAttention("<reason>") or route the call through the attention backend'
    )

    VALID: ClassVar = (
        Valid(_HEADER + _CONFIGURABLE_MODEL + _tower("        return self.attn(q, k, v)\n")),
        Valid(_HEADER + _FIXED_MODEL + _tower("        return F.scaled_dot_product_attention(q, k, v)\n")),
        Valid(
            "import torch.nn.functional as F\n\n"
            "class VanillaAttention:\n"
            "    def forward(self, q, k, v):\n"
            "        return F.scaled_dot_product_attention(q, k, v)\n",
            path="tensorrt_llm/_torch/attention_backend/vanilla.py",
        ),
        Valid(
            "import torch.nn.functional as F\n\n"
            "def attention(q, k, v):\n"
            "    return F.scaled_dot_product_attention(q, k, v)\n",
            path="tensorrt_llm/_torch/attention/backends/vanilla.py",
        ),
        # A reference that is never called (a registry entry) is not a call site.
        Valid(_HEADER + "FUNCTIONS = {'sdpa': F.scaled_dot_product_attention}\n"),
        # An encoder-free subclass (`{}`) owns no encoder: the fixed declaration of its base holds.
        Valid(
            _HEADER
            + _FIXED_MODEL
            + "\nclass TextModel(VLModel):\n    encoder_attention_backends = {}\n"
            + _tower("        return F.scaled_dot_product_attention(q, k, v)\n")
        ),
        # `attn` is SDPA in `kernel` only: in `forward` it is a loop variable over attention modules.
        Valid(
            _HEADER
            + _CONFIGURABLE_MODEL
            + "\ndef kernel():\n    attn = F.scaled_dot_product_attention\n    return attn\n"
            + _tower("        for attn in self.layers:\n            q = attn(q, k, v)\n")
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            _HEADER + _CONFIGURABLE_MODEL + _tower("        return F.scaled_dot_product_attention(q, k, v)\n"),
            expect=((17, 15),),
            message=(
                "`VisionTower.forward` calls torch.nn.functional.scaled_dot_product_attention directly, "
                "but VLModel declares its vision encoder configurable (VANILLA, TRTLLM, FLASHINFER): an "
                "encoder_attention_backend override is silently bypassed; route the call through the "
                "attention backend or declare the encoder FixedEncoderAttention(reason)"
            ),
        ),
        Invalid(
            _HEADER + "\ndef encode(q, k, v):\n    return torch.nn.functional.scaled_dot_product_attention(q, k, v)\n",
            expect=((9, 11),),
            message=(
                "`encode` calls torch.nn.functional.scaled_dot_product_attention directly in an encoder "
                'no model declares; declare the encoder FixedEncoderAttention("<reason>") or route the '
                "call through the attention backend"
            ),
        ),
        Invalid(
            _HEADER + "\ndef encode(q, k, v):\n    return nn.functional.scaled_dot_product_attention(q, k, v)\n",
            expect=((9, 11),),
        ),
        # The result of a call, assigned to a name, is no alias of SDPA: the call itself is reported.
        Invalid(
            _HEADER + "\ndef encode(q, k, v):\n    out = F.scaled_dot_product_attention(q, k, v)\n    return out\n",
            expect=((9, 10),),
        ),
        Invalid(
            "from torch.nn.functional import scaled_dot_product_attention as sdpa\n\n"
            "def encode(q, k, v):\n    return sdpa(q, k, v)\n",
            expect=((4, 11),),
        ),
        Invalid(
            "import torch.nn.functional as fn\n\ndef encode(q, k, v):\n    return fn.scaled_dot_product_attention(q, k, v)\n",
            expect=((4, 11),),
        ),
        Invalid(
            "import torch.nn.functional as F\n\nattention = F.scaled_dot_product_attention\n\n"
            "def encode(q, k, v):\n    return attention(q, k, v)\n",
            expect=((6, 11),),
        ),
        Invalid(
            "import torch.nn.functional as F\n\nclass Block:\n    def __init__(self):\n"
            "        self.attn_fn = F.scaled_dot_product_attention\n\n"
            "    def forward(self, q, k, v):\n        return self.attn_fn(q,\n            k, v)\n",
            expect=((8, 15),),
        ),
        Invalid(
            "import torch.nn.functional as F\n\nclass Block:\n"
            "    attn_fn = staticmethod(F.scaled_dot_product_attention)\n\n"
            "    def forward(self, q, k, v):\n        return self.attn_fn(q, k, v)\n",
            expect=((7, 15),),
        ),
        Invalid(
            "from typing import Callable\nimport torch.nn.functional as F\n\nclass Base:\n"
            "    def __init__(self, use_sdpa):\n"
            "        self.attn_fn: Callable = F.scaled_dot_product_attention if use_sdpa else self.eager\n\n"
            "class Block(Base):\n    def forward(self, q, k, v):\n        return self.attn_fn(q, k, v)\n",
            expect=((10, 15),),
        ),
        Invalid(
            "import functools\nimport torch.nn.functional as F\n\n"
            "causal = functools.partial(F.scaled_dot_product_attention, is_causal=True)\n\n"
            "def encode(q, k, v):\n    return causal(q, k, v)\n",
            expect=((7, 11),),
        ),
        Invalid(
            "from functools import partial\nimport torch.nn.functional as F\n\n"
            "def encode(q, k, v, run):\n    return run(partial(F.scaled_dot_product_attention, scale=1.0), q, k, v)\n",
            expect=((5, 15),),
        ),
        Invalid(
            "import torch.nn.functional as F\n\n"
            'def encode(q, k, v):\n    return getattr(F, "scaled_dot_product_attention")(q, k, v)\n',
            expect=((4, 11),),
        ),
    )

    def __init__(self, context: FileContext, tree: ast.Module) -> None:
        super().__init__(context, tree)
        self._sdpa_names = frozenset(self.config.str_list("sdpa-names"))
        self._sdpa_modules = {name.rpartition(".")[0]: name.rpartition(".")[2] for name in self._sdpa_names}
        self._names = NameResolver(tree, context.module, context.source.rel.endswith("__init__.py"), last_binding=True)
        # Names other modules bind to SDPA: an imported name called one of these is asked of the
        # index (through the context's, so the cache records the answer); any other name is not.
        self._imported = frozenset(_bound_names(self.config, self.index))
        self._assignments: list[tuple[ast.expr, ast.expr]] = []  # (target, value) that may alias SDPA
        self._calls: list[_Pending] = []
        # Aliases are keyed by the binding they live in, so they follow Python's scoping: a name by
        # (id(scope binding it), name), a `self.` attribute by (id(class scope), attribute).
        self._name_aliases: set[tuple[int, str]] = set()
        self._attribute_aliases: set[tuple[int, str]] = set()
        self._self_stores: set[tuple[int, str]] = set()  # every `self.x = ...`, alias or not
        self._class_named: dict[tuple[int, str], Scope] = {}  # (id(enclosing scope), name) -> its scope
        self._class_bases: dict[int, list[ast.expr]] = {}  # id(class scope) -> the class's bases
        self._chains: dict[int, list[Scope]] = {}  # id(class scope) -> `_class_chain`, once computed
        self._bound: set[int] = set()  # nodes not to report as a call site of their own
        self._kept: dict[int, str] = {}  # calls whose value a module keeps (`self.x = Call(...)`) -> x
        self._hints = {k: tuple(v) for k, v in dict(self.config.get("encoder-name-hints")).items()}

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        return cls.index_needles(config)

    @classmethod
    def index_needles(cls, config: Config) -> tuple[bytes, ...]:
        """A module binding an alias of SDPA names it: indexed in full, its bindings are known."""
        return tuple(name.encode() for name in _short_names(config))

    @classmethod
    def indexes(cls, data: bytes, config: Config) -> bool:
        """A module that may bind an alias of SDPA at module level (`x = ...sdpa...`, on a line
        of its own or continued below, or `import ... sdpa as x`): indexed in full so that other
        modules' imports of the alias resolve. Most files naming SDPA only call it (each of the
        20 in the transformers sources): indexing them would parse them for nothing. One that
        registers a language model too (`language-model-decorators`): its classes tell whether the
        call is a language model's, no encoder's."""
        if _alias_binding(config).search(data) is not None:
            return True
        return any(name.rpartition(".")[2].encode() in data for name in config.str_list("language-model-decorators"))

    @classmethod
    def prefilter(cls, data: bytes, config: Config, index: ProjectIndex) -> bool:
        # A file calling an alias imported from another module names the alias, not SDPA. Not a
        # needle of the scan (which runs before the index knows the aliases, and would then read
        # every file again for them): an encoder's file is indexed in full anyway, since its
        # classes are reached from a model (ownership), and an indexed file is always checked,
        # with this prefilter asked of the index the check has.
        return cls._may_call_sdpa(data, config, index) or _may_build_hugging_face_model(data)

    @classmethod
    def _may_call_sdpa(cls, data: bytes, config: Config, index: ProjectIndex) -> bool:
        if super().prefilter(data, config, index):
            return True
        return any(name.encode() in data for name in _bound_names(config, index))

    @classmethod
    def applies_to(cls, context: FileContext) -> bool:
        if glob_match(context.rel, context.config.str_list("sdpa-allowed-paths")):
            return False
        if cls._may_call_sdpa(context.source.data, context.config, context.index):
            return True
        # Only a Hugging Face model may be built here (transformers' docstrings say
        # `from_pretrained` everywhere): parsed only when a model owns its code (then indexed in
        # full), the one place it is reported.
        facts = context.facts
        names = [item.qualname for item in facts.classes] + [item.qualname for item in facts.functions]
        return any(context.index.owners(name) for name in names)

    def check(self) -> list[Finding]:
        self.walk(self._visit)
        # Aliases may be bound after their use in source order (`__init__` below `forward`), and
        # from one another, so they are resolved once the whole file is known.
        self._resolve_aliases()
        for pending in self._calls:
            self._check_call(pending)
        return self.findings

    # ---- collecting -----------------------------------------------------------------------
    def _visit(self, node: ast.AST) -> bool:
        if type(node) not in _COLLECTED:  # most nodes: one set lookup, not five isinstance checks
            return True
        if isinstance(node, ast.Call):
            self._calls.append(_Pending(node, self.scope_name, self._top))
        elif isinstance(node, ast.Attribute):
            self._visit_attribute(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self._note_assignment(target, node.value)
            self._note_kept(node.targets, node.value)
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            self._note_assignment(node.target, node.value)
            self._note_kept([node.target], node.value)
        elif isinstance(node, ast.ClassDef):
            self._visit_class(node)
        return True

    def _note_kept(self, targets: list[ast.expr], value: ast.expr) -> None:
        """A call assigned to `self.x`: what it builds becomes part of the module (a tower)."""
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                self._kept.update((id(call), target.attr) for call in _kept_calls(value))
                return

    def _visit_attribute(self, node: ast.Attribute) -> None:
        """Note every `self.x = ...`: an assignment that is no alias shadows a base class's alias."""
        if isinstance(node.ctx, ast.Store):
            owner = self._self_class(node)
            if owner is not None:
                self._self_stores.add((id(owner), node.attr))

    def _visit_class(self, node: ast.ClassDef) -> None:
        scope = self._names.scope_of(node)
        if scope is not None and scope.parent is not None:
            self._class_named[(id(scope.parent), node.name)] = scope
            self._class_bases[id(scope)] = node.bases

    def _note_assignment(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name | ast.Attribute) and isinstance(value, _ALIAS_VALUES):
            self._assignments.append((target, value))

    @property
    def _top(self) -> str:
        return self._scope[0] if self._scope else ""

    # ---- aliases --------------------------------------------------------------------------
    def _resolve_aliases(self) -> None:
        """Mark every assignment whose value may be SDPA, until no new alias appears."""
        pending = self._assignments
        while pending:
            remaining = [(target, value) for target, value in pending if not self._bind_alias(target, value)]
            if len(remaining) == len(pending):
                return
            pending = remaining

    def _bind_alias(self, target: ast.expr, value: ast.expr) -> bool:
        if not self._produces_sdpa(value):
            return False
        self._mark_bound(value)  # a named alias is no call site
        if isinstance(target, ast.Name):
            scope = self._names.binding_scope(target)
            if scope is not None:
                self._name_aliases.add((id(scope), target.id))
        elif isinstance(target, ast.Attribute):
            owner = self._self_class(target)
            if owner is not None:
                self._attribute_aliases.add((id(owner), target.attr))
        return True

    def _is_name_alias(self, node: ast.Name) -> bool:
        if not (self._name_aliases or self._names.star_modules):
            return False  # the common case, answered without a lookup
        scope = self._names.binding_scope(node)
        if scope is None:  # bound nowhere in the file: maybe by `from torch.nn.functional import *`
            starred = frozenset(f"{module}.{node.id}" for module in self._names.star_modules)
            return bool(starred & self._sdpa_names) or self._imported_alias(starred)
        return (id(scope), node.id) in self._name_aliases

    def _is_self_alias(self, node: ast.Attribute) -> bool:
        """May `self.x` be SDPA? The nearest class (own, then in-file bases) that assigns `self.x`
        decides, for an instance attribute hides every class attribute; failing that, the nearest
        class whose body binds `x` (a method `def x` shadows a base's class-attribute alias)."""
        if not (self._attribute_aliases or self._name_aliases):
            return False
        owner = self._self_class(node)
        chain = self._class_chain(owner) if owner is not None else []
        assigning = next((cls for cls in chain if (id(cls), node.attr) in self._self_stores), None)
        if assigning is not None:
            return (id(assigning), node.attr) in self._attribute_aliases
        defining = next((cls for cls in chain if node.attr in cls.bound), None)
        return defining is not None and (id(defining), node.attr) in self._name_aliases

    def _self_class(self, node: ast.Attribute) -> Scope | None:
        """The class scope of `self` in `self.x`: `self` is bound by a method of that class."""
        if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return None
        method = self._names.binding_scope(node.value)
        if method is None or method.kind != "function" or method.parent is None:
            return None
        return method.parent if method.parent.kind == "class" else None

    def _class_chain(self, cls: Scope) -> list[Scope]:
        """`cls`, then its bases defined in this file, depth-first, each once (bases elsewhere are
        not followed: what another module assigns to `self` is not known here)."""
        chain = self._chains.get(id(cls))
        if chain is None:
            chain = self._chains[id(cls)] = []
            seen: set[int] = set()
            stack = [cls]
            while stack:
                current = stack.pop()
                if id(current) not in seen:
                    seen.add(id(current))
                    chain.append(current)
                    stack.extend(reversed(self._base_scopes(current)))
        return chain

    def _base_scopes(self, cls: Scope) -> list[Scope]:
        scopes = []
        for base in self._class_bases.get(id(cls), ()):
            if isinstance(base, ast.Name):
                where = self._names.binding_scope(base)
                found = self._class_named.get((id(where), base.id))
                if found is not None:
                    scopes.append(found)
        return scopes

    # ---- resolution -----------------------------------------------------------------------
    def _check_call(self, pending: _Pending) -> None:
        call = pending.call
        if id(call) in self._bound:
            return
        if self._produces_sdpa(call.func):
            self._bound.add(id(call.func))
            self._report(call, pending.scope, pending.top)
        elif self._is_partial_or_getattr(call):
            self._mark_bound(call)  # one finding for `partial(partial(F.sdpa, ...), ...)`
            self._report(call, pending.scope, pending.top)  # created and passed on without a name
        elif (built := self._hugging_face_model(call)) is not None:
            message = self._hf_message(built, pending.scope, pending.top)
            if message is not None:
                self.report(call, message, pending.scope)

    def _hugging_face_model(self, call: ast.Call) -> str | None:
        """The Hugging Face model this call builds and a module keeps (`self.x = ...`), as the
        call names it through imports: `transformers.AutoModel` (`from_config`,
        `from_pretrained`), or a transformers model class named after an encoder
        (`SiglipVisionModel(config)`, `CLIPVisionModel.from_pretrained(path)`). Not a config,
        tokenizer or processor (`AutoProcessor.from_pretrained`), a language model
        (`AutoModelForCausalLM`), or a model only loaded to read its weights (red-team 51)."""
        if id(call) not in self._kept:
            return None
        func, method = call.func, ""
        if isinstance(func, ast.Attribute) and func.attr in _HF_BUILDERS:
            method = f".{func.attr}"
            func = func.value
        for name in sorted(self._names.qualified(func)):
            if name.startswith("transformers.") and self._is_hf_encoder_class(name.rpartition(".")[2]):
                return None if self._names_language_model(call, name) else name + method
        return None

    def _names_language_model(self, call: ast.Call, built: str) -> bool:
        """A generic `AutoModel` built from a config named as a language model's, or else kept as
        one. The config it is built from decides first: `self.vision_language_adapter =
        AutoModel.from_config(config.vision_config)` is a vision tower (red-team 61)."""
        if built.rpartition(".")[2] != "AutoModel":
            return False  # a class named after an encoder says which it is
        first = call.args[0] if call.args else None
        for word in (first.attr if isinstance(first, ast.Attribute) else "", self._kept[id(call)]):
            hinted = hinted_encoder(word, {**self._hints, **_LANGUAGE_HINTS})
            if hinted is not None:
                return hinted in _LANGUAGE_HINTS
        return False

    def _is_hf_encoder_class(self, name: str) -> bool:
        if name == "AutoModel":
            return True
        if not name.endswith(("Model", "Encoder", "Transformer")) and not name.startswith("AutoModel"):
            return False
        return hinted_encoder(name, self._hints) is not None

    def _hf_message(self, built: str, scope: str, top: str) -> str | None:
        """Reported only where a model declares the encoder configurable (a tower on a Hugging Face
        model is fine in an encoder declared fixed, and no finding of its own elsewhere)."""
        configurable = _configurable(self._verdicts(self._owners(top)), self.index)
        if configurable is None:
            return None
        return _bypass(self._HF_BYPASS, f"`{scope}`" if scope else "module-level code", *configurable, built=built)

    def _produces_sdpa(self, node: ast.expr) -> bool:
        """May `node` evaluate to the SDPA function itself (not to the result of calling it)?

        Either branch of `a if c else b` counts, `(x := f)` is `f`, and `staticmethod(f)` is `f`
        (callable since 3.10).
        """
        if not isinstance(node, ast.IfExp | ast.Call | ast.NamedExpr):
            return self._is_sdpa(node)  # the common case, without building a list
        return any(self._is_sdpa(part) for part in self._alternatives(node))

    def _alternatives(self, node: ast.expr) -> list[ast.expr]:
        """`node` and what it may evaluate to: the branches of `a if c else b`, the value of
        `(x := v)` (called in place, it is no name to look up), the argument of `staticmethod(f)`;
        flattened without recursion (a long `if`-`else` chain stays cheap)."""
        found: list[ast.expr] = []
        stack = [node]
        while stack:
            current = stack.pop()
            found.append(current)
            if isinstance(current, ast.IfExp):
                stack += (current.orelse, current.body)
            elif isinstance(current, ast.NamedExpr):
                stack.append(current.value)
            elif _may_be_staticmethod(current) and "builtins.staticmethod" in self._names.qualified(current.func):
                stack.append(current.args[0])
            elif _is_wrapper_call(current) and "torch.compile" in self._names.qualified(current.func):
                stack.append(current.args[0])  # torch.compile(f) runs f's own code
            elif _is_wrapper_call(current) and self._is_compile_decorator(current.func):
                stack.append(current.args[0])  # torch.compile(fullgraph=True)(f), as a decorator is applied
        return found

    def _is_compile_decorator(self, node: ast.expr) -> bool:
        """`torch.compile(...)` with options only: the decorator it returns wraps what it is given."""
        return isinstance(node, ast.Call) and not node.args and "torch.compile" in self._names.qualified(node.func)

    def _mark_bound(self, value: ast.expr) -> None:
        """`value` and the partials and getattrs it wraps are one alias, not calls of their own
        (`partial(partial(F.sdpa, dropout_p=0.0), is_causal=False)`: the inner partial is no call site)."""
        stack = [value]
        while stack:
            for part in self._alternatives(stack.pop()):
                self._bound.add(id(part))
                if isinstance(part, ast.Call) and "functools.partial" in self._names.qualified(part.func):
                    stack.extend(_arguments(part)[:1])

    def _is_sdpa(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            return self._is_partial_or_getattr(node)  # a call's *result* is no alias
        qualified = self._names.qualified(node)
        if qualified & self._sdpa_names or self._imported_alias(qualified):
            return True
        if isinstance(node, ast.Name):
            return self._is_name_alias(node)
        if isinstance(node, ast.Attribute):
            return self._is_self_alias(node)
        return False

    def _imported_alias(self, qualified: frozenset[str]) -> bool:
        """Is one of these imported names bound to SDPA in its module (an alias or a partial,
        maybe re-exported)? Only names another module binds to SDPA are asked of the index."""
        return any(
            name.rpartition(".")[2] in self._imported and self.index.resolve_callable(name) in self._sdpa_names
            for name in qualified
        )

    def _is_partial_or_getattr(self, call: ast.Call) -> bool:
        callee = self._names.qualified(call.func)
        if not ("functools.partial" in callee or "builtins.getattr" in callee):
            return False  # most calls: no need to sort their arguments
        arguments = _arguments(call)
        if not arguments:
            return False
        if "functools.partial" in callee:
            return self._produces_sdpa(arguments[0])
        if "builtins.getattr" in callee and len(arguments) >= 2:
            attribute = arguments[1]
            if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str):
                wanted = attribute.value
                modules = self._names.qualified(arguments[0])
                if any(self._sdpa_modules.get(module) == wanted for module in modules):
                    return self._one_literal(attribute)
        return False

    def _one_literal(self, node: ast.Constant) -> bool:
        """One string literal, not an implicit concatenation `"a" "b"` (ast merges those)."""
        segment = self.segment(node)
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(f"({segment})").readline))
        except (tokenize.TokenError, SyntaxError):
            return False
        return sum(token.type == tokenize.STRING for token in tokens) == 1

    # ---- reporting ------------------------------------------------------------------------
    def _report(self, node: ast.Call, scope: str, top: str) -> None:
        message = self._message(scope, top)
        if message is not None:
            self.report(node, message, scope)

    def _message(self, scope: str, top: str) -> str | None:
        what = f"`{scope}`" if scope else "module-level code"
        sdpa = sorted(self._sdpa_names)[0]
        qualname = f"{self.context.module}.{top}"
        owners = self._owners(top)
        if not owners and top and self.index.language_owned(qualname):
            return None  # a language model's code (a draft head, an indexer): no encoder's
        verdicts = self._verdicts(owners)
        configurable = _configurable(verdicts, self.index)
        if configurable is not None:
            return _bypass(self._BYPASS, what, *configurable, sdpa=sdpa)
        if verdicts and all(e is not None and e.kind == "fixed" for _, e in verdicts):
            return None
        return self._UNDECLARED.format(what=what, sdpa=sdpa)

    def _verdicts(self, owners: list[Ownership]) -> list[tuple[Ownership, DeclEntry | None]]:
        """Each owning model with its entry for the encoder it owns the code as."""
        verdicts = []
        for owner in owners:
            model = self.index.classes[owner.model]
            declared = self.index.effective_declaration(model)
            if declared is not None and declared[0].empty:
                continue  # `{}`: a model without an attention encoder owns none (its base may)
            verdicts.append((owner, declared[0].entry(owner.encoder) if declared else None))
        return verdicts

    def _owners(self, top: str) -> list[Ownership]:
        """The models owning the file's top-level `top`: none when the index knows its module
        from another file (`pkg/ns.py` beside a package `pkg/ns/`: Python imports the package,
        and the two name classes alike; red-team 49)."""
        owners = self.index.owners(f"{self.context.module}.{top}") if top else []
        if not owners:
            return []  # asked first: the module lookup below reads a placeholder (and the engine
            # then indexes it in full) where no model owns anything (transformers: 38 files, +0.8 s)
        known = self.index.modules.get(self.context.module)
        return owners if known is not None and known.path == self.context.rel else []


def _configurable(
    verdicts: list[tuple[Ownership, DeclEntry | None]], index: ProjectIndex
) -> tuple[Ownership, tuple[str, ...]] | None:
    """The first owner declaring the encoder configurable, with the backends it lists."""
    for owner, entry in verdicts:
        if entry is not None and entry.kind in ("configurable", "all"):
            return owner, index.entry_backends(entry) or ()  # get_args of another Literal: none known
    return None


def _bypass(template: str, what: str, owner: Ownership, members: tuple[str, ...], **more: str) -> str:
    """A configurable owner's message (`_BYPASS`, `_HF_BYPASS`)."""
    model = owner.model.rpartition(".")[2]
    return template.format(what=what, model=model, encoder=owner.encoder, backends=", ".join(members), **more)


@functools.lru_cache(maxsize=8)
def _alias_pattern(names: tuple[str, ...]) -> re.Pattern[bytes]:
    alternatives = b"|".join(re.escape(name.encode()) for name in names)
    return re.compile(
        rb"\b(?:" + alternatives + rb")\s+as\s"  # an import under another name
        # a module-level assignment (column 0) naming it, on its line or up to 3 continued lines
        rb"|^[A-Za-z_]\w*(?:[ \t]*:[^=\n]*)?[ \t]*=(?!=)[^\n]*(?:\n[ \t]+[^\n]*){0,3}?\b(?:" + alternatives + rb")\b",
        re.MULTILINE,
    )


def _alias_binding(config: Config) -> re.Pattern[bytes]:
    return _alias_pattern(_short_names(config))


def _short_names(config: Config) -> tuple[str, ...]:
    """The last component of each `sdpa-names` entry (`scaled_dot_product_attention`), sorted."""
    return tuple(sorted({name.rpartition(".")[2] for name in config.str_list("sdpa-names")}))


def _bound_names(config: Config, index: ProjectIndex) -> tuple[str, ...]:
    """The short names modules of the project bind directly to SDPA (none in an empty index)."""
    return index.names_bound_to(tuple(sorted(config.str_list("sdpa-names"))))


def _may_build_hugging_face_model(data: bytes) -> bool:
    return b"transformers" in data  # a model class may be built directly: `SiglipVisionModel(config)`


def _kept_calls(value: ast.expr) -> Iterator[ast.Call]:
    """The calls whose result `self.x = value` keeps: the value, and through method calls and
    attributes on a call's result, the call they start from (`AutoModel.from_config(c).to(dtype)`,
    `SiglipVisionModel(c).vision_model`)."""
    node: ast.expr | None = value
    while node is not None:
        if isinstance(node, ast.Call):
            yield node
            node = node.func.value if isinstance(node.func, ast.Attribute) else None
        elif isinstance(node, ast.Attribute):
            node = node.value
        else:
            node = None


def _is_wrapper_call(node: ast.expr) -> TypeGuard[ast.Call]:
    """A call with a positional first argument it may wrap (`torch.compile(f, mode=...)`)."""
    return isinstance(node, ast.Call) and bool(node.args) and not isinstance(node.args[0], ast.Starred)


def _may_be_staticmethod(node: ast.expr) -> TypeGuard[ast.Call]:
    """`staticmethod(f)` as written (whether the name is the builtin is the resolver's call)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "staticmethod"
        and len(node.args) == 1
        and not node.keywords
    )


def _arguments(call: ast.Call) -> list[ast.expr]:
    """Positional and keyword argument values in source order, like libcst's `Call.args`."""
    values = [arg.value if isinstance(arg, ast.Starred) else arg for arg in call.args]
    values += [keyword.value for keyword in call.keywords]
    return sorted(values, key=lambda value: (value.lineno, value.col_offset))
