"""What a file's bytes say before anything parses it, and which files the project index needs.

Parsing is the cost of a run, so declint decides from bytes which files to parse at all:

- each per-file rule declares `needles` (and may refine them with `prefilter`): a file none of
  whose rules can fire is never parsed for rules;
- the index declares its own needles, the last part of every name the index looks for (the
  model mixins and decorators, the declaration attribute, the fixed marker, the metadata and
  backend base classes, the shared Literal). Files with one of them are indexed in full; a file
  with `Literal` is indexed for its Literals only (DL100 looks for copies of the shared one
  anywhere); every other file of the roots gets a placeholder in the index (its module exists,
  nothing is known about its contents).

The needles alone would miss a class that inherits a model, a metadata class or a backend
through a class defined elsewhere (`class Cosmos(Qwen3VLModel)` in a file that names no mixin),
and a module the index reads through a re-export or a reference. `Demand` closes over both:
backwards, a file whose class statements name the base of a relevant class is indexed too (the
scan records the identifiers in every class statement's bases); forwards, the index is probed
with the questions rules ask, and every placeholder the answers touch is indexed. As a last line
of defence the engine tracks placeholder reads while rules run (`Tracker`), indexes what they
touched and checks again, so the prefilter can make a run faster but never change its findings.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
import symtable
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from declint.config import Config
from declint.facts import ClassFacts, FunctionFacts, ModuleFacts, ValueFacts, name_matches
from declint.index import _MAX_REEXPORT_HOPS, ProjectIndex
from declint.lazy import lazy_module
from declint.syntax import syntax_problem

_T = TypeVar("_T")

if TYPE_CHECKING:
    import difflib
else:
    difflib = lazy_module("difflib")  # ~2 ms: only a string close to a backend name reaches it

# ---- per-file byte facts ----------------------------------------------------------------------


class ScanRecord(NamedTuple):
    """What one read of a file found, before any parse.

    `error` is the DL000 a checked file gets without being parsed for rules (unreadable,
    undecodable, too large, or a syntax error found by the syntax check); `rules` the codes of
    the enabled per-file rules whose needles occur; `seeds` whether an index needle occurs;
    `marker` whether a suppression comment may; `bases` see `declint.bases.class_bases`.

    A named tuple, not a dataclass: one is built for every file of a cold run, and for every
    file the cache writes and reads (a frozen dataclass of ten fields cost ~1.8 us to build and
    pickles its field dict; a named tuple ~0.7 us).
    """

    digest: str
    size: int
    error: tuple[str, int, int] | None = None
    rules: frozenset[str] = frozenset()
    seeds: bool = False
    literal: bool = False  # contains LITERAL_NEEDLE
    marker: bool = False
    bases: frozenset[str] = frozenset()
    syntax_checked: bool = False
    # check-syntax or syntax-paths asks for its syntax: derivable from the path and the
    # configuration (both in the cache key), kept so that a run over cached records matches no glob
    syntax_scope: bool = False


def syntax_error(text: str, path: str) -> tuple[str, int, int] | None:
    """(message, line, column) of the file's syntax error as `ast` reports it, or None.

    `symtable` parses with CPython's parser without building Python AST objects (about 1.7x
    cheaper than `ast.parse`); it also rejects a few valid parses (`nonlocal` at module level),
    so any error it raises is confirmed, and worded, by `ast.parse` itself.
    """
    try:
        symtable.symtable(text, path, "exec")
        return None
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        pass
    try:
        ast.parse(text, filename=path)
    except SyntaxError as error:
        return syntax_problem(error, text)
    except (RecursionError, MemoryError, ValueError) as error:
        return f"cannot parse: {type(error).__name__}", 1, 0
    return None


# ---- searching many needles at once ----------------------------------------------------------

# Substrings most needles share: one search of the lower-cased text rules out every needle under
# the gate it lacks. On a file that matches nothing (most of a tree), 7 searches instead of 22.
_GATES = (b"backend", b"attention", b"metadata")


class NeedleSet:
    """Which of a fixed set of needles occur in a file's bytes (exact, case-sensitive matches).

    Each needle sits under a gate: the first of `_GATES` its lower-cased form contains, else that
    form itself. A needle can occur only where its gate occurs in the lower-cased text, so a gate
    search that fails skips its whole group (a multi-needle automaton would do it in one pass;
    none is a dependency, and this costs ~19 us against ~33 us on a 5 kB file).
    """

    def __init__(self, needles: Iterable[bytes]) -> None:
        groups: dict[bytes, list[bytes]] = {}
        for needle in sorted(set(needles)):
            lowered = needle.lower()
            gate = next((gate for gate in _GATES if gate in lowered), lowered)
            groups.setdefault(gate, []).append(needle)
        self.groups = tuple((gate, tuple(group)) for gate, group in sorted(groups.items()))

    def found(self, data: bytes) -> frozenset[bytes]:
        lowered = data.lower()
        return frozenset(needle for gate, group in self.groups if gate in lowered for needle in group if needle in data)


# ---- string literals close to a name (DL103's refined prefilter) ------------------------------

_QUOTES = re.compile(rb"([\"'])")


def strings_close_to(data: bytes, names: Iterable[str], cutoff: float) -> bool:
    """Could a string literal in `data` be, case-insensitively, one of `names` or a near miss?

    A literal's value is the text between two quote characters, so every run of text between
    quote characters is a candidate, also joined with its next one or two runs (a value with a
    quote character of the other kind inside). Escapes are decoded. A candidate matches as
    `difflib.get_close_matches(value.upper(), names, cutoff=cutoff)` would; lengths that cannot
    reach `cutoff` are skipped first. (A value with three or more quote characters inside is not
    seen; no backend name comes close to one.)
    """
    wanted = tuple(sorted({name.upper() for name in names}))
    if not wanted:
        return False
    check = _checker(wanted, cutoff)
    longest = check.high * 4  # escapes: raw text up to four bytes per character
    parts = _QUOTES.split(data)
    for start in range(0, len(parts), 2):
        candidate = parts[start]
        for end in range(start, min(start + 5, len(parts)), 2):
            if end > start:
                candidate = candidate + parts[end - 1] + parts[end]
            if len(candidate) > longest or (len(candidate) > check.high and b"\\" not in candidate):
                break
            if check(candidate):
                return True
    return False


class _Checker:
    """`(piece) -> could be a name`, memoized: the same strings recur across a project's files."""

    def __init__(self, wanted: tuple[str, ...], cutoff: float) -> None:
        self.wanted = wanted
        self.exact = frozenset(wanted)
        self.cutoff = cutoff
        self.seen: dict[bytes, bool] = {}
        self.bounds = tuple(_NameBound(name, cutoff) for name in wanted)
        # The lengths any name can match: the union of the names' windows.
        self.low = min(bound.low for bound in self.bounds)
        self.high = max(bound.high for bound in self.bounds)

    def __call__(self, piece: bytes) -> bool:
        found = self.seen.get(piece)
        if found is None:
            found = self.seen[piece] = self._compute(piece)
            if len(self.seen) > 200_000:
                self.seen.clear()
        return found

    def _compute(self, piece: bytes) -> bool:
        try:
            value = piece.decode("utf-8")
        except UnicodeDecodeError:
            return True  # another encoding: let the rule decide
        values = [value, _unescape(value)] if "\\" in value else [value]
        for text in values:
            upper = text.upper()
            if self.low <= len(upper) <= self.high and (upper in self.exact or self._close(upper)):
                return True
        return False

    def _close(self, upper: str) -> bool:
        """`difflib.get_close_matches(upper, wanted, cutoff=cutoff)` is not empty.

        difflib's ratio is 2 * M / (a + b) with M at most the letters both strings share (counted
        with repeats); names that bound cannot reach are skipped before difflib runs.
        """
        size = len(upper)
        for bound in self.bounds:
            if not bound.low <= size <= bound.high:
                continue
            needed = self.cutoff * (size + bound.length) - 1e-9  # 2 * M must reach this
            if 2 * len(upper.translate(bound.others)) < needed:  # M <= the characters the name has
                continue
            shared = sum(min(upper.count(letter), count) for letter, count in bound.letters)
            if 2 * shared >= needed and difflib.get_close_matches(upper, (bound.name,), n=1, cutoff=self.cutoff):
                return True
        return False


