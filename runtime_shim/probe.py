"""The one-shot SDPA probe (DL101 at runtime).

During the first forward of a configurable encoder, a `torch.overrides.TorchFunctionMode`
sees every `scaled_dot_product_attention` call and keeps the direct ones: those whose caller is
not inside torch, not inside an attention-backend package (the VANILLA backend *is* SDPA) and
not on a line carrying a `declint: ignore[DL101] reason` suppression, as the static rule honours
them. An active mode costs about 40% of a small block's forward, so the hooks remove themselves
after one forward; a forward under CUDA graph capture or torch.compile tracing is skipped.
"""

from __future__ import annotations

import fnmatch
import importlib
import linecache
import os
import re
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from declint.runtime_shim.report import Violation

_SUPPRESSION = re.compile(r"#\s*declint:\s*ignore\[([^\]]*)\]\s*\S")
_SDPA = "torch.nn.functional.scaled_dot_product_attention"


@dataclass(frozen=True)
class Call:
    path: str
    line: int
    qualname: str


def _torch() -> Any:
    # Imported lazily, and as Any: importing the shim must not import torch, and mypy would
    # otherwise analyse all of torch on every run.
    return importlib.import_module("torch")


def capturing() -> bool:
    torch = _torch()
    if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
        return True
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and compiler.is_compiling())


def _torch_dir() -> str:
    return os.path.dirname(str(_torch().__file__)) + os.sep


def _suppressed(path: str, first: int, last: int) -> bool:
    lines = [(n, linecache.getline(path, n)) for n in range(max(first - 1, 1), last + 1)]
    for number, text in lines:
        match = _SUPPRESSION.search(text)
        if match is None or "DL101" not in match.group(1):
            continue
        if number >= first or text.lstrip().startswith("#"):  # on the call, or alone above it
            return True
    return False


def _call_lines(frame: types.FrameType) -> tuple[int, int]:
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        start, end = positions[index][0], positions[index][1]
        if start is not None:
            return start, end or start
    return frame.f_lineno, frame.f_lineno


def make_mode(allowed_paths: tuple[str, ...]) -> Any:
    torch = _torch()
    sdpa = torch.nn.functional.scaled_dot_product_attention
    skip = (_torch_dir(), os.path.abspath(__file__))

    base: Any = torch.overrides.TorchFunctionMode

    class SdpaProbe(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.calls: dict[tuple[str, int], Call] = {}

        def __torch_function__(
            self, func: Any, _types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
        ) -> Any:
            if func is sdpa:
                self._record(sys._getframe(1))
            return func(*args, **(kwargs or {}))

        def _record(self, frame: types.FrameType) -> None:
            path = os.path.abspath(frame.f_code.co_filename)
            if path.startswith(skip) or any(fnmatch.fnmatch(path.replace(os.sep, "/"), p) for p in allowed_paths):
                return  # inside torch (indirect) or the backend package (legitimate)
            first, last = _call_lines(frame)
            if not _suppressed(path, first, last):
                self.calls.setdefault((path, first), Call(path, first, frame.f_code.co_qualname))

    return SdpaProbe()


def attach(
    module: Any,
    allowed_paths: tuple[str, ...],
    report: Callable[[tuple[Call, ...]], None],
) -> None:
    """Probe the first forward of `module` that is not captured, then detach."""
    state: dict[str, Any] = {"done": False}
    lock = threading.Lock()
    active = threading.local()

    def before(_module: Any, _args: Any) -> None:
        with lock:
            if state["done"] or capturing():
                return
            state["done"] = True
        mode = make_mode(allowed_paths)
        mode.__enter__()
        active.mode = mode

    def after(_module: Any, _args: Any, _output: Any) -> None:
        mode = getattr(active, "mode", None)
        if mode is None:
            return
        active.mode = None
        mode.__exit__(None, None, None)
        for handle in state.pop("handles", ()):
            handle.remove()
        report(tuple(mode.calls.values()))

    state["handles"] = (
        module.register_forward_pre_hook(before),
        module.register_forward_hook(after, always_call=True),
    )


def message(call: Call, model: str, encoder: str, backends: tuple[str, ...]) -> Violation:
    text = (
        f"`{call.qualname}` calls {_SDPA} directly, but {model} declares its {encoder} encoder configurable "
        f"({', '.join(backends)}): an encoder_attention_backend override is silently bypassed; route the call "
        "through the attention backend or declare the encoder FixedEncoderAttention(reason)"
    )
    return Violation("DL101", "sdpa-probe", text, model, encoder, f"{call.path}:{call.line}")
