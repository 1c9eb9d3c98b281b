"""The cache: per-file scan records, index facts and findings, kept between runs.

Keys, so that a cached result is used only where recomputing it would give the same one:

- one cache file per *run key*: declint's version and the fingerprint of its own source files
  (a rule edited in a checkout invalidates everything), the effective configuration, the
  enabled rules and the cache format;
- per file, the content hash (SHA-256 of the bytes, 128 bits). Reading every file to hash it would cost
  more than the rest of a warm run, so a file whose size, mtime, change time and inode are what
  they were when it was hashed is not read again (the change time, as git's index keeps it:
  `cp -p` or `touch -r` set an mtime back, nothing sets the ctime back; a ctime moved by a
  chmod or a backup tool costs one read, the content hash then reuses everything); a file
  modified within two seconds of being hashed is always read again next time (its mtime cannot
  be trusted to have moved: git's "racily clean");
- per file's findings, the *index facts it depends on*: while rules run on a file they see the
  project index through `IndexProxy`, which records every question asked (`owners(X)`,
  `classes.get(Y)`, `literal_members`...) with a digest of the answer. When any indexed file
  changed since, the questions are asked again of the new index, and the findings are reused
  only if every answer is the same. A change to the shared Literal or to a base class in
  another file thereby invalidates exactly the files whose rules read it.

The cache lives under `<project root>/.declint_cache/` (option `cache-dir`), is disabled by
`--no-cache` or `DECLINT_NO_CACHE=1`, and is written atomically (temporary file and rename).
A run that changed a few entries (an edited file's) writes only those, to a *journal* next to
the full file, which the next load applies on top of it; the journal is folded back into a full
write once it holds a quarter of the files. Rewriting all of a large project's entries for one
edited file was the biggest part of that run.
It is pickled, and read back with an unpickler that only constructs declint's own data classes
and a few builtins: a cache file planted in a repository cannot run code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import gc
import hashlib
import importlib.util
import io
import marshal
import os
import pickle
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISDIR
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from declint import __version__, early_stats
from declint.cache_marks import CACHE_SUFFIXES, GITIGNORE, GITIGNORE_TEXT, TAG, TAG_TEXT, foreign_entries
from declint.config import Config, check_cache_dir
from declint.discovery import PROBE_EVENT, Listing
from declint.errors import warn
from declint.types import Finding, SuppressedFinding

if TYPE_CHECKING:  # a run the snapshot answers reads no facts, index or scan record
    from declint.facts import ModuleFacts
    from declint.index import ProjectIndex
    from declint.prefilter import ScanRecord

StatKey = early_stats.StatKey  # size, mtime_ns, ctime_ns, inode

FORMAT = 2  # 2: entries pickled as tuples (`_pack`)
NO_CACHE_ENV = early_stats.NO_CACHE_ENV
_KEEP_FILES = 8  # cache files of other run keys (other selections, configs) kept around
_RACY_SECONDS = 2.0
_TEMPORARY = ".tmp-"  # the name a cache file is written under before it is renamed into place
_STALE_TEMPORARY_S = 3600.0  # a temporary file older than this belongs to a write that was killed
_JOURNAL_SHARE = 4  # a journal holding more than 1/4 of the files is folded into a full write
_PREVIEWS = "fix-previews"  # fix previews' files: `fix-previews-<code fingerprint>.previews`
_FIX_MEMO = "fix-memo"  # what fix sessions found: `fix-memo-<code fingerprint>.memo`
_SUFFIXES = {_PREVIEWS: "previews", _FIX_MEMO: "memo"}
_KEEP_VERSIONED = 4  # of as many versions of declint (the newest written)
_ALLOWED_MODULES = frozenset(
    {
        "declint.types",
        "declint.reporting.model",  # fix previews
        "declint.facts",
        "declint.members",
        "declint.index",
        "declint.prefilter",
        "declint.cache",
    }
)
_ALLOWED_BUILTINS = frozenset({"frozenset", "set", "slice"})


def new_token() -> str:
    """16 random hex digits, as `secrets.token_hex(8)` gives them (`secrets` imports `random`,
    ~5 ms of every run's start-up, for this one call)."""
    return os.urandom(8).hex()


disabled_by_env = early_stats.cache_off_by_env  # one definition: the start-up child asks it too


def content_digest(data: bytes) -> str:
    # SHA-256 (truncated to 128 bits), not BLAKE2b: OpenSSL runs it on the CPU's SHA instructions
    # (x86 SHA-NI, ARMv8 crypto), 3.3 against 5.9 us for a 5 kB module, and every file of a
    # cold run is hashed. Without those instructions BLAKE2b would be the faster one.
    return hashlib.sha256(data).hexdigest()[:32]


def stat_identity(key: StatKey) -> str:
    """What stands for the bytes of a settled file no rule reads, in place of `content_digest`:
    the cache already trusts an unchanged stat to mean unchanged bytes (see `settled`), and these
    are most of a tree's files. A file whose facts are extracted gets its real digest then."""
    size, mtime_ns, ctime_ns, inode = key
    return f"stat:{size}:{mtime_ns}:{ctime_ns}:{inode}"


def is_stat_identity(digest: str) -> bool:
    return digest.startswith("stat:")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """declint's version plus the size and mtime of every source file of its packages, and of
    libcst's version file: its parses are in the cached findings, its output in the fixed texts
    the fix memo keeps (an upgrade of libcst alone invalidates both)."""
    parts = [__version__, sys.version, _libcst_version_stat()]
    for name in ("declint", "declint.rules", "declint.reporting"):
        module = sys.modules.get(name)
        for directory in getattr(module, "__path__", ()):
            for entry in sorted(os.scandir(directory), key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    parts.append(f"{entry.path}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


def _libcst_version_stat() -> str:
    """Found without importing libcst (a run the snapshot answers never does): ~0.3 ms.

    Where `lazy_module("libcst")` has bound it and nothing has used it yet, `find_spec` would read
    the lazy module's `__spec__` and so import all of libcst (~0.17 s): the spec is read from the
    module's own dict instead (`ModuleType.__getattribute__` is not the lazy module's override)."""
    module = sys.modules.get("libcst")
    spec = ModuleType.__getattribute__(module, "__spec__") if module is not None else importlib.util.find_spec("libcst")
    if spec is None or spec.origin is None:
        return "libcst:none"
    try:
        stat = os.stat(os.path.join(os.path.dirname(spec.origin), "_version.py"))
    except OSError:
        return f"libcst:{spec.origin}"
    return f"libcst:{stat.st_size}:{stat.st_mtime_ns}"


# ---- stable digests of index answers ------------------------------------------------------------


class Uncacheable(Exception):
    """A value that has no stable digest (a rule passed something that is not plain data)."""


def digest_of(value: object) -> str:
    return hashlib.blake2b(repr(_canonical(value)).encode(), digest_size=16).hexdigest()


@functools.cache
def _fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _canonical(value: object) -> object:
    """Plain nested tuples with sets sorted, so equal values have equal reprs whatever the hash seed."""
    cls = type(value)
    way = _CANONICAL_WAYS.get(cls)
    if way is None:
        way = _CANONICAL_WAYS[cls] = _canonical_way(cls)
    return way(value)


_CANONICAL_WAYS: dict[type, Callable[[Any], object]] = {}


def _canonical_way(cls: type) -> Callable[[Any], object]:
    """How a value of `cls` is made canonical, decided once per class (a replayed answer holds
    ~17 values, most of them the index's records: the tests of each value's kind were half the
    work of asking again the recorded answers of 724 files after one file was added)."""
    if cls is type(None) or issubclass(cls, bool | int | float | str | bytes):
        return _itself
    if issubclass(cls, tuple) and _is_named_tuple(cls):  # its class counts too, as a dataclass's
        return lambda value: ("N", cls.__qualname__, tuple(map(_canonical, value)))
    if issubclass(cls, tuple | list):
        return lambda value: ("T", tuple(map(_canonical, value)))
    if issubclass(cls, set | frozenset):
        return lambda value: ("S", tuple(sorted(map(_canonical, value), key=repr)))
    if issubclass(cls, dict):
        return lambda value: ("M", tuple(sorted(((_canonical(k), _canonical(v)) for k, v in value.items()), key=repr)))
    if issubclass(cls, enum.Enum):
        return lambda value: ("E", cls.__qualname__, value.value)
    if dataclasses.is_dataclass(cls) and not issubclass(cls, type):
        names = _fields(cls)
        return lambda value: ("D", cls.__qualname__, tuple(_canonical(getattr(value, name)) for name in names))
    return _uncacheable


def _itself(value: object) -> object:
    return value


def _uncacheable(value: object) -> object:
    raise Uncacheable(type(value).__name__)


# ---- recording what rules ask the index ---------------------------------------------------------


class _Raised:
    """The answer "this question raised" (a KeyError from `classes[...]`, say)."""

    def __repr__(self) -> str:
        return "<raised>"


_RAISED = _Raised()
_RAISED_DIGEST = "raised"


@dataclass(frozen=True)
class Dep:
    """One question to the index and the digest of its answer.

    `kind`: "attr" (a plain attribute), "call" (a method), or "map" (a dict or set attribute,
    `op` one of get/getitem/contains/keys/values/items/len).
    """

    kind: str
    name: str
    op: str = ""
    args: tuple[Any, ...] = ()
    answer: str = ""


class Recorder:
    """Hands out an index proxy and collects the questions asked through it."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.deps: dict[tuple[Any, ...], Dep] = {}
        self.cacheable = True

    @property
    def proxy(self) -> ProjectIndex:
        return _IndexProxy(self)  # type: ignore[return-value]  # duck-typed stand-in

    def record(self, kind: str, name: str, op: str, args: tuple[Any, ...], answer: object) -> None:
        try:
            key = (kind, name, op, _canonical(args))
            if key not in self.deps:
                self.deps[key] = Dep(kind, name, op, args, _answer_digest(answer))
        except Uncacheable:
            self.cacheable = False

    def collected(self) -> tuple[Dep, ...] | None:
        """The questions asked, in a stable order; None when one of them cannot be replayed."""
        if not self.cacheable:
            return None
        return tuple(self.deps[key] for key in sorted(self.deps, key=repr))


class _IndexProxy:
    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        recorder = self._recorder
        value = getattr(recorder.index, name)
        if name.startswith("_"):
            recorder.cacheable = False
            return value
        if callable(value):
            return functools.partial(_call, recorder, name)
        if isinstance(value, dict | set | frozenset):
            return _MapProxy(recorder, name, value)
        recorder.record("attr", name, "", (), value)
        return value


def _call(recorder: Recorder, name: str, *args: Any, **kwargs: Any) -> Any:
    if kwargs:
        recorder.cacheable = False
        return getattr(recorder.index, name)(*args, **kwargs)
    try:
        result = getattr(recorder.index, name)(*args)
    except Exception:
        recorder.record("call", name, "", args, _RAISED)
        raise
    if isinstance(result, Iterator):
        materialized = list(result)
        recorder.record("call", name, "", args, materialized)
        return iter(materialized)
    recorder.record("call", name, "", args, result)
    return result


class _MapProxy:
    """A dict or set attribute of the index, recording each read."""

    def __init__(self, recorder: Recorder, name: str, value: Any) -> None:
        self._recorder = recorder
        self._name = name
        self._value = value

    def _read(self, op: str, args: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        try:
            result = compute()
        except KeyError:
            self._recorder.record("map", self._name, op, args, _RAISED)
            raise
        self._recorder.record("map", self._name, op, args, result)
        return result

    def get(self, key: Any, default: Any = None) -> Any:
        return self._read("get", (key, default), lambda: self._value.get(key, default))

    def __getitem__(self, key: Any) -> Any:
        return self._read("getitem", (key,), lambda: self._value[key])

    def __contains__(self, key: object) -> bool:
        return bool(self._read("contains", (key,), lambda: key in self._value))

    def __iter__(self) -> Iterator[Any]:
        return iter(self._read("keys", (), lambda: list(self._value)))

    def keys(self) -> list[Any]:
        return list(self._read("keys", (), lambda: list(self._value)))

    def values(self) -> list[Any]:
        return list(self._read("values", (), lambda: list(self._value.values())))

    def items(self) -> list[tuple[Any, Any]]:
        return list(self._read("items", (), lambda: list(self._value.items())))

    def __len__(self) -> int:
        return int(self._read("len", (), lambda: len(self._value)))


def _answer_digest(answer: object) -> str:
    return _RAISED_DIGEST if answer is _RAISED else digest_of(answer)


def still_valid(deps: Iterable[Dep], index: ProjectIndex, answers: dict[Hashable, str | None] | None = None) -> bool:
    """Would every recorded question get the same answer from `index`?

    `answers`: the digests of answers `index` gave already (None: uncacheable), shared by the
    files of one run: most checked files ask the same few questions (the shared Literal's
    members), and replaying them was a fifth of a one-file-touched run on the transformers
    sources (367 cached results, ~23 ms)."""
    for dep in deps:
        question: Hashable | None = (dep.kind, dep.name, dep.op, dep.args)
        try:
            answer = answers[question] if answers is not None and question in answers else _MISSING
        except TypeError:  # an argument that cannot be hashed: asked again
            question, answer = None, _MISSING
        if answer is _MISSING:
            answer = _answer_digest_now(dep, index)
            if answers is not None and question is not None:
                answers[question] = answer
        if answer is None or answer != dep.answer:
            return False
    return True


_MISSING: Any = object()


def _answer_digest_now(dep: Dep, index: ProjectIndex) -> str | None:
    """The digest of `index`'s answer to `dep`'s question (None: it cannot be cached)."""
    try:
        return digest_of(_replay(dep, index))
    except Uncacheable:
        return None
    except Exception:  # a question that now raises
        return _RAISED_DIGEST


def _replay(dep: Dep, index: ProjectIndex) -> object:
    value = getattr(index, dep.name)
    if dep.kind == "attr":
        return value
    if dep.kind == "call":
        result = value(*dep.args)
        return list(result) if isinstance(result, Iterator) else result
    if dep.op == "get":
        return value.get(*dep.args)
    if dep.op == "getitem":
        return value[dep.args[0]]
    if dep.op == "contains":
        return dep.args[0] in value
    if dep.op == "keys":
        return list(value)
    if dep.op == "values":
        return list(value.values())
    if dep.op == "items":
        return list(value.items())
    if dep.op == "len":
        return len(value)
    raise ValueError(dep.op)


# ---- what is stored --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckEntry:
    """The result of checking one file's content, valid while `deps` get the same answers."""

    digest: str
    findings: tuple[Finding, ...]
    suppressed: tuple[SuppressedFinding, ...]
    deps: tuple[Dep, ...]
    signature: str  # the index signature the deps were last confirmed against
    # The file's module name when checked: the same bytes under another name (an `__init__.py`
    # added or removed above it) ask the index other questions, which `deps` never recorded.
    module: str = ""


class FileEntry:
    """One file's cache entry. Its check is kept as pickled until read (`check`): the checks are
    the largest part of a cache file (1.9 of 6.5 MB on the 20k-file tree of 600 models, ~0.065 s
    to load), and a run after an edit reads only those of the files it confirms; an entry whose
    check is never read, or read and not replaced, is written back as the bytes it was loaded
    from."""

    __slots__ = ("_check", "_packed", "facts", "scan", "settled", "stat")

    def __init__(
        self,
        stat: StatKey,
        settled: bool,  # mtime old enough at hashing time to trust it next time
        scan: ScanRecord,
        facts: ModuleFacts | None = None,
        check: CheckEntry | None = None,
        packed: bytes | None = None,  # `check` pickled, when it is not given
    ) -> None:
        self.stat, self.settled, self.scan, self.facts = stat, settled, scan, facts
        self._check, self._packed = check, packed

    @property
    def check(self) -> CheckEntry | None:
        if self._check is None and self._packed is not None:
            self._check = _loaded_check(self._packed)
            if self._check is None:  # (damaged: a cache miss, and never written back)
                self._packed = None
        return self._check

    @check.setter
    def check(self, check: CheckEntry | None) -> None:
        self._check, self._packed = check, None

    def with_scan(self, stat: StatKey, settled: bool, scan: ScanRecord, facts: ModuleFacts | None) -> FileEntry:
        """This entry's check, not loaded, for the same bytes scanned again."""
        return FileEntry(stat, settled, scan, facts, self._check, self._packed)

    def packed(self) -> _PackedEntry:
        """This entry as a cache file holds it (`Entries`)."""
        return self.stat, self.settled, tuple(self.scan), self.facts, self._packed_check()

    def _packed_check(self) -> bytes | None:
        if self._packed is None and self._check is not None:
            with _collector_paused():
                self._packed = pickle.dumps(self._check, protocol=pickle.HIGHEST_PROTOCOL)
        return self._packed


def _loaded_check(packed: bytes) -> CheckEntry | None:
    """A check pickled in an entry, or None when its bytes are damaged or hold something else
    (read with the cache's own unpickler: the cache file's checks load only when asked for, so a
    damaged one is found then, and costs that file's check, never the run)."""
    try:
        check = _unpickle(io.BytesIO(packed))
    except Exception:
        return None
    return check if isinstance(check, CheckEntry) else None


# A file's entry as pickled: (stat, settled, the scan record's fields, facts, check pickled).
# Most of a cold run's entries are of files no needle matched, and a run pickles one per file of
# the tree: plain tuples pickle ~2.5x faster than the entry and record objects (no reduce call
# per object) and load ~3x faster, objects rebuilt included.
_PackedEntry: TypeAlias = "tuple[StatKey, bool, tuple[Any, ...], ModuleFacts | None, bytes | None]"


class Entries(MutableMapping[str, FileEntry]):
    """A cache file's entries, each built from its pickled tuple when first read: a run after an
    edit reads a few of the 20k entries of a large tree (~0.045 s to build them all), and a write
    gives back as they were loaded those it never read."""

    __slots__ = ("_entries",)

    def __init__(self, packed: dict[str, _PackedEntry] | None = None) -> None:
        self._entries: dict[str, FileEntry | _PackedEntry] = dict(packed) if packed else {}

    def get(self, rel: str, default: Any = None) -> Any:  # (the mixin's goes through a KeyError)
        entry = self._entries.get(rel)
        if entry is None:
            return default
        return self._built(rel, entry) if isinstance(entry, tuple) else entry

    def __getitem__(self, rel: str) -> FileEntry:
        entry = self._entries[rel]
        return self._built(rel, entry) if isinstance(entry, tuple) else entry

    def _built(self, rel: str, packed: _PackedEntry) -> FileEntry:
        from declint.prefilter import ScanRecord

        stat, settled, scan, facts, pickled_check = packed
        entry = self._entries[rel] = FileEntry(stat, settled, ScanRecord._make(scan), facts, packed=pickled_check)
        return entry

    def __setitem__(self, rel: str, entry: FileEntry) -> None:
        self._entries[rel] = entry

    def __delitem__(self, rel: str) -> None:
        del self._entries[rel]

    def __contains__(self, rel: object) -> bool:
        return rel in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def packed(self) -> dict[str, _PackedEntry]:
        return {rel: e if isinstance(e, tuple) else e.packed() for rel, e in self._entries.items()}


def _pack(files: Mapping[str, FileEntry]) -> dict[str, _PackedEntry]:
    if isinstance(files, Entries):
        return files.packed()
    return {rel: entry.packed() for rel, entry in files.items()}


def _unpack(packed: object) -> Entries:
    """The entries of a pickled mapping, checked for their shape now (what a damaged or foreign
    file holds is found at load, which then gives a cold cache, not at a read in mid-run)."""
    from declint.prefilter import ScanRecord

    width = len(ScanRecord._fields)
    if not isinstance(packed, dict) or not all(_well_formed(entry, width) for entry in packed.values()):
        raise pickle.UnpicklingError("damaged cache entries")
    return Entries(packed)


def _well_formed(entry: object, width: int) -> bool:
    return (
        type(entry) is tuple
        and len(entry) == 5
        and type(entry[2]) is tuple
        and len(entry[2]) == width
        and (entry[4] is None or type(entry[4]) is bytes)
    )


def _closure_of(rest: list[Any]) -> tuple[tuple[str, ...], str]:
    """(demanded, closure) from what a pickled state holds after its fixed fields."""
    return (rest[0] if rest else ()), (rest[1] if len(rest) > 1 else "")


@dataclass
class CacheData:
    key: str
    files: Entries = field(default_factory=Entries)
    token: str = ""  # names this full write: a journal applies only to the write it extends
    # The files the index held in full (`_Run.demanded`): where the next run's closure starts.
    demanded: tuple[str, ...] = ()
    # `files_digest` of the files and module names over which `demanded` is the whole closure,
    # with these entries ("": not known); see `_Run._closure_holds`.
    closure: str = ""

    def __getstate__(self) -> tuple[str, dict[str, _PackedEntry], str, tuple[str, ...], str]:
        return self.key, _pack(self.files), self.token, self.demanded, self.closure

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        # (a write of an earlier version has no demanded set, nor a closure)
        key, packed, token, *rest = state
        self.key, self.files, self.token = key, _unpack(packed), token
        self.demanded, self.closure = _closure_of(rest)


@dataclass
class Journal:
    """The entries changed since the full write named `token`, and the closure of the run that
    wrote it (`CacheData.demanded` and `closure`, which replace the full write's)."""

    key: str
    token: str
    files: Mapping[str, FileEntry]
    demanded: tuple[str, ...] = ()
    closure: str = ""

    def __getstate__(self) -> tuple[str, str, dict[str, _PackedEntry], tuple[str, ...], str]:
        return self.key, self.token, _pack(self.files), self.demanded, self.closure

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        key, token, packed, *rest = state  # (a journal of an earlier version has no closure)
        self.key, self.token, self.files = key, token, _unpack(packed)
        self.demanded, self.closure = _closure_of(rest)


@dataclass
class Snapshot:
    """The last run's outcome, small enough to load in milliseconds: when nothing changed, a run
    is a stat per file and directory and this (no walk, no scan record, fact or index).

    `files` holds the `StatKey` of every file of the last run (all settled), `results`
    each checked file's findings and suppressed findings, `project` the project rules' findings
    before the per-run filter, `inputs` the stat of every directory the walk listed and every
    other file it or the project rules read (.gitignore files, the docs table, the serving
    schemas, package markers), None for a path that did not exist. A directory's mtime moves
    when an entry is added, removed or renamed, so unchanged inputs mean the same files; a
    directory of the walk whose mtime moved is listed again, and the same names and kinds
    (`Listing.signature`) mean the same files too (`_Run._relist`).
    """

    key: str
    files: dict[str, tuple[str, StatKey, str]]  # rel -> (path, stat key, module name)
    results: dict[str, tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]]]
    project: tuple[Finding, ...]
    inputs: tuple[tuple[str, StatKey | None], ...]
    walk: tuple[tuple[str, StatKey | None], ...] = ()  # what the file list depends on
    roots: tuple[str, ...] = ()  # the indexed roots that existed
    request: tuple[str, ...] = ()  # the paths asked for (absolute, sorted)
    checked: tuple[str, ...] = ()  # what they expanded to
    # Those of them the walk of the roots did not find (a file outside them asked for by path):
    # the index held them for this request only, so the run asking for other paths leaves them out.
    unindexed: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (rel as the file system names it, reason) of paths not followed
    # Written with the walk file (`early_stats`): the child that stats at start-up answers for it.
    token: str = ""
    # The token of the walk's directory listings (`Cache.save_listings`): the run that walked
    # writes them, and a run that takes its files from this snapshot (no walk) names them again.
    listings: str = ""
    # rel -> content digest of the files whose bytes were hashed (those a rule reads; the others
    # are known by their stat only): a file whose stat moved but whose bytes hash the same (a
    # `touch`, a file saved again in place unchanged) leaves it standing.
    digests: dict[str, str] = field(default_factory=dict)
    # Every needle the scan looked for, and the class bases of the files known by their stat
    # (those with any): such a file edited without gaining a needle or changing its bases is
    # the same placeholder for the index, read by no rule, and leaves it standing too.
    needles: tuple[bytes, ...] = ()
    bases: dict[str, frozenset[str]] = field(default_factory=dict)
    # What a run after an edit the index cannot see needs to answer without the full cache
    # (`declint.patching`): the token of the facts the index held (`Cache.save_held`), the scan's
    # `closure_view` of each hashed file the index held as a placeholder, the hashed files that
    # check-syntax or syntax-paths ask the syntax of (a checked file known by its stat is never
    # one: the scan hashes those), and the source files the project rules read from disk (their
    # findings hold only while those are unchanged).
    held: str = ""
    views: dict[str, tuple[object, ...]] = field(default_factory=dict)
    scoped: frozenset[str] = frozenset()
    project_reads: frozenset[str] = frozenset()


path_key = early_stats.path_key  # one definition: the child that stats at start-up uses it too


def _stat_lists(snapshot: Snapshot) -> tuple[early_stats.Lists, early_stats.Lists, early_stats.Lists]:
    """The snapshot's walk, inputs and files as (paths, keys), in the order the engine stats them."""
    files = list(snapshot.files.values())
    return (
        ([path for path, _ in snapshot.walk], [key for _, key in snapshot.walk]),
        ([path for path, _ in snapshot.inputs], [key for _, key in snapshot.inputs]),
        ([path for path, _, _ in files], [key for _, key, _ in files]),
    )


class SavedListings(Mapping[str, Listing]):
    """The listings a snapshot names (`Snapshot.listings`), read from the cache on first use:
    only a project rule that walks the tree asks (DL108), and only in a run that did not walk."""

    def __init__(self, store: Cache, key: str, token: str) -> None:
        self.store, self.key, self.token = store, key, token
        self._loaded: dict[str, Listing] | None = None

    @property
    def _listings(self) -> dict[str, Listing]:
        if self._loaded is None:
            with InputRecorder.paused():  # the cache's own file is no input of the rule asking
                self._loaded = (self.store.load_listings(self.key, self.token) if self.token else None) or {}
        return self._loaded

    def __getitem__(self, directory: str) -> Listing:
        return self._listings[directory]

    def __iter__(self) -> Iterator[str]:
        return iter(self._listings)

    def __len__(self) -> int:
        return len(self._listings)


class Recorded(dict[str, StatKey | None]):
    """Paths a run read, each with its stat key taken *before* it was read (None: it did not
    exist). A key taken afterwards would hide a change made in between: a file created in a
    directory already listed, or an input edited after a rule read it, would look unchanged to
    every later run. `racy` holds the files whose mtime was too fresh, when their key was taken,
    to tell a later edit within the same timestamp tick apart (as for a checked file's entry:
    no snapshot then). Directories are not held to that: their mtime moves only when an entry is
    added, removed or renamed, and one just created or emptied would otherwise cost the snapshot
    of the next run too (a change within the tick of the listing itself goes unseen where the
    file system's timestamps are coarse). Without `with_keys` (no cache) only the paths are kept."""

    def __init__(self, items: Iterable[tuple[str, StatKey | None]] = (), *, with_keys: bool = True) -> None:
        super().__init__(items)
        self.with_keys = with_keys
        self.racy: set[str] = set()

    def take(self, path: str) -> None:
        """Record `path` as it is now, unless it was recorded before (its first read counts)."""
        if path in self:
            return
        try:
            stat = os.stat(path) if self.with_keys else None
        except OSError:
            stat = None
        self.note(path, stat)

    def note(self, path: str, stat: os.stat_result | None) -> None:
        """Record `path` with `stat`, which the caller took before it read the path."""
        self[path] = None if stat is None else stat_key(stat)
        if stat is not None and not S_ISDIR(stat.st_mode) and not settled(stat):
            self.racy.add(path)

    def merged(self, other: Recorded) -> Recorded:
        """Both recordings; a path in both keeps this one's key."""
        both = Recorded({**other, **self}.items(), with_keys=self.with_keys and other.with_keys)
        both.racy = self.racy | {path for path in other.racy if path not in self}
        return both


# What the hook records: a path opened or listed, or one the walk only looked for (PROBE_EVENT).
_RECORDED_EVENTS = frozenset({"open", "os.scandir", "os.listdir", PROBE_EVENT})
# The import system's own modules, by the names they run under (frozen until `importlib` is
# imported, renamed then): what they open or list is a module being imported, declint's or the
# standard library's (declint never imports the code it checks), never an input of a rule.
_IMPORT_SYSTEM = frozenset(
    {
        "_frozen_importlib",
        "_frozen_importlib_external",
        "importlib._bootstrap",
        "importlib._bootstrap_external",
        "zipimport",
    }
)


class InputRecorder:
    """Records the files opened and directories listed while active (a process audit hook),
    each with its stat before the open or the listing (see `Recorded`), and the paths the walk
    looked for without opening them (`discovery.PROBE_EVENT`: a `.git` above the root).

    The project rules read files the index does not cover (the docs table, the serving schemas
    they find by walking the root); their findings are reused only while those are unchanged.
    A module they import meanwhile is not one of those: recorded, its `.pyc` files would be
    stated by every warm run, and a run just after they were written (a fresh checkout compiled)
    would find them too fresh to trust and write no snapshot.
    """

    _installed = False
    _active: Recorded | None = None

    @classmethod
    def _hook(cls, event: str, args: tuple[Any, ...]) -> None:
        active = cls._active
        if active is not None and event in _RECORDED_EVENTS and args:
            if sys._getframe(1).f_globals.get("__name__") in _IMPORT_SYSTEM:  # the caller of open
                return
            path = args[0]
            if isinstance(path, str | bytes | os.PathLike):
                active.take(os.path.abspath(os.fsdecode(path)))  # audit hooks run before the call

    @classmethod
    @contextlib.contextmanager
    def paused(cls) -> Iterator[None]:
        """Nothing read meanwhile is recorded (declint's own files)."""
        previous, cls._active = cls._active, None
        try:
            yield
        finally:
            cls._active = previous

    @classmethod
    @contextlib.contextmanager
    def recording(cls, *, with_keys: bool = True) -> Iterator[Recorded]:
        if not cls._installed:
            sys.addaudithook(cls._hook)
            cls._installed = True
        previous, cls._active = cls._active, Recorded(with_keys=with_keys)
        try:
            yield cls._active
        finally:
            cls._active = previous


stat_key = early_stats.stat_key


def settled(stat: os.stat_result, now: float | None = None) -> bool:
    return ((now if now is not None else time.time()) - stat.st_mtime) > _RACY_SECONDS


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Unpickling (and pickling) the cache allocates ~10^5 objects, none of them in a cycle; the
    cyclic collector would run dozens of times meanwhile, each pass also traversing everything
    imported: ~6 ms of a ~16 ms load on the benchmark corpus. Python's own `timeit` pauses it too."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _temporary_file(path: Path) -> tuple[int, str]:
    """A new file next to `path`, created exclusively, private: `tempfile.mkstemp` by hand,
    because importing tempfile (with shutil, random, bz2, lzma) was ~4 ms of every run that
    writes the cache, an eighth of what a one-file edit adds to a warm run."""
    while True:
        temporary = str(path.parent / f"{_TEMPORARY}{new_token()}{path.suffix}")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), temporary
        except FileExistsError:  # 2^-64 a try
            continue


