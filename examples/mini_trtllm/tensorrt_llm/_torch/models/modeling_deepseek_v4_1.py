"""DeepSeek-V4.1 VL: a SigLIP-style vision tower whose attention calls SDPA itself."""
from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..attention_backend import AttentionMetadata
from ..model_config import ModelConfig
from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class DeepseekV41VLInputProcessor(BaseMultimodalInputProcessor):
    image_size = 384


class DeepseekV41VisionAttention(nn.Module):

    def __init__(self, hidden_size: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size, hidden_size)
        self.k_proj = nn.Linear(hidden_size, hidden_size)
        self.v_proj = nn.Linear(hidden_size, hidden_size)
        self.out_proj = nn.Linear(hidden_size, hidden_size)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        # (batch, seq, hidden) -> (batch, heads, seq, head_dim)
        return x.view(x.shape[0], x.shape[1], self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = hidden_states.shape
        q = self._heads(self.q_proj(hidden_states))
        k = self._heads(self.k_proj(hidden_states))
        v = self._heads(self.v_proj(hidden_states))
        out = F.scaled_dot_product_attention(q, k, v)
        return self.out_proj(out.transpose(1, 2).reshape(batch, seq, hidden))


class DeepseekV41VisionLayer(nn.Module):

    def __init__(self, hidden_size: int, num_heads: int, intermediate_size: int) -> None:
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(hidden_size, eps=1e-6)
        self.self_attn = DeepseekV41VisionAttention(hidden_size, num_heads)
        self.layer_norm2 = nn.LayerNorm(hidden_size, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(hidden_size, intermediate_size),
            nn.GELU(approximate="tanh"),
            nn.Linear(intermediate_size, hidden_size),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.layer_norm1(x))
        return x + self.mlp(self.layer_norm2(x))


class DeepseekV41VisionTower(nn.Module):

    def __init__(self, vision_config: Any) -> None:
        super().__init__()
        hidden = vision_config.hidden_size
        num_patches = (vision_config.image_size // vision_config.patch_size)**2
        self.patch_embed = nn.Conv2d(vision_config.num_channels,
                                     hidden,
                                     kernel_size=vision_config.patch_size,
                                     stride=vision_config.patch_size)
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, hidden))
        self.layers = nn.ModuleList(
            DeepseekV41VisionLayer(hidden, vision_config.num_attention_heads,
                                   vision_config.intermediate_size)
            for _ in range(vision_config.num_hidden_layers))
        self.post_layernorm = nn.LayerNorm(hidden, eps=1e-6)

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(pixel_values).flatten(2).transpose(1, 2) + self.pos_embed
        for layer in self.layers:
            x = layer(x)
        return self.post_layernorm(x)


@register_auto_model("DeepseekV41VLForCausalLM")
@register_input_processor(
    DeepseekV41VLInputProcessor,
    model_type="deepseek_v4_1_vl",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "<image>"}))
class DeepseekV41VLModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": FixedEncoderAttention("encoder calls SDPA directly"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.vision_tower = DeepseekV41VisionTower(cfg.vision_config)
        self.projector = nn.Sequential(
            nn.Linear(cfg.vision_config.hidden_size, cfg.text_config.hidden_size),
            nn.GELU(),
            nn.Linear(cfg.text_config.hidden_size, cfg.text_config.hidden_size),
        )
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.image_token_id, )

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        images = self.multimodal_items(multimodal_params, "image")
        mm_embeds = []
        if images:
            pixel_values = torch.stack([item["pixel_values"] for item in images])
            # One (num_patches, hidden) tensor per image.
            mm_embeds = list(self.projector(self.vision_tower(pixel_values)))
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
