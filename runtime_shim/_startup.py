"""Activation from the environment, run by the `declint_runtime_shim.pth` startup hook.

The .pth line imports this module only when DECLINT_RUNTIME_SHIM is set, so other processes pay
one dictionary lookup. A bad value is reported on stderr and never stops the interpreter.

    DECLINT_RUNTIME_SHIM=enforce|warn|record   (1/true mean enforce)
    DECLINT_RUNTIME_SHIM_REPORT=path.jsonl      (record mode: where JSON lines go)
    DECLINT_RUNTIME_SHIM_STRICT=1               (a missing target is an error)
    DECLINT_RUNTIME_SHIM_PROBE_SDPA=1           (one-shot SDPA probe on configurable encoders)
    DECLINT_RUNTIME_SHIM_LAYER_CHECK=first-use|construction   (when built layers are checked)
"""

from __future__ import annotations

import os
import sys

from declint.runtime_shim.report import LAYER_CHECKS, MODES, LayerCheck, Mode

_TRUE = ("1", "true", "yes", "on")


def mode_from(value: str) -> Mode | None:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return "enforce"
    for mode in MODES:
        if lowered == mode:
            return mode
    return None


def layer_check_from(value: str) -> LayerCheck | None:
    """The layer check a variable names; unset or empty: the default."""
    lowered = value.strip().lower() or LAYER_CHECKS[0]
    return next((check for check in LAYER_CHECKS if check == lowered), None)


def install_from_env(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    value = environ.get("DECLINT_RUNTIME_SHIM", "")
    if not value or value.strip().lower() in ("0", "false", "no", "off"):
        return False
    mode = mode_from(value)
    if mode is None:
        print(
            f"declint runtime shim: DECLINT_RUNTIME_SHIM={value!r} is not one of {', '.join(MODES)}; not installed",
            file=sys.stderr,
        )
        return False
    layer_check = layer_check_from(environ.get("DECLINT_RUNTIME_SHIM_LAYER_CHECK", ""))
    if layer_check is None:
        print(
            "declint runtime shim: DECLINT_RUNTIME_SHIM_LAYER_CHECK="
            f"{environ['DECLINT_RUNTIME_SHIM_LAYER_CHECK']!r} is not one of {', '.join(LAYER_CHECKS)}; not installed",
            file=sys.stderr,
        )
        return False
    from declint.runtime_shim import install

    install(
        mode,
        environ.get("DECLINT_RUNTIME_SHIM_REPORT") or None,
        strict=environ.get("DECLINT_RUNTIME_SHIM_STRICT", "").lower() in _TRUE,
        probe_sdpa=environ.get("DECLINT_RUNTIME_SHIM_PROBE_SDPA", "").lower() in _TRUE,
        activated_by="environment",
        layer_check=layer_check,
    )
    return True


try:
    install_from_env()
except Exception as error:  # a startup hook must never stop the interpreter
    print(f"declint runtime shim: not installed: {type(error).__name__}: {error}", file=sys.stderr)
