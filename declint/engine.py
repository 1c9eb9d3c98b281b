"""The two-phase engine.

Phase 1 reads every file under the configured roots (plus the files to check) once: its content
hash, which rules' needles occur in it, whether an index needle does (`declint.prefilter`). The
files the project index needs are parsed with `ast` and their facts extracted; every other file
is a placeholder in the index. Phase 2 checks the requested files: rules whose prefilter cannot
match are skipped, `TreeRule`s share one `ast` parse, the rest run in one batched libcst pass.

Reading, parsing and rules run in supervised worker processes (`declint.workers`) when `jobs` is
set: a file that crashes or hangs its worker costs one DL000 for that file. Results are cached
(`declint.cache`) when `cache` is set. Every failure on a file becomes a DL000 finding for that
file; nothing here raises for bad input. Whatever the job count, cache state or hash seed, a run
gives the same findings in the same order.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import importlib
import os
import time
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, TypeVar, cast

from declint import early_stats, lazy, stat_check
from declint.bases import class_bases
from declint.cache import (
    Cache,
    CacheData,
    CheckEntry,
    Dep,
    FileEntry,
    InputRecorder,
    Recorded,
    Recorder,
    SavedListings,
    SessionMemory,
    Snapshot,
    StatKey,
    content_digest,
    disabled_by_env,
    files_digest,
    index_signature,
    is_stat_identity,
    new_token,
    run_key,
    settled,
    stat_identity,
    stat_key,
    still_valid,
)
from declint.config import Config
from declint.discovery import (
    INDEX_INCLUDE,
    DirectoryMatcher,
    Discovery,
    Listing,
    SourcePath,
    Subtrees,
    discover,
    display_path,
    glob_match,
    known_files,
    listed_again,
    listings_lent,
    printable,
)
from declint.errors import SourceError, warn
from declint.lazy import lazy_module
from declint.previews import Memoized, file_previews
from declint.rule_set import GatedRule, LazyRules, rule_codes, rules_of_kind
from declint.source import SourceFile, decode_source, is_plain, read_bytes
from declint.syntax import syntax_problem
from declint.types import FileFindings, Finding, Position, RunResult, Span, SuppressedFinding

if TYPE_CHECKING:
    import libcst as cst

    from declint import facts as _facts
    from declint import index as _index
    from declint import patching as _patching
    from declint import prefilter as _prefilter
    from declint import rule as _rule
    from declint import run_state as _state
    from declint import suppressions as _suppressions
    from declint import workers
    from declint.facts import FactOptions, ModuleFacts
    from declint.index import ProjectIndex
    from declint.prefilter import Demand, ScanRecord
    from declint.rule import FactRule, FileContext, FileGate, Positions, Rule, RuleMeta, TreeRule
    from declint.run_state import Checked, CheckItem, CheckState, PrepareState, Scanned
else:
    # Loaded on first use: a run the snapshot answers extracts no facts, builds no index, scans
    # nothing and runs no rule, and these were a third of its start-up. A run that does any of
    # it loads them before its workers fork. Likewise a run that starts no worker (~4 ms).
    _facts = lazy_module("declint.facts")
    _index = lazy_module("declint.index")
    _patching = lazy_module("declint.patching")
    _prefilter = lazy_module("declint.prefilter")
    _rule = lazy_module("declint.rule")
    _state = lazy_module("declint.run_state")
    _suppressions = lazy_module("declint.suppressions")
    workers = lazy_module("declint.workers")

_Pool: TypeAlias = "workers.InlinePool[Any, Any] | workers.ProcessPool[Any, Any]"
_R = TypeVar("_R", bound="RuleMeta")


class _Checking:
    """A check begun by `_Run._start_check` (or a patch's, `_Run._start_items`): the results that
    still hold, the files handed to the pool, and the pool's pending map (None when every result
    still held; a patch's once `_finish_items` took its results)."""

    __slots__ = ("pending", "pool", "results", "todo", "total")

    def __init__(self, results: dict[str, Checked], todo: list[CheckItem], total: int) -> None:
        self.results = results
        self.todo = todo
        self.total = total  # the files asked about, for the progress report
        self.pool: _Pool | None = None
        self.pending: workers.Pending | None = None


PARSE_ERROR = "DL000"
PARSE_ERROR_NAME = "parse-error"
# Test-only hooks (docs/reliability.md, "Crash isolation"): inside a worker process, a file
# whose bytes contain the value of one of these variables segfaults or hangs that worker.
CRASH_HOOK_ENV = "DECLINT_TEST_CRASH_ON"
HANG_HOOK_ENV = "DECLINT_TEST_HANG_ON"
# Set by the console script, which ends with `os._exit` (see `declint.__main__`): the last run's
# state is kept here instead of being freed object by object just before the process ends (an
# earlier run's, `check --fix` re-checking fixed texts, is freed when the next one replaces it).
RETAINED: list[object] | None = None
_READ_HERE = 4  # files a run reads in its own process rather than forking a worker for them
# Files asked for whose findings a patch whose index changed confirms (`_Run._confirmed`: a
# cached result's recorded index answers asked again, ~10 us) or checks again (at most
# `_READ_HERE` of them, with the edited ones): a pre-commit hook's request of staged files.
_CONFIRM_MOST = 16
# Files whose stat moved that a run reads again before it gives up the snapshot (`_still_holds`):
# at ~20 us a module, a few milliseconds lost when the last of them did change.
_REHASH_MOST = 512
# Re-reading and hashing a module (~20 us) costs about 8 times its share of writing the snapshot
# and the walk file again (~2.5 us a file: 50 ms on the 20k-file tree): the new stats of files
# whose bytes did not change are written once they are more than 1/8 of the snapshot's files.
_REHASH_SHARE = 8
# Directories whose stat moved that a run lists again before it walks the tree anew (`_relist`):
# a listing and its hash are ~10 us (~0.3 ms for the 603 entries of the 20k tree's models
# directory); a branch switch moves hundreds, and the walk is cheaper then.
_RELIST_MOST = 64

Progress = Callable[[int, int], None]


def parse_error(rel: str, message: str, line: int = 1, column: int = 0) -> Finding:
    position = Position(line, column)
    return Finding(PARSE_ERROR, PARSE_ERROR_NAME, rel, Span(position, position), message)


@dataclass(frozen=True)
class Selection:
    """Which codes are enabled: a code is on when a select prefix matches and no ignore does."""

    select: tuple[str, ...]
    ignore: tuple[str, ...]

    def enabled(self, code: str) -> bool:
        return any(code.startswith(p) for p in self.select) and not any(code.startswith(p) for p in self.ignore)


@dataclass
class RunStats:
    """What a run had to do (tests and benchmarks read it; it never changes a finding)."""

    files_read: int = 0
    files_indexed: int = 0  # files whose facts the index holds (the rest are placeholders)
    facts_extracted: int = 0
    files_checked_fresh: int = 0  # files checked by running rules (not taken from the cache)
    check_cache_hits: int = 0
    worker_crashes: int = 0
    worker_timeouts: int = 0
    safety_rounds: int = 0
    stats_at_start: bool = False  # the snapshot's stats came from the child forked at start-up
    workers_warmed: int = 0  # check workers forked ahead to import libcst (`_Run._warm_check`)
    workers_adopted: int = 0  # ... that a check's pool then used
    directories_rewalked: int = 0  # listed by a walk of a few directories (`_Run.walk_patched`); 0: no such walk
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per phase

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


@dataclass
class Engine:
    config: Config
    rules: Sequence[type[RuleMeta]]
    selection: Selection
    progress: Progress | None = None
    # rel -> bytes checked instead of the file on disk: `check --fix` re-lints candidate texts.
    overrides: Mapping[str, bytes] = field(default_factory=dict)
    # rels taken as absent though on disk: `check --diff-base` checks the merge base as the
    # working tree with what the change added left out (`declint.base_view`).
    absent: frozenset[str] = frozenset()
    # Keep what suppressions hid, with their reasons (SARIF suppressions, stable fingerprints).
    keep_suppressed: bool = False
    # None: read, parse and check in this process (no isolation); N >= 1: N supervised workers.
    jobs: int | None = None
    # Read and write the cache under the project root (also off when DECLINT_NO_CACHE is set).
    cache: bool = False
    # Where a run without a cache directory keeps its data for the next runs of this process,
    # if anywhere (`check --fix`'s re-lints share its first run's).
    memory: SessionMemory | None = None
    # Index every file in full, without the index prefilter (slower; the tests compare the two).
    full_index: bool = False
    # A check worker forked ahead for the next run, importing libcst meanwhile (`warm_check_worker`):
    # that run's check pool adopts it, or the run kills it.
    warmed: workers.Warmed | None = field(default=None, repr=False, compare=False)
    # The `state_token` of a run of this process a moment ago, whose stats of the snapshot's files
    # and directories this run takes as its own instead of taking them again: the check of the
    # merge base, right after the working tree's, sees the disk as that check saw it.
    vouched: str | None = None
    stats: RunStats = field(default_factory=RunStats, init=False, repr=False)
    _suppressed: list[SuppressedFinding] = field(default_factory=list, init=False, repr=False)
    # Fix previews the check workers computed from the trees they parsed (`PreviewMemo` entries).
    previews: dict[str, Memoized] = field(default_factory=dict, init=False, repr=False)
    # The token of the snapshot that describes the files on disk exactly as the last run read
    # them (it found one and no file's stat had moved, or it wrote one); None when there is
    # none. Two runs with one token read the same files (`declint.fix_memo` relies on it).
    state_token: str | None = field(default=None, init=False, repr=False)

    @property
    def uses_cache(self) -> bool:
        return self.cache and not disabled_by_env()

    @property
    def known_codes(self) -> frozenset[str]:
        return frozenset(rule_codes(self.rules))

    @property
    def enabled_codes(self) -> frozenset[str]:
        return frozenset(code for code in self.known_codes if self.selection.enabled(code))

    def run(self, paths: Iterable[Path]) -> RunResult:
        self._suppressed = []
        self.previews = {}
        self.stats = RunStats()
        self.state_token = None
        paths = list(paths)
        existing = self._existing_roots()
        with _Run(self) as run:
            # The snapshot's findings are those of the files on disk: a run leaving some out
            # takes from it at most the walk's files, less those it leaves out.
            quick = None if self.absent else run.from_snapshot(paths, existing)
            if quick is not None:
                findings, suppressed, total, checked_count, skipped = quick
            else:
                listing = run.listing_from_snapshot(paths, existing)
                patched = None if listing is not None or self.absent else run.walk_patched(paths, existing)
                if listing is not None:  # no directory changed: the last walk's files, no walk
                    snapshot, rels, skipped = listing
                    checked_files, indexed_files = run.files_from_snapshot(rels)
                    listed = run.walk_recorded(snapshot)  # checked against the disk before anything was read
                    run.listings = run.last_listings(snapshot)  # the walk's, which still hold
                elif patched is not None:  # a file added or removed: its directory walked again
                    checked_files, indexed_files, skipped, run.listings, listed = patched
                else:
                    with self.stats.phase("discover"), InputRecorder.recording(with_keys=run.keeps_keys) as listed:
                        checked = discover(paths, self.config, self._virtual_paths())
                        indexed = checked if self._same_walk(paths, existing) else self._index_walk(existing)
                    checked_files = list(checked.files)
                    indexed_files = checked_files if indexed is checked else list(indexed.files)
                    skipped = [(s.rel, s.reason) for s in checked.skipped]
                    run.listings = {**indexed.listings, **checked.listings}
                if self.absent:  # the files on disk that this run leaves out (both ways found them)
                    checked_files, indexed_files = self._present(checked_files), self._present(indexed_files)
                    skipped = [(rel, reason) for rel, reason in skipped if rel not in self.absent]
                run.request = (paths, existing, [item.rel for item in checked_files], skipped)
                findings, suppressed, total = run.check(checked_files, indexed_files, listed)
                checked_count = len(checked_files)
            if RETAINED is not None:
                RETAINED[:] = [run]
        self.state_token = run.state_token
        if checked_count == 0 and not skipped:
            findings, suppressed = self._about_given(paths, findings, suppressed)
        findings += [parse_error(printable(rel), reason) for rel, reason in skipped]
        self._suppressed = suppressed
        kept = [f.printable() for f in findings if self._reportable(f)]
        ordered = tuple(sorted(set(kept), key=Finding.sort_key))
        return RunResult(
            ordered,
            files_checked=checked_count,
            files_indexed=total,
            rule_codes=tuple(sorted(self.enabled_codes)),
            # A skipped name that is not UTF-8 is reported escaped; SARIF's URI needs the real bytes.
            file_names=tuple(sorted({(printable(rel), rel) for rel, _ in skipped if printable(rel) != rel})),
            suppressed=tuple(
                sorted({s for s in self._suppressed if self._reportable(s.finding)}, key=lambda s: s.finding.sort_key())
            ),
        )

    def _present(self, files: Sequence[SourcePath]) -> list[SourcePath]:
        return [item for item in files if item.rel not in self.absent]

    def _about_given(
        self, paths: Sequence[Path], findings: list[Finding], suppressed: list[SuppressedFinding]
    ) -> tuple[list[Finding], list[SuppressedFinding]]:
        """A run that found no Python file to check: as ruff, nothing to report (the CLI warns)
        but the project findings on a file given by name (`declint check docs/encoders.md`,
        DL107). A DL100 about the Literal, with nothing checked that uses it, is not reported."""
        given = {display_path(path, self.config.root) for path in paths}
        return [f for f in findings if f.path in given], [s for s in suppressed if s.finding.path in given]

    def _existing_roots(self) -> list[Path]:
        """The configured roots that exist; a missing one is said (a typo there indexes nothing,
        and the findings that need the index, DL100 first, would be the only sign)."""
        existing = []
        for name in self.config.str_list("roots"):
            root = self.config.root / name
            if root.exists():
                existing.append(root)
            else:
                where = f" (roots in {self.config.source})" if self.config.source else ""
                warn(f'root "{name}"{where} does not exist: nothing under it is indexed')
        return existing

    def _virtual_paths(self) -> frozenset[str]:
        """The overridden files, as absolute paths: they need not exist on disk (`--stdin-filename`)."""
        return frozenset(os.path.abspath(self.config.root / rel) for rel in self.overrides)

    def _same_walk(self, paths: Sequence[Path], roots: Sequence[Path]) -> bool:
        """`declint check ROOT` (CI) with the default `include`: the index's walk would find the
        checked files again, so it is not made twice."""
        same_paths = sorted(map(os.path.abspath, paths)) == sorted(map(os.path.abspath, roots))
        return same_paths and self.config.str_list("include") == INDEX_INCLUDE

    def _index_walk(self, roots: Sequence[Path]) -> Discovery:
        """Every Python file under the roots, whatever `include` says (it selects what is checked)."""
        return discover(roots, self.config, include=INDEX_INCLUDE)

    def build_index(self, paths: Iterable[Path] = ()) -> ProjectIndex:
        self.stats = RunStats()
        given = discover(paths, self.config).files
        found = _union(given, self._index_walk(self._existing_roots()).files)
        with _Run(self) as run:
            return run.index_only(found)

    def _reportable(self, finding: Finding) -> bool:
        if not self.selection.enabled(finding.code):
            return False
        for pattern, codes in dict(self.config.get("per-path-ignores")).items():
            if any(finding.code.startswith(c) for c in codes) and glob_match(finding.path, (pattern,)):
                return False
        return True


# ---- the state workers need (inherited on fork, pickled once otherwise) ---------------------------


# The items sent to the readers are named tuples: one per file of the tree, and a tuple crosses the
# pipe ~5x cheaper than a dataclass (no class reference and state dict per item).
class _ScanItem(NamedTuple):
    rel: str
    path: str
    module: str
    checked: bool
    want_facts: bool  # extract facts in the same pass (an index needle is likely)
    syntax_scope: bool  # parse it even if nothing else would (check-syntax, syntax-paths)


class _FactsItem(NamedTuple):
    rel: str
    path: str
    module: str


# (stat key, settled) of a file as read
_Stat = tuple[StatKey, bool]
# A file with no needle, no facts and no error (most of a tree): (digest, size, class bases, stat).
# A bare tuple crosses the pipe ~10x cheaper than the dataclasses, and most records are these.
# The digest is None for a settled file: its stat stands for its content (`stat_identity`).
_Plain = tuple[str | None, int, frozenset[str], _Stat | None]


class _Rescanned(NamedTuple):
    """`_Run._scan_changed`'s answer: each file's scan, the new facts of the files held in full
    whose facts moved or changed, and whether any changed beyond their positions."""

    scans: list[tuple[_ScanItem, ScanRecord, _Stat]]
    facts: dict[str, ModuleFacts]
    reindexed: bool


class _Patch(NamedTuple):
    """A patch that held (`_Run._patched_checks`): the snapshot with the project rules' findings
    run again, the files read, their changes, the held facts to write again (None: they did not
    move or change) and the findings confirmed without a check (None: the index did not change)."""

    snapshot: Snapshot
    scans: list[tuple[_ScanItem, ScanRecord, _Stat]]
    changes: list[_patching.Change]
    held: dict[str, ModuleFacts] | None
    confirmed: dict[str, FileFindings] | None


_NO_RULES: frozenset[str] = frozenset()

# A checked file without findings (most of a tree): one shared pair, pickled once in a snapshot.
_NOTHING: tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]] = ((), ())
# (findings, suppressed, files indexed, files checked, skipped (rel, reason)) of a run the
# snapshot answers, patched or not
_Answer: TypeAlias = "tuple[list[Finding], list[SuppressedFinding], int, int, list[tuple[str, str]]]"


