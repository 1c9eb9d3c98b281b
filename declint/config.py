"""Configuration: `[tool.declint]` in the nearest pyproject.toml, or `--config FILE`.

Every key is declared once in OPTIONS with its type and default; validation, the README's
reference table and `declint rule CODE` all read that one table, so a key cannot exist without
being validated and documented.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from declint.errors import ConfigError

ATTENTION_BACKEND_PACKAGES = (
    "**/_torch/attention_backend/**",
    "**/_torch/attention/backends/**",
)


@dataclass(frozen=True)
class OptionSpec:
    key: str
    kind: str  # "str", "list[str]", "dict[str,str]", "dict[str,list[str]]", "bool", "int", "number"
    default: Any
    help: str
    # (least, most) an "int" or "number" may be; 0 is also accepted when `zero` names what it means
    bounds: tuple[float, float] | None = None
    zero: str = ""


# Limits of the resource options. The time limit waits in poll(), whose milliseconds are a C int
# (about 24.8 days): a day is far past any file's parse. A worker reserves its thread's whole stack
# at start; a reservation over the machine's memory is refused (Linux's default overcommit rule)
# and the worker dies before its first file, so at most 4 GiB (eight times the default), and at
# least 8 MiB (the usual main-thread stack). The memory limit comes on top of what the worker maps
# at start (`declint.workers`); the parse thread's malloc arena alone reserves 64 MiB, and under
# 128 MiB the demo's files failed to parse, DL000s that blamed the files: at least 256.
MAX_FILE_TIMEOUT = 86_400
MIN_STACK_MIB, MAX_STACK_MIB = 8, 4096
MIN_MEMORY_MIB, MAX_MEMORY_MIB = 256, 1_048_576

OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "roots",
        "list[str]",
        ["."],
        "Directories indexed in phase 1, relative to the config file (one that does not exist is warned about).",
    ),
    OptionSpec(
        "include",
        "list[str]",
        ["*.py"],
        "Glob patterns of files to check; phase 1 still indexes every Python file under the roots.",
    ),
    OptionSpec("exclude", "list[str]", [], "Gitignore-style patterns of paths never checked or indexed."),
    OptionSpec(
        "respect-gitignore",
        "bool",
        True,
        "Skip paths matched by .gitignore files, as git does: those of the root and below it, and those above it "
        "up to the top level of the git work tree holding it (none outside one).",
    ),
    OptionSpec("select", "list[str]", ["DL"], "Rule codes or prefixes to enable."),
    OptionSpec("ignore", "list[str]", [], "Rule codes or prefixes to disable."),
    OptionSpec("per-path-ignores", "dict[str,list[str]]", {}, "Glob -> codes ignored in matching files."),
    OptionSpec(
        "shared-literal",
        "str",
        "tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend",
        "Dotted path of the one typing.Literal of encoder attention-backend names.",
    ),
    OptionSpec(
        "extra-backend-names",
        "list[str]",
        ["FLASHINFER_STAR_ATTENTION"],
        "Backend names outside the Literal that DL103 treats as backend names (and DL108, telling another "
        "namespace's Literal).",
    ),
    OptionSpec(
        "fallback-backend-names",
        "list[str]",
        ["VANILLA", "TRTLLM", "FLASHINFER"],
        "The backend names DL103 looks for while the shared Literal is not found (DL100 reports that).",
    ),
    OptionSpec(
        "declaration-attribute",
        "str",
        "encoder_attention_backends",
        "Class attribute holding a model's per-encoder declaration.",
    ),
    OptionSpec("fixed-marker", "str", "FixedEncoderAttention", "Call that declares an encoder fixed."),
    OptionSpec(
        "model-decorators",
        "list[str]",
        ["register_input_processor"],
        "Decorators whose presence makes a class a multimodal model.",
    ),
    OptionSpec(
        "language-model-decorators",
        "list[str]",
        ["register_auto_model"],
        "Decorators that register a model class: one that is no multimodal model, and whose name hints at "
        "no encoder (`encoder-name-hints`: `SiglipVisionModel` is registered too), is a language model, whose "
        "code (reached from it, not through a multimodal model) is no encoder's (DL101), and which a "
        "multimodal model referencing it does not own.",
    ),
    OptionSpec(
        "model-mixins",
        "list[str]",
        ["MultimodalModelMixin"],
        "Base classes whose subclasses are multimodal models (their own default does not count).",
    ),
    OptionSpec(
        "encoders",
        "list[str]",
        ["vision", "audio"],
        "Encoder names a declaration may use (and the only ones `modality-encoders` and `encoder-name-hints` "
        "may name; their defaults keep to these).",
    ),
    OptionSpec(
        "modality-encoders",
        "dict[str,str]",
        {"image": "vision", "video": "vision", "audio": "audio"},
        "Registered modality (placeholder_map key) -> encoder it requires.",
    ),
    OptionSpec(
        "encoder-name-hints",
        "dict[str,list[str]]",
        {
            "audio": ["audio", "whisper", "speech", "conformer", "sound", "parakeet"],
            "vision": ["vision", "visual", "image", "video", "siglip"],
        },
        "Substrings of class names that tell which encoder a class belongs to, in a model with several "
        "(the nearest class on the path with a hint decides; a hint counts where it starts a word of the name "
        "or in a run of capitals, and of two, the one starting last; default: vision).",
    ),
    OptionSpec(
        "metadata-base",
        "str",
        "AttentionMetadata",
        "Base class of attention metadata classes (DL105).",
    ),
    OptionSpec(
        "backend-base",
        "str",
        "AttentionBackend",
        "Generic base class of attention backends; its type argument names the metadata class (DL105).",
    ),
    OptionSpec(
        "docs-table",
        "str",
        "",
        "Markdown file whose table of encoder backends must match the declarations (DL107; empty: off).",
    ),
    OptionSpec(
        "default-backend",
        "str",
        "TRTLLM",
        "Backend an encoder uses when neither the user nor get_model_defaults picks one (declint table).",
    ),
    OptionSpec(
        "serving-schemas",
        "list[str]",
        ["**/trtllm-serve-config.schema.json", "**/trtllm-serve-disagg-config.schema.json"],
        "Globs (root-relative) of serving JSON schemas whose backend values must match the Literal (DL108).",
    ),
    OptionSpec(
        "sdpa-names",
        "list[str]",
        ["torch.nn.functional.scaled_dot_product_attention"],
        "Qualified names of scaled-dot-product attention functions DL101 bans.",
    ),
    OptionSpec(
        "sdpa-allowed-paths",
        "list[str]",
        list(ATTENTION_BACKEND_PACKAGES),
        "Globs (root-relative) where direct SDPA is legitimate: the attention-backend packages.",
    ),
    OptionSpec(
        "backend-context-names",
        "list[str]",
        ["*attn_backend*", "*attention_backend*", "backend_name"],
        "fnmatch patterns of names whose values are attention-backend names (DL103).",
    ),
    OptionSpec(
        "backend-functions",
        "list[str]",
        ["get_attention_backend", "create_attention"],
        "Functions whose first argument is a backend name (DL103).",
    ),
    OptionSpec(
        "check-syntax",
        "bool",
        False,
        "Parse every checked file, so a syntax error anywhere is DL000 (false: a file that no rule or "
        "index needle can match, outside syntax-paths, is read and searched, never parsed).",
    ),
    OptionSpec(
        "syntax-paths",
        "list[str]",
        ["**/_torch/models/**", *ATTENTION_BACKEND_PACKAGES],
        "Globs (root-relative) whose files are always parsed, so a syntax error there is DL000: the "
        "modeling and attention-backend packages.",
    ),
    OptionSpec("jobs", "int", 0, "Worker processes for parsing and rules (0: one per CPU core; --jobs overrides)."),
    OptionSpec(
        "cache-dir",
        "str",
        ".declint_cache",
        "Cache directory of declint's own below the project root (the root, an indexed root, a directory above "
        "one or one holding other files is a configuration error; one outside the root turns the cache off, "
        "with a warning). --no-cache or DECLINT_NO_CACHE=1 disable it.",
    ),
    OptionSpec(
        "file-timeout",
        "number",
        60,
        "Seconds one file may take in a worker before it is a DL000 and the worker is replaced (0: no limit; "
        f"at most {MAX_FILE_TIMEOUT}).",
        bounds=(0, MAX_FILE_TIMEOUT),
    ),
    OptionSpec(
        "max-file-size",
        "int",
        4_000_000,
        "Files larger than this many bytes are a DL000 instead of being parsed, and a docs table or serving "
        "schema that large is not read (DL107, DL108) (0: no limit).",
    ),
    OptionSpec(
        "worker-stack-mib",
        "int",
        512,
        "Stack size (MiB) of the thread that parses in each worker, so deep nesting fails cleanly "
        f"({MIN_STACK_MIB} to {MAX_STACK_MIB}).",
        bounds=(MIN_STACK_MIB, MAX_STACK_MIB),
    ),
    OptionSpec(
        "worker-memory-mib",
        "int",
        8192,
        "Address space (MiB) each worker may add to what it starts with: a file that makes the parser balloon "
        f"is a DL000 (0: no limit; else {MIN_MEMORY_MIB} to {MAX_MEMORY_MIB}).",
        bounds=(MIN_MEMORY_MIB, MAX_MEMORY_MIB),
        zero="no limit",
    ),
)

OPTION_KEYS = tuple(spec.key for spec in OPTIONS)
_SPECS = {spec.key: spec for spec in OPTIONS}
# Defaults that name encoders, kept to those `encoders` lists when it is set and they are not.
_BY_ENCODER: dict[str, Callable[[Any, frozenset[str]], Any]] = {
    "modality-encoders": lambda default, known: {m: e for m, e in default.items() if e in known},
    "encoder-name-hints": lambda default, known: {e: h for e, h in default.items() if e in known},
}


@dataclass(frozen=True)
class Config:
    """The effective configuration. `root` is the project root (the config file's directory)."""

    root: Path
    source: Path | None
    values: Mapping[str, Any] = field(default_factory=dict)
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)  # key -> its line

    def error(self, key: str, message: str) -> ConfigError:
        """A ConfigError about `key`, at its line of the configuration file when it has one."""
        where = str(self.source) if self.source is not None else None
        return ConfigError(f'"{key}" {message}', path=where, line=self.lines.get(key) if where else None)

    def get(self, key: str) -> Any:
        if key not in _SPECS:
            raise KeyError(key)  # a programming error: every key read must be declared
        if key in _BY_ENCODER and key not in self.values and "encoders" in self.values:
            # The defaults name audio: a project whose `encoders` leaves it out registers no modality
            # that would require it (red-team 50: DL102 asked for an entry DL104 then refused).
            return _BY_ENCODER[key](_SPECS[key].default, frozenset(self.values["encoders"]))
        return self.values.get(key, _SPECS[key].default)

    def str_list(self, key: str) -> tuple[str, ...]:
        return tuple(self.get(key))

    @property
    def literal_module(self) -> str:
        return str(self.get("shared-literal")).rpartition(".")[0]

    @property
    def literal_name(self) -> str:
        return str(self.get("shared-literal")).rpartition(".")[2]

    def fingerprint(self) -> str:
        """Stable text of the effective values (for caches and reproducibility)."""
        items = sorted((key, repr(self.get(key))) for key in OPTION_KEYS)
        return repr(items)


