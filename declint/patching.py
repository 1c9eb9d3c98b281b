"""A run after an edit the project index cannot see: the last run's snapshot, patched.

The index holds most files as placeholders (module name and path): those no index needle, Literal
or class closure asks for. An edit that leaves an edited file such a placeholder, with the same
`closure_view` of its scan (seeds, Literal, class bases, scan error), leaves the index what the
last run built, its signature too: every other file's findings are the snapshot's (the full path
would reuse their cached results unasked), and so are the project rules' (their other inputs are
stat'ed with the snapshot's). So does an edit of a file the index held in full that leaves its
facts equal, positions included (`same_input`): the index is the same, though its signature (the
digest of such a file's bytes) is not; the next full path asks the cached results' recorded
answers again. An edit that moves the lines or columns of such a file's facts and nothing else
(`moved_input`: a line added above a class) leaves the index the same but for those positions,
which only rules read, to report: the project rules whose findings can show them
(`ProjectRule.SHOWS_POSITIONS`) run again on the patched index, every other file's findings stay
the snapshot's (a per-file rule reports positions of its own file only), and the held facts are
written again. An edit that changes such a file's facts otherwise (what it imports, defines,
declares or calls) but not its view (`changed_input`) changes the index, and other files'
findings with it: when the closure, asked on the index with the new facts, wants no file the
last one held as a placeholder (`closure_holds`), each file asked for whose bytes were hashed has
its cached result confirmed against that index (its recorded questions answered as before) or
is read and checked again, every project rule runs again, and the snapshot keeps the findings
of those files alone (`reindexed`), as long as they are few (a pre-commit hook's request). Such
a run rebuilds the last index from the snapshot's module names and the facts saved with it
(`Cache.save_held`), scans and checks only the edited files (and those asked for whose results
the changed index does not confirm), and writes the snapshot with their new stats and findings:
no scan of every entry, index signature, nor (but after a change of facts) load of the whole
cache or closure (what an edit adds to a warm run over the transformers sources fell from ~67
to ~38 ms; docs/benchmarks.md). Anything else takes the full path: facts of a file the
index held in part (`PartialFacts`), a view that moved, a closure that wants more, project rules
that read a placeholder module or an input the snapshot does not know, a check that read a
placeholder module, a project rule that read the file, more files than the engine reads in its
own process (`_READ_HERE`), more files asked for after a change of facts than it confirms
(`_CONFIRM_MOST`). A crash is the file's DL000, and no snapshot is written.

The edited files' cache entries are not written: the full path that runs next reads them again
(their stat moved), as it would after any edit.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple, cast

from declint import prefilter as _prefilter
from declint.cache import is_stat_identity
from declint.facts import ModuleFacts, without_positions

if TYPE_CHECKING:
    from declint.cache import Recorded, Snapshot, StatKey
    from declint.config import Config
    from declint.index import ProjectIndex
    from declint.prefilter import ScanRecord
    from declint.types import FileFindings, Finding, SuppressedFinding


def closure_view(record: ScanRecord) -> tuple[object, ...]:
    """What the index closure reads of a scan record (not its syntax check: a file's syntax is
    checked when it is, not when a run only indexes it)."""
    return record.seeds, record.literal, record.bases, record.error


def held_facts(index_facts: Mapping[str, ModuleFacts]) -> dict[str, ModuleFacts]:
    """The facts of an index's input that are not plain placeholders (`PartialFacts` are: a
    Literal's file holds real imports and Literals), in the index's order."""
    placeholder = _prefilter.PlaceholderFacts
    return {rel: facts for rel, facts in index_facts.items() if type(facts) is not placeholder}


def index_entries(snapshot: Snapshot, held: Mapping[str, ModuleFacts]) -> dict[str, ModuleFacts]:
    """The last run's index input (`_Run._build`): its held facts, a placeholder for every other
    file, in the order of the snapshot's files (the order the run indexed them in)."""
    at = _prefilter.PlaceholderFacts.at
    return {rel: held.get(rel) or at(module, rel) for rel, (_, _, module) in snapshot.files.items()}


