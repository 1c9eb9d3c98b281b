"""The bad-input matrix: every case gives findings or one DL000 for that file, and the run goes on.

Each test also checks a good file beside the bad one still gets its finding, so a bad file can
never hide the others.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from urllib.parse import unquote_to_bytes

import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.config import find_config_file, load_config
from declint.engine import Engine, Selection
from declint.rules import ALL_RULES, RULES_BY_CODE
from declint.syntax import syntax_problem
from tests.conftest import DEMO, MakeTree, copy_project

MODELS = "tensorrt_llm/_torch/models/"
GOOD = MODELS + "modeling_good.py"
GOOD_SOURCE = 'def is_trtllm(config):\n    return config.attn_backend == "TRTLLM"\n'
GOOD_LINE = "tensorrt_llm/_torch/models/modeling_good.py:2:35: DL103 "
LITERAL_CHECK = "def f(attn_backend):\n    return attn_backend == 'TRTLLM'\n"


def run(root: Path, *paths: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["check", *(str(root / p) for p in paths)])
    return result.exit_code, [line for line in result.output.splitlines() if ": DL" in line]


def bad_file(make_tree: MakeTree, name: str, data: bytes) -> tuple[int, list[str]]:
    root = make_tree({GOOD: GOOD_SOURCE})
    (root / MODELS / name).write_bytes(data)
    code, lines = run(root, MODELS)
    assert any(line.startswith(GOOD_LINE) for line in lines), lines
    return code, [line for line in lines if not line.startswith(GOOD_LINE)]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"def broken(:\n", ["modeling_bad.py:1:12: DL000 syntax error: invalid syntax"]),
        (b"x = '\xc3\x28'\n", ["modeling_bad.py:1:1: DL000 cannot decode as utf-8: invalid byte 0xc3 at offset 5"]),
        (b"x = 1\x00\n", ["modeling_bad.py:1:1: DL000 file contains null bytes (binary file?)"]),
        (bytes(range(256)) * 4, ["modeling_bad.py:1:1: DL000 file contains null bytes (binary file?)"]),
        (
            b"# -*- coding: klingon -*-\n",
            ["modeling_bad.py:1:1: DL000 bad encoding declaration: unknown encoding: klingon"],
        ),
        (
            b"x = " + b"(" * 2000 + b"1" + b")" * 2000 + b"\n",
            ["modeling_bad.py:1:205: DL000 syntax error: too many nested parentheses"],
        ),
        (  # red-team 54: CPython refuses it ("encoding problem: iso-8859-1 with BOM"); it was read
            b"\xef\xbb\xbf# -*- coding: latin-1 -*-\nx = 1\n",
            [
                "modeling_bad.py:1:1: DL000 bad encoding declaration: latin-1 in a file that starts with a UTF-8 "
                "byte-order mark"
            ],
        ),
    ],
    ids=["syntax", "invalid-utf8", "null-bytes", "binary", "bad-cookie", "deep-nesting", "bom-and-cookie"],
)
def test_bad_bytes_give_one_dl000(make_tree: MakeTree, data: bytes, expected: list[str]) -> None:
    code, lines = bad_file(make_tree, "modeling_bad.py", data)
    assert code == 1
    assert lines == ["tensorrt_llm/_torch/models/" + line for line in expected]


LATER = "(under Python 3.11, which runs declint; the file is valid for a later Python: run declint with that one)"


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the syntax of Python 3.12, rejected by 3.11 only")
@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"type Alias = list[int]\n", "modeling_bad.py:1:6: DL000 syntax error: invalid syntax " + LATER),
        (  # a needle: parsed for the index's facts, not by the syntax check
            b"attn_backend = 'x'\n\nclass Box[T]:\n    pass\n",
            "modeling_bad.py:3:10: DL000 syntax error: invalid syntax " + LATER,
        ),
        (b'x = f"{"nested"}"\n', "modeling_bad.py:1:9: DL000 syntax error: f-string: expecting '}' " + LATER),
    ],
    ids=["type-statement", "generic-class-indexed", "nested-quotes-f-string"],
)
def test_a_later_pythons_syntax_is_named_as_such(make_tree: MakeTree, data: bytes, expected: str) -> None:
    code, lines = bad_file(make_tree, "modeling_bad.py", data)
    assert code == 1
    assert lines == ["tensorrt_llm/_torch/models/" + expected]


@pytest.mark.parametrize(
    "text",
    [
        "def broken(:\n",
        "f() = 1\n",
        "del f()\n",
        'print "x"\n',
        "f(**k, *a)\n",
        "x := 1\n",
        "def f(x=1, y): pass\n",
        "f'{x!z}'\n",
        "def f(*): pass\n",
        "try:\n    pass\nexcept* E:\n    pass\nexcept F:\n    pass\n",
        "x = 1 if y else\n",
        "".join(" " * depth + "if x:\n" for depth in range(120)) + " " * 120 + "pass\n",  # CPython's limit
    ],
)
def test_an_invalid_file_is_never_called_a_later_pythons(text: str) -> None:
    """libcst rejects what CPython rejects, so the hint is never given to a file that is wrong."""
    with pytest.raises(SyntaxError) as caught:
        ast.parse(text)
    message, _, _ = syntax_problem(caught.value, text)
    assert message == f"syntax error: {caught.value.msg}"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xef\xbb\xbf" + LITERAL_CHECK.encode(),
        LITERAL_CHECK.replace("\n", "\r\n").encode(),
        b"def f(attn_backend):\r\n    return attn_backend == 'TRTLLM'\n",
        LITERAL_CHECK.replace("\n", "\r").encode(),
        b"\x0c" + LITERAL_CHECK.encode(),
        LITERAL_CHECK.replace("    ", "\t").encode(),
        "# -*- coding: latin-1 -*-\n# caf\xe9\n".encode("latin-1") + LITERAL_CHECK.encode(),
    ],
    ids=["empty", "bom", "crlf", "mixed-endings", "lone-cr", "form-feed", "tabs", "latin-1-cookie"],
)
def test_odd_but_valid_files_are_checked(make_tree: MakeTree, data: bytes) -> None:
    code, lines = bad_file(make_tree, "modeling_odd.py", data)
    assert code == 1
    if data:
        line = 4 if b"latin-1" in data else 2
        column = 25 if b"\t" in data else 28
        assert lines == [
            f'tensorrt_llm/_torch/models/modeling_odd.py:{line}:{column}: DL103 backend name "TRTLLM" retyped '
            "as a string literal; read it from the shared Literal EncoderAttentionBackend "
            "(tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
        ]
    else:
        assert lines == []


def test_long_concatenation_is_dl000_not_a_crash(make_tree: MakeTree) -> None:
    terms = " + ".join(['"a"'] * 10_000)
    code, lines = bad_file(make_tree, "modeling_concat.py", f"attn_backend = {terms}\n".encode())
    assert code == 1
    assert len(lines) == 1
    assert lines[0].startswith("tensorrt_llm/_torch/models/modeling_concat.py:1:1: DL000 ")
    assert "RecursionError" in lines[0] or "too deep" in lines[0]


def test_a_valid_file_libcst_cannot_parse_is_named_as_such_and_keeps_its_ast_findings(make_tree: MakeTree) -> None:
    """Red-team case (2026-12-02): a form feed starting an indented line is valid Python that
    libcst's tokenizer rejects. It was a DL000 "syntax error" that also dropped the findings of
    the rules that run on CPython's tree (DL101, DL103)."""
    data = (
        b"import torch.nn.functional as F\n\n\nclass XModel:\n"
        b'\x0c    encoder_attention_backends = {"vision": ("trtllm",)}\n\n'
        b"    def forward(self, q, k, v):\n        return F.scaled_dot_product_attention(q, k, v)\n"
    )
    code, lines = bad_file(make_tree, "modeling_ff.py", data)
    assert code == 1
    assert [line.split(": ", 1)[1][:5] for line in lines] == ["DL000", "DL101"]
    assert lines[0] == (
        "tensorrt_llm/_torch/models/modeling_ff.py:1:1: DL000 libcst cannot parse this file, though Python can "
        "(tokenizer error: no matching outer block for dedent); its libcst rules did not run"
    )


