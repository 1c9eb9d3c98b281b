"""DL103 backend-literal."""

from __future__ import annotations

import ast
import io
import tokenize
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from declint.config import Config
from declint.facts import bound_once
from declint.index import ProjectIndex
from declint.lazy import lazy_module
from declint.names import NameResolver, absolute_module, last_name
from declint.needles import backend_words
from declint.prefilter import strings_close_to
from declint.rule import FileContext, Invalid, TreeRule, Valid, name_matches_any
from declint.types import Finding

if TYPE_CHECKING:
    import difflib
else:
    difflib = lazy_module("difflib")  # ~2 ms: only a string close to a backend name needs it

_CASE_METHODS = frozenset({"upper", "lower", "casefold", "strip"})
_LOWERING_METHODS = frozenset({"lower", "casefold"})
# pydantic's and dataclasses' field specifiers: the value of `x: str = Field(default=...)` is its default.
_FIELD_SPECIFIERS = frozenset({"Field", "field"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_CUTOFF = 0.8  # how close a string must come to a backend name to be taken for a typo of it
_WRAPPERS = frozenset({"Optional", "Union", "Annotated"})  # unwrapped around a config class's name
_MAX_UNWRAP = 8


class BackendLiteral(TreeRule):
    """A backend name is retyped as a string literal instead of read from the shared Literal.

    TensorRT-LLM keeps one `typing.Literal` of encoder attention-backend names. Code that retypes
    `"FLASHINFER"` in a comparison, a default or a list drifts when the Literal gains or loses a
    member, and a typo (`"FLASHINFR"`) is never caught: the unknown name silently falls back to
    TRTLLM. Annotate the value with the Literal (then a type checker validates it) or derive the
    names from it with `typing.get_args`.

    Contexts: compared with, assigned to (`=`, `:=`), defaulted for or returned by something
    named like `*attn_backend*` / `*attention_backend*` / `backend_name`
    (`backend-context-names`), also as a string subscript (`kwargs["attn_backend"]`) or read by
    key (`kwargs.get("attn_backend", "TRTLLM")`, `.pop`, `.setdefault`, `getattr(config,
    "attn_backend", "TRTLLM")`: the default, and what the read is compared with), passed as
    such a keyword, used as such a key in a mapping (`get_model_defaults`), matched in a `match`
    on such a name, or passed first to `get_attention_backend` / `create_attention`
    (`backend-functions`, also when imported under another name). Names match the patterns
    case-insensitively (`ATTN_BACKEND`, `os.environ.get("TRTLLM_ATTN_BACKEND", ...)`). The value
    may be the string itself, an element of a tuple, list or set, a key of a mapping
    (`_ATTN_BACKEND_CLASSES = {"VANILLA": ...}`), either branch of `a if c else b`, an operand of
    `or` / `and` (`config.attn_backend or "TRTLLM"`), or the default of a pydantic
    `Field(default=...)` / dataclass `field(default=...)`. A local variable passed as such a
    keyword is what its function assigned it before the call (`backend = "FLASHINFER" if text
    else "TRTLLM"`, then `dataclasses.replace(c, attn_backend=backend)`), when that assignment is
    the variable's only binding in the function (not a parameter, loop target or reassigned).
    An annotated assignment (`backend: str = "TRTLLM"`) is followed alike, unless its annotation
    names the shared Literal or another namespace's, which types the value as a context's does.
    The other way too: a local given a context's value (`backend = config.attn_backend`, when
    that is its only binding) is compared as the context (`backend == "FLASHINFER"`). A
    module-level constant bound once to a tuple, list, set (or `frozenset(...)`) or dict, all of
    whose strings are backend names or close to one, and compared with a context
    (`_SUPPORTED = ("TRTLLM", "VANILLA")`, then `cfg.attn_backend in _SUPPORTED`) is a list of
    backend names whatever its name: reported once, at its definition (not where a parameter or
    local of the same name shadows it, nor one annotated with the shared Literal:
    `_BACKENDS: dict[EncoderAttentionBackend, type] = {...}`). So are the keys of a mapping looked
    up by a context (`_REGISTRY[cfg.attn_backend]`, `{"TRTLLM": 1}.get(cfg.attn_backend)`).
    Such a constant imported from another module is not followed there: its module reports it
    when the constant is named like a context (`SUPPORTED_ATTN_BACKENDS`), and not otherwise
    (`from .consts import VISION_BACKENDS`, then `cfg.attn_backend in VISION_BACKENDS`). Reading
    it from the index means indexing every module that names a backend and binds a collection:
    a prototype (2026-12-03) made a cold run over the transformers sources 3x slower.

    A context annotated with a Literal of its own, all of whose members are backend names
    (`attn_backend: Literal["TRTLLM", "VANILLA"]`, also nested, in a string annotation, or as the
    return annotation of a function named like a context), is reported once, at the Literal: a
    second list of the names, which drifts from the shared one. Annotate with the shared Literal.

    Compared with a lower-cased value (`x.attn_backend.lower() == "flashinfer"`), the
    lower-case spelling is the right one: the finding asks to read the name from the Literal,
    and a typo's "did you mean" is lower-cased too.

    While the shared Literal is not found (DL100 says so), the names looked for are
    `fallback-backend-names`, so the retyped names of a tree that predates the Literal are found
    before it lands.

    Not reported: the Literal itself and any annotation naming it (also under an import alias,
    in a string annotation, `"EncoderAttentionBackend"`, or through a module-level type alias,
    `OptionalBackend = Optional[EncoderAttentionBackend]`, bound once in the file or imported
    from a module of the project), the declaration (DL104
    validates it), docstrings, comments, log and error messages, f-strings, and names of other
    namespaces (MoE backends, other Literals): a value annotated with a Literal that has a
    member which is no backend name (`MoeBackend`, `VisualGenAttentionBackend`, inline
    `Literal["CUTLASS", "TRTLLM"]`; a project Literal is found through the file's module-level
    imports and re-exports), and what is compared with a variable so annotated in its scope
    (`backend_name: MoeBackend`, then `backend_name == "TRTLLM"`), or with `self.x` (or
    `getattr(self, "x", ...)`) where the class annotates `x` so. Likewise a field a config class
    of the project annotates so, in this file or another, its own or inherited (`class
    VisualGenConfig: attention_backend: VisualGenAttentionBackend`): passed as that keyword to
    the class (`VisualGenConfig(attention_backend="FLASHINFER")`, the class imported or defined
    in the file), or read through a parameter or an annotated local of the class's type
    (`config: VisualGenConfig`, also `Optional[...]` or in a string annotation; then
    `config.attention_backend == "FLASHINFER"`), or through `self.config` where the class
    annotates `config` so or only ever assigns it such a parameter (`self.config = config`).
    An annotation the index cannot resolve to a Literal (`str`, a class) is no other namespace,
    nor is a field annotated so or with the shared Literal (also one that overrides a base
    class's field); string annotations are read as the names they hold.
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
        Valid(
            'MoeBackend = Literal["CUTLASS", "TRTLLM", "VANILLA"]\n\n'
            "def get_moe_cls(config):\n    backend_name: MoeBackend = config.moe_backend.upper()\n"
            '    return backend_name == "TRTLLM"\n'
        ),
        Valid('def f(attn_backend):\n    return attn_backend == "auto"\n'),
        Valid('def moe(kwargs):\n    return kwargs.get("moe_backend", "TRTLLM")\n'),
        Valid('def route(config):\n    backend = config.moe_backend\n    return backend == "TRTLLM"\n'),
        Valid(
            'VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]\n\n'
            'class VisualGenConfig:\n    attention_backend: VisualGenAttentionBackend = "TORCH_SDPA"\n\n'
            'def pick(config: VisualGenConfig):\n    return config.attention_backend == "FLASHINFER"\n\n'
            'fast = VisualGenConfig(attention_backend="FLASHINFER")\n'
        ),
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
            'def pick(kwargs, config):\n    name = kwargs.get("attn_backend", "TRTLLM")\n'
            '    return getattr(config, "attn_backend", "VANILLA") if name == "auto" else name\n',
            expect=((2, 38), (3, 43)),
        ),
        Invalid(  # a local given the context's value, then compared (reassigned: not followed)
            'def route(config):\n    backend = config.attn_backend.upper()\n    if backend == "FLASHINFER":\n'
            '        return 1\n    other = config.attn_backend\n    other = "x"\n    return other == "TRTLLM"\n',
            expect=((3, 18),),
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
        # Backend functions imported under another name (`get_attention_backend as gab`).
        self._aliases: dict[str, str] = {
            alias.asname: alias.name.rpartition(".")[2]
            for statement in tree.body
            if isinstance(statement, ast.ImportFrom)
            for alias in statement.names
            if alias.asname is not None and alias.name.rpartition(".")[2] in self._functions
        }
        self._literal = self.index.literal_name
        self._declaration = str(self.config.get("declaration-attribute"))
        self._imports: dict[str, str] | None = None  # module-level imports, read when an annotation needs them
        self._bound_once: dict[str, ast.expr | None] | None = None  # see `_module_bindings`
        self._constants_checked: set[str] = set()
        self._resolver: NameResolver | None = None
        self._module_classes: frozenset[str] | None = None  # see `_class_named`
        self._locals: dict[int, _LocalValue] | None = None  # see `_held`, computed when first asked
        self._given_contexts: set[str] = set()  # see `_note_given`
        # Findings whose context is a variable, held until the walk has seen every annotation:
        # (string, message, scope, the context nodes); reported unless all are typed by another
        # namespace's Literal, which can only be so when `_other_namespace_seen`.
        self._pending: list[tuple[ast.expr, str, str, tuple[ast.expr, ...]]] = []
        self._other_namespace_seen = False

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        return backend_words(config)  # the registry's too: see declint/needles.py

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
        other: set[int] = set()
        # Attribute contexts read through an owner (`config.attention_backend`, `self.config.
        # attention_backend`) whose annotation may name a config class with such a field.
        owned = frozenset(id(c) for *_, contexts in self._pending for c in contexts if _owned_attribute(c))
        if self._other_namespace_seen or owned:
            typed = self._other_literal_typed if self._other_namespace_seen else _never_typed
            other = _OtherNamespaceBindings(typed, self._typed_field, owned).find(self.tree)
        for string, message, scope, contexts in self._pending:
            if any(id(context) not in other for context in contexts):
                self.report(string, message, scope)
        return self.findings

    def _visit(self, node: ast.AST) -> bool:
        """Check the contexts `node` opens; False for a region whose strings are never retyped
        names: a declaration (DL104 validates it) or a `Literal[...]` (it defines names)."""
        if isinstance(node, ast.Assign):
            if any(last_name(target) == self._declaration for target in node.targets):
                return False
        elif isinstance(node, ast.AnnAssign):
            if last_name(node.target) == self._declaration:
                return False
        elif isinstance(node, ast.Subscript) and last_name(node.value) == "Literal":
            return False
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            self._check_parameters(node.args)
            if not isinstance(node, ast.Lambda) and name_matches_any(node.name, self._patterns):
                self._check_annotation(node.returns)
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
            if (context := self._context(left)) is not None:
                self._check_compared(right, lowered=_lowered(left), via=(context,))
            elif (context := self._context(right)) is not None:
                self._check_compared(left, lowered=_lowered(right), via=(context,))
            elif (read := self._read_into(left)) is not None:
                self._check_strings(right, lowered=_lowered(left) or _lowered(read), via=(read,))
            elif (read := self._read_into(right)) is not None:
                self._check_strings(left, lowered=_lowered(right) or _lowered(read), via=(read,))

    def _check_compared(self, node: ast.expr, lowered: bool, via: tuple[ast.expr, ...]) -> None:
        """What a context is compared with; a module-level constant bound once to a collection
        (`_SUPPORTED = ("TRTLLM", "VANILLA")`, then `cfg.attn_backend in _SUPPORTED`) is a list of
        backend names whatever its name: checked at its definition, once."""
        self._check_strings(node, lowered=lowered, via=via)
        if not isinstance(node, ast.Name) or node.id in self._constants_checked:
            return
        value = _collection(self._module_bindings().get(node.id))
        if value is None or self._typed_constant(node.id) or self._other_namespace(value):
            return
        if not self._names_module_binding(node):
            return
        self._constants_checked.add(node.id)
        self._check_strings(value, lowered=lowered, via=via, scope="")

    def _other_namespace(self, value: ast.expr) -> bool:
        """A collection with a string that is no backend name, nor close to one, lists another
        namespace's names (`_MOE_BACKENDS = ("CUTLASS", "TRTLLM", ...)`), as a Literal with such a
        member does (red-team 61)."""
        strings = [self._simple_string(string) for string in _strings(value)]
        return any(text is not None and self._message(text) is None for text in strings)

    def _typed_constant(self, name: str) -> bool:
        """The constant is annotated with the shared Literal or another namespace's
        (`_BACKENDS: dict[EncoderAttentionBackend, type] = {...}`): a type checker checks its keys."""
        annotations = [
            node.annotation
            for node in self.tree.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name
        ]
        return any(self._typed_local(annotation) for annotation in annotations)

    def _names_module_binding(self, node: ast.Name) -> bool:
        """`node` reads the module-level binding (no parameter or local shadows it): asked of a
        scope resolver made for the few files that compare a context with such a constant."""
        if self._resolver is None:
            self._resolver = NameResolver(self.tree)
        return self._resolver.binding_scope(node) is self._resolver.module_scope

    def _read_into(self, node: ast.expr) -> ast.expr | None:
        """The context read (`config.attn_backend`, `kwargs.get("attn_backend")`) a local compared
        here was given in its function, as `_held` follows one (`backend = config.attn_backend`,
        then `backend == "FLASHINFER"`; red-team 48: not reported)."""
        stripped = _strip_case_calls(node)
        if not (isinstance(stripped, ast.Name) and stripped.id in self._given_contexts):
            return None  # most comparisons: no local was given a context (the locals map costs a pass)
        for value in self._held(stripped):
            if (context := self._context(value)) is not None:
                return value if context is _strip_case_calls(value) else context
        return None

    def _assign(self, node: ast.Assign) -> None:
        contexts = tuple(context for context in map(self._context, node.targets) if context is not None)
        if contexts:
            self._check_strings(node.value, via=contexts)
        self._note_given(node.targets, node.value)

    def _note_given(self, targets: list[ast.expr], value: ast.expr | None) -> None:
        """Names given a context's value (`backend = config.attn_backend`): the only locals a
        comparison follows (`_read_into`), noted as the walk meets them (before their loads)."""
        if value is not None and self._context(value) is not None:
            self._given_contexts.update(t.id for t in targets if isinstance(t, ast.Name))

    def _annotated(self, node: ast.AnnAssign) -> None:
        self._note_given([node.target], node.value)
        if self._context(node.target) is None:
            return
        self._check_annotation(node.annotation)
        if self._untyped(node.annotation) and node.value is not None:
            self._check_strings(node.value)

    def _walrus(self, node: ast.NamedExpr) -> None:
        if (context := self._context(node.target)) is not None:
            self._check_strings(node.value, via=(context,))

    def _check_parameters(self, arguments: ast.arguments) -> None:
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = {
            **dict(zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True)),
            **{a: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is not None},
        }
        for argument in _all_arguments(arguments):  # those without a default may be typed by another Literal
            if not name_matches_any(argument.arg, self._patterns):
                continue
            self._check_annotation(argument.annotation)
            untyped = argument.annotation is None or self._untyped(argument.annotation)
            if untyped and argument in defaults:
                self._check_strings(defaults[argument])

    def _subscript(self, node: ast.Subscript) -> None:
        """`_REGISTRY[config.attn_backend]`: the mapping's keys are compared with the context."""
        if isinstance(node.ctx, ast.Load) and (context := self._context(node.slice)) is not None:
            self._check_compared(node.value, lowered=_lowered(node.slice), via=(context,))

    def _looked_up(self, node: ast.Call) -> None:
        """`{"TRTLLM": ...}.get(config.attn_backend)`, `_REGISTRY.get(...)`: as a subscript."""
        if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
            key = node.args[0]
            if not isinstance(key, ast.Starred) and (context := self._context(key)) is not None:
                self._check_compared(node.func.value, lowered=_lowered(key), via=(context,))

    def _call(self, node: ast.Call) -> None:
        self._looked_up(node)
        default = _read_default(node)
        if default is not None and (context := self._context(node)) is not None:
            self._check_strings(default, via=(context,))
        for keyword in node.keywords:
            if keyword.arg is None or not name_matches_any(keyword.arg, self._patterns):
                continue
            values = [keyword.value, *self._held(keyword.value)]
            # `VisualGenConfig(attention_backend="FLASHINFER")`: the class's field is typed by
            # another namespace's Literal (asked of the index only when a name is passed).
            if any(map(self._holds_names, values)) and self._field_of_other_namespace(node.func, keyword.arg):
                continue
            for value in values:
                self._check_strings(value)
        callee = (
            self._aliases.get(node.func.id, node.func.id) if isinstance(node.func, ast.Name) else last_name(node.func)
        )
        if callee in self._functions and node.args:
            first = node.args[0]
            self._check_strings(first.value if isinstance(first, ast.Starred) else first)

    def _held(self, node: ast.expr) -> list[ast.expr]:
        """What a local variable passed as a backend keyword was given in its function
        (`backend = "FLASHINFER" if text else "TRTLLM"`, then `replace(c, attn_backend=backend)`).
        A variable named like a context is checked where it is assigned already."""
        if not isinstance(node, ast.Name) or name_matches_any(node.id, self._patterns):
            return []
        if self._locals is None:
            self._locals = _local_values(self.tree)
        held = self._locals.get(id(node))
        if held is None:
            return []
        value, annotation = held
        if annotation is not None and self._typed_local(annotation):
            return []
        return [value]

    def _typed_local(self, annotation: ast.expr) -> bool:
        """A followed local's annotation types its value as a context's does (`_untyped`): it names
        the shared Literal (a type checker validates the value) or another namespace's (the value
        is no attention-backend name). Resolved here, for the locals passed as a backend keyword
        only: each resolution is an index question. Unlike `_untyped`, it leaves
        `_other_namespace_seen` alone: the local is no context, nothing compared with it is held."""
        return self._typed_by_literal(annotation) or self._names_other_literal(annotation)

    def _holds_names(self, node: ast.expr) -> bool:
        """`node` holds a string `_check_strings` would report."""
        for string in _strings(node):
            value = self._simple_string(string)
            if value is not None and self._message(value) is not None:
                return True
        return False

    def _field_of_other_namespace(self, cls: ast.expr, field: str) -> bool:
        """`cls` names a class of the project (see `_class_named`) whose field `field`, its own or
        inherited, is annotated with Literals that all have a member which is no backend name
        (`attention_backend: VisualGenAttentionBackend`). A field typed by the shared Literal,
        by `str` or by nothing the index resolves to a Literal is no other namespace."""
        dotted = self._class_named(cls)
        if dotted is None:
            return False
        found = self.index.field_literal_members(dotted, field)
        if not found:
            return False
        return all(any(m.upper() not in self._names for m in members) for members in found)

    def _typed_field(self, annotation: ast.expr, field: str) -> bool:
        """An owner annotated with a config class (`config: VisualGenConfig`, also Optional or in
        a string annotation) whose `field` is typed by another namespace's Literal."""
        named = _class_annotation(annotation)
        return named is not None and self._field_of_other_namespace(named, field)

    def _class_named(self, node: ast.expr) -> str | None:
        """The dotted name of what `node` (a callee or an annotation) names, for the index: through
        the file's module-level imports, or a class the module defines at its top level; None for
        anything else (a builtin, a local, a method: nothing to ask the index about)."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self._module_imports().get(head)
        if target is not None:
            return f"{target}.{rest}" if rest else target
        if self._module_classes is None:
            self._module_classes = frozenset(n.name for n in self.tree.body if isinstance(n, ast.ClassDef))
        return f"{self.context.module}.{head}" if not rest and head in self._module_classes else None

    def _dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            name = self._simple_string(key) if key is not None else None
            if name is not None and name_matches_any(name, self._patterns):
                self._check_strings(value)

    def _match(self, node: ast.Match) -> None:
        context = self._context(node.subject)
        if context is None:
            return
        for case in node.cases:
            for value in _match_values(case.pattern):
                self._check_strings(value, lowered=_lowered(node.subject), via=(context,))

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
        ast.Subscript: _subscript,
    }

    # ---- helpers --------------------------------------------------------------------------
    def _context(self, node: ast.expr) -> ast.expr | None:
        """The name, attribute, walrus target or string subscript (`kwargs["attn_backend"]`) that
        `node` is, case methods aside, when it is named like a backend context."""
        node = _strip_case_calls(node)
        if isinstance(node, ast.NamedExpr):
            node = node.target
        if isinstance(node, ast.Subscript):
            name = self._simple_string(node.slice)
        elif isinstance(node, ast.Call):
            key = _read_key(node)
            name = self._simple_string(key) if key is not None else None
        else:
            name = last_name(node)
        return node if name is not None and name_matches_any(name, self._patterns) else None

    def _untyped(self, annotation: ast.expr) -> bool:
        """A context's annotation leaves its value unchecked: it names neither the shared Literal
        (a type checker validates the value) nor another namespace's (the value is no
        attention-backend name; what is compared with the variable is not either, see `check`)."""
        if self._typed_by_literal(annotation):
            return False
        if self._names_other_literal(annotation):
            self._other_namespace_seen = True
            return False
        return True

    def _typed_by_literal(self, annotation: ast.expr, seen: frozenset[str] = frozenset()) -> bool:
        """The annotation names the shared Literal: by its own name, or under an import alias
        (`... import EncoderAttentionBackend as EAB`); in a string annotation too; or through a
        type alias of it (`OptionalBackend = Optional[EncoderAttentionBackend]`), see `_alias_of_literal`."""
        for expression, _ in _annotation_exprs(annotation):
            for node in ast.walk(expression):
                if isinstance(node, ast.Name | ast.Attribute) and (
                    last_name(node) == self._literal
                    or self._imported_literal(node)
                    or self._alias_of_literal(node, seen)
                ):
                    return True
        return False

    def _alias_of_literal(self, node: ast.Name | ast.Attribute, seen: frozenset[str]) -> bool:
        """`node` is a module-level type alias naming the shared Literal: one this module binds
        once (followed alias by alias), or one another module of the project binds, imported
        (what that value references, as the index records it)."""
        if isinstance(node, ast.Name) and node.id not in seen:
            value = self._module_bindings().get(node.id)
            if isinstance(value, ast.Name | ast.Attribute | ast.Subscript | ast.BinOp):  # a type expression
                return self._typed_by_literal(value, seen | {node.id})
        dotted = _dotted(node)
        head, _, rest = (dotted or "").partition(".")
        target = self._module_imports().get(head)
        if target is None:
            return False
        found = self.index.values.get(self.index.resolve(f"{target}.{rest}" if rest else target))
        return found is not None and any(self.index.is_shared_literal(ref) for ref in found.references)

    def _module_bindings(self) -> dict[str, ast.expr | None]:
        """Module-level names bound once, with their values (`declint.facts.bound_once`), read
        when a constant or a type alias is first looked up."""
        if self._bound_once is None:
            self._bound_once = bound_once(self.tree)
        return self._bound_once

    def _imported_literal(self, node: ast.Name | ast.Attribute) -> bool:
        """`node` resolves, through this module's imports, to the shared Literal (re-exports too)."""
        dotted = _dotted(node)
        head, _, rest = (dotted or "").partition(".")
        target = self._module_imports().get(head)
        if target is None:
            return False
        return self.index.is_shared_literal(f"{target}.{rest}" if rest else target)

    def _module_imports(self) -> dict[str, str]:
        if self._imports is None:
            self._imports = _module_imports(self.tree, self.context.module, self.context.rel.endswith("__init__.py"))
        return self._imports

    def _names_other_literal(self, annotation: ast.expr) -> bool:
        """The annotation names a Literal with a member that is not a backend name (MoeBackend,
        VisualGenAttentionBackend): inline, or a module-level one of the project that this file
        imports or defines. A name nothing resolves (`str`, a class, an outside package) is not.
        String annotations (`"MoeBackend"`) are read too."""
        for expression, _ in _annotation_exprs(annotation):
            for node in _annotation_parts(expression):
                if isinstance(node, ast.Subscript):
                    members: Sequence[str] | None = _inline_members(node)
                else:
                    members = self._literal_members(node)
                if members and any(member.upper() not in self._names for member in members):
                    return True
        return False

    def _literal_members(self, node: ast.Name | ast.Attribute) -> tuple[str, ...] | None:
        """The members of the indexed Literal `node` names: imported (the file's own facts may be
        a placeholder, so its imports are read from its tree), else defined in this module."""
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self._module_imports().get(head, f"{self.context.module}.{head}")
        qualified = f"{target}.{rest}" if rest else target
        # Most annotations name no Literal (`str`, `torch.Tensor`): one set lookup rules them out.
        if not self.index.has_literal_named(qualified.rpartition(".")[2]):
            return None
        return self.index.literal_members_of(qualified)

    def _other_literal_typed(self, name: str, annotation: ast.expr) -> bool:
        """Only a context name's annotation is resolved (each resolution is an index question)."""
        if not name_matches_any(name, self._patterns):
            return False
        return not self._typed_by_literal(annotation) and self._names_other_literal(annotation)

    def _check_annotation(self, annotation: ast.expr | None) -> None:
        """A backend context annotated with an inline `Literal[...]` of backend names (in a string
        annotation too) retypes the shared Literal: a second list, which drifts from it."""
        if annotation is None:
            return
        for literal, where in _inline_literals(annotation):
            members = _inline_members(literal)
            if not members or any(member.upper() not in self._names for member in members):
                continue  # another namespace (`Literal["CUTLASS", "TRTLLM"]`), or no names at all
            listed = ", ".join(f'"{member}"' for member in members)
            self.report(
                where,
                f"backend names retyped in an inline Literal ({listed}); annotate with the shared Literal "
                f"{self._literal} ({self.index.literal_qualname.rpartition('.')[0]}) so they cannot drift",
                self.scope_name,
            )

    def _check_strings(
        self, node: ast.expr, lowered: bool = False, via: tuple[ast.expr, ...] = (), scope: str | None = None
    ) -> None:
        """Report the retyped names `node` holds; with a variable among the contexts `via`, once
        the walk has told whether it is typed by another namespace's Literal. `scope`: where the
        strings are, when not where the walk is (a module-level constant)."""
        where = self.scope_name if scope is None else scope
        for string in _strings(node):
            value = self._simple_string(string)
            if value is None:
                continue
            # The usual case calls `_message(value)`: tests stand a one-argument stub in for it.
            message = self._message(value, lowered=True) if lowered else self._message(value)
            if message is None:
                continue
            if via and all(isinstance(context, ast.Name | ast.Attribute | ast.Call) for context in via):
                self._pending.append((string, message, where, via))
            else:
                self.report(string, message, where)

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
            members = self.index.literal_members
            if members is not None and value.upper() not in {member.upper() for member in members}:
                # An extra backend name (FLASHINFER_STAR_ATTENTION): the Literal cannot supply it.
                return (
                    f'backend name "{value}" retyped as a string literal, and it is not a member of the shared '
                    f"Literal {literal}: name it once, as a constant next to the Literal, so it cannot drift"
                )
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


def _never_typed(name: str, annotation: ast.expr) -> bool:
    return False


def _owned_attribute(node: ast.expr) -> bool:
    """`owner.field` or `self.owner.field`: a context a config class's field may type."""
    if not isinstance(node, ast.Attribute):
        return False
    owner = node.value
    return isinstance(owner, ast.Name) or (isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name))


