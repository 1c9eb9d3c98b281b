"""LLaVA-NeXT: a CLIP vision tower on `nn.MultiheadAttention`, any-resolution tiling."""
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


class LlavaNextInputProcessor(BaseMultimodalInputProcessor):
    """Splits an image into a base view plus tiles of the tower's resolution."""

    image_size = 336
    grid = 2

    def preprocess(self, modality: str, item: torch.Tensor) -> dict[str, torch.Tensor]:
        full = self.image_size * self.grid
        big = F.interpolate(item.float().unsqueeze(0),
                            size=(full, full),
                            mode="bilinear",
                            align_corners=False) / 255.0
        tiles = big.unfold(2, self.image_size, self.image_size).unfold(
            3, self.image_size, self.image_size)
        tiles = tiles.permute(0, 2, 3, 1, 4, 5).reshape(-1, 3, self.image_size, self.image_size)
        base = super().preprocess(modality, item)["pixel_values"].unsqueeze(0)
        return {"pixel_values": torch.cat([base, tiles], dim=0)}


class LlavaNextVisionLayer(nn.Module):

    def __init__(self, vision_config: Any) -> None:
        super().__init__()
        hidden = vision_config.hidden_size
        self.layer_norm1 = nn.LayerNorm(hidden, eps=vision_config.layer_norm_eps)
        self.self_attn = nn.MultiheadAttention(hidden,
                                               vision_config.num_attention_heads,
                                               batch_first=True)
        self.layer_norm2 = nn.LayerNorm(hidden, eps=vision_config.layer_norm_eps)
        self.fc1 = nn.Linear(hidden, vision_config.intermediate_size)
        self.fc2 = nn.Linear(vision_config.intermediate_size, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.layer_norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        h = self.fc1(self.layer_norm2(x))
        return x + self.fc2(h * torch.sigmoid(1.702 * h))  # quick GELU, as in CLIP


class LlavaNextVisionTower(nn.Module):

    def __init__(self, vision_config: Any) -> None:
        super().__init__()
        hidden = vision_config.hidden_size
        num_positions = (vision_config.image_size // vision_config.patch_size)**2 + 1
        self.patch_embedding = nn.Conv2d(3,
                                         hidden,
                                         kernel_size=vision_config.patch_size,
                                         stride=vision_config.patch_size,
                                         bias=False)
        self.class_embedding = nn.Parameter(torch.zeros(hidden))
        self.position_embedding = nn.Embedding(num_positions, hidden)
        self.pre_layrnorm = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList(
            LlavaNextVisionLayer(vision_config)
            for _ in range(vision_config.num_hidden_layers))

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch_embedding(pixel_values).flatten(2).transpose(1, 2)
        cls = self.class_embedding.expand(x.shape[0], 1, -1)
        x = self.pre_layrnorm(torch.cat([cls, x], dim=1) + self.position_embedding.weight)
        for layer in self.layers:
            x = layer(x)
        return x[:, 1:]  # LLaVA feeds the patch tokens, not the class token


@register_auto_model("LlavaNextForConditionalGeneration")
@register_input_processor(
    LlavaNextInputProcessor,
    model_type="llava_next",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "<image>"}))
class LlavaNextModel(MultimodalModelMixin, nn.Module):  # expect: DL102

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.vision_tower = LlavaNextVisionTower(cfg.vision_config)
        self.multi_modal_projector = self.build_projector(cfg)
        self.image_newline = nn.Parameter(torch.zeros(cfg.text_config.hidden_size))
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.image_token_index, )

    def build_projector(self, cfg: Any) -> nn.Module:
        return nn.Sequential(
            nn.Linear(cfg.vision_config.hidden_size, cfg.text_config.hidden_size),
            nn.GELU(),
            nn.Linear(cfg.text_config.hidden_size, cfg.text_config.hidden_size),
        )

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        mm_embeds = []
        for item in self.multimodal_items(multimodal_params, "image"):
            features = self.multi_modal_projector(self.vision_tower(item["pixel_values"]))
            mm_embeds.append(torch.cat([features.flatten(0, 1), self.image_newline[None]]))
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