def test_file_deleted_between_discovery_and_reading(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    from declint import engine

    root = make_tree({GOOD: GOOD_SOURCE, MODELS + "modeling_gone.py": "x = 1\n"})
    original = engine.read_bytes  # what the scan reads with

    def vanish(path: str, rel: str, max_size: int = 0) -> object:
        if os.path.basename(path) == "modeling_gone.py" and os.path.exists(path):
            os.unlink(path)
        return original(path, rel, max_size)

    monkeypatch.setattr(engine, "read_bytes", vanish)
    code, lines = run(root, MODELS)
    assert code == 1
    assert (
        lines[0] == "tensorrt_llm/_torch/models/modeling_gone.py:1:1: DL000 cannot read file: No such file or directory"
    )
    assert lines[1].startswith(GOOD_LINE)


def test_unreadable_file(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests run as root in CI, where chmod 000 does not stop a read: the OS error is simulated.
    root = make_tree({GOOD: GOOD_SOURCE, MODELS + "modeling_secret.py": "x = 1\n"})
    real_open = os.open

    def deny(path: str, flags: int, *args: int, **kwargs: int) -> int:
        if os.path.basename(path) == "modeling_secret.py":
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)  # files are read with os.open (declint.source.read_bytes)
    code, lines = run(root, MODELS)
    assert code == 1
    assert lines[0] == "tensorrt_llm/_torch/models/modeling_good.py:2:35: DL103 " + lines[0].split(" DL103 ")[1]
    assert lines[1] == "tensorrt_llm/_torch/models/modeling_secret.py:1:1: DL000 cannot read file: Permission denied"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_like_a_module_is_refused_without_blocking(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE})
    os.mkfifo(root / MODELS / "modeling_pipe.py")  # no writer: a blocking open would wait forever
    code, lines = run(root, MODELS)
    assert code == 1
    assert lines[0].startswith(GOOD_LINE)
    assert lines[1] == (
        "tensorrt_llm/_torch/models/modeling_pipe.py:1:1: DL000 not a regular file (a FIFO, socket or device); not read"
    )


