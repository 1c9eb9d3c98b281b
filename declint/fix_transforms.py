"""The libcst transforms behind declint's fixes (see `declint.fixes` for the kinds and how they are applied).

Kept apart from `declint.fixes` so that reporting and `check` import libcst only when a fix is
actually previewed or applied.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider, WhitespaceInclusivePositionProvider

from declint.engine import parse_module
from declint.source import SourceFile
from declint.suppressions import strip_suppression_codes
from declint.types import Fix

_ONE_LINE_LIMIT = 100


def parse(source: SourceFile) -> cst.Module:
    """The module as the check workers parse it: previews reuse their trees, so it is one parse."""
    return parse_module(source)


# ---- the transforms ---------------------------------------------------------------------------
@dataclass
class Applied:
    text: str
    applied: list[Fix] = field(default_factory=list)
    not_applied: list[Fix] = field(default_factory=list)


def apply_fixes(
    source: SourceFile,
    fixes: Sequence[Fix],
    module: str,
    prepared: Prepared | None = None,
) -> Applied:
    """One pass over the module applying every fix it can; the text is unchanged when none applies.

    `prepared`: `prepare(tree)` of the source already parsed (left as it is: libcst transforms
    build new nodes), shared by the previews of one file's fixes. Its positions are
    resolved once, not once per fix; the pass skips every subtree no fix targets; and only the
    top-level statements a fix changed are rendered again. One preview then costs about its own
    statement instead of the whole module: 250 fixes in one module took longer than the 60 s
    file timeout.
    """
    prepared = prepared if prepared is not None else prepare(parse(source))
    tree = prepared.tree
    # A declaration needs its marker: importable from a known module, or already bound here.
    usable = [f for f in fixes if f.kind != "add-declaration-entries" or f.args[2] or _bound(tree, f.args[1])]
    transformer = _FixTransformer(usable)
    new_tree = prepared.wrapper.visit(transformer)
    for name, home in sorted(transformer.imports):
        new_tree = _ensure_import(new_tree, name, home, module, source.rel.endswith("__init__.py"))
    applied = [fix for fix in fixes if fix in transformer.applied]
    return Applied(prepared.render(new_tree), applied, [fix for fix in fixes if fix not in transformer.applied])


@dataclass
class Prepared:
    """A parsed module, ready for many fixes: positions resolved once, each top-level statement's text."""

    tree: cst.Module
    wrapper: MetadataWrapper
    prefix: str  # the header's text
    pieces: list[str] | None  # each top-level statement's text; None: they do not add up to the module's
    suffix: str

    def render(self, new: cst.Module) -> str:
        """`new.code`, rendering again only the top-level statements that are not `tree`'s own."""
        old = self.tree
        if self.pieces is None or len(new.body) != len(old.body) or not _same_frame(old, new):
            return new.code
        parts = zip(self.pieces, old.body, new.body, strict=True)
        body = "".join(text if after is before else new.code_for_node(after) for text, before, after in parts)
        return self.prefix + body + self.suffix


def prepare(tree: cst.Module) -> Prepared:
    """`tree` for `apply_fixes` (as is, unsafe_skip_copy: a parsed tree holds each node once)."""
    code = tree.code
    prefix = "".join(tree.code_for_node(line) for line in tree.header)
    pieces: list[str] | None = [tree.code_for_node(statement) for statement in tree.body]
    body = "".join(pieces or ())
    if not code.startswith(prefix + body):  # e.g. no newline at the end: the whole module is rendered
        pieces = None
    suffix = code[len(prefix) + len(body) :] if pieces is not None else ""
    return Prepared(tree, MetadataWrapper(tree, unsafe_skip_copy=True), prefix, pieces, suffix)


def _same_frame(old: cst.Module, new: cst.Module) -> bool:
    """Everything of `new` but its statements is `old`'s."""
    return (
        len(old.header) == len(new.header)
        and all(a is b for a, b in zip(old.header, new.header, strict=True))
        and len(old.footer) == len(new.footer)
        and all(a is b for a, b in zip(old.footer, new.footer, strict=True))
        and (old.encoding, old.default_indent, old.default_newline, old.has_trailing_newline)
        == (new.encoding, new.default_indent, new.default_newline, new.has_trailing_newline)
    )


