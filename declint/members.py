"""What a class provides and what its methods read from a metadata object, from `ast`.

Feeds the metadata contract (DL105): a metadata class provides its annotated fields, class
attributes, methods and properties, and every `self.X = ...` its methods assign (TensorRT-LLM's
TRTLLM metadata creates most runtime fields in `__post_init__` and `prepare`). A backend's reads
are the `metadata.X` / `attn_metadata.X` attribute loads in its methods that no `hasattr`,
`getattr(..., default)` or `isinstance` check guards: a read is guarded where the check is known
to hold (the `if` body of a true check, the `else` of a negated one, a `case` of `match metadata`
with a class pattern, and the rest of a block after an `if` that returns, raises, breaks or
continues when the check fails, or after a `match` whose other cases do), or where an
AttributeError falls back (a `try` with an `except AttributeError`, a `with suppress(AttributeError)`).

A check proves something of the object the name holds: rebinding the name (`metadata = other`,
`metadata: X = other`, `metadata += x`, `metadata, y = ...`, a `for` or `with ... as` target, a
walrus `(metadata := other)`) ends the narrowing for the reads after it; `isinstance(metadata :=
other, X)` narrows the new object. The rebinding counts where it runs on every path that goes on
(after an early exit, in the `else` of one, in both branches of an `if`, a `try` whose handlers
leave); one that may not run (one branch, a loop body, a `try` whose handler goes on, the body of a
`with`, whose manager may swallow what fails before it, a later operand of `and`/`or`) keeps the
guard: we prefer a missed finding to an invented one. An AttributeError fallback around the code
still catches what fails on the new object.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from declint.names import last_name

METADATA_PARAMETERS = frozenset({"metadata", "attn_metadata"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


# A class defining one of these may have any attribute: what it provides cannot be listed.
# `SET_BY_NAME` stands for a `setattr(self, name, ...)` whose name is not known statically (no
# identifier can be spelled so, so it never names a read).
SET_BY_NAME = "<setattr>"
DYNAMIC_ATTRIBUTES = frozenset({"__getattr__", "__getattribute__", SET_BY_NAME})


def provided_members(node: ast.ClassDef, constants: Mapping[str, ast.expr] | None = None) -> tuple[str, ...]:
    """`constants`: the module's names bound to a value, for a loop over one
    (`for name in _RUNTIME_FIELDS: setattr(self, name, None)`)."""
    names: set[str] = set()
    for statement in node.body:
        if isinstance(statement, _FUNCTIONS):
            names.add(statement.name)
            names.update(_self_assignments(statement, constants or {}))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names.add(statement.target.id)
        elif isinstance(statement, ast.Assign):
            names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
    return tuple(sorted(names))


def method_names(node: ast.ClassDef) -> tuple[str, ...]:
    return tuple(sorted(s.name for s in node.body if isinstance(s, _FUNCTIONS)))


def _self_assignments(
    function: ast.FunctionDef | ast.AsyncFunctionDef, constants: Mapping[str, ast.expr]
) -> Iterator[str]:
    parameters = [*function.args.posonlyargs, *function.args.args]  # `def prepare(self, /)` too
    if not parameters:
        return
    self_name = parameters[0].arg
    looped = _loop_constants(function, constants)
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
        if isinstance(inner, ast.Call) and _is_setattr(inner) and len(inner.args) >= 2:
            owner, name = inner.args[0], inner.args[1]
            if isinstance(owner, ast.Name) and owner.id == self_name:
                yield from _set_names(name, looped)
        elif isinstance(inner, ast.Call) and _is_bound_setattr(inner, self_name) and len(inner.args) >= 2:
            yield from _set_names(inner.args[0], looped)


def _set_names(name: ast.expr, looped: dict[str, tuple[str, ...]]) -> Iterator[str]:
    """The attribute names a `setattr` sets: a constant, each constant a loop variable runs over
    (`for name in ("a", "b"): setattr(self, name, None)`), else `SET_BY_NAME` (any name)."""
    if isinstance(name, ast.Constant):
        yield str(name.value)
    elif isinstance(name, ast.Name) and name.id in looped:
        yield from looped[name.id]
    else:
        yield SET_BY_NAME


def _loop_constants(
    function: ast.FunctionDef | ast.AsyncFunctionDef, constants: Mapping[str, ast.expr]
) -> dict[str, tuple[str, ...]]:
    """Loop variables of the function that run over a literal tuple, list or set of strings, also
    one a module-level name holds (red-team 60: `for name in _RUNTIME_FIELDS` set anything)."""
    found: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            iterated = constants.get(node.iter.id, node.iter) if isinstance(node.iter, ast.Name) else node.iter
            values = iterated.elts if isinstance(iterated, ast.Tuple | ast.List | ast.Set) else []
            if values and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
                found[node.target.id] = tuple(str(v.value) for v in values if isinstance(v, ast.Constant))
    return found


def _is_setattr(call: ast.Call) -> bool:
    """`setattr(self, ...)`, or `object.__setattr__(self, ...)`: a frozen dataclass's only way to set a field."""
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr == "__setattr__" and isinstance(function.value, ast.Name) and function.value.id == "object"
    return _is_call_to(call, "setattr")


