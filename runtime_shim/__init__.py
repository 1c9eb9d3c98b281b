"""declint's runtime shim (installed as `declint.runtime_shim`).

Enforces the same encoder attention-backend declarations as the static rules, in the process
that builds the models, and reports with the same codes:

    from declint import runtime_shim
    runtime_shim.install(mode="enforce")      # or "warn", "record" (report_path=...jsonl)
    ...build models...
    runtime_shim.status()                     # what is patched, what is missing
    runtime_shim.uninstall()

Also activated without code changes: `DECLINT_RUNTIME_SHIM=enforce` in the environment (a
startup hook installed with the package reads it), or `pytest --declint-shim=enforce`.
A built model's attention layers are checked at its first use by default (`layer_check`).
Importing this package has no side effects and imports neither torch, libcst nor click.
docs/runtime_shim.md describes every check.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from declint.runtime_shim._shim import Shim, ShimTargetWarning, TargetStatus
from declint.runtime_shim.conventions import Conventions
from declint.runtime_shim.report import LAYER_CHECKS, MODES, LayerCheck, Mode, ShimError, ShimTargetError, Violation

__all__ = [
    "Conventions",
    "ShimError",
    "ShimStatus",
    "ShimTargetError",
    "ShimTargetWarning",
    "TargetStatus",
    "Violation",
    "install",
    "status",
    "uninstall",
    "violations",
]

_LOCK = threading.RLock()
_ACTIVE: Shim | None = None


@dataclass(frozen=True)
class ShimStatus:
    installed: bool
    mode: str | None = None
    strict: bool = False
    probe_sdpa: bool = False
    report_path: str | None = None
    activated_by: str | None = None
    layer_check: str | None = None
    targets: tuple[TargetStatus, ...] = ()
    violations: int = 0

    def __str__(self) -> str:
        if not self.installed:
            return "declint runtime shim: not installed"
        head = (
            f"declint runtime shim: {self.mode} (strict={self.strict}, probe_sdpa={self.probe_sdpa}, "
            f"layer_check={self.layer_check}, activated by {self.activated_by}), "
            f"{self.violations} violation(s) so far"
        )
        rows = [f"  {t.key:<24} {t.state:<12} {t.where}{' - ' + t.detail if t.detail else ''}" for t in self.targets]
        return "\n".join([head, *rows])


def install(
    mode: Mode = "enforce",
    report_path: str | os.PathLike[str] | None = None,
    *,
    strict: bool = False,
    probe_sdpa: bool = False,
    conventions: Conventions | None = None,
    activated_by: str = "api",
    layer_check: LayerCheck = "first-use",
) -> ShimStatus:
    """Patch TensorRT-LLM's entry points now (imported modules) and on import (the others).

    layer_check: when a built model's attention layers are checked against its selection:
    "first-use" (the default: before its weights are loaded, its first forward, or an encoder's
    first metadata, whichever comes first; the construction itself runs no per-layer code) or
    "construction" (at the end of its __init__; each backend is recorded as it is created).

    Idempotent: a second call leaves one set of wrappers and only updates mode, report path,
    probe_sdpa and layer_check.
    """
    global _ACTIVE
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if layer_check not in LAYER_CHECKS:
        raise ValueError(f"layer_check must be one of {', '.join(LAYER_CHECKS)}, got {layer_check!r}")
    with _LOCK:
        if _ACTIVE is not None:
            _ACTIVE.reporter.mode = mode
            _ACTIVE.reporter.report_path = _path(report_path)
            _ACTIVE.probe_sdpa = probe_sdpa
            _ACTIVE.layer_check = layer_check
            if layer_check == "construction":
                _ACTIVE.record_backends()
            return status()
        shim = Shim(
            mode,
            report_path,
            strict=strict,
            probe_sdpa=probe_sdpa,
            conventions=conventions or Conventions(),
            activated_by=activated_by,
            layer_check=layer_check,
        )
        try:
            shim.start()
        except BaseException:
            shim.stop()
            raise
        _ACTIVE = shim
        return status()


def uninstall() -> None:
    """Restore every original; harmless when not installed."""
    global _ACTIVE
    with _LOCK:
        if _ACTIVE is not None:
            _ACTIVE.stop()
            _ACTIVE = None


def status() -> ShimStatus:
    with _LOCK:
        shim = _ACTIVE
        if shim is None:
            return ShimStatus(installed=False)
        path = shim.reporter.report_path
        return ShimStatus(
            installed=True,
            mode=shim.reporter.mode,
            strict=shim.strict,
            probe_sdpa=shim.probe_sdpa,
            report_path=str(path) if path is not None else None,
            activated_by=shim.activated_by,
            layer_check=shim.layer_check,
            targets=tuple(shim.statuses.values()),
            violations=shim.reporter.count,
        )


def violations() -> tuple[Violation, ...]:
    """Violations seen since install (the last 1000), in every mode."""
    with _LOCK:
        return _ACTIVE.reporter.kept() if _ACTIVE is not None else ()


def _path(value: str | os.PathLike[str] | None) -> Path | None:
    return Path(value) if value is not None else None
