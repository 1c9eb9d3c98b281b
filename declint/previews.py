"""Fix previews for reports: what each fix would change in a file as it is, never written.

A preview needs the file parsed with libcst. The check workers parse every file a fixing rule
fires on anyway, so they compute the previews of its fixes with that very tree (`file_previews`)
and hand them over as `PreviewMemo` entries; the main process computes only what they did not
(fixes of findings from a cached result, of project rules, of suppression hygiene).
"""

from __future__ import annotations

import codecs
import re
import tokenize
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache, partial
from itertools import accumulate, chain, groupby, islice
from typing import TYPE_CHECKING

from declint.cache import content_digest
from declint.discovery import module_name
from declint.errors import SourceError
from declint.lazy import lazy_module
from declint.reporting.model import Edit, FixPreview
from declint.reporting.sources import SourceCache
from declint.source import SourceFile, decode_source, split_lines_keepends
from declint.types import Finding, Fix, Position
from declint.writing import replace_refusal

if TYPE_CHECKING:
    import difflib

    import libcst as cst

    from declint import fix_transforms as transforms
    from declint import suppressions
else:
    transforms = lazy_module("declint.fix_transforms")  # libcst: only when a fix is previewed
    suppressions = lazy_module("declint.suppressions")  # only a suppression's fix is previewed with it
    difflib = lazy_module("difflib")  # ~4 ms: a report whose previews all come from the cache needs none

_LONE_CR = re.compile(rb"\r(?!\n)")


# ---- whether a file may be rewritten ---------------------------------------------------------
def unrewritable(data: bytes, rel: str, tree: cst.Module | None = None) -> str | None:
    """Why the file must not be rewritten, or None when libcst reproduces it byte for byte.

    `tree`: the file already parsed (by `parse_module`, as `transforms.parse` would)."""
    if b"\f" in data:
        return "contains a form feed; not rewritten"
    if _LONE_CR.search(data):
        return "contains a lone carriage return; not rewritten"
    try:
        source = decode_source(data, rel)
        module = tree if tree is not None else transforms.parse(source)
    except SourceError as error:
        return f"cannot be parsed ({error.message}); not rewritten"
    if encode(source, module.code) != data:
        return "libcst does not reproduce it byte for byte; not rewritten"
    return None


def encode(source: SourceFile, text: str) -> bytes:
    bom = codecs.BOM_UTF8 if source.data.startswith(codecs.BOM_UTF8) else b""
    return bom + text.encode(source.encoding)


# ---- previews for reports ---------------------------------------------------------------------
def text_edits(old: str, new: str) -> tuple[tuple[Edit, ...], tuple[Edit, ...]]:
    """(minimal edits, whole-line edits) that turn `old` into `new`."""
    return _edits(*_differing(split_lines_keepends(old), split_lines_keepends(new), 0))