def test_symlink_loop_and_directory_named_like_a_module(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE, MODELS + "package.py/inner.py": LITERAL_CHECK})
    os.symlink(root / MODELS / "loop_b.py", root / MODELS / "loop_a.py")
    os.symlink(root / MODELS / "loop_a.py", root / MODELS / "loop_b.py")
    code, lines = run(root, MODELS)
    assert code == 1
    assert lines[0] == "tensorrt_llm/_torch/models/loop_a.py:1:1: DL000 broken symlink or symlink loop; not followed"
    assert lines[1] == "tensorrt_llm/_torch/models/loop_b.py:1:1: DL000 broken symlink or symlink loop; not followed"
    assert lines[2].startswith(GOOD_LINE)
    assert lines[3].startswith("tensorrt_llm/_torch/models/package.py/inner.py:2:28: DL103 ")


@pytest.mark.parametrize(
    ("pyproject", "message"),
    [
        ("[tool.declint]\nroots = [\n", "invalid TOML"),
        ("[tool.declint]\nselct = []\n", 'pyproject.toml:2: unknown key "selct" (did you mean "select"?)'),
        ("[tool.declint]\nroots = 3\n", 'pyproject.toml:2: "roots" must be list[str], got int'),
        ("[tool.declint]\nper-path-ignores = {'x/**' = ['DL9999']}\n", 'unknown rule code "DL9999"'),
        # The line of declint's own key, not another tool's of that name above it.
        ('[tool.ruff]\nexclude = ["x"]\n\n[tool.declint]\nexclude = 1\n', 'pyproject.toml:5: "exclude" must be'),
        # An unknown table, and a dotted key: their own lines.
        ("[tool.declint]\nroots = ['.']\n\n[tool.declint.extra]\nx = 1\n", 'pyproject.toml:4: unknown key "extra"'),
        ("[tool.declint]\nroots = ['.']\nextra.x = 1\n", 'pyproject.toml:3: unknown key "extra"'),
    ],
    ids=["toml-error", "unknown-key", "wrong-type", "unknown-code", "other-tool-above", "table", "dotted"],
)
def test_bad_config_exits_2_naming_file_and_line(make_tree: MakeTree, pyproject: str, message: str) -> None:
    root = make_tree({"pyproject.toml": pyproject, GOOD: GOOD_SOURCE})
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 2
    assert result.output.startswith(f"declint: error: {root / 'pyproject.toml'}:")
    assert message in result.output


def test_a_tool_declint_table_outside_pyproject_is_refused_with_what_to_write(make_tree: MakeTree) -> None:
    root = make_tree({"lint.toml": '# shared settings\n[tool.declint]\nroots = ["tensorrt_llm"]\n', GOOD: GOOD_SOURCE})
    result = CliRunner().invoke(cli, ["check", "--config", str(root / "lint.toml"), str(root)])
    assert result.exit_code == 2
    assert result.output == (
        f"declint: error: {root / 'lint.toml'}:2: a [tool.declint] table is read only from pyproject.toml; "
        "in another file, write declint's keys at the top level, without the table header\n"
    )