# Looked for in each directory, first found wins (as ruff does with .ruff.toml, ruff.toml and
# pyproject.toml): a file named for declint is its configuration even when empty.
CONFIG_NAMES = (".declint.toml", "declint.toml")


def find_config_file(start: Path) -> Path | None:
    """The nearest configuration at or above `start`: a `.declint.toml` or `declint.toml`, or a
    pyproject.toml with a [tool.declint] table."""
    directory = start if start.is_dir() else start.parent
    for candidate_dir in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            if (candidate_dir / name).is_file():
                return candidate_dir / name
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file() and _has_declint_table(candidate):
            return candidate
    return None


# A table header naming [tool.declint] (or a table below it), as written in a file that does not
# parse (perhaps in that very header: `[tool.declint` unclosed); `[tool.declint-plugin]` is not.
_TABLE_HEADER = re.compile(rb"""^\s*\[+\s*tool\s*\.\s*["']?declint["']?\s*(?:[\].]|$)""", re.MULTILINE)


def _has_declint_table(path: Path) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        # A broken pyproject.toml that looks like ours (bad TOML, or not UTF-8) must still be
        # found, then reported with its error, not silently skipped for a parent's.
        return any(_TABLE_HEADER.search(text) is not None for text in _readings(data))
    tool = document.get("tool")
    return isinstance(tool, dict) and "declint" in tool