def last_view(snapshot: Snapshot, rel: str) -> tuple[object, ...] | None:
    """The `closure_view` the last run's scan gave `rel` (None: not known). A file known by its
    stat alone held no needle: no seed, no Literal, no error, its bases kept with the snapshot."""
    if rel in snapshot.digests:
        return snapshot.views.get(rel)
    return False, False, snapshot.bases.get(rel, frozenset()), None


def was_seed(snapshot: Snapshot, rel: str) -> bool:
    """Did the last run's scan find an index seed in `rel` (a model, a metadata class)?"""
    view = last_view(snapshot, rel)
    return view is not None and bool(view[0])


def may_keep_input(snapshot: Snapshot, rel: str, held: Mapping[str, ModuleFacts]) -> bool:
    """Can an edit of `rel` be compared with what the index held of it: a placeholder, or its
    full facts (a file held for its Literals alone, `PartialFacts`, is left to the full path),
    with the view the last run's scan gave it?"""
    return last_view(snapshot, rel) is not None and (rel not in held or type(held[rel]) is ModuleFacts)


def same_input(
    snapshot: Snapshot, rel: str, record: ScanRecord, facts: ModuleFacts | None, held: Mapping[str, ModuleFacts]
) -> bool:
    """Does the edited `rel`, scanned again, leave the index's input as the last run built it?
    The same closure view (no file more or less is indexed in full), and for a file the index
    held in full the same facts, lines and columns included: the index, and so every other
    file's findings and the project rules', is then the last one. A comment appended, or
    changed on its line, a suppression added on a line keep them; an edit that moves a
    definition down, or changes what a function calls, does not."""
    return closure_view(record) == last_view(snapshot, rel) and (rel not in held or facts == held[rel])


def moved_input(
    snapshot: Snapshot, rel: str, record: ScanRecord, facts: ModuleFacts | None, held: Mapping[str, ModuleFacts]
) -> bool:
    """Does the edited `rel`, a file the index held in full, leave the index's input as the last
    run built it but for the lines and columns of its facts (a line added or removed above a
    class, a class statement's spacing)? The index reads no position (`without_positions`); a
    rule reports the positions of its own file's facts only, but it finds a class by its module
    and name: a module name another file of the tree shares could give another file's class."""
    return _held_in_full_with_its_view(snapshot, rel, record, facts, held) and without_positions(
        cast(ModuleFacts, facts)
    ) == without_positions(held[rel])


def changed_input(
    snapshot: Snapshot, rel: str, record: ScanRecord, facts: ModuleFacts | None, held: Mapping[str, ModuleFacts]
) -> bool:
    """Does the edited `rel`, a file the index held in full, change what the index holds of it
    (what it imports, defines, declares or calls) and nothing the closure starts from (its
    `closure_view`: no file gains or loses a seed, a Literal or class bases), both versions
    parsing? The index is then the last one with the file's new facts in place, provided the
    closure still ends where it did (`closure_holds`); other files' findings may change, so the
    files asked for are confirmed or checked again and the others' findings are dropped
    (`reindexed`)."""
    return (
        _held_in_full_with_its_view(snapshot, rel, record, facts, held)
        and cast(ModuleFacts, facts).error is None
        and held[rel].error is None
    )


def _held_in_full_with_its_view(
    snapshot: Snapshot, rel: str, record: ScanRecord, facts: ModuleFacts | None, held: Mapping[str, ModuleFacts]
) -> bool:
    """Was `rel` held in full, are its new facts full ones, is its closure view the last one,
    and is it the only file of its module name?"""
    return (
        type(held.get(rel)) is ModuleFacts
        and type(facts) is ModuleFacts
        and closure_view(record) == last_view(snapshot, rel)
        and _sole_file_of_its_module(snapshot, rel)
    )


