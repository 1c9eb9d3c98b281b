"""Configuration handed to every module of a PyTorch-backend model."""
from dataclasses import dataclass
from typing import Any, Optional

import torch

from ..llmapi.llm_args import MultimodalConfig


@dataclass
class ModelConfig:
    """The LLM's configuration; encoders get this object, a copy or a `replace` of it."""

    pretrained_config: Any = None
    mapping: Any = None
    quant_config: Any = None
    multimodal_config: Optional[MultimodalConfig] = None
    attn_backend: str = "TRTLLM"  # expect: DL103
    moe_backend: str = "CUTLASS"
    max_num_tokens: int = 8192
    skip_create_weights_in_init: bool = False

    @property
    def torch_dtype(self) -> torch.dtype:
        return getattr(self.pretrained_config, "torch_dtype", None) or torch.bfloat16

    @property
    def is_trtllm(self) -> bool:
        return self.attn_backend == "TRTLLM"  # expect: DL103

    @property
    def use_trtllm_moe(self) -> bool:
        return self.moe_backend == "TRTLLM"

    @property
    def use_reference_moe(self) -> bool:
        return self.moe_backend in ("VANILLA", "CUTLASS")
