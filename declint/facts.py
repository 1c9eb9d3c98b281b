"""Phase 1: the per-file facts the project index is made of.

Facts are extracted with the standard library's `ast`, not libcst: the index reads every file
under the roots, and `ast.parse` is about 10x cheaper than `libcst.parse_module` (measured in
docs/benchmarks.md). No position from here is ever reported: rules report from libcst nodes,
so ast's byte-based columns never reach a user. Only facts (names, bases, declarations) cross.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from declint.members import MetadataRead, metadata_reads, method_names, model_default_backend, provided_members

TYPING_LITERALS = frozenset({"typing.Literal", "typing_extensions.Literal"})


@dataclass(frozen=True)
class DeclEntry:
    encoder: str
    kind: str  # "configurable" | "all" (get_args of the Literal) | "fixed" | "invalid"
    backends: tuple[str, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class Declaration:
    line: int
    entries: tuple[DeclEntry, ...]
    is_literal: bool  # False: not a dict literal, its encoders cannot be known statically
    empty: bool = False  # an explicit `{}`: the model has no attention encoder

    @property
    def encoders(self) -> frozenset[str]:
        return frozenset(entry.encoder for entry in self.entries)

    def entry(self, encoder: str) -> DeclEntry | None:
        return next((entry for entry in self.entries if entry.encoder == encoder), None)


@dataclass(frozen=True)
class ClassFacts:
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


@dataclass(frozen=True)
class FunctionFacts:
    name: str
    qualname: str
    references: tuple[str, ...]


@dataclass(frozen=True)
class LiteralDef:
    name: str
    qualname: str
    line: int
    members: tuple[str, ...]


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
    error: str | None = None
    error_line: int = 1
    error_column: int = 0


@dataclass(frozen=True)
class FactOptions:
    declaration_attribute: str
    fixed_marker: str
    model_decorators: tuple[str, ...]


def name_matches(dotted: str, configured: str) -> bool:
    """`pkg.mod.Name` matches "Name" and "mod.Name"; a bare name matches only its last part."""
    return dotted == configured or dotted.endswith("." + configured)


def extract_facts(text: str, module: str, path: str, options: FactOptions, is_package: bool) -> ModuleFacts:
    try:
        with warnings.catch_warnings():
            # The analysed code's invalid escapes and `1()` are not the user's run's business.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
    except SyntaxError as error:
        return ModuleFacts(
            module,
            path,
            error=f"syntax error: {error.msg}",
            error_line=error.lineno or 1,
            error_column=max((error.offset or 1) - 1, 0),
        )
    except (RecursionError, MemoryError, ValueError) as error:
        return ModuleFacts(module, path, error=f"cannot parse: {type(error).__name__}")
    # ast numbers lines on \n, \r\n and \r only (str.splitlines also splits on \f, \x1c, ...).
    return _Extractor(module, path, options, is_package, re.split(r"\r\n|\r|\n", text)).run(tree)


class _Extractor:
    def __init__(self, module: str, path: str, options: FactOptions, is_package: bool, lines: list[str]) -> None:
        self.module = module
        self.lines = lines
        self.path = path
        self.options = options
        self.package = module if is_package else module.rpartition(".")[0]
        self.names: dict[str, str] = {}

    def run(self, tree: ast.Module) -> ModuleFacts:
        imports = self._collect_bindings(tree)
        classes, functions, literals, assignments, constants = [], [], [], [], []
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes.append(self._class(node))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                functions.append(FunctionFacts(node.name, f"{self.module}.{node.name}", self._references(node)))
            for target, value, line in _module_assignments(node):
                assignments.append((target, line))
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    constants.append((target, value.value))
                literal = self._literal(target, value, line)
                if literal is not None:
                    literals.append(literal)
        return ModuleFacts(
            self.module,
            self.path,
            tuple(sorted(imports.items())),
            tuple(classes),
            tuple(functions),
            tuple(literals),
            tuple(assignments),
            tuple(constants),
        )

    def _collect_bindings(self, tree: ast.Module) -> dict[str, str]:
        imports: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        imports[alias.asname] = alias.name
                    else:
                        head = alias.name.partition(".")[0]
                        imports[head] = head
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node.module, node.level)
                for alias in node.names:
                    if alias.name != "*":
                        imports[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        for node in tree.body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                self.names[node.name] = f"{self.module}.{node.name}"
        self.names = {**imports, **self.names}
        return imports

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        parts = self.package.split(".") if self.package else []
        parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
        return ".".join([*parts, *([module] if module else [])])

    def resolve(self, node: ast.expr) -> str | None:
        """Dotted name of a Name/Attribute chain, through this module's imports and defs."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            head = self.resolve(node.value)
            return f"{head}.{node.attr}" if head else None
        if isinstance(node, ast.Subscript):
            return self.resolve(node.value)
        if isinstance(node, ast.Call):
            return self.resolve(node.func)
        return None

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
            members=provided_members(node),
            methods=method_names(node),
            metadata_reads=metadata_reads(node, self.lines),
            default_backend=self._constant(model_default_backend(node)),
            name_column=self._name_column(node),
            references=tuple(sorted({*self._references(node), *(b for b in bases if "." in b)})),
        )

    def _constant(self, node: ast.expr | None) -> str | None:
        """A string literal as itself; a name as `=dotted.name`, for the index to look up."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name | ast.Attribute):
            resolved = self.resolve(node)
            return f"={resolved}" if resolved else None
        return None

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
                if isinstance(inner, ast.keyword) and inner.arg == "placeholder_map":
                    if isinstance(inner.value, ast.Dict):
                        keys = [k.value for k in inner.value.keys if isinstance(k, ast.Constant)]
                        return tuple(sorted({str(key) for key in keys}))
        return None

    def _declaration(self, node: ast.ClassDef) -> Declaration | None:
        for statement in node.body:
            value = _assigned_value(statement, self.options.declaration_attribute)
            if value is not None:
                return self._parse_declaration(value, statement.lineno)
        return None

    def _parse_declaration(self, value: ast.expr, line: int) -> Declaration:
        if not isinstance(value, ast.Dict):
            return Declaration(line, (), is_literal=False)
        entries = []
        for key, entry in zip(value.keys, value.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                entries.append(self._entry(key.value, entry))
        return Declaration(line, tuple(entries), is_literal=True, empty=not value.keys)

    def _entry(self, encoder: str, value: ast.expr) -> DeclEntry:
        if isinstance(value, ast.Tuple | ast.List | ast.Set):
            names = tuple(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
            return DeclEntry(encoder, "configurable", names)
        if isinstance(value, ast.Call):
            callee = self.resolve(value.func) or ""
            if name_matches(callee, self.options.fixed_marker):
                return DeclEntry(encoder, "fixed", reason=_first_string(value))
            if name_matches(callee, "get_args"):
                return DeclEntry(encoder, "all")
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

    def _references(self, node: ast.AST) -> tuple[str, ...]:
        found = set()
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id in self.names:
                found.add(self.names[inner.id])
            elif isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
                head = self.names.get(inner.value.id)
                if head is not None:
                    found.add(f"{head}.{inner.attr}")
        return tuple(sorted(found))

    def _literal(self, target: str, value: ast.expr | None, line: int) -> LiteralDef | None:
        if not isinstance(value, ast.Subscript):
            return None
        head = self.resolve(value.value) or ""
        if head not in TYPING_LITERALS and head != "Literal":
            return None
        elements = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
        members = tuple(str(e.value) for e in elements if isinstance(e, ast.Constant))
        return LiteralDef(target, f"{self.module}.{target}", line, members)


def _module_assignments(node: ast.stmt) -> list[tuple[str, ast.expr | None, int]]:
    if isinstance(node, ast.Assign):
        return [(t.id, node.value, node.lineno) for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [(node.target.id, node.value, node.lineno)]
    return []


def _assigned_value(statement: ast.stmt, name: str) -> ast.expr | None:
    if isinstance(statement, ast.Assign):
        if any(isinstance(t, ast.Name) and t.id == name for t in statement.targets):
            return statement.value
    elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        if statement.target.id == name and statement.value is not None:
            return statement.value
    return None


def _first_string(call: ast.Call) -> str:
    candidates = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "reason")]
    for candidate in candidates:
        if isinstance(candidate, ast.Constant) and isinstance(candidate.value, str):
            return candidate.value
        return "<dynamic>"
    return ""