def _edits(skip: int, a: Sequence[str], b: Sequence[str]) -> tuple[tuple[Edit, ...], tuple[Edit, ...]]:
    """`text_edits` of the lines `a` that became `b`, `skip` lines into the file."""
    edits: list[Edit] = []
    line_edits: list[Edit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        before, after = "".join(a[i1:i2]), "".join(b[j1:j2])
        i1, i2 = i1 + skip, i2 + skip
        line_edits.append(Edit(Position(i1 + 1, 0), Position(i2 + 1, 0), after))
        head = _common_prefix(before, after)
        tail = _common_prefix(before[head:][::-1], after[head:][::-1])
        start = _advance(i1 + 1, before[:head])
        end = _advance(i1 + 1, before[: len(before) - tail])
        edits.append(Edit(start, end, after[head : len(after) - tail]))
    return tuple(edits), tuple(line_edits)


def _differing(a: list[str], b: list[str], keep: int) -> tuple[int, list[str], list[str]]:
    """(lines skipped, a, b) without the lines both start and end with, but `keep` of each: a fix
    changes a few lines of a long file, and difflib on all of them was most of a preview."""
    limit = min(len(a), len(b))
    head = 0
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    skip, tail = max(0, head - keep), max(0, tail - keep)
    return skip, a[skip : len(a) - tail], b[skip : len(b) - tail]


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def _advance(line: int, text: str) -> Position:
    parts = split_lines_keepends(text)
    if not parts:
        return Position(line, 0)
    if parts[-1].endswith(("\n", "\r")):
        return Position(line + len(parts), 0)
    return Position(line + len(parts) - 1, len(parts[-1]))


def unified_diff(rel: str, old: str, new: str, context: int = 3) -> str:
    skip, a, b = _differing(split_lines_keepends(old), split_lines_keepends(new), context)
    return _unified(rel, skip, a, b, context)


def _unified(rel: str, skip: int, a: Sequence[str], b: Sequence[str], context: int) -> str:
    """`unified_diff` of the lines `a` that became `b`, `skip` lines into the file."""
    lines = difflib.unified_diff(list(a), list(b), diff_name("a/", rel), diff_name("b/", rel), n=context)
    out: list[str] = []
    for line in lines:
        hunk = _HUNK.match(line) if skip else None
        if hunk is not None:  # line numbers of the whole file, not of the lines compared
            old_start, old_count, new_start, new_count = hunk.groups()
            line = f"@@ -{int(old_start) + skip}{old_count or ''} +{int(new_start) + skip}{new_count or ''} @@\n"
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out += [line + "\n", "\\ No newline at end of file\n"]
    return "".join(out)


_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}


def diff_name(prefix: str, rel: str) -> str:
    """`prefix + rel` for a diff header, quoted as git quotes it (C escapes, octal UTF-8 bytes)
    when the name holds a character that would break the header line: `git apply` and `patch`
    read that form, and a newline in a file name no longer splits the diff."""
    name = prefix + rel
    if name.isprintable():
        return name
    quoted = "".join(_c_escape(char) for char in name)
    return f'"{quoted}"'


def _c_escape(char: str) -> str:
    if char in _C_ESCAPES:
        return _C_ESCAPES[char]
    if char in '"\\':
        return "\\" + char
    if char.isprintable():
        return char
    return "".join(f"\\{byte:03o}" for byte in char.encode("utf-8", "surrogateescape"))


# A fix's preview (None: the fix does not apply), or why a file may not be rewritten (None: it may).
Memoized = FixPreview | str | None


class PreviewMemo:
    """Previews already computed, by file content, module and fix (kept in the cache directory).

    A preview costs a libcst parse of the file; a warm run over a tree with many fixable findings
    would otherwise spend most of its time recomputing previews of files that did not change.
    """

    LIMIT = 20_000  # entries; past it only this run's are kept

    def __init__(self, stored: Mapping[str, Memoized] | None = None) -> None:
        self.entries: dict[str, Memoized] = dict(stored or {})
        self.used: set[str] = set()
        self.changed = False

    def get(self, key: str, compute: Callable[[], Memoized]) -> Memoized:
        self.used.add(key)
        if key in self.entries:
            return self.entries[key]
        value = self.entries[key] = compute()
        self.changed = True
        return value

    def seed(self, entries: Mapping[str, Memoized]) -> None:
        """Entries computed elsewhere (the check workers), kept like computed ones."""
        for key, value in entries.items():
            if key not in self.entries:
                self.entries[key] = value
                self.changed = True

    def to_store(self) -> dict[str, Memoized]:
        if len(self.entries) <= self.LIMIT:
            return dict(self.entries)
        return {key: value for key, value in self.entries.items() if key in self.used}


_UNREWRITABLE = "unrewritable"  # the key suffix of a file's `unrewritable` verdict


def verdict_key(digest: str) -> str:
    return f"{digest}\0{_UNREWRITABLE}"