def test_a_config_that_is_not_utf8_exits_2_naming_file_and_line(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE})
    (root / "pyproject.toml").write_bytes(b'[tool.declint]\nexclude = ["caf\xe9/"]\n')  # latin-1, not UTF-8
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 2
    assert result.output == (
        f"declint: error: {root / 'pyproject.toml'}:2: not valid UTF-8 (TOML files must be): "
        "invalid byte 0xe9 at offset 30\n"
    )


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ('[tool.declint]\nroots = ["tensorrt_llm"]\n'.encode("utf-16"), "invalid byte 0xff at offset 0"),
        (b'\xff\xfe[tool.declint]\nroots = ["tensorrt_llm"]\n', "invalid byte 0xff at offset 0"),
    ],
    ids=["utf-16", "byte-order-mark"],
)
def test_a_pyproject_saved_in_utf16_is_claimed_and_reported(make_tree: MakeTree, data: bytes, error: str) -> None:
    """Red-team 54: a pyproject.toml saved as UTF-16 (its header's bytes interleaved with NULs), or
    starting with a byte-order mark, was taken for no configuration: the run went on with the
    defaults."""
    root = make_tree({GOOD: GOOD_SOURCE})
    (root / "pyproject.toml").write_bytes(data)
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert (result.exit_code, result.output) == (
        2,
        f"declint: error: {root / 'pyproject.toml'}:1: not valid UTF-8 (TOML files must be): {error}\n",
    )


def test_a_5_mb_file_is_one_dl000_under_the_default_size_cap(make_tree: MakeTree) -> None:
    data = LITERAL_CHECK.encode() * (5_000_000 // len(LITERAL_CHECK) + 1)
    code, lines = bad_file(make_tree, "modeling_huge.py", data)
    assert code == 1
    assert lines == [
        f"tensorrt_llm/_torch/models/modeling_huge.py:1:1: DL000 file too large to check ({len(data):,} bytes; "
        "max-file-size is 4,000,000)"
    ]


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (b"x = 1\n", "utf-8"),  # ASCII, no cookie: the fast path
        (b"#!/usr/bin/env python\n# -*- coding: latin-1 -*-\nx = 1\n", "iso-8859-1"),  # cookie on line 2
        (b"# coding=cp1252\nx = 1\n", "cp1252"),
        (b"x = 1\ny = 2\n# coding: latin-1\n", "utf-8"),  # line 3: not a cookie
        (b"\xef\xbb\xbfx = 1\n", "utf-8"),  # BOM
    ],
)
def test_the_declared_encoding_is_kept_also_for_ascii_files(data: bytes, encoding: str) -> None:
    from declint.source import decode_source

    source = decode_source(data, "m.py")
    assert source.encoding == encoding
    assert source.text == data.decode("utf-8-sig")


@pytest.mark.parametrize("stat_size", [0, 3, 9, 10, 70_000])
def test_a_read_returns_the_whole_file_whatever_size_the_stat_said(tmp_path: Path, stat_size: int) -> None:
    """The reader asks for one byte more than the stat's size: a file that grew since (a smaller
    stat size) is read to its end, and one that did not takes a single read."""
    from declint.source import _read_all

    data = bytes(range(256)) * 300  # 76,800 bytes: longer than one 64 KiB follow-up read
    target = tmp_path / "grown.py"
    target.write_bytes(data[: 10 if stat_size < 70_000 else len(data)])
    fd = os.open(target, os.O_RDONLY)
    try:
        assert _read_all(fd, stat_size) == target.read_bytes()
    finally:
        os.close(fd)


def _non_utf8_name(directory: Path, name: bytes, *, is_dir: bool = False) -> Path:
    """`directory / name`, created (a file, or a directory with `is_dir`): Python carries the
    bytes that are not UTF-8 in its `str` as surrogate escapes, as a directory listing gives them."""
    path = directory / os.fsdecode(name)
    try:
        path.mkdir() if is_dir else path.write_bytes(b"")
    except (OSError, UnicodeEncodeError):  # e.g. macOS: APFS accepts only UTF-8 names
        pytest.skip("this file system refuses names that are not UTF-8")
    return path


