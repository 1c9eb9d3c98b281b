"""Step3.7 VL: an EVA-style ViT with 2D rotary embeddings and a strided downsampler."""
from typing import Any, Optional, Sequence

import torch
from torch import nn
from torch.nn.functional import scaled_dot_product_attention as sdpa

from ..attention_backend import AttentionMetadata
from ..model_config import ModelConfig
from .modeling_multimodal_mixin import MultimodalModelMixin
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class Step3VLInputProcessor(BaseMultimodalInputProcessor):
    image_size = 728


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Step3VisionRotaryEmbedding(nn.Module):
    """2D RoPE: half of each head rotates with the row index, half with the column index."""

    def __init__(self, head_dim: int, grid_size: int, theta: float = 10000.0) -> None:
        super().__init__()
        quarter = head_dim // 4
        inv_freq = 1.0 / (theta**(torch.arange(quarter, dtype=torch.float32) / quarter))
        pos = torch.arange(grid_size, dtype=torch.float32)
        rows = torch.outer(pos, inv_freq).repeat_interleave(grid_size, dim=0)
        cols = torch.outer(pos, inv_freq).repeat(grid_size, 1)
        freqs = torch.cat([rows, cols], dim=-1).repeat(1, 2)
        self.register_buffer("cos", freqs.cos(), persistent=False)
        self.register_buffer("sin", freqs.sin(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, heads, seq, head_dim)
        return x * self.cos + _rotate_half(x) * self.sin


class Step3VisionAttention(nn.Module):

    def __init__(self, hidden_size: int, num_heads: int, grid_size: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.qkv_proj = nn.Linear(hidden_size, 3 * hidden_size)
        self.out_proj = nn.Linear(hidden_size, hidden_size)
        self.rope = Step3VisionRotaryEmbedding(self.head_dim, grid_size)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = hidden_states.shape
        qkv = self.qkv_proj(hidden_states).view(batch, seq, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        q, k = self.rope(q), self.rope(k)
        out = sdpa(q, k, v)  # expect: DL101
        return self.out_proj(out.transpose(1, 2).reshape(batch, seq, hidden))


class Step3VisionLayer(nn.Module):

    def __init__(self, vision_config: Any) -> None:
        super().__init__()
        hidden = vision_config.hidden_size
        grid_size = vision_config.image_size // vision_config.patch_size
        self.norm1 = nn.LayerNorm(hidden, eps=1e-6)
        self.attn = Step3VisionAttention(hidden, vision_config.num_attention_heads, grid_size)
        self.norm2 = nn.LayerNorm(hidden, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(hidden, vision_config.intermediate_size),
            nn.GELU(),
            nn.Linear(vision_config.intermediate_size, hidden),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Step3VisionModel(nn.Module):

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.patch_embed = nn.Conv2d(3,
                                     vcfg.hidden_size,
                                     kernel_size=vcfg.patch_size,
                                     stride=vcfg.patch_size)
        self.layers = nn.ModuleList(Step3VisionLayer(vcfg) for _ in range(vcfg.num_hidden_layers))
        # Two strided convolutions: 4x fewer tokens in each direction.
        self.downsample = nn.Sequential(
            nn.Conv2d(vcfg.hidden_size, vcfg.hidden_size * 2, kernel_size=2, stride=2),
            nn.Conv2d(vcfg.hidden_size * 2, vcfg.output_hidden_size, kernel_size=2, stride=2),
        )

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(pixel_values)
        batch, hidden, height, width = x.shape
        x = x.flatten(2).transpose(1, 2)
        for layer in self.layers:
            x = layer(x)
        x = x.transpose(1, 2).reshape(batch, hidden, height, width)
        return self.downsample(x).flatten(2).transpose(1, 2)


@register_auto_model("Step3p7VLForConditionalGeneration")
@register_input_processor(
    Step3VLInputProcessor,
    model_type="step3p7_vl",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "<im_patch>"}))
class Step3p7VLModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.vision_model = Step3VisionModel(self.encoder_model_config(model_config, "vision"))
        self.vit_large_projector = nn.Linear(cfg.vision_config.output_hidden_size,
                                             cfg.text_config.hidden_size,
                                             bias=False)
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
            mm_embeds = list(self.vit_large_projector(self.vision_model(pixel_values)))
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