def preview_key(digest: str, rel: str, module: str, fix: Fix) -> str:
    """A preview's diff names its file: two files of the same content and module (`a/tool.py` and
    `b/tool.py` outside any package) have previews of their own (red-team 54)."""
    return f"{digest}\0{rel}\0{module}\0{fix!r}"


def previews(
    findings: Iterable[Finding], sources: SourceCache, memo: PreviewMemo | None = None
) -> dict[Finding, FixPreview]:
    """What each finding's fix would change in the file as it is, for reports; no validation."""
    memo = memo if memo is not None else PreviewMemo()
    out: dict[Finding, FixPreview] = {}
    fixable = sorted((f for f in findings if f.fix is not None), key=Finding.sort_key)
    for rel, group in groupby(fixable, key=lambda f: f.path):
        data = sources.data(rel)  # the text the findings come from (stdin's, for --stdin-filename)
        if data is None:
            continue
        digest = content_digest(data)
        module = module_name(sources.path_of(rel), sources.root)
        if memo.get(verdict_key(digest), partial(unrewritable, data, rel)) is not None:
            continue
        if not sources.is_override(rel) and replace_refusal(sources.path_of(rel)) is not None:
            continue  # hard-linked or read-only: --fix refuses it, so no fix is offered (a stat, not memoized)
        source = decode_source(data, rel)  # decodes: `unrewritable` said so
        compute = _sharing_one_parse(source, module)
        for finding in group:
            fix = finding.fix
            assert fix is not None
            preview = memo.get(preview_key(digest, rel, module, fix), partial(compute, fix))
            if isinstance(preview, FixPreview):
                out[finding] = preview
    return out


def _sharing_one_parse(source: SourceFile, module: str) -> Callable[[Fix], FixPreview | None]:
    """`_preview` for the fixes of one file, parsing it (and resolving positions) on first use
    only, and splitting its lines once."""
    prepared = cache(lambda: transforms.prepare(transforms.parse(source)))
    lines = cache(lambda: _Lines(source.text))
    return lambda fix: _preview(source, fix, module, prepared, lines)


# A check worker previews a file's fixes while their count times the file's characters stays
# under this (a preview that cannot render its statements alone renders the whole module, ~2 us a
# character): past it, the main process computes the rest, so that a module with hundreds of fixes
# never runs its worker past the file timeout and loses its findings to a DL000.
WORKER_PREVIEW_BUDGET = 4_000_000


def file_previews(
    source: SourceFile, digest: str, module: str, tree: cst.Module, fixes: Iterable[Fix]
) -> tuple[tuple[str, Memoized], ...]:
    """The memo entries `previews` would compute for these fixes of one file, from its parsed tree.

    Runs in a check worker: an exception in a transform costs that preview (none is shown),
    never the findings the worker hands back with it.
    """
    try:
        verdict = unrewritable(source.data, source.rel, tree)
    except Exception as error:  # e.g. RecursionError in libcst's codegen of a deeply nested module
        verdict = f"cannot be rendered again ({type(error).__name__}); not rewritten"
    entries: list[tuple[str, Memoized]] = [(verdict_key(digest), verdict)]
    if verdict is None:
        # One position pass and rendering for all the file's previews, when one needs it.
        prepared = cache(lambda: transforms.prepare(tree))
        lines = cache(lambda: _Lines(source.text))
        for count, fix in enumerate(dict.fromkeys(fixes)):
            if count * len(source.text) > WORKER_PREVIEW_BUDGET:
                break  # the rest: the main process, which no file timeout stops (same previews)
            try:
                preview = _preview(source, fix, module, prepared, lines)
            except Exception:  # as above: no preview for this fix
                preview = None
            entries.append((preview_key(digest, source.rel, module, fix), preview))
    return tuple(entries)


