"""DL103 on the edge cases of its contexts (implicit concatenation, f-strings, bytes, starred
arguments, lambdas, positional-only and keyword-only defaults, `match` patterns, the excluded
regions): what it reports and where (line, 0-based column, enclosing scope). The expected rows
are what DL103 reported when it still ran over libcst; since it runs on the `ast` tree
(2026-12-01) it must report exactly the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import MakeTree

SOURCE = '''\
from typing import Literal
import dataclasses

class Cfg:
    attn_backend: str = "TRTLLM"
    other_attn_backend: "EncoderAttentionBackend" = "VANILLA"
    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM"), "attn_backend": "FLASHINFER"}
    backend_name = ("FLASHINFER", *("VANILLA", "TRTLLM"))
    ok: Literal["TRTLLM"] = "x"

    @staticmethod
    @register(attn_backend="TRTLLM")
    def default_attn_backend(x="FLASHINFER", /, attn_backend="VANILLA", *, backend_name="TRTLLX", **kw):
        def inner():
            return "TRTLLM"
        if x:
            return ("VANILLA")
        return "TRT" "LLM"

f = lambda attn_backend="FLASHINFER", *a, backend_name='TRTLLM': attn_backend
g = lambda: "TRTLLM"

def h(config, attn_backend: EncoderAttentionBackend = "VANILLA", backend_name: "str" = "VANILA"):
    if config.attn_backend.upper().lower() in ("TRTLLM", "FLASHINFER") or "VANILLA" == config.attn_backend:
        pass
    if config.attn_backend is not "TRTLLM" and 1 < 2 == config.attn_backend != "FLASHINFER":
        pass
    if config.attn_backend == b"TRTLLM" or config.attn_backend == f"TRTLLM" or config.attn_backend == rb"X":
        pass
    if config.attn_backend == u"TRTLLM" or config.attn_backend == r'VANILLA' or config.attn_backend == """FLASHINFER""":
        pass
    if config.attn_backend == ("TRT"
                               "LLM"):
        pass
    d = {"attn_backend": "TRTLLM", "attn_" "backend": "VANILLA", **config, "x": "TRTLLM",
         ("backend_name"): "FLASHINFER"}
    match config.attn_backend.strip():
        case "TRTLLM" | "VANILLA":
            pass
        case ("FLASHINFER" as y):
            pass
        case "flashinfr":
            pass
        case _:
            pass
    dataclasses.replace(config, attn_backend="TRTLLM", other="VANILLA")
    get_attention_backend("FLASHINFER", "VANILLA")
    create_attention(*["TRTLLM"])
    create_attention(name="TRTLLM")
    config.attn_backend = ["TRTLLM", ["VANILLA"]]
    a = b.attn_backend = "FLASHINFER"
    (c, d2) = attn_backend = "TRTLLM", "x"
    x = {"é attn_backend": "TRTLLM"}; y = "é"; z = config.attn_backend == "VANILLA"
\t
async def fetch_attn_backend():
    return "FLASHINFER"

class Q:
    def backend_name(self):
        class Inner:
            x = 1
        return ["VANILLA", "TRTLLM"]
    encoder_attention_backends: dict = {"v": "TRTLLM", "attn_backend": "VANILLA"}
    z = Literal["TRTLLM", attn_backend == "VANILLA"]
'''

EXPECTED = [
    (5, 24, "Cfg", 'backend name "TRTLLM" retyped as a string literal'),
    (8, 20, "Cfg", 'backend name "FLASHINFER" retyped as a string literal'),
    (8, 36, "Cfg", 'backend name "VANILLA" retyped as a string literal'),
    (8, 47, "Cfg", 'backend name "TRTLLM" retyped as a string literal'),
    (12, 27, "Cfg.default_attn_backend", 'backend name "TRTLLM" retyped as a string literal'),
    (13, 61, "Cfg.default_attn_backend", 'backend name "VANILLA" retyped as a string literal'),
    (13, 88, "Cfg.default_attn_backend", '"TRTLLX" is not a member of EncoderAttentionBackend'),
    (17, 20, "Cfg.default_attn_backend", 'backend name "VANILLA" retyped as a string literal'),
    (20, 24, "", 'backend name "FLASHINFER" retyped as a string literal'),
    (20, 55, "", 'backend name "TRTLLM" retyped as a string literal'),
    (23, 87, "h", '"VANILA" is not a member of EncoderAttentionBackend'),
    (24, 47, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (24, 57, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (24, 74, "h", 'backend name "VANILLA" retyped as a string literal'),
    (26, 34, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (26, 79, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (30, 30, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (30, 66, "h", 'backend name "VANILLA" retyped as a string literal'),
    (30, 103, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (35, 25, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (36, 27, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (38, 13, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (38, 24, "h", 'backend name "VANILLA" retyped as a string literal'),
    (42, 13, "h", '"flashinfr" is not a member of EncoderAttentionBackend'),
    (46, 45, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (47, 26, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (48, 23, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (50, 27, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (50, 38, "h", 'backend name "VANILLA" retyped as a string literal'),
    (51, 25, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (52, 29, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (53, 27, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (53, 74, "h", 'backend name "VANILLA" retyped as a string literal'),
    (56, 11, "fetch_attn_backend", 'backend name "FLASHINFER" retyped as a string literal'),
    (62, 16, "Q.backend_name", 'backend name "VANILLA" retyped as a string literal'),
    (62, 27, "Q.backend_name", 'backend name "TRTLLM" retyped as a string literal'),
]


def test_every_context_and_every_exclusion(make_tree: MakeTree) -> None:
    root = make_tree({"tensorrt_llm/_torch/models/modeling_edge.py": SOURCE})
    result = CliRunner().invoke(
        cli,
        ["check", "--select", "DL103", "--format", "json", str(root / "tensorrt_llm/_torch/models/modeling_edge.py")],
    )
    findings = json.loads(result.output)["findings"]
    found = [(f["line"], f["column"], f["context"], f["message"].split(";")[0].split(" (")[0]) for f in findings]
    assert found == EXPECTED
    assert result.exit_code == 1


def _dl103(root: Path, rel: str) -> tuple[list[tuple[int, int, str, str]], list[dict[str, Any]]]:
    """(line, 0-based column, scope, full message) of each DL103 finding of `rel`, and the raw findings."""
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL103", "--format", "json", str(root / rel)])
    findings = json.loads(result.output)["findings"]
    return [(f["line"], f["column"], f["context"], f["message"]) for f in findings], findings


RETYPED = (
    'backend name "{}" retyped as a string literal; read it from the shared Literal EncoderAttentionBackend '
    "(tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
)
INLINE = (
    "backend names retyped in an inline Literal ({}); annotate with the shared Literal EncoderAttentionBackend "
    "(tensorrt_llm.llmapi.llm_args) so they cannot drift"
)

# The values a context gets through a field specifier, a conditional, `or`/`and`, a string
# subscript or a walrus; each line also holds a near miss that must stay silent.
VALUE_FORMS = """\
import dataclasses
from dataclasses import dataclass, field