def closure_holds(snapshot: Snapshot, held: Mapping[str, ModuleFacts], index: ProjectIndex, config: Config) -> bool:
    """Does the index closure (`prefilter.Demand`), asked on `index` (built from `held`, an
    edited file's new facts in place), want no file the last run's closure left a placeholder?
    The closure starts from what the snapshot keeps of every file's scan: the views of the
    hashed files (seeds, class bases), the class bases of the others. The last run's closure
    ended with that question answered by nothing (or began where such a run ended), so a file
    it wants now is one the edit made needed: the full path indexes it."""
    bases = dict(snapshot.bases)
    seeds = set()
    for rel, (seed, _, file_bases, _) in snapshot.views.items():
        if file_bases:
            bases[rel] = cast("frozenset[str]", file_bases)
        if seed:
            seeds.add(rel)
    modules = {rel: module for rel, (_, _, module) in snapshot.files.items()}
    demand = _prefilter.Demand(config, modules, bases, frozenset(seeds))
    return not demand.more(index, {rel for rel, facts in held.items() if type(facts) is ModuleFacts})


def _sole_file_of_its_module(snapshot: Snapshot, rel: str) -> bool:
    module = snapshot.files[rel][2]
    return sum(1 for _, _, other in snapshot.files.values() if other == module) == 1


def same_project_inputs(snapshot: Snapshot, recorded: Recorded) -> bool:
    """Did the project rules, run again, read nothing the last run's did not (its inputs, the
    sources they read, the directories its walk listed, a file absent from a listed directory),
    none of it too fresh to trust? Their inputs' stats were checked when the snapshot was
    loaded; a new one would have no stat in the snapshot to check it by in the next run."""
    known = {path for path, _ in snapshot.inputs} | {path for path, _ in snapshot.walk} | snapshot.project_reads
    return not recorded.racy and all(
        path in known or (key is None and os.path.dirname(path) in known) for path, key in recorded.items()
    )


class Change(NamedTuple):
    """A changed file as a patched run found it: its new stat and scan record, its findings
    (None: the snapshot's request does not check it), whether its rules ran this run, and
    whether that check failed for good (a crash, a timeout: never replayed from a snapshot)."""

    rel: str
    stat: StatKey
    record: ScanRecord
    findings: tuple[tuple[Finding, ...], tuple[SuppressedFinding, ...]] | None
    checked: bool = False
    final: bool = False


def reindexed(snapshot: Snapshot, changes: list[Change], confirmed: Mapping[str, FileFindings]) -> Snapshot:
    """`snapshot` after a patch whose index changed (`changed_input`): the findings of the files
    checked again this run, of those whose cached results the new index `confirmed`, and of the
    files known by their stat alone (no needle: neither a rule nor the index reads them, and
    their findings hold whatever the index holds); every other file's findings are of the last
    index and are dropped, so that a run asking for one takes the full path."""
    again = {change.rel for change in changes if change.findings is not None}
    results = {
        rel: confirmed.get(rel, found)
        for rel, found in snapshot.results.items()
        if rel in again or rel in confirmed or rel not in snapshot.digests
    }
    return dataclasses.replace(snapshot, results=results)


def patched(snapshot: Snapshot, changes: list[Change]) -> Snapshot:
    """`snapshot` with the changed files' stats, findings and what it keeps of their bytes: the
    digest, view and syntax scope of a hashed file, the class bases of one known by its stat alone."""
    files, results = dict(snapshot.files), dict(snapshot.results)
    digests, views, bases = dict(snapshot.digests), dict(snapshot.views), dict(snapshot.bases)
    scoped = set(snapshot.scoped)
    for rel, stat, record, findings, *_ in changes:
        path, _, module = files[rel]
        files[rel] = (path, stat, module)
        if findings is not None:
            results[rel] = findings
        digests.pop(rel, None)
        views.pop(rel, None)
        bases.pop(rel, None)
        scoped.discard(rel)
        if not is_stat_identity(record.digest):
            digests[rel], views[rel] = record.digest, closure_view(record)
            if record.syntax_scope:
                scoped.add(rel)
        elif record.bases:
            bases[rel] = record.bases
    return dataclasses.replace(
        snapshot, files=files, results=results, digests=digests, views=views, bases=bases, scoped=frozenset(scoped)
    )