def _unpickle(handle: Any) -> Any:
    with _collector_paused():
        return _SafeUnpickler(handle).load()


class _SafeUnpickler(pickle.Unpickler):
    # What each allowed name was found to be: a cache file's checks load one by one, each
    # naming its classes again (~6 lookups a check; ~0.04 s of the 725 checks of the 20k-file
    # tree under a profiler).
    _found: ClassVar[dict[tuple[str, str], Any]] = {}

    def find_class(self, module: str, name: str) -> Any:
        found = self._found.get((module, name))
        if found is None:
            found = self._found[module, name] = self._allowed_class(module, name)
        return found

    def _allowed_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return super().find_class(module, name)
        if module in _ALLOWED_MODULES:
            found = super().find_class(module, name)
            if isinstance(found, type) and (
                dataclasses.is_dataclass(found) or issubclass(found, enum.Enum) or _is_named_tuple(found)
            ):
                return found
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from the cache")


def _is_named_tuple(cls: type) -> bool:
    """A `typing.NamedTuple` (the facts' records): unpickled by calling the class with its fields."""
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


class SessionMemory:
    """A cache held in memory by one process, for the runs of one `check --fix` with the cache
    off (`--no-cache`, DECLINT_NO_CACHE, or a cache-dir that cannot be used): the fixes are
    verified by re-linting the whole run once per group tried, and each re-lint read, parsed and
    checked every file again. The first run's data stands in for the cache directory's for the
    re-lints (runs over overridden texts, which write no cache; the first run's may be one too,
    `--stdin-filename`, whose data then holds no entry of the text): the same trust (a file's stat
    unchanged and settled), and each run its own copy of the entries, as loaded from a pickle.
    Nothing of it reaches the disk or outlives the process; a `--fix` with nothing to fix never
    pickles it. `check --diff-base` with the cache off keeps one too: the check of the merge base
    is a run over the working tree with texts in place of some files and others left out."""

    def __init__(self) -> None:
        self._data: CacheData | None = None  # as the run that made it left it
        self._blob: bytes | None = None  # `_data` pickled, on the first load

    def load(self, key: str) -> CacheData:
        if self._blob is None and self._data is not None:
            with _collector_paused():
                self._blob = pickle.dumps(self._data, protocol=pickle.HIGHEST_PROTOCOL)
            self._data = None
        if self._blob is None:
            return CacheData(key)
        with _collector_paused():
            data = pickle.loads(self._blob)
        return data if isinstance(data, CacheData) and data.key == key else CacheData(key)

    @property
    def empty(self) -> bool:
        return self._data is None and self._blob is None

    def save(self, data: CacheData) -> None:
        self._data, self._blob = data, None