from pydantic import BaseModel, Field


class TorchLlmArgs(BaseModel):
    attn_backend: str = Field(default="TRTLLM", description="Attention backend: VANILLA or TRTLLM.")
    backend_name: str = Field("VANILLA", alias="TRTLLM")
    moe_backend: str = Field(default="TRTLLM")


@dataclass
class VisionConfig:
    attn_backend: str = field(default="FLASHINFER", metadata={"help": "VANILLA"})


def pick(config, use_trt):
    attn_backend = "TRTLLM" if use_trt == "VANILLA" else "VANILLA"
    vision = dataclasses.replace(config, attn_backend="FLASHINFER" if use_trt else config.attn_backend)
    attn_backend = config.attn_backend or "TRTLLM"
    backend_name = use_trt and "VANILLA" or other(default="TRTLLM")
    chosen = config.attn_backend or "TRTLLM"
    kwargs = {}
    if kwargs["attn_backend"] == "FLASHINFER" or kwargs["model"] == "TRTLLM":
        kwargs["attn_backend"] = "TRTLLM"
        kwargs[attn_backend] = "VANILLA"
    if (backend_name := config.attn_backend) == "VANILLA" or (chosen := "TRTLLM"):
        return backend_name
    return vision, chosen
"""

VALUE_FORMS_EXPECTED = [
    (8, 38, "TorchLlmArgs", RETYPED.format("TRTLLM")),
    (9, 30, "TorchLlmArgs", RETYPED.format("VANILLA")),
    (15, 38, "VisionConfig", RETYPED.format("FLASHINFER")),
    (19, 19, "pick", RETYPED.format("TRTLLM")),
    (19, 57, "pick", RETYPED.format("VANILLA")),
    (20, 54, "pick", RETYPED.format("FLASHINFER")),
    (21, 42, "pick", RETYPED.format("TRTLLM")),
    (22, 31, "pick", RETYPED.format("VANILLA")),
    (25, 33, "pick", RETYPED.format("FLASHINFER")),
    (26, 33, "pick", RETYPED.format("TRTLLM")),
    (28, 48, "pick", RETYPED.format("VANILLA")),
]


def test_field_defaults_conditionals_or_defaults_subscripts_and_walrus(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/models/modeling_forms.py"
    found, _ = _dl103(make_tree({rel: VALUE_FORMS}), rel)
    assert found == VALUE_FORMS_EXPECTED


LLM_ARGS = """\
from typing import Literal

EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]
MoeBackend = Literal["CUTLASS", "TRTLLM", "VANILLA", "DEEPGEMM"]
VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]
AttnBackendCopy = Literal["VANILLA", "TRTLLM", "FLASHINFER"]
"""

# Values typed by another namespace's Literal, and the near misses: the same names untyped,
# rebound in a nested scope, typed by `str`, an unresolved class, or a copy of the backend names.
OTHER_NAMESPACES = """\
from typing import Literal, Optional

from tensorrt_llm.llmapi import llm_args
from tensorrt_llm.llmapi.llm_args import AttnBackendCopy, MoeBackend, VisualGenAttentionBackend
from .interface import AttentionBackend


def get_moe_cls(model_config):
    backend_name: MoeBackend = model_config.moe_backend.upper()
    if backend_name == "TRTLLM":
        return 1
    return backend_name == "VANILLA"


def moe_default(backend_name: Optional[llm_args.MoeBackend] = "TRTLLM"):
    def closure():
        return backend_name == "VANILLA"

    def rebound(backend_name):
        return backend_name == "TRTLLM"

    return closure, rebound


def inline(backend_name: Literal["CUTLASS", "TRTLLM"] = "TRTLLM", attn_backend: Literal["TRTLLM"] = "TRTLLM"):
    return backend_name in ("TRTLLM", "CUTLASS")


class VisualGenConfig:
    attention_backend: VisualGenAttentionBackend = "FLASHINFER"

    def uses_flashinfer(self):
        return self.attention_backend == "FLASHINFER"


class VisionConfig:
    def uses_flashinfer(self):
        return self.attention_backend == "FLASHINFER"


def untyped(config, backend_name: str = "VANILLA"):
    copy_attn_backend: AttnBackendCopy = "TRTLLM"
    cls_attn_backend: AttentionBackend = "TRTLLM"
    attn_backend: Optional[str] = "FLASHINFER"
    return backend_name == "TRTLLM", config.backend_name == "VANILLA"