# ---- one run -------------------------------------------------------------------------------------


def warm_check_worker(engine: Engine) -> workers.Warmed | None:
    """A check worker forked now, importing libcst and the rules while this process goes on, for
    `engine.warmed`. None where it would not pay: without worker processes or a second core, or
    once this process has loaded libcst (the re-lints of `--fix`: a worker forked then has it),
    or with no process to spare (EAGAIN, ENOMEM: the check forks its worker later)."""
    if engine.jobs is None or not stat_check.fork_pays() or lazy.loaded("libcst"):
        return None
    try:
        return workers.Warmed(functools.partial(_warm_up, engine))
    except OSError:
        return None


def _warm_up(engine: Engine) -> None:
    """What a check worker imports for its first file (run in the warmed worker): libcst with its
    metadata (through the fixes' module, which previews need too) and the rules."""
    importlib.import_module("declint.fix_transforms")
    _ = rules_of_kind(engine.rules, _rule.FileGate), rules_of_kind(engine.rules, _rule.FactRule)


class _Run:
    """One `Engine.run`: the pools, the cache data and the per-file state of the run."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.config = engine.config
        self.stats = engine.stats
        self.overrides = dict(engine.overrides)
        # A run over texts in place of files, or leaving files out, describes no state of the
        # disk: it reads the cache and writes none.
        self.read_only = bool(self.overrides or engine.absent)
        self.check_syntax = bool(self.config.get("check-syntax"))
        self.syntax_paths = tuple(self.config.str_list("syntax-paths"))
        self.in_syntax_paths = DirectoryMatcher(self.syntax_paths)
        self.max_size = int(self.config.get("max-file-size"))
        # (file timeout, stack MiB, memory MiB): `workers.Limits` once a pool starts
        self.limits = (
            float(self.config.get("file-timeout")),
            int(self.config.get("worker-stack-mib")),
            int(self.config.get("worker-memory-mib")),
        )
        # The rules' own state (`file_rules`, `gates`, ...) is made on first use: a run the
        # snapshot answers imports no rule module (see `declint.rule_set`).
        self.key = run_key(
            [
                self.config.fingerprint(),
                ",".join(sorted(engine.enabled_codes)),
                ",".join(sorted(engine.known_codes)),
            ]
        )
        self.store = self._open_cache()
        self._pending_snapshot: Snapshot | None = None
        # (paths asked for, roots, checked rels, skipped (rel, reason)): what a snapshot replays.
        self.request: tuple[Sequence[Path], Sequence[Path], Sequence[str], Sequence[tuple[str, str]]] | None = None
        self._snapshot_found: Snapshot | None = None
        self._early: early_stats.Answer | None = None  # the start-up child's stats of that snapshot
        self._walk_file_of: Snapshot | None = None  # a snapshot whose walk file to write again (`_early_answer`)
        # The snapshot's files and those whose stat changed since: the others are unchanged and settled.
        self._stats_seen: tuple[Mapping[str, tuple[str, StatKey, str]], set[str]] | None = None
        self._listing: tuple[tuple[Snapshot, tuple[str, ...], list[tuple[str, str]]] | None] | None = None
        self._saved_listings: SavedListings | None = None  # the snapshot's walk's listings, once loaded
        # Directories of the snapshot's walk whose stat moved but whose entries did not (`_relist`).
        self._relisted: dict[str, os.stat_result] = {}
        # The snapshot whose walk no longer holds and the positions in its walk that moved, when
        # the walk it answered was this run's (`walk_patched`).
        self._unheld: tuple[Snapshot, Sequence[int]] | None = None
        self._known_modules: dict[str, str] | None = None
        # The files `check` was given: those checked, and those the walk of the roots found.
        self._walks: tuple[Sequence[SourcePath], Sequence[SourcePath]] = ((), ())
        self._data: CacheData | None = None
        self.changed: set[str] = set()  # rels whose cache entries this run replaced or modified
        self.records: dict[str, ScanRecord] = {}
        self.facts: dict[str, ModuleFacts] = {}
        self.modules: dict[str, str] = {}
        self.demanded: set[str] = set()
        self._demand: Demand | None = None
        # The cache entries of the files read again this run, as loaded (only when the cache
        # knows its closure), and whether a file's bytes changed under the run (`_closure_holds`).
        self._reread: dict[str, FileEntry | None] = {}
        self._moved_under_run = False
        self._digested: tuple[dict[str, str], str] | None = None  # see `_modules_digest`
        self.index_facts: dict[str, ModuleFacts] = {}
        self._built_from: Sequence[SourcePath] | None = None  # the files `_entries` holds
        self._entries: dict[str, ModuleFacts] = {}  # rel -> its facts in the index being built
        self.listings: Mapping[str, Listing] = {}  # the directories this run's walk listed
        self._pending_listings: tuple[str, Mapping[str, Listing]] | None = None  # (token, listings) to save
        self._bases: dict[frozenset[str], frozenset[str]] = {}  # each distinct set of class bases once
        self._prepare_pool: _Pool | None = None
        self._answers: tuple[ProjectIndex, dict[Hashable, str | None]] | None = None  # see `_still_valid`
        self._pending_held: tuple[str, dict[str, ModuleFacts]] | None = None  # (token, facts) to save
        # A check worker importing libcst ahead (`_warm_check`), or the one forked for this run.
        self._warmed: workers.Warmed | None = engine.warmed
        if engine.warmed is not None:
            engine.warmed = None  # this run owns it now
            self.stats.workers_warmed += 1
        self.state_token: str | None = None  # see `Engine.state_token`

    def __enter__(self) -> _Run:
        return self

    @functools.cached_property
    def file_rules(self) -> tuple[type[FileGate], ...]:
        return self._enabled(_rule.FileGate)

    @functools.cached_property
    def fact_rules(self) -> tuple[type[FactRule], ...]:
        return self._enabled(_rule.FactRule)

    def _enabled(self, kind: type[_R]) -> tuple[type[_R], ...]:
        return tuple(r for r in rules_of_kind(self.engine.rules, kind) if self.engine.selection.enabled(r.CODE))

    @functools.cached_property
    def file_plan(self) -> tuple[type[FileGate] | GatedRule, ...]:
        """The enabled per-file rules as checks take them: a rule whose registry entry names its
        needles stays a `GatedRule`, imported by the first file holding one (a run after an edit
        checks a file or two, and seldom needs DL103's, DL104's or DL106's modules)."""
        rules = self.engine.rules
        if not isinstance(rules, LazyRules):
            return self.file_rules
        plan = rules.gated("file", self.engine.selection.enabled, self.config)
        return cast("tuple[type[FileGate] | GatedRule, ...]", plan)

    @functools.cached_property
    def _planned_classes(self) -> tuple[type[FileGate], ...]:
        """The rules of `file_plan` imported already: those whose needles may depend on the index."""
        return tuple(r for r in self.file_plan if not isinstance(r, GatedRule))

    @functools.cached_property
    def options(self) -> FactOptions:
        return _facts.FactOptions(
            declaration_attribute=str(self.config.get("declaration-attribute")),
            fixed_marker=str(self.config.get("fixed-marker")),
            model_decorators=self.config.str_list("model-decorators"),
        )

    @functools.cached_property
    def gates(self) -> tuple[tuple[str, tuple[bytes, ...]], ...]:
        """(code, needles) of each enabled per-file rule."""
        empty = _index.ProjectIndex.build([], self.config)
        return tuple(
            (r.entry.code, r.needles) if isinstance(r, GatedRule) else (r.CODE, tuple(r.needles(self.config, empty)))
            for r in self.file_plan
        )

    @functools.cached_property
    def seeds(self) -> tuple[bytes, ...]:
        """The index's own needles: a file holding one is indexed in full."""
        return _prefilter.index_needles(self.config)

    @functools.cached_property
    def rule_seeds(self) -> tuple[tuple[tuple[bytes, ...], type[FileGate]], ...]:
        """(needles, the rule that decides) of each rule that asks for files to index (`FileGate.indexes`)."""
        return tuple(
            (needles, r) for r in self._planned_classes if (needles := tuple(sorted(r.index_needles(self.config))))
        )  # (a gated rule asks for none: tests/test_docs.py)

    @property
    def data(self) -> CacheData:
        """The full cache, loaded on first use (a run that the snapshot answers never needs it)."""
        if self._data is None:
            if self.store is None:
                memory = self.engine.memory
                self._data = memory.load(self.key) if memory is not None else CacheData(self.key)
            else:
                with self.stats.phase("cache load"):
                    self._data = self.store.load(self.key)
        return self._data

    def __exit__(self, *exc: object) -> None:
        if self._warmed is not None:  # no check needed it after all
            self._warmed.close()
        if self._prepare_pool is not None:
            self._collect_stats(self._prepare_pool)
            self._prepare_pool.close()
        saving = self.changed or self._pending_snapshot is not None or self._walk_file_of is not None
        memory = self.engine.memory
        # A run over overridden texts keeps no entry of theirs (`_keep`, `_store`): its data may
        # serve as the first (`--stdin-filename --fix`), never replace one from the disk alone.
        if exc[0] is None and self.store is None and memory is not None and (not self.read_only or memory.empty):
            if self._data is not None:
                memory.save(self._data)
        if exc[0] is None and self.store is not None and not self.read_only and saving:
            with self.stats.phase("cache save"):
                if self.changed:
                    self.store.save(self.data, self.changed)
                if self._pending_snapshot is not None:
                    # First: a snapshot never names listings or held facts not written.
                    if self._pending_listings is not None:
                        self.store.save_listings(self.key, *self._pending_listings)
                    if self._pending_held is not None:
                        self.store.save_held(self.key, *self._pending_held)
                    self.state_token = self.store.save_snapshot(self._pending_snapshot)
                elif self._walk_file_of is not None:
                    self.store.save_walk_file(self._walk_file_of)

    def _open_cache(self) -> Cache | None:
        if not self.engine.uses_cache:
            return None
        store = Cache.for_config(self.config)
        if store is not None and not self.read_only:  # see `read_only`
            store.ensure()  # before the walk: creating it later would move the root's mtime
        return store

    # ---- pools ----------------------------------------------------------------------------------
    def _pool(self, handler: Callable[[Any, Any], Any], state: object) -> _Pool:
        if self.engine.jobs is None:
            return workers.InlinePool(handler, state)
        return workers.ProcessPool(handler, state, self.engine.jobs, workers.Limits(*self.limits))

    def _check_pool(self, state: CheckState) -> _Pool:
        """A pool of check workers; its first worker is the warmed one, if there is one."""
        pool = self._pool(_check_handler, state)
        if isinstance(pool, workers.ProcessPool):
            pool.adopting(self._warmed)
            self._warmed = None
        return pool

    def _warm_check(self, snapshot: Snapshot, rels: Sequence[str], changed: set[str]) -> None:
        """Fork a check worker that imports libcst now, when an edited file will be checked again
        on the full path (the patch could not take the edit).

        A check worker imports libcst and the rules on its first file (~0.2 s on a 2-core
        machine), after the cache load, the scan and the index (~0.2 s on the 20k-file tree):
        a run after an edit of a checked file waited for both, one after the other. A checked
        file the rules read whose stat moved is almost always checked again (a `touch` keeps
        the snapshot and never gets here). For the patch only when an edited file was an index
        seed (a model) or, once the held facts are loaded, one the index held in full (a base
        class of a model): a placeholder's rules may need no libcst (DL101 and DL103 read `ast`),
        and the patch checks it at once, in a worker forked then that does not import libcst
        at all. Where it pays (`warm_check_worker`)."""
        if self._warmed is not None:
            return
        if not any(rel in snapshot.digests for rel in changed.intersection(rels)):
            return
        self._warmed = warm_check_worker(self.engine)
        if self._warmed is not None:
            self.stats.workers_warmed += 1

    def _prepare(self, count: int | None = None, scanning: Sequence[_ScanItem] = ()) -> _Pool:
        """The pool that reads files. A handful (`count`, an edited file or two) are read here: a
        worker's fork costs more than reading them, and reading runs only CPython's own parser
        (bounded by max-file-size); parsing with libcst and the rules stay isolated in workers.
        A pool started here for `scanning` holds those items in its state."""
        if self._prepare_pool is None:
            state = _state.PrepareState(
                self.config, self.gates, self.seeds, self.options, self.max_size, self.overrides, scanning,
                self.rule_seeds,
            )  # fmt: skip
            if count is not None and count <= _READ_HERE and self.engine.jobs is not None:
                return workers.InlinePool(_prepare_handler, state, guarded=True)
            self._prepare_pool = self._pool(_prepare_handler, state)
        return self._prepare_pool

    def _collect_stats(self, pool: _Pool) -> None:
        self.stats.workers_adopted += pool.stats.adopted
        self.stats.worker_crashes += pool.stats.crashes
        self.stats.worker_timeouts += pool.stats.timeouts

    def _batch(self, count: int, most: int) -> int:
        jobs = self.engine.jobs or 1
        return max(1, min(most, count // (jobs * 4) or 1))

    # ---- phase 1: scan ----------------------------------------------------------------------------
    def _named(self, files: Sequence[SourcePath], probed: Recorded) -> dict[str, str]:
        """Every file's module name: the last walk's for the files it named that this run's walk
        kept (`_known_modules`: the same packages), the others' from the file system."""
        known = self._known_modules
        if not known:  # (a walk of the whole tree: no list or merge of 20k names)
            return _module_names(files, str(self.config.root), probed)
        unnamed = [item for item in files if item.rel not in known]
        if not unnamed:
            return {item.rel: known[item.rel] for item in files}
        markers = {item.path for item in files if item.path.endswith("__init__.py")}
        names = _module_names(unnamed, str(self.config.root), probed, markers)
        return {item.rel: known[item.rel] if item.rel in known else names[item.rel] for item in files}

    def _scan(self, files: Sequence[SourcePath], checked: set[str]) -> None:
        literal_module = self.config.literal_module
        todo: list[_ScanItem] = []
        now = time.time()
        cached = self.data.files
        reread = self._reread if self.data.closure else None  # (a cold run compares nothing)
        for item in files:
            module = self.modules[item.rel]
            is_checked = item.rel in checked
            entry = cached.get(item.rel)
            # Without an entry to compare with, the reader stats the file (on the open file, cheaper).
            current = None if entry is None or item.rel in self.overrides else self._current_stat(item, now)
            if (
                entry is not None
                and current is not None
                and entry.settled
                and entry.stat == current[0]
                and self._complete(entry.scan, is_checked)
            ):
                self.records[item.rel] = entry.scan
                if entry.facts is not None and entry.facts.module == module:
                    self.facts[item.rel] = entry.facts
                continue
            # A cached record holds the answer (path and configuration are in the cache key):
            # asking the glob would import pathspec (~6 ms) for the one file an edit changed.
            scope = entry.scan.syntax_scope if entry is not None else self._syntax_scope(item.rel)
            todo.append(_ScanItem(item.rel, str(item.path), module, is_checked, module == literal_module, scope))
            if reread is not None:
                reread[item.rel] = entry
        if not todo:
            return
        self.stats.files_read += len(todo)
        pool = self._prepare(len(todo), todo)
        inherited = isinstance(pool.state, _state.PrepareState) and pool.state.scan_items is todo
        sent: Sequence[int | _ScanItem] = range(len(todo)) if inherited else todo
        # Each outcome is taken in while the workers read later batches (in order: deterministic).
        pool.map(sent, self._batch(len(todo), 256), lambda i, outcome: self._scanned(todo[i], outcome))

    def _syntax_scope(self, rel: str) -> bool:
        """check-syntax or syntax-paths asks for the file's syntax."""
        return self.check_syntax or (bool(self.syntax_paths) and self.in_syntax_paths(rel))

    def _current_stat(self, item: SourcePath, now: float) -> tuple[StatKey, bool] | None:
        """(stat key, settled) of the file now; None when it cannot be stat'ed."""
        if self._stats_seen is not None:
            files, changed = self._stats_seen
            known = files.get(item.rel)
            if known is not None and item.rel not in changed:
                return known[1], True  # compared with the snapshot a moment ago: unchanged, settled there
        try:
            stat = os.stat(item.path)
        except OSError:
            return None
        return stat_key(stat), settled(stat, now)

    def _scanned(self, item: _ScanItem, outcome: Scanned | _Plain | workers.Failure) -> None:
        if type(outcome) is tuple:  # no needle (most of a tree): the short way (Scanned, Failure: subclasses)
            plain = cast(_Plain, outcome)
            # One object per distinct set of bases: the cache's pickle then writes each set once
            # (a fresh empty frozenset per file was half of the cache's pickling time).
            record = _plain_record(item, plain, self._bases.setdefault(plain[2], plain[2]))
            self.records[item.rel] = record
            read_stat = plain[3]
            if read_stat is not None:
                self._keep(item.rel, record, None, read_stat)
            return
        facts: ModuleFacts | None
        stat: _Stat | None = None
        if isinstance(outcome, workers.Failure):
            record = _prefilter.ScanRecord(f"failed:{outcome.reason}", 0, (_failure_message(outcome), 1, 0))
            facts = _facts.ModuleFacts(item.module, item.rel, error=_failure_message(outcome))
        else:
            assert isinstance(outcome, _state.Scanned)
            record, facts, stat = outcome.record, outcome.facts, outcome.stat
        self.records[item.rel] = record
        if facts is not None:
            self.facts[item.rel] = facts
            self.stats.facts_extracted += 1
        # A read that failed is never cached: a permission change moves no mtime.
        if stat is not None and not record.digest.startswith(("failed:", "error:")):
            self._keep(item.rel, record, facts, stat)

    def _keep(self, rel: str, record: ScanRecord, facts: ModuleFacts | None, stat: _Stat) -> None:
        """The cache entry of a file just read (its facts and findings kept if its content is the same)."""
        files = self.data.files
        old = files.get(rel)
        if old is not None and old.scan.digest == record.digest:
            # The same bytes: full facts cached before beat the partial ones of a Literal scan.
            partial = facts is None or (isinstance(facts, _prefilter.PartialFacts) and old.facts is not None)
            files[rel] = old.with_scan(stat[0], stat[1], record, old.facts if partial else facts)
        else:
            files[rel] = FileEntry(stat[0], stat[1], record, facts)
        self.changed.add(rel)

    def _complete(self, record: ScanRecord, checked: bool) -> bool:
        """Does a cached scan hold all this run needs (it was maybe scanned as index-only)?"""
        if not (checked and record.syntax_scope) or record.syntax_checked or record.error is not None:
            return True
        return bool(record.rules) or record.marker  # the check itself looks at the syntax then

    # ---- phase 1: the index -----------------------------------------------------------------------
    def _index(self, files: Sequence[SourcePath]) -> ProjectIndex:
        """Index what the closure needs, starting from what `self.demanded` holds already."""
        demand = self._demand
        first = demand is None
        if demand is None:
            demand = self._demand = _prefilter.Demand(
                self.config,
                {item.rel: self.modules[item.rel] for item in files},
                {rel: record.bases for rel, record in self.records.items() if record.bases},  # others match none
                frozenset(rel for rel, record in self.records.items() if record.seeds),
            )
            # Started from what the last run's closure ended with, it usually ends in one round
            # (on the 20k-file tree two rounds were, each an index of every file). A file
            # indexed in full that needs not be costs speed only: findings never depend on it
            # (but for one that does not parse: `_carried_over_error`).
            self.demanded = set(demand.initial) | demand.existing(self.data.demanded)
            if self.engine.full_index:
                self.demanded = {item.rel for item in files}
        literals = {rel for rel, record in self.records.items() if record.literal}
        while True:
            self._extract(files, self.demanded | literals)
            if first and self._carried_over_error(demand):
                self.demanded = set(demand.initial)  # Demand has asked nothing yet: still fresh
                first = False
                continue
            index = self._build(files)
            more = set() if first and self._closure_holds() else demand.more(index, self.demanded)
            first = False
            if not more:
                self.data.demanded = tuple(sorted(self.demanded))
                self.data.closure = self._closure_digest()
                return index
            self.demanded |= more

    def _carried_over_error(self, demand: _prefilter.Demand) -> bool:
        """Does a file this run demands only because the last run's closure held it not parse?

        Such a file is checked (`_needs_check`), and a check of a file whose facts hold an error
        reports its DL000, outside `syntax-paths` too: whether it is reported must then not
        depend on where the last closure ended. Any other file the closure holds without need
        costs speed only (the full-index comparison of `tests/test_cache_differential.py`); this
        one makes the closure start again from the seeds, as a run without the cache does
        (campaign seed 9105: a line deleted from a subclass left it without its needle and
        without a body, and only the run with the cache reported its DL000)."""
        if self.engine.full_index:
            return False
        return any(
            (facts := self.facts.get(rel)) is not None and facts.error is not None
            for rel in self.demanded - demand.initial
        )

    def _closure_holds(self) -> bool:
        """Does the closure end where the last run's did, without asking the index?

        It does when this run's index is built from what that run's was: the same files and
        module names (the cache keeps their digest with the demanded files), the same demanded
        files, and every file read again the same for the closure (`patching.closure_view` of its
        scan record, and the facts the index holds of it but for their positions, which the closure
        never reads: an edit that moves lines still counts as the same). Asking every class's
        questions again was most of the index phase after an edit (~0.1 s of a pre-commit run
        on 20k files)."""
        data = self.data
        if not data.closure or self._moved_under_run or set(data.demanded) != self.demanded:
            return False
        if self._modules_digest() != data.closure:
            return False
        return all(self._same_for_closure(rel, old) for rel, old in self._reread.items())

    def _same_for_closure(self, rel: str, old: FileEntry | None) -> bool:
        """Does the index hold of `rel` what it held when its cache entry `old` was written?"""
        record = self.records[rel]
        if old is None:
            return False
        if old.scan.digest == record.digest:
            return True
        if _patching.closure_view(old.scan) != _patching.closure_view(record):
            return False
        demanded = rel in self.demanded
        if not (demanded or record.literal):
            return True  # a placeholder either way
        was = old.facts
        if was is None or (demanded and isinstance(was, _prefilter.PartialFacts)):
            return False  # the facts that run's index held were not cached with the entry
        if not demanded:
            was = _prefilter.PartialFacts.of(was)  # what the index held of it
        return _facts.without_positions(was) == _facts.without_positions(self.index_facts[rel])

    def _closure_digest(self) -> str:
        """`CacheData.closure` of this run ("" when no cache is written, or a file's bytes
        changed while the run read it: its facts and its entry may be of different bytes)."""
        if self.store is None or self.read_only or self._moved_under_run:
            return ""
        return self._modules_digest()

    def _modules_digest(self) -> str:
        """`files_digest` of `self.modules`, once per map (a pass over every file of the tree)."""
        if self._digested is None or self._digested[0] is not self.modules:
            self._digested = (self.modules, files_digest(self.modules))
        return self._digested[1]

    def _extract(self, files: Sequence[SourcePath], wanted: set[str]) -> None:
        """Facts of the `wanted` files: full ones for the demanded (a file scanned for its
        Literals alone holds `PartialFacts` until then), partial ones do for the others."""
        todo = [
            _FactsItem(item.rel, str(item.path), self.modules[item.rel])
            for item in files
            if item.rel in wanted and not self._has_facts(item.rel)
        ]
        for item in todo:  # facts of an unchanged file from the cache
            entry = self.data.files.get(item.rel)
            record = self.records[item.rel]
            if (
                entry is not None
                and entry.facts is not None
                and entry.scan.digest == record.digest
                and entry.facts.module == item.module
                and self._enough(item.rel, entry.facts)
            ):
                self.facts[item.rel] = entry.facts
        todo = [item for item in todo if not self._has_facts(item.rel)]
        if not todo:
            return
        outcomes = self._prepare(len(todo)).map(todo, self._batch(len(todo), 8))
        for item, outcome in zip(todo, outcomes, strict=True):
            digest: str | None = None
            if isinstance(outcome, workers.Failure):
                facts = _facts.ModuleFacts(item.module, item.rel, error=_failure_message(outcome))
            else:
                facts, digest = outcome
                self._identify(item.rel, digest)
            self.facts[item.rel] = facts
            self.stats.facts_extracted += 1
            entry = self.data.files.get(item.rel)
            # Cached only with the bytes they came from: a file saved again since the scan read
            # it has facts of other bytes than its entry's (see `_identify`).
            if entry is not None and digest is not None and entry.scan.digest == self.records[item.rel].digest:
                entry.facts = facts
                self.changed.add(item.rel)

    def _has_facts(self, rel: str) -> bool:
        facts = self.facts.get(rel)
        return facts is not None and self._enough(rel, facts)

    def _enough(self, rel: str, facts: ModuleFacts) -> bool:
        """Facts enough for `rel`: full ones for a demanded file, any for the others."""
        return rel not in self.demanded or not isinstance(facts, _prefilter.PartialFacts)

    def _identify(self, rel: str, digest: str | None) -> None:
        """The record takes the digest of the bytes the file's facts came from: the index
        signature and the check cache then follow what the index holds. A file scanned without a
        digest (`stat_identity`) gets its content's, in its cache entry too; one saved again since
        the scan read it keeps its entry (of the bytes scanned), and its record names the bytes
        the facts came from (red-team 46: the run's check results were cached under a signature
        of the scanned bytes, and an undo brought those bytes back to a stale result)."""
        record = self.records[rel]
        if digest is None or digest == record.digest:
            return
        if not is_stat_identity(record.digest):  # saved again since the scan read it
            self._moved_under_run = True
        self.records[rel] = identified = record._replace(digest=digest)
        entry = self.data.files.get(rel)
        if entry is not None and entry.scan is record and is_stat_identity(record.digest):
            entry.scan = identified
            self.changed.add(rel)

    def _build(self, files: Sequence[SourcePath]) -> ProjectIndex:
        """The index of `files`: full facts of the demanded files, the rest placeholders.

        Each round of the closure only changes the files with facts (more are extracted, more
        are demanded): a later round over the same files updates those entries and keeps the
        placeholders (a loop over every file of the tree was ~2.5 us a file and round)."""
        if self._built_from is not files:
            modules, placeholder = self.modules, _prefilter.PlaceholderFacts.at
            self._entries = {item.rel: placeholder(modules[item.rel], item.rel) for item in files}
            self._built_from = files
        entries = self._entries
        for rel, facts in self.facts.items():
            if rel not in entries:
                continue
            if rel not in self.demanded:
                literal = self.records[rel].literal
                facts = (
                    _prefilter.PartialFacts.of(facts)
                    if literal
                    else _prefilter.PlaceholderFacts.at(facts.module, facts.path)
                )
            entries[rel] = facts
        self.stats.files_indexed = len(self.demanded)
        self.index_facts = dict(entries)  # a round's own: the check workers' state holds it
        return _prefilter.build_index(list(entries.values()), self.config)

    def _signature(self, files: Sequence[SourcePath]) -> str:
        """`index_signature` of what the index holds of each file: one indexed in full or for its
        Literals by the digest of its bytes, a placeholder by its module name alone. A placeholder's
        bytes answer no index question, so an edit that leaves a file one (a checked file the
        index does not read, a comment added) keeps the signature, and every cached result
        confirmed against it holds without its questions asked again (~9 us a cached file)."""
        demanded, records, modules = self.demanded, self.records, self.modules
        return index_signature(
            self.key,
            {item.rel: (modules[item.rel], _held_digest(records[item.rel], item.rel in demanded)) for item in files},
        )

    def index_only(self, files: Sequence[SourcePath]) -> ProjectIndex:
        self.modules = _module_names(files, str(self.config.root))
        self._scan(files, set())
        return self._index(files)

    # ---- phase 2 ------------------------------------------------------------------------------------
    def check(
        self, checked: Sequence[SourcePath], indexed: Sequence[SourcePath], listed: Recorded | None = None
    ) -> tuple[list[Finding], list[SuppressedFinding], int]:
        files = _union(checked, indexed)
        checked_rels = {item.rel for item in checked}
        self._walks = (checked, indexed)
        probed = Recorded(with_keys=self.keeps_keys)
        with self.stats.phase("scan"):
            self.modules = self._named(files, probed)
            self._scan(files, checked_rels)
        walked = probed if listed is None else listed.merged(probed)
        results: dict[str, Checked] = {}
        while True:
            with self.stats.phase("index"):
                index = self._index(files)
                signature = self._signature(files)
            with self.stats.phase("check"):  # started: its workers run while the project rules do
                checking = self._start_check(checked, index, signature, results)
            recording = InputRecorder.recording(with_keys=self.keeps_keys)
            try:
                with self.stats.phase("project rules"), recording as inputs, listings_lent(self.listings):
                    _prefilter.TRACKER.take()
                    everything = self._project_findings(index)
                    project = self._visible(everything, checked_rels)
                    touched = _prefilter.TRACKER.take()
                with self.stats.phase("check"):
                    results = self._finish_check(checking, signature)
            finally:
                self._close_check(checking)  # on an error: its workers must not outlive this run
            for result in results.values():
                touched |= result.touched
            assert self._demand is not None
            missing = self._demand.rels_of(touched) - self.demanded
            if not missing:
                break
            # A rule read a file the prefilter left out: index it and check again (the results
            # whose recorded index answers still hold are kept).
            self.stats.safety_rounds += 1
            self.demanded |= missing
        findings = list(project)
        suppressed: list[SuppressedFinding] = []
        per_file: dict[str, tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]]] = {}
        for item in checked:
            record = self.records[item.rel]
            if item.rel in results:
                own, hidden = results[item.rel].findings, results[item.rel].suppressed
            elif record.error is not None:
                own, hidden = (parse_error(item.rel, *record.error),), ()
            else:
                per_file[item.rel] = _NOTHING
                continue
            findings += own
            suppressed += hidden
            per_file[item.rel] = (own, hidden)
        self._snapshot(files, results, per_file, everything, inputs, walked)
        return findings, suppressed, len(files)

    # ---- the snapshot: a run where nothing changed ---------------------------------------------
    def from_snapshot(self, paths: Sequence[Path], roots: Sequence[Path]) -> _Answer | None:
        """The last run's findings when nothing it read changed since (else None), without a walk.

        Applies to the same request as last time (CI re-runs) and to explicit files (pre-commit);
        a text in place of its file (`--stdin-filename`, a fix tried) is an edit of that file.
        """
        listing = self.listing_from_snapshot(paths, roots)
        if listing is None:
            return None
        snapshot, rels, skipped = listing
        with self.stats.phase("snapshot"):
            unasked = snapshot.unindexed and not set(snapshot.unindexed).issubset(rels)  # (none: no set of rels)
            if unasked or any(rel not in snapshot.results for rel in rels):
                return None  # (an index holding a file that this request leaves out is not this run's)
            early = self._early
            if early.inputs if early is not None else stat_check.changed(snapshot.inputs):
                return None
            moved = self._moved_files(snapshot)
            if not moved and snapshot.token:  # the files on disk are those it describes (its walk holds)
                self.state_token = snapshot.token
            # An overridden text (`--stdin-filename`, a fix tried) counts as an edit of its file.
            changed = moved | self.overrides.keys()
            holds = not changed or self._still_holds(snapshot, changed)
            if not holds:
                self._stats_seen = (snapshot.files, changed)  # the scan need not stat the others again
            elif self._relisted and self._pending_snapshot is None:
                # Written once (~50 ms on the 20k-file tree) rather than loading the listings and
                # listing those directories again in every run until the next edit (~20 ms there).
                self._pending_snapshot = self._with_new_stats(snapshot)
        if not holds:
            if any(_patching.was_seed(snapshot, rel) for rel in changed):
                # A model's check needs libcst (DL102, DL104, DL106), which a worker imports while
                # the patch loads the held facts and rebuilds the index (~0.1 s on the 20k tree).
                self._warm_check(snapshot, rels, changed)
            answer = self._patch(snapshot, rels, skipped, changed)
            if answer is None:  # the full path: its cache load, scan and index give a worker time to warm
                self._warm_check(snapshot, rels, changed)
            return answer
        return self._answer(snapshot, rels, skipped, {})

    def _moved_files(self, snapshot: Snapshot) -> set[str]:
        """The snapshot's files whose stats moved (the child forked at start-up stat'ed them, if it ran)."""
        names = list(snapshot.files)
        early = self._early
        indices = early.files if early is not None else stat_check.changed(list(snapshot.files.values()))
        return {names[i] for i in indices}

    def _answer(
        self,
        snapshot: Snapshot,
        rels: Sequence[str],
        skipped: list[tuple[str, str]],
        fresh: Mapping[str, tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]]],
    ) -> _Answer:
        """The findings of the checked files `rels`: `fresh` ones where this run checked a file
        again, the snapshot's for the others, and the project rules' as the snapshot holds them."""
        wanted = set(rels)
        findings = self._visible(list(snapshot.project), wanted)
        suppressed: list[SuppressedFinding] = []
        for rel in rels:
            own, hidden = fresh[rel] if rel in fresh else snapshot.results[rel]
            findings += own
            suppressed += hidden
        self.stats.check_cache_hits = len(wanted - fresh.keys())
        return findings, suppressed, len(snapshot.files), len(rels), skipped

    def _still_holds(self, snapshot: Snapshot, changed: set[str]) -> bool:
        """Does the snapshot hold although these files' stats moved (or their texts are
        overridden)? Each is read, an overridden one from its text: one whose
        bytes were hashed must hash the same (a `touch`, a file saved again in place unchanged);
        one known by its stat only (no needle: a placeholder no rule reads) must still hold no
        needle, with the same class bases. Files replaced (a checkout, a save by rename) move
        their directories' mtimes as well: `_relist` decides whether the walk still holds then.
        More than `_REHASH_MOST` files, or an unreadable one, say no. The new stats are written
        back (a new snapshot) once reading the files again each run would cost more than that
        write (`_REHASH_SHARE`; an edit's full run writes them anyway), but for a stat within the
        racy window."""
        if len(changed) > _REHASH_MOST or not snapshot.needles:
            return False
        now = time.time()
        fresh: dict[str, StatKey] = {}
        for rel in sorted(changed):
            try:  # decoded as the scan decodes it: undecodable bytes are a finding there
                data, _, stat = _read_data(rel, snapshot.files[rel][0], self.overrides, self.max_size)
            except SourceError:
                return False
            digest = snapshot.digests.get(rel)
            if digest is not None and content_digest(data) != digest:
                return False
            if digest is None and not _same_placeholder(snapshot, rel, data):
                return False
            if stat is not None and settled(stat, now):
                fresh[rel] = stat_key(stat)
        self.stats.files_read += len(changed)  # (a read that ended it is counted by the scan's again)
        if fresh and len(fresh) * _REHASH_SHARE > len(snapshot.files):
            files = dict(snapshot.files)
            for rel, key in fresh.items():
                path, _, module = files[rel]
                files[rel] = (path, key, module)
            self._pending_snapshot = self._with_new_stats(snapshot, files)
        return True

    # ---- a run after an edit the index cannot see (`declint.patching`) -----------------------------
    def _patch(
        self, snapshot: Snapshot, rels: Sequence[str], skipped: list[tuple[str, str]], changed: set[str]
    ) -> _Answer | None:
        """The snapshot's findings with the changed files scanned and checked again, when the
        index cannot see their edits; None: the full path decides (nothing of this run is kept)."""
        # (more files than `_READ_HERE` would fork readers: the full path then costs about as much)
        if not snapshot.held or len(changed) > _READ_HERE or self.engine.full_index:
            return None
        with self.stats.phase("patch"):
            assert self.store is not None  # (the snapshot came from it)
            held = self.store.load_held(self.key, snapshot.held)
            if held is None:
                return None
            if not changed.isdisjoint(held):  # (a base class of a model is no seed, but its rules need libcst)
                self._warm_check(snapshot, rels, changed)
            scanned = self._scan_changed(snapshot, sorted(changed), held)
            patch = None if scanned is None else self._patched_checks(snapshot, rels, changed, held, scanned)
        return None if patch is None else self._patched_answer(patch, rels, skipped)

    def _patched_checks(
        self,
        snapshot: Snapshot,
        rels: Sequence[str],
        changed: set[str],
        held: dict[str, ModuleFacts],
        scanned: _Rescanned,
    ) -> _Patch | None:
        """The index with the changed files' new facts, their checks (and, when the index changed,
        the files asked for confirmed or checked again), the project rules run again when facts
        moved or changed; None: the full path decides."""
        scans, moved, reindexed = scanned
        others = self._asked_again(snapshot, rels, changed) if reindexed else []
        if others is None:
            return None
        held = {**held, **moved}  # (the same keys: the index's order is kept)
        entries = _patching.index_entries(snapshot, held)
        index = _prefilter.build_index(list(entries.values()), self.config)
        if self._unstable(index):
            return None
        # The changed files go to their check worker first (warmed: it is importing libcst); the
        # other files asked for are confirmed, the closure asked and the project rules run again
        # while it loads the state and checks, as the full path overlaps its check and project rules.
        checking = self._start_items(self._changed_todo(snapshot, scans, entries, every=reindexed), index, entries)
        try:
            meanwhile = self._while_checking(snapshot, changed, others, held, index, moved, reindexed)
            if meanwhile is None:
                return None
            again, confirmed, project = meanwhile
            results = self._finish_items(checking)
            if again:  # asked for, not confirmed by the new index: checked by the same (warm) worker
                todo = self._changed_todo(snapshot, again, entries, every=True)
                results.update(self._finish_items(self._start_items(todo, index, entries, checking)))
        finally:
            self._close_check(checking)  # on an error or a None: its worker must not outlive this run
        scans = scans + again
        changes = self._changes(snapshot, scans, results)
        if changes is None:
            return None
        if moved:  # the project rules' findings may point at the moved or changed facts
            snapshot = dataclasses.replace(snapshot, project=project)
        return _Patch(snapshot, scans, changes, held if moved else None, confirmed if reindexed else None)

    def _while_checking(
        self,
        snapshot: Snapshot,
        changed: set[str],
        others: list[str],
        held: Mapping[str, ModuleFacts],
        index: ProjectIndex,
        moved: Mapping[str, ModuleFacts],
        reindexed: bool,
    ) -> tuple[list[tuple[_ScanItem, ScanRecord, _Stat]], dict[str, FileFindings], tuple[Finding, ...]] | None:
        """What a patch does while its changed files are checked: when the index changed, the
        other files asked for confirmed or scanned to be checked again (`_with_others`); when
        facts moved or changed, the project rules run again. None: the full path decides."""
        again: list[tuple[_ScanItem, ScanRecord, _Stat]] = []
        confirmed: dict[str, FileFindings] = {}
        if reindexed:
            with_others = self._with_others(snapshot, changed, others, held, index)
            if with_others is None:
                return None
            again, confirmed = with_others
        project = self._project_again(snapshot, index, keep_last=not reindexed) if moved else ()
        if project is None:
            return None
        return again, confirmed, project

    def _patched_answer(self, patch: _Patch, rels: Sequence[str], skipped: list[tuple[str, str]]) -> _Answer:
        """The answer of a patch that held, its snapshot staged when every file read had settled."""
        snapshot, scans, changes, held, confirmed = patch
        found = {change.rel: change.findings for change in changes if change.findings is not None}
        found.update(confirmed or {})
        self.stats.files_read += len(scans)
        self.stats.files_checked_fresh += sum(change.checked for change in changes)
        if self.engine.progress is not None:
            self.engine.progress(len(rels), len(rels))
        if all(stat[1] for _, _, stat in scans):  # (an overridden text's never is settled)
            self._stage_patched(snapshot, changes, held, confirmed)
        answer = self._answer(snapshot, rels, skipped, found)
        self.stats.check_cache_hits += len(confirmed or {})  # (cached results, confirmed against the new index)
        return answer

    @staticmethod
    def _asked_again(snapshot: Snapshot, rels: Sequence[str], changed: set[str]) -> list[str] | None:
        """The files asked for, not edited, whose findings a patch whose index changed confirms
        or checks again: those whose bytes were hashed (a rule or the index reads them; one known
        by its stat alone holds no needle, and its findings do not depend on the index). None:
        more than `_CONFIRM_MOST`, as `declint check .` asks (the full path then costs as much)."""
        others = []
        for rel in rels:
            if rel in snapshot.digests and rel not in changed:
                others.append(rel)
                if len(others) > _CONFIRM_MOST:
                    return None
        return others

    def _with_others(
        self,
        snapshot: Snapshot,
        changed: set[str],
        others: list[str],
        held: Mapping[str, ModuleFacts],
        index: ProjectIndex,
    ) -> tuple[list[tuple[_ScanItem, ScanRecord, _Stat]], dict[str, FileFindings]] | None:
        """The findings of `others` (`_asked_again`) that the index with the edited facts still
        gives (`_confirmed`), and the scans of the rest, to check again; None when the closure
        no longer ends where the last run's did (`patching.closure_holds`: the full path indexes
        what the edit made needed), when more files than a patch reads would be read
        (`_READ_HERE`, the edited ones included), or when one of them changed too."""
        confirmed = self._confirmed(snapshot, others, index)
        unconfirmed = [rel for rel in others if rel not in confirmed]
        if len(unconfirmed) + len(changed) > _READ_HERE:
            return None  # (before the closure's questions: ~0.3 s on the 20k tree, asked again by the full path)
        if not _patching.closure_holds(snapshot, held, index, self.config):
            return None
        again = self._scan_changed(snapshot, unconfirmed, held)
        if again is None or again.facts:
            return None
        return again.scans, confirmed

    def _confirmed(self, snapshot: Snapshot, rels: list[str], index: ProjectIndex) -> dict[str, FileFindings]:
        """The findings of those of `rels` whose cached check, of the bytes the snapshot knows,
        asked the index questions that `index` answers as they were answered (`still_valid`, as
        the full path confirms a cached result). Loads the cache (~0.04 s on the 20k-file tree),
        which the full path would load too; the check of a file it spares is ~0.1-0.3 s."""
        confirmed: dict[str, FileFindings] = {}
        for rel in rels:
            check = self._cached_check(rel, snapshot.digests[rel], snapshot.files[rel][2])
            if check is not None and self._still_valid(check.deps, index):
                confirmed[rel] = (check.findings, check.suppressed)
        return confirmed

    def _stage_patched(
        self,
        snapshot: Snapshot,
        changes: list[_patching.Change],
        held: dict[str, ModuleFacts] | None,
        confirmed: dict[str, FileFindings] | None,
    ) -> None:
        """The patched snapshot, to be written when the run ends, with `held`, the facts the
        next patch compares an edit with, when facts moved or changed (not after a crash or a
        timeout, nor for texts in place of files); when the index changed (`confirmed`: the
        findings it confirmed without a check), with the findings of the files checked again or
        confirmed alone (`patching.reindexed`)."""
        if self.overrides or any(change.final for change in changes):
            return
        patched = _patching.patched(snapshot, changes)
        if confirmed is not None:
            patched = _patching.reindexed(patched, changes, confirmed)
        if held is not None:
            self._pending_held = (new_token(), held)
            patched = dataclasses.replace(patched, held=self._pending_held[0])
        self._pending_snapshot = self._with_new_stats(patched)

    def _scan_changed(
        self, snapshot: Snapshot, changed: list[str], held: Mapping[str, ModuleFacts]
    ) -> _Rescanned | None:
        """Each changed file's scan, when every one of them leaves the index's input as it was
        (`patching.same_input`), moves only the positions of its facts (`patching.moved_input`)
        or changes the facts of a file held in full otherwise (`patching.changed_input`:
        `reindexed`), and no project rule read it; else None."""
        literal_module = self.config.literal_module
        items = []
        for rel in changed:
            path, _, module = snapshot.files[rel]
            if path in snapshot.project_reads or not _patching.may_keep_input(snapshot, rel, held):
                return None  # a project rule read it, or what the index holds of it cannot be compared
            checked = rel in snapshot.results
            # (the glob of syntax-paths is not asked: it imports pathspec, ~6 ms)
            wants_facts = rel in held or module == literal_module
            items.append(_ScanItem(rel, path, module, checked, wants_facts, rel in snapshot.scoped))
        scanned = []
        moved: dict[str, ModuleFacts] = {}
        reindexed = False
        for item, outcome in zip(items, self._prepare(len(items)).map(items), strict=True):
            # An overridden text has no stat of its own: the file's, never taken as settled.
            as_stat = (snapshot.files[item.rel][1], False) if item.rel in self.overrides else None
            found = self._scan_outcome(item, outcome, as_stat)
            facts = outcome.facts if isinstance(outcome, _state.Scanned) else None
            if found is None:
                return None
            if not _patching.same_input(snapshot, item.rel, found[0], facts, held):
                if not _patching.moved_input(snapshot, item.rel, found[0], facts, held):
                    if not _patching.changed_input(snapshot, item.rel, found[0], facts, held):
                        return None
                    reindexed = True
                moved[item.rel] = cast("ModuleFacts", facts)
            scanned.append((item, *found))
        return _Rescanned(scanned, moved, reindexed)

    def _project_again(self, snapshot: Snapshot, index: ProjectIndex, keep_last: bool) -> tuple[Finding, ...] | None:
        """The project rules' findings on the patched index (with `keep_last`, after an edit
        that moved positions only, the last ones of the rules that show no position:
        `ProjectRule.SHOWS_POSITIONS`); None when they read a placeholder module (the full path
        indexes it) or an input the snapshot does not know."""
        codes = {rule.CODE for rule in self._enabled(_rule.ProjectRule)}
        if any(finding.code not in codes for finding in snapshot.project):
            return None  # (a finding under another code than its rule's cannot be told to keep or not)
        listings = self.last_listings(snapshot) if snapshot.listings else {}
        with InputRecorder.recording(with_keys=True) as inputs, listings_lent(listings):
            _prefilter.TRACKER.take()
            everything = self._project_findings(index, snapshot.project if keep_last else None)
            touched = _prefilter.TRACKER.take()
        if touched or not _patching.same_project_inputs(snapshot, inputs):
            return None
        return tuple(everything)

    @staticmethod
    def _scan_outcome(
        item: _ScanItem, outcome: Scanned | _Plain | workers.Failure, as_stat: _Stat | None
    ) -> tuple[ScanRecord, _Stat] | None:
        """The record and stat of a file read (None: it could not be read); `as_stat` stands for
        the stat of a text that was not read from disk."""
        if type(outcome) is tuple:  # no needle
            plain = cast(_Plain, outcome)
            stat = plain[3] or as_stat
            return None if stat is None else (_plain_record(item, plain, plain[2]), stat)
        if isinstance(outcome, workers.Failure):
            return None
        scanned = cast("Scanned", outcome)
        stat = scanned.stat or as_stat
        return None if stat is None else (scanned.record, stat)

    def _unstable(self, index: ProjectIndex) -> bool:
        """Do the needles of a per-file rule depend on the index (none do today)? `gates` holds
        them computed on an empty index, and the scan looked for those."""
        return any(
            not isinstance(r, GatedRule) and tuple(r.needles(self.config, index)) != needles
            for r, (_, needles) in zip(self.file_plan, self.gates, strict=True)
        )  # (a gated rule's needles follow from the configuration alone)

    def _changed_todo(
        self,
        snapshot: Snapshot,
        scanned: list[tuple[_ScanItem, ScanRecord, _Stat]],
        entries: dict[str, ModuleFacts],
        every: bool,
    ) -> list[CheckItem]:
        """Those scanned files the rules read whose bytes changed (all of them when `every`: the
        index changed), to check."""
        todo: list[CheckItem] = []
        for item, record, _ in scanned:
            # A file the last index held in full (`_build`: demanded) is checked whenever its bytes change.
            demanded = type(entries[item.rel]) is _facts.ModuleFacts
            if (
                item.checked
                and (every or record.digest != snapshot.digests.get(item.rel))
                and self._needs_check(item.rel, record, False, demanded)
            ):
                todo.append(_state.CheckItem(item.rel, item.path, record.syntax_scope and not record.syntax_checked))
        return todo

    def _changes(
        self, snapshot: Snapshot, scanned: list[tuple[_ScanItem, ScanRecord, _Stat]], results: dict[str, Checked]
    ) -> list[_patching.Change] | None:
        """The scanned files' findings: the snapshot's for the same bytes, the check's `results`
        for those checked. None when a check read a placeholder module (the full path indexes it)."""
        if any(result.touched for result in results.values()):
            return None
        changes = []
        for item, record, stat in scanned:
            result = results.get(item.rel)
            findings = self._changed_findings(snapshot, item, record, result)
            final = result is not None and result.final
            changes.append(_patching.Change(item.rel, stat[0], record, findings, result is not None, final))
        return changes

    @staticmethod
    def _changed_findings(
        snapshot: Snapshot, item: _ScanItem, record: ScanRecord, result: Checked | None
    ) -> tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]] | None:
        """A changed file's findings as `check` puts them together (None: not checked)."""
        if not item.checked:
            return None
        if result is not None:
            return result.findings, result.suppressed
        if record.digest == snapshot.digests.get(item.rel):
            return snapshot.results[item.rel]
        if record.error is not None:
            return (parse_error(item.rel, *record.error),), ()
        return _NOTHING

    def _start_items(
        self,
        todo: list[CheckItem],
        index: ProjectIndex,
        entries: dict[str, ModuleFacts],
        checking: _Checking | None = None,
    ) -> _Checking:
        """`todo` handed to a pool of its own (`checking`'s, once its last map is finished),
        checked against `index` (`entries`: its input)."""
        checking = _Checking({}, [], 0) if checking is None else checking
        checking.todo, checking.total, checking.pending = todo, len(todo), None
        if not todo:
            return checking
        if checking.pool is None:
            state = _state.CheckState(
                self.config, self.file_plan, self.fact_rules, self.engine.known_codes, self.engine.enabled_codes,
                index, entries, self.overrides, self.max_size, not self.overrides,
            )  # fmt: skip
            checking.pool = self._check_pool(state)
        try:
            checking.pending = checking.pool.submit(todo, 1)
        except BaseException:
            self._close_check(checking)
            raise
        return checking

    def _finish_items(self, checking: _Checking) -> dict[str, Checked]:
        """The results of the check `_start_items` began (its pool stays open for another)."""
        if checking.pending is None:
            return {}
        outcomes, checking.pending = checking.pending.results(), None
        results = {}
        for item, outcome in zip(checking.todo, outcomes, strict=True):
            if isinstance(outcome, workers.Failure):
                outcome = _final_check(parse_error(item.rel, _failure_message(outcome)))
            self.engine.previews.update(outcome.previews)
            results[item.rel] = outcome
        return results

    def listing_from_snapshot(
        self, paths: Sequence[Path], roots: Sequence[Path]
    ) -> tuple[Snapshot, tuple[str, ...], list[tuple[str, str]]] | None:
        """(snapshot, checked rels, skipped) when the last run's walk still holds: no directory
        it listed, .gitignore it read or package marker it looked for changed since."""
        if self._listing is None:
            self._listing = (self._listing_from_snapshot(paths, roots),)  # `run` asks twice
        return self._listing[0]

    def _listing_from_snapshot(
        self, paths: Sequence[Path], roots: Sequence[Path]
    ) -> tuple[Snapshot, tuple[str, ...], list[tuple[str, str]]] | None:
        if self.store is None:
            return None
        with self.stats.phase("snapshot"):
            snapshot = self.store.load_snapshot(self.key)
            if snapshot is None or snapshot.roots != tuple(sorted(map(os.path.abspath, roots))):
                return None
            request = tuple(sorted(map(os.path.abspath, paths)))
            if request == snapshot.request:
                rels, skipped = snapshot.checked, list(snapshot.skipped)
            elif all(os.path.isfile(path) and not os.path.islink(path) for path in request):
                known = known_files(request, self.config, snapshot.files)
                if known is not None:
                    rels, skipped = known, []
                else:
                    asked = discover(paths, self.config)
                    rels, skipped = tuple(item.rel for item in asked.files), [(s.rel, s.reason) for s in asked.skipped]
            else:
                return None
            if any(rel not in snapshot.files for rel in self.overrides):
                return None  # (an overridden text of no file on disk: the walk takes it in)
            unknown = any(rel not in snapshot.files for rel in rels)  # a file added, passed by path
            if snapshot.token and snapshot.token == self.engine.vouched:  # nothing moved since that run
                self._early = early_stats.Answer([], [], [])
                self._stats_seen = (snapshot.files, set())
            else:
                self._early = self._early_answer(snapshot)
            moved = self._early.walk if self._early is not None else stat_check.changed(snapshot.walk)
            if unknown or (moved and not self._relist(snapshot, moved)):
                if self._early is not None:  # a file added or removed, say: walked again, but not stat'ed again
                    self._stats_seen = (snapshot.files, self._moved_files(snapshot))
                self._unheld = (snapshot, moved)
                return None
        self._snapshot_found = snapshot
        return snapshot, rels, skipped

    def _relist(self, snapshot: Snapshot, moved: Sequence[int]) -> bool:
        """Do the paths of the snapshot's walk whose stat moved (positions in `snapshot.walk`) still
        list what the walk saw? Each must be a directory the walk listed whose entries have the
        same names and kinds (`entries_signature`): a file saved by renaming a new one over it,
        as editors and git do, moves its directory's mtime and nothing the walk decides by. A
        changed .gitignore or package marker, or a path looked for that now exists, says no, as
        do more than `_RELIST_MOST` directories."""
        if len(moved) > _RELIST_MOST:
            return False
        listings = self.last_listings(snapshot)
        relisted: dict[str, os.stat_result] = {}
        for position in moved:
            directory = snapshot.walk[position][0]
            listing = listings.get(directory)
            stat = listed_again(directory, listing.signature) if listing is not None and listing.signature else None
            if stat is None:
                return False
            relisted[directory] = stat
        self._relisted = relisted
        return True

    def walk_patched(self, paths: Sequence[Path], roots: Sequence[Path]) -> _Walked | None:
        """What a run's walk finds after a file was added to or removed from a few directories the
        last run walked: those directories walked again (`discovery.Subtrees`), the rest of the
        last walk kept. The walk of the roots (the index's) is patched so, and the walk of the
        paths asked for too when they are directories (the last run must have asked the same, and
        skipped nothing); files passed by path (a pre-commit hook's) are found afresh, as the full
        path finds them. None when a path of the last walk's record other than a directory it
        listed moved (a .gitignore, a package marker looked for), or one given (a root, a path
        asked for), when more than `_RELIST_MOST` did, or when the walk again skips a path: the
        full path walks the tree then.

        Two walks of the same configuration list the same directories below the paths both were
        given (whether a directory is excluded depends on its path, the configuration and the
        .gitignore files, not on where the walk began), so each patches its part of the last
        listings, which hold both. The record keeps the last one's paths outside the directories
        walked again, with their stats, which the child forked at start-up (or
        `_listing_from_snapshot`) found unchanged; below them, the new walk's, and the package
        markers that module naming looks for again (the files found there are named afresh)."""
        if self._unheld is None or self.overrides:
            return None
        snapshot, moved = self._unheld
        request = tuple(sorted(map(os.path.abspath, paths)))
        by_path = bool(request) and all(os.path.isfile(path) and not os.path.islink(path) for path in request)
        if not by_path and (request != snapshot.request or snapshot.skipped or not all(map(_walked_as_is, request))):
            return None
        listings = self.last_listings(snapshot)
        directories = {snapshot.walk[position][0] for position in moved}
        below_roots, below_request = _below(roots), () if by_path else _below(request)
        given = {*map(os.path.abspath, roots), *(() if by_path else request)}  # where a walk begins
        placed = all(
            d in listings and d not in given and d.startswith(below_roots + below_request) for d in directories
        )
        if len(directories) > _RELIST_MOST or not placed:
            return None
        with self.stats.phase("discover"):
            walks = [Subtrees(self.config, [d for d in directories if d.startswith(below_roots)], INDEX_INCLUDE)]
            if not by_path and not self.engine._same_walk(paths, roots):
                walks.append(Subtrees(self.config, [d for d in directories if d.startswith(below_request)]))
            with InputRecorder.recording(with_keys=self.keeps_keys) as recorded:
                found = [walk.walk() for walk in walks]
                asked = discover(paths, self.config) if by_path else None
            if any(files is None for files in found):
                return None
            return self._walked(snapshot, listings, walks, cast(list[_Found], found), asked, recorded)

    def _walked(
        self,
        snapshot: Snapshot,
        listings: Mapping[str, Listing],
        walks: list[Subtrees],
        found: list[_Found],
        asked: Discovery | None,
        recorded: Recorded,
    ) -> _Walked:
        """The last walk patched with what `walks` found again (the roots' first, then the paths
        asked for, when theirs is another walk); `asked`: the files passed by path, found afresh.
        The files outside the directories walked again keep the names the last walk gave them
        (`_known_modules`): a module's name changes only with a package marker, or a module beside
        a package, in a directory above it, and none of those is below a directory walked again
        (every directory that moved is)."""
        prefixes = tuple(prefix for walk in walks for prefix in walk.prefixes)
        self._known_modules = {rel: entry[2] for rel, entry in snapshot.files.items() if not rel.startswith(prefixes)}
        unindexed = set(snapshot.unindexed)
        indexed = _patched(snapshot, (rel for rel in snapshot.files if rel not in unindexed), walks[0], found[0])
        if asked is not None:
            checked, skipped = list(asked.files), [(s.rel, s.reason) for s in asked.skipped]
        else:
            checked = indexed if len(walks) == 1 else _patched(snapshot, snapshot.checked, walks[1], found[1])
            skipped = []
        below = _below(top for walk in walks for top in walk.tops)
        new_listings = {directory: listing for _, listed in found for directory, listing in listed.items()}
        kept_listings = {d: listing for d, listing in listings.items() if not d.startswith(below)}
        outside = Recorded((path, key) for path, key in snapshot.walk if not path.startswith(below))
        self.stats.directories_rewalked = len(new_listings)
        return _Walked(checked, indexed, skipped, {**kept_listings, **new_listings}, recorded.merged(outside))

    def _with_new_stats(self, snapshot: Snapshot, files: dict[str, tuple[str, StatKey, str]] | None = None) -> Snapshot:
        """`snapshot` with the stats this run found: its directories listed again, and `files`."""
        walk = tuple(self.walk_recorded(snapshot).items())  # the same paths, in the same order
        return dataclasses.replace(snapshot, walk=walk, files=snapshot.files if files is None else files)

    def walk_recorded(self, snapshot: Snapshot) -> Recorded:
        """The snapshot's walk as this run found it: the directories listed again with their new stats."""
        listed = Recorded(snapshot.walk)
        for directory, stat in self._relisted.items():
            listed.note(directory, stat)
        return listed

    def last_listings(self, snapshot: Snapshot) -> SavedListings:
        """The directory listings of the walk `snapshot` holds (still valid: no directory changed,
        or those that did list the same entries)."""
        assert self.store is not None
        if self._saved_listings is None or self._saved_listings.token != snapshot.listings:
            self._saved_listings = SavedListings(self.store, self.key, snapshot.listings)
        return self._saved_listings

    def _listings_token(self) -> str:
        """The token the new snapshot names its walk's listings by: the last walk's when this run
        took it from the snapshot, else a new one for this walk's (saved with the snapshot)."""
        if isinstance(self.listings, SavedListings):
            return self.listings.token
        if not self.listings:
            return ""
        token = new_token()
        self._pending_listings = (token, self.listings)
        return token

    def _early_answer(self, snapshot: Snapshot) -> early_stats.Answer | None:
        """What the child forked at start-up found of this snapshot's stats (None: stat here)."""
        assert self.store is not None
        if not snapshot.token:
            return None
        answer = early_stats.take(os.path.realpath(self.store.walk_file), snapshot.token)
        self.stats.stats_at_start = answer is not None
        if early_stats.answered_another():
            self._walk_file_of = snapshot  # ~10 ms on the 20k-file tree, once; ~40 ms of stats each run after
        return answer

    def files_from_snapshot(self, rels: Sequence[str]) -> tuple[list[SourcePath], list[SourcePath]]:
        """The checked and indexed files of a walk the snapshot still describes."""
        snapshot = self._snapshot_found
        assert snapshot is not None
        everything = [SourcePath(rel, path) for rel, (path, _, _) in sorted(snapshot.files.items())]
        self._known_modules = {rel: module for rel, (_, _, module) in snapshot.files.items()}
        wanted = set(rels)
        checked = [item for item in everything if item.rel in wanted]
        if not snapshot.unindexed:  # (one list for both when it is every file: no set of them to compare)
            return everything if len(checked) == len(everything) else checked, everything
        unindexed = set(snapshot.unindexed)  # checked by the last run only: indexed only when checked again
        return checked, [item for item in everything if item.rel not in unindexed]

    def _snapshot(
        self,
        files: Sequence[SourcePath],
        results: Mapping[str, Checked],
        per_file: dict[str, tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]]],
        project: list[Finding],
        inputs: Recorded,
        walked: Recorded,
    ) -> None:
        if self.store is None or self.read_only or self.request is None:
            return
        if any(result.final for result in results.values()):
            return  # a crash or a timeout is retried, never replayed
        if walked.racy or inputs.racy:
            return  # an input file too fresh to trust its mtime (see Recorded): no snapshot this time
        stats: dict[str, tuple[str, StatKey, str]] = {}
        digests: dict[str, str] = {}
        bases: dict[str, frozenset[str]] = {}
        cached, records, modules = self.data.files, self.records, self.modules
        for item in files:
            entry = cached.get(item.rel)
            if entry is None or not entry.settled or entry.scan.digest != records[item.rel].digest:
                return  # a file too fresh to trust its mtime, or unreadable: no snapshot this time
            stats[item.rel] = (item.path, entry.stat, modules[item.rel])
            if not is_stat_identity(entry.scan.digest):
                digests[item.rel] = entry.scan.digest
            elif entry.scan.bases:
                bases[item.rel] = entry.scan.bases
        sources = {path for path, _, _ in stats.values()}
        # A file that does not exist in a listed directory needs no stat of its own: creating it
        # moves the directory's mtime, which the walk's entries already hold (on a tree of 6,641
        # directories, the walk's probes for a .gitignore in each were a fifth of a warm run's
        # stats). An input the walk holds is checked there already, before the inputs are.
        # (Recorded paths are absolute and normalized already: the audit hook and the package
        # probes record them so. One that were not would only keep a stat the snapshot needs not.)
        listed = set(walked)

        def needed(keys: dict[str, StatKey | None]) -> tuple[tuple[str, Any], ...]:
            return tuple(sorted((p, k) for p, k in keys.items() if k is not None or os.path.dirname(p) not in listed))

        walk = {path: key for path, key in walked.items() if path not in sources}
        inputs_only = {path: key for path, key in inputs.items() if path not in sources and path not in walk}
        paths, roots, checked, skipped = self.request
        unindexed = self._unindexed()
        held = _patching.held_facts(self.index_facts)
        self._pending_held = (new_token(), held)
        self._pending_snapshot = Snapshot(
            self.key,
            stats,
            per_file,
            tuple(project),
            needed(inputs_only),
            walk=needed(walk),
            roots=tuple(sorted(map(os.path.abspath, roots))),
            request=tuple(sorted(map(os.path.abspath, paths))),
            checked=tuple(checked),
            unindexed=unindexed,
            skipped=tuple(skipped),
            listings=self._listings_token(),
            digests=digests,
            needles=_state.scan_needles(self.gates, self.seeds, self.rule_seeds),
            bases=bases,
            held=self._pending_held[0],
            views={rel: _patching.closure_view(records[rel]) for rel in digests},
            scoped=frozenset(rel for rel in digests if records[rel].syntax_scope),
            project_reads=frozenset(path for path in inputs if path in sources),
        )

    def _unindexed(self) -> tuple[str, ...]:
        """The checked files the walk of the roots did not find (`Snapshot.unindexed`): none when
        one walk found both (a full walk of the roots, the last walk's files asked for again)."""
        checked, indexed = self._walks
        if checked is indexed:
            return ()
        return tuple(sorted({item.rel for item in checked}.difference(item.rel for item in indexed)))

    @property
    def keeps_keys(self) -> bool:
        """Are stat keys of what the run reads needed (for a snapshot)?"""
        return self.store is not None and not self.read_only

    def _project_findings(self, index: ProjectIndex, last: Sequence[Finding] | None = None) -> list[Finding]:
        """The project rules' findings; with `last` (the snapshot's, after an edit that moved only
        positions), those of the rules whose findings show no position are taken from it."""
        findings: list[Finding] = []
        for rule in self._enabled(_rule.ProjectRule):
            if last is not None and not rule.SHOWS_POSITIONS:
                findings += [finding for finding in last if finding.code == rule.CODE]
            else:
                findings += rule().check_project(index, self.config)
        return findings

    def _visible(self, findings: list[Finding], checked: set[str]) -> list[Finding]:
        # Project findings about Python files outside this run (pre-commit) stay quiet; those
        # about the configuration, docs and schemas always count.
        config_rel = display_path(self.config.source, self.config.root) if self.config.source else None
        return [f for f in findings if f.path in checked or f.path == config_rel or not f.path.endswith(".py")]

    def _needs_check(self, rel: str, record: ScanRecord, unstable: bool, demanded: bool | None = None) -> bool:
        """`demanded`: is the file indexed in full (default: by this run's closure)?"""
        demanded = rel in self.demanded if demanded is None else demanded
        if record.error is not None and not demanded:
            return False  # unreadable, too large, or a syntax error found by the scan: its DL000
        return bool(record.rules) or record.marker or demanded or unstable

    def _start_check(
        self,
        checked: Sequence[SourcePath],
        index: ProjectIndex,
        signature: str,
        previous: Mapping[str, Checked],
    ) -> _Checking:
        """The results that still hold, and the files to check again handed to a new pool's
        workers. They start at once: a worker's first file pays for importing libcst (~0.1 s),
        which then overlaps with the project rules this process runs meanwhile."""
        unstable = self._unstable(index)  # then every file is checked again
        results: dict[str, Checked] = {}
        todo: list[CheckItem] = []
        for item in checked:
            record = self.records[item.rel]
            if not self._needs_check(item.rel, record, unstable):
                continue
            reused = self._reuse(item.rel, record, index, signature, previous.get(item.rel))
            if reused is not None:
                results[item.rel] = reused
                continue
            todo.append(_state.CheckItem(item.rel, str(item.path), record.syntax_scope and not record.syntax_checked))
        checking = _Checking(results, todo, len(checked))
        if todo:
            self.stats.files_checked_fresh += len(todo)
            state = _state.CheckState(
                self.config, self.file_plan, self.fact_rules, self.engine.known_codes, self.engine.enabled_codes,
                index, self.index_facts, self.overrides, self.max_size, not self.overrides,
            )  # fmt: skip
            if self._prepare_pool is not None:  # free its processes before forking a new pool
                self._collect_stats(self._prepare_pool)
                self._prepare_pool.close()
                self._prepare_pool = None
            checking.pool = self._check_pool(state)
            try:
                checking.pending = checking.pool.submit(todo, self._batch(len(todo), 4))
            except BaseException:
                self._close_check(checking)
                raise
        return checking

    def _finish_check(self, checking: _Checking, signature: str) -> dict[str, Checked]:
        """Every result of the check `_start_check` began, its pool closed."""
        results = checking.results
        if checking.pending is not None:
            outcomes = checking.pending.results()
            self._close_check(checking)
            for checked_item, outcome in zip(checking.todo, outcomes, strict=True):
                results[checked_item.rel] = self._store(checked_item, outcome, signature)
                self.engine.previews.update(results[checked_item.rel].previews)
        if self.engine.progress is not None:
            self.engine.progress(checking.total, checking.total)
        return results

    def _close_check(self, checking: _Checking) -> None:
        """Close the check's pool, once (its stats counted once too)."""
        if checking.pool is not None:
            self._collect_stats(checking.pool)
            checking.pool.close()
            checking.pool = None

    def _reuse(
        self, rel: str, record: ScanRecord, index: ProjectIndex, signature: str, fresh: Checked | None
    ) -> Checked | None:
        """A result computed earlier (this run or a cached one) that the index still supports."""
        if fresh is not None and (fresh.final or (fresh.deps is not None and self._still_valid(fresh.deps, index))):
            return fresh
        if rel in self.overrides:
            return None
        check = self._cached_check(rel, record.digest, self.modules[rel])
        if check is None:
            return None
        # The entry keeps the signature it was computed against: re-confirming it here would
        # rewrite every checked file's entry after any edit (the signature covers every file),
        # for the rare next run that sees the same signature and no snapshot.
        if check.signature != signature and not self._still_valid(check.deps, index):
            return None
        self.stats.check_cache_hits += 1
        return _state.Checked(check.digest, check.findings, check.suppressed, check.deps, frozenset())

    def _cached_check(self, rel: str, digest: str, module: str) -> CheckEntry | None:
        """The cached check of `rel` when it was of these bytes under this module name."""
        entry = self.data.files.get(rel)
        check = entry.check if entry is not None else None
        return check if check is not None and check.digest == digest and check.module == module else None

    def _still_valid(self, deps: Sequence[Dep], index: ProjectIndex) -> bool:
        """`still_valid`, with the answers of `index` shared by every file of the run."""
        if self._answers is None or self._answers[0] is not index:
            self._answers = (index, {})
        return still_valid(deps, index, self._answers[1])

    def _store(self, item: CheckItem, outcome: Checked | workers.Failure, signature: str) -> Checked:
        if isinstance(outcome, workers.Failure):
            return _final_check(parse_error(item.rel, _failure_message(outcome)))
        entry = self.data.files.get(item.rel)
        if (
            entry is not None
            and item.rel not in self.overrides
            and outcome.deps is not None
            and not outcome.touched
            and entry.scan.digest == outcome.digest
        ):
            entry.check = CheckEntry(
                outcome.digest, outcome.findings, outcome.suppressed, outcome.deps, signature, self.modules[item.rel]
            )
            self.changed.add(item.rel)
        return outcome