def _preview(
    source: SourceFile,
    fix: Fix,
    module: str,
    prepared: Callable[[], transforms.Prepared],
    lines: Callable[[], _Lines],
) -> FixPreview | None:
    splice = _SPLICES[fix.kind](lines(), fix) if fix.kind in _SPLICES else None
    if splice is not None:
        return _spliced_preview(source.rel, lines(), fix, splice)
    applied = transforms.apply_fixes(source, [fix], module, prepared=prepared())
    if not applied.applied:
        return None
    edits, line_edits = text_edits(source.text, applied.text)
    diff = unified_diff(source.rel, source.text, applied.text, context=1)
    return FixPreview(fix.applicability, fix.description, edits, line_edits, diff)


# ---- previews spliced as text: no libcst, no pass over the whole file ------------------------
# A transform resolves positions over the whole module (~13 ms of a model file) and a preview
# compared the whole old and new texts: a file with thousands of fixes (unused suppressions) cost
# time in their product, in the main process, where no file timeout stops it (red-team 47: 2,000
# in one file, 23 s). The fixes that change one token are spliced at it, and their edits and diff
# are computed from the lines around it (`tests/test_previews.py` compares both with the transform).

_Splice = tuple[int, int, str]  # (start, end, replacement): offsets in the file's text


class _Lines:
    """A file's lines as `split_lines_keepends` splits them, and the offset each starts at."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = split_lines_keepends(text)
        self.starts = list(accumulate((len(line) for line in self.lines), initial=0))[:-1] or [0]

    def offset(self, line: int, column: int) -> int | None:
        """The offset of (1-based line, 0-based column in characters), when the line holds it."""
        if not 1 <= line <= len(self.lines) or column < 0:
            return None
        text = self.lines[line - 1]
        return self.starts[line - 1] + column if column <= len(text) - text.endswith("\n") else None

    def line_of(self, offset: int) -> int:
        """The 0-based line holding `offset` (the last line for the end of the text)."""
        return max(0, bisect_right(self.starts, offset) - 1)

    def end_of(self, line: int) -> int:
        """Where the 0-based `line` ends, its line ending included."""
        return self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)

    def from_line(self, line: int, column: int) -> Iterator[str]:
        """The text from (1-based line, column) on, a line at a time (for `tokenize`)."""
        return chain([self.lines[line - 1][column:]], islice(self.lines, line, None))


class _SplicedLines:
    """The lines of a file after a splice, as a view: the lines before the splice's first line
    and after its last are the file's own (no copy of a long file per preview)."""

    def __init__(self, old: list[str], first: int, last: int, middle: list[str]) -> None:
        self.old, self.first, self.last, self.middle = old, first, last, middle
        self.length = first + len(middle) + len(old) - last - 1

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> str:
        index = index + self.length if index < 0 else index
        if index < self.first:
            return self.old[index]
        if index < self.first + len(self.middle):
            return self.middle[index - self.first]
        return self.old[index - self.first - len(self.middle) + self.last + 1]

    def window(self, start: int, end: int) -> list[str]:
        return [self[index] for index in range(start, end)]


def _spliced_preview(rel: str, lines: _Lines, fix: Fix, splice: _Splice) -> FixPreview:
    start, end, replacement = splice
    first, last = lines.line_of(start), lines.line_of(end)
    text = lines.text
    middle = split_lines_keepends(text[lines.starts[first] : start] + replacement + text[end : lines.end_of(last)])
    new = _SplicedLines(lines.lines, first, last, middle)
    edits, line_edits = _edits(*_differing_spliced(lines.lines, new, 0))
    diff = _unified(rel, *_differing_spliced(lines.lines, new, 1), 1)
    return FixPreview(fix.applicability, fix.description, edits, line_edits, diff)