def _is_bound_setattr(call: ast.Call, self_name: str) -> bool:
    """`super().__setattr__(NAME, ...)` or `self.__setattr__(NAME, ...)`: the instance is implied."""
    function = call.func
    if not (isinstance(function, ast.Attribute) and function.attr == "__setattr__"):
        return False
    owner = function.value
    if isinstance(owner, ast.Name):
        return owner.id == self_name
    return isinstance(owner, ast.Call) and _is_call_to(owner, "super")


def _flatten(target: ast.expr) -> Iterator[ast.expr]:
    if isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _flatten(element)
    else:
        yield target


class MetadataRead(NamedTuple):
    """`parameter.attribute` read in `method`; positions as libcst counts them (0-based characters)."""

    method: str
    parameter: str
    annotation: str  # the parameter's annotation as written ("" if none)
    attribute: str
    line: int
    column: int
    end_line: int
    end_column: int


def metadata_reads(
    node: ast.ClassDef, lines: list[str], suppressors: frozenset[str] = frozenset()
) -> tuple[MetadataRead, ...]:
    """Unguarded reads of metadata parameters (by name, or annotated with a *Metadata type).
    `suppressors`: local names the module binds to `contextlib.suppress` under another name."""
    reads: list[MetadataRead] = []
    known = frozenset(_SUPPRESSOR + name for name in suppressors)
    for statement in node.body:
        if not isinstance(statement, _FUNCTIONS):
            continue
        for argument in (*statement.args.args, *statement.args.kwonlyargs):
            annotation = ast.unparse(argument.annotation) if argument.annotation is not None else ""
            if argument.arg not in METADATA_PARAMETERS and "Metadata" not in annotation:
                continue
            guarded = known | _walrus_marker(statement, argument.arg, lines)
            for attribute, where in _reads(statement, argument.arg, guarded):
                reads.append(
                    MetadataRead(statement.name, argument.arg, annotation, attribute, *_char_span(where, lines))
                )
    return tuple(reads)


