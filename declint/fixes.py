"""Autofix: libcst transforms for the fixes rules attach to findings, and the safe way to apply them.

Kinds of fix (`Fix.kind`), each one transform, located by `Fix.target` (a node's start):
- `replace-string` (DL104, safe): the string literal at `target` gets the body `args[0]`,
  keeping its prefix and quotes (`"trtllm"` -> `"TRTLLM"`).
- `remove-suppression-code` (DL902, safe): the comment at `target` loses the code `args[0]`
  from its `# declint: ignore[...]` list; with no code left the comment goes (the whole line,
  when the comment stood alone), but a comment after it (`# noqa`) stays.
- `add-declaration-entries` (DL102, unsafe): the class whose name starts at `target` gets the
  entries `args[3:]` (Python source of dict entries) in its declaration `args[0]`, created when
  it has none; the marker `args[1]` is imported from `args[2]` when the module lacks it.

Applying (`check --fix`): fixes are grouped per file and applied in one pass over the parsed
module. A new text is written only when it parses, and re-linting the whole run with it finds
every fixed finding gone and nothing new (counted without positions, so findings that merely
moved do not count as new). Files libcst cannot reproduce byte for byte, or that hold a lone
carriage return or a form feed, are never rewritten. Writes go to a temporary file in the same
directory, then `os.replace`. Rounds repeat until nothing more applies, so a second `--fix`
finds nothing to do.
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import os
import re
import stat
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby
from pathlib import Path

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from declint.discovery import module_name
from declint.engine import Engine
from declint.errors import SourceError
from declint.fingerprint import identity
from declint.reporting.model import Edit, FixPreview
from declint.reporting.sources import SourceCache
from declint.source import SourceFile, decode_source
from declint.types import Applicability, Finding, Fix, Position, RunResult

MAX_ROUNDS = 10
_SUPPRESSION = re.compile(r"^(?P<head>#\s*declint:\s*ignore\[)(?P<codes>[^\]]*)\](?P<reason>.*)$", re.DOTALL)
_LONE_CR = re.compile(rb"\r(?!\n)")
_ONE_LINE_LIMIT = 100


# ---- whether a file may be rewritten ---------------------------------------------------------
def unrewritable(data: bytes, rel: str) -> str | None:
    """Why the file must not be rewritten, or None when libcst reproduces it byte for byte."""
    if b"\f" in data:
        return "contains a form feed; not rewritten"
    if _LONE_CR.search(data):
        return "contains a lone carriage return; not rewritten"
    try:
        source = decode_source(data, rel)
        module = _parse(source)
    except SourceError as error:
        return f"cannot be parsed ({error.message}); not rewritten"
    if encode(source, module.code) != data:
        return "libcst does not reproduce it byte for byte; not rewritten"
    return None


def encode(source: SourceFile, text: str) -> bytes:
    bom = codecs.BOM_UTF8 if source.data.startswith(codecs.BOM_UTF8) else b""
    return bom + text.encode(source.encoding)


def _parse(source: SourceFile) -> cst.Module:
    try:
        return cst.parse_module(source.text, config=cst.PartialParserConfig(encoding=source.encoding))
    except cst.ParserSyntaxError as error:
        raise SourceError(f"syntax error: {error.message}", path=source.rel, line=error.raw_line) from None
    except RecursionError:
        raise SourceError("nesting too deep for the parser", path=source.rel) from None


# ---- the transforms ---------------------------------------------------------------------------
@dataclass
class Applied:
    text: str
    applied: list[Fix] = field(default_factory=list)
    not_applied: list[Fix] = field(default_factory=list)


def apply_fixes(source: SourceFile, fixes: Sequence[Fix], module: str) -> Applied:
    """One pass over the module applying every fix it can; the text is unchanged when none applies."""
    tree = _parse(source)
    # A declaration needs its marker: importable from a known module, or already bound here.
    usable = [f for f in fixes if f.kind != "add-declaration-entries" or f.args[2] or _bound(tree, f.args[1])]
    transformer = _FixTransformer(usable)
    new_tree = MetadataWrapper(tree).visit(transformer)
    for name, home in sorted(transformer.imports):
        new_tree = _ensure_import(new_tree, name, home, module, source.rel.endswith("__init__.py"))
    applied = [fix for fix in fixes if fix in transformer.applied]
    return Applied(new_tree.code, applied, [fix for fix in fixes if fix not in transformer.applied])


class _FixTransformer(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, fixes: Iterable[Fix]) -> None:
        super().__init__()
        self.pending: dict[tuple[str, int, int], list[Fix]] = {}
        for fix in fixes:
            self.pending.setdefault((fix.kind, fix.target.line, fix.target.column), []).append(fix)
        self.applied: set[Fix] = set()
        self.imports: set[tuple[str, str]] = set()
        self.indent_unit = "    "

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
        new = strip_suppression_codes(updated.value, {fix.args[0] for fix in fixes})
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


def strip_suppression_codes(comment: str, codes: set[str]) -> str | None:
    """The comment without `codes` in its ignore list; "" when nothing worth keeping is left."""
    match = _SUPPRESSION.match(comment)
    if match is None:
        return None
    kept = [c.strip() for c in match.group("codes").split(",") if c.strip() and c.strip().upper() not in codes]
    if kept:
        return f"{match.group('head')}{', '.join(kept)}]{match.group('reason')}"
    other = match.group("reason").find("#")  # a second comment after the reason is not ours
    return match.group("reason")[other:].strip() if other >= 0 else ""


def _parse_entries(sources: Sequence[str]) -> list[cst.DictElement]:
    parsed = cst.parse_expression("{" + ", ".join(sources) + "}")
    assert isinstance(parsed, cst.Dict)
    return [e for e in parsed.elements if isinstance(e, cst.DictElement)]


def _declare(
    body: cst.BaseSuite, attribute: str, entries: Mapping[str, cst.DictElement], unit: str
) -> cst.BaseSuite | None:
    if isinstance(body, cst.SimpleStatementSuite):  # `class X(Base): pass`
        body = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=body.body)])
    if not isinstance(body, cst.IndentedBlock):
        return None
    statements = list(body.body)
    for number, statement in enumerate(statements):
        value = _declaration_value(statement, attribute)
        if value is None:
            continue
        if not isinstance(value, cst.Dict):
            return None
        present = {
            e.key.evaluated_value
            for e in value.elements
            if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
        }
        missing = [element for encoder, element in entries.items() if encoder not in present]
        assert isinstance(statement, cst.SimpleStatementLine)
        small = statement.body[0]
        assert isinstance(small, cst.Assign | cst.AnnAssign)
        statements[number] = statement.with_changes(body=[small.with_changes(value=_append(value, missing))])
        return body.with_changes(body=statements)
    declaration = _new_declaration(attribute, list(entries.values()), unit)
    first = statements[0] if statements else None
    if isinstance(first, cst.SimpleStatementLine) and _is_lone_pass(statements):
        return body.with_changes(body=[declaration.with_changes(leading_lines=first.leading_lines)])
    at = 1 if statements and _is_docstring(statements[0]) else 0
    return body.with_changes(body=[*statements[:at], declaration, *statements[at:]])


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


# ---- previews for reports ---------------------------------------------------------------------
def text_edits(old: str, new: str) -> tuple[tuple[Edit, ...], tuple[Edit, ...]]:
    """(minimal edits, whole-line edits) that turn `old` into `new`."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    edits: list[Edit] = []
    line_edits: list[Edit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        before, after = "".join(a[i1:i2]), "".join(b[j1:j2])
        line_edits.append(Edit(Position(i1 + 1, 0), Position(i2 + 1, 0), after))
        head = _common_prefix(before, after)
        tail = _common_prefix(before[head:][::-1], after[head:][::-1])
        start = _advance(i1 + 1, before[:head])
        end = _advance(i1 + 1, before[: len(before) - tail])
        edits.append(Edit(start, end, after[head : len(after) - tail]))
    return tuple(edits), tuple(line_edits)


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def _advance(line: int, text: str) -> Position:
    parts = text.splitlines(keepends=True)
    if not parts:
        return Position(line, 0)
    if parts[-1].endswith(("\n", "\r")):
        return Position(line + len(parts), 0)
    return Position(line + len(parts) - 1, len(parts[-1]))


def unified_diff(rel: str, old: str, new: str, context: int = 3) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{rel}", f"b/{rel}", n=context
    )
    out: list[str] = []
    for line in lines:
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out += [line + "\n", "\\ No newline at end of file\n"]
    return "".join(out)