NOT_UTF8 = "DL000 file name is not valid UTF-8 (Python cannot import it); not checked"


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_a_file_name_that_is_not_utf8_is_one_dl000_in_every_format(make_tree: MakeTree, output_format: str) -> None:
    root = make_tree({GOOD: GOOD_SOURCE})
    _non_utf8_name(root / MODELS, b"modeling_bad\xff.py").write_text(LITERAL_CHECK, encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", "--format", output_format, str(root / MODELS)])
    assert result.exit_code == 1, result.output
    shown = MODELS + "modeling_bad\\xff.py"  # its bytes escaped as Python prints them
    if output_format == "text":
        lines = [line for line in result.output.splitlines() if ": DL" in line]
        assert lines[0] == f"{shown}:1:1: {NOT_UTF8}"
        assert len(lines) == 2 and lines[1].startswith(GOOD_LINE)
    elif output_format == "json":
        findings = json.loads(result.output)["findings"]
        assert [(f["path"], f["code"]) for f in findings] == [(shown, "DL000"), (GOOD, "DL103")]
    elif output_format == "sarif":
        results = json.loads(result.output)["runs"][0]["results"]
        located = [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results]
        # the file's own bytes percent-encoded, not the escaped text the other formats show (%5Cxff)
        assert ("DL000", MODELS + "modeling_bad%FF.py") in located
        assert os.path.lexists(os.fsencode(root) + b"/" + unquote_to_bytes(MODELS + "modeling_bad%FF.py"))
    else:
        [annotation] = [line for line in result.output.splitlines() if "DL000" in line and line.startswith("::")]
        assert annotation.endswith(
            "modeling_bad\\xff.py,line=1,col=1,title=declint DL000 (parse-error)::" + NOT_UTF8.removeprefix("DL000 ")
        )


def test_files_below_a_directory_whose_name_is_not_utf8_are_one_dl000_each(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE})
    directory = _non_utf8_name(root / MODELS, b"vendor\xfe", is_dir=True)
    (directory / "modeling_a.py").write_text(LITERAL_CHECK, encoding="utf-8")
    (directory / "notes.txt").write_text("not Python\n", encoding="utf-8")
    code, lines = run(root, MODELS)
    assert code == 1
    assert lines[0].startswith(GOOD_LINE)
    assert lines[1:] == [f"{MODELS}vendor\\xfe/modeling_a.py:1:1: {NOT_UTF8}"]


def test_sarif_uris_of_names_that_are_not_utf8_encode_their_bytes_from_the_cache_too(make_tree: MakeTree) -> None:
    """The second run replays the first one's walk from the cache: its URIs are the same."""
    root = make_tree({GOOD: GOOD_SOURCE})
    directory = _non_utf8_name(root / MODELS, b"vendor\xfe", is_dir=True)
    (directory / "modeling_a.py").write_text(LITERAL_CHECK, encoding="utf-8")
    for _ in range(2):
        result = CliRunner().invoke(cli, ["check", "--format", "sarif", str(root / MODELS)])
        assert result.exit_code == 1, result.output
        results = json.loads(result.output)["runs"][0]["results"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
        assert uris == [MODELS + "modeling_good.py", MODELS + "vendor%FE/modeling_a.py"]
    text = CliRunner().invoke(cli, ["check", str(root / MODELS)]).output
    assert f"{MODELS}vendor\\xfe/modeling_a.py:1:1: {NOT_UTF8}" in text.splitlines()  # shown escaped, as before


def test_a_serving_schema_below_a_directory_whose_name_is_not_utf8_is_reported_escaped(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    copy_project(DEMO, root)
    moved = _non_utf8_name(root, b"schemas\xfe", is_dir=True)
    schema = "trtllm-serve-disagg-config.schema.json"
    os.replace(root / "schemas" / schema, moved / schema)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL108", str(root)])
    assert result.exit_code == 1, result.output
    assert [line.split(" /$defs")[0] for line in result.output.splitlines() if ": DL108 " in line] == [
        "schemas\\xfe/trtllm-serve-disagg-config.schema.json:16:1: DL108",
        "schemas\\xfe/trtllm-serve-disagg-config.schema.json:16:1: DL108",
    ]


# ---- places that cannot be written: exit 2 naming the place, never a traceback ---------------------
def test_a_report_that_cannot_be_written_exits_2_naming_it(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE})
    taken = root / "reports"
    taken.mkdir()
    result = CliRunner().invoke(cli, ["check", "--output-format", f"sarif:{taken}", str(root / MODELS)])
    assert (result.exit_code, result.output) == (
        2,
        f"declint: error: {taken}: cannot write the sarif report: Is a directory\n",
    )


def test_a_baseline_that_cannot_be_written_exits_2_naming_it(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE})
    missing = root / "no-such-directory" / "baseline.json"
    result = CliRunner().invoke(cli, ["baseline", "write", str(missing), str(root / MODELS)])
    assert (result.exit_code, result.output) == (
        2,
        f"declint: error: {missing}: cannot write the baseline: No such file or directory\n",
    )


