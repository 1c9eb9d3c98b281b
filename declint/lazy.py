"""Modules loaded on first use.

Importing libcst costs about 0.13 s, more than a warm run's whole engine work, and a run answered
from the cache never parses anything. Modules that need libcst only inside functions bind it with
`lazy_module("libcst")`; the import happens at the first attribute access. This is the stdlib's
`importlib.util.LazyLoader`, not a proxy of our own: after the first access the module is a plain
module again, so hot visitor code pays nothing.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType

_LOCK = threading.Lock()


def lazy_module(name: str) -> ModuleType:
    """`name`, imported when one of its attributes is first read (its parent package is imported now)."""
    with _LOCK:
        loaded = sys.modules.get(name)
        if loaded is not None:
            return loaded
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        loader = importlib.util.LazyLoader(spec.loader)
        spec.loader = loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        loader.exec_module(module)
        return module


def loaded(name: str) -> bool:
    """Is `name` imported for real (not bound by `lazy_module` and still unused)?"""
    module = sys.modules.get(name)
    return module is not None and type(module) is ModuleType
