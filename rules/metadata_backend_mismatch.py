"""DL106 metadata-backend-mismatch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from declint.config import Config
from declint.index import ProjectIndex
from declint.lazy import lazy_module
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
# Backend functions that build a layer (their first argument is the layer's backend); the others
# in `backend-functions` (`get_attention_backend`) pick a class.
_LAYER_FACTORIES = ("create_attention",)


@dataclass(frozen=True)
class _Override:
    """A config derived from `source` whose attn_backend is set (to `pinned`, if a literal)."""

    source: str
    pinned: str | None
    line: int


@dataclass(frozen=True)
class _Direct:
    """Attention layers given their backend by name, not through a config: `create_attention(
    name, ...)`, or a backend keyword (`Attention(..., attn_backend=name)`)."""

    code: str  # the backend expression as written
    name: str | None  # the name it is kept under (`backend_name`, `self.backend`), if one
    config: str | None  # the config whose attn_backend it reads (`vision_config.attn_backend`)
    pinned: str | None  # the backend it names, when written (a string or pinned constant)
    line: int


@dataclass(frozen=True)
class _MetadataSource:
    node: cst.BaseExpression
    config: str | None  # root name of the config whose backend picks the metadata class
    fixed: str | None  # a metadata class or backend name written in the code
    argument: str | None = None  # get_attention_backend's argument as written
    name: str | None = None  # the name that argument is kept under (`backend_name`), if one


class MetadataBackendMismatch(Rule):
    """An encoder takes its metadata class and its attention layers' backend from different sources.

    An encoder sets `self.metadata_cls` (the metadata object the engine builds and hands to every
    attention layer) and separately builds its attention layers from a config's `attn_backend`.
    Two independent reads of the backend name: as soon as a per-encoder override changes one and
    not the other, the layers receive metadata of another backend, and the first forward fails
    with `AttributeError: 'TrtllmAttentionMetadata' object has no attribute 'kv_layout'`.

    Reported: the metadata class derived from `get_attention_backend(model_config.attn_backend)`
    while the layers get a config whose backend is overridden (`dataclasses.replace(...,
    attn_backend=...)`, a copy with `attn_backend` assigned); a metadata class hard-coded to one
    backend (a metadata class, or `get_attention_backend("TRTLLM")`) while the layers follow a
    config; layers pinned to one backend (a string, or a module-level constant such as
    `BACKEND_TRTLLM`) with `get_attention_backend` of another; and layers given a backend by name
    (`create_attention(encoder_backend, ...)`, `Attention(..., attn_backend=encoder_backend)`)
    other than the one the metadata class comes from. A config may be kept under a name
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
            _HEAD + "        self.attn = create_attention(model_config.attn_backend, layer_idx=0)\n"
            "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n"
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
                "VisionEncoder takes its metadata class from model_config's attn_backend, but gives its attention "
                "layers the backend encoder_backend (line 9): when the two differ the layers get metadata of another "
                "backend (AttributeError at the first forward); derive the metadata class with "
                "get_attention_backend(encoder_backend).Metadata"
            ),
        ),
        Invalid(
            _HEAD + '        self.attn = Attention(config=model_config, attn_backend="TRTLLM")\n'
            '        self.metadata_cls = get_attention_backend("VANILLA").Metadata\n',
            expect=((10, 28),),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._functions = self.config.str_list("backend-functions")
        self._patterns = self.config.str_list("backend-context-names")
        self._reset()

    def _reset(self) -> None:
        self._overrides: dict[str, _Override] = {}
        self._copies: dict[str, str] = {}
        self._aliases: dict[str, str] = {}  # `self.model_config = model_config`: one config, two names
        self._config_args: set[str] = set()
        self._direct: list[_Direct] = []
        self._sources: list[_MetadataSource] = []

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        return (b"metadata_cls",)

    # ---- one encoder class at a time -------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        if len(self._scope) == 1:
            self._reset()

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        if len(self._scope) == 1:
            for source in self._sources:
                self._judge(original_node.name.value, source)
        super().leave_ClassDef(original_node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assignment(target.target, node.value)

    def visit_Call(self, node: cst.Call) -> None:
        callee = _last_name(node.func)
        if callee in _LAYER_FACTORIES and callee in self._functions and node.args and node.args[0].keyword is None:
            self._direct.append(self._direct_backend(node.args[0].value))
        if callee in (*_DERIVATIONS, *self._functions) or (callee is not None and "config" in callee.lower()):
            return  # deriving or building a config (`ModelConfig(...)`), or picking a backend, builds no layer
        keywords = [a for a in node.args if a.keyword is not None and name_matches_any(a.keyword.value, self._patterns)]
        if keywords:  # the layer's backend is the keyword's, whatever config it is also given
            self._direct += [self._direct_backend(argument.value) for argument in keywords]
            return
        for argument in node.args:
            name = _name_of(argument.value)
            if name is not None and "config" in name.rpartition(".")[2].lower():
                self._config_args.add(name)

    def _direct_backend(self, value: cst.BaseExpression) -> _Direct:
        reads = _config_of(value) if isinstance(value, cst.Attribute) and value.attr.value == "attn_backend" else None
        code = cst.Module([]).code_for_node(value)
        return _Direct(code, _name_of(value), reads, self._pinned(value), self.position(value).start.line)

    def _assignment(self, target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> None:
        line = self.position(target).start.line
        name = _name_of(target)
        if _is_metadata_cls(target):
            self._sources.append(self._metadata_source(value))
        elif name is not None:
            source = _name_of(value)
            if source is not None:
                self._aliases[name] = source
            else:
                self._derivation(name, value, line)
        elif isinstance(target, cst.Attribute) and name_matches_any(target.attr.value, self._patterns):
            copy = _name_of(target.value)
            if copy is not None and copy in self._copies:
                self._overrides[copy] = _Override(self._copies[copy], self._pinned(value), line)

    def _derivation(self, name: str, value: cst.BaseExpression, line: int) -> None:
        if not isinstance(value, cst.Call) or not value.args:
            return
        callee = _last_name(value.func)
        source = _name_of(value.args[0].value)
        if source is None:
            return
        if callee == "replace":
            for argument in value.args[1:]:
                if argument.keyword is not None and name_matches_any(argument.keyword.value, self._patterns):
                    self._overrides[name] = _Override(source, self._pinned(argument.value), line)
        elif callee in _DERIVATIONS:
            self._copies[name] = source

    def _pinned(self, value: cst.BaseExpression) -> str | None:
        """The backend an override pins: a string, or a module-level string constant such as the
        Literal-typed `BACKEND_TRTLLM` (here or imported); None when it is chosen at run time."""
        if not isinstance(value, cst.Name):
            return _string(value)
        own = dict(self.context.facts.constants).get(value.value)
        imported = dict(self.context.facts.imports).get(value.value)
        return own if own is not None else self.index.constant(f"={imported}") if imported else None

    def _canonical(self, name: str) -> str:
        """The config a name refers to, through plain copies of the reference (`self.x = x`)."""
        for _ in range(8):  # a chain this long is not real code; a cycle must not hang the rule
            if name not in self._aliases:
                break
            name = self._aliases[name]
        return name

    def _override_of(self, name: str) -> _Override | None:
        return self._overrides.get(name) or self._overrides.get(self._canonical(name))

    def _metadata_source(self, value: cst.BaseExpression) -> _MetadataSource:
        if isinstance(value, cst.Attribute) and value.attr.value == "Metadata" and isinstance(value.value, cst.Call):
            call = value.value
            if _last_name(call.func) in self._functions and call.args:
                argument = call.args[0].value
                literal = _string(argument)
                if literal is not None:
                    return _MetadataSource(value, None, f'get_attention_backend("{literal}")')
                code = cst.Module([]).code_for_node(argument)
                return _MetadataSource(value, _config_of(argument), None, code, _name_of(argument))
        if isinstance(value, cst.Name | cst.Attribute) and self._is_metadata_class(value):
            return _MetadataSource(value, None, _last_name(value))
        return _MetadataSource(value, None, None)

    def _is_metadata_class(self, node: cst.Name | cst.Attribute) -> bool:
        """Only a name that resolves to a metadata class is hard-coded (not a parameter)."""
        dotted = cst.Module([]).code_for_node(node)
        head, _, rest = dotted.partition(".")
        local = {c.name: c.qualname for c in self.context.facts.classes}
        base = dict(self.context.facts.imports).get(head) or local.get(head)
        facts = self.index.class_facts(f"{base}.{rest}" if rest else base) if base else None
        return facts is not None and self.index.is_metadata_class(facts)

    # ---- verdict ---------------------------------------------------------------------------
    def _judge(self, encoder: str, source: _MetadataSource) -> None:
        if self._judge_direct(encoder, source):
            return
        if source.config is not None:
            config = self._canonical(source.config)
            for name in sorted(self._config_args):
                override = self._override_of(name)
                if override is not None and self._canonical(override.source) == config:
                    self.report(
                        source.node,
                        (
                            f"{encoder} takes its metadata class from {source.config}'s attn_backend, but builds its "
                            f"attention layers from {name}, whose attn_backend is overridden (line {override.line}): "
                            "with a per-encoder override the layers get metadata of another backend (AttributeError "
                            f"at the first forward); derive both from {name}"
                        ),
                    )
                    return
        elif source.fixed is not None:
            following = sorted(n for n in self._config_args if self._override_of(n) is None or not self._pinned_to(n))
            pinned = sorted(n for n in self._config_args if self._pinned_elsewhere(n, source.fixed))
            if pinned:
                override = self._override_of(pinned[0])
                assert override is not None and override.pinned is not None  # what _pinned_elsewhere checked
                self.report(
                    source.node,
                    (
                        f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers are "
                        f'pinned to "{override.pinned}" ({pinned[0]}, line {override.line}): the layers get metadata '
                        f"of another backend (AttributeError at the first forward); use get_attention_backend"
                        f'("{override.pinned}").Metadata'
                    ),
                )
            elif following:
                config = following[0]
                self.report(
                    source.node,
                    (
                        f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers follow "
                        f"{config}'s attn_backend: any other backend gets metadata it cannot read; derive it with "
                        f"get_attention_backend({config}.attn_backend).Metadata"
                    ),
                )

    def _judge_direct(self, encoder: str, source: _MetadataSource) -> bool:
        """Layers given a backend by name against the metadata class's source; True if reported."""
        for direct in self._direct:
            if source.config is not None:
                if self._same_backend(direct, source):
                    continue
                problem = (
                    f"{encoder} takes its metadata class from {source.config}'s attn_backend, but gives its "
                    f"attention layers the backend {direct.code} (line {direct.line}): when the two differ the "
                    "layers get metadata of another backend (AttributeError at the first forward); derive the "
                    f"metadata class with get_attention_backend({direct.code}).Metadata"
                )
            elif source.fixed is not None and direct.pinned is None:
                problem = (
                    f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers get the "
                    f"backend {direct.code} (line {direct.line}): any other backend gets metadata it cannot read; "
                    f"derive it with get_attention_backend({direct.code}).Metadata"
                )
            elif (
                source.fixed is not None
                and source.fixed.startswith("get_attention_backend(")
                and (source.fixed != f'get_attention_backend("{direct.pinned}")')
            ):
                problem = (
                    f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers are "
                    f'pinned to "{direct.pinned}" (line {direct.line}): the layers get metadata of another backend '
                    f'(AttributeError at the first forward); use get_attention_backend("{direct.pinned}").Metadata'
                )
            else:
                continue
            self.report(source.node, problem)
            return True
        return False

    def _same_backend(self, direct: _Direct, source: _MetadataSource) -> bool:
        """Do the layers' backend and the metadata class's come from one place: the same
        expression, one name (through copies), or the attn_backend of one config?"""
        if direct.code == source.argument:
            return True
        if direct.name is not None and source.name is not None:
            return self._canonical(direct.name) == self._canonical(source.name)
        return direct.config is not None and self._canonical(direct.config) == self._canonical(str(source.config))

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
