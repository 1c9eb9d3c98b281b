"""The metadata contract (DL105) from the classes themselves: what a backend reads from its
metadata, and what a metadata class provides.

A metadata object provides its annotated fields, class attributes, properties and methods over
its bases, plus every `self.X = ...` assigned in its methods (the TRTLLM metadata sets its
runtime buffers in `__post_init__`). A backend reads `metadata.X` in its `forward*` methods.
Both are read once per class from the source with the standard library's `ast` and cached;
a class without source (a C extension) provides "unknown", which never produces a finding.
`inspect` finds a class's source by parsing its whole module, so each class is looked up once
(its lines and first line together), and the standard library's own bases (`typing.Generic`,
whose module is ~3,500 lines, `abc.ABC`, `object`) are not looked up at all: those lookups were
most of the first metadata check's ~0.1 s.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Iterator

_METADATA_PARAMETERS = ("metadata", "attn_metadata")
_NO_CONTRACT_MODULES = ("builtins", "typing", "abc")  # bases that read and assign no metadata


@functools.lru_cache(maxsize=256)
def provided(metadata_cls: type) -> frozenset[str] | None:
    names: set[str] = set()
    for klass in metadata_cls.__mro__:
        if klass is object:
            continue
        names.update(vars(klass))
        names.update(getattr(klass, "__annotations__", {}))
        assigned = _self_assignments(klass)
        if assigned is None:
            return None
        names.update(assigned)
    return frozenset(names)


@functools.lru_cache(maxsize=256)
def reads(backend_cls: type) -> tuple[tuple[str, int], ...]:
    """(attribute, line) of every unguarded `metadata.X` read in the backend's forward methods."""
    found: dict[str, int] = {}
    for klass in reversed(backend_cls.__mro__):
        located = _class_tree(klass)
        if located is None:
            continue
        tree, first_line = located
        for function in _forward_methods(tree):
            for attribute, line in _metadata_reads(function):
                found.setdefault(attribute, first_line + line - 1)
    return tuple(sorted(found.items(), key=lambda item: (item[1], item[0])))


def missing(backend_cls: type, metadata_cls: type) -> tuple[str, ...]:
    """Attributes `backend_cls` reads that `metadata_cls` does not provide."""
    offered = provided(metadata_cls)
    if offered is None:
        return ()
    return tuple(name for name, _ in reads(backend_cls) if name not in offered)


def _class_tree(klass: type) -> tuple[ast.ClassDef, int] | None:
    """The class statement's tree and its first line in the file."""
    if klass.__module__ in _NO_CONTRACT_MODULES:
        return None
    try:
        lines, first_line = inspect.getsourcelines(klass)
    except (OSError, TypeError):
        return None
    try:
        node = ast.parse(textwrap.dedent("".join(lines))).body[0]
    except (SyntaxError, IndexError):
        return None
    return (node, first_line) if isinstance(node, ast.ClassDef) else None


def _self_assignments(klass: type) -> set[str] | None:
    if klass.__module__ in _NO_CONTRACT_MODULES:
        return set()
    located = _class_tree(klass)
    if located is None:
        return set() if not _has_python_source(klass) else None
    tree = located[0]
    names: set[str] = set()
    for function in tree.body:
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                targets = _assignment_targets(node)
                names.update(
                    t.attr
                    for t in targets
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
                )
    return names


def _has_python_source(klass: type) -> bool:
    try:
        inspect.getsourcefile(klass)
    except TypeError:
        return False
    return True


def _assignment_targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign | ast.AugAssign):
        return [node.target]
    return []


def _forward_methods(tree: ast.ClassDef) -> Iterator[ast.FunctionDef]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("forward"):
            yield node


def _metadata_reads(function: ast.FunctionDef) -> Iterator[tuple[str, int]]:
    parameters = {a.arg for a in function.args.args + function.args.kwonlyargs} & set(_METADATA_PARAMETERS)
    if not parameters:
        return
    guarded = _guarded(function, parameters)
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id in parameters
            and node.attr not in guarded
        ):
            yield node.attr, node.lineno


def _guarded(function: ast.FunctionDef, parameters: set[str]) -> set[str]:
    """Attributes named in `hasattr(metadata, "X")` / `getattr(metadata, "X", ...)`: not contract reads."""
    names: set[str] = set()
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("hasattr", "getattr")
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in parameters
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            names.add(node.args[1].value)
    return names