# The likely cause, by how a worker died: a native parser overflowing its stack faults; a worker
# the kernel's out-of-memory killer (or a person) stops gets SIGKILL, which says nothing of the file.
_CRASH_HINTS = {
    "SIGSEGV": " (nesting too deep for the parser?)",
    "SIGBUS": " (nesting too deep for the parser?)",
    "SIGKILL": " (killed from outside the worker: out of memory?)",
}


class _Walked(NamedTuple):
    """What `_Run.walk_patched` gives in place of the walk's `Discovery`s and record."""

    checked: list[SourcePath]
    indexed: list[SourcePath]
    skipped: list[tuple[str, str]]
    listings: Mapping[str, Listing]
    recorded: Recorded


_Found: TypeAlias = tuple[list[SourcePath], dict[str, Listing]]  # what `Subtrees.walk` found


def _patched(snapshot: Snapshot, rels: Iterable[str], walk: Subtrees, found: _Found) -> list[SourcePath]:
    """The files `rels` of the last walk outside the directories `walk` walked again, with those
    it `found` there, in the walk's order."""
    prefixes = walk.prefixes
    kept = (SourcePath(rel, snapshot.files[rel][0]) for rel in rels if not rel.startswith(prefixes))
    return _union(kept, found[0])


def _below(paths: Iterable[str | Path]) -> tuple[str, ...]:
    """What the paths strictly below each of `paths` start with."""
    return tuple(os.path.join(os.path.abspath(path), "") for path in paths)


