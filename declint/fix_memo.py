"""What a fix session found, kept for the next one over the same files.

`check --fix` and `check --diff` verify every fix by re-linting the whole run with it, sort out
fixes that fail together by more re-lints, and apply each group of fixes with libcst. A session
over the files the last one read (a hook or an editor running `--fix` again with nothing
changed, fixes refused every time) used to redo all of it: 16 re-lints and 59 applications,
~5 s on the demo with its shared Literal edited. Every one of those steps is a function of
what the memo keys it by, so the next session takes its answers instead:

- a re-lint's result, keyed by the state of the files on disk when the session started (the
  token of the snapshot that describes them exactly: `Engine.state_token`), the paths asked for
  and every text given in place of a file; with no such token (no cache, a file too fresh for
  its stat to be trusted) nothing is kept, and the entries of another state are never read;
- a file's text with a group of fixes applied: the fixed text, which fixes applied and which
  were given up and why (a comment dropped, the code changed under the fix), keyed by the
  file's name, module and bytes and the fixes in order;
- whether a file may be rewritten (`previews.unrewritable`) and whether a fixed text parses,
  keyed by the name and the bytes.

Kept in the cache directory, one file per version of declint (`Cache.save_fix_memo`), holding
only what the last session used or found (so it never grows past one session's worth); nothing
is written when every answer was found there. Without a cache the memo lives for one session.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from declint.cache import Cache, content_digest
from declint.config import Config
from declint.types import RunResult

_T = TypeVar("_T")

# The fixed text, the positions of the fixes that went in (in the order the fixes were given),
# and (position, reason) of each fix given up, in the order it was.
AppliedEntry = tuple[str, tuple[int, ...], tuple[tuple[int, str], ...]]

_LINTS, _APPLIED, _VERDICTS, _PARSED = "lints", "applied", "verdicts", "parsed"
_KINDS = (_LINTS, _APPLIED, _VERDICTS, _PARSED)


KEPT_CHARACTERS = 4_000_000  # of fixed texts kept (each trial of a group makes its own): ~8 MB


def _key(*parts: str) -> str:
    return hashlib.blake2b("\0".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class FixMemo:
    """The answers of the last session (`entries`, by kind then key) and this one's (`used`)."""

    def __init__(self, store: Cache | None, state: str | None, request: Iterable[str]) -> None:
        self.store = store
        self.state = state
        self.request = tuple(sorted(request))
        loaded = store.load_fix_memo() if store is not None else {}
        self.entries: dict[str, dict[str, Any]] = {kind: _table(loaded.get(kind)) for kind in _KINDS}
        if loaded.get("state") != state:  # re-lints of another state of the files: never read
            self.entries[_LINTS] = {}
        self.used: dict[str, dict[str, Any]] = {kind: {} for kind in _KINDS}
        self.found = self.computed = 0  # answers taken from the memo, and computed
        self.characters = 0  # of the fixed texts in `used`: past KEPT_CHARACTERS, new ones are not kept

    @classmethod
    def open(cls, config: Config, uses_cache: bool, state: str | None, request: Iterable[str]) -> FixMemo:
        """The memo of the cache directory the first lint used (none when it used none)."""
        store = Cache.open(config.root, str(config.get("cache-dir"))) if uses_cache else None
        if store is not None and not store.directory.is_dir():
            store = None  # the lint could not create it: nothing to read, nowhere to write
        return cls(store, state, request)

    def lint(self, texts: Mapping[str, bytes], compute: Callable[[], tuple[RunResult, bool]]) -> RunResult:
        """The result of a run over `texts` in place of their files, from the state the memo is for.
        `compute` says whether its result may be kept: not when a worker crashed or timed out,
        which the next run tries again (as the cache never replays one)."""
        if self.state is None:  # no state to key it by: computed, never kept
            self.computed += 1
            return compute()[0]
        parts = [f"{rel}\0{content_digest(data)}" for rel, data in sorted(texts.items())]
        return self._remember(_LINTS, _key(self.state, *self.request, "", *parts), compute, _is(RunResult))

    def applied(
        self, rel: str, module: str, data: bytes, fixes: Sequence[object], compute: Callable[[], AppliedEntry]
    ) -> AppliedEntry:
        """`fixes` applied to the text `data` of `rel` (module `module`), as `_Session._apply` does.
        A session of many fixes makes many texts: past `KEPT_CHARACTERS`, new ones are not kept."""
        key = _key(rel, module, content_digest(data), *map(repr, fixes))
        used = self.used[_APPLIED]
        if key in used:
            return used[key]  # type: ignore[no-any-return]
        if self.characters > KEPT_CHARACTERS:
            self.computed += 1
            return compute()
        entry = self._remember(_APPLIED, key, _kept(compute), functools.partial(_is_applied, count=len(fixes)))
        self.characters += len(entry[0])
        return entry

    def verdict(self, rel: str, data: bytes, compute: Callable[[], str | None]) -> str | None:
        """`previews.unrewritable` of the text."""
        return self._remember(_VERDICTS, _key(rel, content_digest(data)), _kept(compute), _is(str, type(None)))

    def parse_error(self, rel: str, data: bytes, compute: Callable[[], str | None]) -> str | None:
        """Why the text does not parse (None: it does)."""
        return self._remember(_PARSED, _key(rel, content_digest(data)), _kept(compute), _is(str, type(None)))

    def _remember(
        self, kind: str, key: str, compute: Callable[[], tuple[_T, bool]], valid: Callable[[object], bool]
    ) -> _T:
        """This session's answer, else the last one's (a damaged or foreign entry is computed
        again), else `compute`'s, kept when it says so."""
        used = self.used[kind]
        if key not in used:
            table = self.entries[kind]
            if key in table and valid(table[key]):
                self.found += 1
                used[key] = table[key]
            else:
                self.computed += 1
                value, keep = compute()
                if not keep:
                    return value
                used[key] = value
        return used[key]  # type: ignore[no-any-return]

    def save(self) -> None:
        """Keep this session's answers for the next (only when one was computed)."""
        if self.store is None or not self.computed:
            return
        self.store.save_fix_memo({"state": self.state, **self.used})


def _kept(compute: Callable[[], _T]) -> Callable[[], tuple[_T, bool]]:
    """`compute` for `_remember`, its answer always kept."""
    return lambda: (compute(), True)


def _is(*types: type) -> Callable[[object], bool]:
    return lambda value: isinstance(value, types)


def _is_applied(value: object, count: int) -> bool:
    """An `AppliedEntry` of `count` fixes (what a session wrote; a damaged file may hold anything)."""
    if not (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], str)):
        return False
    _, applied, given_up = value
    if not (isinstance(applied, tuple) and isinstance(given_up, tuple)):
        return False
    if not all(isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str) for entry in given_up):
        return False
    positions = [*applied, *(position for position, _ in given_up)]
    return all(isinstance(position, int) and 0 <= position < count for position in positions)


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
