"""Generate a TensorRT-LLM-shaped source tree of N Python files, for scaling and memory runs.

    python benchmarks/gen_tree.py OUT_DIR --files 20000 [--seed 0] [--model-share 0.03]

Deterministic for a seed. The tree has the layout declint's defaults expect: the shared Literal in
`tensorrt_llm/llmapi/llm_args.py`, attention backends with their metadata classes, the model
registry and mixin, and `--model-share` of the files (3% by default) as `modeling_*.py` model
files, about a third of which carry a finding (direct SDPA in a configurable tower, a missing
declaration, a retyped backend name, an invalid declaration; each kind in the same share in every
tree, see `model_kinds`), plus another 1% of files that mention `attn_backend` without a finding
(`--mention-files` caps their number). Every other file is filler code shaped like the rest
of TensorRT-LLM (modules, executors, tests, examples, scripts): classes, methods, docstrings,
imports of the shared modules, and none of declint's needles. Sizes vary around 6 KB.

Writes `OUT_DIR/pyproject.toml` and `OUT_DIR/manifest.json` (counts, bytes, expected findings).
"""

from __future__ import annotations

import argparse
import json
import random
import textwrap
from pathlib import Path

PACKAGES = (
    "tensorrt_llm/_torch/modules",
    "tensorrt_llm/_torch/pyexecutor",
    "tensorrt_llm/_torch/auto_deploy/transform",
    "tensorrt_llm/_torch/auto_deploy/models",
    "tensorrt_llm/_torch/speculative",
    "tensorrt_llm/_torch/distributed",
    "tensorrt_llm/_torch/custom_ops",
    "tensorrt_llm/_torch/compilation",
    "tensorrt_llm/serve",
    "tensorrt_llm/llmapi/utils",
    "tensorrt_llm/quantization",
    "tensorrt_llm/runtime",
    "tensorrt_llm/tools",
    "tests/unittest/_torch",
    "tests/unittest/llmapi",
    "tests/integration/defs",
    "examples/models/core",
    "examples/llm-api",
    "scripts",
)
WORDS = (
    "tensor",
    "shape",
    "rank",
    "world",
    "mapping",
    "quant",
    "scale",
    "weight",
    "bias",
    "cache",
    "block",
    "token",
    "batch",
    "request",
    "sequence",
    "kernel",
    "stream",
    "buffer",
    "layer",
    "expert",
    "router",
    "gate",
    "norm",
    "rotary",
    "embedding",
    "sampler",
    "executor",
    "scheduler",
    "engine",
    "plugin",
    "config",
    "tile",
    "warp",
    "lane",
    "chunk",
    "page",
    "slot",
    "pool",
)

