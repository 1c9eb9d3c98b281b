"""What a class provides and what its methods read from a metadata object, from `ast`.

Feeds the metadata contract (DL105): a metadata class provides its annotated fields, class
attributes, methods and properties, and every `self.X = ...` its methods assign (TensorRT-LLM's
TRTLLM metadata creates most runtime fields in `__post_init__` and `prepare`). A backend's reads
are the `metadata.X` / `attn_metadata.X` attribute loads in its methods that no `hasattr`,
`getattr(..., default)` or `isinstance` check guards.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

METADATA_PARAMETERS = frozenset({"metadata", "attn_metadata"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def provided_members(node: ast.ClassDef) -> tuple[str, ...]:
    names: set[str] = set()
    for statement in node.body:
        if isinstance(statement, _FUNCTIONS):
            names.add(statement.name)
            names.update(_self_assignments(statement))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names.add(statement.target.id)
        elif isinstance(statement, ast.Assign):
            names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
    return tuple(sorted(names))


def method_names(node: ast.ClassDef) -> tuple[str, ...]:
    return tuple(sorted(s.name for s in node.body if isinstance(s, _FUNCTIONS)))


def _self_assignments(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[str]:
    if not function.args.args:
        return
    self_name = function.args.args[0].arg
    for inner in ast.walk(function):
        targets: list[ast.expr] = []
        if isinstance(inner, ast.Assign):
            targets = [t for target in inner.targets for t in _flatten(target)]
        elif isinstance(inner, ast.AnnAssign | ast.AugAssign):
            targets = [inner.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                if target.value.id == self_name:
                    yield target.attr
        if isinstance(inner, ast.Call) and _is_call_to(inner, "setattr") and len(inner.args) >= 2:
            owner, name = inner.args[0], inner.args[1]
            if isinstance(owner, ast.Name) and owner.id == self_name and isinstance(name, ast.Constant):
                yield str(name.value)


def _flatten(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _flatten(element)
    else:
        yield target


@dataclass(frozen=True)
class MetadataRead:
    """`parameter.attribute` read in `method`; positions as libcst counts them (0-based characters)."""

    method: str
    parameter: str
    annotation: str  # the parameter's annotation as written ("" if none)
    attribute: str
    line: int
    column: int
    end_line: int
    end_column: int


def metadata_reads(node: ast.ClassDef, lines: list[str]) -> tuple[MetadataRead, ...]:
    """Unguarded reads of metadata parameters (by name, or annotated with a *Metadata type)."""
    reads: list[MetadataRead] = []
    for statement in node.body:
        if not isinstance(statement, _FUNCTIONS):
            continue
        for argument in (*statement.args.args, *statement.args.kwonlyargs):
            annotation = ast.unparse(argument.annotation) if argument.annotation is not None else ""
            if argument.arg not in METADATA_PARAMETERS and "Metadata" not in annotation:
                continue
            for attribute, where in _reads(statement, argument.arg, guarded=frozenset()):
                reads.append(
                    MetadataRead(statement.name, argument.arg, annotation, attribute, *_char_span(where, lines))
                )
    return tuple(reads)


def _char_span(node: ast.expr, lines: list[str]) -> tuple[int, int, int, int]:
    """ast columns are UTF-8 byte offsets; findings use character columns."""

    def column(line: int, offset: int) -> int:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace"))

    end_line = node.end_lineno or node.lineno
    return (
        node.lineno,
        column(node.lineno, node.col_offset),
        end_line,
        column(end_line, node.end_col_offset or node.col_offset),
    )


def _reads(node: ast.AST, name: str, guarded: frozenset[str]) -> Iterator[tuple[str, ast.expr]]:
    if isinstance(node, ast.If | ast.IfExp | ast.While):
        inner_guard = guarded | _guards(node.test, name)
        yield from _reads(node.test, name, guarded)
        for child in _as_list(node.body):
            yield from _reads(child, name, inner_guard)
        for child in _as_list(node.orelse):
            yield from _reads(child, name, guarded)
        return
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        current = guarded
        for value in node.values:
            yield from _reads(value, name, current)
            current = current | _guards(value, name)
        return
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
        if isinstance(node.ctx, ast.Load) and node.attr not in guarded and "*" not in guarded:
            yield node.attr, node
        return
    if isinstance(node, ast.Call) and _is_call_to(node, "getattr") and len(node.args) == 2:
        target, attribute = node.args
        if isinstance(target, ast.Name) and target.id == name and isinstance(attribute, ast.Constant):
            if str(attribute.value) not in guarded and "*" not in guarded:
                yield str(attribute.value), node  # getattr without a default raises like a plain read
            return
    for child in ast.iter_child_nodes(node):
        yield from _reads(child, name, guarded)


def _as_list(value: object) -> list[ast.AST]:
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, ast.AST) else []


def _guards(test: ast.expr, name: str) -> frozenset[str]:
    """Attributes a true `test` proves present: hasattr(name, "x"); isinstance(name, ...) proves all."""
    found: set[str] = set()
    for inner in ast.walk(test):
        if not isinstance(inner, ast.Call) or not inner.args:
            continue
        target = inner.args[0]
        if not (isinstance(target, ast.Name) and target.id == name):
            continue
        attribute = inner.args[1] if len(inner.args) >= 2 else None
        probes = (_is_call_to(inner, "hasattr") and len(inner.args) == 2) or (
            _is_call_to(inner, "getattr") and len(inner.args) == 3
        )
        if probes and isinstance(attribute, ast.Constant):
            found.add(str(attribute.value))
        elif _is_call_to(inner, "isinstance"):
            found.add("*")  # narrowed to another class: reads are that class's business
    return frozenset(found)


def _is_call_to(call: ast.Call, name: str) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == name


def model_default_backend(node: ast.ClassDef, key: str = "attn_backend") -> ast.expr | None:
    """The `attn_backend` value a `get_model_defaults` method returns (a literal or a name), if any."""
    for statement in node.body:
        if isinstance(statement, _FUNCTIONS) and statement.name == "get_model_defaults":
            for inner in ast.walk(statement):
                if isinstance(inner, ast.Dict):
                    for k, v in zip(inner.keys, inner.values, strict=True):
                        if isinstance(k, ast.Constant) and k.value == key:
                            return v
    return None