def test_the_analysed_codes_syntax_warnings_stay_quiet(make_tree: MakeTree) -> None:
    """CPython warns while parsing an invalid escape (a DeprecationWarning in 3.11, a
    SyntaxWarning since 3.12) or compiling `"str"()`; those warnings are about the analysed code,
    and a run must not print them (the engine runs in this process here)."""
    source = 'import typing\nx = "a" "\\d"\ny = "str"()\nz = typing.Literal["TRTLLM"]\n'
    root = make_tree({GOOD: GOOD_SOURCE, MODELS + "modeling_warns.py": source})
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = Engine(config, ALL_RULES, Selection(("DL",), ())).run([root / MODELS])
    assert [f.code for f in result.findings if f.path.endswith("modeling_good.py")] == ["DL103"]
    assert [str(w.message) for w in caught if w.filename.endswith("modeling_warns.py")] == []


# ---- inputs of the project rules: the docs table (DL107) and the serving schemas (DL108) ---------

SCHEMA = "docs/trtllm-serve-config.schema.json"
# The Literal's three members, so a schema that is read gives no DL108.
GOOD_SCHEMA = '{\n  "properties": {\n    "attn_backend": {"enum": ["VANILLA", "TRTLLM", "FLASHINFER"]}\n  }\n}\n'
NOT_REGULAR = "not a regular file (a FIFO, socket or device); not read"


def _check_bounded(root: Path) -> tuple[int, list[str]]:
    """`declint check ROOT` in a subprocess that cannot wait or read without end: reading a FIFO
    blocked forever, /dev/zero read until memory ran out (the test would hang or eat the machine)."""
    import resource
    import subprocess
    import sys

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))

    done = subprocess.run(
        [sys.executable, "-m", "declint", "check", "--no-cache", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_memory,
        check=False,
    )
    return done.returncode, [line for line in done.stdout.splitlines() if ": DL" in line]


def test_a_serving_schema_that_is_a_fifo_or_a_device_is_one_finding_not_a_hang(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE, SCHEMA: GOOD_SCHEMA})
    (root / "build").mkdir()  # any directory: the schema walk is not the checked files'
    os.mkfifo(root / "build" / "trtllm-serve-config.schema.json")
    os.symlink("/dev/zero", root / "docs" / "trtllm-serve-disagg-config.schema.json")
    code, lines = _check_bounded(root)
    assert (code, lines[0]) == (
        1,
        f"build/trtllm-serve-config.schema.json:1:1: DL108 cannot read the schema: {NOT_REGULAR}",
    )
    assert lines[1] == f"docs/trtllm-serve-disagg-config.schema.json:1:1: DL108 cannot read the schema: {NOT_REGULAR}"
    assert lines[2].startswith(GOOD_LINE) and len(lines) == 3  # the readable schema matches the Literal


def test_a_docs_table_that_is_a_fifo_is_one_finding_not_a_hang(make_tree: MakeTree) -> None:
    from declint.testing import PRELUDE

    root = make_tree({GOOD: GOOD_SOURCE, "pyproject.toml": PRELUDE["pyproject.toml"] + 'docs-table = "docs/t.md"\n'})
    (root / "docs").mkdir()
    os.mkfifo(root / "docs" / "t.md")
    code, lines = _check_bounded(root)
    assert (code, lines[0]) == (1, f"docs/t.md:1:1: DL107 cannot read the docs table: {NOT_REGULAR}")
    assert lines[1].startswith(GOOD_LINE) and len(lines) == 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "1:1: DL108 cannot read the schema: nesting too deep to read"),
        (  # objects, as a schema nests them: json.loads fails on 3.11 and 3.12, the walk on 3.13
            b'{"properties": {"a": ' * 3000 + b"{}" + b"}}" * 3000,
            "1:1: DL108 cannot read the schema: nesting too deep to read",
        ),
        (
            GOOD_SCHEMA.encode() + b" " * 4000,
            "1:1: DL108 cannot read the schema: file too large to check (4,092 bytes; max-file-size is 4,000)",
        ),
        (
            b'{\n  "x": "caf\xe9"\n}\n',
            "2:1: DL108 cannot read the schema: cannot decode as utf-8: invalid byte 0xe9 at offset 13",
        ),
        (b'{\n  "x": \n}\n', "1:1: DL108 cannot read the schema: Expecting value: line 3 column 1 (char 10)"),
    ],
    ids=["deep-arrays", "deep-objects", "too-large", "not-utf8", "not-json"],
)
def test_an_unreadable_serving_schema_is_one_finding_and_the_run_goes_on(
    make_tree: MakeTree, data: bytes, message: str
) -> None:
    from declint.testing import PRELUDE

    pyproject = PRELUDE["pyproject.toml"] + ("max-file-size = 4000\n" if "too large" in message else "")
    root = make_tree({GOOD: GOOD_SOURCE, "pyproject.toml": pyproject})
    (root / "docs").mkdir()
    (root / SCHEMA).write_bytes(data)
    result = CliRunner().invoke(cli, ["check", "--no-cache", str(root)])
    lines = [line for line in result.output.splitlines() if ": DL" in line]
    assert (result.exit_code, lines[0]) == (1, f"{SCHEMA}:{message}")
    assert lines[1].startswith(GOOD_LINE) and len(lines) == 2


