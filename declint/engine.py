"""The two-phase engine.

Phase 1 reads every file under the configured roots (plus the files to check) and extracts
facts into the project index. Phase 2 checks the requested files: rules whose prefilter cannot
match are skipped, the rest run in one batched libcst pass. Every failure on a file becomes a
DL000 finding for that file; nothing here raises for bad input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper

from declint.config import Config
from declint.discovery import SourcePath, discover, display_path, glob_match, module_name
from declint.errors import SourceError
from declint.facts import FactOptions, ModuleFacts, extract_facts
from declint.index import ProjectIndex
from declint.rule import FactRule, FileContext, ProjectRule, Rule, RuleMeta
from declint.source import SourceFile, decode_source, read_source
from declint.suppressions import MARKER, Suppression, apply_suppressions, parse_suppressions
from declint.types import Finding, Position, RunResult, Span, SuppressedFinding

PARSE_ERROR = "DL000"
PARSE_ERROR_NAME = "parse-error"

Progress = Callable[[int, int], None]


def parse_error(rel: str, message: str, line: int = 1, column: int = 0) -> Finding:
    position = Position(line, column)
    return Finding(PARSE_ERROR, PARSE_ERROR_NAME, rel, Span(position, position), message)


@dataclass(frozen=True)
class Selection:
    """Which codes are enabled: a code is on when a select prefix matches and no ignore does."""

    select: tuple[str, ...]
    ignore: tuple[str, ...]

    def enabled(self, code: str) -> bool:
        return any(code.startswith(p) for p in self.select) and not any(code.startswith(p) for p in self.ignore)


@dataclass
class Engine:
    config: Config
    rules: Sequence[type[RuleMeta]]
    selection: Selection
    progress: Progress | None = None
    # rel -> bytes checked instead of the file on disk: `check --fix` re-lints candidate texts.
    overrides: Mapping[str, bytes] = field(default_factory=dict)
    # Keep what suppressions hid, with their reasons (SARIF suppressions, stable fingerprints).
    keep_suppressed: bool = False
    _suppressed: list[SuppressedFinding] = field(default_factory=list, init=False, repr=False)

    @property
    def known_codes(self) -> frozenset[str]:
        return frozenset(rule.CODE for rule in self.rules)

    @property
    def enabled_codes(self) -> frozenset[str]:
        return frozenset(code for code in self.known_codes if self.selection.enabled(code))

    def run(self, paths: Iterable[Path]) -> RunResult:
        self._suppressed = []
        checked = discover(paths, self.config)
        roots = [self.config.root / root for root in self.config.str_list("roots")]
        indexed = discover([r for r in roots if r.exists()], self.config)
        sources, facts = self._phase1(_union(checked.files, indexed.files))
        index = ProjectIndex.build(facts.values(), self.config)
        findings = [parse_error(s.rel, s.reason) for s in checked.skipped]
        findings += self._project_findings(index, {f.rel for f in checked.files})
        for number, item in enumerate(checked.files, 1):
            findings += self.check_one(sources[item.rel], facts[item.rel], index)
            if self.progress is not None:
                self.progress(number, len(checked.files))
        kept = [f.printable() for f in findings if self._reportable(f)]
        ordered = tuple(sorted(set(kept), key=Finding.sort_key))
        return RunResult(
            ordered,
            files_checked=len(checked.files),
            files_indexed=len(facts),
            rule_codes=tuple(sorted(self.enabled_codes)),
            suppressed=tuple(
                sorted({s for s in self._suppressed if self._reportable(s.finding)}, key=lambda s: s.finding.sort_key())
            ),
        )

    def build_index(self, paths: Iterable[Path] = ()) -> ProjectIndex:
        roots = [self.config.root / root for root in self.config.str_list("roots")]
        found = discover([*paths, *(r for r in roots if r.exists())], self.config)
        _, facts = self._phase1(found.files)
        return ProjectIndex.build(facts.values(), self.config)

    # ---- phase 1 ------------------------------------------------------------------------
    def _phase1(
        self, files: Iterable[SourcePath]
    ) -> tuple[dict[str, SourceFile | SourceError], dict[str, ModuleFacts]]:
        options = FactOptions(
            declaration_attribute=str(self.config.get("declaration-attribute")),
            fixed_marker=str(self.config.get("fixed-marker")),
            model_decorators=self.config.str_list("model-decorators"),
        )
        sources: dict[str, SourceFile | SourceError] = {}
        facts: dict[str, ModuleFacts] = {}
        for item in files:
            module = module_name(item.path)
            try:
                override = self.overrides.get(item.rel)
                source: SourceFile | SourceError = (
                    read_source(item.path, item.rel) if override is None else decode_source(override, item.rel)
                )
            except SourceError as error:
                source = error
            sources[item.rel] = source
            if isinstance(source, SourceError):
                facts[item.rel] = ModuleFacts(module, item.rel, error=source.message, error_line=source.line or 1)
            else:
                is_package = item.path.name == "__init__.py"
                facts[item.rel] = extract_facts(source.text, module, item.rel, options, is_package)
        return sources, facts

    # ---- phase 2 ------------------------------------------------------------------------
    def _project_findings(self, index: ProjectIndex, checked: set[str]) -> list[Finding]:
        config_rel = display_path(self.config.source, self.config.root) if self.config.source else None
        findings: list[Finding] = []
        for rule in self.rules:
            if issubclass(rule, ProjectRule) and self.selection.enabled(rule.CODE):
                for finding in rule().check_project(index, self.config):
                    # Project findings about Python files outside this run (pre-commit) stay
                    # quiet; those about the configuration, docs and schemas always count.
                    if finding.path in checked or finding.path == config_rel or not finding.path.endswith(".py"):
                        findings.append(finding)
        return findings

    def check_one(self, source: SourceFile | SourceError, facts: ModuleFacts, index: ProjectIndex) -> list[Finding]:
        if isinstance(source, SourceError):
            return [parse_error(facts.path, source.message, source.line or 1)]
        if facts.error is not None:
            return [parse_error(facts.path, facts.error, facts.error_line, facts.error_column)]
        context = FileContext(source, facts, self.config, index)
        rule_classes = [r for r in self._file_rules() if self._wants(r, context)]
        has_marker = MARKER in source.data
        findings = self._fact_findings(context)
        if not rule_classes and not has_marker:
            return findings
        if rule_classes:
            try:
                findings += _run_rules(context, rule_classes)
            except SourceError as error:
                return [parse_error(facts.path, error.message, error.line or 1, error.column)]
        if not has_marker:
            return findings
        suppressions = parse_suppressions(source.text)
        kept, hygiene = apply_suppressions(
            findings,
            suppressions,
            known_codes=self.known_codes,
            enabled_codes=self.enabled_codes,
            rules_ran=True,
            rel=facts.path,
        )
        if self.keep_suppressed:
            self._suppressed += _suppressed(findings, kept, suppressions)
        return kept + hygiene

    def _fact_findings(self, context: FileContext) -> list[Finding]:
        findings: list[Finding] = []
        for rule in self.rules:
            if issubclass(rule, FactRule) and self.selection.enabled(rule.CODE):
                try:
                    findings += rule().check_facts(context)
                except Exception as error:  # a rule bug must cost one file, never the run
                    findings.append(
                        parse_error(context.rel, f"rule {rule.CODE} crashed: {type(error).__name__}: {error}")
                    )
        return findings

    def _file_rules(self) -> list[type[Rule]]:
        return [r for r in self.rules if issubclass(r, Rule) and self.selection.enabled(r.CODE)]

    def _wants(self, rule: type[Rule], context: FileContext) -> bool:
        needles = rule.needles(self.config, context.index)
        if needles and not any(needle in context.source.data for needle in needles):
            return False
        return rule.applies_to(context)

    def _reportable(self, finding: Finding) -> bool:
        if not self.selection.enabled(finding.code):
            return False
        for pattern, codes in dict(self.config.get("per-path-ignores")).items():
            if any(finding.code.startswith(c) for c in codes) and glob_match(finding.path, (pattern,)):
                return False
        return True


def parse_module(source: SourceFile) -> cst.Module:
    try:
        return cst.parse_module(source.text, config=cst.PartialParserConfig(encoding=source.encoding))
    except cst.ParserSyntaxError as error:
        raise SourceError(
            f"syntax error: {error.message}", path=source.rel, line=error.raw_line, column=error.raw_column
        ) from None
    except RecursionError:
        raise SourceError("nesting too deep for the parser", path=source.rel) from None


def _run_rules(context: FileContext, rule_classes: list[type[Rule]]) -> list[Finding]:
    module = parse_module(context.source)
    rules = [cls(context) for cls in rule_classes]
    try:
        MetadataWrapper(module, unsafe_skip_copy=True).visit_batched(rules)
        return [finding for rule in rules for finding in rule.findings]
    except RecursionError:
        return [parse_error(context.rel, "nesting too deep for the parser")]
    except Exception:
        return _run_rules_one_by_one(context, module, rule_classes)


def _run_rules_one_by_one(context: FileContext, module: cst.Module, rule_classes: list[type[Rule]]) -> list[Finding]:
    """Slow path after a crash in the batch: attribute the crash, keep the other rules' findings."""
    findings: list[Finding] = []
    for cls in rule_classes:
        rule = cls(context)
        try:
            MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([rule])
        except Exception as error:
            findings.append(parse_error(context.rel, f"rule {cls.CODE} crashed: {type(error).__name__}: {error}"))
            continue
        findings.extend(rule.findings)
    return findings


def _suppressed(
    findings: list[Finding], kept: list[Finding], suppressions: list[Suppression]
) -> list[SuppressedFinding]:
    """The findings `apply_suppressions` hid, each with the reason of the comment that hid it."""
    shown = set(kept)
    hidden: list[SuppressedFinding] = []
    for finding in findings:
        if finding not in shown:
            match = next((s for s in suppressions if finding.code in s.codes and s.covers(finding)), None)
            hidden.append(SuppressedFinding(finding, match.reason if match else ""))
    return hidden


def _union(*groups: Iterable[SourcePath]) -> list[SourcePath]:
    merged = {item.rel: item for group in groups for item in group}
    return [merged[rel] for rel in sorted(merged)]
