"""Reversible patches and a post-import hook.

Every patch remembers what it replaced, so `uninstall()` restores the originals exactly (an
attribute that did not exist is deleted again). The import hook wraps the loader of each
watched module, so targets are patched right after their module runs, and only if it is
ever imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

_MISSING = object()


@dataclass
class Patch:
    owner: Any
    name: str
    original: Any  # _MISSING when the attribute was not in owner's own namespace
    replacement: Any

    def restore(self) -> None:
        current = vars(self.owner).get(self.name, _MISSING) if _has_dict(self.owner) else _MISSING
        if current is not self.replacement:
            return  # someone replaced it after us: leave theirs alone
        if self.original is _MISSING:
            delattr(self.owner, self.name)
        else:
            setattr(self.owner, self.name, self.original)


def _has_dict(owner: Any) -> bool:
    try:
        vars(owner)
    except TypeError:
        return False
    return True


class PatchSet:
    def __init__(self) -> None:
        self._patches: list[Patch] = []
        self._lock = threading.RLock()

    def set(self, owner: Any, name: str, replacement: Any) -> None:
        with self._lock:
            original = vars(owner).get(name, _MISSING)
            setattr(owner, name, replacement)
            self._patches.append(Patch(owner, name, original, replacement))

    def rebind(self, original: Any, replacement: Any, modules: Sequence[types.ModuleType]) -> int:
        """Point every module-level name bound to `original` (`from x import f`) at `replacement`."""
        count = 0
        with self._lock:
            for module in modules:
                for name, value in list(vars(module).items()):
                    if value is original:
                        self.set(module, name, replacement)
                        count += 1
        return count

    def restore_all(self, modules: Sequence[types.ModuleType] = ()) -> None:
        """Every original back; and in `modules`, every module-level name still bound to a
        replacement: a module first imported while the patches were in place ran `from x import
        f` then and holds the replacement under a binding no patch recorded."""
        with self._lock:
            originals = {id(p.replacement): p for p in self._patches if p.original is not _MISSING}
            while self._patches:
                self._patches.pop().restore()
            for module in modules:
                for name, value in list(vars(module).items()):
                    patch = originals.get(id(value))
                    if patch is not None and patch.replacement is value:
                        setattr(module, name, patch.original)

    def __len__(self) -> int:
        return len(self._patches)


class _Loader(importlib.abc.Loader):
    """Delegates to the real loader, then calls `after(module)`."""

    def __init__(self, loader: importlib.abc.Loader, after: Callable[[types.ModuleType], None]) -> None:
        self._loader = loader
        self._after = after

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        self._after(module)

    def __getattr__(self, name: str) -> Any:
        # get_source, get_filename, is_package ...: inspect and linecache ask the loader.
        return getattr(self._loader, name)


class ImportHook(importlib.abc.MetaPathFinder):
    """Calls `after(module)` once each module under `prefix` has executed."""

    def __init__(self, prefix: str, after: Callable[[types.ModuleType], None]) -> None:
        self.prefix = prefix
        self.after = after
        self._busy = threading.local()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.prefix and not fullname.startswith(self.prefix + "."):
            return None
        if getattr(self._busy, "active", False):
            return None
        self._busy.active = True
        try:
            spec = self._find_with_others(fullname, path, target)
        finally:
            self._busy.active = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader, self.after)
        return spec

    def _find_with_others(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None
    ) -> importlib.machinery.ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                return spec
        return None

    def insert(self) -> None:
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def remove(self) -> None:
        while self in sys.meta_path:
            sys.meta_path.remove(self)
