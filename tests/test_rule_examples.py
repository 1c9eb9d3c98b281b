"""Every rule's VALID/INVALID examples, pinned to code, line, column (and message when given)."""

from __future__ import annotations

import pytest

from declint.rule import Invalid, RuleMeta, Valid
from declint.rules import ALL_RULES
from declint.testing import run_example

VALID = [pytest.param(rule, ex, id=f"{rule.CODE}-valid-{n}") for rule in ALL_RULES for n, ex in enumerate(rule.VALID)]
INVALID = [
    pytest.param(rule, ex, id=f"{rule.CODE}-invalid-{n}") for rule in ALL_RULES for n, ex in enumerate(rule.INVALID)
]


@pytest.mark.parametrize(("rule", "example"), VALID)
def test_valid_example_has_no_finding(rule: type[RuleMeta], example: Valid) -> None:
    assert run_example(rule, example) == []


@pytest.mark.parametrize(("rule", "example"), INVALID)
def test_invalid_example_reports_exactly(rule: type[RuleMeta], example: Invalid) -> None:
    findings = run_example(rule, example)
    assert sorted((f.line, f.column) for f in findings) == sorted(example.expect)
    if example.message is not None:
        assert findings[0].message == example.message


def test_every_rule_has_examples() -> None:
    for rule in ALL_RULES:
        assert rule.INVALID, f"{rule.CODE} has no INVALID example"
