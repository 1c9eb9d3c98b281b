"""DL105 across files: the backend, its metadata class and the base class in three modules."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import MakeTree

PKG = "tensorrt_llm/_torch/attention_backend/"
METADATA = (
    "from dataclasses import dataclass\n"
    "from .interface import AttentionMetadata\n\n"
    "@dataclass\n"
    "class TrtllmAttentionMetadata(AttentionMetadata):\n"
    "    workspace: object = None\n\n"
    "    def __post_init__(self):\n"
    "        self.kv_lens_cuda = None\n"
)
BACKEND = (
    "from . import AttentionBackend, TrtllmAttentionMetadata\n\n"
    "class FlashInferAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
    "    Metadata = TrtllmAttentionMetadata\n\n"
    "    def forward_impl(self, q, metadata):\n"
    "        metadata.kv_lens_cuda\n"
    "        metadata.num_tokens\n"
    "        return metadata.kv_layout\n"
)


def test_three_files_and_a_package_reexport(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            PKG
            + "__init__.py": "from .interface import AttentionBackend\nfrom .trtllm import TrtllmAttentionMetadata\n",
            PKG + "trtllm.py": METADATA,
            PKG + "flashinfer.py": BACKEND,
        }
    )
    result = CliRunner().invoke(cli, ["check", "--select", "DL105", str(root / PKG / "flashinfer.py")])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "tensorrt_llm/_torch/attention_backend/flashinfer.py:9:16: DL105 FlashInferAttention.forward_impl reads "
        "metadata.kv_layout, which its metadata class TrtllmAttentionMetadata does not provide (AttributeError at "
        "the first forward); no metadata class provides kv_layout"
    )
    assert len([line for line in result.output.splitlines() if " DL105 " in line]) == 1


def test_unknown_base_outside_the_project_reports_nothing(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            PKG + "flashinfer.py": (
                "from external import SomeMetadata\n"
                "from .interface import AttentionBackend\n\n"
                "class Meta(SomeMetadata):\n    pass\n\n"
                "class FlashInferAttention(AttentionBackend[Meta]):\n"
                "    Metadata = Meta\n\n"
                "    def forward(self, q, metadata):\n"
                "        return metadata.anything\n"
            ),
        }
    )
    result = CliRunner().invoke(cli, ["check", "--select", "DL105", str(root / PKG / "flashinfer.py")])
    assert result.exit_code == 0


# ---- provided by object.__setattr__, and guards the reads are checked under -------------------
FLASHINFER = (
    "from dataclasses import dataclass\n"
    "from .interface import AttentionMetadata\n\n"
    "@dataclass\n"
    "class FlashInferAttentionMetadata(AttentionMetadata):\n"
    '    kv_layout: str = "NHD"\n'
)
PROBE_HEAD = (
    "from .interface import AttentionBackend, AttentionMetadata\n"
    "from .flashinfer import FlashInferAttentionMetadata\n\n"
    "class ProbeAttention(AttentionBackend[AttentionMetadata]):\n"
    "    Metadata = AttentionMetadata\n\n"
    "    def forward(self, q, metadata):\n"
)
KV_LAYOUT_MISSING = (
    "DL105 ProbeAttention.forward reads metadata.kv_layout, which its metadata class AttentionMetadata does "
    "not provide (AttributeError at the first forward); kv_layout is provided by FlashInferAttentionMetadata, "
    "not by AttentionMetadata"
)


def _dl105(make_tree: MakeTree, files: dict[str, str], checked: str) -> list[str]:
    root = make_tree({PKG + "flashinfer.py": FLASHINFER, **files})
    result = CliRunner().invoke(cli, ["check", "--select", "DL105", str(root / PKG / checked)])
    return [line for line in result.output.splitlines() if " DL105 " in line]


def _probe(make_tree: MakeTree, body: str) -> list[str]:
    """DL105 on ProbeAttention.forward, whose body starts at line 8 (8 spaces deep)."""
    return _dl105(make_tree, {PKG + "probe.py": PROBE_HEAD + body}, "probe.py")


FROZEN = (
    "from dataclasses import dataclass\n"
    "from .interface import AttentionBackend, AttentionMetadata\n\n"
    "@dataclass(frozen=True)\n"
    "class FrozenMetadata(AttentionMetadata):\n"
    "    def __post_init__(self):\n"
    '        object.__setattr__({owner}, "{name}", "NHD")\n\n'
    "class FrozenAttention(AttentionBackend[FrozenMetadata]):\n"
    "    Metadata = FrozenMetadata\n\n"
    "    def forward(self, q, metadata):\n"
    "        return metadata.kv_layout\n"
)


def test_object_setattr_on_self_provides_the_field_of_a_frozen_dataclass(make_tree: MakeTree) -> None:
    assert _dl105(make_tree, {PKG + "frozen.py": FROZEN.format(owner="self", name="kv_layout")}, "frozen.py") == []


def test_super_or_self_setattr_provides_the_field(make_tree: MakeTree) -> None:
    for call in ("super().__setattr__", "self.__setattr__"):
        frozen = FROZEN.format(owner="self", name="kv_layout").replace("object.__setattr__(self, ", f"{call}(")
        assert f'{call}("kv_layout", "NHD")' in frozen
        assert _dl105(make_tree, {PKG + "frozen.py": frozen}, "frozen.py") == []
    # Another object's __setattr__ sets nothing on the instance.
    other = FROZEN.format(owner="self", name="kv_layout").replace("object.__setattr__(self, ", "q.__setattr__(")
    other = other.replace("__post_init__(self)", "__post_init__(self, q=None)")
    assert len(_dl105(make_tree, {PKG + "frozen.py": other}, "frozen.py")) == 1


def test_object_setattr_on_another_object_or_name_provides_nothing(make_tree: MakeTree) -> None:
    message = (
        "tensorrt_llm/_torch/attention_backend/frozen.py:13:16: DL105 FrozenAttention.forward reads "
        "metadata.kv_layout, which its metadata class FrozenMetadata does not provide (AttributeError at the "
        "first forward); kv_layout is provided by FlashInferAttentionMetadata, not by FrozenMetadata"
    )
    for owner, name in (("q", "kv_layout"), ("self", "kv_layout_")):
        frozen = FROZEN.format(owner=owner, name=name).replace("__post_init__(self)", "__post_init__(self, q=None)")
        assert _dl105(make_tree, {PKG + "frozen.py": frozen}, "frozen.py") == [message]


def test_setattr_over_a_loop_of_names_or_by_an_unknown_name_and_a_positional_only_self(make_tree: MakeTree) -> None:
    """Red-team 52: `for name in ("kv_layout", ...): setattr(self, name, None)` and a
    `__post_init__(self, /)` provided nothing; a name only known at run time may be any."""
    looped = FROZEN.format(owner="self", name="kv_layout").replace(
        '        object.__setattr__(self, "kv_layout", "NHD")\n',
        '        for name in ("workspace", "kv_layout"):\n            setattr(self, name, None)\n',
    )
    assert "for name in" in looped
    assert _dl105(make_tree, {PKG + "frozen.py": looped}, "frozen.py") == []
    other = looped.replace('("workspace", "kv_layout")', '("workspace", "kv_layout_")')
    assert len(_dl105(make_tree, {PKG + "frozen.py": other}, "frozen.py")) == 1
    dynamic = looped.replace('("workspace", "kv_layout")', "FIELDS")
    assert _dl105(make_tree, {PKG + "frozen.py": dynamic}, "frozen.py") == []
    positional = FROZEN.format(owner="self", name="kv_layout").replace("__post_init__(self)", "__post_init__(self, /)")
    assert "(self, /)" in positional
    assert _dl105(make_tree, {PKG + "frozen.py": positional}, "frozen.py") == []


GUARDED_BODIES = {
    "early return on hasattr": '        if not hasattr(metadata, "kv_layout"):\n            return q\n'
    "        return metadata.kv_layout\n",
    "early raise on isinstance": "        if not isinstance(metadata, FlashInferAttentionMetadata):\n"
    '            raise TypeError("FlashInfer metadata expected")\n'
    "        return metadata.kv_layout\n",
    "early exit in both branches of a nested if": '        if not hasattr(metadata, "kv_layout"):\n'
    "            if q is None:\n                return None\n            else:\n                raise ValueError\n"
    "        q = q * 2\n        return metadata.kv_layout\n",
    "continue in a loop": '        for item in q:\n            if not hasattr(metadata, "kv_layout"):\n'
    "                continue\n            item.layout = metadata.kv_layout\n",
    "else of a negated check": "        if not isinstance(metadata, FlashInferAttentionMetadata):\n"
    "            return q\n        else:\n            return metadata.kv_layout\n",
    "or of two guards": '        if hasattr(metadata, "kv_layout")'
    " or isinstance(metadata, FlashInferAttentionMetadata):\n"
    "            return metadata.kv_layout\n",
    "or short-circuit": '        return not hasattr(metadata, "kv_layout") or metadata.kv_layout == "NHD"\n',
    "getattr default is None, early return": '        if getattr(metadata, "kv_layout", None) is None:\n'
    "            return q\n        return metadata.kv_layout\n",
}


def test_reads_where_a_guard_is_known_to_hold_are_fine(make_tree: MakeTree) -> None:
    for case, body in GUARDED_BODIES.items():
        assert _probe(make_tree, body) == [], case


UNGUARDED_BODIES = {
    "body of a negated isinstance": "        if not isinstance(metadata, FlashInferAttentionMetadata):\n"
    "            return metadata.kv_layout\n        return q\n",
    "body of a negated hasattr": '        if not hasattr(metadata, "kv_layout"):\n'
    "            return metadata.kv_layout\n        return q\n",
    "or with another condition": "        if isinstance(metadata, FlashInferAttentionMetadata) or q is None:\n"
    "            return metadata.kv_layout\n        return q\n",
    "negated and": '        if not (hasattr(metadata, "kv_layout") and q):\n'
    "            return metadata.kv_layout\n        return q\n",
}


def test_reads_where_a_guard_does_not_hold_are_reported(make_tree: MakeTree) -> None:
    for case, body in UNGUARDED_BODIES.items():
        assert _probe(make_tree, body) == [
            f"tensorrt_llm/_torch/attention_backend/probe.py:9:20: {KV_LAYOUT_MISSING}"
        ], case


def test_an_assert_is_no_guard(make_tree: MakeTree) -> None:
    """The class still lacks the field: the assert fails at the first forward as the read would."""
    for check in ('hasattr(metadata, "kv_layout")', 'getattr(metadata, "kv_layout", None) is not None'):
        body = f"        assert {check}\n        return metadata.kv_layout\n"
        assert _probe(make_tree, body) == [
            f"tensorrt_llm/_torch/attention_backend/probe.py:9:16: {KV_LAYOUT_MISSING}"
        ], check


def test_an_early_exit_guards_only_what_follows_and_only_its_attribute(make_tree: MakeTree) -> None:
    where = "tensorrt_llm/_torch/attention_backend/probe.py"
    cases = {
        "guard of another attribute": '        if not hasattr(metadata, "page_size"):\n            return q\n'
        "        return metadata.kv_layout\n",
        "guard that does not leave the block": '        if not hasattr(metadata, "kv_layout"):\n'
        "            q = q * 2\n        return metadata.kv_layout\n",
        "exit in one branch only": '        if not hasattr(metadata, "kv_layout"):\n'
        "            if q is None:\n                return None\n        return metadata.kv_layout\n",
    }
    lines = {"guard of another attribute": 10, "guard that does not leave the block": 10, "exit in one branch only": 11}
    for case, body in cases.items():
        assert _probe(make_tree, body) == [f"{where}:{lines[case]}:16: {KV_LAYOUT_MISSING}"], case
    before = "        layout = metadata.kv_layout\n" + GUARDED_BODIES["early return on hasattr"]
    assert _probe(make_tree, before) == [f"{where}:8:18: {KV_LAYOUT_MISSING}"]


# A metadata class with `__getattr__` (its own or a base's) may answer any attribute: nothing it
# is read for can be called missing. One without it, beside, is still checked.
DYNAMIC = (
    "from .interface import AttentionBackend, AttentionMetadata\n\n"
    "class LazyMetadata(AttentionMetadata):\n"
    "    def {method}(self, name):\n"
    "        return self.__dict__.get(name)\n\n"
    "class LazierMetadata(LazyMetadata):\n"
    "    pass\n\n"
    "class PlainMetadata(AttentionMetadata):\n"
    "    pass\n\n"
    "class LazyAttention(AttentionBackend[LazierMetadata]):\n"
    "    Metadata = LazierMetadata\n\n"
    "    def forward(self, q, metadata):\n"
    "        return metadata.cu_seqlens_q\n\n"
    "class PlainAttention(AttentionBackend[PlainMetadata]):\n"
    "    Metadata = PlainMetadata\n\n"
    "    def forward(self, q, metadata):\n"
    "        return metadata.cu_seqlens_q\n"
)


def test_a_metadata_class_with_getattr_provides_any_attribute(make_tree: MakeTree) -> None:
    for method in ("__getattr__", "__getattribute__"):
        found = _dl105(make_tree, {PKG + "lazy.py": DYNAMIC.format(method=method)}, "lazy.py")
        assert found == [
            "tensorrt_llm/_torch/attention_backend/lazy.py:23:16: DL105 PlainAttention.forward reads "
            "metadata.cu_seqlens_q, which its metadata class PlainMetadata does not provide (AttributeError at "
            "the first forward); no metadata class provides cu_seqlens_q"
        ]


def test_getattr_in_the_metadata_base_itself_answers_nothing_new(make_tree: MakeTree) -> None:
    """A `__getattr__` on the base every metadata class shares (a deprecated alias, else an
    AttributeError) silenced DL105 for every metadata class of the project."""
    interface = (
        "class AttentionMetadata:\n"
        "    def __getattr__(self, name):\n"
        '        if name == "seq_lens_kv":\n'
        "            return self.kv_lens\n"
        "        raise AttributeError(name)\n\n\n"
        "class AttentionBackend:\n"
        "    pass\n"
    )
    plain = DYNAMIC.split("class PlainMetadata")[0].replace("    def {method}", "    def _unused")
    plain += (
        "class PlainMetadata(AttentionMetadata):\n    pass\n\n"
        "class PlainAttention(AttentionBackend[PlainMetadata]):\n"
        "    Metadata = PlainMetadata\n\n"
        "    def forward(self, q, metadata):\n"
        "        return metadata.cu_seqlens_q\n"
    )
    found = _dl105(make_tree, {PKG + "interface.py": interface, PKG + "lazy.py": plain}, "lazy.py")
    assert found == [
        "tensorrt_llm/_torch/attention_backend/lazy.py:17:16: DL105 PlainAttention.forward reads "
        "metadata.cu_seqlens_q, which its metadata class PlainMetadata does not provide (AttributeError at "
        "the first forward); no metadata class provides cu_seqlens_q"
    ]


# ---- inherited forwards: the engine passes the subclass's Metadata, whatever the annotation says ----
FLASHINFER_BACKEND = FLASHINFER.replace(
    "from .interface import AttentionMetadata", "from .interface import AttentionBackend, AttentionMetadata"
) + (
    "\nclass FlashInferAttention(AttentionBackend[FlashInferAttentionMetadata]):\n"
    "    Metadata = FlashInferAttentionMetadata\n\n"
    "    def forward(self, q, {parameter}: FlashInferAttentionMetadata):\n"
    "        return {parameter}.kv_layout\n"
)
STAR = (
    "from dataclasses import dataclass\n"
    "from .flashinfer import FlashInferAttention, FlashInferAttentionMetadata\n"
    "from .interface import AttentionMetadata\n\n"
    "@dataclass(kw_only=True)\n"
    "class StarAttentionMetadata({base}):\n"
    "    block_size: int = 2048\n\n"
    "class StarAttention(FlashInferAttention):\n"
    "    Metadata = StarAttentionMetadata\n"
)


def _star(make_tree: MakeTree, base: str, parameter: str = "metadata") -> list[str]:
    files = {PKG + "flashinfer.py": FLASHINFER_BACKEND.format(parameter=parameter)}
    return _dl105(make_tree, {**files, PKG + "star_flashinfer.py": STAR.format(base=base)}, "star_flashinfer.py")


def test_an_inherited_forward_with_an_annotated_metadata_parameter_is_checked(make_tree: MakeTree) -> None:
    """The annotation names what the author expected; StarAttention's forward gets a
    StarAttentionMetadata all the same (red-team: skipped because it was annotated)."""
    for parameter in ("metadata", "attn_metadata", "md"):  # md: annotated with FlashInferAttention's own class
        assert _star(make_tree, "AttentionMetadata", parameter) == [
            "tensorrt_llm/_torch/attention_backend/star_flashinfer.py:9:7: DL105 StarAttention inherits "
            f"FlashInferAttention.forward, which reads {parameter}.kv_layout; its metadata class "
            "StarAttentionMetadata does not provide it (AttributeError at the first forward); kv_layout is "
            "provided by FlashInferAttentionMetadata"
        ], parameter


def test_an_inherited_annotated_read_its_metadata_inherits_is_fine(make_tree: MakeTree) -> None:
    assert _star(make_tree, "FlashInferAttentionMetadata") == []


# ---- a generic intermediate backend leaves the metadata type to its subclasses ----------------
CONTIGUOUS_LACKS_PAGE_SIZE = (
    "DL105 ContiguousAttention inherits PagedAttentionBase.forward, which reads metadata.page_size; its metadata "
    "class ContiguousMetadata does not provide it (AttributeError at the first forward); page_size is provided "
    "by PagedMetadata"
)
PAGED = (
    "from dataclasses import dataclass\n"
    "from typing import Any\n\n"
    "from .interface import AttentionBackend, AttentionMetadata, TMetadata\n\n"
    "@dataclass(kw_only=True)\n"
    "class PagedMetadata(AttentionMetadata):\n"
    "    tokens_per_page: int = 64\n\n"
    "    @property\n"
    "    def page_size(self) -> int:\n"
    "        return self.tokens_per_page\n\n"
    "class PagedAttentionBase(AttentionBackend[TMetadata]):\n"
    "    def forward(self, q, metadata: TMetadata, **kwargs: Any):\n"
    "        return q.view(-1, metadata.page_size)\n\n"
    "class PagedAttention(PagedAttentionBase[PagedMetadata]):\n"
    "    Metadata = PagedMetadata\n\n"
    "@dataclass(kw_only=True)\n"
    "class ContiguousMetadata(AttentionMetadata):\n"
    "    workspace: Any = None\n\n"
    "class ContiguousAttention(PagedAttentionBase[ContiguousMetadata]):\n"
    "    Metadata = ContiguousMetadata\n"
)


def test_a_generic_backend_is_checked_in_the_subclasses_that_bind_its_metadata(make_tree: MakeTree) -> None:
    """Not against the interface's default `Metadata = AttentionMetadata` (red-team): the base
    passes its type parameter on; ContiguousAttention binds one without page_size."""
    assert _dl105(make_tree, {PKG + "paged.py": PAGED}, "paged.py") == [
        f"tensorrt_llm/_torch/attention_backend/paged.py:25:7: {CONTIGUOUS_LACKS_PAGE_SIZE}"
    ]


def test_a_generic_backend_still_checks_reads_annotated_with_a_concrete_class(make_tree: MakeTree) -> None:
    paged = PAGED.replace(
        "    def forward(", "    def plan(self, md: PagedMetadata):\n        return md.pages\n\n    def forward("
    )
    assert _dl105(make_tree, {PKG + "paged.py": paged}, "paged.py") == [
        "tensorrt_llm/_torch/attention_backend/paged.py:16:16: DL105 PagedAttentionBase.plan reads md.pages, "
        "which its metadata class PagedMetadata does not provide (AttributeError at the first forward); no "
        "metadata class provides pages",
        f"tensorrt_llm/_torch/attention_backend/paged.py:28:7: {CONTIGUOUS_LACKS_PAGE_SIZE}",
    ]


# ---- contextlib.suppress, match, augmented assignment ------------------------------------------
SUPPRESSED = {
    "contextlib.suppress": "        import contextlib\n        with contextlib.suppress(AttributeError):\n"
    "            return metadata.kv_layout\n",
    "suppress imported": "        from contextlib import suppress\n        with suppress(KeyError, AttributeError):\n"
    "            return metadata.kv_layout\n",
    "an item entered inside suppress": "        from contextlib import suppress\n"
    "        with suppress(AttributeError), open(metadata.kv_layout) as f:\n            return f\n",
}


def test_a_suppress_of_attribute_error_guards_its_body(make_tree: MakeTree) -> None:
    for case, body in SUPPRESSED.items():
        assert _probe(make_tree, body) == [], case


def test_a_suppress_of_something_else_or_code_run_later_is_no_guard(make_tree: MakeTree) -> None:
    where = "tensorrt_llm/_torch/attention_backend/probe.py"
    cases = {
        "another error": ("        from contextlib import suppress\n        with suppress(KeyError):\n", 20),
        "every error": ("        import contextlib\n        with contextlib.suppress(Exception):\n", 20),
        "a lambda": ("        from contextlib import suppress\n        with suppress(AttributeError):\n", 27),
    }
    for case, (head, column) in cases.items():
        read = "get = lambda: metadata.kv_layout" if case == "a lambda" else "return metadata.kv_layout"
        assert _probe(make_tree, f"{head}            {read}\n") == [f"{where}:10:{column}: {KV_LAYOUT_MISSING}"], case
    before = (
        "        from contextlib import suppress\n        with open(metadata.kv_layout), suppress(AttributeError):\n"
    )
    assert _probe(make_tree, before + "            pass\n") == [f"{where}:9:19: {KV_LAYOUT_MISSING}"]


MATCHED = {
    "class pattern": "        match metadata:\n            case FlashInferAttentionMetadata():\n"
    "                return metadata.kv_layout\n",
    "or of class patterns": "        match metadata:\n"
    "            case FlashInferAttentionMetadata() | FlashInferAttentionMetadata(kv_layout='HND'):\n"
    "                return metadata.kv_layout\n",
    "guard of the case": "        match metadata:\n            case _ if hasattr(metadata, 'kv_layout'):\n"
    "                return metadata.kv_layout\n",
}


def test_a_match_class_pattern_narrows_as_isinstance_does(make_tree: MakeTree) -> None:
    for case, body in MATCHED.items():
        assert _probe(make_tree, body) == [], case


def test_a_match_that_does_not_narrow_the_metadata_is_no_guard(make_tree: MakeTree) -> None:
    where = "tensorrt_llm/_torch/attention_backend/probe.py"
    cases = {
        "wildcard": "        match metadata:\n            case _:\n                return metadata.kv_layout\n",
        "another subject": "        match q:\n            case FlashInferAttentionMetadata():\n"
        "                return metadata.kv_layout\n",
    }
    for case, body in cases.items():
        assert _probe(make_tree, body) == [f"{where}:10:24: {KV_LAYOUT_MISSING}"], case
    after = MATCHED["class pattern"] + "            case _:\n                return metadata.kv_layout\n"
    assert _probe(make_tree, after) == [f"{where}:12:24: {KV_LAYOUT_MISSING}"]


ATTN_HEAD = PROBE_HEAD.replace("q, metadata)", "q, attn_metadata)")
NARROWED = "        match attn_metadata:\n            case FlashInferAttentionMetadata():\n                pass\n"
READ_AFTER = "        return attn_metadata.kv_layout\n"
LEFT_OTHERWISE = {
    "return": "            case _:\n                return q\n",
    "raise from a capture": "            case other:\n                raise TypeError(other)\n",
    "or of a wildcard": "            case None | _:\n                return q\n",
}


def _attn_probe(make_tree: MakeTree, body: str) -> list[str]:
    """DL105 on ProbeAttention.forward(self, q, attn_metadata), whose body starts at line 8."""
    return _dl105(make_tree, {PKG + "probe.py": ATTN_HEAD + body}, "probe.py")


def test_a_match_whose_other_cases_leave_narrows_the_rest_of_the_block(make_tree: MakeTree) -> None:
    """`match attn_metadata:` with `case OwnMetadata():` falling through and every other case
    leaving narrows what follows, as `if not isinstance(...): return` does (2026-12-03: reported).
    Not when a case that falls through proves nothing, nor without a case that matches anything:
    a metadata object no case matches falls through too. The read inside the case was guarded
    before and stays so."""
    inside = "        match attn_metadata:\n            case FlashInferAttentionMetadata():\n"
    assert _attn_probe(make_tree, inside + "                return attn_metadata.kv_layout\n") == []
    for case, other in LEFT_OTHERWISE.items():
        assert _attn_probe(make_tree, NARROWED + other + READ_AFTER) == [], case
    where = "tensorrt_llm/_torch/attention_backend/probe.py:13:16: "
    missing = KV_LAYOUT_MISSING.replace("metadata.kv_layout", "attn_metadata.kv_layout")
    unguarded = {
        "no case matches anything": "            case None:\n                return q\n",
        "the wildcard falls through": "            case _:\n                q = None\n",
        "the wildcard has a guard": "            case _ if q:\n                return q\n",
    }
    for case, other in unguarded.items():
        assert _attn_probe(make_tree, NARROWED + other + READ_AFTER) == [where + missing], case


def test_a_class_pattern_at_the_metadatas_place_in_a_tuple_subject_narrows_it(make_tree: MakeTree) -> None:
    """`match q, attn_metadata:` with `case (_, OwnMetadata()):` narrows attn_metadata as `case
    OwnMetadata():` does for `match attn_metadata:` (2026-12-03: reported), the place counted from
    the end after a star. Not a class pattern at another place, in a sequence pattern of another
    length, or where a star stands for it."""
    head = "        match q, attn_metadata:\n"
    body = "                return attn_metadata.kv_layout\n"
    narrowing = {
        "a tuple pattern": "            case (_, FlashInferAttentionMetadata()):\n",
        "a list pattern, captured": "            case [x, FlashInferAttentionMetadata() as md] as pair:\n",
        "after a star": "            case (*_, FlashInferAttentionMetadata()):\n",
        "an or of them": "            case (None, FlashInferAttentionMetadata()) | [_, FlashInferAttentionMetadata()]:"
        "\n",
    }
    for case, pattern in narrowing.items():
        assert _attn_probe(make_tree, head + pattern + body) == [], case
    where = "tensorrt_llm/_torch/attention_backend/probe.py:10:24: "
    missing = KV_LAYOUT_MISSING.replace("metadata.kv_layout", "attn_metadata.kv_layout")
    not_narrowing = {
        "another place": "            case (FlashInferAttentionMetadata(), _):\n",
        "another length": "            case (_, FlashInferAttentionMetadata(), _):\n",
        "under a star": "            case (FlashInferAttentionMetadata(), *_):\n",
        "one side of an or": "            case (_, FlashInferAttentionMetadata()) | (_, None):\n",
    }
    for case, pattern in not_narrowing.items():
        assert _attn_probe(make_tree, head + pattern + body) == [where + missing], case


def test_an_augmented_assignment_reads_the_attribute(make_tree: MakeTree) -> None:
    """`metadata.num_calls += 1` loads num_calls first: AttributeError where the class lacks it."""
    assert _probe(make_tree, "        metadata.num_calls += 1\n        return q\n") == [
        "tensorrt_llm/_torch/attention_backend/probe.py:8:9: DL105 ProbeAttention.forward reads "
        "metadata.num_calls, which its metadata class AttentionMetadata does not provide (AttributeError at the "
        "first forward); no metadata class provides num_calls"
    ]
    guarded = '        if hasattr(metadata, "num_calls"):\n            metadata.num_calls += 1\n'
    assert _probe(make_tree, guarded) == []


def test_a_loop_over_a_module_constant_and_an_aliased_suppress(make_tree: MakeTree) -> None:
    """Red-team 60: `for name in _RUNTIME_FIELDS: setattr(self, name, None)` took the loop's names
    for any name (every read of the class silenced, kv_layout's too); `from contextlib import
    suppress as ignored` guarded nothing."""
    constant = FROZEN.format(owner="self", name="kv_layout").replace(
        '        object.__setattr__(self, "kv_layout", "NHD")\n',
        "        for name in _RUNTIME_FIELDS:\n            setattr(self, name, None)\n",
    )
    constant = constant.replace("\n@dataclass", '\n_RUNTIME_FIELDS = ("workspace", "max_seq_len")\n\n@dataclass', 1)
    assert _dl105(make_tree, {PKG + "frozen.py": constant}, "frozen.py") == [
        "tensorrt_llm/_torch/attention_backend/frozen.py:16:16: DL105 FrozenAttention.forward reads "
        "metadata.kv_layout, which its metadata class FrozenMetadata does not provide (AttributeError at the "
        "first forward); kv_layout is provided by FlashInferAttentionMetadata, not by FrozenMetadata"
    ]
    aliased = FROZEN.format(owner="self", name="kv_layout_").replace(
        "        return metadata.kv_layout\n",
        '        layout = "NHD"\n        with ignored(AttributeError):\n            layout = metadata.kv_layout\n'
        "        return layout\n",
    )
    aliased = "from contextlib import suppress as ignored\n" + aliased
    assert _dl105(make_tree, {PKG + "frozen.py": aliased}, "frozen.py") == []


def test_a_base_in_a_file_read_for_its_literals_is_indexed_in_full_once_a_model_needs_it(make_tree: MakeTree) -> None:
    """A file whose only needle is `Literal` is scanned for its Literals alone (partial facts, no
    classes); once the closure reaches its class as a metadata base, its facts are completed, in
    the first run and in one that finds the partial facts in the cache (2026-12-03)."""
    mixin = (
        'from typing import Literal\n\nLayout = Literal["NHD", "HND"]\n\n'
        'class LayoutMixin:\n    kv_layout: Layout = "NHD"\n'
    )
    metadata = METADATA.replace(
        "from .interface import AttentionMetadata\n",
        "from .interface import AttentionMetadata\nfrom .mixins import LayoutMixin\n",
    )
    metadata = metadata.replace("(AttentionMetadata)", "(LayoutMixin, AttentionMetadata)")
    root = make_tree(
        {
            PKG
            + "__init__.py": "from .interface import AttentionBackend\nfrom .trtllm import TrtllmAttentionMetadata\n",
            PKG + "trtllm.py": metadata,
            PKG + "mixins.py": mixin,
            PKG + "flashinfer.py": BACKEND,
        }
    )
    for _ in range(2):  # cold, then with the cache
        result = CliRunner().invoke(cli, ["check", "--select", "DL105", str(root)])
        assert [line for line in result.output.splitlines() if " DL105 " in line] == []
        assert result.exit_code == 0
    (root / PKG / "mixins.py").write_text(mixin.replace("kv_layout", "kv_order"))
    result = CliRunner().invoke(cli, ["check", "--select", "DL105", str(root)])
    assert [line for line in result.output.splitlines() if " DL105 " in line] == [
        "tensorrt_llm/_torch/attention_backend/flashinfer.py:9:16: DL105 FlashInferAttention.forward_impl reads "
        "metadata.kv_layout, which its metadata class TrtllmAttentionMetadata does not provide (AttributeError at "
        "the first forward); no metadata class provides kv_layout"
    ]


# ---- a rebinding of the metadata name ends what a guard proved of the object it held ----------
NARROWING = "        if isinstance(metadata, FlashInferAttentionMetadata):\n"
READ_IN_IF = "            return metadata.kv_layout\n"
READ_NESTED = "                return metadata.kv_layout\n"
REBOUND = {  # the body after NARROWING (line 8), the read's line and 1-based column
    "plain assignment": ("            metadata = q\n" + READ_IN_IF, 10, 20),
    "a second target": ("            first = metadata = q\n" + READ_IN_IF, 10, 20),
    "annotated assignment": ("            metadata: AttentionMetadata = q\n" + READ_IN_IF, 10, 20),
    "augmented assignment": ("            metadata += q\n" + READ_IN_IF, 10, 20),
    "tuple target": ("            metadata, rest = q\n" + READ_IN_IF, 10, 20),
    "nested list target, starred": ("            [first, (*metadata, rest)] = q\n" + READ_IN_IF, 10, 20),
    "for target": ("            for metadata in q:\n" + READ_NESTED, 10, 24),
    "for tuple target": ("            for index, metadata in enumerate(q):\n" + READ_NESTED, 10, 24),
    "with target": ("            with q as metadata:\n" + READ_NESTED, 10, 24),
    "a later with item": (
        "            with q as metadata, open(metadata.kv_layout) as f:\n" + "                pass\n",
        9,
        38,
    ),
    "walrus statement": ("            (metadata := q)\n" + READ_IN_IF, 10, 20),
    "walrus in an assignment": ("            first = (metadata := q)\n" + READ_IN_IF, 10, 20),
    "walrus earlier in the expression": ("            return (metadata := q), metadata.kv_layout\n", 9, 37),
    "walrus in an earlier operand": ("            return (metadata := q) and metadata.kv_layout\n", 9, 40),
    "walrus in a test": ("            if (metadata := q) is not None:\n" + READ_NESTED, 10, 24),
    "walrus in an and the body runs after": ("            if q and (metadata := q):\n" + READ_NESTED, 10, 24),
}


@pytest.mark.parametrize(("body", "line", "column"), REBOUND.values(), ids=REBOUND.keys())
def test_a_rebinding_ends_the_narrowing_of_the_metadata_name(
    make_tree: MakeTree, body: str, line: int, column: int
) -> None:
    """After `metadata = other` (or any form that binds the name) the name holds another object:
    what `isinstance(metadata, ...)` proved of the first one says nothing of it."""
    assert _probe(make_tree, NARROWING + body) == [
        f"tensorrt_llm/_torch/attention_backend/probe.py:{line}:{column}: {KV_LAYOUT_MISSING}"
    ]


EXIT = "        if not isinstance(metadata, FlashInferAttentionMetadata):\n            return q\n"
READ = "        return metadata.kv_layout\n"


def test_a_rebinding_after_an_early_exit_or_on_the_branch_that_goes_on_ends_it(make_tree: MakeTree) -> None:
    """The rest of the block after `if not isinstance(metadata, X): return` is narrowed, until a
    statement rebinds the name on every path that goes on: the `else` of the exit, both branches
    of an `if`, a `try` whose handlers leave, a `match` whose other cases do, a walrus the exit's
    test evaluates after its check."""
    cases = {
        "assignment after the exit": (EXIT + "        metadata = q\n" + READ, 11, 16),
        "after a hasattr exit": (
            '        if not hasattr(metadata, "kv_layout"):\n            return q\n        metadata = q\n' + READ,
            11,
            16,
        ),
        "else of the exit": (EXIT + "        else:\n            metadata = q\n" + READ, 12, 16),
        "body of a check whose else leaves": (
            NARROWING + "            metadata = q\n        else:\n            raise TypeError\n" + READ,
            12,
            16,
        ),
        "both branches": (
            EXIT + "        if q:\n            metadata = q[0]\n        else:\n            metadata = q[1]\n" + READ,
            14,
            16,
        ),
        "a try whose handler leaves": (
            EXIT
            + "        try:\n            metadata = q[0]\n        except IndexError:\n"
            + "            return q\n"
            + READ,
            14,
            16,
        ),
        "a match whose other case leaves": (
            "        match metadata:\n            case FlashInferAttentionMetadata():\n"
            "                metadata = q\n            case _:\n                return q\n" + READ,
            13,
            16,
        ),
        "a walrus in the exit's other operand": (
            "        if not isinstance(metadata, FlashInferAttentionMetadata) or (metadata := q) is None:\n"
            "            return q\n" + READ,
            10,
            16,
        ),
        "an exit unless a walrus's and is true": (
            EXIT + "        if not (q and (metadata := q)):\n            return q\n" + READ,
            12,
            16,
        ),
        "a with target after the exit": (EXIT + "        with q as metadata:\n            pass\n" + READ, 12, 16),
        "a loop's continue": (
            '        for item in q:\n            if not hasattr(metadata, "kv_layout"):\n                continue\n'
            "            metadata = item\n            item.layout = metadata.kv_layout\n",
            12,
            27,
        ),
    }
    for case, (body, line, column) in cases.items():
        assert _probe(make_tree, body) == [
            f"tensorrt_llm/_torch/attention_backend/probe.py:{line}:{column}: {KV_LAYOUT_MISSING}"
        ], case


def test_a_rebinding_that_may_not_run_or_is_checked_again_keeps_the_read_guarded(make_tree: MakeTree) -> None:
    """A rebinding that may not run (in one branch, a loop body, a `try` whose handler goes on,
    the body of a `with` whose manager may swallow what fails before it, a later operand) keeps
    the guard: no finding invented for a path that may never be taken. A name checked again is
    guarded again, and `isinstance(metadata := other, X)` narrows the object it binds."""
    cases = {
        "one branch": EXIT + "        if q:\n            metadata = q\n" + READ,
        "a loop body": EXIT + "        for item in q:\n            metadata = item\n" + READ,
        "a while body": EXIT + "        while q:\n            metadata = q.pop()\n" + READ,
        "a try whose handler goes on": EXIT
        + "        try:\n            metadata = q[0]\n        except IndexError:\n            pass\n"
        + READ,
        "the body of a with": EXIT + "        with q:\n            metadata = q\n" + READ,
        "an annotation alone": EXIT + "        metadata: AttentionMetadata\n" + READ,
        "a walrus in a later operand": EXIT + "        q and (metadata := q)\n" + READ,
        "a walrus an or may skip": EXIT + "        if q or (metadata := q):\n            return metadata.kv_layout\n",
        "a walrus in a branch of a conditional": EXIT + "        first = (metadata := q) if q else None\n" + READ,
        "a walrus in a comprehension": EXIT + "        firsts = [metadata := item for item in q]\n" + READ,
        "checked again": EXIT
        + "        metadata = q\n        if isinstance(metadata, FlashInferAttentionMetadata):\n"
        + "            return metadata.kv_layout\n        return q\n",
        "a walrus the check narrows": "        if isinstance(metadata := q, FlashInferAttentionMetadata):\n"
        "            return metadata.kv_layout\n        return q\n",
        "a walrus the exit narrows": "        if not isinstance(metadata := q, FlashInferAttentionMetadata):\n"
        "            return q\n" + READ,
        "a walrus hasattr checks": '        if hasattr(metadata := q, "kv_layout"):\n' + READ_IN_IF,
        "an AttributeError fallback around it": "        try:\n            metadata = q\n"
        "            return metadata.kv_layout\n        except AttributeError:\n            return q\n",
    }
    for case, body in cases.items():
        assert _probe(make_tree, body) == [], case
