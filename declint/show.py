"""`declint check --show-settings / --show-files`: what a run would use, without running it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from declint.config import OPTIONS, Config
from declint.discovery import discover, printable
from declint.types import escape_controls


def settings_text(config: Config) -> str:
    """The effective configuration as TOML a declint.toml could hold, defaults marked.

    Written by hand: the standard library reads TOML but does not write it, and these values are
    only strings, booleans, numbers, lists of strings and tables of those, for which a JSON
    scalar or array is also valid TOML.
    """
    source = str(config.source) if config.source is not None else "none (defaults)"
    lines = [f"# configuration: {source}", f"# project root: {config.root}"]
    for spec in OPTIONS:
        value = config.get(spec.key)
        note = "  # default" if spec.key not in config.values else ""
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
    # A JSON string without ASCII escaping uses only escapes TOML's basic strings share
    # (\", \\, \n, \t, \uXXXX for other control characters); numbers print alike.
    return json.dumps(value, ensure_ascii=False)


def files_text(paths: Sequence[Path], config: Config, virtual: Sequence[str] = ()) -> tuple[str, str]:
    """(the files a check of `paths` would check, one root-relative path a line; the paths it
    would skip, with why), as the run's own walk finds them (`virtual`: see `discover`).
    Control characters in names are escaped (`\\n`), so that a line is always one path."""
    found = discover(paths, config, virtual)
    checked = "".join(f"{escape_controls(item.rel)}\n" for item in found.files)
    skipped = "".join(f"{escape_controls(printable(item.rel))}: {item.reason}\n" for item in found.skipped)
    return checked, skipped
