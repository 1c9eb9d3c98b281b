"""A light name resolver over the standard library's `ast`: what a name or attribute chain refers to.

libcst's `QualifiedNameProvider` answers the same question, but it needs a libcst tree and its
scope analysis, which together cost about 15x an `ast.parse` of the same file (measured in
docs/benchmarks.md). DL101 only needs to know which names are bound to imports, so this module
does just that, with Python's scoping rules:

- a name resolves in the innermost function, lambda or comprehension scope that binds it, then in
  enclosing function scopes (class bodies are skipped from nested scopes, as Python does), then
  in the module, then among the builtins (`builtins.getattr`);
- every binding of the name in that scope counts, wherever it is (like libcst, this is not flow
  sensitive): `import torch.nn.functional as F` anywhere in the module makes `F.x` resolve to
  `torch.nn.functional.x`, even if `F` is also assigned something else;
- a binding that is not an import (assignment, parameter, def, loop target...) resolves to no
  qualified name, so a parameter `F` shadows a module-level `import ... as F`;
- `global` and `nonlocal` declarations send the name to the module or the enclosing function
  (an assignment after `global x` binds `x` in the module, where every function sees it);
- relative imports are made absolute with the module's own dotted name when it is known (libcst
  keeps them relative, so they never matched an absolute configured name).

`Call`, `Subscript` and other expressions have no qualified name (`qualified()` returns an empty
set); callers decide what a call evaluates to. `binding_scope()` tells which scope's binding a
name refers to, so a caller can attach its own facts to a binding (DL101 marks the names bound
to SDPA) and have them follow the same scoping rules. `from m import *` binds names nobody can
list without reading `m`: its modules are kept in `star_modules` for callers that know the names
they look for.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field

_BUILTINS = frozenset(dir(builtins))
_FUNCTION_LIKE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass
class Scope:
    """One scope; `imports[name]` holds the dotted names `name` is imported as in this scope."""

    kind: str  # "module" | "class" | "function" | "comprehension"
    parent: Scope | None
    bound: set[str] = field(default_factory=set)
    imports: dict[str, set[str]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    first_line: dict[str, int] = field(default_factory=dict)  # first line binding each name

    def bind(self, name: str, line: int = 0) -> None:
        self.bound.add(name)
        if line and line < self.first_line.get(name, line + 1):
            self.first_line[name] = line

    def bind_import(self, name: str, dotted: str) -> None:
        self.bound.add(name)
        self.imports.setdefault(name, set()).add(dotted)


class NameResolver:
    """Qualified names of `Name` / `Attribute` nodes of one module's tree.

    `module` is the module's dotted name and `is_package` whether it is a package's
    `__init__.py` (both only used to make relative imports absolute).
    """

    def __init__(
        self, tree: ast.Module, module: str = "", is_package: bool = False, last_binding: bool = False
    ) -> None:
        self._package = module if is_package else module.rpartition(".")[0]
        self._known_module = bool(module)
        self.module_scope = Scope("module", None)
        self._scope_of: dict[int, Scope] = {}  # id(scope-creating node) -> its scope
        self._where: dict[int, Scope] = {}  # id(Name node) -> the scope it is evaluated in
        self.star_modules: list[str] = []  # absolute modules of `from m import *` (module level only)
        # `last_binding`: a module-level import the module then rebinds for good names nothing
        # where it is read after the rebinding (`rebound_imports`): in a function (which runs once
        # the module has run), or in module-level code below it. libcst does not do this.
        self._rebound = rebound_imports(tree) if last_binding else {}
        _Binder(self).run(tree)

    # ---- queries ------------------------------------------------------------------------
    def qualified(self, node: ast.AST) -> frozenset[str]:
        """Every qualified name `node` may refer to; empty for anything but a name chain."""
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Attribute):
            return frozenset(f"{head}.{node.attr}" for head in self.qualified(node.value))
        return frozenset()

    def binding_scope(self, node: ast.Name) -> Scope | None:
        """The scope whose binding `node` (read or written) refers to; None when nothing binds it."""
        scope = self._where.get(id(node), self.module_scope)
        if node.id in scope.global_names:
            return self.module_scope
        return self._lookup(node.id, scope)

    def scope_of(self, node: ast.AST) -> Scope | None:
        """The scope a class, function, lambda or comprehension node creates."""
        return self._scope_of.get(id(node))

    def _name(self, node: ast.Name) -> frozenset[str]:
        scope = self._where.get(id(node), self.module_scope)
        found = self._lookup(node.id, scope)
        if found is None:
            return frozenset({f"builtins.{node.id}"}) if node.id in _BUILTINS else frozenset()
        names = frozenset(found.imports.get(node.id, ()))
        if found is self.module_scope and node.id in self._rebound and self._reads_late(node, scope):
            return frozenset()
        if found is scope and scope.kind == "module" and node.id in _BUILTINS:
            # Module code runs top to bottom: before its first rebinding, a builtin is the builtin.
            if node.lineno < found.first_line.get(node.id, 0):
                names |= {f"builtins.{node.id}"}
        return names

    def _reads_late(self, node: ast.Name, scope: Scope) -> bool:
        """Is `node` read after the module has rebound its import (`_rebound`)? In a function, or
        in module-level code (a class body, a comprehension) below the rebinding statement."""
        current: Scope | None = scope
        while current is not None:
            if current.kind == "function":
                return True
            current = current.parent
        return node.lineno > self._rebound[node.id]

    def _lookup(self, name: str, scope: Scope) -> Scope | None:
        current: Scope | None = scope
        first = True
        while current is not None:
            if name in current.global_names:
                return self.module_scope if name in self.module_scope.bound else None
            if name in current.nonlocal_names:
                current = current.parent
                first = False
                continue
            # A class body is visible only to code directly in it, never to nested scopes.
            if (first or current.kind != "class") and name in current.bound:
                return current
            current = current.parent
            first = False
        return None

    # ---- relative imports -------------------------------------------------------------------
    def absolute(self, module: str | None, level: int) -> str:
        if level and not self._known_module:
            return "." * level + (module or "")
        return absolute_module(self._package, module, level)


def absolute_module(package: str, module: str | None, level: int) -> str:
    """The module `from <level dots><module> import ...` names, in `package` (the importing
    module's package: the module itself for an `__init__.py`)."""
    if level == 0:
        return module or ""
    parts = package.split(".") if package else []
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([module] if module else [])])


