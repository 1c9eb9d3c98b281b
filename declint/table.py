"""The declared support matrix as an artifact: rendered from the index, parsed back from docs."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from declint.config import Config
from declint.facts import DYNAMIC_DEFAULT, UNSET_DEFAULT, ClassFacts, DeclEntry
from declint.index import ProjectIndex
from declint.source import split_lines
from declint.types import escape_controls

HEADER = ("model", "encoder", "backends", "reason", "default")
NOT_CONFIGURABLE = "not configurable"
NO_ENCODER = "(none)"
# GitHub-flavoured Markdown: the outer pipes of a table's lines are optional.
_HEADER_LINE = re.compile(r"^\s*\|?" + r"\|".join(rf"\s*{c}\s*" for c in HEADER) + r"\|?\s*$", re.IGNORECASE)
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PIPE = re.compile(r"(?<!\\)\|")
# GFM: a line that starts another block ends a table even when it holds a pipe: a list item
# (`- `, `* `, `+ `, `1. `, `1) `), a blockquote, an ATX heading, a fence or an HTML block.
_BLOCK_START = re.compile(
    r" {0,3}(?:[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|>|#{1,6}(?:[ \t]|$)|`{3}|~{3}|<[A-Za-z/!?])"
)


@dataclass(frozen=True, order=True)
class Row:
    model: str
    encoder: str
    backends: str
    reason: str
    default: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.model, self.encoder)


def support_matrix(index: ProjectIndex, config: Config) -> list[Row]:
    """One row per declared (model, encoder); a model declaring `{}` gets one "(none)" row."""
    rows: list[Row] = []
    models = index.models()
    names = model_names(models)
    for model in models:
        declared = index.effective_declaration(model)
        if declared is None or not declared[0].is_literal:
            continue
        declaration = declared[0]
        name = names[model.qualname]
        if not declaration.entries:
            rows.append(Row(name, NO_ENCODER, NOT_CONFIGURABLE, "no attention encoder", "-"))
        default = _default_backend(index, model, config)
        rows += [_row(name, entry, default, index) for entry in declaration.entries]
    return sorted(rows)


def left_out(index: ProjectIndex) -> list[str]:
    """The models the table has no row for: no declaration (DL102), or one that cannot be read
    without running the code (DL104)."""
    models = index.models()
    names = model_names(models)
    return sorted(
        names[model.qualname]
        for model in models
        if (declared := index.effective_declaration(model)) is None or not declared[0].is_literal
    )


def model_names(models: list[ClassFacts]) -> dict[str, str]:
    """qualname -> the model's name in the table: its class name, or, where other models share it,
    the shortest dotted tail of its qualified name that none of them ends with (`modeling_a.X`):
    rows are keyed by name, and two models named alike made one row that matched either."""
    namesakes: dict[str, list[str]] = defaultdict(list)
    for model in models:
        namesakes[model.name].append(model.qualname)
    return {qualname: _tail(qualname, group) for group in namesakes.values() for qualname in group}


def _tail(qualname: str, group: list[str]) -> str:
    parts = qualname.split(".")
    for size in range(1, len(parts) + 1):
        tail = ".".join(parts[-size:])
        if not any(other != qualname and f".{other}".endswith(f".{tail}") for other in group):
            return tail
    return qualname


def _row(name: str, entry: DeclEntry, default: str, index: ProjectIndex) -> Row:
    if entry.kind == "fixed":
        return Row(name, entry.encoder, NOT_CONFIGURABLE, entry.reason, "-")
    backends = index.entry_backends(entry)
    if backends is None:  # an invalid entry, or `get_args` of another Literal (DL104 reports both)
        return Row(name, entry.encoder, "invalid declaration", "", "-")
    return Row(name, entry.encoder, ", ".join(backends), "", default)


def _default_backend(index: ProjectIndex, model: ClassFacts, config: Config) -> str:
    """The default of the nearest class in the chain whose `get_model_defaults` sets one: a name
    that is no module-level string constant is DYNAMIC_DEFAULT, not the next class's default or
    the option's, which would be claims the code does not make."""
    chain = [model, *(facts for _, facts in index.ancestors(model) if facts is not None)]
    found = next((c.default_backend for c in chain if c.default_backend), None)
    if found is None or found == UNSET_DEFAULT:
        return str(config.get("default-backend"))
    return index.constant(found) or DYNAMIC_DEFAULT


def render(rows: list[Row], output_format: str) -> str:
    if output_format == "json":
        return json.dumps([asdict(row) for row in rows], indent=2) + "\n"
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(_escape(_cell(getattr(row, c))) for c in HEADER) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _cell(value: str) -> str:
    """A value as a table cell holds it, and as `parse_docs_table` reads it back: on one line
    (control characters escaped: a reason's newline would end the table), no edge spaces."""
    return escape_controls(value).strip()


def _escape(cell: str) -> str:
    """A pipe would end the cell; a `<` may start an HTML tag GitHub drops (`<dynamic>` rendered
    as an empty cell: red-team 61). `_cells` reads both back."""
    return cell.replace("|", "\\|").replace("<", "\\<")


