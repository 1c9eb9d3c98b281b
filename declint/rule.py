"""Rule base classes.

A rule is one class in one module (Fixit's shape): its metadata (CODE, NAME, SUMMARY), a
docstring that explains *why* (it becomes `declint rule CODE`), the options it reads, and
VALID/INVALID examples that are both its documentation and its tests.

Four kinds:
- `Rule`: a libcst visitor run on one file, batched with the others in one pass;
- `FactRule`: a per-file check computed from the project index, with no parse at all;
- `ProjectRule`: runs once over the project index (e.g. DL100);
- `EngineCode`: a code the engine itself reports (DL000, DL9xx); documentation only.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider, ProviderT

from declint.config import Config
from declint.facts import ModuleFacts
from declint.index import ProjectIndex
from declint.source import SourceFile
from declint.types import Finding, Position, Severity, Span

EXAMPLE_PATH = "tensorrt_llm/_torch/models/modeling_example.py"


@dataclass(frozen=True)
class Valid:
    """`code` is the file at `path`; `files` are other files of the example project, and
    `config` is TOML appended to its `[tool.declint]` table."""

    code: str
    path: str = EXAMPLE_PATH
    files: tuple[tuple[str, str], ...] = ()
    config: str = ""


@dataclass(frozen=True)
class Invalid:
    """`expect` lists (line, column) of each finding, 1-based lines, 0-based columns."""

    code: str
    expect: tuple[tuple[int, int], ...]
    message: str | None = None  # the exact message of the first finding, when pinned
    path: str = EXAMPLE_PATH
    files: tuple[tuple[str, str], ...] = ()
    config: str = ""


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
    VALID: ClassVar[Sequence[Valid]] = ()
    INVALID: ClassVar[Sequence[Invalid]] = ()


class EngineCode(RuleMeta):
    """A code reported by the engine itself; the class only documents it."""


class ProjectRule(RuleMeta):
    """Runs once per run over the project index."""

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


class Rule(RuleMeta, cst.BatchableCSTVisitor):
    """A per-file rule. Subclasses define visit_/leave_ methods and call `self.report`."""

    METADATA_DEPENDENCIES: ClassVar[Sequence[ProviderT]] = (PositionProvider,)

    def __init__(self, context: FileContext) -> None:
        super().__init__()
        self.context = context
        self.findings: list[Finding] = []
        self._scope: list[str] = []

    @classmethod
    def needles(cls, config: Config, index: ProjectIndex) -> tuple[bytes, ...]:
        """Byte strings a file must contain (any of them) for this rule to possibly fire.

        Files without any are never parsed for this rule. `()` means "no prefilter".
        """
        return ()

    @classmethod
    def applies_to(cls, context: FileContext) -> bool:
        """A cheaper, fact-based gate after the byte prefilter (default: always)."""
        return True

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
        position = self.get_metadata(PositionProvider, node)
        assert isinstance(position, CodeRange)
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


def name_matches_any(name: str, patterns: Sequence[str]) -> bool:
    """fnmatch on a plain identifier, case-insensitively (`ATTN_BACKEND` is still a context)."""
    lowered = name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern.lower()) for pattern in patterns)