class Cache:
    """One project's cache directory; `load` and `save` one run key's data."""

    def __init__(self, directory: Path, root: Path) -> None:
        self.directory = directory
        self.root = root
        self._journaled: frozenset[str] = frozenset()  # rels the loaded journal held
        self._loaded_token = ""  # the full write `load` read (a journal extends only that one)

    @classmethod
    def for_config(cls, config: Config) -> Cache | None:
        """The project's cache (option `cache-dir`), or None when it may not be used (said on
        stderr). A `cache-dir` that would hide sources behind the cache's marks is a ConfigError."""
        check_cache_dir(config)  # again: a Config made in code was not validated by load_config
        value = str(config.get("cache-dir"))
        store = cls.open(config.root, value)
        if store is None:
            warn(
                f'cache-dir "{value}" is outside the project root {config.root} or goes through a symlink; '
                "declint writes its cache only into a directory below the root: the cache is off"
            )
            return None
        if os.path.lexists(store.directory):
            store._check_own(config, value)
        return store

    def _check_own(self, config: Config, value: str) -> None:
        if not self.directory.is_dir():
            raise config.error("cache-dir", f'names "{value}", which exists and is not a directory')
        try:
            foreign = foreign_entries(str(self.directory))
        except OSError:
            return  # unreadable: writing into it fails too, and a cache that cannot be written costs speed only
        if foreign:
            more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
            raise config.error(
                "cache-dir",
                f'names "{value}", which holds files that are not declint\'s ("{foreign[0]}"{more}); declint '
                'marks its cache directory with a .gitignore of "*" and a CACHEDIR.TAG, which would hide them: '
                "name a new directory",
            )

    @classmethod
    def open(cls, root: Path, relative: str) -> Cache | None:
        """The cache under `root`, or None when it may not be used (a link, outside the root)."""
        directory = (root / relative) if not os.path.isabs(relative) else Path(relative)
        for probe in (directory, *directory.parents):
            if probe == root or root not in probe.parents:
                break
            if probe.is_symlink():
                return None  # a planted link must not make declint write elsewhere
        resolved = Path(os.path.abspath(directory))
        if root not in resolved.parents:
            return None  # outside the root, or the root itself (its marks would hide the project)
        return cls(resolved, root)

    def path_for(self, key: str, suffix: str = ".pickle") -> Path:
        return self.directory / f"v{FORMAT}" / f"{key}{suffix}"

    def _read(self, path: Path) -> Any:
        """What `path` holds, or None when it is missing, damaged or foreign: a cache file that
        cannot be read costs speed (the full path decides, previews are recomputed), never the run."""
        try:
            with open(path, "rb") as handle:
                return _unpickle(handle)
        except Exception:
            return None

    def load_snapshot(self, key: str) -> Snapshot | None:
        snapshot = self._read(self.path_for(key, ".snapshot"))
        return snapshot if isinstance(snapshot, Snapshot) and snapshot.key == key else None

    def save_snapshot(self, snapshot: Snapshot) -> str:
        """The snapshot, then the lists it stats as a walk file for `early_stats` (after it: a
        walk file never names a snapshot not yet written). Returns the new token it was written
        with: a token names one snapshot, so one state of the files it describes."""
        snapshot = dataclasses.replace(snapshot, token=new_token())
        self._write(self.path_for(snapshot.key, ".snapshot"), snapshot)
        self.save_walk_file(snapshot)
        return snapshot.token

    def save_walk_file(self, snapshot: Snapshot) -> None:
        """The walk file of `snapshot`: written with it, and again by a run that found the walk
        file of another version's or configuration's snapshot there (`early_stats.answered_another`)."""
        self._write_bytes(self.walk_file, early_stats.dump(snapshot.token, *_stat_lists(snapshot)))

    def save_listings(self, key: str, token: str, listings: Mapping[str, Listing]) -> None:
        """The walk's directory listings, for the later runs that take the walk from the snapshot
        and whose project rules walk the tree again (DL108's search for serving schemas walked
        the 6,817 directories of the 20k-file tree anew, ~85 ms of a pre-commit run). Marshal:
        ~1 MB of plain tuples there, written and read in a few milliseconds."""
        data = {directory: tuple(listing) for directory, listing in listings.items()}
        self._write_bytes(self.path_for(key, ".listings"), marshal.dumps((token, data)))

    def load_listings(self, key: str, token: str) -> dict[str, Listing] | None:
        """The listings saved with `token`; None when they are missing, damaged or others."""
        try:
            with open(self.path_for(key, ".listings"), "rb") as handle:
                stored, data = marshal.load(handle)
            if stored != token or not token:
                return None
            return {directory: Listing._make(entry) for directory, entry in data.items()}
        except Exception:  # a cache file that cannot be read costs speed, never the run
            return None

    def save_held(self, key: str, token: str, held: Mapping[str, ModuleFacts]) -> None:
        """The facts the index held of the files it did not hold as placeholders (full facts of
        the demanded files, a Literal's file's partial ones), written with a snapshot: with them
        and the snapshot's module names a run rebuilds that index without loading the cache."""
        self._write(self.path_for(key, ".held"), (token, dict(held)))

    def load_held(self, key: str, token: str) -> dict[str, ModuleFacts] | None:
        """The facts saved with `token`; None when they are missing, damaged or others."""
        stored = self._read(self.path_for(key, ".held")) if token else None
        if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == token and isinstance(stored[1], dict):
            return stored[1]
        return None

    @property
    def walk_file(self) -> Path:
        return self.directory / early_stats.FORMAT_DIR / early_stats.WALK_FILE  # FORMAT_DIR: tested v{FORMAT}

    def drop_snapshot(self, key: str) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path_for(key, ".snapshot"))

    def load_previews(self) -> dict[str, Any]:
        """Fix previews of earlier runs (`declint.previews.PreviewMemo`), for this version of declint."""
        return self._load_versioned(_PREVIEWS)

    def save_previews(self, previews: dict[str, Any]) -> None:
        self._save_versioned(_PREVIEWS, previews)

    def load_fix_memo(self) -> dict[str, Any]:
        """What earlier fix sessions found (`declint.fix_memo.FixMemo`), for this version of declint."""
        return self._load_versioned(_FIX_MEMO)

    def save_fix_memo(self, memo: dict[str, Any]) -> None:
        self._save_versioned(_FIX_MEMO, memo)

    def _load_versioned(self, kind: str) -> dict[str, Any]:
        stored = self._read(self._versioned_path(kind))
        ok = isinstance(stored, tuple) and len(stored) == 2 and stored[0] == code_fingerprint()
        return stored[1] if ok and isinstance(stored[1], dict) else {}

    def _save_versioned(self, kind: str, value: dict[str, Any]) -> None:
        path = self._versioned_path(kind)
        self._write(path, (code_fingerprint(), value))
        with contextlib.suppress(OSError):
            self._prune_versioned(kind, path)

    def _versioned_path(self, kind: str) -> Path:
        """One file per version of declint: a pre-commit hook's declint and a virtual
        environment's of another version, run on one tree, each recomputed every preview when
        they shared one (1.5 s of a warm run on the 20k-file tree)."""
        return self.path_for(f"{kind}-{code_fingerprint()}", f".{_SUFFIXES[kind]}")

    def _prune_versioned(self, kind: str, keep: Path) -> None:
        for old in _newest_first(keep.parent, f"{kind}*{keep.suffix}")[_KEEP_VERSIONED:]:
            if old != keep:
                with contextlib.suppress(OSError):
                    old.unlink()

    def load(self, key: str) -> CacheData:
        """The full write of `key`, with its journal applied (see the module doc)."""
        data = self._load_full(key)
        journal = self._load_journal(key) if data.token else None
        if journal is not None and journal.token == data.token:
            data.files.update(journal.files)
            data.demanded, data.closure = journal.demanded, journal.closure
            self._journaled = frozenset(journal.files)
        self._loaded_token = data.token
        return data

    def _load_full(self, key: str) -> CacheData:
        data = self._read(self.path_for(key))
        return data if isinstance(data, CacheData) and data.key == key else CacheData(key)  # else a cold cache

    def _load_journal(self, key: str) -> Journal | None:
        journal = self._read(self.path_for(key, ".journal"))
        ok = isinstance(journal, Journal) and journal.key == key and isinstance(journal.files, Entries)
        return journal if ok else None

    def save(self, data: CacheData, changed: Iterable[str] | None = None) -> None:
        """Write atomically; a cache that cannot be written costs speed, never the run.

        `changed`: the rels whose entries this run replaced or modified (None: unknown). When
        `data` extends the full write `load` read and the journal stays small, only the journal
        is written; otherwise a full write with a new token, which orphans any journal.
        """
        journaled = None if changed is None else self._journaled | frozenset(changed)
        extends = bool(data.token) and data.token == self._loaded_token
        if extends and journaled is not None and len(journaled) <= len(data.files) // _JOURNAL_SHARE:
            files = {rel: data.files[rel] for rel in sorted(journaled) if rel in data.files}
            journal = Journal(data.key, data.token, files, data.demanded, data.closure)
            self._write(self.path_for(data.key, ".journal"), journal)
            return
        data.token = new_token()
        path = self.path_for(data.key)
        self._write(path, data)
        with contextlib.suppress(OSError):
            os.unlink(self.path_for(data.key, ".journal"))
        self._journaled, self._loaded_token = frozenset(), data.token
        with contextlib.suppress(OSError):
            self._prune(path)
            self._drop_other_formats()

    def _write(self, path: Path, value: object) -> None:
        buffer = io.BytesIO()
        with _collector_paused():
            pickle.dump(value, buffer, protocol=pickle.HIGHEST_PROTOCOL)
        self._write_bytes(path, buffer.getvalue())

    def _write_bytes(self, path: Path, data: bytes) -> None:
        """Write `path` whole or not at all (a temporary file renamed over it); a write that fails
        (a full disk, a read-only file system) costs the cache, never the run, and is said once."""
        try:
            self._prepare()
            handle, temporary = _temporary_file(path)
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
                raise
        except OSError as error:
            # Unsaid, every later run would start cold with no sign why (ruff warns likewise).
            warn(
                f"cannot write the cache in {self.directory} ({error.strerror or error}): later runs will not "
                "be faster; --no-cache turns the cache off"
            )

    def ensure(self) -> None:
        with contextlib.suppress(OSError):
            self._prepare()

    def _prepare(self) -> None:
        """Create the directory and its marks. An existing directory holding anything declint
        did not write is left alone (OSError): the marks would hide its files."""
        if os.path.lexists(self.directory) and foreign_entries(str(self.directory)):
            raise OSError(f"{self.directory} is not declint's cache directory")
        (self.directory / f"v{FORMAT}").mkdir(parents=True, exist_ok=True)
        tag = self.directory / TAG
        if not tag.exists():
            tag.write_text(TAG_TEXT, encoding="utf-8")
        ignore = self.directory / GITIGNORE
        if not ignore.exists():
            ignore.write_text(GITIGNORE_TEXT, encoding="utf-8")

    def _prune(self, keep: Path) -> None:
        for old in _newest_first(keep.parent, "*.pickle")[_KEEP_FILES:]:
            if old != keep:
                with contextlib.suppress(OSError):
                    old.unlink()
                for suffix in (".snapshot", ".journal", ".listings", ".held"):
                    with contextlib.suppress(OSError):
                        old.with_suffix(suffix).unlink()
        _drop_stale_temporaries(keep.parent, time.time())

    def _drop_other_formats(self) -> None:
        """Remove the cache files of other formats (`v1/` after an upgrade to format 2): no
        version of declint that writes this format reads them. Only declint's own files go, and
        a directory only once it is empty."""
        for directory in self.directory.glob("v[0-9]*"):
            ours = directory.name[1:].isdigit() and directory.name != f"v{FORMAT}"
            if not ours or directory.is_symlink() or not directory.is_dir():
                continue
            for entry in directory.iterdir():
                if entry.suffix in CACHE_SUFFIXES and (entry.is_file() or entry.is_symlink()):
                    with contextlib.suppress(OSError):
                        entry.unlink()
            with contextlib.suppress(OSError):
                directory.rmdir()