def _differing_spliced(old: list[str], new: _SplicedLines, keep: int) -> tuple[int, list[str], list[str]]:
    """`_differing(old, new, keep)`, starting from what the splice leaves equal: the lines before
    its first line, and those after its last."""
    limit = min(len(old), len(new))
    head = min(new.first, limit)
    while head < limit and old[head] == new[head]:
        head += 1
    tail = min(len(old) - 1 - new.last, limit - head)
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    skip, tail = max(0, head - keep), max(0, tail - keep)
    return skip, old[skip : len(old) - tail], new.window(skip, len(new) - tail)


def _string_splice(lines: _Lines, fix: Fix) -> _Splice | None:
    """Where a `replace-string` fix puts its new body (see `replaced_string`)."""
    new_body = fix.args[0]
    offset = lines.offset(fix.target.line, fix.target.column)
    if offset is None or not new_body.isidentifier():
        return None
    readline = partial(next, lines.from_line(fix.target.line, fix.target.column), "")
    try:
        token = next(tokenize.generate_tokens(readline))
    except (tokenize.TokenError, SyntaxError, StopIteration):
        return None
    if token.type != tokenize.STRING or token.start != (1, 0):
        return None
    value = token.string
    prefix = value[: len(value) - len(value.lstrip("rRuUbBfF"))]
    if set(prefix.lower()) & {"b", "f"}:
        return None
    quote = next(q for q in _QUOTES_AT_START if value.startswith(q, len(prefix)))
    return offset, offset + len(value), prefix + quote + new_body + quote


def _comment_splice(lines: _Lines, fix: Fix) -> _Splice | None:
    """What a `remove-suppression-code` fix makes of the comment at its target: the comment with
    the code stripped, or, with nothing left, no comment (and the spaces before it), or no line
    when the comment was the line's only content (libcst's `EmptyLine`, which the transform removes)."""
    line, column = fix.target.line, fix.target.column
    offset = lines.offset(line, column)
    if offset is None or lines.text[offset : offset + 1] != "#":
        return None
    text = lines.lines[line - 1]
    comment_end = lines.starts[line - 1] + len(text.rstrip("\r\n"))
    new = suppressions.strip_suppression_codes(lines.text[offset:comment_end], {int(fix.args[1]): {fix.args[0]}})
    if new is None:
        return None
    if new:
        return offset, comment_end, new
    before = text[:column]
    if not before.strip(" \t"):
        # The line goes, as libcst removes its EmptyLine; but after a backslash continuation the
        # comment ends that statement (the backslash goes too), and a last line without its newline,
        # or in a file of no code, changes how libcst ends the module: the transform decides (red-team 50).
        if line > 1 and lines.lines[line - 2].rstrip("\r\n").endswith("\\"):
            return None
        if line == len(lines.lines) and (not text.endswith("\n") or not _holds_code(lines.lines[: line - 1])):
            return None
        return lines.starts[line - 1], lines.end_of(line - 1), ""
    kept = before.rstrip(" \t")
    if kept.endswith((";", "\\")):
        return None  # whitespace libcst may give to the semicolon: the transform decides
    return lines.starts[line - 1] + len(kept), comment_end, ""


def _holds_code(lines: list[str]) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in lines)


_SPLICES: dict[str, Callable[[_Lines, Fix], _Splice | None]] = {
    "replace-string": _string_splice,
    "remove-suppression-code": _comment_splice,
}


_QUOTES_AT_START = ('"""', "'''", '"', "'")


def replaced_string(text: str, fix: Fix) -> str | None:
    """The text a `replace-string` fix makes of `text`, spliced without libcst, or None when the
    token at its target is not one the transform rewrites (the transform then decides).

    The transform needs a position pass over the whole module to find its node, most of a
    preview's cost (~13 ms of a model file's); the string literal at the target is the token
    the tokenizer reads from there, and the transform keeps its prefix and quotes around the new
    body, as this does (`tests/test_previews.py` compares the two).
    """
    splice = _string_splice(_Lines(text), fix)
    return None if splice is None else text[: splice[0]] + splice[2] + text[splice[1] :]