def _readings(data: bytes) -> Iterator[bytes]:
    """The bytes as they are, without a leading byte-order mark, and as UTF-16 or UTF-32 would read
    them (an editor's "Unicode" save: red-team 54, such a pyproject.toml was taken for none)."""
    yield data
    yield data.lstrip(b"\xef\xbb\xbf\xff\xfe")
    if b"\x00" in data[:64]:
        for encoding in ("utf-16", "utf-32"):
            try:
                yield data.decode(encoding).encode("utf-8", "replace")
            except UnicodeDecodeError:
                continue


def project_root(start: Path) -> Path:
    """Without a configuration file: the nearest directory holding a pyproject.toml or .git.

    Falls back to `start` itself (its directory for a file), never to the working directory: the
    index covers the root, and an unrelated working directory can be huge.
    """
    directory = start if start.is_dir() else start.parent
    for candidate in (directory, *directory.parents):
        if (candidate / "pyproject.toml").is_file() or (candidate / ".git").exists():
            return candidate
    return directory


def load_config(path: Path | None, *, default_root: Path, known_codes: frozenset[str]) -> Config:
    """Read and validate `path`; no file means defaults rooted at `default_root`."""
    if path is None:
        return Config(root=default_root.resolve(), source=None)
    path = path.resolve()
    text = _read(path)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"invalid TOML: {error}", path=str(path), line=_toml_error_line(error)) from None
    table = document.get("tool", {}).get("declint") if path.name == "pyproject.toml" else document
    if path.name != "pyproject.toml" and isinstance(document.get("tool"), dict) and "declint" in document["tool"]:
        # As ruff does with ruff.toml: only pyproject.toml nests the options under [tool.*].
        raise ConfigError(
            "a [tool.declint] table is read only from pyproject.toml; in another file, "
            "write declint's keys at the top level, without the table header",
            path=str(path),
            line=_table_line(text),
        )
    if table is None:
        raise ConfigError("no [tool.declint] table", path=str(path))
    if not isinstance(table, dict):
        raise ConfigError("[tool.declint] must be a table", path=str(path))
    values = {key: _validate(key, value, path, text, known_codes) for key, value in table.items()}
    lines = {key: line for key in values if (line := key_line(text, key)) is not None}
    config = Config(root=path.parent, source=path, values=values, lines=lines)
    check_cache_dir(config)
    check_encoder_names(config)
    return config


