"""Attention backends recorded as they are created, instead of found by a walk after __init__.

The after-construction checks need the attention-backend instances under each encoder module.
Walking every submodule for them after `__init__` was most of the shim's construction cost (a
Qwen3-VL stand-in has ~270 modules and 26 backends). Instead, while a model the shim tracks is
being built, the wrapped `AttentionBackend.__init__` hands each new instance to the `Recorder`
of that construction (thread-local: other threads' backends never reach it), which files it
under its *top module*: the outermost submodule whose method is on the call stack when the
backend is created. For `self.visual = VisionModel(config)` in the model's `__init__`, every
backend created while `VisionModel.__init__` runs (however deep: blocks, attention layers,
factories) is filed under `visual`. A submodule is an object with a `_modules` dict (as
`nn.Module` keeps them), other than the model itself.

Cost: the first backend under a top module walks the frames up to the construction and reads
`self` of the outermost ones; that frame is filed, the next backend's walk stops there and
learns how many frames up it is, and every later sibling reaches it with one
`sys._getframe(n)` and one dict lookup. Only filed frames are kept, until the construction ends.

`groups` then stands in for "the backends under this module" (`checks.recorded_after_construction`)
unless the recording cannot vouch for what the walk would find, and the caller walks as before:
  * `trusted` is False: a backend was created by the model's own code, outside any submodule's
    construction (e.g. one swapped into an encoder layer after the encoder was built), or a model
    was built inside another tracked model's construction (the outer recording misses the inner
    model's backends);
  * a top module is not a direct child of the model (built first, attached deeper);
  * a recorded backend is held by nothing but the recording (dropped, or replaced by another).
What a recording cannot see is a backend instance not created during this construction (made
before it, or by a backend class whose `__init__` skips `AttentionBackend.__init__`) that is
attached to an encoder module whose other backends were recorded, without replacing one of them:
the walk would find it, the recording does not (docs/runtime_shim.md).
"""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable
from typing import Any, cast

_ABOVE: Any = object()  # a frame at or above the model's own __init__: no top module yet


class Group(list[Any]):
    """The backends filed under one top module, in creation order."""

    __slots__ = ("module",)

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module


def recording_init(base: type, own: Callable[..., None] | None, state: Any) -> Callable[..., None]:
    """`base.__init__` (`own`, or the inherited one when None) that files each new backend with
    `state.recorder`, the current thread's recorder (None: nothing is being recorded).

    Runs once per attention layer, so the common case (a sibling of the previous backend: its top
    module's frame is `recorder.hop` frames up) is written out here rather than in a method: a
    Python call less per layer, measured at ~0.4 us of a ~3 us per-layer cost.
    """
    getframe, klass = sys._getframe, cast(Any, base)  # mypy cannot take a `type` variable in super()

    def __init__(backend: Any, *args: Any, **kwargs: Any) -> None:
        if own is None:
            super(klass, backend).__init__(*args, **kwargs)
        else:
            own(backend, *args, **kwargs)
        recorder = state.recorder
        if recorder is None:
            return
        try:
            group = recorder.filed.get(getframe(recorder.hop))
        except ValueError:  # the stack is not that deep
            group = None
        if type(group) is Group:  # a filed ancestor with a group: its top module is this one's
            group.append(backend)
        else:
            recorder.walk(backend, getframe(1))

    return functools.wraps(own)(__init__) if own is not None else __init__


class Recorder:
    """One tracked construction's backends, grouped by top module."""

    __slots__ = ("_model_code", "filed", "groups", "hop", "model", "trusted")

    def __init__(self, model: Any, boundary: types.FrameType, model_code: types.CodeType | None = None) -> None:
        self.model = model
        self.trusted = True
        self.groups: list[Group] = []
        # frame -> the Group of the top module it is the method frame of, or _ABOVE for
        # `boundary`, the frame that calls the model's __init__: no frame of this construction is
        # above it.
        self.filed: dict[types.FrameType, Any] = {boundary: _ABOVE}
        self.hop = 1  # how far up from the wrapper to look first: where the previous backend's walk ended
        self._model_code = model_code  # the model's __init__: its frames' `self` is the model

    def done(self) -> None:
        """The construction is over: let its frames go."""
        self.filed.clear()

    def walk(self, backend: Any, caller: types.FrameType) -> None:
        """File `backend`, created by `caller`'s code, when the wrapper's first look missed."""
        filed = self.filed.get
        frame: types.FrameType | None = caller
        group, hops = None, 0
        while frame is not None:  # a few hops: up to the nearest frame filed before
            group = filed(frame)
            if group is not None:
                break
            frame = frame.f_back  # live frames: a running generator's f_back is its caller
            hops += 1
        if group is _ABOVE:
            group = self._file(caller)
        elif group is not None:
            self.hop = 1 + hops
        if group is None:
            self.trusted = False  # not under this construction, or made by the model's own code
        else:
            group.append(backend)

    def _file(self, frame: types.FrameType | None) -> Group | None:
        """The first backend under a new top module: find it (reading `self` outermost first), file
        its frame, and tell the wrapper how far up it is."""
        path: list[types.FrameType] = []
        while frame is not None and frame not in self.filed:
            path.append(frame)
            frame = frame.f_back
        for depth in range(len(path) - 1, -1, -1):
            outer = path[depth]
            if outer.f_code is self._model_code:
                continue
            module = _submodule(outer, self.model)
            if module is not None:
                group = self._group_of(module)
                self.filed[outer] = group
                self.hop = 1 + depth  # its siblings, made from the same depth, skip the walk
                return group
        return None

    def _group_of(self, module: Any) -> Group:
        for group in self.groups:
            if group.module is module:  # a top module whose construction we met again (a later method call)
                return group
        group = Group(module)
        self.groups.append(group)
        return group


def _submodule(frame: types.FrameType, model: Any) -> Any:
    """The frame's `self` when it is a submodule (not the model), else None."""
    code = frame.f_code
    if not code.co_argcount or code.co_varnames[0] != "self":
        return None
    candidate = frame.f_locals.get("self")
    if candidate is None or candidate is model:
        return None
    attributes = getattr(candidate, "__dict__", None)
    if isinstance(attributes, dict) and isinstance(attributes.get("_modules"), dict):
        return candidate
    return None
