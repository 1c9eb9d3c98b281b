"""DL103 backend-literal."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from declint.config import Config
from declint.index import ProjectIndex
from declint.lazy import lazy_module
from declint.prefilter import strings_close_to
from declint.rule import FileContext, Invalid, Rule, Valid, name_matches_any

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = lazy_module("libcst")  # imported when a file is first checked (see declint/lazy.py)

_CASE_METHODS = frozenset({"upper", "lower", "casefold", "strip"})
_CUTOFF = 0.8  # how close a string must come to a backend name to be taken for a typo of it


class BackendLiteral(Rule):
    """A backend name is retyped as a string literal instead of read from the shared Literal.

    TensorRT-LLM keeps one `typing.Literal` of encoder attention-backend names. Code that retypes
    `"FLASHINFER"` in a comparison, a default or a list drifts when the Literal gains or loses a
    member, and a typo (`"FLASHINFR"`) is never caught: the unknown name silently falls back to
    TRTLLM. Annotate the value with the Literal (then a type checker validates it) or derive the
    names from it with `typing.get_args`.

    Contexts: compared with, assigned to, defaulted for or returned by something named like
    `*attn_backend*` / `*attention_backend*` / `backend_name` (`backend-context-names`), passed
    as such a keyword, used as such a key in a mapping (`get_model_defaults`), matched in a
    `match` on such a name, or passed first to `get_attention_backend` / `create_attention`
    (`backend-functions`).

    While the shared Literal is not found (DL100 says so), the names looked for are
    `fallback-backend-names`, so the retyped names of a tree that predates the Literal are found
    before it lands.

    Not reported: the Literal itself and any annotation naming it, the declaration (DL104
    validates it), docstrings, comments, log and error messages, f-strings, and names of other
    namespaces (MoE backends, other Literals).
    """

    CODE = "DL103"
    NAME = "backend-literal"
    SUMMARY = "a backend name written as a string literal in an attention-backend context"
    OPTIONS = (
        "shared-literal",
        "extra-backend-names",
        "fallback-backend-names",
        "backend-context-names",
        "backend-functions",
        "declaration-attribute",
    )

    VALID: ClassVar = (
        Valid('from typing import Literal\nEncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'),
        Valid(
            "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend\n\n"
            'DEFAULT_ATTN_BACKEND: EncoderAttentionBackend = "TRTLLM"\n\n'
            'def build(attn_backend: EncoderAttentionBackend = "VANILLA"):\n    return attn_backend\n'
        ),
        Valid('def route(config):\n    if config.moe_backend == "TRTLLM":\n        return "VANILLA"\n'),
        Valid(
            'def check(attn_backend):\n    """Supports FLASHINFER and TRTLLM."""\n'
            "    # TRTLLM is the default\n"
            '    logger.info("Applied model defaults: attn_backend FLASHINFER")\n'
            '    raise ValueError(f"attn_backend must be one of VANILLA, TRTLLM, got {attn_backend}")\n'
        ),
        Valid('MoeBackend = Literal["CUTLASS", "TRTLLM", "VANILLA"]\nmoe_backend: MoeBackend = "TRTLLM"\n'),
        Valid('class M:\n    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM")}\n'),
        Valid('def f(attn_backend):\n    return attn_backend == "auto"\n'),
    )
    INVALID: ClassVar = (
        Invalid(
            'def is_trtllm(config):\n    return config.attn_backend == "TRTLLM"\n',
            expect=((2, 34),),
            message=(
                'backend name "TRTLLM" retyped as a string literal; read it from the shared Literal '
                "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and "
                "cannot drift"
            ),
        ),
        Invalid(
            "import dataclasses\n\ndef vision_config(config):\n"
            '    return dataclasses.replace(config, attn_backend="TRTLLM")\n',
            expect=((4, 52),),
        ),
        Invalid('class ModelConfig:\n    attn_backend: str = "TRTLLM"\n', expect=((2, 24),)),
        Invalid('SUPPORTED_ATTN_BACKENDS = ("VANILLA", "FLASHINFER")\n', expect=((1, 27), (1, 38))),
        Invalid(
            'def f(name):\n    if name.attn_backend.upper() in ["VANILLA", "TRTLLM"]:\n        pass\n',
            expect=((2, 37), (2, 48)),
        ),
        Invalid('def get_model_defaults(cls):\n    return {"attn_backend": "FLASHINFER"}\n', expect=((2, 28),)),
        Invalid('backend = get_attention_backend("VANILLA")\n', expect=((1, 32),)),
        Invalid('def build(attn_backend="TRTLLM"):\n    pass\n', expect=((1, 23),)),
        Invalid(
            'def f(backend_name):\n    return backend_name == "FLASHINFR"\n',
            expect=((2, 27),),
            message='"FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)',
        ),
        Invalid(
            'def f(attn_backend):\n    match attn_backend:\n        case "flashinfer":\n            pass\n',
            expect=((3, 13),),
        ),
        Invalid('def default_attn_backend():\n    return "TRTLLM"\n', expect=((2, 11),)),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._literal_found = self.index.literal_members is not None
        self._names = {name.upper(): name for name in _backend_names(self.config, self.index)}
        self._patterns = self.config.str_list("backend-context-names")
        self._functions = self.config.str_list("backend-functions")
        self._literal = self.index.literal_name
        self._declaration = str(self.config.get("declaration-attribute"))
        self._functions_stack: list[str] = []
        self._excluded = 0

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        parts = [p.strip("*") for p in config.str_list("backend-context-names")]
        words = [w for p in (*parts, *config.str_list("backend-functions")) if p for w in (p, p.upper())]
        return tuple(sorted({w.encode() for w in words}))

    @classmethod
    def prefilter(cls, data: bytes, config: Config, index: ProjectIndex) -> bool:
        # A context name alone is common (`_supports_attention_backend = True` in every
        # transformers model): also require a string that is, or nearly is, a backend name.
        if not super().prefilter(data, config, index):
            return False
        return strings_close_to(data, _backend_names(config, index), cutoff=_CUTOFF)

    # ---- contexts -------------------------------------------------------------------------
    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(target.comparator for target in node.comparisons)]
        for position, target in enumerate(node.comparisons):
            if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn, cst.Is, cst.IsNot)):
                continue
            left, right = operands[position], operands[position + 1]
            if self._is_context(left):
                self._check_strings(right)
            elif self._is_context(right):
                self._check_strings(left)

    # Batched visitors cannot prune subtrees, so excluded regions are tracked by depth.
    def visit_Assign(self, node: cst.Assign) -> None:
        names = [n for t in node.targets for n in [_last_name(t.target)] if n is not None]
        if self._declaration in names:
            self._excluded += 1  # DL104 validates declarations
        elif any(name_matches_any(n, self._patterns) for n in names):
            self._check_strings(node.value)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        if any(_last_name(t.target) == self._declaration for t in original_node.targets):
            self._excluded -= 1

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        name = _last_name(node.target)
        if name == self._declaration:
            self._excluded += 1
        elif node.value is not None and name and name_matches_any(name, self._patterns):
            if not self._typed_by_literal(node.annotation.annotation):
                self._check_strings(node.value)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        if _last_name(original_node.target) == self._declaration:
            self._excluded -= 1

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is None or not name_matches_any(node.name.value, self._patterns):
            return
        if node.annotation is None or not self._typed_by_literal(node.annotation.annotation):
            self._check_strings(node.default)

    def visit_Call(self, node: cst.Call) -> None:
        for argument in node.args:
            if argument.keyword is not None and name_matches_any(argument.keyword.value, self._patterns):
                self._check_strings(argument.value)
        callee = _last_name(node.func)
        if callee in self._functions and node.args and node.args[0].keyword is None:
            self._check_strings(node.args[0].value)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if isinstance(node.key, cst.SimpleString) and name_matches_any(str(node.key.evaluated_value), self._patterns):
            self._check_strings(node.value)

    def visit_Match(self, node: cst.Match) -> None:
        if not self._is_context(node.subject):
            return
        for case in node.cases:
            for value in _match_values(case.pattern):
                self._check_strings(value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        self._functions_stack.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        super().leave_FunctionDef(original_node)
        self._functions_stack.pop()

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and self._functions_stack:
            if name_matches_any(self._functions_stack[-1], self._patterns):
                self._check_strings(node.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if _last_name(node.value) == "Literal":
            self._excluded += 1  # a Literal[...] defines names, never retypes them

    def leave_Subscript(self, original_node: cst.Subscript) -> None:
        if _last_name(original_node.value) == "Literal":
            self._excluded -= 1

    # ---- helpers --------------------------------------------------------------------------
    def _is_context(self, node: cst.BaseExpression) -> bool:
        node = _strip_case_calls(node)
        name = _last_name(node)
        return name is not None and name_matches_any(name, self._patterns)

    def _typed_by_literal(self, annotation: cst.BaseExpression) -> bool:
        # libcst.matchers would cost 0.2 s of import time for this one comparison.
        return any(_last_name(n) == self._literal for n in _walk(annotation) if isinstance(n, cst.Name | cst.Attribute))

    def _check_strings(self, node: cst.BaseExpression) -> None:
        if self._excluded:
            return
        for string in _strings(node):
            message = self._message(string)
            if message is not None:
                self.report(string, message)

    def _message(self, string: cst.SimpleString) -> str | None:
        value = string.evaluated_value
        if not isinstance(value, str):
            return None
        literal = f"{self._literal} ({self.index.literal_qualname.rpartition('.')[0]})"
        if value in self._names.values():
            return (
                f'backend name "{value}" retyped as a string literal; read it from the shared Literal '
                f"{literal} so it is type-checked and cannot drift"
            )
        canonical = self._names.get(value.upper())
        if canonical is None:
            close = difflib.get_close_matches(value.upper(), sorted(self._names), n=1, cutoff=_CUTOFF)
            canonical = self._names[close[0]] if close else None
        if canonical is None:
            return None
        if not self._literal_found:
            return f'"{value}" is not a backend name (did you mean "{canonical}"?)'
        return f'"{value}" is not a member of {self._literal} (did you mean "{canonical}"?)'


def _backend_names(config: Config, index: ProjectIndex) -> tuple[str, ...]:
    """The Literal's members, or the fallback names while it is not found, and the extra names."""
    members = index.literal_members
    if members is None:
        members = config.str_list("fallback-backend-names")
    return (*members, *config.str_list("extra-backend-names"))


def _last_name(node: cst.BaseExpression | cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _strip_case_calls(node: cst.BaseExpression) -> cst.BaseExpression:
    """`x.attn_backend.upper()` is still the backend name."""
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CASE_METHODS:
        node = node.func.value
    return node


def _strings(node: cst.BaseExpression) -> Iterator[cst.SimpleString]:
    if isinstance(node, cst.SimpleString):
        yield node
    elif isinstance(node, cst.Tuple | cst.List | cst.Set):
        for element in node.elements:
            yield from _strings(element.value)


def _match_values(pattern: cst.MatchPattern) -> Sequence[cst.BaseExpression]:
    if isinstance(pattern, cst.MatchValue):
        return [pattern.value]
    if isinstance(pattern, cst.MatchOr):
        return [v for element in pattern.patterns for v in _match_values(element.pattern)]
    return []


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)