def _class_annotation(annotation: ast.expr) -> ast.Name | ast.Attribute | None:
    """The one class an annotation names: itself, in a string annotation, or the `X` of
    `Optional[X]`, `X | None`, `Union[X, None]`, `Annotated[X, ...]`; None for anything else."""
    for _ in range(_MAX_UNWRAP):
        if isinstance(annotation, ast.Name | ast.Attribute):
            return annotation
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = ast.parse(annotation.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            continue
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            elements = [annotation.left, annotation.right]
        elif isinstance(annotation, ast.Subscript) and last_name(annotation.value) in _WRAPPERS:
            elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            if last_name(annotation.value) != "Union":  # Optional[X], Annotated[X, metadata...]
                elements = elements[:1]
        else:
            return None
        others = [e for e in elements if not (isinstance(e, ast.Constant) and e.value is None)]
        if len(others) != 1:
            return None
        annotation = others[0]
    return None


def _backend_names(config: Config, index: ProjectIndex) -> tuple[str, ...]:
    """The Literal's members, or the fallback names while it is not found, and the extra names."""
    members = index.literal_members
    if members is None:
        members = config.str_list("fallback-backend-names")
    return (*members, *config.str_list("extra-backend-names"))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


# Methods that read a mapping by key, with a default second (`kwargs.get("attn_backend", "X")`).
_KEYED_READS = ("get", "pop", "setdefault")


def _is_getattr(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "getattr"


def _read_key(node: ast.Call) -> ast.expr | None:
    """The key a call reads by: `m.get(KEY, ...)`, `m.pop(KEY, ...)`, `m.setdefault(KEY, ...)`,
    `getattr(obj, KEY, ...)`; None for any other call."""
    if isinstance(node.func, ast.Attribute) and node.func.attr in _KEYED_READS and node.args:
        return node.args[0]
    if _is_getattr(node) and len(node.args) >= 2:
        return node.args[1]
    return None


def _read_default(node: ast.Call) -> ast.expr | None:
    """The default of a keyed read (`_read_key`), given positionally or as `default=`."""
    if _read_key(node) is None:
        return None
    position = 2 if isinstance(node.func, ast.Name) else 1
    if len(node.args) > position:
        return node.args[position]
    return next((k.value for k in node.keywords if k.arg == "default"), None)


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
    elif isinstance(node, ast.Call) and last_name(node.func) in _FIELD_SPECIFIERS:
        defaults = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "default")]
        for default in defaults:  # pydantic's `Field` takes the default first, dataclasses' by keyword
            yield from _strings(default)


