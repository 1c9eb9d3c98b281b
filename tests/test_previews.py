"""Preview diffs and edits compare only the lines a fix changed (with context), yet describe the
whole file: hunk line numbers, edit positions and the text they produce are the file's."""

from __future__ import annotations

import re
from pathlib import Path

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


_COMMENT_CASES = (
    "x = 1  # declint: ignore[DL101] r\n",
    "x = 1  # declint: ignore[DL101, DL103] two codes\n",
    "x = 1;  # declint: ignore[DL101] r\n",
    "# declint: ignore[DL101] r\nx = 1\n",
    "def f():\n    # declint: ignore[DL101] r\n    return 1\n",
    "def f():\n    return 1  # noqa # declint: ignore[DL101] r\n",
    "y = foo(\n    a,  # declint: ignore[DL101] r\n    # declint: ignore[DL103] own line\n    b)\n",
    "y = foo(  # declint: ignore[DL101] r\n    a)\n",
    "if x:  # declint: ignore[DL101] r\n    pass\n",
    "class A:\n    x = 1\n    # declint: ignore[DL101] at the end of a block\n",
    "x = 1  # declint: ignore[DL101] no newline at the end",
    "x = 1\r\n# declint: ignore[DL101] r\r\ny = 2  # declint: ignore[DL101] r\r\n",
    "x = 1\t# declint: ignore[DL101] r # declint: ignore[DL103] s\n",
    "# c\n# declint: ignore[DL101] r\n# declint: ignore[DL101] r\n# declint: ignore[DL101] r\nx = 1\n",
    "x = [\n    1,\n]  # declint: ignore[DL101] r\n",
    "@dec  # declint: ignore[DL101] r\ndef f():\n    pass\n",
    "x = 1  # before # declint: ignore[DL101] r  # type: ignore\n",
    "x = (1 +\n     2)  # declint: ignore[DL101] r\n",
    "x = 1 \\\n    + 2  # declint: ignore[DL101] r\n",
    "x = 1\n\n\n# declint: ignore[DL101] r\n\n\n",
    # red-team 50: after a backslash continuation, at the end without a newline, alone in the file
    "x = 1 \\\n# declint: ignore[DL101] reason\ny = 2\n",
    "x = 1\n# declint: ignore[DL101] reason",
    "# declint: ignore[DL101] reason\n",
)


def _every_suppression_fix(text: str) -> list[Fix]:
    """A `remove-suppression-code` fix for every code of every suppression comment of `text`."""
    import io
    import tokenize

    from declint.suppressions import markers

    found = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.COMMENT:
            continue
        for marker in markers(token.string):
            for code in token.string[marker.codes_start : marker.codes_end].split(","):
                if code.strip():
                    args = (code.strip(), str(marker.start))
                    found.append(Fix("remove-suppression-code", Applicability.SAFE, "", Position(*token.start), args))
    return found


def test_a_preview_spliced_as_text_is_the_transforms_preview() -> None:
    """A `remove-suppression-code` preview (DL902) spliced at its comment, and a `replace-string`
    one (DL104) at its string, with edits and diff from the lines around it: the same preview as
    the transform's text compared with the whole file gives, or none where the transform decides
    (red-team 47: thousands of previews of one file were quadratic)."""
    from declint import fix_transforms, previews
    from declint.source import decode_source
    from tests.conftest import DEMO

    demo = [p.read_text(encoding="utf-8") for p in sorted(DEMO.rglob("*.py"))]
    cases = [
        *((text, _every_suppression_fix(text)) for text in [*_COMMENT_CASES, *demo]),
        *((text, _every_string_fix(text)) for text in _STRING_CASES),
    ]
    spliced = declined = 0
    for text, fixes in cases:
        source = decode_source(text.encode(), "m.py")
        lines = previews._Lines(text)
        for fix in fixes:
            splice = previews._SPLICES[fix.kind](lines, fix)
            applied = fix_transforms.apply_fixes(source, [fix], "m")
            if splice is None:
                declined += 1
                continue
            assert applied.applied, (text, fix)
            expected_edits = text_edits(text, applied.text)
            expected_diff = unified_diff("m.py", text, applied.text, context=1)
            preview = previews._spliced_preview("m.py", lines, fix, splice)
            assert (preview.edits, preview.line_edits, preview.diff) == (*expected_edits, expected_diff), (text, fix)
            spliced += 1
    # declined: after `;`, after a `\\` line, a last line without its newline or in a file of no code;
    # b'f', rb'g', Br"h"
    assert spliced > 50 and declined == 7


def test_files_of_the_same_content_and_module_get_previews_naming_their_own_path(tmp_path: Path) -> None:
    """Red-team 54: previews were kept by content and module name, and a diff names its file:
    `a/tool.py` and `b/tool.py` (module `tool` both) shared one, and a file moved kept its old
    path in the cached one."""
    from click.testing import CliRunner

    from declint.cli import cli

    (tmp_path / "pyproject.toml").write_text('[tool.declint]\nroots = ["."]\n')
    text = "x = 1  # declint: ignore[DL101] legacy reason\n"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tool.py").write_text(text)

    def headers(*options: str) -> list[str]:
        output = CliRunner().invoke(cli, ["check", *options, "--format", "full", str(tmp_path)]).output
        return [line.strip() for line in output.splitlines() if line.strip().startswith("--- ")]

    assert headers("--no-cache") == ["--- a/a/tool.py", "--- a/b/tool.py"]
    assert headers() == ["--- a/a/tool.py", "--- a/b/tool.py"]
    (tmp_path / "a" / "tool.py").unlink()
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "tool.py").write_text(text)
    assert headers() == ["--- a/b/tool.py", "--- a/c/tool.py"]  # from the cache
