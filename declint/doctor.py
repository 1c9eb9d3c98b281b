"""`declint doctor`: installed versions against the pins tensorrt_llm's metadata declares, and a
server log read for the `kv_layout` class of failure (a contract or version-skew bug that
reads like a coding bug).

Plain functions returning text and an exit status; the CLI only prints them.
"""

from __future__ import annotations

import importlib.metadata as metadata
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

TRTLLM = ("tensorrt_llm", "tensorrt-llm")
WATCHED = {"torch": ("torch",), "flashinfer-python": ("flashinfer-python", "flashinfer")}
_DEFAULTS = re.compile(r"Applied model defaults for (?P<model>[^:]+):\s*(?P<mapping>\{.*\})")
_BACKEND_IN = re.compile(r"['\"]attn_backend['\"]\s*:\s*['\"](?P<backend>\w+)['\"]")
_ATTRIBUTE_ERROR = re.compile(r"AttributeError: '(?P<cls>\w+Metadata)' object has no attribute '(?P<attr>\w+)'")
_FRAME = re.compile(r'File "(?P<path>[^"]*tensorrt_llm/[^"]+)", line (?P<line>\d+), in (?P<func>\w+)')
_METADATA_BACKENDS = {"Trtllm": "TRTLLM", "FlashInfer": "FLASHINFER", "Vanilla": "VANILLA"}


@dataclass(frozen=True)
class Pin:
    package: str
    installed: str | None
    requirement: str  # the specifier tensorrt_llm declares ("" when it declares none)
    ok: bool


@dataclass
class Diagnosis:
    lines: list[str] = field(default_factory=list)
    skew: bool = False
    failure: bool = False

    @property
    def exit_code(self) -> int:
        return 1 if self.skew or self.failure else 0


def run(paths: Sequence[Path] = (), log: Path | None = None) -> Diagnosis:
    search = [str(p) for p in paths] or sys.path
    diagnosis = Diagnosis()
    pins = check_versions(search, diagnosis)
    if log is not None:
        with log.open(encoding="utf-8", errors="replace") as lines:  # line by line: server logs grow to GBs
            read_log(lines, pins, diagnosis)
    diagnosis.lines.append("result: " + ("problems found" if diagnosis.exit_code else "no skew, no known failure"))
    return diagnosis


def _version(names: Iterable[str], search: list[str]) -> str | None:
    for name in names:
        for dist in metadata.distributions(path=search):
            if _normalise(dist.metadata["Name"] or "") == _normalise(name):
                return dist.version
    return None


def _requirements(search: list[str]) -> list[str]:
    for name in TRTLLM:
        for dist in metadata.distributions(path=search):
            if _normalise(dist.metadata["Name"] or "") == _normalise(name):
                return list(dist.requires or [])
    return []


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_versions(search: list[str], diagnosis: Diagnosis) -> list[Pin]:
    trtllm = _version(TRTLLM, search)
    diagnosis.lines.append(f"tensorrt_llm       {trtllm or 'not installed'}")
    requirements = _requirements(search)
    pins = []
    for package, names in WATCHED.items():
        installed = _version(names, search)
        wanted = next((r for r in requirements if _requirement_name(r) in map(_normalise, names)), None)
        spec = _specifier(wanted) if wanted else ""
        ok = True if wanted is None else installed is not None and satisfies(installed, spec)
        pins.append(Pin(package, installed, spec, ok))
        pinned = f"  (tensorrt_llm requires {spec or 'any version'})" if wanted else ""
        verdict = "" if wanted is None else ("  ok" if ok else "  SKEW")
        diagnosis.lines.append(f"{package:<18} {installed or 'not installed'}{pinned}{verdict}")
    diagnosis.skew = any(not pin.ok for pin in pins)
    return pins


def _requirement_name(requirement: str) -> str:
    return _normalise(re.split(r"[\s\[<>=!~;(]", requirement.strip(), maxsplit=1)[0])


def _specifier(requirement: str) -> str:
    body = requirement.split(";", 1)[0]
    body = re.sub(r"\[.*?\]", "", body)
    return body[len(re.split(r"[\s<>=!~(]", body.strip(), maxsplit=1)[0]) :].strip(" ()")