def _walrus_marker(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, lines: list[str]) -> frozenset[str]:
    """`{_WALRUS}` where the function binds the name with a walrus somewhere, else empty: then
    no expression can rebind it, and `_past` and `_rebinds` need not look (most functions: it
    saves a walk of every expression's subtree at every level). Its text is looked at first."""
    if not any(":=" in line for line in lines[function.lineno - 1 : function.end_lineno]):
        return frozenset()
    walruses = (node for node in ast.walk(function) if isinstance(node, ast.NamedExpr))
    return frozenset({_WALRUS}) if any(_is_name(node.target, name) for node in walruses) else frozenset()


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
    if isinstance(node, ast.Try | ast.TryStar) and _falls_back(node.handlers):
        # The body's reads fail into a handler written for it: a fallback, as getattr's default is.
        yield from _branch(node.body, name, guarded | {_TRIED})
        for rest in (node.handlers, node.orelse, node.finalbody):
            yield from _branch(rest, name, guarded)
        return
    if _TRIED in guarded and isinstance(node, _DEFERRED):
        guarded = guarded - {_TRIED}  # run later, outside the try: its handler catches nothing there
    if isinstance(node, ast.With | ast.AsyncWith):
        yield from _with(node, name, guarded)
        return
    if isinstance(node, ast.Match) and _subject_place(node.subject, name) is not None:
        yield from _match(node, name, guarded)
        return
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute):
        # `metadata.x += 1` loads x before it stores it: a read, though its target is a Store.
        loaded = ast.copy_location(ast.Attribute(node.target.value, node.target.attr, ast.Load()), node.target)
        yield from _reads(loaded, name, guarded)
        yield from _reads(node.value, name, guarded)
        return
    if isinstance(node, ast.If | ast.IfExp | ast.While):
        yield from _reads(node.test, name, guarded)
        yield from _branch(node.body, name, _tested(node.test, name, True, guarded))
        # A while's else runs once its test is false, as an if's else does.
        yield from _branch(node.orelse, name, _tested(node.test, name, False, guarded))
        return
    if isinstance(node, ast.BoolOp):
        # Each operand is evaluated only when the ones before it were true (`and`) or false (`or`).
        current, truth = guarded, isinstance(node.op, ast.And)
        for value in node.values:
            yield from _reads(value, name, current)
            current = _tested(value, name, truth, current)
        return
    if isinstance(node, ast.For | ast.AsyncFor):
        yield from _for(node, name, guarded)
        return
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
        if isinstance(node.ctx, ast.Load) and node.attr not in guarded and not guarded & _EVERYTHING:
            yield node.attr, node
        return
    if isinstance(node, ast.Call) and _is_call_to(node, "getattr") and len(node.args) == 2:
        target, attribute = node.args
        if isinstance(target, ast.Name) and target.id == name and isinstance(attribute, ast.Constant):
            if str(attribute.value) not in guarded and not guarded & _EVERYTHING:
                yield str(attribute.value), node  # getattr without a default raises like a plain read
            return
    ordered = _WALRUS in guarded and isinstance(node, ast.expr)
    for _, value in ast.iter_fields(node):
        yield from _branch(value, name, guarded)
        if ordered:  # an expression's fields are evaluated in order: `f((metadata := q), metadata.x)`
            guarded = _past(value, name, guarded)


def _for(node: ast.For | ast.AsyncFor, name: str, guarded: frozenset[str]) -> Iterator[tuple[str, ast.expr]]:
    """The iterable is evaluated first, then each item bound to the target, then the body runs.
    The `else` runs after the last item, or without any: the target may not have been bound."""
    yield from _reads(node.iter, name, guarded)
    guarded = _past(node.iter, name, guarded)
    yield from _reads(node.target, name, guarded)
    yield from _branch(node.body, name, _unnarrowed(guarded) if _stores(node.target, name) else guarded)
    yield from _branch(node.orelse, name, guarded)


def _with(node: ast.With | ast.AsyncWith, name: str, guarded: frozenset[str]) -> Iterator[tuple[str, ast.expr]]:
    """`with suppress(AttributeError):` falls back as a try with an AttributeError handler does.
    Items are entered in order, each inside the ones before it: a suppress guards the later ones too."""
    for item in node.items:
        yield from _reads(item.context_expr, name, guarded)
        guarded = _past(item.context_expr, name, guarded)
        if item.optional_vars is not None:
            yield from _reads(item.optional_vars, name, guarded)
            if _stores(item.optional_vars, name):
                guarded = _unnarrowed(guarded)
        if _suppresses_attribute_error(item.context_expr, guarded):
            guarded = guarded | {_TRIED}
    yield from _branch(node.body, name, guarded)


def _suppresses_attribute_error(context: ast.expr, guarded: frozenset[str]) -> bool:
    """`contextlib.suppress(..., AttributeError, ...)`, by any path to `suppress`, or under a name
    the module imports it as (`_SUPPRESSOR` entries of `guarded`). Not `suppress(Exception)`: as
    `except Exception`, it swallows whatever else fails there too."""
    if not isinstance(context, ast.Call):
        return False
    called = last_name(context.func)
    if called != "suppress" and _SUPPRESSOR + str(called) not in guarded:
        return False
    return any(last_name(argument) == "AttributeError" for argument in context.args)


def _match(node: ast.Match, name: str, guarded: frozenset[str]) -> Iterator[tuple[str, ast.expr]]:
    """`match metadata:`: a class pattern narrows as `isinstance` does, for its case's guard and body
    (and a guard proves what it checks, for the body). A later case learns nothing from earlier ones."""
    yield from _reads(node.subject, name, guarded)
    place = _subject_place(node.subject, name)
    for case in node.cases:
        proven = _matched_at(case.pattern, place)
        yield from _reads(case.pattern, name, guarded)
        if case.guard is not None:
            yield from _reads(case.guard, name, guarded | proven)
            proven = proven | _proven(case.guard, name, truth=True)
        yield from _branch(case.body, name, guarded | proven)