def _walked_as_is(path: str) -> bool:
    """Is the path asked for a directory the walk walks where it is (no symlink on the way)?"""
    return os.path.isdir(path) and os.path.realpath(path) == path


def _failure_message(failure: workers.Failure) -> str:
    if failure.kind == "crash":
        hint = _CRASH_HINTS.get(failure.reason.rpartition(" ")[2], "")
        return f"{failure.reason} while checking this file{hint}"
    return failure.reason


def _final_check(finding: Finding) -> Checked:
    """The result of a check that failed for good (unreadable, a crash, a timeout): its DL000,
    never cached nor replayed from a snapshot."""
    return _state.Checked("", (finding,), (), None, frozenset(), final=True)


def _plain_record(item: _ScanItem, outcome: _Plain, bases: frozenset[str]) -> ScanRecord:
    """The scan record of a file no needle matched (`_prepare_handler`'s short way)."""
    digest, size, _, read_stat = outcome
    if digest is None:
        assert read_stat is not None
        digest = stat_identity(read_stat[0])
    return _prefilter.ScanRecord(digest, size, None, _NO_RULES, False, False, False, bases, False, item.syntax_scope)


def _same_placeholder(snapshot: Snapshot, rel: str, data: bytes) -> bool:
    """Are these bytes of a file the snapshot knows by its stat still what the index and the
    rules saw of it: no needle (a placeholder, read by no rule), the same class bases?"""
    if any(needle in data for needle in snapshot.needles):
        return False
    return class_bases(data) == snapshot.bases.get(rel, frozenset())


