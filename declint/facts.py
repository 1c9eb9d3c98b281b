"""Phase 1: the per-file facts the project index is made of.

Facts are extracted with the standard library's `ast`, not libcst: the index reads every file
under the roots, and `ast.parse` is about 10x cheaper than `libcst.parse_module` (measured in
docs/benchmarks.md). No position from here is ever reported: rules report from libcst nodes,
so ast's byte-based columns never reach a user. Only facts (names, bases, declarations) cross.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from declint.members import MetadataRead, metadata_reads, method_names, provided_members
from declint.model_defaults import UNSET, map_pairs, model_default_backend
from declint.names import absolute_module, import_bindings, module_statements, rebinds
from declint.source import split_lines
from declint.syntax import syntax_problem

TYPING_LITERALS = frozenset({"typing.Literal", "typing_extensions.Literal"})
_TYPING_OPTIONALS = frozenset({"Optional", "typing.Optional", "typing_extensions.Optional"})
_TYPING_UNIONS = frozenset({"Union", "typing.Union", "typing_extensions.Union"})
_TYPING_ANNOTATED = frozenset({"Annotated", "typing.Annotated", "typing_extensions.Annotated"})
_TYPING_MODULES = frozenset({"typing", "typing_extensions", "builtins"})
# The reason of a fixed entry whose reason is not a literal (a constant's name, a call): the
# docs table shows it as is; nothing may write it back as though it were the reason.
DYNAMIC_REASON = "<dynamic>"
# A model whose `get_model_defaults` sets no attn_backend and hands on none of its parent's
# (`ClassFacts.default_backend`): the `default-backend` option applies, not an ancestor's default.
UNSET_DEFAULT = "<unset>"
# A model default `get_model_defaults` picks at run time (a call, a branch): the table shows this
# and DL107 takes the docs' word for it; the default-backend option would be a wrong claim.
DYNAMIC_DEFAULT = "<dynamic>"
_MAX_MAP_DEPTH = 8  # placeholder maps followed through names and `**` unpacking, at most


class DeclEntry(NamedTuple):
    encoder: str
    kind: str  # "configurable" | "all" (get_args of the Literal) | "fixed" | "invalid"
    backends: tuple[str, ...] = ()
    reason: str = ""
    literal: str = ""  # "all": the dotted name `get_args` was given, as this module imports it


class Declaration(NamedTuple):
    line: int
    entries: tuple[DeclEntry, ...]
    is_literal: bool  # False: not a dict literal, or one that unpacks another (`**`): its encoders are unknown
    empty: bool = False  # an explicit `{}`: the model has no attention encoder

    @property
    def encoders(self) -> frozenset[str]:
        return frozenset(entry.encoder for entry in self.entries)

    def entry(self, encoder: str) -> DeclEntry | None:
        return next((entry for entry in self.entries if entry.encoder == encoder), None)


class ClassFacts(NamedTuple):
    name: str
    qualname: str
    line: int
    bases: tuple[str, ...]
    base_args: tuple[tuple[str, ...], ...]
    decorators: tuple[str, ...]
    modalities: tuple[str, ...] | None
    declaration: Declaration | None
    class_attrs: tuple[tuple[str, str], ...]
    references: tuple[str, ...]
    members: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    metadata_reads: tuple[MetadataRead, ...] = ()
    default_backend: str | None = None
    name_column: int = 6
    # The class body's annotated fields (`attention_backend: VisualGenAttentionBackend = ...`),
    # each with the names its annotation holds as the module imports them (Optional, Annotated's
    # metadata, builtins and typing's own names left out, so `x: str` holds none; string
    # annotations read): what DL103 asks to tell a field typed by another namespace's Literal.
    # Sorted by field name.
    fields: tuple[tuple[str, tuple[str, ...]], ...] = ()


class FunctionFacts(NamedTuple):
    name: str
    qualname: str
    references: tuple[str, ...]


class ValueFacts(NamedTuple):
    """A module-level name bound to an expression (a registry `{"siglip": Tower}`, a list, `a if c
    else b`): what it references, so that ownership passes through it to the classes it holds."""

    name: str
    qualname: str
    references: tuple[str, ...]


class LiteralDef(NamedTuple):
    name: str
    qualname: str
    line: int
    members: tuple[str, ...]
    # Optional[Literal[...]] and the like: its members are a copy (DL100), but it is no Literal
    # (get_args gives the Literal and NoneType), so never the shared Literal's definition.
    optional: bool = False
    type_checking: bool = False  # in the body of `if TYPE_CHECKING:`: absent at runtime
    branch: tuple[tuple[int, int, int], ...] = ()  # the `if` arms it is in (see `exclusive`)


@dataclass(frozen=True)
class ModuleFacts:
    module: str
    path: str
    imports: tuple[tuple[str, str], ...] = ()
    classes: tuple[ClassFacts, ...] = ()
    functions: tuple[FunctionFacts, ...] = ()
    literals: tuple[LiteralDef, ...] = ()
    assignments: tuple[tuple[str, int], ...] = ()
    constants: tuple[tuple[str, str], ...] = ()
    star_imports: tuple[str, ...] = ()  # the modules of its `from X import *`, in order
    values: tuple[ValueFacts, ...] = ()  # module-level names bound to what references something
    # Module-level names bound once to `functools.partial(f, ...)`: (name, f as the module names
    # it). A call of such a name calls `f` (DL101 follows an imported partial of SDPA).
    partials: tuple[tuple[str, str], ...] = ()
    error: str | None = None
    error_line: int = 1
    error_column: int = 0


def without_positions(facts: ModuleFacts) -> ModuleFacts:
    """`facts` with every line and column set to 0 (and the `if` arms of Literals, which are
    positions too), for comparing what a module defines whatever lines an edit moved. The index
    and its closure read no position: only rules do, to report."""
    classes = tuple(
        cls._replace(
            line=0,
            name_column=0,
            declaration=cls.declaration and cls.declaration._replace(line=0),
            metadata_reads=tuple(
                read._replace(line=0, column=0, end_line=0, end_column=0) for read in cls.metadata_reads
            ),
        )
        for cls in facts.classes
    )
    return dataclasses.replace(
        facts,
        classes=classes,
        literals=tuple(literal._replace(line=0, branch=()) for literal in facts.literals),
        assignments=tuple((name, 0) for name, _ in facts.assignments),
        error_line=0,
        error_column=0,
    )


class FactOptions(NamedTuple):
    declaration_attribute: str
    fixed_marker: str
    model_decorators: tuple[str, ...]


def name_matches(dotted: str, configured: str) -> bool:
    """`pkg.mod.Name` matches "Name" and "mod.Name"; a bare name matches only its last part."""
    return dotted == configured or dotted.endswith("." + configured)


def extract_facts(
    text: str, module: str, path: str, options: FactOptions, is_package: bool, *, literals_only: bool = False
) -> ModuleFacts:
    """The module's facts. `literals_only`: only what a module indexed for its Literals holds
    (`prefilter.PartialFacts`: imports, module-level assignments, string constants, Literals),
    none of the walks over classes and functions (two thirds of a full extraction: on the 59
    transformers files naming `Literal`, 0.56 s of parsing against 1.69 s in all)."""
    try:
        with warnings.catch_warnings():
            # The analysed code's invalid escapes and `1()` are not the user's run's business.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        message, line, column = syntax_problem(error, text)
        return ModuleFacts(module, path, error=message, error_line=line, error_column=column)
    except (RecursionError, MemoryError, ValueError) as error:
        return ModuleFacts(module, path, error=f"cannot parse: {type(error).__name__}")
    extractor = _Extractor(module, path, options, is_package, split_lines(text))
    return extractor.run_literals_only(tree) if literals_only else extractor.run(tree)


def _assignment_facts(tree: ast.Module) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, str], ...]]:
    """(every module-level assignment's target and line, the targets bound to a string)."""
    assignments: list[tuple[str, int]] = []
    constants: list[tuple[str, str]] = []
    for node in tree.body:
        for target, value, line in _module_assignments(node):
            assignments.append((target, line))
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                constants.append((target, value.value))
    return tuple(assignments), tuple(constants)


class _Extractor:
    def __init__(self, module: str, path: str, options: FactOptions, is_package: bool, lines: list[str]) -> None:
        self.module = module
        self.lines = lines
        self.path = path
        self.options = options
        self.package = module if is_package else module.rpartition(".")[0]
        self.names: dict[str, str] = {}
        self.stars: list[str] = []  # modules this one imports `*` from
        self.module_values: dict[str, ast.expr] = {}  # module-level NAME = value (the last one)
        self.value_names: frozenset[str] = frozenset()  # module-level names `_references` records
        self.local_imports: dict[str, str] = {}  # names imports in a function or class body bind
        # Modules imported whole, `import a.b.c` without `as`: it binds only `a`, so code names the
        # module's attributes by the whole path (`a.b.c.x`), which `_references` records.
        self.whole_modules: set[str] = set()

    def run(self, tree: ast.Module) -> ModuleFacts:
        imports = self._collect_bindings(tree)
        self.module_values = {t: v for node in tree.body for t, v, _ in _module_assignments(node) if v is not None}
        values = self._values(tree)
        classes: list[ClassFacts] = []
        functions: list[FunctionFacts] = []
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes.append(self._class(node))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.append(FunctionFacts(node.name, f"{self.module}.{node.name}", self._references(node)))
        assignments, constants = _assignment_facts(tree)
        return ModuleFacts(
            self.module,
            self.path,
            tuple(sorted(imports.items())),
            tuple(classes),
            tuple(functions),
            self._module_literals(tree),
            assignments,
            constants,
            tuple(self.stars),
            values,
            self._partials(tree),
        )

    def run_literals_only(self, tree: ast.Module) -> ModuleFacts:
        """`run`'s imports, module-level assignments, string constants and Literals, no more."""
        imports = self._collect_bindings(tree, nested_imports=False)
        self.module_values = {t: v for node in tree.body for t, v, _ in _module_assignments(node) if v is not None}
        assignments, constants = _assignment_facts(tree)
        return ModuleFacts(
            self.module,
            self.path,
            tuple(sorted(imports.items())),
            literals=self._module_literals(tree),
            assignments=assignments,
            constants=constants,
            star_imports=tuple(self.stars),
        )

    def _module_literals(self, tree: ast.Module) -> tuple[LiteralDef, ...]:
        return tuple(
            literal._replace(branch=branch) if branch else literal
            for node, type_checking, branch in _module_level(tree.body, type_checking=False)
            for target, value, line in _module_assignments(node)
            if (literal := self._literal(target, value, line, type_checking)) is not None
        )

    def _collect_bindings(self, tree: ast.Module, nested_imports: bool = True) -> dict[str, str]:
        """The module's imports: what each name a module-level import binds holds once the module
        has run (its last binding, Python running the module top to bottom: an import that a
        later module-level statement rebinds for good, `attention = len`, `def`, `class`, `del`,
        binds nothing another module could import; `rebound_imports`). Imports in a function or
        class body bind no module-level name: they only resolve the names the module does not
        bind, as before (a tower a method imports to build it is still referenced), and add their
        target to what the function or class references (`_references`)."""
        imports: dict[str, str] = {}
        module_bound: set[str] = set()  # names a module-level statement binds
        statements = list(module_statements(tree.body))
        for node, conditional in statements:
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports.update(import_bindings(node, self.package))
                self.whole_modules.update(_whole_modules(node))
                if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                    base = absolute_module(self.package, node.module, node.level)
                    if base and base not in self.stars:
                        self.stars.append(base)
            else:
                rebound = rebinds(node)
                module_bound.update(rebound)
                for name in () if conditional else rebound:
                    imports.pop(name, None)
        module_level = {id(statement) for statement, _ in statements}
        for inner in ast.walk(tree) if nested_imports else ():  # (a module-level Literal needs none)
            if isinstance(inner, ast.Import | ast.ImportFrom) and id(inner) not in module_level:
                self.local_imports.update(import_bindings(inner, self.package))
                self.whole_modules.update(_whole_modules(inner))
        for node in tree.body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                self.names[node.name] = f"{self.module}.{node.name}"
        module_bound.update(imports, self.names)
        local = {name: dotted for name, dotted in self.local_imports.items() if name not in module_bound}
        self.names = {**local, **imports, **self.names}
        # `Alias = SomeModel` at module level, bound once: a name for what it names (a base written
        # `class B(Alias)`, or another module importing Alias, follows it like an import).
        for name, value in _aliases(tree).items():
            if name not in self.names and (target := self.resolve(value)) is not None:
                imports[name] = self.names[name] = target
        return imports

    def _partials(self, tree: ast.Module) -> tuple[tuple[str, str], ...]:
        """(name, function) of module-level names bound once, by a plain assignment, to
        `functools.partial(function, ...)` (a name rebound may be anything at a call)."""
        found = []
        for name, value in bound_once(tree).items():
            if not (isinstance(value, ast.Call) and value.args):
                continue
            first = value.args[0]  # a name chain only: `resolve` reads a call as its callee
            if not isinstance(first, ast.Name | ast.Attribute) or self.resolve(value.func) != "functools.partial":
                continue
            if function := self.resolve(first):
                found.append((name, function))
        return tuple(sorted(found))

    def resolve(self, node: ast.expr) -> str | None:
        """Dotted name of a Name/Attribute chain, through this module's imports and defs."""
        if isinstance(node, ast.Name):
            found = self.names.get(node.id)
            if found is not None:
                return found
            # Maybe from a `from X import *`: the index looks for it there (`ProjectIndex.resolve`).
            return f"{self.module}.{node.id}" if self.stars and not hasattr(builtins, node.id) else node.id
        if isinstance(node, ast.Attribute):
            head = self.resolve(node.value)
            return f"{head}.{node.attr}" if head else None
        if isinstance(node, ast.Subscript):
            return self.resolve(node.value)
        if isinstance(node, ast.Call):
            return self.resolve(node.func)
        return None

    def _suppressors(self) -> frozenset[str]:
        """Names this module binds to `contextlib.suppress` other than `suppress` itself."""
        return frozenset(name for name, dotted in self.names.items() if dotted == "contextlib.suppress")

    def _class(self, node: ast.ClassDef) -> ClassFacts:
        bases = tuple(self.resolve(base) or ast.unparse(base) for base in node.bases)
        base_args = tuple(self._subscript_args(base) for base in node.bases)
        decorators = tuple(self.resolve(dec) or "" for dec in node.decorator_list)
        return ClassFacts(
            name=node.name,
            qualname=f"{self.module}.{node.name}",
            line=node.lineno,
            bases=bases,
            base_args=base_args,
            decorators=decorators,
            modalities=self._modalities(node),
            declaration=self._declaration(node),
            class_attrs=self._class_attrs(node),
            members=provided_members(node, self.module_values),
            methods=method_names(node),
            metadata_reads=metadata_reads(node, self.lines, self._suppressors()),
            default_backend=self._default_backend(node),
            name_column=self._name_column(node),
            fields=self._fields(node),
            references=tuple(sorted({*self._references(node), *(b for b in bases if "." in b)})),
        )

    def _fields(self, node: ast.ClassDef) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The class body's annotated names with the names their annotations hold (the last
        annotation of a name: the one a type checker and a dataclass keep); a field annotated
        only with builtins or typing's own names (`str`, `Optional[int]`) holds none, and hides
        the annotation of a base class's field of its name."""
        fields: dict[str, tuple[str, ...]] = {}
        for statement in node.body:
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                fields[statement.target.id] = self._annotation_names(statement.annotation)
        return tuple(sorted(fields.items()))

    def _annotation_names(self, annotation: ast.expr) -> tuple[str, ...]:
        """The dotted names an annotation holds, as this module binds them, sorted: a name of the
        module's own (a Literal it defines) qualified with the module's name. Not followed: an
        inline `Literal[...]` (its strings are members), the metadata of `Annotated[X, ...]`, calls."""
        found: set[str] = set()
        stack: list[ast.expr] = [annotation]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                try:
                    stack.append(ast.parse(node.value.strip(), mode="eval").body)
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    continue
            elif isinstance(node, ast.Name | ast.Attribute):
                dotted = self._annotation_name(node)
                if dotted is not None:
                    found.add(dotted)
            elif isinstance(node, ast.Subscript):
                head = self.resolve(node.value) or ""
                if head in TYPING_LITERALS or head == "Literal":
                    continue
                if head in _TYPING_ANNOTATED:
                    metadata = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                    stack.extend(metadata[:1])
                    continue
                stack.extend((node.value, node.slice))
            elif not isinstance(node, ast.Call):
                stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))
        return tuple(sorted(found))

    def _annotation_name(self, node: ast.Name | ast.Attribute) -> str | None:
        """A name chain of an annotation as this module binds it; None for a builtin, a name of
        typing's (`Optional`), or a name the module does not bind (nothing the index could find)."""
        head: ast.expr = node
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name):
            return None
        if head.id in self.names or self.stars:
            dotted = self.resolve(node)
        elif head.id in self.module_values:  # a Literal (or alias) of this module's
            dotted = self.resolve(node)
            dotted = f"{self.module}.{dotted}" if dotted else None
        else:
            return None
        if dotted is None or "." not in dotted or dotted.partition(".")[0] in _TYPING_MODULES:
            return None
        return dotted

    def _constant(self, node: ast.expr | None) -> str | None:
        """A string literal as itself; a name as `=dotted.name`, for the index to look up."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name | ast.Attribute):
            resolved = self.resolve(node)
            return f"={resolved}" if resolved else None
        return None

    def _default_backend(self, node: ast.ClassDef) -> str | None:
        """What `get_model_defaults` sets attn_backend to, as `_constant` reads it; DYNAMIC_DEFAULT
        for a value that is neither a string literal nor a name."""
        value = model_default_backend(node)
        if value is UNSET:
            return UNSET_DEFAULT
        return None if value is None else self._constant(value) or DYNAMIC_DEFAULT

    def _name_column(self, node: ast.ClassDef) -> int:
        line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else ""
        match = re.search(rf"\bclass\s+({re.escape(node.name)})\b", line)
        return match.start(1) if match else 0

    def _subscript_args(self, base: ast.expr) -> tuple[str, ...]:
        if not isinstance(base, ast.Subscript):
            return ()
        elements = base.slice.elts if isinstance(base.slice, ast.Tuple) else [base.slice]
        return tuple(self.resolve(element) or ast.unparse(element) for element in elements)

    def _modalities(self, node: ast.ClassDef) -> tuple[str, ...] | None:
        for decorator in node.decorator_list:
            name = self.resolve(decorator) or ""
            if not any(name_matches(name, wanted) for wanted in self.options.model_decorators):
                continue
            for inner in ast.walk(decorator):
                if not isinstance(inner, ast.keyword):
                    continue
                if inner.arg == "placeholder_map":
                    found = self._map_keys(inner.value)
                elif inner.arg == "placeholder_metadata":
                    found = self._metadata_modalities(inner.value)
                else:
                    continue
                if found is not None:
                    return found
        return None

    def _metadata_modalities(self, value: ast.expr) -> tuple[str, ...] | None:
        """The keys of a `MultimodalPlaceholderMetadata(...)`'s map, given as `placeholder_map=`
        or as its first field, positionally; the call written in place or in a constant."""
        if isinstance(value, ast.Name):
            return self._constant_modalities(value.id)
        if not isinstance(value, ast.Call):
            return None
        given = next((k.value for k in value.keywords if k.arg == "placeholder_map"), None)
        if given is None and value.args and not isinstance(value.args[0], ast.Starred):
            given = value.args[0]
        return self._map_keys(given) if given is not None else None

    def _constant_modalities(self, name: str) -> tuple[str, ...] | None:
        """`placeholder_metadata=_X_PLACEHOLDER_METADATA`, defined at module level in this file
        (as TensorRT-LLM writes its larger ones): the keys of its map."""
        value = self.module_values.get(name)
        return self._metadata_modalities(value) if isinstance(value, ast.Call) else None

    def _map_keys(self, value: ast.expr, depth: int = 0) -> tuple[str, ...] | None:
        """The string keys of a `{...}` or `dict(...)` placeholder map, sorted, following a
        module-level dict of this file by its name and literals unpacked into it (`**{...}`);
        None for another shape. `depth` stops a constant that names itself."""
        if isinstance(value, ast.Name) and depth < _MAX_MAP_DEPTH:
            known = self.module_values.get(value.id)
            return self._map_keys(known, depth + 1) if known is not None else None
        pairs = map_pairs(value)
        if pairs is None:
            return None
        keys: set[str] = set()
        for key, item in pairs:
            if key is not None:
                keys.add(key)
            elif depth < _MAX_MAP_DEPTH:  # unpacked: its keys are the map's too, when they can be read
                keys.update(self._map_keys(item, depth + 1) or ())
        return tuple(sorted(keys))

    def _declaration(self, node: ast.ClassDef) -> Declaration | None:
        # The last assignment: the one the class keeps at run time (DL104 reports the others).
        for statement in reversed(node.body):
            value = _assigned_value(statement, self.options.declaration_attribute)
            if value is not None:
                return self._parse_declaration(value, statement.lineno)
        return None

    def _parse_declaration(self, value: ast.expr, line: int) -> Declaration:
        if not isinstance(value, ast.Dict):
            return Declaration(line, (), is_literal=False)
        # As Python builds the dict: an encoder listed twice keeps its first place and its last
        # value (DL104 reports the duplicate; the table, DL102 and the shim read what runs).
        entries: dict[str, DeclEntry] = {}
        for key, entry in zip(value.keys, value.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries[key.value] = self._entry(key.value, entry)
        # `{**Base.encoder_attention_backends, ...}`: the unpacked encoders are unknown here
        # (DL104 reports the unpacking), so no rule may conclude that one is missing.
        return Declaration(line, tuple(entries.values()), is_literal=None not in value.keys, empty=not value.keys)

    def _entry(self, encoder: str, value: ast.expr) -> DeclEntry:
        value = _unwrap_tuple_call(value)
        if isinstance(value, ast.Tuple | ast.List | ast.Set):
            names = tuple(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
            if len(names) < len(value.elts):
                # A name (`BACKEND_TRTLLM`) or an expression: DL104 reports it, and the table shows
                # the entry invalid, not configurable with the backends that are literals (red-team 48).
                return DeclEntry(encoder, "invalid")
            return DeclEntry(encoder, "configurable", names)
        if isinstance(value, ast.Call):
            callee = self.resolve(value.func) or ""
            if name_matches(callee, self.options.fixed_marker):
                return DeclEntry(encoder, "fixed", reason=_first_string(value))
            if name_matches(callee, "get_args"):
                given = self.resolve(value.args[0]) if value.args else None
                return DeclEntry(encoder, "all", literal=given or "")
        return DeclEntry(encoder, "invalid")

    def _class_attrs(self, node: ast.ClassDef) -> tuple[tuple[str, str], ...]:
        attrs = []
        for statement in node.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0], statement.value
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                target, value = statement.target, statement.value
            else:
                continue
            if isinstance(target, ast.Name) and isinstance(value, ast.Name | ast.Attribute):
                attrs.append((target.id, self.resolve(value) or ""))
        return tuple(attrs)

    def _values(self, tree: ast.Module) -> tuple[ValueFacts, ...]:
        """Module-level names (not imports or defs) bound, anywhere at module level and however
        often, to an expression that references something: each with the union of those references.
        Names are collected first, so that a value naming another (`{**_BASE}`) leads to it."""
        bindings: dict[str, list[ast.expr]] = {}
        for node, _, _ in _module_level(tree.body, type_checking=False):
            for name, value in _value_bindings(node):
                if name not in self.names:
                    bindings.setdefault(name, []).append(value)
        self.value_names = frozenset(bindings)
        found = []
        for name, values in bindings.items():
            references = tuple(sorted({ref for value in values for ref in self._references(value)}))
            if references:
                found.append(ValueFacts(name, f"{self.module}.{name}", references))
        # Only names that lead somewhere are worth a reference (and a place in the cached facts).
        self.value_names = frozenset(value.name for value in found)
        return tuple(found)

    def _references(self, node: ast.AST) -> tuple[str, ...]:
        found = set()
        for inner in _walk_uses(node):
            if isinstance(inner, ast.Name) and inner.id in self.names:
                found.add(self.names[inner.id])
            elif isinstance(inner, ast.Name) and inner.id in self.value_names:
                found.add(f"{self.module}.{inner.id}")
            elif isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
                head = self.names.get(inner.value.id)
                if head is not None:
                    found.add(f"{head}.{inner.attr}")
            if isinstance(inner, ast.Name) and inner.id in self.local_imports:
                found.add(self.local_imports[inner.id])  # maybe a function's own import of the name
            elif isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
                local = self.local_imports.get(inner.value.id)
                if local is not None:
                    found.add(f"{local}.{inner.attr}")
            elif self.whole_modules and isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Attribute):
                if (read := self._whole_module_read(inner)) is not None:
                    found.add(read)
        return tuple(sorted(found))

    def _whole_module_read(self, node: ast.Attribute) -> str | None:
        """`a.b.c.x` when `a.b.c` is a module imported whole (`import a.b.c`): its name `x`, the
        reference `m.x` is after `import a.b.c as m` (the head `a.b` alone leads to nothing, and
        ownership, or the index's reading of the module, would miss what the code calls)."""
        attributes = [node.attr]
        inner = node.value
        while isinstance(inner, ast.Attribute):
            attributes.append(inner.attr)
            inner = inner.value
        if not isinstance(inner, ast.Name):
            return None
        head = self.names.get(inner.id) or self.local_imports.get(inner.id)
        dotted = ".".join([head, *reversed(attributes)]) if head else ""
        return dotted if dotted.rpartition(".")[0] in self.whole_modules else None

    def _literal(self, target: str, value: ast.expr | None, line: int, type_checking: bool) -> LiteralDef | None:
        inner = self._optional_of(value)
        literal = value if inner is None else inner
        if not isinstance(literal, ast.Subscript):
            return None
        if not self._is_literal(literal):
            # A Literal inside another type (`Annotated[Literal[...], Field(...)]`, `dict[str,
            # Literal[...]]`): a copy of its members as the Optional one is, if it is the only one.
            # Not in a union with another type (`Union[Literal[...], str]` accepts any string).
            if (self.resolve(literal.value) or "") in _TYPING_UNIONS:
                return None
            nested = list(self._nested_literals(literal.slice))
            if len(nested) != 1:
                return None
            literal, inner = nested[0], nested[0]
        elements = literal.slice.elts if isinstance(literal.slice, ast.Tuple) else [literal.slice]
        members = tuple(str(e.value) for e in elements if isinstance(e, ast.Constant))
        return LiteralDef(target, f"{self.module}.{target}", line, members, inner is not None, type_checking)

    def _nested_literals(self, node: ast.expr) -> Iterator[ast.Subscript]:
        """The Literals of a type expression, not those in a union with another type."""
        if isinstance(node, ast.Subscript) and self._is_literal(node):
            yield node
            return
        if self._optional_of(node) is not None or self._is_union(node):
            inner = self._optional_of(node)
            if inner is not None:
                yield from self._nested_literals(inner)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                yield from self._nested_literals(child)

    def _is_union(self, node: ast.expr) -> bool:
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, ast.BitOr)
        return isinstance(node, ast.Subscript) and (self.resolve(node.value) or "") in _TYPING_UNIONS

    def _is_literal(self, node: ast.Subscript) -> bool:
        head = self.resolve(node.value) or ""
        return head in TYPING_LITERALS or head == "Literal"

    def _optional_of(self, value: ast.expr | None) -> ast.expr | None:
        """X of `Optional[X]`, `Union[X, None]`, `X | None` (and `None` first), else None."""
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
            return _other_than_none([value.left, value.right])
        if not isinstance(value, ast.Subscript):
            return None
        head = self.resolve(value.value) or ""
        if head in _TYPING_OPTIONALS:
            return value.slice
        if head in _TYPING_UNIONS and isinstance(value.slice, ast.Tuple):
            return _other_than_none(value.slice.elts)
        return None