# Where the name is in a match's subject: its index in a tuple subject and the tuple's width
# (`match q, metadata:` is (1, 2)); width 0 for the subject itself (`match metadata:`).
_Place = tuple[int, int]
_WHOLE: _Place = (0, 0)


def _subject_place(subject: ast.expr, name: str) -> _Place | None:
    """The name's place in `subject` (see `_Place`); None when the subject does not hold it."""
    if _is_name(subject, name):
        return _WHOLE
    if isinstance(subject, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in subject.elts):
        for index, element in enumerate(subject.elts):
            if _is_name(element, name):
                return index, len(subject.elts)
    return None


def _matched_at(pattern: ast.pattern, place: _Place | None) -> frozenset[str]:
    """What `pattern` proves of the name at `place` of the subject (`case (_, OwnMetadata()):`)."""
    if place is None:
        return frozenset()
    if place == _WHOLE:
        return _matched(pattern)
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return _matched_at(pattern.pattern, place)
    if isinstance(pattern, ast.MatchOr):
        return _common([_matched_at(option, place) for option in pattern.patterns])
    if isinstance(pattern, ast.MatchSequence):
        element = _element_at(pattern.patterns, *place)
        return _matched(element) if element is not None else frozenset()
    return frozenset()


def _element_at(patterns: list[ast.pattern], index: int, width: int) -> ast.pattern | None:
    """The pattern a sequence pattern matches the subject's `index`-th of `width` items with:
    counted from the front before a star, from the end after it; None under the star, or when
    the pattern fits no sequence of that width."""
    stars = [i for i, each in enumerate(patterns) if isinstance(each, ast.MatchStar)]
    star = stars[0] if stars else len(patterns)
    after = len(patterns) - star - 1 if stars else 0
    if (len(patterns) != width and not stars) or star + after > width:
        return None
    if index < star:
        return patterns[index]
    if stars and index >= width - after:
        return patterns[len(patterns) - (width - index)]
    return None


def _matched(pattern: ast.pattern) -> frozenset[str]:
    """What the subject matching `pattern` proves ("*" for a class pattern, as for isinstance)."""
    if isinstance(pattern, ast.MatchClass):
        return frozenset({"*"})
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        return _matched(pattern.pattern)
    if isinstance(pattern, ast.MatchOr):
        return _common([_matched(option) for option in pattern.patterns])
    return frozenset()


def _after_match(node: ast.Match, name: str) -> frozenset[str]:
    """What holds after `match name:` (`case OwnMetadata(): pass`, `case _: return`), as after
    `if not isinstance(name, OwnMetadata): return`: what every case that falls through proves.
    Nothing unless some case matches whatever is left (a subject no case matches falls through
    having proved nothing), or when no case falls through (what follows never runs)."""
    if not any(case.guard is None and _irrefutable(case.pattern) for case in node.cases):
        return frozenset()
    through = [case for case in node.cases if not _exits(case.body)]
    place = _subject_place(node.subject, name)
    return _common([_case_proves(case, name, place) for case in through])


def _case_proves(case: ast.match_case, name: str, place: _Place | None) -> frozenset[str]:
    proven = _matched_at(case.pattern, place)
    return proven | _proven(case.guard, name, truth=True) if case.guard is not None else proven


def _irrefutable(pattern: ast.pattern) -> bool:
    """`case _:`, `case other:` (or an alternative of one): matches any subject."""
    if isinstance(pattern, ast.MatchAs):
        return pattern.pattern is None or _irrefutable(pattern.pattern)
    if isinstance(pattern, ast.MatchOr):
        return any(_irrefutable(option) for option in pattern.patterns)
    return False


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _branch(value: object, name: str, guarded: frozenset[str]) -> Iterator[tuple[str, ast.expr]]:
    """Reads in a field's value: a block of statements, one node, or a list of nodes."""
    children = _as_list(value)
    if children and isinstance(children[0], ast.stmt):
        yield from _block(children, name, guarded)
        return
    for child in children:
        yield from _reads(child, name, guarded)
        guarded = _past(child, name, guarded)  # the arguments of a call, the items of a tuple: in order


