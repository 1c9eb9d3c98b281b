"""The rule registry: every rule module is listed here, explicitly (a test checks it).

Each rule is named by its code, module, class and kind, and imported on first use (`LazyRules`):
a run the snapshot answers needs the codes only, and importing the rule modules was about a third
of a warm pre-commit run's start-up; a run after an edit that patches the snapshot imports the
per-file rules only ("file" and "fact"; see `declint.rule_set`). A per-file rule that can fire only
on a file holding one of its needles names them here too (`declint.needles`): a check imports it
for the first file that holds one (`GatedRule`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from declint import needles
from declint.rule_set import LazyRules, LazyRulesByCode, RuleEntry

if TYPE_CHECKING:
    from collections.abc import Callable

    from declint.config import Config


def _entry(
    code: str, module: str, name: str, kind: str, gate: Callable[[Config], tuple[bytes, ...]] | None = None
) -> RuleEntry:
    return RuleEntry(code, f"declint.rules.{module}", name, kind, gate)


ALL_RULES = LazyRules(
    (
        _entry("DL000", "parse_error", "ParseError", "engine"),
        _entry("DL100", "missing_shared_literal", "MissingSharedLiteral", "project"),
        _entry("DL101", "direct_sdpa", "DirectSdpa", "file"),
        _entry("DL102", "missing_declaration", "MissingDeclaration", "file"),
        _entry("DL103", "backend_literal", "BackendLiteral", "file", needles.backend_words),
        _entry("DL104", "invalid_declaration", "InvalidDeclaration", "file", needles.declaration_attribute),
        _entry("DL105", "metadata_contract", "MetadataContract", "fact"),
        _entry("DL106", "metadata_backend_mismatch", "MetadataBackendMismatch", "file", needles.metadata_cls),
        _entry("DL107", "docs_drift", "DocsDrift", "project"),
        _entry("DL108", "schema_drift", "SchemaDrift", "project"),
        _entry("DL901", "suppression_without_reason", "SuppressionWithoutReason", "engine"),
        _entry("DL902", "unused_suppression", "UnusedSuppression", "engine"),
        _entry("DL903", "unknown_suppression_code", "UnknownSuppressionCode", "engine"),
        _entry("DL904", "stale_baseline_entry", "StaleBaselineEntry", "engine"),
    )
)

RULES_BY_CODE: LazyRulesByCode = ALL_RULES.by_code()
