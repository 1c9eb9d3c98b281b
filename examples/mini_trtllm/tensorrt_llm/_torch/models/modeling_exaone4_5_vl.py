"""EXAONE 4.5 VL: a ViT whose attention function is picked once at construction."""
from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..attention_backend import AttentionMetadata
from ..model_config import ModelConfig
from .modeling_multimodal_mixin import MultimodalModelMixin
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class Exaone45VLInputProcessor(BaseMultimodalInputProcessor):
    image_size = 512


class Exaone45VisionAttention(nn.Module):

    def __init__(self, hidden_size: int, num_heads: int, num_kv_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.head_dim = hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size, num_heads * self.head_dim)
        self.k_proj = nn.Linear(hidden_size, num_kv_heads * self.head_dim)
        self.v_proj = nn.Linear(hidden_size, num_kv_heads * self.head_dim)
        self.o_proj = nn.Linear(num_heads * self.head_dim, hidden_size)
        self.attn_fn = F.scaled_dot_product_attention

    def _heads(self, x: torch.Tensor, num_heads: int) -> torch.Tensor:
        return x.view(x.shape[0], x.shape[1], num_heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = hidden_states.shape
        q = self._heads(self.q_proj(hidden_states), self.num_heads)
        k = self._heads(self.k_proj(hidden_states), self.num_kv_heads)
        v = self._heads(self.v_proj(hidden_states), self.num_kv_heads)
        groups = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        out = self.attn_fn(q, k, v)  # expect: DL101
        return self.o_proj(out.transpose(1, 2).reshape(batch, seq, -1))


class Exaone45VisionBlock(nn.Module):

    def __init__(self, vision_config: Any) -> None:
        super().__init__()
        hidden = vision_config.hidden_size
        self.norm1 = nn.RMSNorm(hidden, eps=1e-6)
        self.attn = Exaone45VisionAttention(hidden, vision_config.num_attention_heads,
                                            vision_config.num_key_value_heads)
        self.norm2 = nn.RMSNorm(hidden, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(hidden, vision_config.intermediate_size),
            nn.SiLU(),
            nn.Linear(vision_config.intermediate_size, hidden),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Exaone45VisionModel(nn.Module):

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.patch_embed = nn.Conv2d(3,
                                     vcfg.hidden_size,
                                     kernel_size=vcfg.patch_size,
                                     stride=vcfg.patch_size)
        self.blocks = nn.ModuleList(Exaone45VisionBlock(vcfg) for _ in range(vcfg.depth))
        self.merger = nn.Sequential(
            nn.LayerNorm(vcfg.hidden_size * 4),
            nn.Linear(vcfg.hidden_size * 4, vcfg.out_hidden_size),
        )

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(pixel_values)
        batch, hidden, height, width = x.shape
        x = x.flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        # 2x2 neighbourhoods become one token.
        x = x.view(batch, height // 2, 2, width // 2, 2, hidden).permute(0, 1, 3, 2, 4, 5)
        return self.merger(x.reshape(batch, -1, hidden * 4))


@register_auto_model("Exaone4_5_ForConditionalGeneration")
@register_input_processor(
    Exaone45VLInputProcessor,
    model_type="exaone4_5_vl",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<vision><|image_pad|></vision>",
        "video": "<vision><|video_pad|></vision>",
    }))
class Exaone45VLModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.visual = Exaone45VisionModel(self.encoder_model_config(model_config, "vision"))
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.image_token_id, cfg.video_token_id)

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        mm_embeds = []
        for modality in ("image", "video"):
            for item in self.multimodal_items(multimodal_params, modality):
                pixels = item["pixel_values"]
                frames = pixels if pixels.dim() == 4 else pixels.unsqueeze(0)
                mm_embeds.append(self.visual(frames).flatten(0, 1))
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
