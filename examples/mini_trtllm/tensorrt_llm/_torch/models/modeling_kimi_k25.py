"""Kimi K2.5: a MoonViT-style native-resolution tower built from configurable `Attention`."""
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


class KimiK25InputProcessor(BaseMultimodalInputProcessor):
    """Keeps the native resolution, rounded down to whole 2x2 patch groups."""

    patch_size = 14

    def preprocess(self, modality: str, item: torch.Tensor) -> dict[str, torch.Tensor]:
        unit = 2 * self.patch_size
        height = item.shape[-2] // unit * unit
        width = item.shape[-1] // unit * unit
        return {"pixel_values": item[..., :height, :width].float() / 255.0}


class MoonVitBlock(nn.Module):

    def __init__(self, model_config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.norm0 = nn.LayerNorm(vcfg.hidden_size)
        self.attn = Attention(hidden_size=vcfg.hidden_size,
                              num_attention_heads=vcfg.num_attention_heads,
                              bias=True,
                              layer_idx=layer_idx,
                              config=model_config)
        self.norm1 = nn.LayerNorm(vcfg.hidden_size)
        self.mlp = nn.Sequential(
            nn.Linear(vcfg.hidden_size, vcfg.intermediate_size),
            nn.GELU(approximate="tanh"),
            nn.Linear(vcfg.intermediate_size, vcfg.hidden_size),
        )

    def forward(self, x: torch.Tensor, attn_metadata: AttentionMetadata,
                rope: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        x = x + self.attn(self.norm0(x),
                          attn_metadata,
                          attention_mask=PredefinedAttentionMask.FULL,
                          position_embeddings=rope)
        return x + self.mlp(self.norm1(x))


class MoonVitModel(nn.Module, MultimodalEncoderMixin):

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata
        self.patch_size = vcfg.patch_size
        self.head_dim = vcfg.hidden_size // vcfg.num_attention_heads
        self.patch_embed = nn.Conv2d(3,
                                     vcfg.hidden_size,
                                     kernel_size=vcfg.patch_size,
                                     stride=vcfg.patch_size)
        self.blocks = nn.ModuleList(
            MoonVitBlock(model_config, layer_idx)
            for layer_idx in range(vcfg.num_hidden_layers))
        self.final_layernorm = nn.LayerNorm(vcfg.hidden_size)

    def _rope_2d(self, height: int, width: int,
                 device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        quarter = self.head_dim // 4
        inv_freq = 1.0 / (10000.0**(torch.arange(quarter, device=device) / quarter))
        rows = torch.arange(height, device=device).repeat_interleave(width)
        cols = torch.arange(width, device=device).repeat(height)
        freqs = torch.cat([torch.outer(rows, inv_freq), torch.outer(cols, inv_freq)], dim=-1)
        freqs = freqs.repeat(1, 2)
        return freqs.cos(), freqs.sin()

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(pixel_values.unsqueeze(0))[0]
        _, height, width = x.shape
        x = x.flatten(1).transpose(0, 1)
        attn_metadata = self.prepare_attn_metadata([height * width])
        rope = self._rope_2d(height, width, x.device)
        for block in self.blocks:
            x = block(x, attn_metadata, rope)
        x = self.final_layernorm(x).view(height // 2, 2, width // 2, 2, -1)
        # 2x2 patch groups are concatenated for the projector.
        return x.permute(0, 2, 1, 3, 4).reshape((height // 2) * (width // 2), -1)


@register_auto_model("KimiK25ForConditionalGeneration")
@register_input_processor(
    KimiK25InputProcessor,
    model_type="kimi_k25",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<|media_start|>image<|media_content|><|media_pad|><|media_end|>",
    }))
class KimiK25Model(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFR"),  # expect: DL104
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.vision_tower = MoonVitModel(self.encoder_model_config(model_config, "vision"))
        merged = cfg.vision_config.hidden_size * 4
        self.mm_projector = nn.Sequential(
            nn.LayerNorm(merged),
            nn.Linear(merged, merged),
            nn.GELU(),
            nn.Linear(merged, cfg.text_config.hidden_size),
        )
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.media_placeholder_token_id, )

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        mm_embeds = [
            self.mm_projector(self.vision_tower(item["pixel_values"]))
            for item in self.multimodal_items(multimodal_params, "image")
        ]
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
