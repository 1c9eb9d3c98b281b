"""Run a rule's VALID/INVALID examples in a small project laid out like TensorRT-LLM.

Used by the test-suite; public so that rule authors can try an example by hand.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from declint.config import find_config_file, load_config
from declint.engine import Engine, Selection
from declint.rule import Invalid, RuleMeta, Valid
from declint.types import Finding

PRELUDE: dict[str, str] = {
    "pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\n',
    "tensorrt_llm/__init__.py": "",
    "tensorrt_llm/llmapi/__init__.py": "",
    "tensorrt_llm/llmapi/llm_args.py": (
        'from typing import Literal\n\nEncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'
    ),
    "tensorrt_llm/_torch/__init__.py": "",
    "tensorrt_llm/_torch/attention_backend/__init__.py": "",
    "tensorrt_llm/_torch/attention_backend/interface.py": (
        "from dataclasses import dataclass\nfrom typing import Generic, TypeVar\n\n"
        "@dataclass\nclass AttentionMetadata:\n    max_num_tokens: int = 0\n\n"
        "    @property\n    def num_tokens(self):\n        return self.max_num_tokens\n\n"
        'TMetadata = TypeVar("TMetadata")\n\n'
        "class AttentionBackend(Generic[TMetadata]):\n    Metadata = AttentionMetadata\n"
    ),
    "tensorrt_llm/_torch/attention_backend/utils.py": (
        "def get_attention_backend(backend_name):\n    raise NotImplementedError\n"
    ),
    "tensorrt_llm/_torch/modules/__init__.py": "",
    "tensorrt_llm/_torch/modules/attention.py": "class Attention:\n    pass\n",
    "tensorrt_llm/_torch/attention/__init__.py": "",
    "tensorrt_llm/_torch/attention/backends/__init__.py": "",
    "tensorrt_llm/_torch/models/__init__.py": "",
    "tensorrt_llm/_torch/models/modeling_utils.py": (
        "from dataclasses import dataclass, field\n\n"
        "@dataclass\nclass MultimodalPlaceholderMetadata:\n"
        "    placeholder_map: dict = field(default_factory=dict)\n\n"
        "def register_input_processor(processor_cls, model_type, placeholder_metadata=None):\n"
        "    return lambda cls: cls\n\n"
        "def register_auto_model(name):\n    return lambda cls: cls\n"
    ),
    "tensorrt_llm/_torch/models/modeling_multimodal_mixin.py": (
        "from dataclasses import dataclass\nfrom typing import ClassVar\n\n"
        "@dataclass(frozen=True)\nclass FixedEncoderAttention:\n    reason: str\n\n"
        "class MultimodalModelMixin:\n    encoder_attention_backends: ClassVar[dict] = {}\n"
    ),
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def run_example(rule: type[RuleMeta], example: Valid | Invalid) -> list[Finding]:
    """Findings of `rule`'s code when the example is checked inside the prelude project."""
    from declint.rules import ALL_RULES

    own_runner = getattr(rule, "example_findings", None)
    if own_runner is not None:  # a code reported outside the engine (DL904) runs its own examples
        return list(own_runner(example))

    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        pyproject = PRELUDE["pyproject.toml"] + example.config
        write_tree(root, {**PRELUDE, "pyproject.toml": pyproject, **dict(example.files), example.path: example.code})
        config = load_config(
            find_config_file(root), default_root=root, known_codes=frozenset(r.CODE for r in ALL_RULES)
        )
        engine = Engine(config, ALL_RULES, Selection(("DL",), ()))
        result = engine.run([root / example.path])
    return [finding for finding in result.findings if finding.code == rule.CODE]
