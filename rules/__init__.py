"""The rule registry: every rule module is listed here, explicitly (a test checks it).

Each rule is named by its code, module and class, and imported on first use (`LazyRules`): a
run the snapshot answers needs the codes only, and importing the rule modules was about a third
of a warm pre-commit run's start-up.
"""

from __future__ import annotations

from declint.rule_set import LazyRules, LazyRulesByCode, RuleEntry


def _entry(code: str, module: str, name: str) -> RuleEntry:
    return RuleEntry(code, f"declint.rules.{module}", name)


ALL_RULES = LazyRules(
    (
        _entry("DL000", "parse_error", "ParseError"),
        _entry("DL100", "missing_shared_literal", "MissingSharedLiteral"),
        _entry("DL101", "direct_sdpa", "DirectSdpa"),
        _entry("DL102", "missing_declaration", "MissingDeclaration"),
        _entry("DL103", "backend_literal", "BackendLiteral"),
        _entry("DL104", "invalid_declaration", "InvalidDeclaration"),
        _entry("DL105", "metadata_contract", "MetadataContract"),
        _entry("DL106", "metadata_backend_mismatch", "MetadataBackendMismatch"),
        _entry("DL107", "docs_drift", "DocsDrift"),
        _entry("DL108", "schema_drift", "SchemaDrift"),
        _entry("DL901", "suppression_without_reason", "SuppressionWithoutReason"),
        _entry("DL902", "unused_suppression", "UnusedSuppression"),
        _entry("DL903", "unknown_suppression_code", "UnknownSuppressionCode"),
        _entry("DL904", "stale_baseline_entry", "StaleBaselineEntry"),
    )
)

RULES_BY_CODE: LazyRulesByCode = ALL_RULES.by_code()