class _FixTransformer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider, WhitespaceInclusivePositionProvider)

    def __init__(self, fixes: Iterable[Fix]) -> None:
        super().__init__()
        self.pending: dict[tuple[str, int, int], list[Fix]] = {}
        for fix in fixes:
            self.pending.setdefault((fix.kind, fix.target.line, fix.target.column), []).append(fix)
        self.applied: set[Fix] = set()
        self.imports: set[tuple[str, str]] = set()
        self.indent_unit = "    "
        self._lines = sorted({line for _, line, _ in self.pending})

    def on_visit(self, node: cst.CSTNode) -> bool:
        """Descend only into a node whose lines, with the whitespace and comments it owns, hold a
        fix's target: no other node can change."""
        span = self.get_metadata(WhitespaceInclusivePositionProvider, node, None)
        if isinstance(span, CodeRange):
            first = bisect_left(self._lines, span.start.line)
            if first == len(self._lines) or self._lines[first] > span.end.line:
                return False
        return super().on_visit(node)

    def _take(self, kind: str, node: cst.CSTNode) -> list[Fix]:
        if not self.pending:
            return []
        position = self.get_metadata(PositionProvider, node)
        assert isinstance(position, CodeRange)
        return self.pending.pop((kind, position.start.line, position.start.column), [])

    def visit_Module(self, node: cst.Module) -> bool:
        self.indent_unit = node.default_indent
        return True

    # replace-string
    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString) -> cst.BaseExpression:
        fixes = self._take("replace-string", original_node)
        value = updated_node.value
        prefix = updated_node.prefix
        if not fixes or not fixes[0].args[0].isidentifier() or set(prefix.lower()) & {"b", "f"}:
            return updated_node
        quote = updated_node.quote
        self.applied.update(fixes)
        return updated_node.with_changes(value=value[: len(prefix)] + quote + fixes[0].args[0] + quote)

    # remove-suppression-code
    def leave_TrailingWhitespace(
        self, original_node: cst.TrailingWhitespace, updated_node: cst.TrailingWhitespace
    ) -> cst.TrailingWhitespace:
        if original_node.comment is None or updated_node.comment is None:
            return updated_node
        new = self._strip_codes(original_node.comment, updated_node.comment)
        if new is None:
            return updated_node
        if new:
            return updated_node.with_changes(comment=cst.Comment(new))
        return updated_node.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)

    def leave_EmptyLine(
        self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine
    ) -> cst.EmptyLine | cst.RemovalSentinel:
        if original_node.comment is None or updated_node.comment is None:
            return updated_node
        new = self._strip_codes(original_node.comment, updated_node.comment)
        if new is None:
            return updated_node
        return updated_node.with_changes(comment=cst.Comment(new)) if new else cst.RemovalSentinel.REMOVE

    def _strip_codes(self, original: cst.Comment, updated: cst.Comment) -> str | None:
        fixes = self._take("remove-suppression-code", original)
        if not fixes:
            return None
        unused: dict[int, set[str]] = {}
        for fix in fixes:  # args: the code, and where its suppression starts in the comment
            unused.setdefault(int(fix.args[1]), set()).add(fix.args[0])
        new = strip_suppression_codes(updated.value, unused)
        if new is not None:
            self.applied.update(fixes)
        return new

    # add-declaration-entries
    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        fixes = self._take("add-declaration-entries", original_node.name)
        if not fixes:
            return updated_node
        attribute, marker, home = fixes[0].args[:3]
        entries: dict[str, cst.DictElement] = {}
        for fix in fixes:
            for element in _parse_entries(fix.args[3:]):
                key = element.key
                if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str):
                    entries.setdefault(key.evaluated_value, element)
        new_body = _declare(updated_node.body, attribute, entries, self.indent_unit)
        if new_body is None:
            return updated_node
        self.applied.update(fixes)
        self.imports.add((marker, home))
        return updated_node.with_changes(body=new_body)