def _other_than_none(elements: list[ast.expr]) -> ast.expr | None:
    """The one element of a two-element union that is not None."""
    others = [e for e in elements if not (isinstance(e, ast.Constant) and e.value is None)]
    return others[0] if len(elements) == 2 and len(others) == 1 else None


# Where a statement sits among the module's `if` statements: (line, column, 0 for the body or 1
# for the `else`) of each `if` it is in, outermost first. Two statements in different branches of
# one `if` never both run.
Branch = tuple[tuple[int, int, int], ...]


def _module_level(
    statements: list[ast.stmt], type_checking: bool, branch: Branch = ()
) -> list[tuple[ast.stmt, bool, Branch]]:
    """The module's statements and those in its `if` / `try` blocks, which run at import too,
    each with whether only a type checker sees it (the body of `if TYPE_CHECKING:`) and its branch."""
    found = []
    for statement in statements:
        found.append((statement, type_checking, branch))
        if isinstance(statement, ast.If):
            where = (statement.lineno, statement.col_offset)
            checking = type_checking or _is_type_checking(statement.test)
            found += _module_level(statement.body, checking, (*branch, (*where, 0)))
            found += _module_level(statement.orelse, type_checking, (*branch, (*where, 1)))
        elif isinstance(statement, ast.Try | ast.TryStar):
            blocks = [statement.body, *(h.body for h in statement.handlers), statement.orelse, statement.finalbody]
            found += [item for block in blocks for item in _module_level(block, type_checking, branch)]
    return found