def _newest_first(directory: Path, pattern: str) -> list[Path]:
    """The files matching `pattern`, newest first; another run's temporary files are none of them."""
    found = (path for path in directory.glob(pattern) if not path.name.startswith(_TEMPORARY))
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def _drop_stale_temporaries(directory: Path, now: float) -> None:
    """Remove the temporary files of writes that never finished (a run killed by SIGKILL, the OOM
    killer, a CI timeout, a power cut: no handler ran to remove them), each up to a cache file's
    size, which would otherwise stay for good. Only those older than `_STALE_TEMPORARY_S`: a
    temporary file of another run writing right now is milliseconds old."""
    for path in directory.glob(f"{_TEMPORARY}*"):
        with contextlib.suppress(OSError):
            if now - path.lstat().st_mtime > _STALE_TEMPORARY_S:
                path.unlink()


def run_key(parts: Iterable[str]) -> str:
    return hashlib.blake2b("\x00".join([str(FORMAT), code_fingerprint(), *parts]).encode(), digest_size=16).hexdigest()


def files_digest(modules: Mapping[str, str]) -> str:
    """Digest of the files of a run and their module names (`rel -> module`, in its order)."""
    hasher = hashlib.blake2b(digest_size=16)
    # Two joins, ~20% cheaper than one of the pairs (~3 ms on 20k files). No path or module name
    # holds a NUL: the 2n names separated by NULs are the n rels, then their n modules.
    hasher.update("\x00".join(modules).encode())
    hasher.update(b"\x00")
    hasher.update("\x00".join(modules.values()).encode())
    return hasher.hexdigest()


def index_signature(key: str, files: Mapping[str, tuple[str, str]]) -> str:
    """Digest of every indexed file's (module, digest of what the index holds of it: its content's,
    or "" for a placeholder): equal signatures, equal index."""
    hasher = hashlib.blake2b(key.encode(), digest_size=16)
    # One update of the joined text: the same digest as one update per file, ~2x faster.
    lines = (f"{rel}\x00{module}\x00{digest}\n" for rel, (module, digest) in sorted(files.items()))
    hasher.update("".join(lines).encode())
    return hasher.hexdigest()