def _parse_entries(sources: Sequence[str]) -> list[cst.DictElement]:
    parsed = cst.parse_expression("{" + ", ".join(sources) + "}")
    assert isinstance(parsed, cst.Dict)
    return [e for e in parsed.elements if isinstance(e, cst.DictElement)]


def _declare(
    body: cst.BaseSuite, attribute: str, entries: Mapping[str, cst.DictElement], unit: str
) -> cst.BaseSuite | None:
    if isinstance(body, cst.SimpleStatementSuite):  # `class X(Base): pass  # comment`
        # The comment stays on the `class` line, where line-based pragmas (type: ignore, noqa)
        # were written: the suite's trailing whitespace becomes the block's header.
        body = cst.IndentedBlock(header=body.trailing_whitespace, body=[cst.SimpleStatementLine(body=body.body)])
    if not isinstance(body, cst.IndentedBlock):
        return None
    statements = list(body.body)
    # The last assignment is the one the class keeps: entries added to an earlier one are dead.
    declared = [number for number, statement in enumerate(statements) if _assigns(statement, attribute)]
    if declared:
        return _extended(body, statements, declared[-1], attribute, entries)
    declaration = _new_declaration(attribute, list(entries.values()), unit)
    first = statements[0] if statements else None
    if isinstance(first, cst.SimpleStatementLine) and _is_lone_pass(statements):
        return body.with_changes(body=[declaration.with_changes(leading_lines=first.leading_lines)])
    at = 1 if statements and _is_docstring(statements[0]) else 0
    return body.with_changes(body=[*statements[:at], declaration, *statements[at:]])


def _extended(
    body: cst.IndentedBlock,
    statements: list[cst.BaseStatement],
    number: int,
    attribute: str,
    entries: Mapping[str, cst.DictElement],
) -> cst.BaseSuite | None:
    """`body` with the declaration at `number` given the `entries` it lacks; None when that is
    no lone `attribute = {...}` statement (nothing safe to edit)."""
    statement = statements[number]
    value = _declaration_value(statement, attribute)
    if not isinstance(value, cst.Dict) or not isinstance(statement, cst.SimpleStatementLine):
        return None
    present = {
        e.key.evaluated_value
        for e in value.elements
        if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
    }
    missing = [element for encoder, element in entries.items() if encoder not in present]
    small = statement.body[0]
    assert isinstance(small, cst.Assign | cst.AnnAssign)
    statements[number] = statement.with_changes(body=[small.with_changes(value=_append(value, missing))])
    return body.with_changes(body=statements)


