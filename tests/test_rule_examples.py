"""Every rule's VALID/INVALID examples, pinned to code, line, column (and message when given)."""

from __future__ import annotations

import pytest

from declint.rule import Invalid, Positions, RuleMeta, Valid
from declint.rules import ALL_RULES
from declint.testing import run_example

VALID = [pytest.param(rule, ex, id=f"{rule.CODE}-valid-{n}") for rule in ALL_RULES for n, ex in enumerate(rule.VALID)]
INVALID = [
    pytest.param(rule, ex, id=f"{rule.CODE}-invalid-{n}") for rule in ALL_RULES for n, ex in enumerate(rule.INVALID)
]


@pytest.mark.parametrize(("rule", "example"), VALID)
def test_valid_example_has_no_finding(rule: type[RuleMeta], example: Valid, monkeypatch: pytest.MonkeyPatch) -> None:
    # A clean file never pays libcst's position pass (a render of the whole module, more than the
    # rules cost): DL106 asked it for every assignment, DL104 for every declaration (2026-12-02:
    # the second made a cold run's check phase 1.5x slower).
    asked: list[object] = []
    monkeypatch.setattr(Positions, "of", lambda self, node: asked.append(node))
    assert run_example(rule, example) == []
    assert asked == []


@pytest.mark.parametrize(("rule", "example"), INVALID)
def test_invalid_example_reports_exactly(rule: type[RuleMeta], example: Invalid) -> None:
    findings = run_example(rule, example)
    assert sorted((f.line, f.column) for f in findings) == sorted(example.expect)
    if example.message is not None:
        assert findings[0].message == example.message


def test_every_rule_has_examples() -> None:
    for rule in ALL_RULES:
        assert rule.INVALID, f"{rule.CODE} has no INVALID example"