def satisfies(version: str, specifier: str) -> bool:
    """PEP 440 comparison on release numbers (local labels and pre-release tags ignored)."""
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        match = re.match(r"(===|==|!=|<=|>=|~=|<|>)\s*(.+)", clause)
        if match is None:
            continue
        operator, wanted = match.groups()
        if not _compare(_release(version), operator, wanted):
            return False
    return True


def _release(version: str) -> tuple[int, ...]:
    numbers = re.match(r"\d+(?:\.\d+)*", version.split("+", 1)[0].lstrip("vV"))
    return tuple(int(part) for part in numbers.group(0).split(".")) if numbers else ()


def _compare(have: tuple[int, ...], operator: str, wanted: str) -> bool:
    if wanted.endswith(".*"):
        prefix = _release(wanted[:-2])
        same = have[: len(prefix)] == prefix
        return same if operator == "==" else not same
    want = _release(wanted)
    width = max(len(have), len(want))
    a, b = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
    if operator in ("==", "==="):
        return a == b
    if operator == "~=":
        return a >= b and a[: len(want) - 1] == b[: len(want) - 1]
    return {"!=": a != b, "<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b}[operator]


def _scan_log(lines: Iterable[str]) -> tuple[list[tuple[str, str]], re.Match[str] | None, tuple[str, ...] | None]:
    """(model, backend) of each model-defaults line, the first metadata AttributeError, and the
    last tensorrt_llm frame before it (the one the traceback ends in)."""
    applied: list[tuple[str, str]] = []
    error: re.Match[str] | None = None
    frame: tuple[str, ...] | None = None
    for line in lines:
        if "Applied model defaults" in line:  # substring tests first: most lines match nothing
            for match in _DEFAULTS.finditer(line):
                found = _BACKEND_IN.search(match.group("mapping"))
                if found:
                    applied.append((match.group("model").strip(), found.group("backend")))
        if error is not None:
            continue
        if "AttributeError" in line:
            error = _ATTRIBUTE_ERROR.search(line)
        if "tensorrt_llm/" in line:
            frames = _FRAME.findall(line[: error.start()] if error else line)
            frame = frames[-1] if frames else frame
    return applied, error, frame


def read_log(lines: Iterable[str], pins: list[Pin], diagnosis: Diagnosis) -> None:
    applied, error, frame = _scan_log(lines)
    if not applied and error is None:
        diagnosis.lines.append("log: no model-defaults line, no metadata AttributeError")
        return
    for model, backend in applied:
        diagnosis.lines.append(f"log: model defaults picked attn_backend {backend} for {model} (nobody asked for it)")
    if error is None:
        return
    diagnosis.failure = True
    metadata_cls, attribute = error.group("cls"), error.group("attr")
    component = f"{frame[0].split('tensorrt_llm/', 1)[1]}:{frame[1]} in {frame[2]}" if frame else "?"
    owner = next((b for prefix, b in _METADATA_BACKENDS.items() if metadata_cls.startswith(prefix)), None)
    failing = next((b for prefix, b in _METADATA_BACKENDS.items() if prefix.lower() in component.lower()), None)
    skewed = [p for p in pins if not p.ok]
    rerun = owner or "TRTLLM"
    diagnosis.lines += [
        f"log: AttributeError: '{metadata_cls}' object has no attribute '{attribute}'",
        "checklist:",
        f"  1. the traceback belongs to {component}"
        + (f" (the {failing} backend)" if failing else "")
        + f", but the metadata object is {metadata_cls}"
        + (f" (the {owner} backend's)" if owner else "")
        + ": a metadata/backend contract or version-skew bug, not a bug in that line (DL105/DL106)",
        "  2. image modified: "
        + (
            "yes: " + ", ".join(f"{p.package} {p.installed or 'missing'} vs {p.requirement}" for p in skewed)
            if skewed
            else "no skew between the installed versions and tensorrt_llm's pins"
            if any(p.requirement for p in pins)
            else "unknown here: run `declint doctor` inside the serving image"
        ),
        f"  3. re-run with attn_backend: {rerun} (and multimodal_config.encoder_attention_backend: "
        f'{{"vision": "{rerun}"}}) so layers and metadata agree; then fix the pairing, and run with '
        "DECLINT_RUNTIME_SHIM=enforce to catch it at load time",
    ]
