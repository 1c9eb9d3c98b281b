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


def test_an_optional_group_adds_the_whole_name_it_completes(make_tree: MakeTree) -> None:
    """Red-team 53: `flashinfer(_star_attention)?` accepts FLASHINFER_STAR_ATTENTION; the words of
    the pattern named "STAR_ATTENTION" instead."""
    assert _dl108(make_tree, "^(?i:vanilla|trtllm|flashinfer(_star_attention)?)$") == [
        "docs/trtllm-serve-config.schema.json:4:1: DL108 /properties/attn_backend/pattern: "
        'the schema accepts "FLASHINFER_STAR_ATTENTION", which is not a member of EncoderAttentionBackend'
    ]
    assert _dl108(make_tree, "^(?i:vanilla|trt(llm)|flash(infer))$") == []


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


LLM_ARGS = "tensorrt_llm/llmapi/llm_args.py"
# The project's Literals: the shared one, the visual-generation one, and MoE's.
LITERALS = (
    "from typing import Literal\n\n"
    'EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'
    'VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]\n'
    'MoeBackend = Literal["CUTLASS", "TRTLLM", "VANILLA", "DEEPGEMM"]\n'
)


def _dl108_with_literals(make_tree: MakeTree, schema: str) -> list[str]:
    root = make_tree({SCHEMA: schema, LLM_ARGS: LITERALS})
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL108", str(root)])
    return [line for line in result.output.splitlines() if " DL108 " in line]


def test_a_property_accepting_exactly_another_literals_members_is_another_namespace(make_tree: MakeTree) -> None:
    assert _dl108_with_literals(make_tree, VISUAL_GEN) == []


@pytest.mark.parametrize(
    "accepted",
    ['"enum": ["torch_sdpa", "FlashInfer"]', '"pattern": "^(?i:torch_sdpa|flashinfer)$"', '"const": "X"'],
)
def test_another_literals_members_in_any_case_or_spelling_are_another_namespace(
    make_tree: MakeTree, accepted: str
) -> None:
    literals = LITERALS + 'OneName = Literal["X"]\n'
    schema = VISUAL_GEN.replace('"enum": ["TORCH_SDPA", "FLASHINFER"]', accepted)
    root = make_tree({SCHEMA: schema, LLM_ARGS: literals})
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL108", str(root)])
    assert [line for line in result.output.splitlines() if " DL108 " in line] == []


def test_the_visual_gen_names_are_judged_where_no_literal_of_the_project_has_them(make_tree: MakeTree) -> None:
    assert _dl108_text(make_tree, VISUAL_GEN) == [
        "docs/trtllm-serve-config.schema.json:6:1: DL108 /$defs/VisualGenConfig/properties/attention_backend/enum: "
        '"TRTLLM" is a member of EncoderAttentionBackend but the schema rejects it',
        "docs/trtllm-serve-config.schema.json:6:1: DL108 /$defs/VisualGenConfig/properties/attention_backend/enum: "
        '"VANILLA" is a member of EncoderAttentionBackend but the schema rejects it',
        "docs/trtllm-serve-config.schema.json:6:1: DL108 /$defs/VisualGenConfig/properties/attention_backend/enum: "
        'the schema accepts "TORCH_SDPA", which is not a member of EncoderAttentionBackend',
    ]


def _attn_backend(accepted: str) -> str:
    """A schema whose attn_backend (line 3) accepts `accepted`."""
    return '{\n  "properties": {\n    "attn_backend": {' + accepted + "}\n  }\n}\n"


def _at_line_3(*messages: str) -> list[str]:
    return [f"docs/trtllm-serve-config.schema.json:3:1: DL108 /properties/attn_backend/{m}" for m in messages]


@pytest.mark.parametrize(
    ("accepted", "expected"),
    [
        (
            '"enum": ["TRTLLM", "trtllm", "TORCH", "torch"]',
            _at_line_3(
                'enum: "FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it',
                'enum: "VANILLA" is a member of EncoderAttentionBackend but the schema rejects it',
                'enum: the schema accepts "TORCH", which is not a member of EncoderAttentionBackend',
            ),
        ),
        (
            '"pattern": "^(?i:trtllm|sdpa)$"',
            _at_line_3(
                'pattern: "FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it',
                'pattern: "VANILLA" is a member of EncoderAttentionBackend but the schema rejects it',
                'pattern: the schema accepts "SDPA", which is not a member of EncoderAttentionBackend',
            ),
        ),
        (
            '"enum": ["TRTLLM", "FLASHINFER", "XFORMERS", "SDPA"]',
            _at_line_3(
                'enum: "VANILLA" is a member of EncoderAttentionBackend but the schema rejects it',
                'enum: the schema accepts "SDPA", which is not a member of EncoderAttentionBackend',
                'enum: the schema accepts "XFORMERS", which is not a member of EncoderAttentionBackend',
            ),
        ),
        (  # a subset of another Literal's members is no other namespace: MoE has two more
            '"enum": ["TRTLLM", "CUTLASS"]',
            _at_line_3(
                'enum: "FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it',
                'enum: "VANILLA" is a member of EncoderAttentionBackend but the schema rejects it',
                'enum: the schema accepts "CUTLASS", which is not a member of EncoderAttentionBackend',
            ),
        ),
    ],
)
def test_our_property_with_as_many_foreign_names_as_members_is_judged(
    make_tree: MakeTree, accepted: str, expected: list[str]
) -> None:
    # The other Literals are in the project: only exactly their members make another namespace.
    assert _dl108_with_literals(make_tree, _attn_backend(accepted)) == expected


def test_a_property_with_one_foreign_name_among_more_members_is_still_judged(make_tree: MakeTree) -> None:
    schema = VISUAL_GEN.replace('["TORCH_SDPA", "FLASHINFER"]', '["VANILLA", "TRTLLM", "FLASHINFER", "TORCH_SDPA"]')
    assert _dl108_with_literals(make_tree, schema) == [
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


def test_a_literal_of_backend_names_only_is_no_other_namespace(make_tree: MakeTree) -> None:
    """A project Literal of some other setting that holds only backend names (a subset of ours)
    hid a schema of ours that lost FLASHINFER: only a Literal with a name that is no backend name
    (VisualGenAttentionBackend's TORCH_SDPA) makes another namespace."""
    literals = LITERALS + 'KvCacheBackend = Literal["VANILLA", "TRTLLM"]\nSamplerKind = Literal["TRTLLM"]\n'
    schema = _attn_backend('"enum": ["VANILLA", "TRTLLM"]')
    root = make_tree({SCHEMA: schema, LLM_ARGS: literals})
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL108", str(root)])
    assert [line for line in result.output.splitlines() if " DL108 " in line] == [
        "docs/trtllm-serve-config.schema.json:3:1: DL108 /properties/attn_backend/enum: "
        '"FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it'
    ]
