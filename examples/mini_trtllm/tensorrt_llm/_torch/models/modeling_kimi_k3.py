"""Kimi K3: a MoonViT tower whose attention backend can be overridden per encoder.

The tower derives a per-encoder config for its layers but still reads the metadata class from
the language model's config: with an override, the layers and the metadata disagree.
"""
import dataclasses
from typing import Any, Optional, Sequence

import torch
from torch import nn

from ..attention_backend import AttentionMetadata, PredefinedAttentionMask
from ..attention_backend.utils import get_attention_backend
from ..model_config import ModelConfig
from ..modules.attention import Attention
from .modeling_multimodal_encoder import MultimodalEncoderMixin
from .modeling_multimodal_mixin import MultimodalModelMixin
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class KimiK3InputProcessor(BaseMultimodalInputProcessor):
    image_size = 448
    patch_size = 14


class MoonViTBlock(nn.Module):

    def __init__(self, config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        vcfg = config.pretrained_config.vision_config
        self.norm1 = nn.LayerNorm(vcfg.hidden_size, eps=1e-5)
        self.attn = Attention(hidden_size=vcfg.hidden_size,
                              num_attention_heads=vcfg.num_heads,
                              bias=True,
                              layer_idx=layer_idx,
                              config=config)
        self.norm2 = nn.LayerNorm(vcfg.hidden_size, eps=1e-5)
        self.mlp = nn.Sequential(nn.Linear(vcfg.hidden_size, vcfg.intermediate_size), nn.GELU(),
                                 nn.Linear(vcfg.intermediate_size, vcfg.hidden_size))

    def forward(self, x: torch.Tensor, attn_metadata: AttentionMetadata) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), attn_metadata, attention_mask=PredefinedAttentionMask.FULL)
        return x + self.mlp(self.norm2(x))


class MoonViTModel(nn.Module, MultimodalEncoderMixin):

    def __init__(self, model_config: ModelConfig, encoder_backend: Optional[str] = None) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        vision_config = dataclasses.replace(model_config,
                                            attn_backend=encoder_backend or model_config.attn_backend)
        self.model_config = vision_config
        self.patch_embed = nn.Linear(vcfg.in_channels * vcfg.patch_size**2, vcfg.hidden_size)
        self.blocks = nn.ModuleList(
            MoonViTBlock(vision_config, layer_idx) for layer_idx in range(vcfg.depth))
        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata  # expect: DL106

    def forward(self, pixel_values: torch.Tensor, seq_lens: list[int]) -> torch.Tensor:
        attn_metadata = self.prepare_attn_metadata(seq_lens)
        x = self.patch_embed(pixel_values)
        for block in self.blocks:
            x = block(x, attn_metadata)
        return x


@register_auto_model("KimiK3ForConditionalGeneration")
@register_input_processor(
    KimiK3InputProcessor,
    model_type="kimi_k3",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "<|media_pad|>"}))
class KimiK3Model(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        # The tower gets the LLM's config plus the name the user picked for it.
        encoder_backend = self.encoder_model_config(model_config, "vision").attn_backend
        self.vision_tower = MoonViTModel(model_config, encoder_backend)
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        mm_embeds = [
            self.vision_tower(item["pixel_values"], item["seq_lens"])
            for item in self.multimodal_items(multimodal_params, "image")
        ]
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
