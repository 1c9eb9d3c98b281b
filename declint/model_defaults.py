"""The attention backend a model's `get_model_defaults` picks, read with `ast` (`declint table`).

TensorRT-LLM applies what `get_model_defaults(llm_args)` returns to the settings a user left
unset, so its `attn_backend` is the backend a model's encoders get by default. The method is
read, never run: each `return` gives a dict, written in place (`{...}`, `dict(...)`, also
unpacking `**{...}` or the parent's `**super().get_model_defaults(...)`) or held by a local name
that the method's own statements bind and fill (`d["attn_backend"] = ...`, `d.update(...)`,
`d |= {...}`, `d.pop(...)`). A dict of the method's own without the key replaces the parent's
defaults: UNSET, the `default-backend` option applies. Where the value depends on what runs (a
call, returns that disagree, a write under an `if`, a loop or a `try`), the answer is UNKNOWN
rather than a guess: the table must not claim a default the model may not use.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_FUNCTIONS, ast.Lambda, ast.ClassDef)
_MAX_DEPTH = 8  # names and `**` unpacking followed, at most (a dict built from itself ends there)
# The value of a default known only at run time: neither a string literal nor a name, so that
# `facts` records it as such (as it does a call or `a if c else b` the method returns).
UNKNOWN: ast.expr = ast.Constant(value=...)
# A method that returns a dict of its own without the key (no `**super()...` in it), or pops it:
# the parent's default is replaced by none, so the `default-backend` option applies.
UNSET: ast.expr = ast.Constant(value=NotImplemented)

Function = ast.FunctionDef | ast.AsyncFunctionDef


def map_pairs(value: ast.expr) -> list[tuple[str | None, ast.expr]] | None:
    """(key, value) of a `{...}` or `dict(...)` map's entries, key None for an unpacked mapping
    (`**x`); entries whose key is not a string constant are left out; None for another shape."""
    if isinstance(value, ast.Dict):
        return [
            (None if key is None else str(key.value), item)
            for key, item in zip(value.keys, value.values, strict=True)
            if key is None or isinstance(key, ast.Constant)
        ]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        if len(value.args) > 1 or any(isinstance(arg, ast.Starred) for arg in value.args):
            return None
        # `dict(mapping, key=value)`: the mapping's entries, then the keywords, which win
        unpacked: list[tuple[str | None, ast.expr]] = [(None, arg) for arg in value.args]
        return unpacked + [(keyword.arg, keyword.value) for keyword in value.keywords]
    return None


def model_default_backend(node: ast.ClassDef, key: str = "attn_backend") -> ast.expr | None:
    """The expression `get_model_defaults` sets `key` to (a literal or a name when it can be
    read); None where it sets none, or the class defines no such method (its ancestors' then
    decide); UNKNOWN (or the unreadable expression) where only running it would tell."""
    method = next(
        (s for s in reversed(node.body) if isinstance(s, _FUNCTIONS) and s.name == "get_model_defaults"), None
    )
    if method is None:
        return None
    return _agreed([_value(method, ret.value, key, 0) if ret.value else None for ret in _returns(method)])


def _agreed(values: list[ast.expr | None]) -> ast.expr | None:
    """The value all of `values` are (None for none at all); UNKNOWN where they differ."""
    distinct = {ast.dump(value) if value is not None else "" for value in values}
    return UNKNOWN if len(distinct) > 1 else next(iter(values), None)


def _returns(method: Function) -> Iterator[ast.Return]:
    """The method's own returns (not those of a function or class defined in it)."""
    stack: list[ast.AST] = list(method.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        elif not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _value(method: Function, expr: ast.expr, key: str, depth: int) -> ast.expr | None:
    """`key` in the dict `expr` evaluates to, in `method`."""
    pairs = map_pairs(expr)
    if pairs is not None:
        value = _picked(method, pairs, key, depth)
        if value is None and all(name is not None for name, _ in pairs):
            return UNSET  # a dict of its own, without the key (red-team 61: the parent's was taken)
        return value
    if isinstance(expr, ast.Constant) and expr.value is None:
        return None  # `return None`: no defaults
    if isinstance(expr, ast.IfExp) and depth < _MAX_DEPTH:  # both arms may be the same dict's
        return _agreed([_value(method, arm, key, depth + 1) for arm in (expr.body, expr.orelse)])
    if _is_super_defaults(expr):
        return None  # the parent's: the table asks the ancestors next
    if isinstance(expr, ast.Name) and depth < _MAX_DEPTH:
        return _local(method, expr.id, key, depth + 1)
    return UNKNOWN


def _picked(method: Function, pairs: list[tuple[str | None, ast.expr]], key: str, depth: int) -> ast.expr | None:
    """The last entry for `key` wins, as in a dict display; one unpacked may hold it too."""
    value: ast.expr | None = None
    for name, item in pairs:
        if name == key:
            value = item
        elif name is None:
            value = (_value(method, item, key, depth + 1) if depth < _MAX_DEPTH else UNKNOWN) or value
    return value


def _is_super_defaults(expr: ast.expr) -> bool:
    """`super().get_model_defaults(...)`."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "get_model_defaults"
        and isinstance(expr.func.value, ast.Call)
        and isinstance(expr.func.value.func, ast.Name)
        and expr.func.value.func.id == "super"
    )


def _local(method: Function, name: str, key: str, depth: int) -> ast.expr | None:
    """`key` in the dict the local `name` holds, from the method's statements in order. A write
    nested in an `if`, a loop or a `try` may not run: the value is then unknown. A name the
    method never binds (a parameter, a global) holds an unknown dict."""
    value: ast.expr | None = UNKNOWN
    for statement in method.body:
        if isinstance(statement, ast.With | ast.AsyncWith):  # its body runs (or raises: no return)
            writes = [w for s in statement.body for w in _writes(method, s, name, key, depth)]
        elif nested := list(_inner(statement)):
            writes = [UNKNOWN] if any(_writes(method, s, name, key, depth) for s in nested) else []
        else:
            writes = _writes(method, statement, name, key, depth)
        value = writes[-1] if writes else value
    return value


def _inner(statement: ast.stmt) -> Iterator[ast.stmt]:
    """The statements nested in a compound statement (a nested function's too: it may run or not)."""
    stack: list[ast.AST] = list(ast.iter_child_nodes(statement))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _writes(method: Function, statement: ast.stmt, name: str, key: str, depth: int) -> list[ast.expr | None]:
    """What `statement` sets `key` of `name`'s dict to: [] where it leaves it alone; a binding
    of `name` replaces the dict (and so its `key`)."""
    if isinstance(statement, ast.Assign | ast.AnnAssign) and statement.value is not None:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return [_value(method, statement.value, key, depth)]
        return [statement.value] if any(_is_item(t, name, key) for t in targets) else []
    pairs: list[tuple[str | None, ast.expr]] = []
    if (
        isinstance(statement, ast.AugAssign)
        and isinstance(statement.op, ast.BitOr)
        and _is_name(statement.target, name)
    ):
        pairs = [(None, statement.value)]  # `d |= {...}`
    elif isinstance(statement, ast.Expr) and _pops(statement.value, name, key):
        return [UNSET]  # `d.pop("attn_backend")`: the key is gone
    elif isinstance(statement, ast.Expr) and (call := _update(statement.value, name)) is not None:
        pairs = [(None, arg) for arg in call.args] + [(k.arg, k.value) for k in call.keywords]
    value = _picked(method, pairs, key, depth)
    return [value] if value is not None else []


def _is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def _is_item(target: ast.expr, name: str, key: str) -> bool:
    """`name["key"]` as an assignment target."""
    return (
        isinstance(target, ast.Subscript)
        and _is_name(target.value, name)
        and isinstance(target.slice, ast.Constant)
        and target.slice.value == key
    )


def _pops(expr: ast.expr, name: str, key: str) -> bool:
    """`name.pop("key", ...)`."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr == "pop"
        and _is_name(expr.func.value, name)
        and bool(expr.args)
        and isinstance(expr.args[0], ast.Constant)
        and expr.args[0].value == key
    )


def _update(expr: ast.expr, name: str) -> ast.Call | None:
    """`name.update(...)`, if `expr` is that call."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "update":
        return expr if _is_name(expr.func.value, name) else None
    return None