def check_encoder_names(config: Config) -> None:
    """Encoders named by `modality-encoders` and `encoder-name-hints` must be ones `encoders`
    lists: a misspelt one required an encoder no declaration may name (red-team 47: accepted)."""
    known = config.str_list("encoders")
    named = [("modality-encoders", encoder) for encoder in dict(config.values.get("modality-encoders", {})).values()]
    named += [("encoder-name-hints", encoder) for encoder in dict(config.values.get("encoder-name-hints", {}))]
    for key, encoder in named:  # as written: the defaults name audio, which `encoders` may leave out
        if encoder not in known:
            listed = ", ".join(known) or "none"
            raise config.error(
                key, f'names encoder "{encoder}", which "encoders" does not list ({listed}){suggest(encoder, known)}'
            )


def check_cache_dir(config: Config) -> None:
    """`cache-dir` must name a directory of declint's own: its marks (a .gitignore of "*", a
    CACHEDIR.TAG, see `declint.cache_marks`) in the project root, in an indexed root or in a
    directory above one would hide the project from the walk, from git and from backups."""
    value = str(config.get("cache-dir"))
    directory = Path(os.path.normpath(config.root / value))
    if directory == config.root or directory in config.root.parents:
        where = "the project root" if directory == config.root else "a directory above the project root"
        raise config.error("cache-dir", f'names {where} ("{value}"); {_CACHE_DIR_NEEDS}')
    for root in config.str_list("roots"):
        indexed = Path(os.path.normpath(config.root / root))
        if directory == indexed or directory in indexed.parents:
            message = f'names the indexed root "{root}" or a directory above it; {_CACHE_DIR_NEEDS}'
            raise config.error("cache-dir", message)


_CACHE_DIR_NEEDS = (
    "it must name a directory of declint's own (default: .declint_cache), because declint marks its cache "
    'directory with a .gitignore of "*" and a CACHEDIR.TAG, which would hide every file below it'
)


def _read(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read config: {error.strerror or error}", path=str(path)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(
            f"not valid UTF-8 (TOML files must be): invalid byte 0x{data[error.start]:02x} at offset {error.start}",
            path=str(path),
            line=data.count(b"\n", 0, error.start) + 1,
        ) from None