class _NameBound:
    """Upper bounds of difflib's matches against one name, cheapest first: the candidate lengths
    that can reach the cutoff at all; the candidate's characters that occur in the name (one
    `str.translate`); the letters both share, counted with repeats. With three names of 6-10
    letters most strings of a file fall in the global length window, and the per-name checks
    keep difflib for the few that can match."""

    __slots__ = ("high", "length", "letters", "low", "name", "others")

    def __init__(self, name: str, cutoff: float) -> None:
        self.name, self.length = name, len(name)
        # 2 * M / (a + b) >= cutoff with M <= min(a, b) bounds a candidate's length.
        self.low = max(1, int(self.length * cutoff / (2 - cutoff)))
        self.high = int(self.length * (2 - cutoff) / cutoff) + 1
        self.letters = tuple(Counter(name).items())
        # Deletes the ASCII characters the name lacks; any other character is kept (over-counted).
        self.others = str.maketrans("", "", "".join(chr(c) for c in range(128) if chr(c) not in name))


_ESCAPE = re.compile(r"\\(N\{[^}]*\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\n": ""}


def _unescape(text: str) -> str:
    """Python's string escapes decoded; an invalid one is kept as written (as Python does)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(int(code[1:], 16)) if int(code[1:], 16) <= 0x10FFFF else match.group(0)
        if code[0] == "N" and len(code) > 1:
            import unicodedata  # here: loading its database (0.3-2 ms) for a rare escape is no run's import cost

            try:
                return unicodedata.lookup(code[2:-1])
            except KeyError:
                return match.group(0)
        if code[0] in "01234567":
            return chr(int(code, 8))
        return _SIMPLE_ESCAPES.get(code, code if code in "\\'\"" else match.group(0))

    return _ESCAPE.sub(one, text)


@functools.lru_cache(maxsize=8)
def _checker(wanted: tuple[str, ...], cutoff: float) -> _Checker:
    return _Checker(wanted, cutoff)


# ---- the index's needles ------------------------------------------------------------------------


LITERAL_NEEDLE = b"Literal"


def index_needles(config: Config) -> tuple[bytes, ...]:
    """Bytes a file must contain for its facts to matter to the index by themselves.

    Besides, every file with `LITERAL_NEEDLE` is indexed for its Literals (`PartialFacts`).
    """
    names = [
        *config.str_list("model-mixins"),
        *config.str_list("model-decorators"),
        str(config.get("declaration-attribute")),
        str(config.get("fixed-marker")),
        str(config.get("metadata-base")),
        str(config.get("backend-base")),
        str(config.get("shared-literal")),
    ]
    return tuple(sorted({name.rpartition(".")[2].encode() for name in names if name}))


def root_names(config: Config) -> frozenset[str]:
    """Short names whose subclasses are relevant: the mixins and the two base classes."""
    names = [*config.str_list("model-mixins"), str(config.get("metadata-base")), str(config.get("backend-base"))]
    return frozenset(name.rpartition(".")[2] for name in names if name)


# ---- placeholders and tracking ------------------------------------------------------------------


# Neither subclass is decorated again: they add no field, and `ModuleFacts`'s generated methods
# (`__init__`, `__eq__` and `__hash__` comparing classes, `__repr__` naming the class, frozen
# `__setattr__`) serve them as they are; generating them again cost ~1.6 ms of every run that
# reads facts, for the same methods.
class PlaceholderFacts(ModuleFacts):
    """A module the prefilter did not index: it exists, nothing else is known about it."""

    @classmethod
    def at(cls, module: str, path: str) -> PlaceholderFacts:
        """`cls(module, path)` in a quarter of the time (~0.3 against ~1.2 us): a run makes one
        for nearly every file of the tree, and the frozen dataclass's `__init__` sets each of
        its eleven fields through `object.__setattr__`. The instance is the same."""
        facts = object.__new__(cls)
        facts.__dict__.update(_PLACEHOLDER_DEFAULTS, module=module, path=path)
        return facts


_PLACEHOLDER_DEFAULTS = {
    f.name: f.default for f in dataclasses.fields(PlaceholderFacts) if f.name not in ("module", "path")
}
if dataclasses.MISSING in _PLACEHOLDER_DEFAULTS.values():  # a field with a default_factory, or none
    raise TypeError("PlaceholderFacts.at needs a plain default for every field but module and path")


class PartialFacts(PlaceholderFacts):
    """A module indexed only for its `typing.Literal`s (DL100 looks for copies of the shared one
    everywhere): its imports, module-level assignments and Literals are real, its classes and
    functions unknown, so a lookup of one of those still counts as a read of a placeholder."""

    @classmethod
    def of(cls, facts: ModuleFacts) -> PartialFacts:
        return cls(
            facts.module,
            facts.path,
            imports=facts.imports,
            literals=facts.literals,
            assignments=facts.assignments,
            constants=facts.constants,
            error=facts.error,
            error_line=facts.error_line,
            error_column=facts.error_column,
        )


class Tracker:
    """Collects the placeholder modules read while the index answers a question."""

    def __init__(self) -> None:
        self.touched: set[str] = set()
        self.enabled = True

    def take(self) -> set[str]:
        touched, self.touched = self.touched, set()
        return touched


TRACKER = Tracker()


def _unknown(value: object) -> bool:
    """A placeholder whose module-level facts (imports, Literals, constants) are unknown."""
    return isinstance(value, PlaceholderFacts) and not isinstance(value, PartialFacts)


class _TrackedModules(dict[str, ModuleFacts]):
    def get(self, key: str, default: Any = None) -> Any:
        value = super().get(key, default)
        if _unknown(value) and TRACKER.enabled:
            TRACKER.touched.add(key)
        return value

    def __getitem__(self, key: str) -> ModuleFacts:
        value = super().__getitem__(key)
        if _unknown(value) and TRACKER.enabled:
            TRACKER.touched.add(key)
        return value


class _TrackedNames(dict[str, Any]):
    """`classes` (or another name-keyed dict): a miss inside a placeholder module is a read of it."""

    def __init__(self, items: Mapping[str, Any], owners: _Owners) -> None:
        super().__init__(items)
        self._owners = owners

    def _miss(self, key: str) -> None:
        self._owners.touch(key)

    def get(self, key: str, default: Any = None) -> Any:
        if not dict.__contains__(self, key):
            self._miss(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        if not dict.__contains__(self, key):
            self._miss(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        found = dict.__contains__(self, key)
        if not found and isinstance(key, str):
            self._miss(key)
        return found


class _TrackedSet(set[str]):
    def __init__(self, items: Iterable[str], owners: _Owners) -> None:
        super().__init__(items)
        self._owners = owners

    def __contains__(self, key: object) -> bool:
        found = set.__contains__(self, key)
        if not found and isinstance(key, str):
            self._owners.touch(key)
        return found


class _Owners:
    """The placeholder module a failed lookup of a name reads, memoized per name: an index's
    modules never change once built, and the closure's questions miss the same names over and
    over (~76k misses after an edit on the 20k tree: the memo took the questions from ~0.42 to
    ~0.29 s there, benchmarks/closure_timing.py)."""

    def __init__(self, modules: dict[str, ModuleFacts]) -> None:
        self._modules = modules  # (`_TrackedModules`: read through dict's own methods, untracked)
        self._owner: dict[str, str | None] = {}

    def touch(self, name: str) -> None:
        """A lookup of `name` failed: if the module that would define it is a placeholder, it was read."""
        if not TRACKER.enabled:
            return
        try:
            owner = self._owner[name]
        except KeyError:
            owner = self._owner[name] = self._placeholder_owner(name)
        if owner is not None:
            TRACKER.touched.add(owner)

    def _placeholder_owner(self, name: str) -> str | None:
        modules = self._modules
        if dict.__contains__(modules, name):
            return None  # a module's own name is answered by its presence, not by its contents
        module = name.rpartition(".")[0]
        while module:
            found = dict.get(modules, module)
            if found is not None:
                return module if isinstance(found, PlaceholderFacts) else None
            module = module.rpartition(".")[0]
        return None


def build_index(facts: Iterable[ModuleFacts], config: Config) -> ProjectIndex:
    """The project index, with reads of placeholder modules tracked."""
    index = ProjectIndex.build(facts, config)
    modules = _TrackedModules(index.modules)
    index.modules = modules
    owners = _Owners(modules)
    index.classes = _TrackedNames(index.classes, owners)
    index.functions = _TrackedSet(index.functions, owners)
    index.values = _TrackedNames(index.values, owners)
    index.module_of_path = _TrackedModules(index.module_of_path)
    # The reference graph resolves every reference in the project, though only those reachable
    # from a model matter; `ownership_reads` follows (and tracks) exactly those.
    # The class's function and a weak reference: a closure holding the bound method would make
    # the index a reference cycle, which only the cyclic collector frees (the CLI runs without it).
    whole_graph = type(index)._reference_graph
    this = weakref.ref(index)

    def reference_graph() -> dict[str, tuple[str, ...]]:
        owner = this()
        assert owner is not None  # called through the index itself
        enabled, TRACKER.enabled = TRACKER.enabled, False
        try:
            return whole_graph(owner)
        finally:
            TRACKER.enabled = enabled

    index._reference_graph = reference_graph  # type: ignore[method-assign]
    index.resolve = _remembered_resolve(this, type(index).resolve)  # type: ignore[method-assign]
    index.ancestors = _remembered_ancestors(this, type(index).ancestors)  # type: ignore[method-assign,assignment]
    return index


def _remembered_resolve(this: weakref.ref[ProjectIndex], resolve: Callable[..., str]) -> Callable[..., str]:
    """`ProjectIndex.resolve` memoized per dotted name, with the placeholder modules its first
    ask read replayed on every later one (`Tracker`): an index's facts never change once built,
    and the closure's questions resolve the same names over and over (~29k asks after an edit on
    the 20k tree, a third of their time; benchmarks/closure_timing.py). Only a whole query is
    memoized (not the recursion of a star import, which carries its own hops and seen names), and
    only one asked with tracking on: an untracked ask (the whole reference graph) records no read
    a later tracked one could replay."""
    memo: dict[str, tuple[str, set[str]]] = {}

    def remembered(dotted: str, hops: int = _MAX_REEXPORT_HOPS, _seen: dict[str, int] | None = None) -> str:
        whole = _seen is None and hops == _MAX_REEXPORT_HOPS
        known = memo.get(dotted) if whole else None
        if known is None:
            owner = this()
            assert owner is not None  # called through the index itself
            if not whole or not TRACKER.enabled:
                return resolve(owner, dotted, hops, _seen)
            known = memo[dotted] = _captured(lambda: resolve(owner, dotted))
        found, reads = known
        _replay(reads)
        return found

    return remembered


_Ancestry = tuple[str, ClassFacts | None]
_END = ("", None)  # `ancestors` has no end marker of its own: a name is never empty


def _remembered_ancestors(
    this: weakref.ref[ProjectIndex], ancestors: Callable[[ProjectIndex, ClassFacts], Iterator[_Ancestry]]
) -> Callable[[ClassFacts], Iterator[_Ancestry]]:
    """`ProjectIndex.ancestors` memoized per class (its name and bases, all the walk reads of it),
    walked whole on the first ask with the placeholder modules read before each step recorded,
    and replayed step by step: a caller that stops early (`any(...)`) reads what the lazy walk
    would have read up to there, and no more (a closure that reads more indexes more files).
    ~33k asks after an edit on the 20k tree. As for `resolve`, only a tracked ask is memoized."""
    memo: dict[tuple[str, tuple[str, ...]], list[tuple[set[str], _Ancestry]]] = {}

    def remembered(cls: ClassFacts) -> Iterator[_Ancestry]:
        key = (cls.qualname, cls.bases)
        steps = memo.get(key)
        if steps is None:
            owner = this()
            assert owner is not None  # called through the index itself
            if not TRACKER.enabled:
                return ancestors(owner, cls)
            steps = memo[key] = _walked(ancestors(owner, cls))
        return _replayed(steps)

    return remembered


def _walked(walk: Iterator[_Ancestry]) -> list[tuple[set[str], _Ancestry]]:
    """Every step of `walk` with the reads made before it; the last step is `_END`'s."""
    steps: list[tuple[set[str], _Ancestry]] = []
    while True:
        step, reads = _captured(lambda: next(walk, _END))
        steps.append((reads, step))
        if step is _END:
            return steps