def _held_digest(record: ScanRecord, demanded: bool) -> str:
    """What the signature holds of a file's bytes: their digest when the index holds facts of them
    (`_Run._build`: full ones when demanded, a Literal's file's partial ones), "" for a placeholder."""
    return record.digest if demanded or record.literal else ""


def _module_names(
    files: Sequence[SourcePath], root: str, probed: Recorded | None = None, markers: set[str] | None = None
) -> dict[str, str]:
    """Module names, asking the file system once per directory (not once per file and level).

    A directory below `root` without `__init__.py` inside a package is a namespace package
    (PEP 420: `pkg/ns/mod.py` is `pkg.ns.mod`, as TensorRT-LLM's `checkpoints/hf/` is) unless a
    module of its name is beside it (`pkg/ns.py`, which Python imports instead); one that no
    package holds names nothing (`scripts/tool.py` is `tool`), as `discovery.module_name` names
    them. `probed` collects the `__init__.py` paths looked for that the walk did not find
    (the names depend on them), with their stat at the time; `markers`: the `__init__.py` files
    the walk found, when `files` are only some of them.
    """

    found = markers if markers is not None else {item.path for item in files if item.path.endswith("__init__.py")}
    below = root.rstrip(os.sep) + os.sep

    @functools.cache
    def package(directory: str) -> tuple[str, ...] | None:
        marker = os.path.join(directory, "__init__.py")
        parent = os.path.dirname(directory)
        if marker not in found:  # the walk found most markers
            try:
                stat: os.stat_result | None = os.stat(marker)
            except OSError:
                stat = None
            if probed is not None:
                probed.note(marker, stat)
            if stat is None or not S_ISREG(stat.st_mode):
                name = os.path.basename(directory)
                # A module of its name beside it is what Python imports (red-team 49): no package.
                if not (directory.startswith(below) and name.isidentifier()) or os.path.isfile(directory + ".py"):
                    return None
                above = package(parent)
                return None if above is None else (*above, name)
        above = package(parent) if parent != directory else None
        return (*(above or ()), os.path.basename(directory))

    names: dict[str, str] = {}
    prefixes: dict[str, str] = {}  # directory -> its dotted package name ("" outside a package)
    split = os.path.split if os.altsep else _split_posix
    for item in files:
        directory, name = split(item.path)
        prefix = prefixes.get(directory)
        if prefix is None:
            prefix = prefixes[directory] = ".".join(package(directory) or ())
        stem = name[:-3] if name.endswith(".py") else os.path.splitext(name)[0]
        if name == "__init__.py":
            names[item.rel] = prefix or stem
        else:
            names[item.rel] = f"{prefix}.{stem}" if prefix else stem
    package.cache_clear()  # `package` refers to itself: a cycle that would keep its cache alive
    return names