def _block(statements: list[ast.AST], name: str, guarded: frozenset[str]) -> Iterator[tuple[str, ast.expr]]:
    """A block's statements in order, each under what is known after the ones before it."""
    for statement in statements:
        yield from _reads(statement, name, guarded)
        guarded = _after(statement, name, guarded)


def _after(statement: ast.AST, name: str, guarded: frozenset[str]) -> frozenset[str]:
    """What is known after `statement`: an `if` that leaves the block when its check fails guards
    the rest, and so does a `match` of the name whose cases that fall through all narrow it; a
    rebinding on every path that goes on ends what was known of the object (see `_rebinds`)."""
    if isinstance(statement, ast.If):
        if _exits(statement.body):  # `if not isinstance(metadata := q, X): return`
            guarded = _tested(statement.test, name, False, guarded)
        elif _exits(statement.orelse):
            guarded = _tested(statement.test, name, True, guarded)
        else:
            guarded = _past(statement.test, name, guarded)
        # A branch rebinding the name after the check: the other one leaves, or rebinds it too.
        rebound = _goes_on_rebound([statement.body, statement.orelse], name, _WALRUS in guarded)
        return _unnarrowed(guarded) if rebound else guarded
    if isinstance(statement, ast.Match) and _subject_place(statement.subject, name) is not None:
        guarded = guarded | _after_match(statement, name)
    return _unnarrowed(guarded) if _rebinds(statement, name, _WALRUS in guarded) else guarded


def _rebinds(statement: ast.AST, name: str, walrus: bool) -> bool:
    """Is the name bound anew on every path that goes on past `statement`? Not by a loop's body
    or target (it may run no time), nor by the body of a `with` (its manager may swallow what
    fails before the rebinding): a rebinding that may not run keeps the guard. `walrus`: the
    function binds the name with a walrus somewhere (else no expression can; see `_walrus_marker`)."""

    def binds(node: ast.AST) -> bool:
        return walrus and _binds(node, name)

    if isinstance(statement, ast.Assign):
        return any(_stores(t, name) for t in statement.targets) or binds(statement.value)
    if isinstance(statement, ast.AnnAssign | ast.AugAssign):  # `metadata: X` alone binds nothing
        return statement.value is not None and (_stores(statement.target, name) or binds(statement.value))
    if isinstance(statement, ast.If):  # each branch leaves, rebinds, or runs after a walrus of the test
        branches = ((statement.body, True), (statement.orelse, False))
        return all(
            (walrus and _bound_when(statement.test, name, truth)) or _goes_on_rebound([b], name, walrus)
            for b, truth in branches
        )
    if isinstance(statement, ast.With | ast.AsyncWith):
        return any(_stores(i.optional_vars, name) or binds(i.context_expr) for i in statement.items)
    if isinstance(statement, ast.Try | ast.TryStar):
        handled = _goes_on_rebound([h.body for h in statement.handlers], name, walrus)
        went_on = _rebound(statement.body + statement.orelse, name, walrus)
        return _rebound(statement.finalbody, name, walrus) or (went_on and handled)
    if isinstance(statement, ast.Match):
        anything = any(case.guard is None and _irrefutable(case.pattern) for case in statement.cases)
        cases = [case.body for case in statement.cases]
        return binds(statement.subject) or (anything and _goes_on_rebound(cases, name, walrus))
    if isinstance(statement, ast.For | ast.AsyncFor):
        return binds(statement.iter)
    if isinstance(statement, ast.While):
        return binds(statement.test)
    # An expression statement, a return, an assert...: a walrus its expressions always evaluate.
    expressions = (child for child in ast.iter_child_nodes(statement) if isinstance(child, ast.expr))
    return walrus and any(_binds(child, name) for child in expressions)


def _goes_on_rebound(blocks: list[list[ast.stmt]], name: str, walrus: bool) -> bool:
    """Does each of the alternative blocks leave, or rebind the name (for what follows them)?"""
    return all(_exits(block) or _rebound(block, name, walrus) for block in blocks)


def _rebound(block: list[ast.stmt], name: str, walrus: bool) -> bool:
    """Does the block, where it reaches its end, rebind the name?"""
    return any(_rebinds(statement, name, walrus) for statement in block)