def previews(findings: Iterable[Finding], sources: SourceCache) -> dict[Finding, FixPreview]:
    """What each finding's fix would change in the file as it is, for reports; no validation."""
    out: dict[Finding, FixPreview] = {}
    fixable = sorted((f for f in findings if f.fix is not None), key=Finding.sort_key)
    for rel, group in groupby(fixable, key=lambda f: f.path):
        path = sources.path_of(rel)
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if unrewritable(data, rel) is not None:
            continue
        source = decode_source(data, rel)
        for finding in group:
            assert finding.fix is not None
            applied = apply_fixes(source, [finding.fix], module_name(path))
            if not applied.applied:
                continue
            edits, line_edits = text_edits(source.text, applied.text)
            diff = unified_diff(rel, source.text, applied.text, context=1)
            out[finding] = FixPreview(finding.fix.applicability, finding.fix.description, edits, line_edits, diff)
    return out


# ---- applying, with validation ----------------------------------------------------------------
@dataclass(frozen=True)
class FileChange:
    rel: str
    path: Path
    before: bytes
    after: bytes
    fixed: tuple[Finding, ...]

    def diff(self) -> str:
        before, after = decode_source(self.before, self.rel), decode_source(self.after, self.rel)
        return unified_diff(self.rel, before.text, after.text)


