"""Violations, the error raised in enforce mode, and where reports go in each mode."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Mode = Literal["enforce", "warn", "record"]
MODES: tuple[Mode, ...] = ("enforce", "warn", "record")
# When the layers of a built model are checked against its selection (docs/runtime_shim.md,
# "When the layers are checked"): at its first use (load_weights, its first forward, an
# encoder's first metadata), or at the end of its __init__.
LayerCheck = Literal["first-use", "construction"]
LAYER_CHECKS: tuple[LayerCheck, ...] = ("first-use", "construction")
SCHEMA_VERSION = 1

# The static rules' names (`declint rules`); the shim reports with the same codes.
CODE_NAMES = {
    "DL101": "direct-sdpa",
    "DL102": "missing-declaration",
    "DL104": "invalid-declaration",
    "DL105": "metadata-contract",
    "DL106": "metadata-backend-mismatch",
}

logger = logging.getLogger("declint.runtime_shim")


@dataclass(frozen=True)
class Violation:
    """One broken declaration or contract, found while a model is built or first run."""

    code: str
    check: str  # which runtime check found it (docs/runtime_shim.md lists them)
    message: str
    model: str = ""
    encoder: str = ""
    location: str = ""  # "path:line" when the violation has a source line

    @property
    def name(self) -> str:
        return CODE_NAMES.get(self.code, "")

    def render(self) -> str:
        where = f" ({self.location})" if self.location else ""
        model = f"{self.model}: " if self.model and self.model not in self.message else ""
        return f"{self.code} {model}{self.message}{where}"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "code": self.code,
            "name": self.name,
            "check": self.check,
            "message": self.message,
            "model": self.model,
            "encoder": self.encoder,
            "location": self.location,
        }


class ShimError(ValueError):
    """Raised in enforce mode: one error for everything one check point found.

    A ValueError, like the configuration errors TensorRT-LLM raises for a bad setting, so
    callers that already handle those keep working.
    """

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = tuple(violations)
        lines = [v.render() for v in self.violations]
        super().__init__("declint runtime shim: " + "\n  ".join(lines))

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(v.code for v in self.violations)


class ShimTargetError(RuntimeError):
    """A patch target is missing or incompatible and the shim was installed with strict=True."""


class Reporter:
    """Routes violations by mode: raise (enforce), log (warn), append JSON lines (record).

    Every violation is also kept in memory (the last 1000), so `violations()` works in all modes.
    """

    def __init__(self, mode: Mode, report_path: str | os.PathLike[str] | None) -> None:
        self.mode: Mode = mode
        self.report_path = Path(report_path) if report_path is not None else None
        self._lock = threading.Lock()
        self._kept: deque[Violation] = deque(maxlen=1000)
        self.count = 0
        self._write_failed = False  # said once: the serving process must go on either way

    def emit(self, violations: Sequence[Violation]) -> None:
        if not violations:
            return
        with self._lock:
            self._kept.extend(violations)
            self.count += len(violations)
            if self.mode == "record":
                self._write(violations)
        if self.mode == "enforce":
            raise ShimError(violations)
        for violation in violations:
            if self.mode == "warn":
                logger.warning("%s", violation.render())
            else:
                logger.debug("recorded %s", violation.render())

    def kept(self) -> tuple[Violation, ...]:
        with self._lock:
            return tuple(self._kept)

    def _write(self, violations: Sequence[Violation]) -> None:
        if self.report_path is None:
            return
        stamp = {"time": round(time.time(), 3), "pid": os.getpid(), "thread": threading.current_thread().name}
        lines = "".join(json.dumps({**v.to_json(), **stamp}, sort_keys=True) + "\n" for v in violations)
        try:
            self.report_path.parent.mkdir(parents=True, exist_ok=True)
            # One write per batch in append mode: lines from several processes do not interleave.
            with self.report_path.open("a", encoding="utf-8") as stream:
                stream.write(lines)
        except OSError as error:  # a read-only or full disk must not stop the model being built
            if not self._write_failed:
                self._write_failed = True
                logger.warning(
                    "declint runtime shim: cannot append to the record file %s: %s; violations are kept in "
                    "memory (declint.runtime_shim.violations())",
                    self.report_path,
                    error.strerror or error,
                )
