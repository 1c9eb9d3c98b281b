"""Rule base classes.

A rule is one class in one module (Fixit's shape): its metadata (CODE, NAME, SUMMARY), a
docstring that explains *why* (it becomes `declint rule CODE`), the options it reads, and
VALID/INVALID examples that are both its documentation and its tests.

Five kinds:
- `Rule`: a libcst visitor run on one file, batched with the others in one pass;
- `TreeRule`: a per-file check over the standard library's `ast` tree (about 10x cheaper to
  parse than libcst, and no position metadata to compute), for checks that need no CST;
- `FactRule`: a per-file check computed from the project index, with no parse at all;
- `ProjectRule`: runs once over the project index (e.g. DL100);
- `EngineCode`: a code the engine itself reports (DL000, DL9xx); documentation only.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from declint.config import Config
from declint.facts import ModuleFacts
from declint.index import ProjectIndex
from declint.source import SourceFile
from declint.types import Finding, Position, Severity, Span

if TYPE_CHECKING:
    import libcst as cst

    _Visitor = cst.BatchableCSTVisitor
else:
    _Visitor = object  # libcst's visitor is mixed in when a rule first runs: see `visitor_class`

EXAMPLE_PATH = "tensorrt_llm/_torch/models/modeling_example.py"


@dataclass(frozen=True)
class Valid:
    """`code` is the file at `path`; `files` are other files of the example project, and
    `config` is TOML appended to its `[tool.declint]` table."""

    code: str
    path: str = EXAMPLE_PATH
    files: tuple[tuple[str, str], ...] = ()
    config: str = ""


@dataclass(frozen=True, kw_only=True)
class Invalid(Valid):
    """`expect` lists (line, column) of each finding, 1-based lines, 0-based columns."""

    expect: tuple[tuple[int, int], ...]
    message: str | None = None  # the exact message of the first finding, when pinned


@dataclass(frozen=True)
class FileContext:
    source: SourceFile
    facts: ModuleFacts
    config: Config
    index: ProjectIndex

    @property
    def rel(self) -> str:
        return self.source.rel

    @property
    def module(self) -> str:
        return self.facts.module


class RuleMeta:
    CODE: ClassVar[str]
    NAME: ClassVar[str]
    SUMMARY: ClassVar[str]
    SEVERITY: ClassVar[Severity] = Severity.ERROR
    OPTIONS: ClassVar[tuple[str, ...]] = ()
    FIX: ClassVar[str] = ""  # what `--fix` (safe) or `--fix --unsafe-fixes` does; "" when no fix
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()


class EngineCode(RuleMeta):
    """A code reported by the engine itself; the class only documents it."""


class ProjectRule(RuleMeta):
    """Runs once per run over the project index.

    `SHOWS_POSITIONS`: can its findings change when only the lines and columns of a module's
    facts move (it reports at a fact's position, or names one)? A run that patches such an edit
    into the snapshot runs again only the project rules that can, and keeps the others' last
    findings (`engine._Run._project_again`); a test holds the rules that say no to it.
    """

    SHOWS_POSITIONS: ClassVar[bool] = True

    def check_project(self, index: ProjectIndex, config: Config) -> list[Finding]:
        raise NotImplementedError


class FactRule(RuleMeta):
    """A per-file rule computed from the project index alone; the file is not parsed by libcst.

    For checks that only need facts phase 1 already extracted (with exact positions), so they
    cost nothing in phase 2.
    """

    def check_facts(self, context: FileContext) -> list[Finding]:
        raise NotImplementedError

    @staticmethod
    def finding(rule: type[RuleMeta], context: FileContext, span: Span, message: str, scope: str) -> Finding:
        return Finding(rule.CODE, rule.NAME, context.rel, span, message, rule.SEVERITY, scope)


class FileGate(RuleMeta):
    """The prefilter shared by the per-file rules (`Rule`, `TreeRule`)."""

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        """Byte strings a file must contain (any of them) for this rule to possibly fire.

        Files without any are never parsed for this rule. `()` means "no prefilter". Computed
        from the configuration before the index exists: `index` may be an empty one. Needles
        the index adds cost a read of every checked file (the scan did not look for them): a
        rule whose extra needles only matter in indexed files says so in `prefilter` instead.
        """
        return ()

    @classmethod
    def index_needles(cls, config: Config) -> tuple[bytes, ...]:
        """Byte strings of the files this rule may need indexed in full, beyond the index's own
        needles: files whose module-level bindings the rule asks about from other files (DL101:
        the aliases of SDPA other modules import). `indexes` decides on each file holding one.
        Default: none."""
        return ()

    @classmethod
    def indexes(cls, data: bytes, config: Config) -> bool:
        """Does a file holding one of `index_needles` need indexing in full (a cheap look at its
        bytes; indexing parses it, and a needle is often far more common than what the rule
        asks about)? Default: yes."""
        return True

    @classmethod
    def prefilter(cls, data: bytes, config: Config, index: ProjectIndex) -> bool:
        """Can this rule fire on a file with these bytes? Default: one of `needles` occurs.

        Must never say no to a file the rule would report on; saying yes costs only a parse.
        """
        needles = cls.needles(config, index)
        return not needles or any(needle in data for needle in needles)

    @classmethod
    def applies_to(cls, context: FileContext) -> bool:
        """A cheaper, fact-based gate after the byte prefilter (default: always)."""
        return True


class TreeRule(FileGate):
    """A per-file rule over the file's `ast` tree. Subclasses implement `check` and call `report`.

    Positions are converted to libcst's convention (1-based lines, 0-based columns counted in
    characters, not in UTF-8 bytes as `ast` counts them), so a finding reads the same either way.
    """

    def __init__(self, context: FileContext, tree: ast.Module) -> None:
        self.context = context
        self.tree = tree
        self.findings: list[Finding] = []
        self._scope: list[str] = []  # the enclosing classes and functions, while `walk` runs
        self._data: bytes | None = None
        self._starts: list[int] | None = None

    @property
    def config(self) -> Config:
        return self.context.config

    @property
    def index(self) -> ProjectIndex:
        return self.context.index

    def check(self) -> list[Finding]:
        raise NotImplementedError

    def walk(self, visit: Callable[[ast.AST], bool]) -> None:
        """Call `visit` on every node in source order, parents before children (as a libcst
        visitor sees them), with `scope_name` naming the enclosing classes and functions (a class
        or function is in its own scope); `visit` returns False to skip the node's children. An
        explicit stack: deeply nested code cannot exhaust Python's recursion limit."""
        stack: list[ast.AST | None] = [self.tree]
        while stack:
            node = stack.pop()
            if node is None:
                self._scope.pop()  # leaving a class or function
                continue
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                self._scope.append(node.name)
                stack.append(None)
            if visit(node):
                stack.extend(reversed(list(ast.iter_child_nodes(node))))

    @property
    def scope_name(self) -> str:
        return ".".join(self._scope)

    def report(self, node: ast.expr | ast.stmt, message: str, scope: str) -> None:
        end_line = node.end_lineno or node.lineno
        end_column = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        span = Span(
            Position(node.lineno, self._column(node.lineno, node.col_offset)),
            Position(end_line, self._column(end_line, end_column)),
        )
        self.findings.append(Finding(self.CODE, self.NAME, self.context.rel, span, message, self.SEVERITY, scope))

    def segment(self, node: ast.expr | ast.stmt) -> str:
        """The source text of `node` (like `ast.get_source_segment`, without re-splitting the file)."""
        if node.end_lineno is None or node.end_col_offset is None:
            return ""
        starts = self._line_starts()
        if node.end_lineno >= len(starts):
            return ""
        data = self._encoded()
        return data[
            starts[node.lineno - 1] + node.col_offset : starts[node.end_lineno - 1] + node.end_col_offset
        ].decode("utf-8", "replace")

    def _column(self, line: int, offset: int) -> int:
        """`ast` counts UTF-8 bytes of the line; libcst (and declint) count characters."""
        starts = self._line_starts()
        begin = starts[line - 1] if 0 < line < len(starts) else 0
        prefix = self._encoded()[begin : begin + offset]
        return offset if prefix.isascii() else len(prefix.decode("utf-8", "replace"))

    def _encoded(self) -> bytes:
        if self._data is None:
            self._data = self.context.source.text.encode("utf-8")
        return self._data

    def _line_starts(self) -> list[int]:
        """Byte offset of each line's start; ast numbers lines on \\n, \\r\\n and \\r only, like libcst."""
        if self._starts is None:
            data = self._encoded()
            self._starts = [0, *(match.end() for match in re.finditer(rb"\r\n|\r|\n", data))]
            self._starts.append(len(data) + 1)  # a sentinel: lines are 1..len(starts) - 1
        return self._starts