def test_a_schema_symlinked_to_a_file_and_a_docs_table_read_as_before(make_tree: MakeTree) -> None:
    """Near miss: the same reader still reads a regular file through a symlink, and reports drift."""
    from declint.testing import PRELUDE

    pyproject = PRELUDE["pyproject.toml"] + 'docs-table = "docs/t.md"\n'
    drifted = GOOD_SCHEMA.replace(', "FLASHINFER"', "")
    root = make_tree({GOOD: GOOD_SOURCE, "pyproject.toml": pyproject, "schemas/real.json": drifted})
    (root / "docs").mkdir()
    os.symlink(root / "schemas" / "real.json", root / SCHEMA)
    (root / "docs" / "t.md").write_bytes(b"# Encoders\n\nno table \xff here\n")
    code, lines = run(root, ".")
    assert code == 1
    assert lines[:2] == [
        "docs/t.md:3:1: DL107 cannot read the docs table: cannot decode as utf-8: invalid byte 0xff at offset 21",
        f"{SCHEMA}:3:1: DL108 /properties/attn_backend/enum: "
        '"FLASHINFER" is a member of EncoderAttentionBackend but the schema rejects it',
    ]
    (root / "docs" / "t.md").unlink()
    assert run(root, ".")[1][0] == "docs/t.md:1:1: DL107 cannot read the docs table: No such file or directory"


# ---- paths given on the command line through symlinks ---------------------------------------------


