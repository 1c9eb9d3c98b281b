"""Preview diffs and edits compare only the lines a fix changed (with context), yet describe the
whole file: hunk line numbers, edit positions and the text they produce are the file's."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from declint.previews import text_edits, unified_diff
from declint.reporting.model import Edit
from declint.types import Applicability, Fix, Position

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


# ---- replace-string previews without libcst's position pass ---------------------------------------
_STRING_CASES = (
    'x = {"vision": ("VANILLA", "trtllm")}\n',
    "x = ('a', r'b', R\"c\", u'd', U\"e\", b'f', rb'g', Br\"h\", f'i{1}', F\"j\")\n",
    'x = ("""one\nline two""", \'\'\'three\'\'\', "after")\n',
    'é = "ü"; y = ("naïve", "日本語")  # "not a string"\n',
    'if True:\r\n\tz = ["tab",\r\n\t     "indented"]\r\nw = "crlf"\r\n',
    's = ("implicit" "concatenation"\n     \'across\' "lines")\n',
    "t = 1 + \\\n    len('continued')\n",
    'def f(a="default", *, b=\'kw\'):\n    return {"k": [a, b, "deep"]}\n',
    'class C:\n    """Docstring."""\n    attr = "value"  # trailing\n',
    "u = 'no newline at the end'",
)


def _every_string_fix(text: str) -> list[Fix]:
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    wrapper = MetadataWrapper(cst.parse_module(text))
    positions = wrapper.resolve(PositionProvider)
    return [
        Fix("replace-string", Applicability.UNSAFE, "", Position(p.start.line, p.start.column), ("NEW_NAME",))
        for node, p in positions.items()
        if isinstance(node, cst.SimpleString)
    ]


def test_a_replace_string_preview_spliced_as_text_is_what_the_transform_writes() -> None:
    """Every string literal of varied sources and of the demo tree: the text splice gives the
    transform's text, or declines (None) exactly where the transform changes nothing."""
    from declint import fix_transforms
    from declint.previews import replaced_string
    from declint.source import decode_source
    from tests.conftest import DEMO

    demo = [p.read_text(encoding="utf-8") for p in sorted(DEMO.rglob("modeling_*.py"))]
    compared = declined = 0
    for text, step in [*((case, 1) for case in _STRING_CASES), *((file, 7) for file in demo)]:
        source = decode_source(text.encode(), "m.py")
        for fix in _every_string_fix(text)[::step]:  # each a position pass: a sample of the demo's
            applied = fix_transforms.apply_fixes(source, [fix], "m")
            spliced = replaced_string(text, fix)
            if applied.applied:
                assert spliced == applied.text, (text, fix)
                compared += 1
            else:
                assert spliced is None, (text, fix)
                declined += 1
    assert compared > 60 and declined == 3  # b'f', rb'g', Br"h" (f-strings are not SimpleStrings)
