"""Lines as Python numbers them: only \\r\\n, \\n and a lone \\r end a line. str.splitlines also
splits at \\v, \\f, \\x1c-\\x1e, \\x85, U+2028 and U+2029; every report, fingerprint and preview
that used it put the lines after one of those on the wrong line."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from declint.baseline import Baseline, Entry
from declint.previews import text_edits, unified_diff
from declint.reporting.model import Edit
from declint.source import split_lines, split_lines_keepends
from declint.suppressions import _OTHER_COMMENT, parse_suppressions
from declint.table import parse_docs_table
from declint.types import Position

# Characters str.splitlines splits at and Python does not.
NOT_LINE_ENDS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
ENDINGS = ("\n", "\r\n", "\r")


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", []),
        ("a", ["a"]),
        ("a\n", ["a"]),
        ("a\n\n", ["a", ""]),
        ("a\r\nb\rc\u2028d\x0ce\n", ["a", "b", "c\u2028d\x0ce"]),
        ("\r\r\n\n", ["", "", ""]),
    ],
)
def test_split_lines(text: str, lines: list[str]) -> None:
    assert split_lines(text) == lines
    assert [line.rstrip("\r\n") for line in split_lines_keepends(text)] == lines
    assert "".join(split_lines_keepends(text)) == text


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(st.sampled_from(("a", " ", "#", *NOT_LINE_ENDS)), max_size=6), st.sampled_from(ENDINGS)),
        min_size=1,
        max_size=8,
    )
)
def test_lines_and_suppressions_are_numbered_as_ast_numbers_them(lines: list[tuple[str, str]]) -> None:
    """Statement N, with a suppression comment holding characters str.splitlines splits at, is
    on line N for ast, for `split_lines` and for the suppressions."""
    text = "".join(f"x{n} = 1  # declint: ignore[DL103] {body}{end}" for n, (body, end) in enumerate(lines, 1))
    assert [node.lineno for node in ast.parse(text).body] == list(range(1, len(lines) + 1))
    numbered = split_lines(text)
    assert [line.partition(" ")[0] for line in numbered] == [f"x{n}" for n in range(1, len(lines) + 1)]
    # A reason ends where a comment of another tool starts (" # "): see suppressions.Marker.
    assert [(s.line, s.column, s.reason) for s in parse_suppressions(text)] == [
        (n, len(f"x{n} = 1  "), _OTHER_COMMENT.split(" " + body, maxsplit=1)[0].strip(" "))
        for n, (body, _) in enumerate(lines, 1)
    ]


@pytest.mark.parametrize("separator", NOT_LINE_ENDS)
def test_preview_edits_and_diff_number_lines_as_python(separator: str) -> None:
    old = f'X = "a{separator}b"\n\n\ny = 1  # declint: ignore[DL103] stale\n'
    new = f'X = "a{separator}b"\n\n\ny = 1\n'
    edits, line_edits = text_edits(old, new)
    assert edits == (Edit(Position(4, 5), Position(4, 37), ""),)
    assert line_edits == (Edit(Position(4, 0), Position(5, 0), "y = 1\n"),)
    assert unified_diff("m.py", old, new, context=0).splitlines()[2] == "@@ -4 +4 @@"


def test_docs_table_and_baseline_positions_number_lines_as_python() -> None:
    table = (
        "Intro\u2028still the first line\n\n| Model | Encoder | Backends | Reason | Default |\n"
        "|---|---|---|---|---|\n| Qwen | vision | VANILLA | - | VANILLA |\n"
    )
    parsed = parse_docs_table(table)
    assert parsed is not None
    assert (parsed.header_line, [line for line, _ in parsed.rows]) == (3, [5])
    entry = Entry("m.py", "DL103", "f", 'backend name "a\u2028b"', "0123456789abcdef")
    text = '{\n  "entries": [\n    {"message": "a\u2028b",\n     "fingerprint": "0123456789abcdef"}\n  ]\n}\n'
    assert Baseline((entry,), text).position_of(entry) == Position(4, 5)