CORE = {
    "tensorrt_llm/__init__.py": "",
    "tensorrt_llm/llmapi/__init__.py": "",
    "tensorrt_llm/llmapi/llm_args.py": """\
from typing import Literal

EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]
MoeBackend = Literal["CUTLASS", "TRTLLM", "VANILLA"]


class MultimodalConfig:
    encoder_attention_backend: dict = {}
""",
    "tensorrt_llm/_torch/__init__.py": "",
    "tensorrt_llm/_torch/attention_backend/__init__.py": "",
    "tensorrt_llm/_torch/attention_backend/interface.py": """\
from dataclasses import dataclass
from typing import Generic, TypeVar


@dataclass
class AttentionMetadata:
    max_num_requests: int = 0
    max_num_tokens: int = 0

    @property
    def num_tokens(self):
        return self.max_num_tokens


TMetadata = TypeVar("TMetadata")


class AttentionBackend(Generic[TMetadata]):
    Metadata = AttentionMetadata

    def forward(self, q, k, v, metadata: TMetadata):
        raise NotImplementedError
""",
    "tensorrt_llm/_torch/attention_backend/vanilla.py": """\
import torch.nn.functional as F

from .interface import AttentionBackend, AttentionMetadata


class VanillaAttentionMetadata(AttentionMetadata):
    pass


class VanillaAttention(AttentionBackend[VanillaAttentionMetadata]):
    Metadata = VanillaAttentionMetadata

    def forward(self, q, k, v, metadata):
        return F.scaled_dot_product_attention(q, k, v)
""",
    "tensorrt_llm/_torch/attention_backend/trtllm.py": """\
from .interface import AttentionBackend, AttentionMetadata


class TrtllmAttentionMetadata(AttentionMetadata):
    def prepare(self):
        self.kv_lens = None


class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):
    Metadata = TrtllmAttentionMetadata

    def forward(self, q, k, v, metadata):
        return metadata.kv_lens
""",
    "tensorrt_llm/_torch/attention_backend/flashinfer.py": """\
from .interface import AttentionBackend, AttentionMetadata


class FlashInferAttentionMetadata(AttentionMetadata):
    kv_layout: str = "NHD"
    page_size: int = 64


class FlashInferAttention(AttentionBackend[FlashInferAttentionMetadata]):
    Metadata = FlashInferAttentionMetadata

    def forward(self, q, k, v, metadata):
        return metadata.kv_layout, metadata.page_size
""",
    "tensorrt_llm/_torch/attention_backend/utils.py": """\
from .flashinfer import FlashInferAttention
from .trtllm import TrtllmAttention
from .vanilla import VanillaAttention


def get_attention_backend(backend_name):
    if backend_name == VANILLA_NAME:
        return VanillaAttention
    if backend_name == FLASHINFER_NAME:
        return FlashInferAttention
    return TrtllmAttention


VANILLA_NAME = VanillaAttention.__name__
FLASHINFER_NAME = FlashInferAttention.__name__
""",
    "tensorrt_llm/_torch/models/__init__.py": "",
    "tensorrt_llm/_torch/models/modeling_utils.py": """\
from dataclasses import dataclass, field


@dataclass
class MultimodalPlaceholderMetadata:
    placeholder_map: dict = field(default_factory=dict)


def register_input_processor(processor_cls, model_type, placeholder_metadata=None):
    return lambda cls: cls


def register_auto_model(name):
    return lambda cls: cls
""",
    "tensorrt_llm/_torch/models/modeling_multimodal_mixin.py": """\
from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class FixedEncoderAttention:
    reason: str


class MultimodalModelMixin:
    encoder_attention_backends: ClassVar[dict] = {}
""",
}

MODEL_HEAD = """\
import torch
import torch.nn.functional as F
from torch import nn

from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin
from tensorrt_llm._torch.models.modeling_utils import MultimodalPlaceholderMetadata, register_input_processor
from tensorrt_llm._torch.modules.{hub} import {hub_class}
"""

MODEL = """

class {name}VisionAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = {hub_class}(config)

    def forward(self, q, k, v):
{attention}


class {name}VisionTower(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList([{name}VisionAttention(config) for _ in range(4)])

    def forward(self, pixels):
        for layer in self.layers:
            pixels = layer(pixels, pixels, pixels)
        return pixels


@register_input_processor(
    object,
    model_type="{model_type}",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={{"image": "<image>"}}),
)
class {name}VLModel(MultimodalModelMixin, nn.Module):
{declaration}
    def __init__(self, config):
        super().__init__()
        self.visual = {name}VisionTower(config)
{extra}
"""


# Kinds of model file and their shares; about a third carry a finding.
KINDS = (("clean", 50), ("fixed", 15), ("sdpa", 12), ("missing", 8), ("literal", 8), ("invalid", 7))