class Rule(FileGate, _Visitor):
    """A per-file rule over the libcst tree. Subclasses define visit_/leave_ methods and call `self.report`.

    The class itself does not import libcst (a run answered from the cache never parses, and
    libcst's import is most of its time); `visitor_class(rule)` gives the runnable class, with
    libcst's batchable visitor mixed in.
    """

    def __init__(self, context: FileContext) -> None:
        super().__init__()
        self.context = context
        self.positions: Positions | None = None  # set by the engine before the visit
        self.findings: list[Finding] = []
        self._scope: list[str] = []

    def get_visitors(self) -> Mapping[str, Callable[[cst.CSTNode], None]]:
        """libcst's `get_visitors` without `inspect.getmembers` on every instance (that walk of
        every attribute of a class with hundreds of stubs was a sixth of a file's check)."""
        return {name: getattr(self, name) for name in _visitor_names(type(self))}

    def position(self, node: cst.CSTNode) -> cst.metadata.CodeRange:
        if self.positions is None:
            raise RuntimeError("positions are known only while the engine runs the rule")
        return self.positions.of(node)

    @property
    def config(self) -> Config:
        return self.context.config

    @property
    def index(self) -> ProjectIndex:
        return self.context.index

    # Scope tracking gives findings their enclosing qualified name (fingerprints, messages).
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scope.pop()

    @property
    def scope_name(self) -> str:
        return ".".join(self._scope)

    def report(self, node: cst.CSTNode, message: str) -> None:
        position = self.position(node)
        self.findings.append(
            Finding(
                code=self.CODE,
                name=self.NAME,
                path=self.context.rel,
                span=Span(
                    Position(position.start.line, position.start.column),
                    Position(position.end.line, position.end.column),
                ),
                message=message,
                severity=self.SEVERITY,
                context=self.scope_name,
            )
        )