@dataclass(frozen=True)
class NotFixed:
    finding: Finding
    reason: str


@dataclass(frozen=True)
class FixOutcome:
    changes: tuple[FileChange, ...]
    not_fixed: tuple[NotFixed, ...]
    before: RunResult
    after: RunResult
    written: bool

    @property
    def fixed(self) -> int:
        return sum(len(change.fixed) for change in self.changes)


def wants(fix: Fix | None, unsafe: bool) -> bool:
    return fix is not None and (unsafe or fix.applicability is Applicability.SAFE)


def fix_run(engine: Engine, paths: Sequence[Path], *, unsafe: bool, write: bool) -> FixOutcome:
    """Fix what can be fixed safely; write it only when `write` (else the outcome is a dry run)."""
    session = _Session(engine, list(paths))
    first = session.lint({})
    state, result = session.rounds(first, unsafe)
    changes = tuple(
        FileChange(rel, session.path(rel), session.original[rel], data, tuple(session.fixed[rel]))
        for rel, data in sorted(state.items())
        if data != session.original[rel]
    )
    if write:
        for change in changes:
            write_checked(change.path, change.before, change.after)
    not_fixed = tuple(sorted(session.given_up.values(), key=lambda n: n.finding.sort_key()))
    return FixOutcome(changes, not_fixed, first, result, write)