def model_kinds(count: int) -> list[str]:
    """The kind of each of `count` model files: every prefix holds each kind in its share, to
    within one file (the kind furthest below its share comes next), so trees of any size have
    the same composition. Drawn at random, the share of model files with a finding was 28% in
    the 5k tree and 35% in the 20k tree, a difference in work per megabyte as large as what
    the scaling target measures."""
    total = sum(weight for _, weight in KINDS)
    counts = dict.fromkeys((kind for kind, _ in KINDS), 0)
    kinds = []
    for index in range(count):
        kind = max(KINDS, key=lambda item: item[1] * (index + 1) / total - counts[item[0]])[0]
        counts[kind] += 1
        kinds.append(kind)
    return kinds


def _model(rng: random.Random, index: int, kind: str) -> tuple[str, str, list[str]]:
    """(module name, source, expected codes) of one model file of that kind."""
    name = f"Family{index}"
    hub, hub_class = rng.choice((("linear", "Linear"), ("attention", "Attention"), ("mlp", "GatedMLP")))
    attention = "        return self.proj(q) @ k.transpose(-1, -2) @ v"
    declaration = '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}\n'
    extra = ""
    expected: list[str] = []
    if kind in ("fixed", "sdpa"):
        attention = "        return F.scaled_dot_product_attention(q, k, v)"
    if kind == "fixed":
        declaration = (
            '    encoder_attention_backends = {"vision": FixedEncoderAttention("SDPA tower, kept on purpose")}\n'
        )
    if kind == "sdpa":
        expected.append("DL101")
    if kind == "missing":
        declaration = ""
        expected.append("DL102")
    if kind == "literal":
        extra = '\n    def uses_trtllm(self, config):\n        return config.attn_backend == "TRTLLM"\n'
        expected.append("DL103")
    if kind == "invalid":
        declaration = '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLMM")}\n'
        expected.append("DL104")
    body = MODEL_HEAD.format(hub=hub, hub_class=hub_class) + MODEL.format(
        name=name,
        hub_class=hub_class,
        attention=attention,
        model_type=f"family{index}",
        declaration=declaration,
        extra=extra,
    )
    return f"modeling_family{index}", body + _filler_functions(rng, 3), expected


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def _filler_functions(rng: random.Random, count: int) -> str:
    parts = []
    for number in range(count):
        a, b = rng.sample(WORDS, 2)
        doc = textwrap.fill(_sentence(rng, rng.randint(8, 30)), 88, initial_indent="    ", subsequent_indent="    ")
        parts.append(
            f"\n\ndef {a}_{b}_{number}({a}, {b}=None, *, scale=1.0):\n"
            f'    """\n{doc}\n    """\n'
            f"    if {b} is None:\n        {b} = [{a}] * {rng.randint(2, 9)}\n"
            f"    total = 0\n    for item in {b}:\n        total += len(str(item)) * scale\n"
            f"    return {{'{a}': {a}, '{b}': total, 'rank': {rng.randint(0, 7)}}}\n"
        )
    return "".join(parts)


def _filler_class(rng: random.Random, number: int) -> str:
    a, b, c = rng.sample(WORDS, 3)
    name = f"{a.capitalize()}{b.capitalize()}{number}"
    methods = []
    for position in range(rng.randint(2, 6)):
        verb = rng.choice(("build", "update", "reset", "select", "merge", "split", "load", "plan"))
        doc = _sentence(rng, rng.randint(5, 16))
        methods.append(
            f"    def {verb}_{c}_{position}(self, {a}, {b}=None):\n"
            f'        """{doc}"""\n'
            f"        values = [{a}] if {b} is None else [{a}, {b}]\n"
            f"        self._{c}_{position} = sum(len(str(v)) for v in values)\n"
            f"        return self._{c}_{position}\n"
        )
    doc = textwrap.fill(_sentence(rng, rng.randint(10, 40)), 88, initial_indent="    ", subsequent_indent="    ")
    return (
        f"\n\nclass {name}:\n"
        f'    """\n{doc}\n    """\n\n'
        f"    def __init__(self, {a}: int = {rng.randint(1, 64)}, {b}: float = 0.5):\n"
        f"        self.{a} = {a}\n        self.{b} = {b}\n\n" + "\n".join(methods)
    )


