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


# ---- anyOf / oneOf accept the union of their branches; allOf the intersection ------------------


def _dl108_text(make_tree: MakeTree, schema: str) -> list[str]:
    """DL108 findings on a schema given as text (so its lines are known)."""
    root = make_tree({SCHEMA: schema})
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL108", str(root)])
    return [line for line in result.output.splitlines() if " DL108 " in line]


def _property(schema: str) -> str:
    """A schema whose attn_backend (line 3) is `schema`, written on lines 4 and after."""
    return '{\n  "properties": {\n    "attn_backend": {\n' + schema + "\n    }\n  }\n}\n"


@pytest.mark.parametrize(
    "branches",
    [
        '"anyOf": [\n{"const": "VANILLA"},\n{"const": "TRTLLM"},\n{"const": "FLASHINFER"},\n{"type": "null"}]',
        '"oneOf": [\n{"const": "VANILLA"},\n{"const": "TRTLLM"},\n{"const": "FLASHINFER"}]',
        '"anyOf": [\n{"enum": ["VANILLA", "vanilla"]},\n{"enum": ["TRTLLM", "trtllm"]},\n'
        '{"enum": ["FLASHINFER", "flashinfer"]}]',
        '"anyOf": [\n{"enum": ["VANILLA", "TRTLLM"]},\n{"pattern": "^(?i:flashinfer)$"}]',
        '"anyOf": [\n{"anyOf": [{"const": "VANILLA"}, {"const": "TRTLLM"}]},\n{"oneOf": [{"const": "FLASHINFER"}]}]',
        '"allOf": [\n{"enum": ["VANILLA", "TRTLLM", "FLASHINFER", "OTHER"]},\n'
        '{"pattern": "^(?i:vanilla|trtllm|flashinfer)$"}]',
    ],
    ids=["anyOf-consts", "oneOf-consts", "anyOf-enums", "anyOf-enum-pattern", "nested", "allOf-intersection"],
)
def test_a_union_of_branches_that_accepts_every_member_is_no_finding(make_tree: MakeTree, branches: str) -> None:
    assert _dl108_text(make_tree, _property(branches)) == []


def test_a_union_that_misses_a_member_is_reported_once_at_the_union(make_tree: MakeTree) -> None:
    schema = _property('"anyOf": [\n{"const": "VANILLA"},\n{"const": "TRTLLM"},\n{"type": "null"}\n]')
    assert _dl108_text(make_tree, schema) == [
        "docs/trtllm-serve-config.schema.json:4:1: DL108 /properties/attn_backend/anyOf: "
        '"FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it'
    ]


def test_a_union_that_accepts_a_non_member_is_reported_at_the_branch_that_accepts_it(make_tree: MakeTree) -> None:
    schema = _property(
        '"oneOf": [\n{"enum": ["VANILLA", "TRTLLM", "FLASHINFER"]},\n{"type": "null"},\n'
        '{"const": "FLASHINFER_STAR_ATTENTION"}\n]'
    )
    assert _dl108_text(make_tree, schema) == [
        "docs/trtllm-serve-config.schema.json:7:1: DL108 /properties/attn_backend/oneOf/2/const: "
        'the schema accepts "FLASHINFER_STAR_ATTENTION", which is not a member of EncoderAttentionBackend'
    ]


def test_one_spelling_among_branches_that_list_both_is_reported_at_its_branch(make_tree: MakeTree) -> None:
    schema = _property(
        '"anyOf": [\n{"enum": ["VANILLA", "vanilla"]},\n{"enum": ["TRTLLM"]},\n'
        '{"enum": ["FLASHINFER", "flashinfer"]}\n]'
    )
    assert _dl108_text(make_tree, schema) == [
        "docs/trtllm-serve-config.schema.json:6:1: DL108 /properties/attn_backend/anyOf/1/enum: the schema accepts "
        'only one spelling of "TRTLLM" while it accepts both cases of other names; the server upper-cases names, '
        "so accept both"
    ]


def test_a_branch_that_accepts_any_string_makes_the_union_accept_every_member(make_tree: MakeTree) -> None:
    schema = _property('"anyOf": [\n{"enum": ["VANILLA"]},\n{"type": "string"}\n]')
    assert _dl108_text(make_tree, schema) == []


def test_an_intersection_rejects_what_one_of_its_branches_rejects(make_tree: MakeTree) -> None:
    schema = _property(
        '"allOf": [\n{"enum": ["VANILLA", "TRTLLM", "FLASHINFER"]},\n{"pattern": "^(?i:vanilla|trtllm)$"}\n]'
    )
    assert _dl108_text(make_tree, schema) == [
        "docs/trtllm-serve-config.schema.json:4:1: DL108 /properties/attn_backend/allOf: "
        '"FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it'
    ]


def test_the_values_of_a_map_under_pattern_properties_are_judged(make_tree: MakeTree) -> None:
    schema = _property('"type": "object",\n"patternProperties": {"^vision$": {"enum": ["VANILLA", "TRTLLM"]}}')
    assert _dl108_text(make_tree, schema) == [
        "docs/trtllm-serve-config.schema.json:5:1: DL108 /properties/attn_backend/patternProperties/^vision$/enum: "
        '"FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it'
    ]


# ---- a property of another namespace (the visual-generation attention backends) ----------------

VISUAL_GEN = """{
  "properties": {"visual_gen_config": {"$ref": "#/$defs/VisualGenConfig"}},
  "$defs": {
    "VisualGenConfig": {
      "properties": {
        "attention_backend": {"enum": ["TORCH_SDPA", "FLASHINFER"]}
      }
    }
  }
}
"""


def test_a_property_whose_names_are_mostly_not_backend_names_is_another_namespace(make_tree: MakeTree) -> None:
    assert _dl108_text(make_tree, VISUAL_GEN) == []


def test_a_property_with_one_foreign_name_among_more_members_is_still_judged(make_tree: MakeTree) -> None:
    schema = VISUAL_GEN.replace('["TORCH_SDPA", "FLASHINFER"]', '["VANILLA", "TRTLLM", "FLASHINFER", "TORCH_SDPA"]')
    assert _dl108_text(make_tree, schema) == [
        "docs/trtllm-serve-config.schema.json:6:1: DL108 /$defs/VisualGenConfig/properties/attention_backend/enum: "
        'the schema accepts "TORCH_SDPA", which is not a member of EncoderAttentionBackend'
    ]


# ---- a UTF-8 byte order mark -------------------------------------------------------------------


def test_a_schema_with_a_utf8_bom_is_read_and_its_lines_stay_right(make_tree: MakeTree) -> None:
    schema = "\ufeff" + _property('"enum": ["VANILLA", "TRTLLM"]')
    assert _dl108_text(make_tree, schema) == [
        "docs/trtllm-serve-config.schema.json:4:1: DL108 /properties/attn_backend/enum: "
        '"FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it'
    ]