class _Session:
    def __init__(self, engine: Engine, paths: list[Path]) -> None:
        self.engine = engine
        self.paths = paths
        self.original: dict[str, bytes] = {}
        self.fixed: dict[str, list[Finding]] = {}
        self.given_up: dict[tuple[str, int, int, str, str], NotFixed] = {}

    def path(self, rel: str) -> Path:
        return Path(rel) if os.path.isabs(rel) else self.engine.config.root / rel

    def lint(self, overrides: Mapping[str, bytes]) -> RunResult:
        return replace(self.engine, overrides=dict(overrides), progress=None, keep_suppressed=False).run(self.paths)

    def data(self, rel: str, state: Mapping[str, bytes]) -> bytes:
        if rel not in self.original:
            self.original[rel] = self.path(rel).read_bytes()
        return state.get(rel, self.original[rel])

    def give_up(self, finding: Finding, reason: str) -> None:
        self.given_up[_key(finding)] = NotFixed(finding, reason)

    def rounds(self, result: RunResult, unsafe: bool) -> tuple[dict[str, bytes], RunResult]:
        state: dict[str, bytes] = {}
        for _ in range(MAX_ROUNDS):
            candidates = [f for f in result.findings if wants(f.fix, unsafe) and _key(f) not in self.given_up]
            proposals = self._propose(candidates, state)
            if not proposals:
                break
            accepted, result = self._validate(result, state, proposals)
            if not accepted:
                break
            for rel, (data, findings) in accepted.items():
                state[rel] = data
                self.fixed.setdefault(rel, []).extend(findings)
        return state, result

    def _propose(self, candidates: list[Finding], state: Mapping[str, bytes]) -> dict[str, tuple[bytes, list[Finding]]]:
        proposals: dict[str, tuple[bytes, list[Finding]]] = {}
        for rel, group in groupby(sorted(candidates, key=Finding.sort_key), key=lambda f: f.path):
            findings = list(group)
            try:
                data = self.data(rel, state)
            except OSError as error:
                for finding in findings:
                    self.give_up(finding, f"cannot read the file: {error.strerror or error}")
                continue
            reason = unrewritable(data, rel)
            if reason is not None:
                for finding in findings:
                    self.give_up(finding, f"{rel} {reason}")
                continue
            source = decode_source(data, rel)
            fixes = {finding.fix: finding for finding in findings if finding.fix is not None}
            applied = apply_fixes(source, list(fixes), module_name(self.path(rel)))
            for fix in applied.not_applied:
                self.give_up(fixes[fix], "the fix does not apply to the code as it is")
            if not applied.applied:
                continue
            try:
                new = encode(source, applied.text)
            except UnicodeEncodeError:
                for fix in applied.applied:
                    self.give_up(fixes[fix], f"the fixed text cannot be encoded as {source.encoding}")
                continue
            proposals[rel] = (new, [fixes[fix] for fix in applied.applied])
        return proposals

    def _validate(
        self,
        before: RunResult,
        state: Mapping[str, bytes],
        proposals: Mapping[str, tuple[bytes, list[Finding]]],
    ) -> tuple[dict[str, tuple[bytes, list[Finding]]], RunResult]:
        """Accept all proposals when they pass together, else file by file, else fix by fix.

        Fix by fix, only the first fix that passes is kept: the others' targets are positions in
        the text before it, so they wait for the next round, which re-lints and re-locates them.
        """
        after, problem = self._check(before, state, proposals)
        if after is not None:
            return dict(proposals), after
        accepted: dict[str, tuple[bytes, list[Finding]]] = {}
        current_state, current = dict(state), before
        for rel, (data, findings) in sorted(proposals.items()):
            after, problem = self._check(current, current_state, {rel: (data, findings)})
            if after is not None:
                current_state[rel] = data
                accepted[rel] = (data, findings)
                current = after
                continue
            if len(findings) == 1:
                self.give_up(findings[0], problem)
                continue
            for finding in findings:
                single = self._propose_one(finding, current_state)
                if single is None:
                    continue
                trial, problem = self._check(current, current_state, {rel: single})
                if trial is None:
                    self.give_up(finding, problem)
                    continue
                current_state[rel] = single[0]
                accepted[rel] = single
                current = trial
                break
        return accepted, current

    def _propose_one(self, finding: Finding, state: Mapping[str, bytes]) -> tuple[bytes, list[Finding]] | None:
        assert finding.fix is not None
        source = decode_source(self.data(finding.path, state), finding.path)
        applied = apply_fixes(source, [finding.fix], module_name(self.path(finding.path)))
        if not applied.applied:
            self.give_up(finding, "the fix does not apply to the code as it is")
            return None
        return encode(source, applied.text), [finding]

    def _check(
        self,
        before: RunResult,
        state: Mapping[str, bytes],
        proposals: Mapping[str, tuple[bytes, list[Finding]]],
    ) -> tuple[RunResult | None, str]:
        """The new result when the proposals parse, fix what they claim and add nothing; else why not."""
        overrides = {**state, **{rel: data for rel, (data, _) in proposals.items()}}
        for rel, (data, _) in proposals.items():
            try:
                _parse(decode_source(data, rel))
            except SourceError as error:
                return None, f"the fixed text does not parse ({error.message})"
        after = self.lint(overrides)
        old_sources = SourceCache(self.engine.config.root, {**self.original, **state})
        new_sources = SourceCache(self.engine.config.root, {**self.original, **overrides})
        allowed = Counter(_identity(f, old_sources) for f in before.findings)
        allowed.subtract(_identity(f, old_sources) for _, findings in proposals.values() for f in findings)
        seen = Counter(_identity(f, new_sources) for f in after.findings)
        excess = sorted(key for key, count in seen.items() if count > allowed[key])
        if excess:
            code, path, _, _, message = excess[0]
            return None, f"re-linting the fixed text reports {code} in {path}: {message}"
        return after, ""


def _identity(finding: Finding, sources: SourceCache) -> tuple[str, str, str, str, str]:
    return (*identity(finding, sources), finding.message)


def _key(finding: Finding) -> tuple[str, int, int, str, str]:
    return (finding.path, finding.line, finding.column, finding.code, finding.message)


def write_checked(path: Path, expected: bytes, data: bytes) -> None:
    """Replace `path` with `data` atomically, unless it changed since it was read."""
    target = path.resolve()  # a symlinked file: write its target, keep the link
    if target.read_bytes() != expected:
        raise SourceError("changed on disk while declint was fixing it; not written", path=str(path))
    mode = stat.S_IMODE(target.stat().st_mode)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".declint")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