def _filler(rng: random.Random, mentions: bool) -> str:
    imports = ["import math", "import os", "from dataclasses import dataclass", "from typing import Optional"]
    if rng.random() < 0.5:
        imports.append("import torch")
    if rng.random() < 0.3:
        imports.append(f"from tensorrt_llm._torch.modules.{rng.choice(('linear', 'mlp'))} import *")
    head = "\n".join(sorted(rng.sample(imports, rng.randint(2, len(imports))))) + "\n"
    body = "".join(_filler_class(rng, n) for n in range(rng.randint(1, 7)))
    body += _filler_functions(rng, rng.randint(1, 9))
    if mentions:  # mentions a context name, compares it with no backend name: no finding
        body += "\n\ndef choose(config, fallback):\n    return config.attn_backend or fallback\n"
    return head + body


HUBS = {
    "tensorrt_llm/_torch/modules/__init__.py": "",
    "tensorrt_llm/_torch/modules/linear.py": (
        "class Linear:\n    def __init__(self, config):\n        self.config = config\n"
    ),
    "tensorrt_llm/_torch/modules/attention.py": (
        "from .linear import Linear\n\n\nclass Attention:\n    def __init__(self, config):\n"
        "        self.qkv = Linear(config)\n"
    ),
    "tensorrt_llm/_torch/modules/mlp.py": (
        "from .linear import Linear\n\n\nclass GatedMLP:\n    def __init__(self, config):\n"
        "        self.up = Linear(config)\n"
    ),
}


def generate(
    root: Path, files: int, seed: int = 0, model_share: float = 0.03, mention_files: int | None = None
) -> dict[str, object]:
    """`mention_files`: at most that many filler files mention `attn_backend` (they can match a
    rule, so a tree measuring files that cannot match holds as many as the tree it is compared
    with); the random draws stay the same, so the tree is otherwise the one without the cap."""
    rng = random.Random(seed)
    mentions = 0
    tree: dict[str, str] = {**CORE, **HUBS}
    expected: dict[str, list[str]] = {}
    models = max(1, int(files * model_share))
    for index, kind in enumerate(model_kinds(models)):
        module, source, codes = _model(rng, index, kind)
        rel = f"tensorrt_llm/_torch/models/{module}.py"
        tree[rel] = source
        if codes:
            expected[rel] = codes
    package_inits = set()
    number = 0
    while len(tree.keys() | package_inits) < files:
        package = rng.choice(PACKAGES)
        sub = f"{package}/{rng.choice(WORDS)}_{number % 37}" if rng.random() < 0.6 else package
        rel = f"{sub}/{rng.choice(WORDS)}_{rng.choice(WORDS)}_{number}.py"
        mention = rng.random() < 0.01 and (mention_files is None or mentions < mention_files)
        mentions += mention
        tree[rel] = _filler(rng, mention)
        parts = Path(rel).parent.parts
        for depth in range(1, len(parts) + 1):
            package_inits.add("/".join(parts[:depth]) + "/__init__.py")
        number += 1
    for init in package_inits:
        tree.setdefault(init, "")
    root.mkdir(parents=True, exist_ok=True)
    total = 0
    for rel, text in sorted(tree.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        total += len(data)
    (root / "pyproject.toml").write_text('[tool.declint]\nroots = ["."]\n', encoding="utf-8")
    manifest = {
        "files": len(tree),
        "bytes": total,
        "model_files": models,
        "files_with_findings": len(expected),
        "mention_files": mentions,
        "expected": expected,
        "seed": seed,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-share", type=float, default=0.03)
    parser.add_argument("--mention-files", type=int, default=None, help="at most this many files mention attn_backend")
    args = parser.parse_args()
    manifest = generate(args.out, args.files, args.seed, args.model_share, args.mention_files)
    summary = {k: v for k, v in manifest.items() if k != "expected"}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
