"""DL106 metadata-backend-mismatch."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

from declint.config import Config
from declint.facts import FactOptions, extract_facts
from declint.index import ProjectIndex
from declint.lazy import lazy_module
from declint.needles import metadata_cls
from declint.prefilter import PlaceholderFacts
from declint.rule import FileContext, Invalid, Rule, Valid, name_matches_any

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = lazy_module("libcst")  # imported when a file is first checked (see declint/lazy.py)

_HEAD = (
    "import copy\nimport dataclasses\n"
    "from tensorrt_llm._torch.attention_backend.utils import create_attention, get_attention_backend\n"
    "from tensorrt_llm._torch.attention_backend.interface import AttentionMetadata\n"
    "from tensorrt_llm._torch.modules.attention import Attention\n\n"
    "class VisionEncoder:\n"
    "    def __init__(self, model_config, encoder_backend):\n"
)


_DERIVATIONS = ("replace", "deepcopy", "copy")
# Marks a local name with the function it belongs to (`model_config@f2`, see `_seal`); a rebound
# name's earlier config is `model_config@0` (`_retire`), both written `model_config` (`_shown`).
_SCOPE = "@f"
# Backend functions that build a layer (their first argument is the layer's backend); the others
# in `backend-functions` (`get_attention_backend`) pick a class.
_LAYER_FACTORIES = ("create_attention",)
# Methods of a logger (`logger.info`, `logging.warning`, TensorRT-LLM's `logger.info_once`):
# a config handed to them, or to `print`, is shown, not built into a layer.
_LOG_METHODS = frozenset(
    ("debug", "info", "warning", "warn", "error", "exception", "critical", "log", "info_once", "warning_once")
)
# Builtins that read, show or test a value and never build a layer from it (`str(vcfg)`).
_SHOWING = frozenset(
    {"getattr", "setattr", "hasattr", "str", "repr", "format", "len", "id", "hash", "type", "isinstance", "vars", "dir"}
)


class _Override(NamedTuple):
    """A config derived from `source` whose attn_backend is set (to `pinned`, if a literal)."""

    source: str
    pinned: str | None
    where: cst.CSTNode  # its assignment's target; its line is asked for only in a message
    value: cst.BaseExpression | None = None  # the backend expression it sets
    scope: str = ""  # the function `value` was written in (`_seal`): its local names are that function's
    via: str | None = None  # the helper whose call derived it (`_vision_sub_config`), for messages


# Where an arm of a conditional is (`_Arm`): each test it passes, as written, with the side taken
# (0: `a` in `a if c else b`, 1: `b`).
_Path = tuple[tuple[str, int], ...]


class _Arm(NamedTuple):
    """One value a backend expression may take: `a if c else b` is a or b (nested too); anything
    else is itself, on the empty path."""

    path: _Path
    written: cst.BaseExpression  # as written in its conditional (the whole expression, for no conditional)
    resolved: cst.BaseExpression  # its local names replaced by their values then (`_locals_now`)


class _Direct(NamedTuple):
    """Attention layers given their backend by name, not through a config: `create_attention(
    name, ...)`, or a backend keyword (`Attention(..., attn_backend=name)`)."""

    node: cst.BaseExpression  # the backend expression, its local names replaced by their values then
    code: str  # as written
    pinned: str | None  # the backend it names, when written (a string or pinned constant)
    where: cst.CSTNode  # the expression as written; its line is asked for only in a message
    scope: str  # the function it was written in (`_seal`)
    via: str | None = None  # the helper whose call set it (`Attention(config=_vision_sub_config(c))`)
    # For a conditional (`"TRTLLM" if c else "VANILLA"`), one _Direct an arm: the arm as written
    # (`node` is it resolved, `pinned` its backend; `code` stays the whole), its path, and the
    # local name that holds the conditional, if the layers are given one (`backend`).
    arm: cst.BaseExpression | None = None
    path: _Path = ()
    holder: str | None = None


class _Helper(NamedTuple):
    """A function of this file, or a method of the encoder, that returns its parameter `config`
    unchanged (`same`), a copy of it (`copy`) or a copy with the backend keyword `keyword` set to
    `value` (`override`), `value` written with the function's parameters (its other local names
    replaced by what they hold; None when they hold something the rule cannot write). Or one that
    returns a backend (`backend`, no `config`): `value` is what it returns, so written
    (`return backend or self.config.attn_backend`)."""

    name: str
    positional: tuple[str, ...]  # after self or cls, unless static
    keyword_only: tuple[str, ...]
    defaults: tuple[tuple[str, cst.BaseExpression], ...]
    config: str
    kind: str
    keyword: str = ""
    value: cst.BaseExpression | None = None


class _Handing(NamedTuple):
    """A `self.method(...)` call in the encoder: what it hands the method's parameters, its local
    names replaced by their values then (`_locals_now`), and as written (for messages)."""

    method: str
    positional: tuple[tuple[cst.BaseExpression, cst.BaseExpression], ...]  # (value, as written)
    keywords: tuple[tuple[str, cst.BaseExpression, cst.BaseExpression], ...]  # (keyword, value, as written)
    call: cst.Call
    scope: str  # the function it was written in (`_seal`)
    bindable: bool  # no `*args` or `**kwargs`: each parameter's value is known


# What a call hands a parameter (`_arguments`): the value, the function it was written in, and
# the expression as written (the call itself for a default), for a message's line.
_Argument = tuple["cst.BaseExpression", str, "cst.CSTNode"]


class _MetadataSource(NamedTuple):
    node: cst.BaseExpression
    config: str | None  # root name of the config whose backend picks the metadata class (see `_retire`)
    fixed: str | None  # a metadata class or backend name written in the code
    argument: cst.BaseExpression | None = None  # get_attention_backend's argument as written
    resolved: cst.BaseExpression | None = None  # the same, its local names replaced by their values then
    scope: str = ""  # the function it was written in (`_seal`)
    arms: tuple[_Arm, ...] = ()  # the arms of `resolved` (`_arms`), to pair with the layers' arms


class MetadataBackendMismatch(Rule):
    """An encoder takes its metadata class and its attention layers' backend from different sources.

    An encoder sets `self.metadata_cls` (the metadata object the engine builds and hands to every
    attention layer) and separately builds its attention layers from a config's `attn_backend`.
    Two independent reads of the backend name: as soon as a per-encoder override changes one and
    not the other, the layers receive metadata of another backend, and the first forward fails
    with `AttributeError: 'TrtllmAttentionMetadata' object has no attribute 'kv_layout'`.

    Reported: the metadata class derived from `get_attention_backend(model_config.attn_backend)`
    while the layers get a config whose backend is overridden (`dataclasses.replace(...,
    attn_backend=...)`, its keyword unpacked from `**{...}` or `**dict(...)` too, a copy with
    `attn_backend` assigned, or either arm of `a if c else b`, as an `if` statement would assign
    it, or a helper's call: a function of the same file, or a method of the encoder called on
    `self` or `cls`, whose straight-line body returns a copy of a parameter with `attn_backend`
    set, as GLM5's `_vision_sub_config(config)` returns `dataclasses.replace(config,
    attn_backend="VANILLA")`, is that override of its argument; one that returns its parameter
    is that config; a helper that branches, or one imported from another module, is not
    followed: the rule reads one file); a metadata class hard-coded to one backend (a metadata
    class, or `get_attention_backend("TRTLLM")`) while the layers follow a config; layers pinned
    to one backend (a string, or a module-level constant such as `BACKEND_TRTLLM`) with
    `get_attention_backend` of another; and layers given a backend by name
    (`create_attention(encoder_backend, ...)`, or a backend keyword on an attention layer:
    `Attention(..., attn_backend=encoder_backend)`, also bound with `functools.partial` or
    unpacked from `**{"attn_backend": ...}` or `**dict(...)`, or set by a config derived in the
    layer's own arguments: `Attention(config=dataclasses.replace(c, attn_backend=...))`) other
    than the one the metadata class comes from. A backend the layers are given by a conditional
    (`"TRTLLM" if use_trt else "VANILLA"`, nested too, passed as it is, to `create_attention` or
    through a local name) may be either arm: each arm is judged as the layers' backend (the
    finding, on `self.metadata_cls`, names the arm's line), against the metadata class's arm on
    the same tests where that is derived from the same conditional (`get_attention_backend(
    backend)`, or a conditional on the same tests written out), so that the TRTLLM arm goes with
    TRTLLM metadata; an arm `None` gives no backend. Not split into arms: a conditional in an
    override kept under a name (`vision_config = dataclasses.replace(c, attn_backend=a if b else
    x)`; one in the layer's own arguments is), kept on `self`, handed to a method, or on the
    metadata class's side only. The reverse too: the metadata class derived from an override
    (`vision_config.attn_backend`, or `model_config` rebound to its override) while the layers
    get the config it overrides, unless some layers get the override (the rule does not know
    which calls build attention layers: `PatchEmbed(model_config)` next to
    `Attention(config=vision_config)` is taken for a layer without metadata). Not so for a
    second override of that config to another backend (`merger_config =
    dataclasses.replace(model_config, attn_backend="VANILLA")` beside `vision_config`'s, the
    metadata class from `vision_config`) handed to a call named like an attention layer
    (`Attention(config=merger_config)`): a config given a backend of its own is made for layers
    that read it, and they get the encoder's metadata (a merger kept on SDPA on purpose must
    build no TensorRT-LLM attention layer); handed to another call
    (`AudioEncoder(audio_config)`, a projector) it may go with metadata of its own. A config
    handed to `print` or a logger's method (`logger.info("%s",
    str(vcfg))`, anything in its arguments) or a builtin that shows it (`repr(vcfg)`) builds no
    layer; one handed to any other call does (a validator, `check_backend(vcfg)`, is read as
    building layers). A config is
    a name used as one (derived, copied, its `attn_backend` read), however it is spelled
    (`vision_cfg`); `setattr(c, "attn_backend", b)` is `c.attn_backend = b`. A config name rebound to its override (`model_config =
    dataclasses.replace(model_config, attn_backend=...)`, or a copy under the same name given the
    backend) is the overridden config from there on and the original before: a metadata class
    read from it after the rebinding follows the layers, one read before does not; likewise a copy
    read before `attn_backend` is set on it. A name given a config and, on another branch, its
    override (`vision_config = model_config`, then `if b: vision_config = dataclasses.replace(
    model_config, attn_backend=b)`; the two arms of an `if`, in either order; on `self` too)
    holds the override, as `a if c else b` does: layers and a metadata class read from it agree,
    one read before the override does not. Not followed: which branch runs (the override given
    first and the config after, in straight-line code, is still taken for the override), and a
    backend read by expression before a rebinding (`backend = model_config.attn_backend`, then
    the rebinding) is judged as if read after it. A method's local names are its own (a factory
    classmethod's `model_config`, rebound to an override, is not `__init__`'s), but a parameter is
    what the class hands it (`self._make(model_config, b)`, by position or keyword; the first such
    call counts); what a method keeps on `self` is the class's, in every method. One backend written two ways is one: a name through
    what it was given
    (`self.backend = model_config.attn_backend`), `getattr(c, "attn_backend")` as
    `c.attn_backend`, an unchanged copy of a config as the config, the backend an override sets;
    a local name is what it holds where it is used (`backend = "VANILLA"` afterwards does not
    change what the metadata class was derived from), `self.x` what the class sets it to, a
    method's parameter what `self.method(...)` hands it when every such call in the class hands it
    one backend (calls that differ are each judged: `self._layer(override)` beside
    `self._layer(config.attn_backend)` gives one of the layers other metadata; a parameter no call
    hands a value is the backend passed as it); `a or b` by what a and b read
    (`override or config.attn_backend` is `override or self.config.attn_backend` where
    `self.config = config`; `None or x` is x); a helper's call (a function of the file, or a
    method on `self`, whose straight-line body returns a backend: `def _backend(self, b=None):
    return b or self.config.attn_backend`) as what it returns, in the caller's names, both where
    two backends are compared and where the metadata class's config is asked
    (`get_attention_backend(self._backend())`, `_backend` returning `self.config.attn_backend`,
    reads self.config, as the direct spelling does). Aliased imports (`get_attention_backend as gab`) and a kept backend class (`cls =
    get_attention_backend(...)`, then `cls.Metadata`) are followed. A config may be kept under a name
    or on `self` (`self.vision_config`), and copied (`self.model_config = model_config`). Layers
    pinned next to a hard-coded metadata class are not judged (which backend a class pairs with
    is the runtime shim's to check). Derive both from the same config.
    """

    CODE = "DL106"
    NAME = "metadata-backend-mismatch"
    SUMMARY = "an encoder derives its metadata class and its attention layers' backend differently"
    OPTIONS = ("backend-functions", "backend-context-names", "metadata-base")  # metadata-base: via the index

    VALID: ClassVar = (
        Valid(
            _HEAD + "        vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)\n"
            "        self.attn = Attention(config=vision_config)\n"
            "        self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata\n"
        ),
        Valid(
            _HEAD + "        self.attn = Attention(config=model_config)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n"
        ),
        Valid(
            _HEAD + '        vision_config = dataclasses.replace(model_config, attn_backend="TRTLLM")\n'
            "        self.attn = Attention(config=vision_config)\n"
            '        self.metadata_cls = get_attention_backend("TRTLLM").Metadata\n'
        ),
        Valid(
            _HEAD + '        vision_config = dataclasses.replace(model_config, attn_backend="TRTLLM")\n'
            "        self.attn = Attention(config=vision_config)\n"
            "        self.metadata_cls = AttentionMetadata\n"
        ),
        Valid(
            _HEAD + "        model_config = dataclasses.replace(model_config, attn_backend=encoder_backend)\n"
            "        self.attn = Attention(config=model_config)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n"
        ),
        Valid(
            _HEAD + "        self.attn = create_attention(model_config.attn_backend, layer_idx=0)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n"
        ),
        Valid(  # each arm of the conditional with the metadata class's arm on the same test
            _HEAD + '        backend = "TRTLLM" if encoder_backend == "TRTLLM" else "VANILLA"\n'
            "        self.attn = create_attention(backend, layer_idx=0)\n"
            "        self.metadata_cls = get_attention_backend(backend).Metadata\n"
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            _HEAD + "        vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)\n"
            "        self.blocks = [Attention(config=vision_config) for _ in range(2)]\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n",
            expect=((11, 28),),
            message=(
                "VisionEncoder takes its metadata class from model_config's attn_backend, but builds its "
                "attention layers from vision_config, whose attn_backend is overridden (line 9): with a "
                "per-encoder override the layers get metadata of another backend (AttributeError at the first "
                "forward); derive both from vision_config"
            ),
        ),
        Invalid(  # an override written as a conditional expression (an omitted setting keeps the default)
            _HEAD + "        vision_config = (\n"
            "            dataclasses.replace(model_config, attn_backend=encoder_backend) if encoder_backend else model_config\n"
            "        )\n"
            "        self.attn = Attention(config=vision_config)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n",
            expect=((13, 28),),
        ),
        Invalid(  # the override in either arm, also in the layer's own argument (red-team 49)
            _HEAD + "        vision_config = copy.deepcopy(model_config) if encoder_backend is None else (\n"
            "            dataclasses.replace(model_config, attn_backend=encoder_backend)\n"
            "        )\n"
            "        self.attn = Attention(config=vision_config)\n"
            "        self.mlp = Attention(\n"
            "            config=dataclasses.replace(model_config, attn_backend=encoder_backend) if encoder_backend else model_config\n"
            "        )\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n",
            expect=((16, 28),),
        ),
        Invalid(  # the backend keyword unpacked from a literal
            _HEAD + '        vision_config = dataclasses.replace(model_config, **{"attn_backend": encoder_backend})\n'
            "        other_config = dataclasses.replace(model_config, **dict(attn_backend=encoder_backend))\n"
            "        self.attn = Attention(config=vision_config)\n"
            "        self.mlp = Attention(config=other_config)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n",
            expect=((13, 28),),
        ),
        Invalid(
            _HEAD + "        vision_config = copy.deepcopy(model_config)\n"
            "        vision_config.attn_backend = encoder_backend\n"
            "        self.attn = Attention(config=vision_config)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n",
            expect=((12, 28),),
        ),
        Invalid(
            _HEAD + "        self.attn = Attention(config=model_config)\n"
            "        self.metadata_cls = AttentionMetadata\n",
            expect=((10, 28),),
            message=(
                "VisionEncoder hard-codes its metadata class (AttentionMetadata) while its attention layers "
                "follow model_config's attn_backend: any other backend gets metadata it cannot read; derive it "
                "with get_attention_backend(model_config.attn_backend).Metadata"
            ),
        ),
        Invalid(
            _HEAD + "        self.attn = Attention(config=model_config)\n"
            '        self.metadata_cls = get_attention_backend("TRTLLM").Metadata\n',
            expect=((10, 28),),
        ),
        Invalid(
            _HEAD + "        self.vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)\n"
            "        self.attn = Attention(config=self.vision_config)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n",
            expect=((11, 28),),
        ),
        Invalid(
            _HEAD + '        vision_config = dataclasses.replace(model_config, attn_backend="TRTLLM")\n'
            "        self.attn = Attention(config=vision_config)\n"
            '        self.metadata_cls = get_attention_backend("VANILLA").Metadata\n',
            expect=((11, 28),),
            message=(
                'VisionEncoder hard-codes its metadata class (get_attention_backend("VANILLA")) while its attention '
                'layers are pinned to "TRTLLM" (vision_config, line 9): the layers get metadata of another backend '
                '(AttributeError at the first forward); use get_attention_backend("TRTLLM").Metadata'
            ),
        ),
        Invalid(
            _HEAD + "        self.attn = create_attention(encoder_backend, layer_idx=0)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n",
            expect=((10, 28),),
            message=(
                "VisionEncoder takes its metadata class from get_attention_backend(model_config.attn_backend), but "
                "gives its attention layers the backend passed as `encoder_backend` (line 9): when the two differ the "
                "layers get metadata of another backend (AttributeError at the first forward); derive the metadata "
                "class with get_attention_backend(encoder_backend).Metadata"
            ),
        ),
        Invalid(
            _HEAD + '        self.attn = Attention(config=model_config, attn_backend="TRTLLM")\n'
            '        self.metadata_cls = get_attention_backend("VANILLA").Metadata\n',
            expect=((10, 28),),
        ),
        Invalid(  # one arm of a conditional on another backend than the metadata class's
            _HEAD + '        backend = "TRTLLM" if encoder_backend == "TRTLLM" else "VANILLA"\n'
            "        self.attn = create_attention(backend, layer_idx=0)\n"
            '        self.metadata_cls = get_attention_backend("TRTLLM").Metadata\n',
            expect=((11, 28),),
            message=(
                'VisionEncoder hard-codes its metadata class (get_attention_backend("TRTLLM")) while its attention '
                'layers are pinned to "VANILLA" (line 9, one arm of the conditional `backend` holds, given the layers '
                "at line 10): the layers get metadata of another backend (AttributeError at the first forward); "
                "derive it with get_attention_backend(backend).Metadata"
            ),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._functions = self.config.str_list("backend-functions")
        self._patterns = self.config.str_list("backend-context-names")
        self._imported: dict[str, str] = {}  # backend functions imported under another name
        # The module's facts as mappings, made once when first asked (`_module`): `_key` asks
        # `_pinned` at every step.
        self._mappings: tuple[dict[str, str], dict[str, str], dict[str, str]] | None = None
        self._open_functions = 0  # functions being visited, a method and those nested in it
        # Functions of this file that derive a config from a parameter (`_HelperReader`), and the
        # encoder's own such methods (`self._sub(c)`); a call of one stands for what it returns.
        self._helpers: dict[str, _Helper] = {}
        self._method_helpers: dict[str, _Helper] = {}
        # Likewise the functions and methods that return a backend (`_backend(self, b=None): return
        # b or self.config.attn_backend`): a call of one, as a backend, is what it returns (`_key`).
        self._backend_helpers: dict[str, _Helper] = {}
        self._method_backend_helpers: dict[str, _Helper] = {}
        self._via: dict[cst.CSTNode, str] = {}  # an expanded call (`_expanded`) -> the helper's name
        self._reset()

    def _reset(self) -> None:
        self._overrides: dict[str, _Override] = {}
        self._copies: dict[str, str] = {}
        self._aliases: dict[str, str] = {}  # `self.model_config = model_config`: one config, two names
        self._values: dict[str, cst.BaseExpression] = {}  # what a name or `self.x` was last given
        self._scopes: dict[str, str] = {}  # the function a name's value was written in (`_seal`)
        self._passed: set[str] = set()  # names passed to calls: the configs among them build layers
        self._to_attention: set[str] = set()  # those passed to a call named like an attention layer
        self._known: set[str] = set()  # names used as a config, whatever they are called
        self._retired: dict[str, cst.CSTNode] = {}  # a rebound name's earlier config -> the rebinding
        # A conditional kept in a local name -> its arms as of the assignment, so that `b = "X" if c
        # else b` reads the earlier b in its arm, not itself (`_arms`).
        self._arms_of: dict[cst.CSTNode, list[_Arm]] = {}
        self._direct: list[_Direct] = []
        self._sources: list[_MetadataSource] = []
        # A method's parameters (positional first, after self or cls), and the names handed to
        # `self.method(...)` by position or keyword: a parameter is what the caller hands it (`_link`).
        self._params: dict[str, list[str]] = {}
        self._positional: dict[str, int] = {}
        self._defaults: dict[str, dict[str, cst.BaseExpression]] = {}
        self._handed: list[tuple[str, int | str, str]] = []
        # Every `self.method(...)` call, whatever it hands: a parameter is read as its argument only
        # when all of them hand it one backend (`_handed_to`); else each argument is judged in turn,
        # the one `_chosen` for it (`_variants`), and `_undecided` lists those met without one.
        self._handings: list[_Handing] = []
        self._chosen: dict[str, _Argument] = {}
        self._undecided: list[str] = []
        self._tracing: set[str] = set()  # parameters whose arguments are being keyed (a cycle stops)
        self._methods: dict[str, str] = {}  # a method's mark (`_seal`) -> its name, for messages
        self._sealed = 0  # functions sealed so far (`_seal`)
        self._tag = f"{_SCOPE}0"  # the mark this function's local names will get

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        return metadata_cls(config)  # the registry's too: see declint/needles.py

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """`from ... import get_attention_backend as gab`: `gab(...)` is that function (read
        from the tree: a file outside the index has no import facts)."""
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = _last_name(alias.name)
            if alias.asname is not None and name in (*self._functions, *_LAYER_FACTORIES):
                local = alias.asname.name
                if isinstance(local, cst.Name):
                    self._imported[local.value] = name

    def visit_Module(self, node: cst.Module) -> None:
        """The module's helper functions, known before any class calls them."""
        for statement in node.body:
            if isinstance(statement, cst.FunctionDef):
                _read_helpers(
                    _HelperReader(statement, self._patterns, method=False), self._helpers, self._backend_helpers
                )

    # ---- one encoder class at a time -------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self._open_functions == 0:  # a method: the class body's names before it are not its own
            self._seal()
            if len(self._scope) == 2:  # directly in the encoder class
                self._parameters(node)
            self._methods[self._tag] = node.name.value
        self._open_functions += 1

    def _parameters(self, node: cst.FunctionDef) -> None:
        static = any(_last_name(d.decorator) == "staticmethod" for d in node.decorators)
        positional = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        positional = positional if static else positional[1:]
        self._params[node.name.value] = positional + [p.name.value for p in node.params.kwonly_params]
        self._positional[node.name.value] = len(positional)
        every = (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
        self._defaults[node.name.value] = {p.name.value: p.default for p in every if p.default is not None}

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._open_functions -= 1
        if self._open_functions == 0:  # a nested function's names are its method's (a closure reads them)
            self._seal()
        super().leave_FunctionDef(original_node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        if len(self._scope) == 1:
            self._reset()
            self._method_helpers, self._method_backend_helpers = {}, {}
            body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
            for statement in body:
                if isinstance(statement, cst.FunctionDef):
                    reader = _HelperReader(statement, self._patterns, method=True)
                    _read_helpers(reader, self._method_helpers, self._method_backend_helpers)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        if len(self._scope) == 1:
            self._seal()  # the class body's own names, so that every record's scope is marked
            self._link()
            for source in self._sources:
                self._judge(original_node.name.value, source)
        super().leave_ClassDef(original_node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            pairs = _unpacked(target.target, node.value)
            for each_target, each_value in pairs or ((target.target, node.value),):
                self._assignment(each_target, each_value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assignment(node.target, node.value)

    def visit_Call(self, node: cst.Call) -> bool | None:
        if _is_logging(node):
            return False  # nothing in a log message builds a layer: `logger.info("%s", str(vcfg))`
        node = _unpartial(node, self._callee(node))
        if isinstance(node.func, cst.Attribute) and _is_self(node.func.value):
            self._handing(node.func.attr.value, node)
        callee = self._callee(node)
        keywords = self._backend_keywords(node)
        if callee in _LAYER_FACTORIES and callee in self._functions:
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            for value in positional[:1] or keywords[:1]:
                self._direct += self._direct_backend(value, value)
        if callee == "setattr":
            self._setattr(node)
        if self._helper_of(node) is not None:
            return None  # a helper derives a config (`_expanded`): it builds no layer
        if callee in (*_DERIVATIONS, *self._functions, *_SHOWING) or (
            callee is not None and "config" in callee.lower()
        ):
            return None  # deriving, reading, showing or building a config (`ModelConfig(...)`) builds no layer
        layer = callee is not None and "attention" in callee.lower()  # named like an attention layer
        if layer:
            # An attention layer's backend is the keyword's, whatever config it is also given, or
            # the one a config built in place sets: `Attention(config=replace(c, attn_backend=x))`.
            given = [(value, value, None) for value in keywords] or self._overridden_in_place(node)
            if given:
                for each in given:
                    self._direct += self._direct_backend(*each)
                return None
        # Which of them are configs is asked at the class's end: a name may be known as one later.
        # A helper's call that returns its argument (`_unchanged(c)`) hands the call that argument.
        arguments = [name for a in node.args if (name := _name_of(self._expanded(a.value))) is not None]
        self._passed.update(arguments)
        if layer:
            self._to_attention.update(arguments)
        if isinstance(node.func, cst.Attribute) and _is_self(node.func.value):
            self._hand(node.func.attr.value, node)
        return None

    def _helper_of(self, call: cst.Call, backend: bool = False) -> _Helper | None:
        """The helper `call` calls: a function of this file by name, a method of the encoder on
        `self` or `cls`; with `backend`, one that returns a backend, not a config."""
        functions, methods = (
            (self._backend_helpers, self._method_backend_helpers) if backend else (self._helpers, self._method_helpers)
        )
        if isinstance(call.func, cst.Name):
            return functions.get(call.func.value)
        if isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
            if call.func.value.value in ("self", "cls"):
                return methods.get(call.func.attr.value)
        return None

    def _expanded(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`value` with a helper's call (either arm of `a if c else b` too) as what it returns,
        written in the caller's names: its argument, `copy.deepcopy(arg)`, or `dataclasses.replace(
        arg, attn_backend=value)`. A value the rule cannot write in them stays the call's own:
        `helper(arg).attn_backend`. Anything else as it is."""
        if isinstance(value, cst.IfExp):
            body, orelse = self._expanded(value.body), self._expanded(value.orelse)
            if body is value.body and orelse is value.orelse:
                return value
            return value.with_changes(body=body, orelse=orelse)
        helper = self._helper_of(value) if isinstance(value, cst.Call) else None
        if helper is None:
            return value
        assert isinstance(value, cst.Call)
        bound = _bound(helper, value)
        config = bound.get(helper.config) if bound is not None else None
        if bound is None or config is None:
            return value
        if helper.kind == "same":
            return config
        if helper.kind == "copy":
            expanded = cst.Call(cst.Attribute(cst.Name("copy"), cst.Name("deepcopy")), [cst.Arg(config)])
        else:
            backend = _substituted(helper.value, bound) if helper.value is not None else None
            if backend is None:
                backend = cst.Attribute(value, cst.Name("attn_backend"))
            keyword = cst.Arg(backend, keyword=cst.Name(helper.keyword))
            expanded = cst.Call(cst.Attribute(cst.Name("dataclasses"), cst.Name("replace")), [cst.Arg(config), keyword])
        self._via[expanded] = helper.name
        return expanded

    def _hand(self, method: str, call: cst.Call) -> None:
        """`self.method(model_config, backend=b)`: the names it is handed, for `_link`."""
        plain = [a for a in call.args if not a.star]
        for position, argument in enumerate(a for a in plain if a.keyword is None):
            if (name := _name_of(argument.value)) is not None:
                self._handed.append((method, position, name))
        for argument in plain:
            if argument.keyword is not None and (name := _name_of(argument.value)) is not None:
                self._handed.append((method, argument.keyword.value, name))

    def _handing(self, method: str, call: cst.Call) -> None:
        """`self.method(override)`, `self.method(backend=x)`: what it hands, for `_arguments`."""
        positional = tuple((self._locals_now(a.value), a.value) for a in call.args if a.keyword is None and not a.star)
        keywords = tuple(
            (a.keyword.value, self._locals_now(a.value), a.value) for a in call.args if a.keyword is not None
        )
        bindable = not any(a.star for a in call.args)
        self._handings.append(_Handing(method, positional, keywords, call, self._tag, bindable))

    def _link(self) -> None:
        """A method's parameter is the config its caller in the class hands it (`self._make(
        model_config, b)`): a helper that overrides its `model_config` and builds layers from the
        override is judged against the caller's metadata class, as the methods' local names are
        their own (`_seal`). The first caller counts; a parameter the method rebinds keeps its entry
        value (`_retire` renamed it)."""
        for method, slot, given in self._handed:
            params = self._params.get(method, [])
            if isinstance(slot, int):
                param = params[slot] if slot < self._positional.get(method, 0) else None
            else:
                param = next((p for p in params if _shown(p) == slot), None)
            if param is not None and not self._holds_config(param):
                self._aliases[param] = given

    def _setattr(self, call: cst.Call) -> None:
        """`setattr(c, "attn_backend", b)`: the override `c.attn_backend = b` is."""
        if len(call.args) == 3 and (field := _string(call.args[1].value)) is not None:
            if name_matches_any(field, self._patterns):
                self._set_in_place(call.args[0].value, call.args[2].value, call.args[0].value)

    def _overridden_in_place(self, call: cst.Call) -> list[tuple[cst.BaseExpression, cst.CSTNode, str | None]]:
        """The backends that configs derived in the call's own arguments set, each with where it
        is written and the helper that set it (`Attention(config=_vision_sub_config(c))`: the
        helper's call, not its body, is where)."""
        found: list[tuple[cst.BaseExpression, cst.CSTNode, str | None]] = []
        for argument in call.args:
            inner = self._deriving_arm(self._expanded(argument.value))
            if isinstance(inner, cst.Call) and self._callee(inner) in _DERIVATIONS:
                via = self._via.get(inner)
                where = argument.value if via is not None else None
                found += [(value, where or value, via) for value in self._backend_keywords(inner)]
        return found

    def _backend_keywords(self, call: cst.Call) -> list[cst.BaseExpression]:
        """The values of the call's keywords named like a backend (`attn_backend=x`, unpacked too)."""
        return [value for keyword, value in _keywords(call) if name_matches_any(keyword, self._patterns)]

    def _callee(self, call: cst.Call) -> str | None:
        """The called function's name, a backend function imported under another name as itself."""
        if isinstance(call.func, cst.Name):
            return self._imported.get(call.func.value, call.func.value)
        return _last_name(call.func)

    def _direct_backend(self, value: cst.BaseExpression, where: cst.CSTNode, via: str | None = None) -> list[_Direct]:
        """The layers' backend `value`: one _Direct, or one an arm where it is a conditional (each
        arm may be the backend, and each must agree with the metadata class)."""
        code = cst.Module([]).code_for_node(value)
        arms = self._arms(value)
        if len(arms) > 1:
            holder = code if isinstance(value, cst.Name) else None
            return [
                _Direct(
                    arm.resolved, code, self._pinned(arm.written), where, self._tag, via, arm.written, arm.path, holder
                )
                for arm in arms
                if not _is_none(arm.resolved)  # no backend given: the layer picks its own
            ]
        if _is_none(value):
            return []  # no backend given: the layer picks its own
        return [_Direct(arms[0].resolved, code, self._pinned(value), where, self._tag, via)]

    def _arms(self, node: cst.BaseExpression, depth: int = 0) -> list[_Arm]:
        """The values `node` may take where it is written: the arms of a conditional, nested ones
        and those kept in local names flattened, in source order; else `node` itself."""
        resolved = self._locals_now(node)
        kept = self._arms_of.get(resolved)
        if kept is not None:
            return kept
        if not isinstance(resolved, cst.IfExp) or depth >= 8:  # deeper is not real code
            return [_Arm((), node, resolved)]
        test = cst.Module([]).code_for_node(resolved.test)
        return [
            arm._replace(path=((test, side), *arm.path))
            for side, branch in enumerate((resolved.body, resolved.orelse))
            for arm in self._arms(branch, depth + 1)
        ]

    def _line(self, node: cst.CSTNode) -> int:
        """Where `node` starts: asked for only in a message, since positions cost a pass over the
        whole module (more than the rule; a clean file never pays it)."""
        return int(self.position(node).start.line)

    def _locals_now(self, node: cst.BaseExpression) -> cst.BaseExpression:
        """`node` with a local name replaced by the value it holds here (through other local
        names), so that a later assignment to it does not count; `self.x` waits for the class's
        end, since any method may set it."""
        for _ in range(8):  # a chain this long is not real code; a cycle must not hang the rule
            name = _name_of(node)
            if name is None or name.startswith("self.") or name not in self._values:
                break
            node = self._values[name]
        return node

    def _assignment(self, target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> None:
        name = _name_of(target)
        if _is_metadata_cls(target):
            self._sources.append(self._metadata_source(value))
        elif name is not None:
            self._bind(name, value, target)
        elif isinstance(target, cst.Attribute) and name_matches_any(target.attr.value, self._patterns):
            self._set_in_place(target.value, value, target)

    def _deriving_arm(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`replace(c, attn_backend=b) if b else c`: the arm that overrides the backend, else one
        that derives a config, as the `if` statement the expression stands for assigns it (the
        override may happen: it counts, whichever arm holds it; red-team 49)."""
        arms = _arms(value)
        overriding = (a for a in arms if isinstance(a, cst.Call) and _derived_from(a) and self._backend_keywords(a))
        deriving = (a for a in arms if _derived_from(a) is not None)
        return next(overriding, None) or next(deriving, None) or value

    def _bind(self, name: str, value: cst.BaseExpression, target: cst.CSTNode) -> None:
        value = self._deriving_arm(self._expanded(value))
        if isinstance(value, cst.IfExp) and not name.startswith("self."):
            self._arms_of[value] = self._arms(value)  # before `name` holds it: an arm may read its earlier value
        source = _derived_from(value)
        if self._other_arm(name, value):
            return
        if source == name:  # `c = replace(c, ...)`: the new c is derived from the earlier one
            source = self._retire(name, target)
        elif self._holds_config(name):
            self._rebind(name, target)
        # `self.x = backend`: x keeps what the local name held here, not its later values.
        self._values[name] = self._locals_now(value) if name.startswith("self.") else value
        self._scopes[name] = self._tag
        alias = _name_of(value)
        if alias is not None:
            self._aliases[name] = alias
        elif source is not None:
            self._derivation(name, value, source, target)

    def _other_arm(self, name: str, value: cst.BaseExpression) -> bool:
        """`name = c` (or an unchanged copy of c) where `name` holds an override of c: the other arm
        of an `if` (`if b: v = replace(c, attn_backend=b)` / `else: v = c`). The rule does not follow
        which branch runs: the name keeps the override, as `replace(...) if b else c` does
        (`_deriving_arm`); in straight-line code this rebinding is not followed."""
        override = self._overrides.get(name)
        if override is None:
            return False
        copied = isinstance(value, cst.Call) and _last_name(value.func) in ("copy", "deepcopy")
        given = _derived_from(value) if copied else _name_of(value)
        return given is not None and self._canonical(given) == self._canonical(override.source)

    def _holds_config(self, name: str) -> bool:
        return name in self._aliases or name in self._copies or name in self._overrides

    def _rebind(self, name: str, where: cst.CSTNode) -> None:
        """`name`, which held a config, is given another (`v = c`, then `if b: v = replace(c, ...)`):
        the earlier one must not stay attached to the new (red-team, 2026-12-02: `v` read as
        both `c` and its override). A local name's earlier config keeps what was read from it so far
        (`_retire`); `self.x` is read by methods in any order, so it holds the new one everywhere."""
        if not name.startswith("self."):
            self._retire(name, where)
            return
        self._detach_local_aliases(name)
        for mapping in (self._aliases, self._copies, self._overrides):
            mapping.pop(name, None)

    def _detach_local_aliases(self, name: str) -> None:
        """Locals that took `self.x` before it is rebound (`llm_config = self.config`) keep the
        config it held then (red-team 60: they followed it to the override)."""
        for local in [k for k, v in self._aliases.items() if v == name and not k.startswith("self.")]:
            if name in self._aliases:
                self._aliases[local] = self._aliases[name]
            elif name in self._copies:
                self._copies[local] = self._copies[name]
                del self._aliases[local]
            elif name in self._overrides:
                self._overrides[local] = self._overrides[name]
                del self._aliases[local]

    def _set_in_place(self, config: cst.BaseExpression, value: cst.BaseExpression, where: cst.CSTNode) -> None:
        """`c.attn_backend = b` on a copy c: from here c reads b, what was read from c before read
        the copy's source (a config the layers or the metadata class read is read when built)."""
        name = _name_of(config)
        if name is not None and name in self._copies:
            earlier = self._retire(name, where)
            self._overrides[name] = _Override(earlier, self._pinned(value), where, value, self._tag)
            self._known.add(name)

    def _retire(self, name: str, where: cst.CSTNode) -> str:
        """`name` now holds a config derived from its earlier one: what was read from it so far
        (layers, the metadata class, copies, aliases) read that earlier config, which takes a name
        of its own (`model_config@0`; `_shown` writes it as `model_config`). Returns that name."""
        earlier = f"{name}@{len(self._retired)}"
        self._rename(lambda each: earlier if each == name else each)
        self._retired[earlier] = where
        return earlier

    def _seal(self) -> None:
        """A function's local names are its own (`model_config` in a factory classmethod is not
        `__init__`'s): once it is visited they take its mark (`model_config@f1`), so that the next
        function starts with none (red-team, 2026-12-02: a classmethod's rebinding made `__init__`
        read its config "before" it). `self.x` is the class's, in every method: not marked.
        What is judged at the class's end looks local names up under the mark of the function it
        was written in (`scope`)."""
        tag = self._tag
        self._rename(lambda each: each if each.startswith("self.") or _SCOPE in each else each + tag)
        self._sealed += 1
        self._tag = f"{_SCOPE}{self._sealed}"

    def _rename(self, rename: Callable[[str], str]) -> None:
        """Every name the rule holds, renamed."""
        self._overrides = {rename(k): o._replace(source=rename(o.source)) for k, o in self._overrides.items()}
        self._copies = {rename(k): rename(v) for k, v in self._copies.items()}
        self._aliases = {rename(k): rename(v) for k, v in self._aliases.items()}
        self._values = {rename(k): v for k, v in self._values.items()}
        self._scopes = {rename(k): v for k, v in self._scopes.items()}
        self._passed = {rename(each) for each in self._passed}
        self._to_attention = {rename(each) for each in self._to_attention}
        self._known = {rename(each) for each in self._known}
        self._retired = {rename(k): v for k, v in self._retired.items()}
        self._params = {method: [rename(p) for p in params] for method, params in self._params.items()}
        self._handed = [(method, slot, rename(given)) for method, slot, given in self._handed]
        self._sources = [s._replace(config=rename(s.config)) if s.config is not None else s for s in self._sources]

    def _derivation(self, name: str, value: cst.BaseExpression, source: str, where: cst.CSTNode) -> None:
        """`name = replace(source, attn_backend=...)` (an override) or a copy of `source`."""
        assert isinstance(value, cst.Call)  # what `_derived_from` found a source in
        callee = _last_name(value.func)
        self._known.update((name, source))
        if callee == "replace":
            for keyword, argument in _keywords(value):  # `**{"attn_backend": b}`, `**dict(...)` too
                if name_matches_any(keyword, self._patterns):
                    via = self._via.get(value)
                    self._overrides[name] = _Override(source, self._pinned(argument), where, argument, self._tag, via)
        else:
            self._copies[name] = source

    def _module(self) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        """(constants, imports, classes) of this module. A file the index holds as a placeholder
        (no index needle: an encoder file of its own) has no facts there: its own are extracted
        here, once (red-team 60: `BACKEND_TRTLLM` imported there was not known as "TRTLLM")."""
        if self._mappings is None:
            facts = self.context.facts
            if isinstance(facts, PlaceholderFacts):  # a partial one (Literals only) knows no classes
                options = FactOptions(
                    str(self.config.get("declaration-attribute")),
                    str(self.config.get("fixed-marker")),
                    tuple(self.config.str_list("model-decorators")),
                )
                rel = self.context.rel
                facts = extract_facts(self.context.source.text, facts.module, rel, options, rel.endswith("__init__.py"))
            classes = {c.name: c.qualname for c in facts.classes}
            self._mappings = (dict(facts.constants), dict(facts.imports), classes)
        return self._mappings

    def _pinned(self, value: cst.BaseExpression) -> str | None:
        """The backend an override pins: a string, or a module-level string constant such as the
        Literal-typed `BACKEND_TRTLLM` (here or imported); None when it is chosen at run time."""
        if not isinstance(value, cst.Name):
            return _string(value)
        constants, imports, _ = self._module()
        own = constants.get(value.value)
        imported = imports.get(value.value)
        return own if own is not None else self.index.constant(f"={imported}") if imported else None

    def _canonical(self, name: str) -> str:
        """The config a name reads the backend of, through plain copies of the reference (`self.x
        = x`) and unchanged copies of the config (one overridden in place was retired, `_retire`)."""
        for _ in range(8):  # a chain this long is not real code; a cycle must not hang the rule
            following = self._aliases.get(name) or self._copies.get(name)
            if following is None:
                break
            name = following
        return name

    def _is_config(self, name: str) -> bool:
        """Named like a config, or used as one (derived, copied, its attn_backend read)."""
        named = "config" in _shown(name).rpartition(".")[2].lower()
        return named or name in self._known or self._canonical(name) in self._known

    def _override_of(self, name: str) -> _Override | None:
        return self._overrides.get(name) or self._overrides.get(self._canonical(name))

    def _metadata_source(self, value: cst.BaseExpression) -> _MetadataSource:
        if isinstance(value, cst.Attribute) and value.attr.value == "Metadata":
            call = value.value
            kept = _name_of(call)  # `backend_cls = get_attention_backend(...)`, then `backend_cls.Metadata`
            if kept is not None and isinstance(self._values.get(kept), cst.Call):
                call = self._values[kept]
            if isinstance(call, cst.Call) and self._callee(call) in self._functions and call.args:
                argument = call.args[0].value
                literal = _string(argument)
                if literal is not None:
                    return _MetadataSource(value, None, f'get_attention_backend("{literal}")')
                # A helper's call as what it returns (`self._backend()` as `self.config.attn_backend`).
                returned = self._backend_returned(argument) or argument
                config = _backend_read(returned)
                if config is not None and (read := _name_of(config)) is not None:
                    self._known.add(read)
                resolved, arms = self._locals_now(argument), tuple(self._arms(argument))
                return _MetadataSource(value, _config_of(returned), None, argument, resolved, self._tag, arms)
        if isinstance(value, cst.Name | cst.Attribute) and self._is_metadata_class(value):
            return _MetadataSource(value, None, _last_name(value))
        return _MetadataSource(value, None, None)

    def _is_metadata_class(self, node: cst.Name | cst.Attribute) -> bool:
        """Only a name that resolves to a metadata class is hard-coded (not a parameter)."""
        dotted = cst.Module([]).code_for_node(node)
        head, _, rest = dotted.partition(".")
        _, imports, local_classes = self._module()
        base = imports.get(head) or local_classes.get(head)
        facts = self.index.class_facts(f"{base}.{rest}" if rest else base) if base else None
        return facts is not None and self.index.is_metadata_class(facts)

    # ---- verdict ---------------------------------------------------------------------------
    def _judge(self, encoder: str, source: _MetadataSource) -> None:
        if self._judge_direct(encoder, source):
            return
        configs = sorted(name for name in self._passed if self._is_config(name))
        if source.config is not None:
            config = self._canonical(source.config)
            for name in configs:
                override = self._override_of(name)
                if override is not None and self._canonical(override.source) == config:
                    self.report(source.node, self._overridden(encoder, source.config, name, override))
                    return
            if not self._judge_original_layers(encoder, source, source.config, configs):
                self._judge_set_apart(encoder, source, configs)
        elif source.fixed is not None:
            following = [n for n in configs if self._override_of(n) is None or not self._pinned_to(n)]
            pinned = [n for n in configs if self._pinned_elsewhere(n, source.fixed)]
            if pinned:
                override = self._override_of(pinned[0])
                assert override is not None and override.pinned is not None  # what _pinned_elsewhere checked
                self.report(
                    source.node,
                    (
                        f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers are "
                        f'pinned to "{override.pinned}" ({_shown(pinned[0])}, line {self._line(override.where)}'
                        f"{_by(override.via)}): the layers get metadata "
                        f"of another backend (AttributeError at the first forward); use get_attention_backend"
                        f'("{override.pinned}").Metadata'
                    ),
                )
            elif following:
                config = _shown(following[0])
                self.report(
                    source.node,
                    (
                        f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers follow "
                        f"{config}'s attn_backend: any other backend gets metadata it cannot read; derive it with "
                        f"get_attention_backend({config}.attn_backend).Metadata"
                    ),
                )

    def _overridden(self, encoder: str, config: str, layers: str, override: _Override) -> str:
        """The message for layers built from config `layers`, overridden, and a metadata class
        from `config`'s backend (the same name as it was before a rebinding, say)."""
        line = self._line(override.where)
        read = f"{self._told(config, layers)}'s attn_backend"
        advice = f"derive both from {self._told(layers, config)}"
        if config in self._retired:
            read += f" read before line {self._line(self._retired[config])}"
            if _shown(config) == _shown(layers):  # the name rebound to the override: read it afterwards
                advice = f"derive the metadata class from {_shown(layers)} after line {line}"
        if override.pinned is not None:  # a backend written in the code, not a per-encoder setting
            overridden = (
                f'is pinned to "{override.pinned}" (line {line}{_by(override.via)}): unless '
                f'{self._told(config, layers)}\'s attn_backend is "{override.pinned}" too, the layers get metadata'
            )
        else:
            overridden = (
                f"is overridden (line {line}{_by(override.via)}): with a per-encoder override the layers get metadata"
            )
        return (
            f"{encoder} takes its metadata class from {read}, but builds its attention layers from "
            f"{self._told(layers, config)}, whose attn_backend {overridden} of another backend (AttributeError at the "
            f"first forward); {advice}"
        )

    def _judge_original_layers(self, encoder: str, source: _MetadataSource, metadata: str, configs: list[str]) -> bool:
        """The reverse of `_overridden`: the metadata class follows an override of config X, the
        layers X itself. Reported only when no layers follow the override: the rule does not know
        which calls build attention layers, so X passed to another call next to layers built from
        the override (`PatchEmbed(model_config)`) is taken for a layer that needs no metadata;
        layers given a backend by name are `_judge_direct`'s. True if reported."""
        override = self._override_of(metadata)
        if override is None or self._direct:
            return False
        followed, original = self._canonical(metadata), self._canonical(override.source)
        if any(self._canonical(name) == followed for name in configs):
            return False
        layers = [name for name in configs if self._canonical(name) == original]
        if layers:
            self.report(source.node, self._original_layers(encoder, metadata, layers[0], override))
        return bool(layers)

    def _judge_set_apart(self, encoder: str, source: _MetadataSource, configs: list[str]) -> None:
        """Layers built from a sibling of the metadata class's config, overridden to another
        backend (a merger pinned to VANILLA beside the tower's override of the same config):
        reported even when other layers follow the metadata class. Unlike a config handed on as
        it is (`PatchEmbed(model_config)`, `_judge_original_layers`), a config derived with a
        backend of its own is made for layers that read it, and those get the encoder's metadata.
        Only configs derived from the one the metadata class's config comes from (an override
        in a factory classmethod, handed to `cls(...)`, is not the layers of `__init__`), and handed
        to a call named like an attention layer (`Attention(config=merger_config)`): a sub-encoder
        (`AudioEncoder(audio_config)`) or a projector may take metadata of its own (red-team 60)."""
        argument = source.argument
        read = _backend_read(self._backend_returned(argument) or argument) if argument is not None else None
        if read is None or _name_of(read) is None or source.config is None:
            return
        metadata = self._canonical(source.config)
        wanted, family = self._named_config_backend(metadata, 0), self._root(metadata)
        pinned = self._pinned_to(metadata)
        for name in configs:
            if name not in self._to_attention:  # a sub-encoder or a projector may take its own metadata
                continue
            holder = name if name in self._overrides else self._canonical(name)
            override = self._overrides.get(holder)
            if override is None or override.value is None or holder == metadata or self._root(holder) != family:
                continue
            same_pin = pinned is not None and override.pinned == pinned  # `BACKEND_TRTLLM` and "TRTLLM" are one
            if not same_pin and self._named_config_backend(holder, 0) != wanted:
                self.report(source.node, self._set_apart(encoder, source, name, override))
                return

    def _root(self, name: str) -> str:
        """The config `name` is derived from, through copies and overrides: `model_config` for
        `vision_config = replace(model_config, ...)`."""
        for _ in range(8):  # a chain this long is not real code; a cycle must not hang the rule
            name = self._canonical(name)
            override = self._overrides.get(name)
            if override is None:
                break
            name = override.source
        return name

    def _set_apart(self, encoder: str, source: _MetadataSource, layers: str, override: _Override) -> str:
        """The message for layers built from `layers`, whose override sets another backend than the
        metadata class's source."""
        assert source.config is not None and override.value is not None  # what _judge_set_apart checked
        shown = self._told(source.config, layers)
        metadata = f"{shown}'s attn_backend"
        advice = f"build them from {shown}"
        line = f"line {self._line(override.where)}{_by(override.via)}"
        if override.pinned is not None:
            what = f'is pinned to "{override.pinned}" ({line}): unless {metadata} is "{override.pinned}" too,'
            advice += f' (a layer kept on "{override.pinned}" on purpose cannot take the encoder\'s metadata)'
        else:
            value = cst.Module([]).code_for_node(override.value)
            what = f"is set to {value} ({line}): when the two differ,"
        return (
            f"{encoder} takes its metadata class from {metadata}, but builds attention layers from "
            f"{self._told(layers, source.config)}, whose attn_backend {what} those layers get metadata of "
            f"another backend (AttributeError at the first forward); {advice}"
        )

    def _original_layers(self, encoder: str, metadata: str, layers: str, override: _Override) -> str:
        """The message for layers built from the config that `metadata`'s override was derived from
        (the same name before a rebinding, say)."""
        line = self._line(override.where)
        built = self._told(layers, metadata)
        advice = f"build the layers from {self._told(metadata, layers)}"
        if layers in self._retired:
            built += f" read before line {self._line(self._retired[layers])}"
            if _shown(layers) == _shown(metadata):  # the name rebound to the override: read it afterwards
                advice += f" after line {line}"
        return (
            f"{encoder} takes its metadata class from {self._told(metadata, layers)}'s attn_backend, which is "
            "overridden (line "
            f"{line}{_by(override.via)}), but builds its attention layers from {built}, whose attn_backend is not: with a per-encoder "
            f"override the layers get metadata of another backend (AttributeError at the first forward); {advice}"
        )

    def _told(self, name: str, other: str) -> str:
        """`name` as written, with its method when `other` is another method's variable of that name
        (`_make()'s model_config`), so that the message does not read as one config against itself."""
        mark = name[name.rfind(_SCOPE) :] if _SCOPE in name else ""
        other_mark = other[other.rfind(_SCOPE) :] if _SCOPE in other else ""
        if _shown(name) != _shown(other) or mark == other_mark or mark not in self._methods:
            return _shown(name)
        return f"{self._methods[mark]}()'s {_shown(name)}"

    def _judge_direct(self, encoder: str, source: _MetadataSource) -> bool:
        """Layers given a backend by name against the metadata class's source; True if reported."""
        for direct in self._direct:
            if source.argument is not None:
                paired = self._counterpart(direct, source)
                differing = self._differing(direct, source, paired)
                if differing is None:
                    continue
                argument = cst.Module([]).code_for_node(source.argument)
                shown, advice = self._given(direct, differing, paired)
                problem = (
                    f"{encoder} takes its metadata class from get_attention_backend({argument}), but gives its "
                    f"attention layers the backend {shown}: when the two differ the layers get metadata of another "
                    f"backend (AttributeError at the first forward); {advice}"
                )
            elif source.fixed is not None and direct.pinned is None:
                shown = self._given(direct, ())[0]
                problem = (
                    f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers get the "
                    f"backend {shown}: any other backend gets metadata it cannot read; "
                    f"derive it with get_attention_backend({direct.code}).Metadata"
                )
            elif (
                source.fixed is not None
                and source.fixed.startswith("get_attention_backend(")
                and (source.fixed != f'get_attention_backend("{direct.pinned}")')
            ):
                fix = f'use get_attention_backend("{direct.pinned}")'
                if direct.arm is not None:  # not the layers' only backend: the metadata class must follow them all
                    fix = f"derive it with get_attention_backend({direct.code})"
                problem = (
                    f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers are "
                    f'pinned to "{direct.pinned}" ({self._where(direct)}): the layers get metadata of another backend '
                    f"(AttributeError at the first forward); {fix}.Metadata"
                )
            else:
                continue
            self.report(source.node, problem)
            return True
        return False

    def _where(self, direct: _Direct, paired: _Arm | None = None) -> str:
        """`line 12`, `line 12, by _vision_sub_config()`: where layers were given their backend; for
        an arm of a conditional, the arm's line too, and the metadata class's arm `paired` with it."""
        given = f"line {self._line(direct.where)}{_by(direct.via)}"
        if direct.arm is None:
            return given
        where = f"line {self._line(direct.arm)}, one arm of "
        if direct.holder is not None:
            where += f"the conditional `{direct.holder}` holds, given the layers at {given}"
        else:
            where += f"a conditional{_by(direct.via)}"
        if paired is not None and paired.path:
            where += f"; the metadata class's arm is {cst.Module([]).code_for_node(paired.written)}"
        return where

    def _counterpart(self, direct: _Direct, source: _MetadataSource) -> _Arm | None:
        """The arm of the metadata class's backend that goes with the layers' arm `direct`: the one
        on the same tests (`get_attention_backend(backend)`, backend the layers' conditional, pairs
        its TRTLLM arm with theirs); None where there is no such one arm (the metadata class's
        backend is judged whole). Tests are compared as written, in any method, as `_key` writes a
        conditional (the rule does not follow what a test reads)."""
        paired = [arm for arm in source.arms if arm.path == direct.path[: len(arm.path)]]
        return paired[0] if len(paired) == 1 else None

    def _differing(
        self, direct: _Direct, source: _MetadataSource, paired: _Arm | None = None
    ) -> tuple[tuple[str, _Argument], ...] | None:
        """Do the layers' backend and the metadata class's (its arm `paired` with the layers', if
        any) come from different places? The choice of arguments (`_variants`) under which they do
        (empty when no parameter is in question); None where they come from one place for every
        choice."""
        metadata = paired.resolved if paired is not None else source.resolved
        if metadata is None:
            return ()
        variants = self._variants(((direct.node, direct.scope), (metadata, source.scope)))
        return next((chosen for keys, chosen in variants if keys[0] != keys[1]), None)

    def _given(
        self, direct: _Direct, chosen: tuple[tuple[str, _Argument], ...], paired: _Arm | None = None
    ) -> tuple[str, str]:
        """The backend layers are given, for a message, with where (`config.attn_backend (line 14,
        through self._layer(), which builds them at line 17)`: a parameter as the argument its
        calls hand it, or the one `chosen`), and the advice. A parameter no call hands a value is
        the backend `passed as` it. An arm of a conditional is shown as the arm, with the metadata
        class's arm `paired` with it (`_where`); the advice names the whole."""
        picked = dict(chosen)
        node, scope, methods = direct.node, direct.scope, []
        argument: _Argument | None = None
        for _ in range(8):  # a chain this long is not real code; a cycle must not hang the rule
            if not isinstance(node, cst.Name):
                break
            marked = node.value + scope
            self._chosen = picked
            distinct = [picked[marked]] if marked in picked else self._distinct(marked, 0)
            self._chosen = {}
            if distinct is None or len(distinct) != 1 or marked in self._values:
                break
            methods.append(self._methods[marked[marked.rfind(_SCOPE) :]])
            argument = distinct[0]
            node, scope = argument[0], argument[1]
        where = self._where(direct, paired)
        split = ""
        if chosen:
            split = f"hand every call of self.{self._method_of(chosen[0][0])}() the backend the metadata class is derived from"
        if argument is not None:
            code = cst.Module([]).code_for_node(argument[2])
            through = ", ".join(f"self.{method}()" for method in reversed(methods))
            shown = f"{code} (line {self._line(argument[2])}, through {through}, which builds them at {where})"
            return shown, split if chosen else f"derive the metadata class with get_attention_backend({code}).Metadata"
        given = cst.Module([]).code_for_node(direct.arm) if direct.arm is not None else direct.code
        if self._is_parameter(direct.node, direct.scope):
            shown = f"passed as `{given}` ({where})"
        else:
            shown = f"{given} ({where})"
        if chosen:
            param, (_, _, written) = chosen[0]
            code = cst.Module([]).code_for_node(written)
            shown += (
                f", with {code} for `{_shown(param)}` (line {self._line(written)}, self.{self._method_of(param)}())"
            )
            return shown, split
        return shown, f"derive the metadata class with get_attention_backend({direct.code}).Metadata"

    def _method_of(self, marked: str) -> str:
        """The method a marked local name (`backend@f2`) belongs to."""
        return self._methods.get(marked[marked.rfind(_SCOPE) :], "") if _SCOPE in marked else ""

    def _is_parameter(self, node: cst.BaseExpression, scope: str) -> bool:
        """Is `node` a parameter of the method `scope` marks, given no value in it?"""
        if not isinstance(node, cst.Name):
            return False
        marked = node.value + scope
        return marked not in self._values and marked in self._params.get(self._methods.get(scope, ""), [])

    def _key(self, node: cst.BaseExpression, scope: str, depth: int = 0) -> str:
        """What a backend expression written in function `scope` reads, the same however it is
        written: a name through what it was given (`backend = model_config.attn_backend`), a
        config's attn_backend (`X.attn_backend`, `getattr(X, "attn_backend")`) through the config's
        copies and the override set on it, a pinned backend by its name."""
        pinned = self._pinned(node)
        if pinned is not None:
            return f'="{pinned}"'
        name = _name_of(node)
        if name is not None and name.startswith("self.") and name in self._values and depth < 8:
            # local names were resolved where used
            return self._key(self._values[name], self._scopes[name], depth + 1)
        config = _backend_read(node)
        if config is not None:
            return self._config_backend(config, scope, depth + 1)
        if isinstance(node, cst.BooleanOperation) and depth < 8:
            return self._fallback_key(node, scope, depth + 1)
        returned = self._backend_returned(node)
        if returned is not None and depth < 8:
            return self._key(returned, scope, depth + 1)
        handed = self._handed_to(name + scope, depth) if name is not None and depth < 8 else None
        if handed is not None:
            return self._key(*handed, depth + 1)
        # A name given nothing here (a parameter) keeps its name, in any method: a helper method's
        # `encoder_backend` is taken for what `__init__` hands it, not reported as another backend.
        return name if name is not None else cst.Module([]).code_for_node(node)

    def _fallback_key(self, node: cst.BooleanOperation, scope: str, depth: int) -> str:
        """The key of `a or b` (`and` alike) by what each operand reads, so that `override or
        config.attn_backend` and `override or self.config.attn_backend` are one backend. A `None`
        operand of `or` is skipped: `None or x` is x (a helper's default, `self._backend()`)."""
        operator = "or" if isinstance(node.operator, cst.Or) else "and"
        operands = _operands(node, type(node.operator))
        if operator == "or":
            operands = [each for each in operands if not _is_none(each)] or operands
        keys = [self._key(each, scope, depth) for each in operands]
        return keys[0] if len(keys) == 1 else "(" + f" {operator} ".join(keys) + ")"

    def _backend_returned(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """What a call of a helper that returns a backend returns, in the caller's names
        (`self._backend(override)` as `override or self.config.attn_backend`); None for anything
        else, or a call the rule cannot bind."""
        helper = self._helper_of(node, backend=True) if isinstance(node, cst.Call) else None
        if helper is None or helper.value is None:
            return None
        assert isinstance(node, cst.Call)
        bound = _bound(helper, node)
        return _substituted(helper.value, bound) if bound is not None else None

    def _handed_to(self, marked: str, depth: int) -> tuple[cst.BaseExpression, str] | None:
        """A method's parameter (`backend@f2`, given no value in it) as the expression and scope
        of what `self.method(...)` hands it, so that `create_attention(backend)` in `_layer(self,
        backend)` is the `override` that `__init__` passes: only when every call of the method hands
        it one backend (`_distinct`), or the one `_chosen` for it (`_variants`). Calls that disagree
        leave it undecided (`_undecided`), as does no call: it keeps its name (None)."""
        if marked in self._values:
            return None
        if marked in self._chosen:
            return self._chosen[marked][:2]
        distinct = self._distinct(marked, depth)
        if distinct is None:
            return None
        if len(distinct) == 1:
            return distinct[0][:2]
        if marked not in self._undecided:
            self._undecided.append(marked)
        return None

    def _arguments(self, marked: str) -> list[_Argument] | None:
        """What each `self.method(...)` call hands the method's parameter `marked` (its default where
        a call hands nothing); None for no parameter, no call, or one that cannot be bound (`*args`)."""
        mark = marked[marked.rfind(_SCOPE) :] if _SCOPE in marked else ""
        method = self._methods.get(mark)
        params = self._params.get(method, []) if method is not None else []
        if method is None or marked not in params:
            return None
        index, name = params.index(marked), _shown(marked)
        default = self._defaults.get(method, {}).get(name)
        found: list[_Argument] = []
        for handing in (h for h in self._handings if h.method == method):
            if not handing.bindable:
                return None
            keyword = next(((v, w) for k, v, w in handing.keywords if k == name), None)
            if index < self._positional.get(method, 0) and index < len(handing.positional):
                value, written = handing.positional[index]
                found.append((value, handing.scope, written))
            elif keyword is not None:
                found.append((keyword[0], handing.scope, keyword[1]))
            elif default is not None:
                found.append((default, "", default))
        return found or None

    def _distinct(self, marked: str, depth: int) -> list[_Argument] | None:
        """The arguments handed to parameter `marked` (`_arguments`), one for each backend they read
        (the first call of each, in source order); None where `_arguments` has none, or while
        they are being keyed (a method that hands its parameter to itself)."""
        arguments = self._arguments(marked)
        if arguments is None or marked in self._tracing or depth >= 8:
            return None
        self._tracing.add(marked)
        try:
            keyed: dict[str, _Argument] = {}
            for argument in arguments:
                keyed.setdefault(self._key(argument[0], argument[1], depth + 1), argument)
        finally:
            self._tracing.discard(marked)
        return list(keyed.values())

    def _variants(
        self, nodes: Sequence[tuple[cst.BaseExpression, str]]
    ) -> list[tuple[list[str], tuple[tuple[str, _Argument], ...]]]:
        """The keys of `nodes` (expression, scope) for each choice among the arguments of the
        parameters they read that `self.method(...)` calls hand different backends, the choice with
        them: one parameter takes one argument in all of them (the metadata class and layers built
        in one method that is called twice agree in each call). An argument `None` hands no backend
        (the layer picks its own): no choice. At most 16 choices, 4 parameters deep."""
        found: list[tuple[list[str], tuple[tuple[str, _Argument], ...]]] = []
        pending: list[tuple[tuple[str, _Argument], ...]] = [()]
        while pending and len(found) < 16:
            chosen = pending.pop(0)
            self._chosen, self._undecided = dict(chosen), []
            keys = [self._key(node, scope) for node, scope in nodes]
            undecided = [each for each in self._undecided if each not in self._chosen]
            if not undecided or len(chosen) >= 4:
                found.append((keys, chosen))
                continue
            distinct = self._distinct(undecided[0], 0) or []
            pending += [(*chosen, (undecided[0], each)) for each in distinct if not _is_none(each[0])]
        self._chosen, self._undecided = {}, []
        return found

    def _config_backend(self, config: cst.BaseExpression, scope: str, depth: int) -> str:
        """The key of a config's attn_backend (`model_config.vision_config.attn_backend` as written
        when the config is no name)."""
        name = _name_of(config)
        if name is None:
            return cst.Module([]).code_for_node(config) + ".attn_backend"
        return self._named_config_backend(name if name.startswith("self.") else name + scope, depth)

    def _named_config_backend(self, name: str, depth: int) -> str:
        """The key of config `name` (marked with its function, `_seal`)'s attn_backend: the value an
        override sets, else that of the config it copies or was given (`self.config =
        model_config.vision_config`); a parameter's by its name, unmarked, as `_key` keeps it."""
        override = self._overrides.get(name)
        if depth >= 8:  # a chain this long is not real code; a cycle must not hang the rule
            return f"{_unmarked(name)}.attn_backend"
        if override is not None and override.value is not None:
            return self._key(override.value, override.scope, depth + 1)
        if name in self._copies:
            return self._named_config_backend(self._copies[name], depth + 1)
        value = self._values.get(name)
        if value is not None and not isinstance(value, cst.Call):
            return self._config_backend(value, self._scopes[name], depth + 1)
        if value is None and name in self._aliases:  # a parameter: what its caller hands it (`_link`)
            return self._named_config_backend(self._aliases[name], depth + 1)
        return f"{_unmarked(name)}.attn_backend"

    def _pinned_to(self, name: str) -> str | None:
        """The backend the layers built from config `name` are pinned to, if one is written."""
        override = self._override_of(name)
        return override.pinned if override is not None else None

    def _pinned_elsewhere(self, name: str, fixed: str) -> bool:
        """Layers pinned to one backend, metadata hard-coded to another by name. A metadata class
        next to pinned layers is not judged: which backend a class pairs with is not known here."""
        pinned = self._pinned_to(name)
        return (
            pinned is not None
            and fixed.startswith("get_attention_backend(")
            and fixed != f'get_attention_backend("{pinned}")'
        )


# What a helper's local name holds (`_HelperReader`): a config (the parameter it derives from, and
# how: `same`, `copy`, `override`, with the backend keyword and its value), or another value.
_Held = tuple[str, str, str, "cst.BaseExpression | None"]


class _HelperReader:
    """Reads a function's body, as `_Helper` describes it: straight-line statements only (a
    docstring, assignments, `c.attn_backend = b` or `setattr(c, "attn_backend", b)` on a copy,
    calls and asserts that set nothing), up to the first `return`. A branch, a loop, any other
    statement (a call that is no log call) or a return of something else: not a helper (None)."""

    def __init__(self, node: cst.FunctionDef, patterns: Sequence[str], method: bool) -> None:
        self.node = node
        self.patterns = patterns
        params = node.params
        static = any(_last_name(d.decorator) == "staticmethod" for d in node.decorators)
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        self.positional = positional[1:] if method and not static else positional
        self.keyword_only = [p.name.value for p in params.kwonly_params]
        every = (*params.posonly_params, *params.params, *params.kwonly_params)
        self.defaults = tuple((p.name.value, p.default) for p in every if p.default is not None)
        self.configs: dict[str, _Held] = {p: (p, "same", "", None) for p in (*self.positional, *self.keyword_only)}
        self.values: dict[str, cst.BaseExpression | None] = {}  # other local names, as they can be written

    def read(self) -> _Helper | None:
        """The helper, if the function is one that returns a config or a backend."""
        returned = self._returned()
        if returned is None:
            return None
        name, positional, keyword_only = self.node.name.value, tuple(self.positional), tuple(self.keyword_only)
        held = self._config(returned)
        if held is not None:
            config, kind, keyword, value = held
            return _Helper(name, positional, keyword_only, self.defaults, config, kind, keyword, value)
        # Anything else it returns is read only where a backend is expected (`_key`), as a backend.
        backend = self._written(returned)
        if backend is None:
            return None
        return _Helper(name, positional, keyword_only, self.defaults, "", "backend", value=backend)

    def _returned(self) -> cst.BaseExpression | None:
        """The value of the first `return`, the statements before it followed; None where the
        body is no straight line the reader knows, or returns nothing."""
        body = self.node.body
        statements = [body] if isinstance(body, cst.SimpleStatementSuite) else body.body
        for statement in statements:
            if not isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
                return None
            for small in statement.body:
                if isinstance(small, cst.Return):
                    return small.value
                if not self._statement(small):
                    return None
        return None

    def _statement(self, small: cst.BaseSmallStatement) -> bool:
        """Follow one statement; False when it is none the reader knows."""
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            return self._assign(small.targets[0].target, small.value)
        if isinstance(small, cst.AnnAssign) and small.value is not None:
            return self._assign(small.target, small.value)
        if isinstance(small, cst.Expr):
            call = small.value
            if isinstance(call, cst.Call) and _last_name(call.func) == "setattr" and len(call.args) == 3:
                field = _string(call.args[1].value)
                if field is not None and name_matches_any(field, self.patterns):
                    return self._set(call.args[0].value, call.args[2].value)
            # A docstring or a log call; any other call might build a layer from the config.
            return isinstance(call, cst.SimpleString | cst.ConcatenatedString) or (
                isinstance(call, cst.Call) and _is_logging(call)
            )
        return isinstance(small, cst.Assert | cst.Pass)

    def _assign(self, target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> bool:
        if isinstance(target, cst.Name):
            held = self._config(value)
            self.configs.pop(target.value, None)
            self.values.pop(target.value, None)
            if held is not None:
                self.configs[target.value] = held
            else:
                self.values[target.value] = self._written(value)
            return True
        if isinstance(target, cst.Attribute) and name_matches_any(target.attr.value, self.patterns):
            return self._set(target.value, value)
        # `c.x = ...` on a copy changes no backend; on the caller's config, or anything else, unknown.
        owner = _root_name(target) if isinstance(target, cst.Attribute) else None
        return owner is not None and self.configs.get(owner, ("", "same"))[1] != "same"

    def _set(self, config: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        """`c.attn_backend = b` on a copy: an override (on the caller's own config: not followed)."""
        if not isinstance(config, cst.Name):
            return False
        held = self.configs.get(config.value)
        if held is None or held[1] == "same":
            return False
        self.configs[config.value] = (held[0], "override", "attn_backend", self._written(value))
        return True

    def _config(self, value: cst.BaseExpression) -> _Held | None:
        """What config `value` is: a parameter, a copy of one, or an override of one."""
        if isinstance(value, cst.Name):
            return self.configs.get(value.value)
        if not (isinstance(value, cst.Call) and value.args and _last_name(value.func) in _DERIVATIONS):
            return None
        first = value.args[0].value if not value.args[0].star else None
        held = self.configs.get(first.value) if isinstance(first, cst.Name) else None
        if held is None:
            return None
        if _last_name(value.func) == "replace":
            for keyword, argument in reversed(_keywords(value)):  # the last one given wins
                if name_matches_any(keyword, self.patterns):
                    return (held[0], "override", keyword, self._written(argument))
        return (held[0], "copy" if held[1] == "same" else held[1], held[2], held[3])

    def _written(self, value: cst.BaseExpression) -> cst.BaseExpression | None:
        """`value` with the function's local names (not its parameters) replaced by what they hold;
        a local config cannot be written in the caller's names."""
        params = (*self.positional, *self.keyword_only)
        return _substituted(value, {**{k: None for k in self.configs if k not in params}, **self.values})


def _substituted(
    value: cst.BaseExpression, names: Mapping[str, cst.BaseExpression | None]
) -> cst.BaseExpression | None:
    """`value` with each of `names` replaced by its expression: a name, an attribute of one, `a or
    b` of such, or anything that reads none of them; None when it reads one that holds None or
    is written another way (`pick(backend)`)."""
    if isinstance(value, cst.Name):
        return names.get(value.value, value)
    if isinstance(value, cst.Attribute):
        owner = _substituted(value.value, names)
        return None if owner is None else value if owner is value.value else value.with_changes(value=owner)
    if isinstance(value, cst.BooleanOperation):
        left, right = _substituted(value.left, names), _substituted(value.right, names)
        if left is None or right is None:
            return None
        return value.with_changes(left=left, right=right)
    if any(isinstance(n, cst.Name) and n.value in names for n in _descendants(value)):
        return None
    return value


def _read_helpers(reader: _HelperReader, configs: dict[str, _Helper], backends: dict[str, _Helper]) -> None:
    """File the function `reader` reads among the helpers that return a config or a backend
    (the last definition of a name is the one called)."""
    name = reader.node.name.value
    configs.pop(name, None)
    backends.pop(name, None)
    helper = reader.read()
    if helper is not None:
        (backends if helper.kind == "backend" else configs)[name] = helper


def _operands(node: cst.BaseExpression, operator: type[cst.BaseBooleanOp]) -> list[cst.BaseExpression]:
    """`a or b or c` as [a, b, c] (however grouped), for one operator."""
    if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, operator):
        return [*_operands(node.left, operator), *_operands(node.right, operator)]
    return [node]


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    pending = [node]
    while pending:
        each = pending.pop()
        found.append(each)
        pending += each.children
    return found


def _bound(helper: _Helper, call: cst.Call) -> dict[str, cst.BaseExpression | None] | None:
    """The helper's parameters as `call` gives them (or their defaults; None for one not given);
    None for a call the rule cannot bind (`*args`, an unknown keyword)."""
    bound: dict[str, cst.BaseExpression | None] = dict.fromkeys((*helper.positional, *helper.keyword_only))
    bound.update(helper.defaults)
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or len(positional) > len(helper.positional):
        return None
    for name, argument in zip(helper.positional, positional, strict=False):
        bound[name] = argument.value
    for argument in call.args:
        if argument.keyword is not None:
            if argument.keyword.value not in bound:
                return None
            bound[argument.keyword.value] = argument.value
    return bound


def _by(helper: str | None) -> str:
    """`, by _vision_sub_config()`: the helper a backend was set by, for a message's parenthesis."""
    return f", by {helper}()" if helper is not None else ""


def _arms(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values `a if c else b` may take, nested conditionals flattened, in source order."""
    if isinstance(value, cst.IfExp):
        return [*_arms(value.body), *_arms(value.orelse)]
    return [value]


def _derived_from(value: cst.BaseExpression) -> str | None:
    """c in `replace(c, ...)`, `copy.deepcopy(c)`: the config a new one is derived from."""
    if isinstance(value, cst.Call) and value.args and _last_name(value.func) in _DERIVATIONS:
        return _name_of(value.args[0].value)
    return None


def _is_logging(call: cst.Call) -> bool:
    """`print(...)` or a logger's method (`logger.info`, `self._log.debug`): a receiver named
    like a logger, so that a layer's own `.log(...)` or `.info(...)` still counts."""
    if isinstance(call.func, cst.Name):
        return call.func.value == "print"
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in _LOG_METHODS:
        return False
    receiver = _last_name(call.func.value)
    # A word of the name (`logger`, `_log`, `vision_logger`, `logging`), not any "log" (`catalog`).
    return receiver is not None and any(word.startswith("log") for word in receiver.lower().split("_"))


def _shown(name: str) -> str:
    """A name as written: `model_config` for the config it held before a rebinding (`_retire`)."""
    return name.partition("@")[0]


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _unmarked(name: str) -> str:
    """A local name without its function's mark (`_seal`): `model_config@0` for `model_config@0@f1`."""
    return name.partition(_SCOPE)[0]


def _unpartial(call: cst.Call, callee: str | None) -> cst.Call:
    """`functools.partial(create_attention, backend, ...)` as the call it stands for: the layers
    the partial builds get the arguments bound here."""
    if callee != "partial" or not call.args or call.args[0].keyword is not None or call.args[0].star:
        return call
    return call.with_changes(func=call.args[0].value, args=call.args[1:])


def _keywords(call: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
    """(name, value) of a call's keywords, with those of an unpacked literal: `**{"k": v}`, `**dict(k=v)`."""
    found: list[tuple[str, cst.BaseExpression]] = []
    for argument in call.args:
        if argument.keyword is not None:
            found.append((argument.keyword.value, argument.value))
        elif argument.star == "**" and isinstance(argument.value, cst.Dict):
            for element in argument.value.elements:
                if isinstance(element, cst.DictElement) and (key := _string(element.key)) is not None:
                    found.append((key, element.value))
        elif (
            argument.star == "**" and isinstance(argument.value, cst.Call) and _last_name(argument.value.func) == "dict"
        ):
            found += _keywords(argument.value)
    return found


def _is_metadata_cls(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return target.value == "metadata_cls"
    return (
        isinstance(target, cst.Attribute)
        and target.attr.value == "metadata_cls"
        and isinstance(target.value, cst.Name)
        and target.value.value == "self"
    )


def _last_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _backend_read(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """X in `X.attn_backend` or `getattr(X, "attn_backend")`: the config whose backend is read."""
    if isinstance(node, cst.Attribute) and node.attr.value == "attn_backend":
        return node.value
    if (
        isinstance(node, cst.Call)
        and _last_name(node.func) == "getattr"
        and len(node.args) == 2
        and _string(node.args[1].value) == "attn_backend"
    ):
        return node.args[0].value
    return None


def _unpacked(
    target: cst.BaseAssignTargetExpression, value: cst.BaseExpression
) -> list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]]:
    """`a, self.b = x, y`: each target with its value (none when the shapes differ)."""
    if not (isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple)):
        return []
    targets, values = target.elements, value.elements
    if len(targets) != len(values) or any(isinstance(e, cst.StarredElement) for e in (*targets, *values)):
        return []
    return [(t.value, v.value) for t, v in zip(targets, values, strict=True)]  # type: ignore[misc]


def _root_name(node: cst.BaseExpression) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _name_of(node: cst.BaseExpression) -> str | None:
    """`x` or `self.x`: the names a config is kept under in an encoder's `__init__`."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def _config_of(node: cst.BaseExpression) -> str | None:
    """The config whose backend `node` reads: `self.model_config` in `self.model_config.attn_backend`."""
    if isinstance(node, cst.Attribute):
        owner = _name_of(node.value)
        if owner is not None:
            return owner
    return _root_name(node)


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value
    return None
