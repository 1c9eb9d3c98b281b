"""`declint check --show-settings / --show-files`: what a run would use, without running it."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from declint.config import OPTIONS, Config
from declint.discovery import discover, printable
from declint.types import escape_controls


def settings_text(config: Config, command_line: Mapping[str, Any] | None = None) -> str:
    """The effective configuration as TOML a declint.toml could hold, defaults marked, and the
    values `command_line` sets (`--select`, `--jobs`) in place of the configuration's, marked too.

    Written by hand: the standard library reads TOML but does not write it. These values are only
    strings, booleans, numbers, lists of strings and tables of those; each is written in TOML's
    own spelling (`inf`, not JSON's `Infinity`; `\\u007f`, which a TOML string cannot hold raw),
    so that the output always parses back to the same settings.
    """
    source = str(config.source) if config.source is not None else "none (defaults)"
    lines = [f"# configuration: {_comment(source)}", f"# project root: {_comment(str(config.root))}"]
    given = command_line or {}
    for spec in OPTIONS:
        value = given[spec.key] if spec.key in given else config.get(spec.key)
        note = "  # command line" if spec.key in given else "  # default" if spec.key not in config.values else ""
        lines.append(f"{spec.key} = {_toml_value(value)}{note}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        entries = ", ".join(f"{_toml_value(str(key))} = {_toml_value(item)}" for key, item in value.items())
        return "{ " + entries + " }" if entries else "{}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, float):
        return _toml_float(value)
    if isinstance(value, str):
        return '"' + "".join(_toml_char(char) for char in value) + '"'
    return str(int(value))


def _toml_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)  # "1e+16", "0.5", "3.0": all TOML floats


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_char(char: str) -> str:
    """One character of a TOML basic string: the short escapes, `\\uXXXX` for what TOML forbids
    raw (control characters, DEL) and what would not show (other unprintable characters)."""
    if char in _TOML_ESCAPES:
        return _TOML_ESCAPES[char]
    if char.isprintable():
        return char
    code = ord(char)
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def _comment(text: str) -> str:
    """A path for a `#` comment line: a comment cannot hold control characters either."""
    return escape_controls(printable(text))


def files_text(paths: Sequence[Path], config: Config, virtual: Sequence[str] = ()) -> tuple[str, str]:
    """(the files a check of `paths` would check, one root-relative path a line; the paths it
    would skip, with why), as the run's own walk finds them (`virtual`: see `discover`).
    Control characters in names are escaped (`\\n`), so that a line is always one path."""
    found = discover(paths, config, virtual)
    checked = "".join(f"{escape_controls(item.rel)}\n" for item in found.files)
    skipped = "".join(f"{escape_controls(printable(item.rel))}: {item.reason}\n" for item in found.skipped)
    return checked, skipped