def _annotation_parts(annotation: ast.expr) -> Iterator[ast.Name | ast.Attribute | ast.Subscript]:
    """The whole name chains (`llm_args.MoeBackend`, not `llm_args`) and the `Literal[...]`
    subscripts of an annotation."""
    stack: list[ast.AST] = [annotation]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name | ast.Attribute) or (
            isinstance(node, ast.Subscript) and last_name(node.value) == "Literal"
        ):
            yield node
        else:
            stack.extend(ast.iter_child_nodes(node))


def _module_imports(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """Local name -> dotted name of the module's imports, also those under `if TYPE_CHECKING:`,
    `try:` or `with` (where a Literal used in annotations is imported; not inside functions)."""
    package = module if is_package else module.rpartition(".")[0]
    imports: dict[str, str] = {}
    pending: list[ast.AST] = list(reversed(tree.body))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.partition(".")[0]
                imports[alias.asname or head] = alias.name if alias.asname else head
        elif isinstance(node, ast.ImportFrom):
            base = absolute_module(package, node.module, node.level)
            imports.update((a.asname or a.name, f"{base}.{a.name}" if base else a.name) for a in node.names)
        elif isinstance(node, ast.If | ast.Try | ast.TryStar | ast.With | ast.ExceptHandler):
            inner = [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt | ast.ExceptHandler)]
            pending.extend(reversed(inner))
    return imports


