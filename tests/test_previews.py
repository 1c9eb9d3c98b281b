"""Preview diffs and edits compare only the lines a fix changed (with context), yet describe the
whole file: hunk line numbers, edit positions and the text they produce are the file's."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from declint.previews import text_edits, unified_diff
from declint.reporting.model import Edit

_LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "    d = 1\n", "\n"]), max_size=40)
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")


def _apply(text: str, edits: tuple[Edit, ...]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[min(line - 1, len(lines))] + column

    for edit in sorted(edits, key=lambda e: (e.start.line, e.start.column), reverse=True):
        begin, end = offset(edit.start.line, edit.start.column), offset(edit.end.line, edit.end.column)
        text = text[:begin] + edit.content + text[end:]
    return text


def _check_hunks(diff: str, old: list[str], new: list[str]) -> None:
    lines = diff.splitlines(keepends=True)[2:]  # past the ---/+++ header
    position = 0
    while position < len(lines):
        hunk = _HUNK.match(lines[position].rstrip("\n"))
        assert hunk is not None, lines[position]
        old_line, new_line = int(hunk.group(1)), int(hunk.group(3))
        old_line, new_line = max(old_line, 1) if hunk.group(2) != "0" else old_line + 1, new_line
        new_line = max(new_line, 1) if hunk.group(4) != "0" else new_line + 1
        position += 1
        while position < len(lines) and not lines[position].startswith("@@"):
            kind, text = lines[position][0], lines[position][1:]
            if kind in " -":
                assert old[old_line - 1] == text
                old_line += 1
            if kind in " +":
                assert new[new_line - 1] == text
                new_line += 1
            position += 1


@settings(max_examples=300, derandomize=True, deadline=None)
@given(before=_LINES, middle_old=_LINES, middle_new=_LINES, after=_LINES)
def test_edits_and_diff_describe_the_whole_file(
    before: list[str], middle_old: list[str], middle_new: list[str], after: list[str]
) -> None:
    old, new = before + middle_old + after, before + middle_new + after
    edits, line_edits = text_edits("".join(old), "".join(new))
    assert _apply("".join(old), edits) == "".join(new)
    assert _apply("".join(old), line_edits) == "".join(new)
    _check_hunks(unified_diff("m.py", "".join(old), "".join(new), context=1), old, new)


def test_a_change_deep_in_a_file_is_numbered_where_it_is() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 101))
    new = old.replace("line 50\n", "line fifty\n")
    assert unified_diff("m.py", old, new, context=1) == (
        "--- a/m.py\n+++ b/m.py\n@@ -49,3 +49,3 @@\n line 49\n-line 50\n+line fifty\n line 51\n"
    )
    edits, line_edits = text_edits(old, new)
    assert [(e.start.line, e.start.column, e.end.line, e.end.column, e.content) for e in edits] == [
        (50, 5, 50, 7, "fifty")
    ]
    assert [(e.start.line, e.end.line, e.content) for e in line_edits] == [(50, 51, "line fifty\n")]
