"""DL108 schema-drift."""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

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
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace
_COMBINATORS = ("anyOf", "oneOf", "allOf")
# The example project's llm_args with the visual-generation Literal beside the shared one.
_VISUAL_GEN_LITERALS = (
    "from typing import Literal\n\n"
    'EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'
    'VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]\n'
)


class Accepted(NamedTuple):
    """The strings a schema accepts, as far as DL108 reads them; names compared upper-cased."""

    at: str  # where a member it rejects is reported: its one constraint, else the node combining several
    names: dict[str, str]  # upper-cased name -> pointer of the (first) constraint that accepts it
    spellings: frozenset[str] = frozenset()  # as an enum or a const lists them
    caseless: frozenset[str] = frozenset()  # a pattern's words, accepted in any case
    constrained: bool = True  # False: no string at all (`{"type": "null"}`), which no enum narrows


class SchemaDrift(ProjectRule):
    """The serving JSON schemas' allowed backend values disagree with the shared Literal.

    `trtllm-serve` validates its YAML config against generated JSON schemas
    (`trtllm-serve-config.schema.json`, `trtllm-serve-disagg-config.schema.json`). They accept
    backend names case-insensitively, through a regex pattern or an enum of both spellings. When
    the Literal gains a member and the schemas are not regenerated, a valid config is rejected
    at the door; when it loses one, the schema still advertises it.

    For every property named like a backend (`backend-context-names`) in the schemas matched by
    `serving-schemas`, the values it accepts are compared with the Literal's members,
    case-insensitively; each missing or extra value is reported with the file and JSON pointer,
    and so is an enum that lists only one spelling of a name while listing both for others. The
    values are read from `enum`, `const` and `pattern`, combined as JSON Schema does: `anyOf` and
    `oneOf` accept what any branch accepts (a branch of any string, such as `{"type": "string"}`,
    accepts every name), `allOf` and a schema's own keywords what all of them accept; a branch that
    takes no string (`{"type": "null"}`) adds nothing. A member rejected is reported at the one
    constraint, or at the `anyOf` / `oneOf` / `allOf` that combines several; a value accepted, at
    the constraint that accepts it. The values a property holds (`items`, `additionalProperties`,
    `patternProperties`) are judged on their own; a `$ref` is not followed (its definition is
    judged where it has a backend-named property). A pattern that matches a finite set of
    strings (literals, alternations, groups, optional parts, classes of letters: as Python's
    regex parser reads it) accepts those strings, `flashinfer(_star_attention)?` both names;
    in any other pattern, the words of the alternation are the names: regex syntax such as
    `\\s*`, `\\b`, `(?i:...)` or a group's name is not.

    A property of another namespace is not judged: one whose accepted names are, case-insensitively,
    exactly the members of another `typing.Literal` of the project (a visual-generation config's
    `attention_backend` of `TORCH_SDPA` and `FLASHINFER`, generated from
    `VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]`), as DL103 takes a value
    typed by another Literal for another namespace, when that Literal has a name that is no
    backend name (a member or an `extra-backend-names` entry): a Literal of backend names only,
    `Literal["VANILLA", "TRTLLM"]` of some other setting, is no other namespace. Any other set of
    names is judged, however few of them are members: a stale schema of ours may have lost most
    of its names.

    A schema that cannot be read (not a regular file, larger than `max-file-size`, not UTF-8,
    not JSON, or nested too deep) is one finding, at its first line (at the bad byte's when not
    UTF-8), and the run goes on; a UTF-8 byte order mark is skipped, as RFC 8259 allows.
    """

    CODE = "DL108"
    NAME = "schema-drift"
    SUMMARY = "the serving JSON schemas' allowed backend values disagree with the Literal"
    OPTIONS = ("serving-schemas", "backend-context-names", "extra-backend-names", "max-file-size")
    # Compares the Literal's members with JSON schemas: no position of a fact.
    SHOWS_POSITIONS = False

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
        Valid(
            '{\n  "properties": {\n    "attn_backend": {\n      "anyOf": [\n        {"const": "VANILLA"},\n'
            '        {"const": "TRTLLM"},\n        {"const": "FLASHINFER"},\n        {"type": "null"}\n      ]\n'
            "    }\n  }\n}\n",
            path=_SCHEMA,
        ),
        Valid(
            '{\n  "properties": {\n    "visual_gen_config": {\n      "properties": {\n'
            '        "attention_backend": {"enum": ["TORCH_SDPA", "FLASHINFER"]}\n      }\n    }\n  }\n}\n',
            path=_SCHEMA,
            files=(("tensorrt_llm/llmapi/llm_args.py", _VISUAL_GEN_LITERALS),),
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
        namespaces = other_namespaces(index, config)
        for path in _schema_files(config):
            findings += schema_drift(path, config, frozenset(members), index.literal_name, namespaces)
        return findings


def other_namespaces(index: ProjectIndex, config: Config) -> frozenset[frozenset[str]]:
    """The upper-cased member sets of the project's Literals of another namespace: a schema
    property accepting exactly one of them is generated from it. A Literal is of another namespace
    when it has a member that is no backend name (VisualGenAttentionBackend's TORCH_SDPA); one of
    backend names only (a copy of the shared Literal, or a subset, `Literal["VANILLA", "TRTLLM"]`
    of some other setting) would hide a schema of ours that lost members, as DL103 reads it too."""
    ours = frozenset(name.upper() for name in (*(index.literal_members or ()), *config.str_list("extra-backend-names")))
    found = set()
    for module in index.modules.values():
        for literal in module.literals:
            names = frozenset(name.upper() for name in literal.members)
            if literal.qualname != index.literal_home and not names <= ours:
                found.add(names)
    return frozenset(found)


def _schema_files(config: Config) -> list[Path]:
    patterns = config.str_list("serving-schemas")
    found = json_files_under(config.root, _PRUNED)
    return sorted(path for path in found if glob_match(display_path(path, config.root), patterns))


def schema_drift(
    path: Path, config: Config, members: frozenset[str], literal: str, namespaces: frozenset[frozenset[str]]
) -> list[Finding]:
    rel = display_path(path, config.root)
    try:
        # RFC 8259 lets a parser ignore a byte order mark; it holds no newline, so lines stay right.
        text = read_input_text(str(path), rel, int(config.get("max-file-size"))).removeprefix("\ufeff")
        document = json.loads(text)
        return _drift(rel, text, document, config, members, literal, namespaces)
    except SourceError as error:  # a FIFO, a device, too large, not UTF-8: read as a source file is
        return [_finding(rel, error.line or 1, f"cannot read the schema: {error.message}")]
    except json.JSONDecodeError as error:
        return [_finding(rel, 1, f"cannot read the schema: {error}")]
    except RecursionError:  # json.loads (3.11: past ~1000 levels), or the walk of what it parsed (3.13's reads ~9,000)
        return [_finding(rel, 1, "cannot read the schema: nesting too deep to read")]


def _drift(
    rel: str,
    text: str,
    document: Any,
    config: Config,
    members: frozenset[str],
    literal: str,
    namespaces: frozenset[frozenset[str]],
) -> list[Finding]:
    findings = []
    for group in _constraints(document, "", config.str_list("backend-context-names")):
        # Exactly another Literal's names: that Literal's schema, not ours drifted. A count of
        # foreign names cannot tell (a schema of ours can drift to mostly foreign names).
        if frozenset(group.names) in namespaces:
            continue
        for pointer, message in _compare(group, members, literal):
            findings.append(_finding(rel, _pointer_line(text, pointer), f"{pointer}: {message}"))
    return findings


def _constraints(node: Any, pointer: str, patterns: tuple[str, ...]) -> Iterator[Accepted]:
    if isinstance(node, dict):
        for name, schema in sorted((node.get("properties") or {}).items()):
            child = f"{pointer}/properties/{_escape(name)}"
            if name_matches_any(name, patterns):
                yield from _groups(schema, child)
            yield from _constraints(schema, child, patterns)
        for key, value in sorted(node.items()):
            if key != "properties" and isinstance(value, dict | list):
                yield from _constraints(value, f"{pointer}/{_escape(key)}", patterns)
    elif isinstance(node, list):
        for position, item in enumerate(node):
            yield from _constraints(item, f"{pointer}/{position}", patterns)


def _groups(schema: Any, pointer: str) -> Iterator[Accepted]:
    """What a backend-named property accepts, judged as one: the strings it takes (its branches'
    union or intersection), then, each on its own, the values it holds (array items, map values)."""
    own = _accepts(schema, pointer)
    if own is not None and own.constrained:
        yield own
    yield from _held(schema, pointer)


def _held(schema: Any, pointer: str) -> Iterator[Accepted]:
    """The groups of the values `schema` holds, also through its anyOf / oneOf / allOf branches."""
    if not isinstance(schema, dict):
        return
    for key in ("items", "additionalProperties"):
        yield from _groups(schema.get(key), f"{pointer}/{key}")
    held = schema.get("patternProperties")
    for name, value in sorted(held.items() if isinstance(held, dict) else ()):
        yield from _groups(value, f"{pointer}/patternProperties/{_escape(name)}")
    for key in _COMBINATORS:
        for position, option in enumerate(_branches(schema, key)):
            yield from _held(option, f"{pointer}/{key}/{position}")


def _branches(schema: dict[str, Any], key: str) -> list[Any]:
    branches = schema.get(key)
    return branches if isinstance(branches, list) else []


def _accepts(schema: Any, pointer: str) -> Accepted | None:
    """The strings `schema` accepts; None for any string (no keyword DL108 reads, or a `$ref`,
    which it does not follow). Its keywords all apply, so they intersect, allOf's branches with them."""
    if not isinstance(schema, dict):
        return None
    operands: list[Accepted | None] = [*_keywords(schema, pointer)]
    for key in _COMBINATORS:
        if key in schema:
            branches = [_accepts(b, f"{pointer}/{key}/{i}") for i, b in enumerate(_branches(schema, key))]
            combine = _intersection if key == "allOf" else _union
            operands.append(combine(branches, f"{pointer}/{key}"))
    return _intersection(operands, pointer)


def _keywords(schema: dict[str, Any], pointer: str) -> Iterator[Accepted]:
    kinds = schema.get("type")
    if isinstance(kinds, str | list) and "string" not in (kinds if isinstance(kinds, list) else [kinds]):
        yield Accepted(f"{pointer}/type", {}, constrained=False)
    if isinstance(schema.get("enum"), list):
        yield _listed([v for v in schema["enum"] if isinstance(v, str)], f"{pointer}/enum")
    if "const" in schema:
        yield _listed([schema["const"]] if isinstance(schema["const"], str) else [], f"{pointer}/const")
    if isinstance(schema.get("pattern"), str):
        words = _pattern_words(schema["pattern"])
        yield Accepted(f"{pointer}/pattern", dict.fromkeys(sorted(words), f"{pointer}/pattern"), caseless=words)


def _listed(values: list[str], pointer: str) -> Accepted:
    """An enum's or a const's strings; none (`"const": null`) narrows no string name."""
    names = dict.fromkeys((value.upper() for value in values), pointer)
    return Accepted(pointer, names, frozenset(values), constrained=bool(values))


def _union(parts: list[Accepted | None], pointer: str) -> Accepted | None:
    """anyOf / oneOf: a string passes when one branch takes it (oneOf's "only one" cannot split
    names: a name two branches take is a schema bug of its own, not drift)."""
    if not parts or None in parts:
        return None  # a branch of any string (`{"type": "string"}`): the union takes every name
    known = [part for part in parts if part is not None]
    names: dict[str, str] = {}
    for part in known:
        for name, where in part.names.items():
            names.setdefault(name, where)
    spellings = frozenset().union(*(part.spellings for part in known))
    caseless = frozenset().union(*(part.caseless for part in known))
    return _combined(known, pointer, names, spellings, caseless)


def _intersection(parts: list[Accepted | None], pointer: str) -> Accepted | None:
    """allOf, and a schema's own keywords: a string passes when every one takes it."""
    known = [part for part in parts if part is not None]
    if len(known) <= 1:
        return known[0] if known else None
    names = {name: where for name, where in known[0].names.items() if all(name in part.names for part in known)}
    spellings = frozenset(s for part in known for s in part.spellings if s.upper() in names)
    caseless = frozenset.intersection(*(part.caseless for part in known))
    return _combined(known, pointer, names, spellings, caseless)


def _combined(
    parts: list[Accepted], pointer: str, names: dict[str, str], spellings: frozenset[str], caseless: frozenset[str]
) -> Accepted:
    """What `parts` accept together: a rejected member is reported at the one part that constrains
    strings, or at the combining node (`pointer`) when several do."""
    constrained = [part for part in parts if part.constrained]
    at = constrained[0].at if len(constrained) == 1 else pointer
    return Accepted(at, names, spellings, caseless, constrained=bool(constrained))


def _pattern_words(pattern: str) -> frozenset[str]:
    """Upper-cased words a case-insensitive alternation accepts: `^(?i:vanilla|trtllm)$` -> both.
    A pattern whose language is finite is read whole (`flashinfer(_star_attention)?` accepts
    FLASHINFER and FLASHINFER_STAR_ATTENTION; red-team 53: it read STAR_ATTENTION); else its words."""
    language = _finite_language(pattern)
    if language is not None:
        return frozenset(word.upper() for string in language for word in _WORD.findall(string))
    flattened = _ESCAPE.sub(_unescaped, pattern)
    flattened = _EITHER_CASE.sub(lambda m: m.group(1) if m.group(1).lower() == m.group(2).lower() else "", flattened)
    flattened = _GROUP_SYNTAX.sub("(", flattened)
    return frozenset(word.upper() for word in _WORD.findall(flattened))


_LANGUAGE_LIMIT = 1024  # more strings than this: read the pattern's words instead
# Python's own regex parser (`re._parser` since 3.11; private, no type stubs): a pattern it
# cannot read, or a change of its output, falls back to the pattern's words.
_sre: Any = importlib.import_module("re._parser")


def _finite_language(pattern: str) -> frozenset[str] | None:
    """Every string the pattern matches where it is built of literals, alternations, groups,
    bounded repeats and character classes of literals (anchors match the empty string), as
    Python's own regex parser reads it; None for anything else (`\\s*`, ECMAScript-only syntax
    such as `\\u{69}`), or past `_LANGUAGE_LIMIT` strings."""
    try:
        strings = _sequence(list(_sre.parse(pattern)))
    except Exception:  # ECMAScript syntax Python's parser refuses, or a private API changed
        return None
    return None if strings is None else frozenset(strings)


def _sequence(items: list[Any]) -> set[str] | None:
    strings: set[str] | None = {""}
    for item in items:
        options = _item(item)
        if options is None or strings is None or len(strings) * len(options) > _LANGUAGE_LIMIT:
            return None
        strings = {head + tail for head in strings for tail in options}
    return strings


def _item(item: Any) -> set[str] | None:
    kind, value = item
    name = str(kind)
    if name == "LITERAL":
        return {chr(value)}
    if name == "AT":
        return {""}
    if name == "SUBPATTERN":
        return _sequence(list(value[-1]))
    if name == "BRANCH":
        found: set[str] = set()
        for branch in value[1]:
            strings = _sequence(list(branch))
            if strings is None:
                return None
            found |= strings
        return found
    if name in ("MAX_REPEAT", "MIN_REPEAT") and value[1] <= 4:  # `?`, `{1,2}`; not `*` or `+`
        low, high, body = value
        one = _sequence(list(body))
        return None if one is None else _repeated(one, low, high)
    if name == "IN" and all(str(kind) == "LITERAL" for kind, _ in value):
        return {chr(code) for _, code in value}
    return None


def _repeated(one: set[str], low: int, high: int) -> set[str] | None:
    """The strings of `one` repeated `low` to `high` times."""
    found: set[str] = set()
    current = {""}
    for count in range(high + 1):
        if count >= low:
            found |= current
        if count == high:
            break
        if len(current) * len(one) > _LANGUAGE_LIMIT:
            return None
        current = {head + tail for head in current for tail in one}
    return found


def _unescaped(escape: re.Match[str]) -> str:
    r"""The character an escape stands for (`\x69` is "i", `\_` is "_"); a space, which ends a word,
    for a class or an assertion (`\s`, `\d`, `\w`, `\b`), a control character or a backslash."""
    code = escape.group(1) or escape.group(2) or escape.group(3)
    if code is not None:
        return chr(int(code, 16)) if int(code, 16) <= 0x10FFFF else " "
    character = escape.group(4)
    return character if character is not None and not character.isalnum() and character != "\\" else " "


def _compare(group: Accepted, members: frozenset[str], literal: str) -> list[tuple[str, str]]:
    """(pointer, message) of each disagreement: a member rejected is reported where the property's
    accepted values are combined, a value it should not accept (or accepts in one case only) at the
    constraint that accepts it."""
    found = [
        (group.at, f'"{name}" is a member of {literal} but the schema rejects it')
        for name in sorted(members - group.names.keys())
    ]
    found += [
        (group.names[name], f'the schema accepts "{name}", which is not a member of {literal}')
        for name in sorted(group.names.keys() - members)
    ]
    exact = group.spellings
    both = {value.upper() for value in exact if value.lower() in exact and value.upper() in exact}
    if both:  # a pattern accepts either case, so its names are never one spelling
        single = {value.upper() for value in exact} & members & group.names.keys()
        found += [
            (
                group.names[name],
                f'the schema accepts only one spelling of "{name}" while it accepts both cases of '
                "other names; the server upper-cases names, so accept both",
            )
            for name in sorted(single - both - group.caseless)
        ]
    return found


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


def _pointer_line(text: str, pointer: str) -> int:
    """Line of a JSON pointer's last key, found by searching each key in turn and stepping over
    the elements before an array index (`anyOf/2` is the third branch, not the first).

    Hand-written because the standard json module keeps no positions; exact for the usual
    pretty-printed schemas, and at worst points at an earlier line of the same file.
    """
    offset = 0
    for segment in pointer.strip("/").split("/"):
        if segment.isdigit():
            offset = _element(text, offset, int(segment))
            continue
        key = segment.replace("~1", "/").replace("~0", "~")
        found = text.find(json.dumps(key), offset)
        if found < 0:
            break
        offset = found
    return text.count("\n", 0, offset) + 1


def _element(text: str, key: int, index: int) -> int:
    """Offset of element `index` of the array that is the value of the key at offset `key`; `key`
    itself where the text is not shaped so (the search then goes on from the key)."""
    try:
        position = _skip_space(text, text.index(":", key) + 1)
        if not text.startswith("[", position):
            return key
        position = _skip_space(text, position + 1)
        for _ in range(index):
            position = _skip_space(text, _DECODER.raw_decode(text, position)[1])
            if not text.startswith(",", position):
                return key
            position = _skip_space(text, position + 1)
    except (ValueError, RecursionError):  # a key found in a string, not where the pointer leads
        return key
    return position


def _skip_space(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match else position


def _finding(rel: str, line: int, message: str) -> Finding:
    position = Position(line, 0)
    return Finding(SchemaDrift.CODE, SchemaDrift.NAME, rel, Span(position, position), message)