def _lines_of(*paths: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", *map(str, paths)])
    return result.exit_code, [line for line in result.output.splitlines() if ": DL" in line or "checked" in line]


def test_a_symlinked_directory_given_on_the_command_line_is_checked(make_tree: MakeTree) -> None:
    """The walk never follows a symlinked directory it finds; one the user typed was skipped
    too, silently: "All clear: 0 files checked.", exit 0."""
    root = make_tree({GOOD: GOOD_SOURCE})
    (root / "models_link").symlink_to(root / MODELS, target_is_directory=True)
    expected = _lines_of(root / MODELS)
    assert expected[0] == 1 and expected[1][0].startswith(GOOD_LINE)
    assert _lines_of(root / "models_link") == expected
    outside = root.parent / f"{root.name}-link"  # the whole project reached through a link (a CI workspace)
    outside.symlink_to(root, target_is_directory=True)
    try:
        assert _lines_of(outside) == _lines_of(root)
        assert _lines_of(outside / MODELS) == expected  # through a symlinked parent: root-relative paths
    finally:
        outside.unlink()


def test_a_link_into_the_middle_of_a_project_finds_the_projects_configuration(make_tree: MakeTree) -> None:
    """Red-team 54: a file reached through a link outside the project (`/tmp/link -> project/pkg`)
    found no configuration above the link and was checked with the defaults: "All clear"."""
    root = make_tree({GOOD: GOOD_SOURCE})
    expected = _lines_of(root / GOOD)
    assert expected[0] == 1 and expected[1][0].startswith(GOOD_LINE)
    outside = root.parent / f"{root.name}-models"
    outside.symlink_to(root / MODELS, target_is_directory=True)
    try:
        assert _lines_of(outside / Path(GOOD).name) == expected
    finally:
        outside.unlink()


def test_a_symlinked_directory_found_by_the_walk_is_still_not_followed(make_tree: MakeTree) -> None:
    root = make_tree({GOOD: GOOD_SOURCE})
    (root / "models_link").symlink_to(root / MODELS, target_is_directory=True)
    code, lines = _lines_of(root)
    assert code == 1
    assert len([line for line in lines if line.startswith(GOOD_LINE)]) == 1
    assert not any(line.startswith("models_link/") for line in lines)  # checked once, at its real path


NO_FILES = "declint: warning: no Python files found under the given paths; nothing was checked\n"
NO_LITERAL = (
    "DL100 shared Literal tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend not found: no module "
    "tensorrt_llm.llmapi.llm_args under the indexed roots (.); set shared-literal in [tool.declint] "
    "(default configuration in use)"
)


@pytest.mark.parametrize("given", ["empty", "empty/readme.txt"])
def test_no_python_files_is_a_warning_not_a_finding(tmp_path: Path, given: str) -> None:
    """As ruff: nothing to check warns on stderr and exits 0; no DL100 at a pyproject.toml that is not there."""
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.txt").write_text("not Python\n")
    for fmt in ("text", "json"):
        result = CliRunner().invoke(cli, ["check", "--format", fmt, str(tmp_path / given)])
        assert (result.exit_code, result.stderr) == (0, NO_FILES)
    assert json.loads(result.stdout)["findings"] == []
    result = CliRunner().invoke(cli, ["check", str(tmp_path / given)])
    assert (result.exit_code, result.stdout) == (0, "All clear: 0 files checked.\n")


@pytest.mark.parametrize(
    ("files", "anchor"),
    [
        ({"b.py": "x = 1\n", "a/z.py": "y = 2\n"}, "a/z.py"),
        ({"b.py": "x = 1\n", "pyproject.toml": "[project]\nname = 'p'\n"}, "pyproject.toml"),
    ],
    ids=["first-python-file", "pyproject"],
)
def test_dl100_without_a_config_file_points_at_a_file_that_exists(
    tmp_path: Path, files: dict[str, str], anchor: str
) -> None:
    """Without a configuration file, the missing Literal is reported at the project's pyproject.toml,
    or without one at its first Python file: never at a file that does not exist."""
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = CliRunner().invoke(cli, ["check", str(tmp_path)])
    checked = "2 files" if len([rel for rel in files if rel.endswith(".py")]) == 2 else "1 file"
    assert (result.exit_code, result.stdout) == (1, f"{anchor}:1:1: {NO_LITERAL}\nFound 1 finding in {checked}.\n")
    assert (tmp_path / anchor).is_file()


@pytest.mark.parametrize(
    ("stdout", "reason"), [("/dev/full", "No space left on device"), ("closed", "it is closed")], ids=["full", "closed"]
)
def test_a_stdout_that_cannot_be_written_is_one_error_line_and_exit_2(
    make_tree: MakeTree, stdout: str, reason: str
) -> None:
    """`declint check . > /dev/full` was an internal error with a traceback; `>&-` lost the report
    and exited 0 or 1. Both are one line on stderr and exit 2, as for a report file."""
    root = make_tree({"tensorrt_llm/_torch/models/modeling_x.py": 'def f(attn_backend="TRTLLM"):\n    pass\n'})
    command = [sys.executable, "-m", "declint", "check", str(root)]
    if stdout == "closed":
        done = subprocess.run(command, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1), check=False)
    else:
        with open(stdout, "w") as full:
            done = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, check=False)
    assert (done.returncode, done.stderr.decode()) == (2, f"declint: error: cannot write to stdout: {reason}\n")


def test_a_root_that_does_not_exist_is_said(make_tree: MakeTree) -> None:
    """A typo in `roots` indexed nothing there without a word (DL100's "under the indexed roots"
    was the only sign)."""
    root = make_tree({"pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm", "tensorrt_lm"]\n', GOOD: GOOD_SOURCE})
    result = CliRunner().invoke(cli, ["check", str(root / GOOD)])
    assert result.stderr == (
        f'declint: warning: root "tensorrt_lm" (roots in {root / "pyproject.toml"}) does not exist: '
        "nothing under it is indexed\n"
    )


def test_a_crash_of_declint_itself_exits_2_with_its_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The error boundary: a bug in declint is no finding and no silent exit 0."""
    import declint.reporting.pipeline as pipeline

    def crash(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("a bug in declint")

    monkeypatch.setattr(pipeline, "fingerprints", crash)
    (tmp_path / "m.py").write_text("x = 1\n")
    result = CliRunner().invoke(cli, ["check", "--no-cache", str(tmp_path / "m.py")])
    assert result.exit_code == 2
    assert result.output.startswith("declint: internal error (please report):\nTraceback (most recent call last):\n")
    assert result.output.endswith("ZeroDivisionError: a bug in declint\n\n")