def _inline_literals(annotation: ast.expr) -> Iterator[tuple[ast.Subscript, ast.expr]]:
    """The `Literal[...]` subscripts of an annotation, each with the node to report: itself, or
    the string annotation (`"Literal['TRTLLM']"`) it was parsed from."""
    for expression, where in _annotation_exprs(annotation):
        for part in _annotation_parts(expression):
            if isinstance(part, ast.Subscript):
                yield part, part if where is None else where


def _collection(value: ast.expr | None) -> ast.expr | None:
    """A literal tuple, list, set or dict, also as `frozenset({...})` (or `set`, `tuple`, `list`)."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("frozenset", "set", "tuple", "list")
        and len(value.args) == 1
        and not value.keywords
    ):
        value = value.args[0]
    return value if isinstance(value, ast.Tuple | ast.List | ast.Set | ast.Dict) else None


def _annotation_exprs(annotation: ast.expr) -> Iterator[tuple[ast.expr, ast.expr | None]]:
    """The annotation, then each string annotation within it parsed (`"EncoderAttentionBackend"`,
    `Optional["Literal['TRTLLM']"]`), with the string it came from. A string that does not parse
    as an expression is a Literal's own member, or broken: skipped."""
    yield annotation, None
    for node in ast.walk(annotation):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip().isprintable():
            try:
                yield ast.parse(node.value.strip(), mode="eval").body, node
            except (SyntaxError, ValueError):
                continue