def _split_posix(path: str) -> tuple[str, str]:
    """`os.path.split` of a normalized POSIX path, as a walk makes them (~0.2 against ~1 us: once
    for every file of the tree); a repeated or trailing separator would stay in the head."""
    head, separator, tail = path.rpartition("/")
    return head or separator, tail


# ---- worker-side handlers (module functions: picklable, and `read_bytes` is looked up here) -------


def _read(
    rel: str, path: str, overrides: Mapping[str, bytes], max_size: int
) -> tuple[SourceFile, os.stat_result | None]:
    """The file (or its override) and, for a file read from disk, its stat."""
    data, decoded, stat = _read_data(rel, path, overrides, max_size)
    return decoded if decoded is not None else decode_source(data, rel), stat


def _read_data(
    rel: str, path: str, overrides: Mapping[str, bytes], max_size: int
) -> tuple[bytes, SourceFile | None, os.stat_result | None]:
    """The file's bytes (or its override's), the SourceFile of bytes that are not plain
    (`is_plain`: decoding validated; None for most files), and for a file read from disk its
    stat. The scan searches most files and never parses them: a SourceFile was ~1 us of the ~26
    it spends on one."""
    override = overrides.get(rel)
    data, stat = (override, None) if override is not None else read_bytes(path, rel, max_size)
    return data, None if is_plain(data) else decode_source(data, rel), stat