def exclusive(one: Branch, other: Branch) -> bool:
    """Do the two branches lie in different arms of one `if` (so that at most one of them runs)?"""
    return parting_if(one, other) is not None


def parting_if(one: Branch, other: Branch) -> int | None:
    """The line of the `if` whose different arms the two branches lie in; None if there is none."""
    for (line, column, arm), (other_line, other_column, other_arm) in zip(one, other, strict=False):
        if (line, column) != (other_line, other_column):
            return None
        if arm != other_arm:
            return line
    return None


def _is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING`, `typing.TYPE_CHECKING` or through any alias of typing."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _unwrap_tuple_call(value: ast.expr) -> ast.expr:
    """`tuple(get_args(EncoderAttentionBackend))` (or `list(...)`) is the `get_args(...)` it wraps."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("tuple", "list")
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], ast.Call)
    ):
        return value.args[0]
    return value


def _module_assignments(node: ast.stmt) -> list[tuple[str, ast.expr | None, int]]:
    if isinstance(node, ast.Assign):
        return [(t.id, node.value, node.lineno) for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [(node.target.id, node.value, node.lineno)]
    return []


def _value_bindings(node: ast.stmt) -> list[tuple[str, ast.expr]]:
    """(name, value) a module-level statement binds or adds to: `NAME = v`, `NAME: T = v`,
    `NAME += v` and `NAME[key] = v` (a registry filled entry by entry)."""
    if isinstance(node, ast.Assign):
        targets = [t.value if isinstance(t, ast.Subscript) else t for t in node.targets]
        return [(t.id, node.value) for t in targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name) and node.value:
        return [(node.target.id, node.value)]
    return []


def _aliases(tree: ast.Module) -> dict[str, ast.Name | ast.Attribute]:
    """Module-level names bound once, by a plain assignment, to a name or an attribute chain."""
    return {name: value for name, value in bound_once(tree).items() if isinstance(value, ast.Name | ast.Attribute)}


def bound_once(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Module-level names bound by exactly one plain or annotated assignment, with its value."""
    bound: dict[str, list[ast.expr | None]] = {}
    for node in tree.body:
        for target, value, _ in _module_assignments(node):
            bound.setdefault(target, []).append(value)
    return {name: values[0] for name, values in bound.items() if len(values) == 1}


def _assigned_value(statement: ast.stmt, name: str) -> ast.expr | None:
    if isinstance(statement, ast.Assign):
        if any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
            return statement.value
    elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        if statement.target.id == name and statement.value is not None:
            return statement.value
    return None


def static_value(node: ast.expr) -> tuple[bool, object]:
    """(whether `node`'s value is known without running the code, that value): a constant (ast
    has already joined an implicit concatenation), or an f-string without placeholders."""
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.JoinedStr) and all(isinstance(part, ast.Constant) for part in node.values):
        return True, "".join(str(part.value) for part in node.values if isinstance(part, ast.Constant))
    return False, None


def _first_string(call: ast.Call) -> str:
    """The marker's reason; "" for none (also None, a non-string or blank constant: DL104 and the
    runtime shim reject those), DYNAMIC_REASON for one only known at run time."""
    candidates = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "reason")]
    for candidate in candidates:
        known, value = static_value(candidate)
        if not known:
            return DYNAMIC_REASON
        return value if isinstance(value, str) and value.strip() else ""
    return ""


# Comparisons that test what an object is: `type(x) in SUPPORTED_MODELS`, `x.__class__ is Tower`.
_TYPE_TESTS = (ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.Eq, ast.NotEq)


def _whole_modules(statement: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The dotted modules an `import a.b.c` (no `as`) imports: `a.b.c` and the package `a.b`
    above it (Python imports every package on the way, and `a.b.x` reads the package's `x`);
    `a` itself is the bound name, followed as any import is. None for a from-import."""
    if not isinstance(statement, ast.Import):
        return
    for alias in statement.names:
        if alias.asname is None:
            parts = alias.name.split(".")
            yield from (".".join(parts[:end]) for end in range(2, len(parts) + 1))


def _walk_uses(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk`, without the classes a type test names (`isinstance(x, (A, B))`, `issubclass`,
    `type(x) in TOWERS`, `case Tower():`): ownership follows what a class builds or calls, and a
    model that checks whether an object is another model's tower does not own that tower. What a
    test builds is still followed (`(tower := Tower()) is not None`)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in ast.iter_child_nodes(current) if not _type_named(current, child))


def _type_named(parent: ast.AST, child: ast.AST) -> bool:
    """Is `child` the classes `parent` only tests against (names, or a tuple of them)?"""
    if isinstance(parent, ast.Compare) and all(isinstance(op, _TYPE_TESTS) for op in parent.ops):
        return _names_only(child)
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in ("isinstance", "issubclass")
    ):
        return len(parent.args) > 1 and child is parent.args[1] and _names_only(child)
    return isinstance(parent, ast.MatchClass) and child is parent.cls


def _names_only(node: ast.AST) -> bool:
    if isinstance(node, ast.Name | ast.Attribute):
        return True
    return isinstance(node, ast.Tuple | ast.List | ast.Set) and all(_names_only(e) for e in node.elts)
