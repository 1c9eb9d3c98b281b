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
    "from tensorrt_llm._torch.attention_backend.utils import get_attention_backend\n"
    "from tensorrt_llm._torch.attention_backend.interface import AttentionMetadata\n"
    "from tensorrt_llm._torch.modules.attention import Attention\n\n"
    "class VisionEncoder:\n"
    "    def __init__(self, model_config, encoder_backend):\n"
)


_DERIVATIONS = ("replace", "deepcopy", "copy")


@dataclass(frozen=True)
class _Override:
    """A config derived from `source` whose attn_backend is set (to `pinned`, if a literal)."""

    source: str
    pinned: str | None
    line: int


@dataclass(frozen=True)
class _MetadataSource:
    node: cst.BaseExpression
    config: str | None  # root name of the config whose backend picks the metadata class
    fixed: str | None  # a metadata class or backend name written in the code


class MetadataBackendMismatch(Rule):
    """An encoder takes its metadata class and its attention layers' backend from different sources.

    An encoder sets `self.metadata_cls` (the metadata object the engine builds and hands to every
    attention layer) and separately builds its attention layers from a config's `attn_backend`.
    Two independent reads of the backend name: as soon as a per-encoder override changes one and
    not the other, the layers receive metadata of another backend, and the first forward fails
    with `AttributeError: 'TrtllmAttentionMetadata' object has no attribute 'kv_layout'`.

    Reported: the metadata class derived from `get_attention_backend(model_config.attn_backend)`
    while the layers get a config whose backend is overridden (`dataclasses.replace(...,
    attn_backend=...)`, a copy with `attn_backend` assigned); and a metadata class hard-coded to
    one backend (a metadata class, or `get_attention_backend("TRTLLM")`) while the layers follow a
    config. Derive both from the same config.
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
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._functions = self.config.str_list("backend-functions")
        self._patterns = self.config.str_list("backend-context-names")
        self._reset()

    def _reset(self) -> None:
        self._overrides: dict[str, _Override] = {}
        self._copies: dict[str, str] = {}
        self._config_args: set[str] = set()
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
        if _last_name(node.func) in (*_DERIVATIONS, *self._functions):
            return  # deriving a config, or picking a backend by name, builds no layer
        for argument in node.args:
            if isinstance(argument.value, cst.Name) and "config" in argument.value.value.lower():
                self._config_args.add(argument.value.value)

    def _assignment(self, target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> None:
        line = self.position(target).start.line
        if _is_metadata_cls(target):
            self._sources.append(self._metadata_source(value))
        elif isinstance(target, cst.Name):
            self._derivation(target.value, value, line)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            if name_matches_any(target.attr.value, self._patterns) and target.value.value in self._copies:
                pinned = _string(value)
                self._overrides[target.value.value] = _Override(self._copies[target.value.value], pinned, line)

    def _derivation(self, name: str, value: cst.BaseExpression, line: int) -> None:
        if not isinstance(value, cst.Call) or not value.args:
            return
        callee = _last_name(value.func)
        source = value.args[0].value
        if not isinstance(source, cst.Name):
            return
        if callee == "replace":
            for argument in value.args[1:]:
                if argument.keyword is not None and name_matches_any(argument.keyword.value, self._patterns):
                    self._overrides[name] = _Override(source.value, _string(argument.value), line)
        elif callee in _DERIVATIONS:
            self._copies[name] = source.value

    def _metadata_source(self, value: cst.BaseExpression) -> _MetadataSource:
        if isinstance(value, cst.Attribute) and value.attr.value == "Metadata" and isinstance(value.value, cst.Call):
            call = value.value
            if _last_name(call.func) in self._functions and call.args:
                argument = call.args[0].value
                literal = _string(argument)
                if literal is not None:
                    return _MetadataSource(value, None, f'get_attention_backend("{literal}")')
                return _MetadataSource(value, _root_name(argument), None)
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
        if source.config is not None:
            for name in sorted(self._config_args):
                override = self._overrides.get(name)
                if override is not None and override.source == source.config:
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
            following = sorted(n for n in self._config_args if self._follows_config(n, source.fixed))
            if following:
                config = following[0]
                self.report(
                    source.node,
                    (
                        f"{encoder} hard-codes its metadata class ({source.fixed}) while its attention layers follow "
                        f"{config}'s attn_backend: any other backend gets metadata it cannot read; derive it with "
                        f"get_attention_backend({config}.attn_backend).Metadata"
                    ),
                )

    def _follows_config(self, name: str, fixed: str) -> bool:
        override = self._overrides.get(name)
        return override is None or override.pinned is None or f'"{override.pinned}"' not in fixed


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


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value
    return None