@dataclass(frozen=True)
class DocsTable:
    header_line: int
    rows: tuple[tuple[int, Row], ...]  # (line, row)


def parse_docs_table(text: str) -> DocsTable | None:
    """The first Markdown table whose header is exactly HEADER (any case and spacing), outside
    fenced code blocks and HTML comments (a page showing how to write a row is no table)."""
    lines = split_lines(text.removeprefix("\ufeff"))
    for number, line in _prose(lines):
        if not _HEADER_LINE.match(line):
            continue
        rows: list[tuple[int, Row]] = []
        piped = line.strip().startswith("|")
        for offset, body in enumerate(lines[number:], number + 1):
            if offset == number + 1 and _SEPARATOR.match(body):
                continue
            cells = _cells(body) if _is_row(body, piped) else None
            if cells is None:
                break
            rows.append((offset, Row(*(cells + [""] * len(HEADER))[: len(HEADER)])))
        return DocsTable(number, tuple(rows))
    return None


def _prose(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(number, line) of the lines outside fenced code blocks and HTML comments."""
    fence, comment = "", False
    for number, line in enumerate(lines, 1):
        opening = _FENCE.match(line)
        if fence:
            if opening is not None and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
        elif comment:
            comment = "-->" not in line
        elif opening is not None:
            fence = opening.group(1)
        elif "<!--" in line and "-->" not in line.partition("<!--")[2]:
            comment = True
        else:
            yield number, line


def _is_row(line: str, piped: bool) -> bool:
    """Does `line` continue the table? Under a header with a leading pipe, only a line with one
    does (a list item or a quote holding a pipe after the table is prose); under one without, a
    line with an unescaped pipe that starts no other block (GitHub-flavoured Markdown)."""
    if piped:
        return line.strip().startswith("|")
    return _PIPE.search(line) is not None and _BLOCK_START.match(line) is None


def _cells(line: str) -> list[str] | None:
    """A row's cells; None for a line that is no row (no unescaped pipe: the table ends there)."""
    stripped = line.strip()
    if _PIPE.search(stripped) is None:
        return None
    stripped = stripped.removeprefix("|")
    if stripped.endswith("|") and not stripped.endswith("\\|"):
        stripped = stripped[:-1]
    return [part.strip().replace("\\|", "|").replace("\\<", "<") for part in _PIPE.split(stripped)]


@dataclass(frozen=True)
class Drift:
    line: int
    message: str
    row: str  # "model / encoder": what the drift is about (missing rows share the header's line)


def compare(code_rows: list[Row], docs: DocsTable) -> list[Drift]:
    """One drift per missing, extra or different row, at the docs line it concerns."""
    documented = {row.key: (line, row) for line, row in docs.rows}
    declared = {row.key: row for row in code_rows}
    drifts = []
    for key, row in sorted(declared.items()):
        if key not in documented:
            drifts.append(
                Drift(
                    docs.header_line,
                    f"{row.model} / {row.encoder} is declared ({row.backends}) but missing from the docs table",
                    _row_name(row),
                )
            )
            continue
        line, written = documented[key]
        differences = [
            f"{c} is {getattr(written, c)!r} in the docs but {_cell(getattr(row, c))!r} in the code"
            for c in HEADER[2:]
            if _differs(c, getattr(written, c), _cell(getattr(row, c)))
        ]
        if differences:
            drifts.append(Drift(line, f"{_row_name(row)}: " + "; ".join(differences), _row_name(row)))
    for key, (line, written) in sorted(documented.items()):
        if key not in declared:
            drifts.append(Drift(line, _undeclared(written, declared), _row_name(written)))
    return sorted(drifts, key=lambda d: (d.line, d.message))


def _undeclared(written: Row, declared: dict[tuple[str, str], Row]) -> str:
    """The message of a docs row no model declares; a row named by a class name that several
    models now share says so (adding a model of the same name renames the rows of both:
    red-team 61), with the names the table gives them."""
    tails = sorted(
        row.model
        for (model, encoder), row in declared.items()
        if encoder == written.encoder and model.endswith(f".{written.model}")
    )
    if len(tails) > 1:
        return (
            f"{_row_name(written)} is in the docs table, but {len(tails)} models are named {written.model} now; "
            f"the table names them {', '.join(tails)}"
        )
    return f"{_row_name(written)} is in the docs table but no model declares it"


def _differs(column: str, written: str, declared: str) -> bool:
    """Backends are a set: the order of a declaration promises nothing (`declint table` writes
    the code's). A default known only at run time is whatever the docs say it is."""
    if column == "backends":
        return _backend_set(written) != _backend_set(declared)
    return written != declared and not (column == "default" and declared == DYNAMIC_DEFAULT)


def _backend_set(cell: str) -> frozenset[str]:
    return frozenset(name for part in cell.split(",") if (name := part.strip()))


def _row_name(row: Row) -> str:
    return f"{row.model} / {row.encoder}"
