"""DL101 direct-sdpa."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from typing import ClassVar

from declint.config import Config
from declint.discovery import glob_match
from declint.index import ProjectIndex
from declint.names import NameResolver
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


@dataclass(frozen=True)
class _Pending:
    call: ast.Call
    scope: str
    top: str


class DirectSdpa(TreeRule):
    """An encoder calls scaled-dot-product attention directly.

    A user picks an encoder's attention backend with
    `multimodal_config.encoder_attention_backend`. An encoder that calls
    `torch.nn.functional.scaled_dot_product_attention` itself never reaches that backend, so the
    user's choice is silently ignored while the model claims to honour it.

    Every alias form is resolved: `F.` / `nn.functional.` / the full path, from-imports with
    `as`, module aliases, names and `self.` attributes assigned from it, `functools.partial(...)`
    and `getattr(F, "scaled_dot_product_attention")`.

    Not reported: calls inside the attention-backend packages (`sdpa-allowed-paths`: the VANILLA
    backend *is* SDPA), and calls in an encoder every owning model declares fixed with
    `FixedEncoderAttention(reason)`. The message says whether the owning model declares the
    encoder configurable (the override is bypassed) or nobody declares it.
    """

    # Names are resolved by declint's light resolver (`declint.names`: Python's scoping rules
    # over the `ast` tree) rather than libcst's scope analysis, which costs about 15x the parse.

    CODE = "DL101"
    NAME = "direct-sdpa"
    SUMMARY = "encoder code calls scaled-dot-product attention directly"
    OPTIONS = ("sdpa-names", "sdpa-allowed-paths", "encoder-name-hints")

    _BYPASS = (
        "{what} calls {sdpa} directly, but {model} declares its {encoder} encoder configurable "
        "({backends}): an encoder_attention_backend override is silently bypassed; route the call "
        "through the attention backend or declare the encoder FixedEncoderAttention(reason)"
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
        self._names = NameResolver(tree, context.module, context.source.rel.endswith("__init__.py"))
        self._aliases: set[str] = set()
        self._bound: set[int] = set()
        self._pending: list[_Pending] = []

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        return tuple(sorted({name.rpartition(".")[2].encode() for name in config.str_list("sdpa-names")}))

    @classmethod
    def applies_to(cls, context: FileContext) -> bool:
        return not glob_match(context.rel, context.config.str_list("sdpa-allowed-paths"))

    def check(self) -> list[Finding]:
        self.walk(self._visit)
        # Aliases may be bound after their use in source order (`__init__` below `forward`).
        for pending in self._pending:
            if self._key(pending.call.func, pending.top) in self._aliases:
                self._report(pending.call, pending.scope, top=pending.top)
        return self.findings

    # ---- collecting -----------------------------------------------------------------------
    def _visit(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Assign):
            self._visit_assign(node)
        elif isinstance(node, ast.Call):
            self._visit_call(node)
        return True

    def _visit_assign(self, node: ast.Assign) -> None:
        if not self._produces_sdpa(node.value):
            return
        self._bound.add(id(node.value))
        for target in node.targets:
            key = self._key(target, self._top)
            if key is not None:
                self._aliases.add(key)

    def _visit_call(self, node: ast.Call) -> None:
        if id(node) in self._bound:
            return
        if self._produces_sdpa(node.func):
            self._bound.add(id(node.func))
            self._report(node, self.scope_name)
        elif self._is_partial_or_getattr(node):
            self._report(node, self.scope_name)  # created and passed on without a name
        elif self._key(node.func, self._top) is not None:
            self._pending.append(_Pending(node, self.scope_name, self._top))

    @property
    def _top(self) -> str:
        return self._scope[0] if self._scope else ""

    @staticmethod
    def _key(node: ast.expr, top: str) -> str | None:
        """`name` for a plain name, `Class:self.attr` for an attribute of self; else None."""
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return f"{top}:self.{node.attr}"
        return None

    # ---- resolution -----------------------------------------------------------------------
    def _produces_sdpa(self, node: ast.expr) -> bool:
        """Does `node` evaluate to the SDPA function itself (not to the result of calling it)?"""
        if isinstance(node, ast.Call):
            return self._is_partial_or_getattr(node)  # a call's *result* is no alias
        if self._names.qualified(node) & self._sdpa_names:
            return True
        return self._key(node, self._top) in self._aliases

    def _is_partial_or_getattr(self, call: ast.Call) -> bool:
        arguments = _arguments(call)
        if not arguments:
            return False
        callee = self._names.qualified(call.func)
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
    def _report(self, node: ast.Call, scope: str, *, top: str | None = None) -> None:
        top = self._top if top is None else top
        message = self._message(scope, top)
        if message is not None:
            self.report(node, message, scope)

    def _message(self, scope: str, top: str) -> str | None:
        what = f"`{scope}`" if scope else "module-level code"
        sdpa = sorted(self._sdpa_names)[0]
        owners = self.index.owners(f"{self.context.module}.{top}") if top else []
        verdicts = []
        for owner in owners:
            model = self.index.classes[owner.model]
            declared = self.index.effective_declaration(model)
            entry = declared[0].entry(owner.encoder) if declared else None
            verdicts.append((owner, entry))
        configurable = [(o, e) for o, e in verdicts if e is not None and e.kind in ("configurable", "all")]
        if configurable:
            owner, entry = configurable[0]
            members = entry.backends if entry.kind == "configurable" else (self.index.literal_members or ())
            return self._BYPASS.format(
                what=what,
                sdpa=sdpa,
                model=owner.model.rpartition(".")[2],
                encoder=owner.encoder,
                backends=", ".join(members),
            )
        if verdicts and all(e is not None and e.kind == "fixed" for _, e in verdicts):
            return None
        return self._UNDECLARED.format(what=what, sdpa=sdpa)


def _arguments(call: ast.Call) -> list[ast.expr]:
    """Positional and keyword argument values in source order, like libcst's `Call.args`."""
    values = [arg.value if isinstance(arg, ast.Starred) else arg for arg in call.args]
    values += [keyword.value for keyword in call.keywords]
    return sorted(values, key=lambda value: (value.lineno, value.col_offset))