def _inline_members(literal: ast.Subscript) -> list[str]:
    elements = literal.slice.elts if isinstance(literal.slice, ast.Tuple) else [literal.slice]
    return [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]


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


class _OtherNamespaceBindings:
    """The `Name` nodes (and `self.x` attributes) of a module that refer to a variable annotated
    with another namespace's Literal, scope by scope as Python binds names: a parameter or an
    annotated assignment of a function binds the name in the whole function and in the functions
    nested in it, until one of them binds it again; a class body's fields are read through the
    first parameter of its methods.

    Also, among the attribute contexts `wanted` (`owner.field`, `self.owner.field`), those whose
    owner is annotated with a class whose field is typed by another namespace's Literal
    (`field_typed(annotation, field)`): a parameter or an annotated local or module-level name
    (bound as above), or `self.owner` where the class annotates `owner` (in its body, or `self.
    owner: T` in a method) or only ever assigns it, `self.owner = parameter`, parameters all
    annotated alike."""

    def __init__(
        self,
        other_literal_typed: Callable[[str, ast.expr], bool],
        field_typed: Callable[[ast.expr, str], bool] = lambda annotation, field: False,
        wanted: frozenset[int] = frozenset(),
    ) -> None:
        self._typed = other_literal_typed
        self._field_typed = field_typed
        self._wanted = wanted
        self._found: set[int] = set()

    def find(self, tree: ast.Module) -> set[int]:
        # (scope, the enclosing function scopes' bindings, and their annotations, the enclosing
        # class's fields, the annotations of its `self.x`, its receiver)
        stack: list[tuple[ast.AST, dict[str, bool], _Annotations, frozenset[str], _Annotations, str | None]] = [
            (tree, {}, {}, frozenset(), {}, None)
        ]
        while stack:
            scope, outer, outer_types, fields, attributes, receiver = stack.pop()
            own = _own_nodes(scope)
            bindings = self._bindings(scope, own)
            bound = {**outer, **bindings}
            types = {**outer_types, **_binding_annotations(scope, own)} if self._wanted else {}
            self._mark(own, bound, fields, receiver)
            if self._wanted:
                self._mark_owned(own, types, attributes, receiver)
            nested = [n for n in own if isinstance(n, _SCOPES)]
            if isinstance(scope, ast.ClassDef):  # methods do not see the class body's names
                class_fields = frozenset(self._fields(scope, bindings))
                typed_attributes = _attribute_annotations(scope) if self._wanted else {}
                stack.extend((n, outer, outer_types, class_fields, typed_attributes, _receiver(n)) for n in nested)
            else:
                stack.extend(
                    (n, bound, types, fields, attributes, receiver) for n in nested if not isinstance(n, ast.ClassDef)
                )
                stack.extend((n, bound, types, frozenset(), {}, None) for n in nested if isinstance(n, ast.ClassDef))
        return self._found

    def _bindings(self, scope: ast.AST, own: list[ast.AST]) -> dict[str, bool]:
        """Each name `scope` binds: True where an annotation types it by another Literal."""
        annotated: dict[str, bool] = {}
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for argument in _all_arguments(scope.args):
                typed = argument.annotation is not None and self._typed(argument.arg, argument.annotation)
                annotated[argument.arg] = typed
        for node in own:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                name = node.target.id
                annotated[name] = annotated.get(name, False) or self._typed(name, node.annotation)
        plain = {n.id: False for n in own if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        plain.update((n.name, False) for n in own if isinstance(n, _SCOPES) and not isinstance(n, ast.Lambda))
        return {**plain, **annotated}

    def _fields(self, cls: ast.ClassDef, bindings: dict[str, bool]) -> Iterator[str]:
        """The class body's fields typed by another Literal, and the `self.x: ...` ones."""
        yield from (name for name, typed in bindings.items() if typed)
        for node in ast.walk(cls):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
                if isinstance(node.target.value, ast.Name) and self._typed(node.target.attr, node.annotation):
                    yield node.target.attr

    def _mark(self, own: list[ast.AST], bound: dict[str, bool], fields: frozenset[str], receiver: str | None) -> None:
        for node in own:
            if isinstance(node, ast.Name) and bound.get(node.id):
                self._found.add(id(node))
            elif isinstance(node, ast.Attribute) and node.attr in fields:
                if isinstance(node.value, ast.Name) and node.value.id == receiver:
                    self._found.add(id(node))
            elif isinstance(node, ast.Call) and _is_getattr(node) and len(node.args) >= 2:  # getattr(self, "x", ...)
                owner, key = node.args[0], node.args[1]
                if isinstance(owner, ast.Name) and owner.id == receiver and isinstance(key, ast.Constant):
                    if key.value in fields:
                        self._found.add(id(node))

    def _mark_owned(
        self, own: list[ast.AST], types: _Annotations, attributes: _Annotations, receiver: str | None
    ) -> None:
        """The wanted `owner.field` contexts whose owner's annotation types the field."""
        for node in own:
            if id(node) not in self._wanted or not isinstance(node, ast.Attribute):
                continue
            owner = node.value
            annotation: ast.expr | None = None
            if isinstance(owner, ast.Name) and owner.id != receiver:
                annotation = types.get(owner.id)
            elif isinstance(owner, ast.Attribute) and isinstance(owner.value, ast.Name) and owner.value.id == receiver:
                annotation = attributes.get(owner.attr)
            if annotation is not None and self._field_typed(annotation, node.attr):
                self._found.add(id(node))


# A scope's names (or a class's `self.x`) with the annotation that types each; None for a name
# bound without one.
_Annotations = dict[str, ast.expr | None]


def _binding_annotations(scope: ast.AST, own: list[ast.AST]) -> _Annotations:
    """Each name `scope` binds, with its annotation (a parameter's, an annotated assignment's),
    or None where it is bound without one (a plain assignment, a loop target, a def)."""
    annotated: dict[str, ast.expr] = {}
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        for argument in _all_arguments(scope.args):
            if argument.annotation is not None:
                annotated[argument.arg] = argument.annotation
    targets = set()
    for node in own:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotated.setdefault(node.target.id, node.annotation)
            targets.add(id(node.target))
    stored = [n for n in own if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
    found: _Annotations = {n.id: None for n in stored}
    found.update((n.name, None) for n in own if isinstance(n, _SCOPES) and not isinstance(n, ast.Lambda))
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        found.update((argument.arg, None) for argument in _all_arguments(scope.args))
    # A name also bound without its annotation (`config = other`) may hold anything (red-team 61).
    rebound = {n.id for n in stored if id(n) not in targets}
    found.update((name, annotation) for name, annotation in annotated.items() if name not in rebound)
    return found


def _attribute_annotations(cls: ast.ClassDef) -> _Annotations:
    """`x` -> the annotation typing `self.x` in the class's methods: the class body's `x: T`, a
    method's `self.x: T`, else, when every assignment of `self.x` gives it a parameter of its
    method annotated alike (`self.config = config`, `config: VisualGenConfig`), that annotation."""
    annotated: dict[str, ast.expr] = {}
    assigned: dict[str, list[ast.expr | None]] = {}
    for statement in cls.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            annotated[statement.target.id] = statement.annotation
    for method in cls.body:
        receiver = _receiver(method)
        if receiver is None or not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        parameters = {a.arg: a.annotation for a in _all_arguments(method.args)}
        given: dict[int, ast.expr | None] = {}
        for node in _own_nodes(method):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name):
                given[id(node.targets[0])] = parameters.get(node.value.id)
            elif isinstance(node, ast.AnnAssign) and _on_receiver(node.target, receiver):
                assert isinstance(node.target, ast.Attribute)
                annotated.setdefault(node.target.attr, node.annotation)
        for node in ast.walk(method):  # nested functions' assignments too: they may give it anything
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _on_receiver(node, receiver):
                assigned.setdefault(node.attr, []).append(given.get(id(node)))
    found: _Annotations = {}
    for name, values in assigned.items():
        first = values[0]
        if first is not None and all(v is not None and ast.dump(v) == ast.dump(first) for v in values):
            found[name] = first
    found.update(annotated)
    return found


def _on_receiver(node: ast.expr, receiver: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of `scope` outside the classes, functions and lambdas nested in it (those
    included, their insides not)."""
    nodes: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        nodes.append(node)
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return nodes


def _all_arguments(arguments: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def _receiver(node: ast.AST) -> str | None:
    """A method's first parameter (`self`); None for a lambda, a class or a method without one."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    positional = [*node.args.posonlyargs, *node.args.args]
    return positional[0].arg if positional else None


# What a local was given (see `_local_values`): the value, and the annotation of an annotated
# assignment (None for a plain one), which the rule judges only for the locals it follows.
_LocalValue = tuple[ast.expr, ast.expr | None]


def _local_values(tree: ast.Module) -> dict[int, _LocalValue]:
    """For each load of a name in a function, the value a plain (`name = value`) or annotated
    (`name: T = value`) assignment gave that name before the load, with its annotation, keyed by
    the load node's id: only for a name the function binds that once and in no other way (not a
    parameter, loop or `with` target, import, walrus, second assignment or bare `name: T`), so
    that the value read is certainly the one assigned."""
    found: dict[int, _LocalValue] = {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        nodes = _own_nodes(function)
        bindings = Counter(_bound_names(function, nodes))
        assigned = dict(_assignments(nodes))
        for load in nodes:
            if isinstance(load, ast.Name) and isinstance(load.ctx, ast.Load) and bindings[load.id] == 1:
                assignment = assigned.get(load.id)
                if assignment is not None and assignment[0] < load.lineno:
                    found[id(load)] = assignment[1]
    return found


def _assignments(nodes: list[ast.AST]) -> Iterator[tuple[str, tuple[int, _LocalValue]]]:
    """Each name a single-target assignment gives a value, with the assignment's line and what it
    gave (`_LocalValue`). A bare `name: T` gives none (and, counted as a binding by
    `_bound_names`, keeps a later `name = value` from being followed, conservatively)."""
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            yield node.targets[0].id, (node.lineno, (node.value, None))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            yield node.target.id, (node.lineno, (node.value, node.annotation))


def _nonlocals_reaching(scope: ast.AST) -> set[str]:
    """The names `scope` (a function or class nested in the one asked about) or the functions
    nested in it declare `nonlocal` and that refer past it, to the enclosing function: a name
    a function in between binds for itself (a parameter, an assignment it does not declare
    nonlocal) is that function's, whatever deeper scopes do with it. A class binds nothing its
    methods could reach by `nonlocal`."""
    nodes = _own_nodes(scope)
    declared = {name for node in nodes if isinstance(node, ast.Nonlocal) for name in node.names}
    deeper: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            deeper |= _nonlocals_reaching(node)
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        # A comprehension's variables are its own scope's, not `scope`'s: they take nothing.
        deeper -= set(_local_bindings(scope, _outside_comprehension_targets(nodes))) - declared
    return declared | deeper


def _outside_comprehension_targets(nodes: list[ast.AST]) -> list[ast.AST]:
    """`nodes` without the names a comprehension binds (`for x in ...` inside `[...]`)."""
    targets = {
        id(name)
        for node in nodes
        if isinstance(node, ast.comprehension)
        for name in ast.walk(node.target)
        if isinstance(name, ast.Name)
    }
    return [node for node in nodes if id(node) not in targets]


def _bound_names(function: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST]) -> Iterator[str]:
    """Every binding of a name in the function's own scope, once per binding, a nested
    function's `nonlocal` assignment included."""
    yield from _local_bindings(function, nodes)
    for node in nodes:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from _nonlocals_reaching(node)


def _local_bindings(function: ast.FunctionDef | ast.AsyncFunctionDef, nodes: list[ast.AST]) -> Iterator[str]:
    """The bindings the function's own statements and parameters make (see `_bound_names`)."""
    arguments = function.args
    for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
        if argument is not None:
            yield argument.arg
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            yield node.id
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield from ((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            yield node.name  # a `case` capture (a plain string, not an ast.Name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            yield node.rest
        elif isinstance(node, ast.Global):
            yield from node.names  # bound at module level: anyone may rebind it
