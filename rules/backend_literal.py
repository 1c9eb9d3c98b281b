"""DL103 backend-literal."""

from __future__ import annotations

import ast
import difflib
import io
import tokenize
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

from declint.config import Config
from declint.index import ProjectIndex
from declint.prefilter import strings_close_to
from declint.rule import FileContext, Invalid, TreeRule, Valid, name_matches_any
from declint.types import Finding

_CASE_METHODS = frozenset({"upper", "lower", "casefold", "strip"})
_LOWERING_METHODS = frozenset({"lower", "casefold"})
# pydantic's and dataclasses' field specifiers: the value of `x: str = Field(default=...)` is its default.
_FIELD_SPECIFIERS = frozenset({"Field", "field"})
_CUTOFF = 0.8  # how close a string must come to a backend name to be taken for a typo of it


class BackendLiteral(TreeRule):
    """A backend name is retyped as a string literal instead of read from the shared Literal.

    TensorRT-LLM keeps one `typing.Literal` of encoder attention-backend names. Code that retypes
    `"FLASHINFER"` in a comparison, a default or a list drifts when the Literal gains or loses a
    member, and a typo (`"FLASHINFR"`) is never caught: the unknown name silently falls back to
    TRTLLM. Annotate the value with the Literal (then a type checker validates it) or derive the
    names from it with `typing.get_args`.

    Contexts: compared with, assigned to (`=`, `:=`), defaulted for or returned by something
    named like `*attn_backend*` / `*attention_backend*` / `backend_name`
    (`backend-context-names`), also as a string subscript (`kwargs["attn_backend"]`), passed as
    such a keyword, used as such a key in a mapping (`get_model_defaults`), matched in a `match`
    on such a name, or passed first to `get_attention_backend` / `create_attention`
    (`backend-functions`). The value may be the string itself, an element of a tuple, list or
    set, a key of a mapping (`_ATTN_BACKEND_CLASSES = {"VANILLA": ...}`), either branch of
    `a if c else b`, an operand of `or` / `and` (`config.attn_backend or "TRTLLM"`), or the
    default of a pydantic `Field(default=...)` / dataclass `field(default=...)`.

    Compared with a lower-cased value (`x.attn_backend.lower() == "flashinfer"`), the
    lower-case spelling is the right one: the finding asks to read the name from the Literal,
    and a typo's "did you mean" is lower-cased too.

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
        Invalid(
            "class TorchLlmArgs(BaseModel):\n"
            '    attn_backend: str = Field(default="TRTLLM", description="Attention backend to use.")\n',
            expect=((2, 38),),
        ),
        Invalid(
            'def pick(config):\n    attn_backend = config.attn_backend or "TRTLLM"\n'
            '    return "VANILLA" if config.use_vanilla else attn_backend\n',
            expect=((2, 42),),
        ),
        Invalid(
            '_ATTN_BACKEND_CLASSES = {"VANILLA": VanillaAttention, "TRTLLM": TrtllmAttention}\n',
            expect=((1, 25), (1, 54)),
        ),
        Invalid(
            'def is_flashinfer(config):\n    return config.attn_backend.lower() == "flashinfer"\n',
            expect=((2, 42),),
            message=(
                'backend name "flashinfer" retyped as a string literal; read it from the shared Literal '
                "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and "
                "cannot drift"
            ),
        ),
    )

    def __init__(self, context: FileContext, tree: ast.Module) -> None:
        super().__init__(context, tree)
        self._literal_found = self.index.literal_members is not None
        self._names = {name.upper(): name for name in _backend_names(self.config, self.index)}
        self._patterns = self.config.str_list("backend-context-names")
        self._functions = self.config.str_list("backend-functions")
        self._literal = self.index.literal_name
        self._declaration = str(self.config.get("declaration-attribute"))

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
    # Over the standard library's `ast` (a file this rule alone opens is never parsed by libcst:
    # `"vanilla"` and `_supports_attention_backend` in one file is common and almost never a finding).
    def check(self) -> list[Finding]:
        self.walk(self._visit)
        return self.findings

    def _visit(self, node: ast.AST) -> bool:
        """Check the contexts `node` opens; False for a region whose strings are never retyped
        names: a declaration (DL104 validates it) or a `Literal[...]` (it defines names)."""
        if isinstance(node, ast.Assign):
            if any(_last_name(target) == self._declaration for target in node.targets):
                return False
        elif isinstance(node, ast.AnnAssign):
            if _last_name(node.target) == self._declaration:
                return False
        elif isinstance(node, ast.Subscript) and _last_name(node.value) == "Literal":
            return False
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self._check_parameters(node.args)
        handler = self._HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node)
        return True

    def _compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        for position, operator in enumerate(node.ops):
            if not isinstance(operator, ast.Eq | ast.NotEq | ast.In | ast.NotIn | ast.Is | ast.IsNot):
                continue
            left, right = operands[position], operands[position + 1]
            if self._context(left) is not None:
                self._check_strings(right, lowered=_lowered(left))
            elif self._context(right) is not None:
                self._check_strings(left, lowered=_lowered(right))

    def _assign(self, node: ast.Assign) -> None:
        if any(self._context(target) is not None for target in node.targets):
            self._check_strings(node.value)

    def _annotated(self, node: ast.AnnAssign) -> None:
        if node.value is not None and self._context(node.target) is not None:
            if not self._typed_by_literal(node.annotation):
                self._check_strings(node.value)

    def _walrus(self, node: ast.NamedExpr) -> None:
        if self._context(node.target) is not None:
            self._check_strings(node.value)

    def _check_parameters(self, arguments: ast.arguments) -> None:
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = [
            *zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True),
            *((a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None),
        ]
        for argument, default in defaults:
            if not name_matches_any(argument.arg, self._patterns):
                continue
            if argument.annotation is None or not self._typed_by_literal(argument.annotation):
                self._check_strings(default)

    def _call(self, node: ast.Call) -> None:
        for keyword in node.keywords:
            if keyword.arg is not None and name_matches_any(keyword.arg, self._patterns):
                self._check_strings(keyword.value)
        if _last_name(node.func) in self._functions and node.args:
            first = node.args[0]
            self._check_strings(first.value if isinstance(first, ast.Starred) else first)

    def _dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            name = self._simple_string(key) if key is not None else None
            if name is not None and name_matches_any(name, self._patterns):
                self._check_strings(value)

    def _match(self, node: ast.Match) -> None:
        if self._context(node.subject) is None:
            return
        for case in node.cases:
            for value in _match_values(case.pattern):
                self._check_strings(value, lowered=_lowered(node.subject))

    def _return(self, node: ast.Return) -> None:
        # A return's innermost class or function is its function (a class body cannot return).
        if node.value is not None and self._scope and name_matches_any(self._scope[-1], self._patterns):
            self._check_strings(node.value)

    _HANDLERS: ClassVar[dict[type[ast.AST], Callable[[BackendLiteral, Any], None]]] = {
        ast.Compare: _compare,
        ast.Assign: _assign,
        ast.AnnAssign: _annotated,
        ast.NamedExpr: _walrus,
        ast.Call: _call,
        ast.Dict: _dict,
        ast.Match: _match,
        ast.Return: _return,
    }

    # ---- helpers --------------------------------------------------------------------------
    def _context(self, node: ast.expr) -> ast.expr | None:
        """The name, attribute, walrus target or string subscript (`kwargs["attn_backend"]`) that
        `node` is, case methods aside, when it is named like a backend context."""
        node = _strip_case_calls(node)
        if isinstance(node, ast.NamedExpr):
            node = node.target
        name = self._simple_string(node.slice) if isinstance(node, ast.Subscript) else _last_name(node)
        return node if name is not None and name_matches_any(name, self._patterns) else None

    def _typed_by_literal(self, annotation: ast.expr) -> bool:
        return any(
            _last_name(n) == self._literal for n in ast.walk(annotation) if isinstance(n, ast.Name | ast.Attribute)
        )

    def _check_strings(self, node: ast.expr, lowered: bool = False) -> None:
        for string in _strings(node):
            value = self._simple_string(string)
            if value is None:
                continue
            # The usual case calls `_message(value)`: tests stand a one-argument stub in for it.
            message = self._message(value, lowered=True) if lowered else self._message(value)
            if message is not None:
                self.report(string, message, self.scope_name)

    def _simple_string(self, node: ast.expr) -> str | None:
        """The value of a one-token `str` literal (what libcst calls a SimpleString); None for
        anything else, implicitly concatenated literals and f-strings included."""
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            return None
        text = self.segment(node)
        quote = text[:1]
        if not (quote in ("'", '"') and text.endswith(quote) and text.count(quote) == 2):  # else ask tokenize
            tokens = [t for t in _tokens(text) if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER)]
            if len(tokens) != 1 or tokens[0].type != tokenize.STRING:
                return None
        return node.value

    def _message(self, value: str, lowered: bool = False) -> str | None:
        """Compared with a lower-cased value (`x.lower() == "flashinfer"`), the lower-case spelling
        is right: suggesting the member's spelling there would make the comparison never hold."""
        literal = f"{self._literal} ({self.index.literal_qualname.rpartition('.')[0]})"
        spelled = {key: name.lower() if lowered else name for key, name in self._names.items()}
        if value in spelled.values() or value in self._names.values():
            return (
                f'backend name "{value}" retyped as a string literal; read it from the shared Literal '
                f"{literal} so it is type-checked and cannot drift"
            )
        canonical = spelled.get(value.upper())
        if canonical is None:
            close = difflib.get_close_matches(value.upper(), sorted(spelled), n=1, cutoff=_CUTOFF)
            canonical = spelled[close[0]] if close else None
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


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _strip_case_calls(node: ast.expr) -> ast.expr:
    """`x.attn_backend.upper()` is still the backend name."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CASE_METHODS:
        node = node.func.value
    return node


def _lowered(node: ast.expr) -> bool:
    """The last case method applied to `node` lower-cases it (`x.strip().lower()`, `x.casefold()`)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CASE_METHODS:
        if node.func.attr != "strip":
            return node.func.attr in _LOWERING_METHODS
        node = node.func.value
    return False


def _strings(node: ast.expr) -> Iterator[ast.expr]:
    """The string constants `node` is or may evaluate to: itself; the elements of a tuple, list
    or set; the keys of a dict (what `in` tests, what a mapping named like a context is keyed by);
    either branch of `a if c else b`; the operands of `or`/`and`; the default of `Field(...)`."""
    if isinstance(node, ast.Constant):
        yield node
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for element in node.elts:
            yield from _strings(element.value if isinstance(element, ast.Starred) else element)
    elif isinstance(node, ast.Dict):
        for key in node.keys:
            if key is not None:  # None: a `**mapping`
                yield from _strings(key)
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for operand in node.values:
            yield from _strings(operand)
    elif isinstance(node, ast.Call) and _last_name(node.func) in _FIELD_SPECIFIERS:
        defaults = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "default")]
        for default in defaults:  # pydantic's `Field` takes the default first, dataclasses' by keyword
            yield from _strings(default)


def _match_values(pattern: ast.pattern) -> Sequence[ast.expr]:
    if isinstance(pattern, ast.MatchValue):
        return [pattern.value]
    if isinstance(pattern, ast.MatchOr):
        return [v for element in pattern.patterns for v in _match_values(element)]
    return []


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
