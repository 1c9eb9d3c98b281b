"""The needles of the per-file rules that can fire only on a file holding one of them.

For these rules, `FileGate.prefilter` says no to a file without their needles, whatever the index
holds, and their needles follow from the configuration alone. The registry names these functions
(`RuleEntry.needles`) and each rule's `needles` returns what its function does (a test holds them
to it), so a run can gate a file by them without importing the rule's module: a run after an edit
checks a file or two, which most rules' needles miss, and DL103's and DL106's modules are among
the largest (docs/benchmarks.md, eighteenth session). DL101 is not here (its prefilter also fires
on the aliases the index knows), nor DL102 (no needle: it reads every model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from declint.config import Config


def backend_words(config: Config) -> tuple[bytes, ...]:
    """DL103: the backend context names (their `*` wildcards left out) and backend functions, as
    written and upper-cased (`ATTENTION_BACKEND = "TRTLLM"`)."""
    parts = [p.strip("*") for p in config.str_list("backend-context-names")]
    words = [w for p in (*parts, *config.str_list("backend-functions")) if p for w in (p, p.upper())]
    return tuple(sorted({w.encode() for w in words}))


def declaration_attribute(config: Config) -> tuple[bytes, ...]:
    """DL104: the declaration attribute."""
    return (str(config.get("declaration-attribute")).encode(),)


def metadata_cls(config: Config) -> tuple[bytes, ...]:
    """DL106: the backend's `metadata_cls`, which pairs it with its metadata class."""
    return (b"metadata_cls",)