def undefaulted(backend_name: MoeBackend, attn_backend):
    return backend_name == "DEEPGEMM" or backend_name == "TRTLLM", attn_backend == "VANILLA"


class LateField:
    def uses_flashinfer(self):
        return self.attention_backend == "FLASHINFER"

    def __init__(self):
        self.attention_backend: VisualGenAttentionBackend = "TORCH_SDPA"


def reads_module_level():
    return backend_name == "VANILLA"


backend_name: MoeBackend
"""

OTHER_NAMESPACES_EXPECTED = [
    (20, 31, "moe_default.rebound", RETYPED.format("TRTLLM")),
    (25, 80, "inline", INLINE.format('"TRTLLM"')),
    (25, 100, "inline", RETYPED.format("TRTLLM")),
    (38, 41, "VisionConfig.uses_flashinfer", RETYPED.format("FLASHINFER")),
    (41, 40, "untyped", RETYPED.format("VANILLA")),
    (42, 41, "untyped", RETYPED.format("TRTLLM")),
    (43, 41, "untyped", RETYPED.format("TRTLLM")),
    (44, 34, "untyped", RETYPED.format("FLASHINFER")),
    (45, 27, "untyped", RETYPED.format("TRTLLM")),
    (45, 60, "untyped", RETYPED.format("VANILLA")),
    (49, 83, "undefaulted", RETYPED.format("VANILLA")),
]


def test_values_typed_by_another_literal_are_not_reported(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/attention_backend/create_moe.py"
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: OTHER_NAMESPACES})
    found, _ = _dl103(root, rel)
    assert found == OTHER_NAMESPACES_EXPECTED


# A backend context annotated with a Literal of its own: a second list of the names, which
# drifts from the shared one. Each line's near miss stays silent: a Literal of another namespace,
# a name that is no context, the shared Literal itself.
INLINE_LITERALS = """\
import typing
from typing import Literal, Optional

from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend


def build(attn_backend: Literal["TRTLLM", "VANILLA"], moe_backend: Literal["CUTLASS", "TRTLLM"]):
    pass


def pick(encoder_attention_backend: "Optional[Literal['FLASHINFER']]", other: Literal["TRTLLM"]):
    pass


def default_attn_backend() -> typing.Literal["TRTLLM", "FLASHINFER"]:
    return pick


def default_moe() -> Literal["TRTLLM"]:
    return pick


class VisionConfig:
    attn_backend: Literal["VANILLA"]
    backend_name: Literal["CUTLASS", "TRTLLM"]
    shared_attn_backend: EncoderAttentionBackend
    typed_attn_backend: Optional[EncoderAttentionBackend] = None
"""


# The shared Literal (or another namespace's) named under an import alias or in a string
# annotation types its context as the plain name does: nothing retyped. A string annotation
# naming neither (`"Optional[str]"`) leaves the default reported.
TYPED_ELSEWHERE = """\
from typing import TYPE_CHECKING, Optional

from tensorrt_llm.llmapi import llm_args as la
from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend as EAB, MoeBackend

if TYPE_CHECKING:
    from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend


def build_a(attn_backend: EAB = "TRTLLM", backend_name: Optional["EAB"] = "VANILLA"):
    pass


def build_b(attn_backend: "EncoderAttentionBackend" = "TRTLLM", backend_name: "la.EncoderAttentionBackend" = "X"):
    pass


def build_c(backend_name: "MoeBackend" = "TRTLLM", attn_backend: "Optional[str]" = "TRTLLM"):
    pass


class VisionArgs:
    attn_backend: "EncoderAttentionBackend" = "VANILLA"
    backend_name: EAB = "FLASHINFER"
"""


def test_the_shared_literal_under_an_alias_or_in_a_string_annotation_types_its_context(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/models/modeling_typed.py"
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: TYPED_ELSEWHERE})
    found, _ = _dl103(root, rel)
    assert found == [(18, 83, "build_c", RETYPED.format("TRTLLM"))]


def test_a_type_alias_of_the_shared_literal_types_its_context(make_tree: MakeTree) -> None:
    """Red-team 53: `OptionalBackend = Optional[EncoderAttentionBackend]` (DL100's own valid
    example), defined in the file or imported from another module, typed nothing. An alias of
    another namespace's Literal, or of `str`, still leaves the value unchecked."""
    rel = "tensorrt_llm/_torch/models/modeling_aliased.py"
    source = (
        "from typing import Optional\n"
        "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend, OptionalEncoderAttentionBackend\n\n"
        "OptionalBackend = Optional[EncoderAttentionBackend]\n"
        "Backend = OptionalBackend\n"
        "Loop = Loop\n"
        "Text = Optional[str]\n\n"
        'def build(attn_backend: Backend = "TRTLLM", backend_name: OptionalEncoderAttentionBackend = "VANILLA"):\n'
        "    return attn_backend, backend_name\n\n"
        'def other(attn_backend: Loop = "TRTLLM", backend_name: Text = "VANILLA"):\n'  # 12
        "    return attn_backend, backend_name\n"
    )
    llm_args = LLM_ARGS + "OptionalEncoderAttentionBackend = Optional[EncoderAttentionBackend]\n"
    llm_args = llm_args.replace("from typing import Literal", "from typing import Literal, Optional")
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": llm_args, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [(12, 31, "other", RETYPED.format("TRTLLM")), (12, 62, "other", RETYPED.format("VANILLA"))]