def _replayed(steps: list[tuple[set[str], _Ancestry]]) -> Iterator[_Ancestry]:
    for reads, step in steps:
        _replay(reads)
        if step is _END:
            return
        yield step


def _captured(call: Callable[[], _T]) -> tuple[_T, set[str]]:
    """`call()` and the placeholder modules it read, those kept out of the tracker's set (the
    caller replays them); reads of a call that raised are the tracker's, as they would have been."""
    outer, TRACKER.touched = TRACKER.touched, set()
    try:
        found = call()
    except BaseException:
        outer |= TRACKER.touched
        raise
    finally:
        reads, TRACKER.touched = TRACKER.touched, outer
    return found, reads


def _replay(reads: set[str]) -> None:
    if reads and TRACKER.enabled:
        TRACKER.touched |= reads


# ---- the closure --------------------------------------------------------------------------------


@dataclass
class Demand:
    """Which files the index needs in full: seeds, then the closure described in the module doc.

    `modules` maps every indexed file to its module name; `bases` to the identifiers in its
    class statements; `seeds` are the files whose bytes hold an index needle.
    """

    config: Config
    modules: Mapping[str, str]
    bases: Mapping[str, frozenset[str]]
    seeds: frozenset[str]

    def __post_init__(self) -> None:
        self._by_module: dict[str, list[str]] = {}
        for rel, module in self.modules.items():
            self._by_module.setdefault(module, []).append(rel)
        for rels in self._by_module.values():
            if len(rels) > 1:  # a module and a package of one name, say: their order is the rels'
                rels.sort()
        self._roots = root_names(self.config)
        literal_module = self.config.literal_module
        self.initial = set(self.seeds) | set(self._by_module.get(literal_module, ()))
        self.relevant: set[str] = set(self._roots)
        self._stable: set[str] = set()
        self._irrelevant: set[str] = set()

    def existing(self, rels: Iterable[str]) -> set[str]:
        """Those of `rels` that are files of this run."""
        return {rel for rel in rels if rel in self.modules}

    def rels_of(self, modules: Iterable[str]) -> set[str]:
        return {rel for module in modules for rel in self._by_module.get(module, ())}

    def more(self, index: ProjectIndex, indexed: set[str]) -> set[str]:
        """Files to index next, given an index built from `indexed` (and placeholders)."""
        touched = self._probe(index)
        self.relevant = set(self._roots)
        for cls in list(index.classes.values()):
            if cls.qualname in self._irrelevant:
                continue
            TRACKER.take()
            if _relevant(index, cls, self._roots):
                self.relevant.add(cls.name)
            elif not TRACKER.touched:  # the answer cannot change as more files are indexed
                self._irrelevant.add(cls.qualname)
            touched |= TRACKER.take()
        wanted = self.rels_of(touched)
        for rel, names in self.bases.items():
            if rel not in indexed and not names.isdisjoint(self.relevant):
                wanted.add(rel)
        return wanted - indexed

    def _probe(self, index: ProjectIndex) -> set[str]:
        """Ask the index what rules ask; return the placeholder modules the answers read.

        A class whose answers read no placeholder gets the same answers however many more files
        are indexed (a lookup that found a real module, or none, finds the same), so it is asked
        only once.
        """
        TRACKER.take()
        touched: set[str] = set()
        for question in (index.models, index.metadata_classes, index.literal_definitions):
            _ask(question, None)
        touched |= TRACKER.take()
        touched |= ownership_reads(index)
        for cls in list(index.classes.values()):
            if cls.qualname in self._stable:
                continue
            for ask in _PER_CLASS:
                _ask(lambda c, a=ask: a(index, c), cls)
            found = TRACKER.take()
            if found:
                touched |= found
            else:
                self._stable.add(cls.qualname)
        return touched


