"""DL108 on a `pattern`'s regex syntax: escapes and group syntax are not backend names."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import MakeTree

SCHEMA = "docs/trtllm-serve-config.schema.json"


def _dl108(make_tree: MakeTree, pattern: str) -> list[str]:
    """DL108 findings on a schema whose attn_backend (line 4) accepts `pattern`."""
    schema = json.dumps({"properties": {"attn_backend": {"pattern": pattern}}}, indent=2) + "\n"
    root = make_tree({SCHEMA: schema})
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL108", str(root)])
    return [line for line in result.output.splitlines() if " DL108 " in line]


@pytest.mark.parametrize(
    "pattern",
    [
        r"^\s*(?i:vanilla|trtllm|flashinfer)\s*$",
        r"^\b(?i:vanilla|trtllm|flashinfer)\b\S*\d*\w*\D*\W*\B$",
        r"^(?i:vanilla|trtllm|flash\x69nfer|\u0076anilla)\t?\n?\r?$",
        r"^\p{L}*(?<name>(?i:vanilla|trtllm|flashinfer))\k<name>?(?P<again>-)?(?P=again)?$",
        r"^[Vv][Aa][Nn][Ii][Ll][Ll][Aa]\s*$|^(?i:trtllm|flashinfer)\.?$",
    ],
)
def test_regex_escapes_and_group_names_are_not_backend_names(make_tree: MakeTree, pattern: str) -> None:
    assert _dl108(make_tree, pattern) == []


def test_a_pattern_with_escapes_that_misses_a_member_is_still_reported(make_tree: MakeTree) -> None:
    assert _dl108(make_tree, r"^\s*(?i:vanilla|trtllm)\s*$") == [
        "docs/trtllm-serve-config.schema.json:4:1: DL108 /properties/attn_backend/pattern: "
        '"FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it'
    ]


def test_an_escaped_punctuation_mark_or_code_point_stays_part_of_the_name(make_tree: MakeTree) -> None:
    assert _dl108(make_tree, r"^(?i:vanilla|trtllm|flashinfer|flashinfer\_star|trtll\x6d2)$") == [
        "docs/trtllm-serve-config.schema.json:4:1: DL108 /properties/attn_backend/pattern: "
        'the schema accepts "FLASHINFER_STAR", which is not a member of EncoderAttentionBackend',
        "docs/trtllm-serve-config.schema.json:4:1: DL108 /properties/attn_backend/pattern: "
        'the schema accepts "TRTLLM2", which is not a member of EncoderAttentionBackend',
    ]