class _Binder:
    """One walk over the tree: creates scopes, records bindings and where each name is read."""

    def __init__(self, resolver: NameResolver) -> None:
        self.resolver = resolver

    def run(self, tree: ast.Module) -> None:
        # An explicit stack instead of recursion: deeply nested expressions must not overflow.
        stack: list[tuple[ast.AST, Scope]] = [(tree, self.resolver.module_scope)]
        while stack:
            node, scope = stack.pop()
            children = list(self._enter(node, scope))
            stack.extend(reversed(children))

    def _enter(self, node: ast.AST, scope: Scope) -> Iterator[tuple[ast.AST, Scope]]:
        if isinstance(node, ast.Name):
            self.resolver._where[id(node)] = scope
            if isinstance(node.ctx, ast.Store | ast.Del):
                target = self.resolver.module_scope if node.id in scope.global_names else scope
                target.bind(node.id, node.lineno)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from self._definition(node, scope)
            return
        if isinstance(node, ast.Lambda):
            inner = self._new_scope(node, "function", scope)
            yield from self._arguments(node.args, scope, inner)
            yield node.body, inner
            return
        if isinstance(node, _COMPREHENSIONS):
            yield from self._comprehension(node, scope)
            return
        if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            # A walrus in a comprehension binds in the enclosing non-comprehension scope.
            target = scope
            while target.kind == "comprehension" and target.parent is not None:
                target = target.parent
            target.bind(node.target.id)
            self.resolver._where[id(node.target)] = scope
            yield node.value, scope
            return
        self._bind_statement(node, scope)
        for child in ast.iter_child_nodes(node):
            yield child, scope

    def _definition(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, scope: Scope
    ) -> Iterator[tuple[ast.AST, Scope]]:
        scope.bind(node.name)
        for decorator in node.decorator_list:
            yield decorator, scope
        if isinstance(node, ast.ClassDef):
            inner = self._new_scope(node, "class", scope)
            for base in node.bases:
                yield base, scope
            for keyword in node.keywords:
                yield keyword.value, scope
        else:
            inner = self._new_scope(node, "function", scope)
            yield from self._arguments(node.args, scope, inner)
            if node.returns is not None:
                yield node.returns, scope
        for statement in node.body:
            yield statement, inner

    def _arguments(self, args: ast.arguments, outer: Scope, inner: Scope) -> Iterator[tuple[ast.AST, Scope]]:
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        for argument in every:
            inner.bind(argument.arg)
            if argument.annotation is not None:
                yield argument.annotation, outer
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            yield default, outer

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, scope: Scope
    ) -> Iterator[tuple[ast.AST, Scope]]:
        inner = self._new_scope(node, "comprehension", scope)
        for position, generator in enumerate(node.generators):
            # The first iterable is evaluated in the enclosing scope, the rest inside.
            yield generator.iter, scope if position == 0 else inner
            yield generator.target, inner
            for condition in generator.ifs:
                yield condition, inner
        if isinstance(node, ast.DictComp):
            yield node.key, inner
            yield node.value, inner
        else:
            yield node.elt, inner

    def _new_scope(self, node: ast.AST, kind: str, parent: Scope) -> Scope:
        scope = Scope(kind, parent)
        self.resolver._scope_of[id(node)] = scope
        return scope

    def _bind_statement(self, node: ast.AST, scope: Scope) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    scope.bind_import(alias.asname, alias.name)
                else:
                    head = alias.name.partition(".")[0]
                    scope.bind_import(head, head)
        elif isinstance(node, ast.ImportFrom):
            base = self.resolver.absolute(node.module, node.level)
            for alias in node.names:
                if alias.name == "*":
                    self.resolver.star_modules.append(base)
                else:
                    dotted = f"{base}.{alias.name}" if base and not base.endswith(".") else f"{base}{alias.name}"
                    scope.bind_import(alias.asname or alias.name, dotted)
        elif isinstance(node, ast.Global):
            scope.global_names.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            scope.nonlocal_names.update(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            scope.bind(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            scope.bind(node.rest)


def last_name(node: ast.AST) -> str | None:
    """The last name of a name chain (`x` of `x`, `y` of `a.b.y`); None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


# ---- what a module binds a name to once it has run ----------------------------------------------

# Compound statements whose blocks run at import, maybe not at all or only in part: a binding in
# them binds at module level, but may not happen.
_BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While, ast.Match)


def module_statements(statements: list[ast.stmt], conditional: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """A module's statements in source order, with those in its compound statements' blocks
    (`if`, `try`, `with`, loops, `match`: they run at import too) flagged conditional; never the
    body of a function or class, whose bindings are not the module's."""
    for statement in statements:
        yield statement, conditional
        if isinstance(statement, _BLOCKS):
            blocks: list[list[ast.stmt]] = [getattr(statement, name, []) for name in ("body", "orelse", "finalbody")]
            blocks += [handler.body for handler in getattr(statement, "handlers", ())]
            blocks += [case.body for case in getattr(statement, "cases", ())]
            for block in blocks:
                yield from module_statements(block, conditional=True)


def import_bindings(statement: ast.Import | ast.ImportFrom, package: str) -> Iterator[tuple[str, str]]:
    """(name, dotted) of each name an import statement binds (`*` left out); a relative import
    made absolute in `package`."""
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            head = alias.name.partition(".")[0]
            yield (alias.asname, alias.name) if alias.asname else (head, head)
        return
    base = absolute_module(package, statement.module, statement.level)
    for alias in statement.names:
        if alias.name != "*":
            yield alias.asname or alias.name, f"{base}.{alias.name}" if base else alias.name


def rebinds(statement: ast.stmt) -> list[str]:
    """The names a simple statement binds otherwise than by an import (a plain, annotated,
    augmented or unpacking assignment, `def`, `class`) or unbinds (`del`); none for a compound
    statement (its blocks are statements of their own) or an annotation without a value."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [statement.name]
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AnnAssign | ast.AugAssign) and getattr(statement, "value", None) is not None:
        targets = [statement.target]
    elif isinstance(statement, ast.Delete):
        targets = list(statement.targets)
    names = []
    while targets:
        target = targets.pop()
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            targets.extend(target.elts)
        elif isinstance(target, ast.Starred):
            targets.append(target.value)
    return names


def rebound_imports(tree: ast.Module) -> dict[str, int]:
    """Names a module imports at module level and then rebinds there for good: name -> the last
    line of the statement that rebinds it. Python runs a module top to bottom, so what the name
    holds once the module has run (what a function reads, what another module imports) is its
    last binding. Only a rebinding that surely runs (a statement of the module's own body, not
    in an `if`, `try`, `with` or loop) counts; an import, even one that may not run, after it
    makes the name an import again (maybe SDPA: an over-approximation)."""
    imported: set[str] = set()
    rebound: dict[str, int] = {}
    for statement, conditional in module_statements(tree.body):
        if isinstance(statement, ast.Import | ast.ImportFrom):
            for name, _ in import_bindings(statement, ""):
                imported.add(name)
                rebound.pop(name, None)
        elif not conditional:
            for name in rebinds(statement):
                if name in imported:
                    rebound[name] = statement.end_lineno or statement.lineno
    return rebound