def test_an_inline_literal_of_backend_names_in_a_context_annotation_is_reported(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/models/modeling_inline.py"
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: INLINE_LITERALS})
    found, raw = _dl103(root, rel)
    assert found == [
        (7, 24, "build", INLINE.format('"TRTLLM", "VANILLA"')),
        (11, 36, "pick", INLINE.format('"FLASHINFER"')),
        (15, 30, "default_attn_backend", INLINE.format('"TRTLLM", "FLASHINFER"')),
        (24, 18, "VisionConfig", INLINE.format('"VANILLA"')),
    ]
    assert [finding["fix"] for finding in raw] == [None] * 4


# A comparison with a lower-cased value wants the lower-case spelling: no "did you mean" the
# member's spelling (it would make the comparison never hold), and no fix at all.
LOWERED = """\
def pick(config):
    a = config.attn_backend.lower() == "flashinfer"
    b = config.attn_backend.strip().casefold() in ("vanilla", "trtlm")
    c = config.attn_backend.upper() == "flashinfer"
    d = config.attn_backend.lower().strip() == "TRTLLM"
    match config.attn_backend.lower():
        case "flashinfer" | "FLASHINFR":
            pass
"""

LOWERED_EXPECTED = [
    (2, 39, "pick", RETYPED.format("flashinfer")),
    (3, 51, "pick", RETYPED.format("vanilla")),
    (3, 62, "pick", '"trtlm" is not a member of EncoderAttentionBackend (did you mean "trtllm"?)'),
    (4, 39, "pick", '"flashinfer" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'),
    (5, 47, "pick", RETYPED.format("TRTLLM")),
    (7, 13, "pick", RETYPED.format("flashinfer")),
    (7, 28, "pick", '"FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "flashinfer"?)'),
]


