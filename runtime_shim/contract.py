"""The metadata contract (DL105) from the classes themselves: what a backend reads from its
metadata, and what a metadata class provides.

A metadata object provides its annotated fields, class attributes, properties and methods over
its bases, plus every `self.X = ...` assigned in its methods (the TRTLLM metadata sets its
runtime buffers in `__post_init__`). A backend reads `metadata.X` / `attn_metadata.X` in its
`forward*` methods, and any annotated metadata parameter's attributes, where no check guards
them, exactly as the static DL105 reads them (`declint.members`, one implementation: the shim
and the linter agree on which reads count and on their guards). Both are read once
per class from the source with the standard library's `ast` and cached;
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

from declint.members import DYNAMIC_ATTRIBUTES, METADATA_PARAMETERS, metadata_reads

_NO_CONTRACT_MODULES = ("builtins", "typing", "abc")  # bases that read and assign no metadata


@functools.lru_cache(maxsize=256)
def provided(metadata_cls: type, metadata_base: str = "AttentionMetadata") -> frozenset[str] | None:
    """What an instance of `metadata_cls` has, over its bases; None when that cannot be known, as
    the static DL105 reads it (`ProjectIndex.provided`): a class of its own (not the metadata base,
    nor what is above it) defines `__getattr__`, or a class's source cannot be read."""
    names: set[str] = set()
    base = next((klass for klass in metadata_cls.__mro__ if _named(klass, metadata_base)), None)
    shared = set(base.__mro__) if base is not None else {object}
    for klass in metadata_cls.__mro__:
        if klass is object:
            continue
        if klass not in shared and not DYNAMIC_ATTRIBUTES.isdisjoint(vars(klass)):
            return None
        names.update(vars(klass))
        names.update(getattr(klass, "__annotations__", {}))
        assigned = _self_assignments(klass)
        if assigned is None:
            return None
        names.update(assigned)
    return frozenset(names)


def _named(klass: type, name: str) -> bool:
    """`klass` is the class `name` names: its own name, or a dotted path ending in it, as declint's
    options name classes (`AttentionMetadata`, `tensorrt_llm._torch.attention_backend.interface.AttentionMetadata`)."""
    dotted = f"{klass.__module__}.{klass.__qualname__}"
    return name in (klass.__name__, dotted) or dotted.endswith("." + name)


@functools.lru_cache(maxsize=256)
def reads(backend_cls: type) -> tuple[tuple[str, int], ...]:
    """(attribute, line) of every unguarded read the static DL105 judges: `metadata.X` /
    `attn_metadata.X` in `forward*` methods, and `p.X` of a parameter annotated with a metadata
    class in any method. Checked against the object the engine passes, whatever the annotation."""
    found: dict[str, int] = {}
    for _, attribute, line in _judged_reads(backend_cls):
        found.setdefault(attribute, line)
    return tuple(sorted(found.items(), key=lambda item: (item[1], item[0])))


def location(backend_cls: type, attribute: str) -> str:
    """`path:line` of the read of `attribute` that `reads` reports, for a violation's record."""
    for klass, read, line in _judged_reads(backend_cls):
        if read == attribute:
            return f"{inspect.getsourcefile(klass)}:{line}"
    return ""


def _judged_reads(backend_cls: type) -> Iterator[tuple[type, str, int]]:
    """(class, attribute, line in its file) of each judged read, the farthest base's first."""
    for klass in reversed(backend_cls.__mro__):
        located = _class_tree(klass)
        if located is None:
            continue
        tree, first_line, lines = located
        for read in metadata_reads(tree, lines):
            in_forward = read.method.startswith("forward") and read.parameter in METADATA_PARAMETERS
            if in_forward or "Metadata" in read.annotation:
                yield klass, read.attribute, first_line + read.line - 1


def missing(backend_cls: type, metadata_cls: type, metadata_base: str = "AttentionMetadata") -> tuple[str, ...]:
    """Attributes `backend_cls` reads that `metadata_cls` does not provide."""
    offered = provided(metadata_cls, metadata_base)
    if offered is None:
        return ()
    return tuple(name for name, _ in reads(backend_cls) if name not in offered)


def _class_tree(klass: type) -> tuple[ast.ClassDef, int, list[str]] | None:
    """The class statement's tree, its first line in the file, and its (dedented) lines."""
    if klass.__module__ in _NO_CONTRACT_MODULES:
        return None
    try:
        lines, first_line = inspect.getsourcelines(klass)
    except (OSError, TypeError):
        return None
    source = textwrap.dedent("".join(lines))
    try:
        node = ast.parse(source).body[0]
    except (SyntaxError, IndexError):
        return None
    return (node, first_line, source.splitlines()) if isinstance(node, ast.ClassDef) else None


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