@functools.cache
def visitor_class(rule: type[Rule]) -> type[Rule]:
    """`rule` with libcst's `BatchableCSTVisitor` mixed in, made once."""
    import libcst as cst

    namespace: dict[str, Any] = {"__module__": rule.__module__, "__qualname__": rule.__qualname__}
    return type(rule.__name__, (rule, cst.BatchableCSTVisitor), namespace)


@functools.cache
def _visitor_names(cls: type) -> tuple[str, ...]:
    """What libcst's `get_visitors` selects: visit_/leave_ methods that are not its no-op stubs."""
    return tuple(
        name
        for name in sorted(dir(cls))
        if name.startswith(("visit_", "leave_"))
        and callable(method := getattr(cls, name))
        and not getattr(method, "_is_no_op", False)
    )


class Positions:
    """Positions of a module's nodes, computed on first use.

    libcst's `PositionProvider` renders the whole module to count lines and columns, which cost
    more than the rules themselves; most files report nothing, so it runs only when a rule asks.
    """

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._positions: Mapping[cst.CSTNode, cst.metadata.CodeRange] | None = None

    def of(self, node: cst.CSTNode) -> cst.metadata.CodeRange:
        if self._positions is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            # unsafe_skip_copy: the rules hold nodes of this very tree.
            self._positions = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        return self._positions[node]


def name_matches_any(name: str, patterns: Sequence[str]) -> bool:
    """fnmatch on a plain identifier, case-insensitively (`ATTN_BACKEND` is still a context)."""
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in patterns)