def _assigns(statement: cst.BaseStatement, attribute: str) -> bool:
    """Whether the statement binds `attribute` (alone or beside other statements on its line)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == attribute for t in small.targets
        ):
            return True
        if isinstance(small, cst.AnnAssign) and small.value is not None:
            if isinstance(small.target, cst.Name) and small.target.value == attribute:
                return True
    return False


def _declaration_value(statement: cst.BaseStatement, attribute: str) -> cst.BaseExpression | None:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Name) and target.value == attribute:
            return small.value
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == attribute:
        return small.value
    return None


def _new_declaration(attribute: str, entries: list[cst.DictElement], unit: str) -> cst.SimpleStatementLine:
    codes = [cst.Module(body=[]).code_for_node(e.with_changes(comma=cst.MaybeSentinel.DEFAULT)) for e in entries]
    one_line = f"{attribute} = {{{', '.join(codes)}}}"
    if len(entries) == 1 and len(one_line) <= _ONE_LINE_LIMIT:
        text = one_line + "\n"
    else:
        text = f"{attribute} = {{\n" + "".join(f"{unit}{code},\n" for code in codes) + "}\n"
    statement = cst.parse_statement(text)
    assert isinstance(statement, cst.SimpleStatementLine)
    return statement


def _append(value: cst.Dict, new: list[cst.DictElement]) -> cst.Dict:
    if not new:
        return value
    elements = list(value.elements)
    if not elements:
        return value.with_changes(elements=_joined(new, cst.SimpleWhitespace(" ")))
    last = elements[-1]
    closing = value.rbrace.whitespace_before
    separator = _element_separator(value)
    if isinstance(closing, cst.ParenthesizedWhitespace) and separator is not None:
        # Multi-line: the old last line keeps its trailing comment, new entries go on lines of their own.
        plain = separator.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
        moved = separator.with_changes(first_line=closing.first_line, empty_lines=[])
        elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=moved))
        added = _joined(new, plain)
        added[-1] = added[-1].with_changes(comma=cst.Comma() if isinstance(last.comma, cst.Comma) else last.comma)
        rbrace = value.rbrace.with_changes(whitespace_before=closing.with_changes(first_line=cst.TrailingWhitespace()))
        return value.with_changes(elements=[*elements, *added], rbrace=rbrace)
    trailing = isinstance(last.comma, cst.Comma)
    elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    added = _joined(new, cst.SimpleWhitespace(" "))
    if trailing:
        added[-1] = added[-1].with_changes(comma=cst.Comma())
    return value.with_changes(elements=[*elements, *added])


def _element_separator(value: cst.Dict) -> cst.ParenthesizedWhitespace | None:
    """The newline-and-indent that separates entries of a multi-line dict."""
    elements = list(value.elements)
    if len(elements) >= 2 and isinstance(elements[-2].comma, cst.Comma):
        between = elements[-2].comma.whitespace_after
        if isinstance(between, cst.ParenthesizedWhitespace):
            return between
    opening = value.lbrace.whitespace_after
    return opening if isinstance(opening, cst.ParenthesizedWhitespace) else None


def _joined(elements: list[cst.DictElement], separator: cst.BaseParenthesizableWhitespace) -> list[cst.DictElement]:
    out = [e.with_changes(comma=cst.Comma(whitespace_after=separator)) for e in elements[:-1]]
    return [*out, elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _is_lone_pass(statements: list[cst.BaseStatement]) -> bool:
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return False
    line = statements[0]
    return len(line.body) == 1 and isinstance(line.body[0], cst.Pass) and line.trailing_whitespace.comment is None


# ---- imports ----------------------------------------------------------------------------------
def _ensure_import(tree: cst.Module, name: str, home: str, module: str, is_package: bool) -> cst.Module:
    """`tree` with `name` bound at module level, imported from `home` when missing."""
    if _bound(tree, name) or not home:
        return tree
    package = module if is_package else module.rpartition(".")[0]
    body = list(tree.body)
    for number, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        node = statement.body[0]
        if (
            isinstance(node, cst.ImportFrom)
            and not isinstance(node.names, cst.ImportStar)
            and node.lpar is None
            and _absolute(node, package) == home
        ):
            names = list(node.names)
            names[-1] = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            names.append(cst.ImportAlias(name=cst.Name(name)))
            body[number] = statement.with_changes(body=[node.with_changes(names=names)])
            return tree.with_changes(body=body)
    # Imported here: libcst.codemod pulls in libcst.matchers, 0.3 s of start-up for every run.
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext(full_module_name=module, full_package_name=package)
    AddImportsVisitor.add_needed_import(context, home, name)
    return AddImportsVisitor(context).transform_module(tree)


def _bound(tree: cst.Module, name: str) -> bool:
    for statement in tree.body:
        if isinstance(statement, cst.ClassDef | cst.FunctionDef) and statement.name.value == name:
            return True
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom | cst.Import) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    bound = alias.evaluated_alias or alias.evaluated_name
                    if bound.split(".")[0] == name:
                        return True
            elif isinstance(small, cst.Assign):
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                    return True
    return False


def _absolute(node: cst.ImportFrom, package: str) -> str:
    named = get_full_name_for_node(node.module) if node.module is not None else ""
    dots = len(node.relative)
    if not dots:
        return named or ""
    parts = package.split(".") if package else []
    base = parts[: len(parts) - (dots - 1)] if dots - 1 <= len(parts) else []
    return ".".join([*base, *([named] if named else [])])
