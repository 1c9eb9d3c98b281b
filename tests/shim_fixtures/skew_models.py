"""A model with the real metadata/backend skew, built on the demo stand-in (outside the demo tree,
so the demo's lint expectations stay as they are).

`SkewVisionModel` takes its metadata class from the LLM's config and its attention layers from
the encoder's config: with a per-encoder override the two disagree, and without the shim the
first forward dies with `AttributeError: 'TrtllmAttentionMetadata' object has no attribute
'kv_layout'` inside the FlashInfer backend.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tests.shim_fixtures.demo_models import use_demo

use_demo()

import torch  # noqa: E402
from tensorrt_llm._torch.attention_backend.utils import get_attention_backend  # noqa: E402
from tensorrt_llm._torch.models.modeling_multimodal_encoder import MultimodalEncoderMixin  # noqa: E402
from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin  # noqa: E402
from tensorrt_llm._torch.models.modeling_qwen3vl import Qwen3VisionBlock  # noqa: E402
from tensorrt_llm._torch.models.modeling_utils import (  # noqa: E402
    BaseMultimodalInputProcessor,
    MultimodalPlaceholderMetadata,
    register_input_processor,
)
from torch import nn  # noqa: E402


class SkewVisionModel(nn.Module, MultimodalEncoderMixin):
    def __init__(self, llm_config: Any, encoder_config: Any) -> None:
        super().__init__()
        self.model_config = encoder_config
        # The bug: metadata from the LLM's backend, layers from the encoder's (overridden) one.
        self.metadata_cls = get_attention_backend(llm_config.attn_backend).Metadata
        vcfg = encoder_config.pretrained_config.vision_config
        self.blocks = nn.ModuleList(Qwen3VisionBlock(encoder_config, i) for i in range(vcfg.depth))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        attn_metadata = self.prepare_attn_metadata([x.shape[0]])
        for block in self.blocks:
            x = block(x, attn_metadata)
        return x


@register_input_processor(
    BaseMultimodalInputProcessor,
    model_type="skew_vl",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "<image>"}),
)
class SkewVLModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends: ClassVar[dict[str, tuple[str, ...]]] = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}

    def __init__(self, model_config: Any) -> None:
        super().__init__()
        self.model_config = model_config
        self.visual = SkewVisionModel(model_config, self.encoder_model_config(model_config, "vision"))


def tokens(model: SkewVLModel, count: int = 16) -> torch.Tensor:
    hidden = model.model_config.pretrained_config.vision_config.hidden_size
    return torch.randn(count, hidden, device=next(model.parameters()).device)
