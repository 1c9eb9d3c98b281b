"""The rule registry: every rule module is listed here, explicitly (a test checks it)."""

from __future__ import annotations

from declint.rule import RuleMeta
from declint.rules.backend_literal import BackendLiteral
from declint.rules.direct_sdpa import DirectSdpa
from declint.rules.docs_drift import DocsDrift
from declint.rules.invalid_declaration import InvalidDeclaration
from declint.rules.metadata_backend_mismatch import MetadataBackendMismatch
from declint.rules.metadata_contract import MetadataContract
from declint.rules.missing_declaration import MissingDeclaration
from declint.rules.missing_shared_literal import MissingSharedLiteral
from declint.rules.parse_error import ParseError
from declint.rules.schema_drift import SchemaDrift
from declint.rules.stale_baseline_entry import StaleBaselineEntry
from declint.rules.suppression_without_reason import SuppressionWithoutReason
from declint.rules.unknown_suppression_code import UnknownSuppressionCode
from declint.rules.unused_suppression import UnusedSuppression

ALL_RULES: tuple[type[RuleMeta], ...] = (
    ParseError,
    MissingSharedLiteral,
    DirectSdpa,
    MissingDeclaration,
    BackendLiteral,
    InvalidDeclaration,
    MetadataContract,
    MetadataBackendMismatch,
    DocsDrift,
    SchemaDrift,
    SuppressionWithoutReason,
    UnusedSuppression,
    UnknownSuppressionCode,
    StaleBaselineEntry,
)

RULES_BY_CODE: dict[str, type[RuleMeta]] = {rule.CODE: rule for rule in ALL_RULES}