def _prepare_handler(
    state: PrepareState, item: int | _ScanItem | _FactsItem
) -> Scanned | _Plain | tuple[ModuleFacts, str | None]:
    if isinstance(item, int):
        item = state.scan_items[item]
    if isinstance(item, _FactsItem):  # (facts, digest of the bytes they came from)
        try:
            source, _ = _read(item.rel, item.path, state.overrides, state.max_size)
        except SourceError as error:
            return _facts.ModuleFacts(item.module, item.rel, error=error.message, error_line=error.line or 1), None
        init = item.path.endswith("__init__.py")
        return _facts.extract_facts(source.text, item.module, item.rel, state.options, init), content_digest(
            source.data
        )
    try:
        data, decoded, read_stat = _read_data(item.rel, item.path, state.overrides, state.max_size)
    except SourceError as error:
        record = _prefilter.ScanRecord(f"error:{error.message}", 0, (error.message, error.line or 1, error.column))
        unreadable = _facts.ModuleFacts(item.module, item.rel, error=error.message, error_line=error.line or 1)
        return _state.Scanned(record, unreadable, None)
    stat = None if read_stat is None else (stat_key(read_stat), settled(read_stat))
    found = state.needles.found(data)
    if not found and not item.want_facts and not (item.checked and item.syntax_scope):
        # A settled file's stat stands for its bytes, as the cache trusts it to: no hash of the
        # files no rule reads (~4.5 us of the ~40 a worker spends on such a file); see `stat_identity`.
        digest = None if stat is not None and stat[1] else content_digest(data)
        return digest, len(data), class_bases(data), stat
    source = decoded if decoded is not None else decode_source(data, item.rel)
    codes = state.needle_codes
    rules = frozenset(code for needle in found if needle in codes for code in codes[needle])
    seeds = state.is_seed(found, data)
    literal = _prefilter.LITERAL_NEEDLE in found
    marker = _suppressions.MARKER in found
    facts: ModuleFacts | None = None
    if seeds or literal or item.want_facts:
        # A file read for its Literals alone (DL100 looks for copies everywhere) gets only what
        # the index keeps of it unless it is demanded (`PartialFacts`); `_extract` completes it then.
        partial = not seeds and not item.want_facts
        init = item.path.endswith("__init__.py")
        facts = _facts.extract_facts(source.text, item.module, item.rel, state.options, init, literals_only=partial)
        facts = _prefilter.PartialFacts.of(facts) if partial else facts
    problem: tuple[str, int, int] | None = None
    syntax_checked = False
    if item.checked and facts is not None:  # parsed for the index: its syntax error costs nothing more
        problem = (facts.error, facts.error_line, facts.error_column) if facts.error is not None else None
        syntax_checked = True
    elif item.checked and item.syntax_scope and not rules and not marker:  # else the check parses it
        problem = _syntax_error(source.text, item.rel)
        syntax_checked = True
    record = _prefilter.ScanRecord(
        content_digest(data), len(data), problem, rules, seeds, literal, marker, class_bases(data),
        syntax_checked, item.syntax_scope,
    )  # fmt: skip
    return _state.Scanned(record, facts, stat)