def _binds(node: ast.AST, name: str) -> bool:
    """Does evaluating `node` always bind the name with a walrus (`(metadata := q)`, also in the
    first operand of `and`/`or` or the test of a conditional)? Not in a later operand or a branch
    (it may not run), a comprehension (it may run no time) or a lambda (it runs later, in its own scope)."""
    if isinstance(node, ast.NamedExpr):
        return _is_name(node.target, name) or _binds(node.value, name)
    if isinstance(node, ast.BoolOp):
        return _binds(node.values[0], name)
    if isinstance(node, ast.IfExp):
        return _binds(node.test, name) or (_binds(node.body, name) and _binds(node.orelse, name))
    if isinstance(node, _UNSURE):
        return False
    return any(_binds(child, name) for child in ast.iter_child_nodes(node))


_UNSURE = (ast.stmt, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _stores(target: ast.expr | None, name: str) -> bool:
    """Does assigning to `target` bind the name (`metadata`, `metadata, y`, `[y, (*metadata, z)]`)?"""
    if target is None:
        return False
    return any(_is_name(t.value if isinstance(t, ast.Starred) else t, name) for t in _flatten(target))


def _past(value: object, name: str, guarded: frozenset[str]) -> frozenset[str]:
    """What is known after evaluating `value` (a node or a list of them): nothing of the object the
    name held if a walrus there rebinds it."""
    if _WALRUS not in guarded:
        return guarded
    return _unnarrowed(guarded) if any(_binds(child, name) for child in _as_list(value)) else guarded


def _tested(test: ast.expr, name: str, truth: bool, guarded: frozenset[str]) -> frozenset[str]:
    """What is known where `test` evaluated to `truth`: a walrus it evaluated then rebound the
    name, before the checks that come after it proved what they prove (`_proven`)."""
    walrus = _WALRUS in guarded
    rebound = walrus and _bound_when(test, name, truth)
    return (_unnarrowed(guarded) if rebound else guarded) | _proven(test, name, truth, walrus)


def _bound_when(test: ast.expr, name: str, truth: bool) -> bool:
    """Did `test`, evaluating to `truth`, bind the name with a walrus? Every operand of an `and`
    that was true (of an `or` that was false) was evaluated; otherwise only what always is."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _bound_when(test.operand, name, not truth)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == truth:
        return any(_bound_when(value, name, truth) for value in test.values)
    return _binds(test, name)


def _unnarrowed(guarded: frozenset[str]) -> frozenset[str]:
    """`guarded` less what it proved of the object the name held (its attributes, "*"): the name
    holds another one now. A fallback around the code (`_TRIED`) catches what fails on that one too;
    the other markers say nothing of the object."""
    return frozenset(entry for entry in guarded if entry in _MARKERS or entry.startswith(_SUPPRESSOR))


# The guard a `try` with an AttributeError fallback gives its body (see `_falls_back`), apart from
# "*" (an isinstance check proves every attribute): code defined there and run later drops it.
_TRIED = "*try"
# Carried in `guarded` beside attribute names (no identifier starts with it): a name the module
# binds to contextlib.suppress (`from contextlib import suppress as ignored`).
_SUPPRESSOR = "*suppress:"
_EVERYTHING = frozenset({"*", _TRIED})
# Carried where the function binds the name with a walrus (see `_walrus_marker`).
_WALRUS = "*walrus"
_MARKERS = frozenset({_TRIED, _WALRUS})
# A lambda or function defined in the try may run after it (a generator expression is most often
# consumed where it is written, `tuple(m.x for ...)`: still guarded; red-team 51).
_DEFERRED = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)


def _falls_back(handlers: list[ast.ExceptHandler]) -> bool:
    """Does the first handler catching `AttributeError` (by that name, also `builtins.`, or in a
    tuple) fall back? Not a bare `except` or `except Exception`, which catch whatever else fails
    there too, nor one that raises again on every path (the forward fails all the same; red-team
    49, 51); a later handler never sees the error."""
    for handler in handlers:
        caught = handler.type
        names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught is not None else []
        if any(last_name(n) == "AttributeError" for n in names):
            return not _exits(handler.body, (ast.Raise,))
    return False


_LEAVING: tuple[type[ast.stmt], ...] = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def _exits(block: list[ast.stmt], kinds: tuple[type[ast.stmt], ...] = _LEAVING) -> bool:
    """Does the block end in one of `kinds` on every path (default: it always leaves the
    enclosing one, by return, raise, break or continue)?"""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ast.If):
        return _exits(last.body, kinds) and _exits(last.orelse, kinds)
    return isinstance(last, kinds)


def _as_list(value: object) -> list[ast.AST]:
    if isinstance(value, list):
        return [item for item in value if isinstance(item, ast.AST)]
    return [value] if isinstance(value, ast.AST) else []


def _proven(test: ast.expr, name: str, truth: bool, walrus: bool = True) -> frozenset[str]:
    """Attributes of `name` that `test` evaluating to `truth` proves present ("*": all of them,
    `isinstance` narrowed it to another class whose reads are that class's business). `walrus`:
    the test may rebind the name (see `_walrus_marker`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _proven(test.operand, name, not truth, walrus)
    if isinstance(test, ast.BoolOp):
        parts = [_proven(value, name, truth, walrus) for value in test.values]
        if isinstance(test.op, ast.And) == truth:  # every operand had the value `truth`
            # What the operands before the last one rebinding the name proved is of the old object.
            rebound = [i for i, value in enumerate(test.values) if walrus and _bound_when(value, name, truth)]
            return frozenset().union(*parts[rebound[-1] if rebound else 0 :])
        return _common(parts)  # some operand did, which one is unknown (the last evaluated: no rebinding after it)
    if isinstance(test, ast.NamedExpr):
        # `(metadata := q)` tests the new object, not a check of it.
        return frozenset() if _is_name(test.target, name) else _proven(test.value, name, truth, walrus)
    if isinstance(test, ast.Call):
        return _probe(test, name, truth)
    if isinstance(test, ast.Compare):
        return _compared(test, name, truth)
    return frozenset()


def _probe(call: ast.Call, name: str, truth: bool) -> frozenset[str]:
    """hasattr(name, "x") and isinstance(name, ...) prove presence when true; getattr(name, "x",
    default) when true, and also when false if its default is truthy (a missing x gives the default)."""
    if not call.args or not _checks(call.args[0], name):
        return frozenset()
    if _is_call_to(call, "isinstance"):
        return frozenset({"*"}) if truth else frozenset()
    attribute = call.args[1] if len(call.args) >= 2 else None
    if not isinstance(attribute, ast.Constant):
        return frozenset()
    if _is_call_to(call, "hasattr") and len(call.args) == 2:
        return frozenset({str(attribute.value)}) if truth else frozenset()
    if _is_call_to(call, "getattr") and len(call.args) == 3:
        default = call.args[2]
        truthy = isinstance(default, ast.Constant) and bool(default.value)
        return frozenset({str(attribute.value)}) if truth or truthy else frozenset()
    return frozenset()


def _checks(argument: ast.expr, name: str) -> bool:
    """Is `argument` the name, or a walrus binding it (`isinstance(metadata := q, X)` checks the new object)?"""
    return _is_name(argument, name) or (isinstance(argument, ast.NamedExpr) and _is_name(argument.target, name))


def _compared(test: ast.Compare, name: str, truth: bool) -> frozenset[str]:
    """`getattr(name, "x", None) is None` proves x when false; any other comparison of a getattr
    with a default, `getattr(name, "x", 1) > 1` or `... is not None`, when true."""
    operands = [_unwrapped(operand) for operand in (test.left, *test.comparators)]
    getattrs = [o for o in operands if isinstance(o, ast.Call) and _is_call_to(o, "getattr") and len(o.args) == 3]
    if len(test.ops) == 1 and isinstance(test.ops[0], ast.Is | ast.Eq) and _is_none(test.comparators[0]):
        getattrs = [call for call in getattrs if _is_none(call.args[2])] if not truth else []
    elif not truth:
        return frozenset()
    return frozenset().union(*(_probe(call, name, truth=True) for call in getattrs))


def _unwrapped(node: ast.expr) -> ast.expr:
    """`(layout := getattr(...))` tests what it assigns."""
    return node.value if isinstance(node, ast.NamedExpr) else node


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _common(parts: list[frozenset[str]]) -> frozenset[str]:
    """What every part proves, "*" standing for everything."""
    narrowing = [part for part in parts if "*" not in part]
    if not narrowing:
        return frozenset({"*"}) if parts else frozenset()
    return frozenset.intersection(*narrowing)


def _is_call_to(call: ast.Call, name: str) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == name