def test_a_lower_cased_comparison_is_not_told_to_upper_case(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/models/modeling_lowered.py"
    found, raw = _dl103(make_tree({rel: LOWERED}), rel)
    assert found == LOWERED_EXPECTED
    assert [finding["fix"] for finding in raw] == [None] * len(LOWERED_EXPECTED)


# A mapping assigned to a context name is keyed by backend names: its keys are retyped names
# (as a tuple's elements are). Near misses: keys that are no backend names, a mapping typed by
# the Literal, one not named like a context, the declaration.
MAPPINGS = """\
from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend

_ATTN_BACKEND_CLASSES = {"VANILLA": VanillaAttention, "TRTLLM": TrtllmAttention, **EXTRA}
ATTN_BACKEND_KWARGS = {"causal": True, "window": None}
_TYPED_ATTN_BACKENDS: dict[EncoderAttentionBackend, type] = {"FLASHINFER": FlashInferAttention}
_BACKENDS = {"VANILLA": VanillaAttention}


class Model:
    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM")}


def supported(attn_backend):
    return attn_backend in {"FLASHINFR": 1}
"""

MAPPINGS_EXPECTED = [
    (3, 25, "", RETYPED.format("VANILLA")),
    (3, 54, "", RETYPED.format("TRTLLM")),
    (14, 28, "supported", '"FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'),
]


def test_keys_of_a_mapping_named_like_a_context_are_retyped_names(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/attention_backend/registry.py"
    found, _ = _dl103(make_tree({rel: MAPPINGS}), rel)
    assert found == MAPPINGS_EXPECTED


def test_another_literal_is_found_through_a_re_export_and_an_alias(make_tree: MakeTree) -> None:
    """The package re-exports MoeBackend; the file imports it under another name. A name that
    only looks like a Literal's (a class of the same name elsewhere) stays untyped."""
    rel = "tensorrt_llm/_torch/modules/create_moe.py"
    source = (
        "from tensorrt_llm.llmapi import MoeBackend as Moe\n"
        "from .shapes import VisualGenAttentionBackend\n\n"
        'def pick(backend_name: Moe, attention_backend: VisualGenAttentionBackend = "TORCH_SDPA"):\n'
        '    return backend_name == "TRTLLM", attention_backend == "FLASHINFER"\n'
    )
    root = make_tree(
        {
            "tensorrt_llm/llmapi/llm_args.py": LLM_ARGS,
            "tensorrt_llm/llmapi/__init__.py": "from .llm_args import MoeBackend\n",
            "tensorrt_llm/_torch/modules/shapes.py": "class VisualGenAttentionBackend:\n    pass\n",
            rel: source,
        }
    )
    found, _ = _dl103(root, rel)
    assert found == [(5, 58, "pick", RETYPED.format("FLASHINFER"))]


# Reads by key: the default of `.get`/`.pop`/`.setdefault`/`getattr`, and what such a read is
# compared with; reads of other keys, and a read whose key is not a string, are not contexts.
KEYED_READS = """\
def pick(kwargs, config, key):
    a = kwargs.get("attn_backend", "TRTLLM")
    b = kwargs.pop("backend_name", default="FLASHINFR")
    c = getattr(config, "attn_backend", "VANILLA")
    if kwargs.get("attn_backend", "").lower() == "flashinfer" or config.setdefault("attn_backend") in ("TRTLLM",):
        pass
    d = kwargs.get("moe_backend", "TRTLLM") == "VANILLA"
    e = kwargs.get(key, "TRTLLM")
    f = getattr(config, "attn_backend") == "auto"
"""

KEYED_READS_EXPECTED = [
    (2, 35, "pick", RETYPED.format("TRTLLM")),
    (3, 43, "pick", '"FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'),
    (4, 40, "pick", RETYPED.format("VANILLA")),
    (5, 49, "pick", RETYPED.format("flashinfer")),
    (5, 103, "pick", RETYPED.format("TRTLLM")),
]


def test_reads_by_key_are_contexts_with_their_defaults(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/models/modeling_keyed.py"
    found, _ = _dl103(make_tree({rel: KEYED_READS}), rel)
    assert found == KEYED_READS_EXPECTED


# Red-team cases (2026-12-02): a field typed by another namespace's Literal read with getattr,
# and the backend functions imported under another name.
READ_FIELDS_AND_ALIASES = """\
from tensorrt_llm.llmapi.llm_args import MoeBackend
from tensorrt_llm._torch.attention_backend.utils import get_attention_backend as gab


class Moe:
    attn_backend: MoeBackend

    def pick(self):
        return getattr(self, "attn_backend", "TRTLLM"), getattr(self, "attention_backend", "TRTLLM")


def build():
    return gab("TRTLLM")
"""


def test_getattr_of_another_namespaces_field_and_aliased_backend_functions(make_tree: MakeTree) -> None:
    rel = "tensorrt_llm/_torch/models/modeling_fields.py"
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: READ_FIELDS_AND_ALIASES})
    found, _ = _dl103(root, rel)
    assert found == [(9, 91, "Moe.pick", RETYPED.format("TRTLLM")), (13, 15, "build", RETYPED.format("TRTLLM"))]


def test_an_extra_backend_name_is_not_told_to_be_read_from_the_literal(make_tree: MakeTree) -> None:
    """FLASHINFER_STAR_ATTENTION (extra-backend-names) is no member of the shared Literal: "read it
    from the shared Literal" could not be followed. A member keeps that advice."""
    rel = "tensorrt_llm/_torch/attention_backend/utils.py"
    source = (
        "def get_attention_backend(backend_name):\n"
        '    if backend_name == "FLASHINFER_STAR_ATTENTION":\n'
        "        return None\n"
        '    return backend_name == "TRTLLM"\n'
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [
        (
            2,
            23,
            "get_attention_backend",
            'backend name "FLASHINFER_STAR_ATTENTION" retyped as a string literal, and it is not a member of the '
            "shared Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args): name it once, as a constant "
            "next to the Literal, so it cannot drift",
        ),
        (4, 27, "get_attention_backend", RETYPED.format("TRTLLM")),
    ]


def test_a_backend_keyword_given_a_local_variable_checks_what_it_holds(make_tree: MakeTree) -> None:
    """Gemma3VL's sub-config helper picks a backend into a local variable, then passes it as
    `attn_backend=`: the retyped names were missed (only `attn_backend="TRTLLM"` itself was seen).
    Only a variable its function binds once, by that assignment, is followed: one rebound (another
    assignment, a loop or comprehension target, a parameter) may pass something else."""
    rel = "tensorrt_llm/_torch/models/modeling_sub.py"
    source = (
        "import dataclasses\n\n\n"
        "def get_sub_model_config(model_config, name):\n"
        '    preferred = "FLASHINFER" if name == "text_config" else "TRTLLM"\n'
        "    return dataclasses.replace(model_config, attn_backend=preferred)\n\n\n"
        "def rebound(model_config, config):\n"
        '    backend = "TRTLLM"\n'
        "    moe = make_moe(moe_backend=backend)\n"
        "    backend = config.attn_backend\n"
        "    return dataclasses.replace(model_config, attn_backend=backend), moe\n\n\n"
        "def looped(model_config, config):\n"
        '    b = "TRTLLM"\n'
        "    return [dataclasses.replace(model_config, attn_backend=b) for b in config.backends]\n\n\n"
        "def other(model_config, preferred):\n"
        "    return dataclasses.replace(model_config, attn_backend=preferred)\n"
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [
        (5, 16, "get_sub_model_config", RETYPED.format("FLASHINFER")),
        (5, 59, "get_sub_model_config", RETYPED.format("TRTLLM")),
    ]


# A local bound once by an annotated assignment is followed as a plain one is (`backend: str =
# "TRTLLM"`, then `attn_backend=backend`). Near misses: an annotation that types the value (the
# shared Literal, under an alias or in a string annotation; another namespace's Literal), a name
# bound twice (the annotated assignment, then a plain one), an annotation without a value.
ANNOTATED_LOCALS = """\
import dataclasses
from typing import Optional

from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend, EncoderAttentionBackend as EAB, MoeBackend


def annotated(model_config, name):
    preferred: str = "FLASHINFER" if name == "text_config" else "TRTLLM"
    fallback: Optional[str] = "VANILLA"
    return dataclasses.replace(model_config, attn_backend=preferred, attention_backend=fallback)


def typed(model_config):
    shared: EncoderAttentionBackend = "TRTLLM"
    aliased: EAB = "VANILLA"
    quoted: "Optional[EncoderAttentionBackend]" = "FLASHINFER"
    moe: MoeBackend = "TRTLLM"
    vision = dataclasses.replace(model_config, attn_backend=shared, attention_backend=aliased, backend_name=quoted)
    return vision, make_moe(attn_backend=moe)


def rebound(model_config, config):
    backend: str = "TRTLLM"
    if config.attn_backend:
        backend = config.attn_backend
    return dataclasses.replace(model_config, attn_backend=backend)


def declared(model_config, config):
    backend: str
    backend = config.attn_backend or "TRTLLM"
    return dataclasses.replace(model_config, attn_backend=backend)


def after(model_config):
    make(attn_backend=late)
    late: str = "TRTLLM"
"""


def test_a_backend_keyword_given_a_local_with_an_annotated_assignment_checks_what_it_holds(
    make_tree: MakeTree,
) -> None:
    """The annotation is judged as a context's is: one naming the shared Literal (also under an
    alias or in a string annotation) or another namespace's types the value, `str` does not."""
    rel = "tensorrt_llm/_torch/models/modeling_annotated.py"
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: ANNOTATED_LOCALS})
    found, _ = _dl103(root, rel)
    assert found == [
        (8, 21, "annotated", RETYPED.format("FLASHINFER")),
        (8, 64, "annotated", RETYPED.format("TRTLLM")),
        (9, 30, "annotated", RETYPED.format("VANILLA")),
    ]


@pytest.mark.parametrize(
    "body",
    [
        # annotated with the shared Literal: typed, as a context would be
        '    backend: EncoderAttentionBackend = "TRTLLM"\n',
        # bound twice: the value at the call is not certainly the literal
        '    backend: str = "TRTLLM"\n    backend: str = config.attn_backend\n',
    ],
    ids=["shared-literal", "bound-twice"],
)
def test_an_annotated_local_that_is_typed_or_bound_twice_is_not_reported(make_tree: MakeTree, body: str) -> None:
    rel = "tensorrt_llm/_torch/models/modeling_annotated_local.py"
    source = (
        "import dataclasses\n\n"
        "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend\n\n\n"
        "def vision(model_config, config):\n"
        + body
        + "    return dataclasses.replace(model_config, attn_backend=backend)\n"
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == []


def test_a_local_rebound_by_a_nested_nonlocal_a_match_capture_or_global_is_not_followed(make_tree: MakeTree) -> None:
    """Red-team of 4abc655: each of these names has a second binding that `_bound_names` did not
    count (a nested function's `nonlocal`, a `case` capture, a `global`), so the literal was
    reported as what the call passes. The last function, bound once, is the control."""
    rel = "tensorrt_llm/_torch/models/modeling_rebound.py"
    source = (
        "import dataclasses\n\n\n"
        "def nonlocal_rebound(c):\n"
        '    backend: str = "VANILLA"\n'
        "    def g():\n"
        "        nonlocal backend\n"
        "        backend = c.other\n"
        "    g()\n"
        "    return dataclasses.replace(c, attn_backend=backend)\n\n\n"
        "def match_capture(c, x):\n"
        '    backend = "FLASHINFER"\n'
        "    match x:\n"
        '        case {"attn": backend}:\n'
        "            pass\n"
        "    return dataclasses.replace(c, attn_backend=backend)\n\n\n"
        "def global_name(c):\n"
        "    global BACKEND\n"
        '    BACKEND = "TRTLLM"\n'
        "    return dataclasses.replace(c, attn_backend=BACKEND)\n\n\n"
        "def bound_once(c):\n"
        '    backend = "TRTLLM"\n'
        "    return dataclasses.replace(c, attn_backend=backend)\n"
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [(28, 14, "bound_once", RETYPED.format("TRTLLM"))]


def test_a_nonlocal_that_refers_to_a_scope_in_between_rebinds_nothing_outside(make_tree: MakeTree) -> None:
    """Red-team 44 of 553fd3e: `h`'s `nonlocal backend` is `g`'s (its own local or parameter), not
    the outer function's, which binds `backend` once and passes the literal. One that passes
    through `g` (which does not bind it: a comprehension variable is the comprehension's, red-team
    45) does rebind the outer one."""
    rel = "tensorrt_llm/_torch/models/modeling_deeper.py"
    source = (
        "import dataclasses\n\n\n"
        "def deeper_nonlocal(c):\n"
        '    backend = "TRTLLM"\n'
        "    def g():\n"
        '        backend = "x"\n'
        "        def h():\n"
        "            nonlocal backend\n"
        "            backend = c.other\n"
        "        h()\n"
        "    return dataclasses.replace(c, attn_backend=backend)\n\n\n"
        "def parameter_nonlocal(c):\n"
        '    backend = "VANILLA"\n'
        "    def g(backend):\n"
        "        def h():\n"
        "            nonlocal backend\n"
        "            backend = c.other\n"
        "    return dataclasses.replace(c, attn_backend=backend)\n\n\n"
        "def past_a_comprehension(c):\n"
        '    backend = "TRTLLM"\n'
        "    def g():\n"
        "        _ = [backend for backend in c.names]\n"
        "        def h():\n"
        "            nonlocal backend\n"
        "            backend = c.other\n"
        "        h()\n"
        "    g()\n"
        "    return dataclasses.replace(c, attn_backend=backend)\n\n\n"
        "def passing_through(c):\n"
        '    backend = "FLASHINFER"\n'
        "    def g():\n"
        "        def h():\n"
        "            nonlocal backend\n"
        "            backend = c.other\n"
        "        h()\n"
        "    g()\n"
        "    return dataclasses.replace(c, attn_backend=backend)\n"
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [
        (5, 14, "deeper_nonlocal", RETYPED.format("TRTLLM")),
        (16, 14, "parameter_nonlocal", RETYPED.format("VANILLA")),
    ]


def test_a_module_constant_a_context_is_compared_with_lists_backend_names(make_tree: MakeTree) -> None:
    """Red-team 53 (mission failure 3): `_SUPPORTED = ("TRTLLM", "VANILLA")` compared with a context
    drifts from the Literal as a list named like a context does; it was reported only when its own
    name matched a context pattern. Reported once, at its definition; a local or a parameter of the
    same name, a constant bound twice, or one never compared with a context is not followed."""
    rel = "tensorrt_llm/_torch/models/modeling_supported.py"
    source = (
        '_SUPPORTED = ("TRTLLM", "VANILLA")\n'
        '_TWICE = ["TRTLLM"]\n'
        '_TWICE = ["VANILLA"]\n'
        '_UNUSED = {"FLASHINFER"}\n\n'
        "def check(model_config):\n"
        "    if model_config.attn_backend not in _SUPPORTED or model_config.attn_backend in _TWICE:\n"
        "        raise ValueError(model_config.attn_backend)\n"
        "    return _SUPPORTED.index(model_config.attn_backend)\n\n"
        "def again(model_config):\n"
        "    return model_config.attn_backend in _SUPPORTED\n\n"
        "def shadowed(model_config, _SUPPORTED):\n"
        "    return model_config.attn_backend in _SUPPORTED\n"
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [(1, 14, "", RETYPED.format("TRTLLM")), (1, 24, "", RETYPED.format("VANILLA"))]


def test_an_imported_constant_named_like_a_context_is_reported_once_at_its_definition(
    make_tree: MakeTree,
) -> None:
    """A list of backend names defined in one module and compared with a context in another
    (`from .consts import SUPPORTED_ATTN_BACKENDS`, then `config.attn_backend in
    SUPPORTED_ATTN_BACKENDS`; a mapping keyed by them looked up by one): its name is a context's,
    so its own file reports its strings, once; the comparison elsewhere retypes nothing and is no
    second finding."""
    consts = "tensorrt_llm/_torch/models/probe_consts.py"
    model = "tensorrt_llm/_torch/models/modeling_consts.py"
    files = {
        "tensorrt_llm/llmapi/llm_args.py": LLM_ARGS,
        consts: 'SUPPORTED_ATTN_BACKENDS = ("TRTLLM", "FLASHINFER")\n_ATTN_BACKEND_CLASSES = {"VANILLA": object}\n',
        model: (
            "from .probe_consts import _ATTN_BACKEND_CLASSES, SUPPORTED_ATTN_BACKENDS\n\n"
            "def check(config):\n"
            "    if config.attn_backend in SUPPORTED_ATTN_BACKENDS:\n"
            "        return _ATTN_BACKEND_CLASSES[config.attn_backend]\n"
            "    return None\n"
        ),
    }
    root = make_tree(files)
    result = CliRunner().invoke(
        cli, ["check", "--no-cache", "--select", "DL103", "--format", "json", str(root / consts), str(root / model)]
    )
    found = [(f["path"], f["line"], f["column"], f["message"]) for f in json.loads(result.output)["findings"]]
    assert found == [
        (consts, 1, 27, RETYPED.format("TRTLLM")),
        (consts, 1, 37, RETYPED.format("FLASHINFER")),
        (consts, 2, 25, RETYPED.format("VANILLA")),
    ]


# Red-team (2026-12-03): a visual-generation config has its own attention Literal. A value is
# typed by it through the field of a config class defined in another file: passed as the keyword
# of the class's constructor, or read through a parameter, a local or `self.config` annotated with
# (or given a parameter annotated with) the class. Each near miss stays reported: a field typed by
# the shared Literal or by `str` (also overriding an inherited one), a callee that is no class, an
# owner that is unannotated, shadowed or given two differently typed values.
CONFIG_LLM_ARGS = """\
from dataclasses import dataclass
from typing import Literal, Optional

from pydantic import BaseModel

EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]
VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]


@dataclass
class VisualGenConfig:
    attention_backend: VisualGenAttentionBackend = "TORCH_SDPA"


class OptionalVisualGenConfig(BaseModel):
    attention_backend: Optional["VisualGenAttentionBackend"] = None


class EncoderConfig:
    attention_backend: EncoderAttentionBackend = "TRTLLM"


class StrConfig:
    attention_backend: str = "TRTLLM"
"""

CONFIG_SUBCLASSES = """\
from ...llmapi.llm_args import VisualGenConfig


class WanConfig(VisualGenConfig):
    pass


class StrWanConfig(VisualGenConfig):
    attention_backend: str = "TRTLLM"
"""

CONFIG_USES = """\
from typing import Optional

from ...llmapi import llm_args
from ...llmapi.llm_args import EncoderConfig, OptionalVisualGenConfig, StrConfig, VisualGenConfig
from .config import StrWanConfig, WanConfig


def fast_configs(make_config):
    chosen = "FLASHINFER"
    return (
        VisualGenConfig(attention_backend="FLASHINFER"),
        llm_args.VisualGenConfig(attention_backend=chosen),
        WanConfig(attention_backend="FLASHINFER"),
        OptionalVisualGenConfig(attention_backend="FLASHINFER"),
        EncoderConfig(attention_backend="FLASHINFER"),
        StrConfig(attention_backend="FLASHINFER"),
        StrWanConfig(attention_backend="FLASHINFER"),
        make_config(attention_backend="FLASHINFER"),
    )


class WanAttention:
    def __init__(self, config: VisualGenConfig, other: EncoderConfig, plain):
        self.config = config
        self.other = other
        self.plain = plain
        self.twice = config

    def reset(self, config: StrConfig):
        self.twice = config

    def forward(self):
        if self.config.attention_backend == "FLASHINFER":
            return 1
        backend = self.config.attention_backend
        if backend == "FLASHINFER":
            return 2
        return (
            self.other.attention_backend == "FLASHINFER",
            self.plain.attention_backend == "FLASHINFER",
            self.twice.attention_backend == "FLASHINFER",
        )


class DiTAttention:
    config: "Optional[WanConfig]"

    def forward(self):
        return self.config.attention_backend == "FLASHINFER"


def pick(config: VisualGenConfig, other: StrConfig, untyped):
    local: Optional[llm_args.OptionalVisualGenConfig] = untyped.visual_gen
    return (
        config.attention_backend == "FLASHINFER",
        local.attention_backend.upper() in ("FLASHINFER",),
        other.attention_backend == "FLASHINFER",
        untyped.attention_backend == "FLASHINFER",
    )


def rebound(config: VisualGenConfig):
    def inner(config):
        return config.attention_backend == "FLASHINFER"

    return inner


def reassigned(config: VisualGenConfig, other):
    config = other  # red-team 61: the annotation no longer says what it holds
    return config.attention_backend == "FLASHINFER"
"""

CONFIG_USES_EXPECTED = [
    (15, 40, "fast_configs", RETYPED.format("FLASHINFER")),
    (16, 36, "fast_configs", RETYPED.format("FLASHINFER")),
    (17, 39, "fast_configs", RETYPED.format("FLASHINFER")),
    (18, 38, "fast_configs", RETYPED.format("FLASHINFER")),
    (39, 44, "WanAttention.forward", RETYPED.format("FLASHINFER")),
    (40, 44, "WanAttention.forward", RETYPED.format("FLASHINFER")),
    (41, 44, "WanAttention.forward", RETYPED.format("FLASHINFER")),
    (57, 35, "pick", RETYPED.format("FLASHINFER")),
    (58, 37, "pick", RETYPED.format("FLASHINFER")),
    (64, 43, "rebound.inner", RETYPED.format("FLASHINFER")),
    (71, 39, "reassigned", RETYPED.format("FLASHINFER")),
]


def test_a_field_of_a_config_class_typed_by_another_literal_types_its_keyword_and_reads(
    make_tree: MakeTree,
) -> None:
    rel = "tensorrt_llm/_torch/visual_gen/pipeline.py"
    root = make_tree(
        {
            "tensorrt_llm/llmapi/llm_args.py": CONFIG_LLM_ARGS,
            "tensorrt_llm/_torch/visual_gen/__init__.py": "",
            "tensorrt_llm/_torch/visual_gen/config.py": CONFIG_SUBCLASSES,
            rel: CONFIG_USES,
        }
    )
    found, _ = _dl103(root, rel)
    assert found == CONFIG_USES_EXPECTED


def test_a_config_class_of_the_checked_file_types_its_field_reads(make_tree: MakeTree) -> None:
    """The class is defined in the file that reads it (which the prefilter indexes only for its
    Literals until the rule asks about its classes)."""
    rel = "tensorrt_llm/_torch/models/modeling_dit.py"
    source = (
        "from dataclasses import dataclass\n"
        "from typing import Literal\n\n"
        'VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]\n\n\n'
        "@dataclass\nclass VisualGenConfig:\n"
        '    attention_backend: VisualGenAttentionBackend = "TORCH_SDPA"\n\n\n'
        "def pick_kernel(config: VisualGenConfig, other):\n"
        '    return config.attention_backend == "FLASHINFER", other.attention_backend == "FLASHINFER"\n\n\n'
        "class DiTAttention:\n"
        "    def __init__(self, config: VisualGenConfig):\n"
        "        self.config = config\n\n"
        "    def forward(self):\n"
        '        fast = VisualGenConfig(attention_backend="FLASHINFER")\n'
        '        return self.config.attention_backend == "FLASHINFER", fast\n'
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [(13, 80, "pick_kernel", RETYPED.format("FLASHINFER"))]


def test_a_mapping_looked_up_by_a_context_is_keyed_by_backend_names(make_tree: MakeTree) -> None:
    """Red-team 53: `{"TRTLLM": 1, "VANILLA": 2}.get(model_config.attn_backend)` and a registry
    constant indexed by a context compare their keys with it; a mapping indexed by anything else,
    or a local of the same name, is not followed."""
    rel = "tensorrt_llm/_torch/models/modeling_lookup.py"
    source = (
        '_REGISTRY = {"FLASHINFER": object, "VANILLA": object}\n\n'
        "def pick(model_config, key, _LOCAL={'TRTLLM': 1}):\n"
        '    size = {"TRTLLM": 1}.get(model_config.attn_backend)\n'
        "    return _REGISTRY[model_config.attn_backend], _REGISTRY.get(model_config.attn_backend), size\n\n"
        "def other(model_config, key):\n"
        '    return {"TRTLLM": 1}.get(key), _REGISTRY[key], {"VANILLA": 2}.get(model_config.moe_backend)\n\n'
        "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend\n"
        '_TYPED: dict[EncoderAttentionBackend, int] = {"TRTLLM": 1}\n\n'
        "def typed(model_config):\n"
        "    return _TYPED[model_config.attn_backend]\n"  # keys a type checker checks: as the demo's _BACKENDS
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [
        (1, 13, "", RETYPED.format("FLASHINFER")),
        (1, 35, "", RETYPED.format("VANILLA")),
        (4, 12, "pick", RETYPED.format("TRTLLM")),
    ]


def test_a_constant_of_another_namespace_is_not_a_list_of_backend_names(make_tree: MakeTree) -> None:
    """Red-team 61: `_MOE_BACKENDS = ("CUTLASS", "TRTLLM", ...)` compared with `backend_name` was
    reported as retyped attention-backend names; a name that is no backend name (nor close to
    one) makes the collection another namespace's, as it makes a Literal. A frozenset of backend
    names is a collection like a set."""
    rel = "tensorrt_llm/_torch/modules/fused_moe.py"
    source = (
        '_MOE_BACKENDS = ("CUTLASS", "TRTLLM", "DEEPGEMM", "VANILLA")\n'
        '_ENCODER = frozenset({"TRTLLM", "FLASHINFR"})\n\n'
        "def create_moe(backend_name: str, config):\n"
        "    if backend_name not in _MOE_BACKENDS:\n"
        "        raise ValueError(backend_name)\n"
        "    return config.attn_backend in _ENCODER\n"
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, rel: source})
    found, _ = _dl103(root, rel)
    assert found == [
        (2, 22, "", RETYPED.format("TRTLLM")),
        (2, 32, "", '"FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'),
    ]