def _relevant(index: ProjectIndex, cls: ClassFacts, roots: frozenset[str]) -> bool:
    if index.is_model(cls):
        return True
    return any(any(name_matches(name, root) for root in roots) for name, _ in index.ancestors(cls))


_PER_CLASS: tuple[Callable[[ProjectIndex, ClassFacts], object], ...] = (
    lambda index, c: list(index.ancestors(c)),
    lambda index, c: index.is_model(c),
    lambda index, c: index.effective_declaration(c),
    lambda index, c: index.required_encoders(c),
    lambda index, c: index.metadata_pairing(c),
    lambda index, c: index.provided(c),
    lambda index, c: index.constant(c.default_backend),  # "<unset>" and "<dynamic>" name no constant
)


def _ask(question: Callable[..., object], cls: ClassFacts | None) -> None:
    try:
        question() if cls is None else question(cls)
    except Exception:  # a probe only looks for reads; rules report errors
        return


def ownership_reads(index: ProjectIndex, depth: int = 10) -> set[str]:
    """The placeholder modules read when following references from every model, as ownership does.

    `ProjectIndex.owners` resolves the references of every class and function in the project
    (untracked here, see `build_index`), but only those reachable from a model within a few
    hops decide an owner; those are the ones followed here, with reads tracked.
    """
    TRACKER.take()
    items: dict[str, ClassFacts | FunctionFacts | ValueFacts] = {}
    for module in dict.values(index.modules):
        if module.classes or module.functions or module.values:  # not a placeholder's empty tuples
            found: list[ClassFacts | FunctionFacts | ValueFacts] = [*module.classes, *module.functions, *module.values]
            items.update((item.qualname, item) for item in found)
    try:
        models = index.models()
    except Exception:  # rules report errors; a probe only looks for reads
        return TRACKER.take()
    frontier = [(model.qualname, 1) for model in models]
    seen: set[str] = set()
    while frontier:
        node, hops = frontier.pop()
        if node in seen or hops > depth:
            continue
        seen.add(node)
        item = items.get(node)
        for reference in item.references if item is not None else ():
            try:
                target = index.resolve(reference)
            except Exception:  # as above
                continue
            if index.is_referable(target):
                frontier.append((target, hops + 1))
    return TRACKER.take()


def iter_placeholders(facts: Mapping[str, ModuleFacts]) -> Iterator[str]:
    return (rel for rel, fact in facts.items() if isinstance(fact, PlaceholderFacts))