def _syntax_error(text: str, rel: str) -> tuple[str, int, int] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings of the analysed code are not the user's
        return _prefilter.syntax_error(text, rel)


def _check_handler(state: CheckState, item: CheckItem) -> Checked:
    _prefilter.TRACKER.take()
    try:
        source, _ = _read(item.rel, item.path, state.overrides, state.max_size)
    except SourceError as error:
        return _final_check(parse_error(item.rel, error.message, error.line or 1, error.column))
    if workers.in_worker():
        _test_hooks(source.data)
    digest = content_digest(source.data)
    facts = state.facts[item.rel]
    recorder = Recorder(state.index)
    findings, suppressed, tree = _check_source(state, source, facts, recorder, item.syntax_pending)
    deps = recorder.collected()
    fixes = [finding.fix for finding in findings if finding.fix is not None]
    previews: tuple[tuple[str, Memoized], ...] = ()
    if fixes and tree is not None and state.previews:
        previews = file_previews(source, digest, facts.module, tree, fixes)
    return _state.Checked(
        digest, tuple(findings), tuple(suppressed), deps, frozenset(_prefilter.TRACKER.take()), previews=previews
    )


def _test_hooks(data: bytes) -> None:
    """Test-only: simulate a parser segfault or hang on a marked file (see CRASH_HOOK_ENV)."""
    crash = os.environ.get(CRASH_HOOK_ENV)
    if crash and crash.encode() in data:
        import ctypes

        ctypes.string_at(0)  # SIGSEGV, exactly like a native parser overflowing its stack
    hang = os.environ.get(HANG_HOOK_ENV)
    if hang and hang.encode() in data:
        while True:
            time.sleep(60)


def _check_source(
    state: CheckState, source: SourceFile, facts: ModuleFacts, recorder: Recorder, syntax_pending: bool
) -> tuple[list[Finding], list[SuppressedFinding], cst.Module | None]:
    """(findings, suppressed, the libcst tree when the rules parsed one)."""
    rel = source.rel
    real = not isinstance(facts, _prefilter.PlaceholderFacts)
    if real and facts.error is not None:
        return [parse_error(rel, facts.error, facts.error_line, facts.error_column)], [], None
    context = _rule.FileContext(source, facts, state.config, recorder.proxy)
    findings: list[Finding] = []
    wanted: list[type[FileGate]] = []
    for planned in state.file_rules:
        if type(planned) is GatedRule:
            if not any(needle in source.data for needle in planned.needles):
                continue  # its prefilter would say no: the rule's module stays unimported
            rule = cast("type[FileGate]", planned.load())
        else:
            rule = cast("type[FileGate]", planned)
        try:
            if rule.prefilter(source.data, state.config, context.index) and rule.applies_to(context):
                wanted.append(rule)
        except Exception as error:  # a rule bug must cost one file, never the run
            findings.append(_crashed(rel, rule, error))
    if real:
        for fact_rule in state.fact_rules:
            try:
                findings += fact_rule().check_facts(context)
            except Exception as error:  # a rule bug must cost one file, never the run
                findings.append(_crashed(rel, fact_rule, error))
    has_marker = _suppressions.MARKER in source.data
    tree_rules = [r for r in wanted if issubclass(r, _rule.TreeRule)]
    cst_rules = [r for r in wanted if issubclass(r, _rule.Rule)]
    # A file the index did not parse: its syntax error, if any, as phase 1 would word it.
    if tree_rules:
        tree, problem = _parse_tree(source)
        if problem is not None or tree is None:
            return [parse_error(rel, *(problem or ("cannot parse", 1, 0)))], [], None
        findings += _run_tree_rules(context, tree_rules, tree)
    elif not real and (cst_rules or syntax_pending):
        problem = _syntax_error(source.text, rel)
        if problem is not None:
            return [parse_error(rel, *problem)], [], None
    module: cst.Module | None = None
    if cst_rules:
        try:
            module = parse_module(source)
        except SourceError as error:
            unparsed = parse_error(rel, error.message, error.line or 1, error.column)
            if not tree_rules:
                return [unparsed], [], None
            findings.append(unparsed)  # CPython parsed it for the `ast` rules: their findings stand
        else:
            findings += _run_rules(context, cst_rules, module)
    if not has_marker:
        return findings, [], module
    suppressions = _suppressions.parse_suppressions(source.text)
    kept, hygiene, hidden = _suppressions.apply_suppressions(
        findings,
        suppressions,
        known_codes=state.known_codes,
        enabled_codes=state.enabled_codes,
        rules_ran=True,
        rel=rel,
    )
    return kept + hygiene, hidden, module


def _parse_tree(source: SourceFile) -> tuple[ast.Module | None, tuple[str, int, int] | None]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings of the analysed code are not the user's
            return ast.parse(source.text, filename=source.rel), None
    except SyntaxError as error:
        return None, syntax_problem(error, source.text)
    except (RecursionError, MemoryError, ValueError) as error:
        return None, (f"cannot parse: {type(error).__name__}", 1, 0)


def _crashed(rel: str, rule: type[RuleMeta], error: Exception) -> Finding:
    return parse_error(rel, f"rule {rule.CODE} crashed: {type(error).__name__}: {error}")


def parse_module(source: SourceFile) -> cst.Module:
    import libcst as cst

    try:
        return cst.parse_module(source.text, config=cst.PartialParserConfig(encoding=source.encoding))
    except cst.ParserSyntaxError as error:
        # libcst's tokenizer rejects a few valid files (a form feed starting an indented line):
        # CPython's parser says whether the file or libcst is at fault.
        message = f"syntax error: {error.message}"
        if _syntax_error(source.text, source.rel) is None:
            message = (
                f"libcst cannot parse this file, though Python can ({error.message}); its libcst rules did not run"
            )
        raise SourceError(message, path=source.rel, line=error.raw_line, column=error.raw_column) from None
    except RecursionError:
        raise SourceError("nesting too deep for the parser", path=source.rel) from None


def _run_rules(context: FileContext, rule_classes: list[type[Rule]], module: cst.Module) -> list[Finding]:
    import libcst as cst

    positions = _rule.Positions(module)
    rules = [_instance(cls, context, positions) for cls in rule_classes]
    try:
        cst.visit_batched(module, rules)
        return [finding for rule in rules for finding in rule.findings]
    except RecursionError:
        return [parse_error(context.rel, "nesting too deep for the parser")]
    except Exception:
        return _run_rules_one_by_one(context, module, rule_classes, positions)


def _run_tree_rules(context: FileContext, rule_classes: list[type[TreeRule]], tree: ast.Module) -> list[Finding]:
    findings: list[Finding] = []
    for cls in rule_classes:
        try:
            findings += cls(context, tree).check()
        except RecursionError:
            findings.append(parse_error(context.rel, "nesting too deep for the parser"))
        except Exception as error:  # a rule bug must cost one file, never the run
            findings.append(_crashed(context.rel, cls, error))
    return findings


def _instance(cls: type[Rule], context: FileContext, positions: Positions) -> Rule:
    rule = _rule.visitor_class(cls)(context)
    rule.positions = positions
    return rule


def _run_rules_one_by_one(
    context: FileContext, module: cst.Module, rule_classes: list[type[Rule]], positions: Positions
) -> list[Finding]:
    """Slow path after a crash in the batch: attribute the crash, keep the other rules' findings."""
    import libcst as cst

    findings: list[Finding] = []
    for cls in rule_classes:
        rule = _instance(cls, context, positions)
        try:
            cst.visit_batched(module, [rule])
        except Exception as error:  # a rule bug must cost one file, never the run
            findings.append(_crashed(context.rel, cls, error))
            continue
        findings.extend(rule.findings)
    return findings


def _union(*groups: Iterable[SourcePath]) -> list[SourcePath]:
    merged = {item.rel: item for group in groups for item in group}
    return [merged[rel] for rel in sorted(merged)]