def _table_line(text: str) -> int | None:
    data = text.encode("utf-8")
    match = _TABLE_HEADER.search(data)
    return data.count(b"\n", 0, match.start()) + 1 if match else None


def _toml_error_line(error: tomllib.TOMLDecodeError) -> int | None:
    match = re.search(r"line (\d+)", str(error))
    return int(match.group(1)) if match else None


# Where declint's keys start in a pyproject.toml: another tool's `include = ...` above it is not ours.
_DECLINT_TABLE = re.compile(r"""^[ \t]*\[[ \t]*tool[ \t]*\.[ \t]*["']?declint["']?[ \t]*[\].]""", re.MULTILINE)


def key_line(text: str, key: str) -> int | None:
    """The line of `key`: `key = ...`, a dotted `key.x = ...`, or a table `[tool.declint.key]`."""
    name = re.escape(key)
    pattern = re.compile(
        rf"""^[ \t]*(?:["']?{name}["']?[ \t]*[=.]|\[[^\]\n]*\.[ \t]*["']?{name}["']?[ \t]*\])""", re.MULTILINE
    )
    table = _DECLINT_TABLE.search(text)
    match = pattern.search(text, table.start() if table else 0)
    return text.count("\n", 0, match.start()) + 1 if match else None


def closest(word: str, candidates: tuple[str, ...] | list[str] | frozenset[str]) -> str | None:
    """The candidate most like `word`, if one is close enough to suggest."""
    import difflib  # only a misspelled name needs it (~4 ms to import)

    matches = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


def suggest(word: str, candidates: tuple[str, ...] | list[str] | frozenset[str]) -> str:
    """' (did you mean "x"?)' or '' — shared by every "unknown X" message."""
    return did_you_mean(closest(word, candidates))


def did_you_mean(match: str | None) -> str:
    return f' (did you mean "{match}"?)' if match is not None else ""


def _validate(key: str, value: Any, path: Path, text: str, known_codes: frozenset[str]) -> Any:
    line = key_line(text, key)
    spec = _SPECS.get(key)
    if spec is None:
        raise ConfigError(f'unknown key "{key}"{suggest(key, OPTION_KEYS)}', path=str(path), line=line)
    if not _has_kind(value, spec.kind):
        got = value if spec.kind in ("int", "number") and isinstance(value, int | float) else type(value).__name__
        wanted = f"a non-negative {spec.kind}" if spec.kind in ("int", "number") else spec.kind
        raise ConfigError(f'"{key}" must be {wanted}, got {got}', path=str(path), line=line)
    if spec.bounds is not None and not _within(value, spec):
        raise ConfigError(f'"{key}" must be {_bounds_text(spec)}, got {value}', path=str(path), line=line)
    for code in _codes_in(key, value):
        if not any(known.startswith(code) for known in known_codes):
            raise ConfigError(
                f'"{key}": unknown rule code "{code}"{suggest(code, known_codes)}',
                path=str(path),
                line=line,
            )
    if key == "shared-literal" and "." not in value:
        raise ConfigError(
            f'"{key}" must be a dotted path "package.module.Name", got "{value}"',
            path=str(path),
            line=line,
        )
    return value


def _within(value: float, spec: OptionSpec) -> bool:
    assert spec.bounds is not None
    least, most = spec.bounds
    return least <= value <= most or (bool(spec.zero) and value == 0)


def _bounds_text(spec: OptionSpec) -> str:
    assert spec.bounds is not None
    least, most = spec.bounds
    span = f"{'an int' if spec.kind == 'int' else 'a number'} from {least} to {most}"
    return f"0 ({spec.zero}) or {span}" if spec.zero else span


def _has_kind(value: Any, kind: str) -> bool:
    if kind == "str":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
    if kind == "list[str]":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    if kind == "dict[str,str]":
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if kind == "dict[str,list[str]]":
        return isinstance(value, dict) and all(_has_kind(v, "list[str]") for v in value.values())
    raise AssertionError(kind)


def _codes_in(key: str, value: Any) -> list[str]:
    if key in ("select", "ignore"):
        return list(value)
    if key == "per-path-ignores":
        return [code for codes in value.values() for code in codes]
    return []


def parse_code_list(text: str | None) -> list[str] | None:
    """`--select DL101,DL103` -> ["DL101", "DL103"]."""
    if text is None:
        return None
    return [part.strip().upper() for part in text.split(",") if part.strip()]
