"""Qwen3-VL: a ViT built from backend-configurable `Attention` layers, plus a patch merger."""
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
                             register_input_processor, register_vision_encoder)


class Qwen3VLInputProcessor(BaseMultimodalInputProcessor):
    """Images and videos are cut into flattened (temporal x spatial) patches."""

    image_size = 448
    patch_size = 16
    temporal_patch_size = 2

    def preprocess(self, modality: str, item: torch.Tensor) -> dict[str, torch.Tensor]:
        pixels = super().preprocess(modality, item)["pixel_values"]
        if pixels.dim() == 3:  # a still image fills one temporal patch
            pixels = pixels.unsqueeze(0).expand(self.temporal_patch_size, -1, -1, -1)
        t, c, h, w = pixels.shape
        p, tp = self.patch_size, self.temporal_patch_size
        grid = (t // tp, h // p, w // p)
        patches = pixels.reshape(grid[0], tp, c, grid[1], p, grid[2], p)
        patches = patches.permute(0, 3, 5, 2, 1, 4, 6).reshape(-1, c * tp * p * p)
        return {"pixel_values": patches, "grid_thw": torch.tensor(grid)}


class Qwen3VisionBlock(nn.Module):

    def __init__(self, model_config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.norm1 = nn.LayerNorm(vcfg.hidden_size, eps=1e-6)
        self.attn = Attention(hidden_size=vcfg.hidden_size,
                              num_attention_heads=vcfg.num_heads,
                              bias=True,
                              layer_idx=layer_idx,
                              config=model_config)
        self.norm2 = nn.LayerNorm(vcfg.hidden_size, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(vcfg.hidden_size, vcfg.intermediate_size),
            nn.GELU(approximate="tanh"),
            nn.Linear(vcfg.intermediate_size, vcfg.hidden_size),
        )

    def forward(self, x: torch.Tensor, attn_metadata: AttentionMetadata) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), attn_metadata, attention_mask=PredefinedAttentionMask.FULL)
        return x + self.mlp(self.norm2(x))


class Qwen3VisionModel(nn.Module, MultimodalEncoderMixin):
    """Patch embedding, ViT blocks and a 2x2 patch merger into the LLM's hidden size."""

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata
        self.merge_unit = vcfg.spatial_merge_size**2
        patch_dim = vcfg.in_channels * vcfg.temporal_patch_size * vcfg.patch_size**2
        self.patch_embed = nn.Linear(patch_dim, vcfg.hidden_size)
        self.blocks = nn.ModuleList(
            Qwen3VisionBlock(model_config, layer_idx) for layer_idx in range(vcfg.depth))
        merged = vcfg.hidden_size * self.merge_unit
        self.merger = nn.Sequential(
            nn.LayerNorm(merged, eps=1e-6),
            nn.Linear(merged, merged),
            nn.GELU(),
            nn.Linear(merged, vcfg.out_hidden_size),
        )

    def forward(self, pixel_values: torch.Tensor, grid_thw: torch.Tensor) -> torch.Tensor:
        seq_lens = grid_thw.view(-1, 3).prod(dim=-1).tolist()
        attn_metadata = self.prepare_attn_metadata(seq_lens)
        x = self.patch_embed(pixel_values)
        for block in self.blocks:
            x = block(x, attn_metadata)
        return self.merger(x.view(-1, x.shape[-1] * self.merge_unit))


@register_vision_encoder(Qwen3VisionModel)
@register_auto_model("Qwen3VLForConditionalGeneration")
@register_input_processor(
    Qwen3VLInputProcessor,
    model_type="qwen3_vl",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<|vision_start|><|image_pad|><|vision_end|>",
        "video": "<|vision_start|><|video_pad|><|vision_end|>",
    }))
class Qwen3VLModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.visual = Qwen3VisionModel(self.encoder_model_config(model_config, "vision"))
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.image_token_id, cfg.video_token_id)

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        mm_embeds = [
            self.visual(item["pixel_values"], item["grid_thw"])
            for modality in ("image", "video")
            for item in self.multimodal_items(multimodal_params, modality)
        ]
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
