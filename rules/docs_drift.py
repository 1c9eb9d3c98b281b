"""DL107 docs-drift."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from declint.config import Config
from declint.discovery import display_path
from declint.errors import SourceError
from declint.index import ProjectIndex
from declint.rule import Invalid, ProjectRule, Valid
from declint.source import read_input_text
from declint.types import Finding, Position, Span

_MODELS = (
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n\n"
    "class VLModel(MultimodalModelMixin):\n"
    '    encoder_attention_backends = {"vision": ("TRTLLM", "FLASHINFER")}\n\n'
    "class AudioModel(MultimodalModelMixin):\n"
    '    encoder_attention_backends = {"audio": FixedEncoderAttention("relative-position bias")}\n'
)
_FILES = (("tensorrt_llm/_torch/models/modeling_example.py", _MODELS),)
_CONFIG = 'docs-table = "docs/encoders.md"\n'
_TABLE_HEAD = (
    "# Encoder attention backends\n\n| model | encoder | backends | reason | default |\n|---|---|---|---|---|\n"
)


class DocsDrift(ProjectRule):
    """The documentation's table of supported encoder backends disagrees with the declarations.

    Users read the docs, not the model classes, to learn which encoders take an
    `encoder_attention_backend` override. When a declaration changes and the table does not, the
    docs promise a backend the model now rejects (or hide one it accepts). `declint table`
    renders the declared matrix; this rule compares it with the Markdown table in `docs-table`
    (the first table whose header is `| model | encoder | backends | reason | default |`, outer
    pipes optional, outside fenced code blocks and HTML comments) and reports each missing, extra
    or different row at its docs line (missing rows at the header); each finding's context is its
    row (`Model / encoder`), which tells a baseline's entries apart. A model whose class name
    another model shares is named by the shortest dotted tail of its qualified name that tells
    them apart (`modeling_a.LlavaModel`). Backends compare as a set (the table writes them in
    the declaration's order). The default is the `attn_backend` that `get_model_defaults`
    returns (in a `{...}` or `dict(...)`, or set on the dict it returns: `d["attn_backend"] =`,
    `d.update(...)`), else, when its dict hands on the parent's (`**super().get_model_defaults(
    ...)`) or it defines no such method, the nearest ancestor's, else `default-backend` (a dict of
    its own without the key, or with it popped, replaces the parent's); one known only at run
    time (a call, a branch, a write under an `if`) is `<dynamic>`, and any docs value passes for
    it. The table ends, as GitHub renders it, at a line without a pipe or one that starts
    another block (a list item, a blockquote, a heading, a fence, an HTML block), and, under a
    header with a leading pipe, at a line without one.
    Fix by pasting the output of `declint table` into the page. A table file that cannot be read
    (missing, not a regular file, larger than `max-file-size`, not UTF-8) is one finding at its
    first line (at the bad byte's when not UTF-8).
    """

    CODE = "DL107"
    NAME = "docs-drift"
    SUMMARY = "the documentation's support table disagrees with the declarations"
    OPTIONS = ("docs-table", "default-backend", "max-file-size")
    # Compares the declarations' backends, reasons and defaults with a docs page: no position of a fact.
    SHOWS_POSITIONS = False

    VALID: ClassVar = (
        Valid(
            _TABLE_HEAD + "| AudioModel | audio | not configurable | relative-position bias | - |\n"
            "| VLModel | vision | TRTLLM, FLASHINFER |  | TRTLLM |\n",
            path="docs/encoders.md",
            files=_FILES,
            config=_CONFIG,
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            _TABLE_HEAD + "| VLModel | vision | VANILLA, TRTLLM, FLASHINFER |  | TRTLLM |\n"
            "| OldModel | vision | TRTLLM |  | TRTLLM |\n",
            expect=((3, 0), (5, 0), (6, 0)),
            message="AudioModel / audio is declared (not configurable) but missing from the docs table",
            path="docs/encoders.md",
            files=_FILES,
            config=_CONFIG,
        ),
    )

    def check_project(self, index: ProjectIndex, config: Config) -> list[Finding]:
        target = str(config.get("docs-table"))
        return docs_drift(index, config, config.root / target) if target else []


def docs_drift(index: ProjectIndex, config: Config, path: Path) -> list[Finding]:
    # Imported here: a run without a docs table (and a run the snapshot answers) never needs it.
    from declint.table import HEADER, compare, parse_docs_table, support_matrix

    rel = display_path(path, config.root)
    try:  # a FIFO, a device, too large, not UTF-8: refused as a source file is
        text = read_input_text(str(path), rel, int(config.get("max-file-size")))
    except SourceError as error:
        return [_finding(rel, error.line or 1, f"cannot read the docs table: {error.message}")]
    table = parse_docs_table(text)
    if table is None:
        header = "| " + " | ".join(HEADER) + " |"
        return [_finding(rel, 1, f"no encoder support table found (expected a table headed {header})")]
    drifts = compare(support_matrix(index, config), table)
    return [_finding(rel, drift.line, drift.message, drift.row) for drift in drifts]


def _finding(rel: str, line: int, message: str, row: str = "") -> Finding:
    """A finding about `row` ("model / encoder") as its context: the rows missing from the table
    all sit on its header line, and a baseline tells them apart by it (see declint.fingerprint)."""
    position = Position(line, 0)
    return Finding(DocsDrift.CODE, DocsDrift.NAME, rel, Span(position, position), message, context=row)
