"""DL108 schema-drift."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from declint.config import Config
from declint.discovery import BUILTIN_EXCLUDES, display_path, glob_match, json_files_under
from declint.errors import SourceError
from declint.index import ProjectIndex
from declint.rule import Invalid, ProjectRule, Valid, name_matches_any
from declint.source import read_input_text
from declint.types import Finding, Position, Span

_PRUNED = frozenset(entry.rstrip("/") for entry in BUILTIN_EXCLUDES)
# `[Tt]` spells one letter in either case; such a regex is a case-insensitive word.
_EITHER_CASE = re.compile(r"\[([A-Za-z])([A-Za-z])\]")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
# A regex escape: a code point (`\x69`, `\u0069`, `\u{69}`), a property (`\p{L}`), a named
# back-reference (`\k<name>`), a control letter (`\cJ`), or a backslash and one character.
_ESCAPE = re.compile(
    r"\\(?:x([0-9A-Fa-f]{2})|u\{([0-9A-Fa-f]{1,6})\}|u([0-9A-Fa-f]{4})|[pP]\{[^}]*\}|k<[^>]*>|c[A-Za-z]|(.))", re.DOTALL
)
# Group syntax: inline flags `(?i:` / `(?i)`, named groups `(?<name>` / `(?P<name>`, `(?P=name)`.
_GROUP_SYNTAX = re.compile(r"\(\?(?:[a-zA-Z]+[:)]|P?<[A-Za-z_]\w*>|P=\w+\))")
_SCHEMA = "docs/trtllm-serve-config.schema.json"


@dataclass(frozen=True)
class Constraint:
    pointer: str
    values: frozenset[str]  # as accepted (spelling kept)
    kind: str  # "enum", "const" or "pattern"


class SchemaDrift(ProjectRule):
    """The serving JSON schemas' allowed backend values disagree with the shared Literal.

    `trtllm-serve` validates its YAML config against generated JSON schemas
    (`trtllm-serve-config.schema.json`, `trtllm-serve-disagg-config.schema.json`). They accept
    backend names case-insensitively, through a regex pattern or an enum of both spellings. When
    the Literal gains a member and the schemas are not regenerated, a valid config is rejected
    at the door; when it loses one, the schema still advertises it.

    For every property named like a backend (`backend-context-names`) in the schemas matched by
    `serving-schemas`, the values its `enum` / `const` / `pattern` accepts (through `anyOf`,
    `oneOf`, `allOf`, `items`, `additionalProperties`) are compared with the Literal's members,
    case-insensitively; each missing or extra value is reported with the file and JSON pointer,
    and so is an enum that lists only one spelling of a name while listing both for others. In a
    pattern, the words of the alternation are the names: regex syntax such as `\\s*`, `\\b`,
    `(?i:...)` or a group's name is not. A schema that cannot be read (not a regular file, larger
    than `max-file-size`, not UTF-8, not JSON, or nested too deep) is one finding, at its first
    line (at the bad byte's when not UTF-8), and the run goes on.
    """

    CODE = "DL108"
    NAME = "schema-drift"
    SUMMARY = "the serving JSON schemas' allowed backend values disagree with the Literal"
    OPTIONS = ("serving-schemas", "backend-context-names", "max-file-size")

    VALID: ClassVar = (
        Valid(
            '{\n  "properties": {\n    "attn_backend": {\n      "type": "string",\n'
            '      "pattern": "^(?i:vanilla|trtllm|flashinfer)$"\n    }\n  }\n}\n',
            path=_SCHEMA,
        ),
        Valid(
            '{\n  "properties": {\n    "encoder_attention_backend": {\n      "type": "object",\n'
            '      "additionalProperties": {"enum": ["VANILLA", "vanilla", "TRTLLM", "trtllm", "FLASHINFER", '
            '"flashinfer"]}\n    }\n  }\n}\n',
            path=_SCHEMA,
        ),
        Valid(
            '{\n  "properties": {\n    "attn_backend": {\n      "type": "string",\n'
            '      "pattern": "^\\\\s*(?i:vanilla|trtllm|flashinfer)\\\\s*$"\n    }\n  }\n}\n',
            path=_SCHEMA,
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            '{\n  "properties": {\n    "attn_backend": {\n      "type": "string",\n'
            '      "enum": ["VANILLA", "vanilla", "TRTLLM", "trtllm", "FLASHINFER_STAR_ATTENTION"]\n    }\n  }\n}\n',
            expect=((5, 0), (5, 0)),
            message='/properties/attn_backend/enum: "FLASHINFER" is a member of EncoderAttentionBackend but the '
            "schema rejects it",
            path=_SCHEMA,
        ),
        Invalid(
            '{\n  "properties": {\n    "attn_backend": {\n      "anyOf": [\n'
            '        {"pattern": "^([Vv][Aa][Nn][Ii][Ll][Ll][Aa]|[Tt][Rr][Tt][Ll][Ll][Mm])$"},\n'
            '        {"type": "null"}\n      ]\n    }\n  }\n}\n',
            expect=((5, 0),),
            message='/properties/attn_backend/anyOf/0/pattern: "FLASHINFER" is a member of EncoderAttentionBackend '
            "but the schema rejects it",
            path=_SCHEMA,
        ),
        Invalid(
            '{\n  "properties": {\n    "attn_backend": {\n'
            '      "enum": ["VANILLA", "vanilla", "TRTLLM", "FLASHINFER", "flashinfer"]\n    }\n  }\n}\n',
            expect=((4, 0),),
            message='/properties/attn_backend/enum: the schema accepts only one spelling of "TRTLLM" while it '
            "accepts both cases of other names; the server upper-cases names, so accept both",
            path=_SCHEMA,
        ),
    )

    def check_project(self, index: ProjectIndex, config: Config) -> list[Finding]:
        members = index.literal_members
        if not members:
            return []  # DL100 reports the missing Literal
        findings: list[Finding] = []
        for path in _schema_files(config):
            findings += schema_drift(path, config, frozenset(members), index.literal_name)
        return findings


def _schema_files(config: Config) -> list[Path]:
    patterns = config.str_list("serving-schemas")
    found = json_files_under(config.root, _PRUNED)
    return sorted(path for path in found if glob_match(display_path(path, config.root), patterns))


def schema_drift(path: Path, config: Config, members: frozenset[str], literal: str) -> list[Finding]:
    rel = display_path(path, config.root)
    try:
        text = read_input_text(str(path), rel, int(config.get("max-file-size")))
        document = json.loads(text)
        return _drift(rel, text, document, config, members, literal)
    except SourceError as error:  # a FIFO, a device, too large, not UTF-8: read as a source file is
        return [_finding(rel, error.line or 1, f"cannot read the schema: {error.message}")]
    except json.JSONDecodeError as error:
        return [_finding(rel, 1, f"cannot read the schema: {error}")]
    except RecursionError:  # json.loads past ~1000 levels (the walk of what it parsed stays below)
        return [_finding(rel, 1, "cannot read the schema: nesting too deep to read")]


def _drift(rel: str, text: str, document: Any, config: Config, members: frozenset[str], literal: str) -> list[Finding]:
    findings = []
    for constraint in _constraints(document, "", config.str_list("backend-context-names")):
        line = _pointer_line(text, constraint.pointer)
        for message in _compare(constraint, members, literal):
            findings.append(_finding(rel, line, f"{constraint.pointer}: {message}"))
    return findings


def _constraints(node: Any, pointer: str, patterns: tuple[str, ...]) -> Iterator[Constraint]:
    if isinstance(node, dict):
        for name, schema in sorted((node.get("properties") or {}).items()):
            child = f"{pointer}/properties/{_escape(name)}"
            if name_matches_any(name, patterns):
                yield from _allowed(schema, child)
            yield from _constraints(schema, child, patterns)
        for key, value in sorted(node.items()):
            if key != "properties" and isinstance(value, dict | list):
                yield from _constraints(value, f"{pointer}/{_escape(key)}", patterns)
    elif isinstance(node, list):
        for position, item in enumerate(node):
            yield from _constraints(item, f"{pointer}/{position}", patterns)


def _allowed(schema: Any, pointer: str) -> Iterator[Constraint]:
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("enum"), list):
        yield Constraint(f"{pointer}/enum", frozenset(str(v) for v in schema["enum"] if isinstance(v, str)), "enum")
    if isinstance(schema.get("const"), str):
        yield Constraint(f"{pointer}/const", frozenset({schema["const"]}), "const")
    if isinstance(schema.get("pattern"), str):
        yield Constraint(f"{pointer}/pattern", _pattern_words(schema["pattern"]), "pattern")
    for key in ("anyOf", "oneOf", "allOf"):
        for position, option in enumerate(schema.get(key) or []):
            yield from _allowed(option, f"{pointer}/{key}/{position}")
    for key in ("items", "additionalProperties"):
        yield from _allowed(schema.get(key), f"{pointer}/{key}")


def _pattern_words(pattern: str) -> frozenset[str]:
    """Upper-cased words a case-insensitive alternation accepts: `^(?i:vanilla|trtllm)$` -> both."""
    flattened = _ESCAPE.sub(_unescaped, pattern)
    flattened = _EITHER_CASE.sub(lambda m: m.group(1) if m.group(1).lower() == m.group(2).lower() else "", flattened)
    flattened = _GROUP_SYNTAX.sub("(", flattened)
    return frozenset(word.upper() for word in _WORD.findall(flattened))


def _unescaped(escape: re.Match[str]) -> str:
    r"""The character an escape stands for (`\x69` is "i", `\_` is "_"); a space, which ends a word,
    for a class or an assertion (`\s`, `\d`, `\w`, `\b`), a control character or a backslash."""
    code = escape.group(1) or escape.group(2) or escape.group(3)
    if code is not None:
        return chr(int(code, 16)) if int(code, 16) <= 0x10FFFF else " "
    character = escape.group(4)
    return character if character is not None and not character.isalnum() and character != "\\" else " "


def _compare(constraint: Constraint, members: frozenset[str], literal: str) -> list[str]:
    accepted = {value.upper() for value in constraint.values}
    messages = [f'"{name}" is a member of {literal} but the schema rejects it' for name in sorted(members - accepted)]
    messages += [
        f'the schema accepts "{name}", which is not a member of {literal}' for name in sorted(accepted - members)
    ]
    if constraint.kind == "enum":
        both = {
            v.upper() for v in constraint.values if v.lower() in constraint.values and v.upper() in constraint.values
        }
        if both:
            for name in sorted((accepted & members) - both):
                messages.append(
                    f'the schema accepts only one spelling of "{name}" while it accepts both cases of '
                    "other names; the server upper-cases names, so accept both"
                )
    return messages


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


def _pointer_line(text: str, pointer: str) -> int:
    """Line of a JSON pointer's last key, found by searching each key in turn.

    Hand-written because the standard json module keeps no positions; exact for the usual
    pretty-printed schemas, and at worst points at an earlier line of the same file.
    """
    offset = 0
    for segment in pointer.strip("/").split("/"):
        if segment.isdigit():
            continue
        key = segment.replace("~1", "/").replace("~0", "~")
        found = text.find(json.dumps(key), offset)
        if found < 0:
            break
        offset = found
    return text.count("\n", 0, offset) + 1


def _finding(rel: str, line: int, message: str) -> Finding:
    position = Position(line, 0)
    return Finding(SchemaDrift.CODE, SchemaDrift.NAME, rel, Span(position, position), message)
