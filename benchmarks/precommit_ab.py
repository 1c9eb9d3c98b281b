"""The pre-commit case of two (or more) installed versions of declint, alternating, with medians.

    python benchmarks/precommit_ab.py --rounds 7 /tmp/ab-base /tmp/ab-head
    python benchmarks/precommit_ab.py --rounds 7 --tree 20000 --edited /tmp/ab-base /tmp/ab-head
    python benchmarks/precommit_ab.py --rounds 7 --other-edited /tmp/ab-base /tmp/ab-head
    python benchmarks/precommit_ab.py --rounds 7 --tree 20000 --renamed /tmp/ab-base /tmp/ab-head
    python benchmarks/precommit_ab.py --rounds 7 --added /tmp/ab-base /tmp/ab-head
    python benchmarks/precommit_ab.py --rounds 7 --tree 20000 --above /tmp/ab-base /tmp/ab-head
    python benchmarks/precommit_ab.py --rounds 7 --tree 20000 --imported /tmp/ab-base /tmp/ab-head

Each directory is a `pip install --no-deps --target` of declint, as for `ab.py`. On the 20k tree
with 30 models (made by `run.py`; `--tree` names another of `benchmarks/.work/trees`), every
round runs each version once over the whole tree (so that its cache and snapshot are the tree's
as it is), then times it checking the first three model files of the manifest by path, as
`run.py`'s "pre-commit, 3 files, warm" case does. With `--edited`, the first of them has a
comment appended just before the timed run (a new one each round and version, so no cache holds
its bytes), as `run.py`'s "pre-commit, 3 files, 1 edited" case; it is restored afterwards.
With `--other-edited`, the fourth model file of the manifest is edited so instead (a change the
commit leaves out: the three files passed are unchanged, the index is not). With `--touched`,
the first file gets a new mtime a minute back instead, its bytes unchanged (a `touch`, a
file saved again in place). With `--plain-edited`, the first file passed is a filler file no
needle matches (`run.plain_file`), with a comment appended as with `--edited`, and the first
two model files follow it. With `--renamed`, the first file's edit is saved as editors' safe
write and git do: a new file renamed over it (its directory's mtime moves). With `--all-edited`,
each of the three files passed gets a comment appended, as `--edited` does to the first. With
`--added`, a new module (`ADDED`, without a needle) is written beside the first model file just
before the timed run and passed in its place (a commit that adds a file), and removed afterwards.
With `--above`, the edit's comment goes at the top of the file instead of its end: every line of
what the file defines moves down (patched into the snapshot since 2026-12-07, DL100 run again;
before, the full path). With `--imported`, the edit is an import added at the top
instead: the file's facts change (what it imports): the full path until 2026-12-07 (twenty-sixth
session), patched since, the three files passed read and checked again.

The versions share the cache directory's `last.walk` (the list the start-up child stats, which
names the snapshot that wrote it), and a run the snapshot answers writes none: only the version
whose snapshot wrote it last would get its stats from the child, the others stat in process
(~40 ms more on the 20k tree), and a version could keep that advantage for the whole run. So the
snapshots are removed before each version's run over the whole tree, which then writes its own
and the walk file, as the one version a user has would have (that run is untimed).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from installed import TREES, median_of, timed_check, tree_ab_parser
from run import plain_file

FILES = 3
ADDED = "modeling_added_by_the_commit.py"


def main() -> None:
    parser = tree_ab_parser(__doc__, rounds=7, tree="20000-30models")
    parser.add_argument("--edited", action="store_true", help="append a comment to the first file first")
    parser.add_argument("--other-edited", action="store_true", help="... to a model file not passed instead")
    parser.add_argument("--touched", action="store_true", help="give the first file a new mtime, the same bytes")
    parser.add_argument("--plain-edited", action="store_true", help="pass a file no needle matches, edited, first")
    parser.add_argument("--renamed", action="store_true", help="--edited, saved by renaming a new file over it")
    parser.add_argument("--all-edited", action="store_true", help="append a comment to each of the files passed")
    parser.add_argument("--added", action="store_true", help="write a new module and pass it first instead")
    parser.add_argument("--above", action="store_true", help="--edited, the comment at the top of the file")
    parser.add_argument("--imported", action="store_true", help="--edited, an import added at the top instead")
    args = parser.parse_args()
    tree = TREES / args.tree
    manifest = json.loads((tree / "manifest.json").read_text(encoding="utf-8"))
    models = sorted(manifest["expected"])
    staged = [plain_file(tree, models), *models[: FILES - 1]] if args.plain_edited else models[:FILES]
    added = Path(models[0]).parent / ADDED
    staged = [str(added), *staged[1:]] if args.added else staged
    first = models[FILES] if args.other_edited else staged[0]
    edited = [tree / name for name in (staged if args.all_edited else [first])]
    args.edited = args.edited or args.other_edited or args.plain_edited or args.renamed or args.all_edited
    args.edited = args.edited or args.above or args.imported
    originals = [b"" if args.added else path.read_bytes() for path in edited]
    seconds: dict[str, list[float]] = {installed: [] for installed in args.installed}
    try:
        for number in range(args.rounds):
            for installed in args.installed:
                for snapshot in (tree / ".declint_cache").glob("v*/*.snapshot"):
                    snapshot.unlink()  # this version's run writes its own, and the walk file (see above)
                timed_check(installed, tree, ".")
                for path, original in zip(edited, originals, strict=True):
                    if args.edited:
                        comment = f"# edited {number} {installed}\n".encode()
                        above = f"import os as _edited_{number}\n".encode() if args.imported else comment
                        above_it = args.above or args.imported
                        _save(path, above + original if above_it else original + b"\n" + comment, args.renamed)
                    elif args.touched:
                        moment = time.time() - 60
                        os.utime(path, (moment, moment))
                    elif args.added:
                        path.write_text(f"VALUE = {number}\n", encoding="utf-8")
                seconds[installed].append(timed_check(installed, tree, *staged))
                if args.added:
                    (tree / added).unlink()
                if args.edited:
                    for path, original in zip(edited, originals, strict=True):
                        _restore(path, original)
    finally:
        if args.edited:
            for path, original in zip(edited, originals, strict=True):
                _restore(path, original)
        (tree / added).unlink(missing_ok=True)
    case = "another model file edited" if args.other_edited else "1 edited" if args.edited else "warm"
    case = f"all {FILES} edited" if args.all_edited else case
    case = f"{staged[0]} (no needle) edited" if args.plain_edited else case
    case = "1 touched, same bytes" if args.touched and not args.edited else case
    case = f"{case}, saved by rename" if args.renamed else case
    case = f"{case}, its comment at the top (its facts moved)" if args.above else case
    case = f"{case}, an import added at the top (its facts changed)" if args.imported else case
    case = "1 of them a module just added" if args.added else case
    for installed, samples in seconds.items():
        print(f"{installed}: pre-commit on {args.tree}, {FILES} files, {case}: {median_of(samples)}")


def _save(path: Path, data: bytes, by_rename: bool) -> None:
    if not by_rename:
        path.write_bytes(data)
        return
    fresh = path.with_name(path.name + ".tmp")
    fresh.write_bytes(data)
    os.replace(fresh, path)


def _restore(path: Path, original: bytes) -> None:
    """The file's bytes as they were, dated an hour back (outside declint's racy window)."""
    if path.read_bytes() != original:
        path.write_bytes(original)
    past = time.time() - 3600
    os.utime(path, (past, past))


if __name__ == "__main__":
    main()
