"""GLM5-Next V: the vision tower needs full-mask TRTLLM attention whatever the LLM runs on."""
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


class Glm5NextVInputProcessor(BaseMultimodalInputProcessor):
    image_size = 672


def _vision_sub_config(config: ModelConfig) -> ModelConfig:
    """The config of the vision tower: the LLM's, pinned to the backend the tower needs."""
    return dataclasses.replace(config, attn_backend="TRTLLM")  # expect: DL103


class Glm5NextVisionBlock(nn.Module):

    def __init__(self, model_config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.norm1 = nn.RMSNorm(vcfg.hidden_size, eps=vcfg.rms_norm_eps)
        self.attn = Attention(hidden_size=vcfg.hidden_size,
                              num_attention_heads=vcfg.num_heads,
                              bias=False,
                              layer_idx=layer_idx,
                              config=model_config)
        self.norm2 = nn.RMSNorm(vcfg.hidden_size, eps=vcfg.rms_norm_eps)
        self.mlp = nn.Sequential(
            nn.Linear(vcfg.hidden_size, vcfg.intermediate_size, bias=False),
            nn.SiLU(),
            nn.Linear(vcfg.intermediate_size, vcfg.hidden_size, bias=False),
        )

    def forward(self, x: torch.Tensor, attn_metadata: AttentionMetadata) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), attn_metadata, attention_mask=PredefinedAttentionMask.FULL)
        return x + self.mlp(self.norm2(x))


class Glm5NextVisionModel(nn.Module, MultimodalEncoderMixin):

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata
        self.num_patches = (vcfg.image_size // vcfg.patch_size)**2
        self.patch_embed = nn.Conv2d(3,
                                     vcfg.hidden_size,
                                     kernel_size=vcfg.patch_size,
                                     stride=vcfg.patch_size)
        self.blocks = nn.ModuleList(
            Glm5NextVisionBlock(model_config, layer_idx) for layer_idx in range(vcfg.depth))
        self.downsample = nn.Conv2d(vcfg.hidden_size,
                                    vcfg.out_hidden_size,
                                    kernel_size=vcfg.spatial_merge_size,
                                    stride=vcfg.spatial_merge_size)

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(pixel_values)
        batch, hidden, height, width = x.shape
        x = x.flatten(2).transpose(1, 2).flatten(0, 1)
        attn_metadata = self.prepare_attn_metadata([self.num_patches] * batch)
        for block in self.blocks:
            x = block(x, attn_metadata)
        x = x.view(batch, height, width, hidden).permute(0, 3, 1, 2)
        return self.downsample(x).flatten(2).transpose(1, 2)


@register_auto_model("Glm5NextVForConditionalGeneration")
@register_input_processor(
    Glm5NextVInputProcessor,
    model_type="glm5_next_v",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<|begin_of_image|><|image|><|end_of_image|>",
        "video": "<|begin_of_video|><|video|><|end_of_video|>",
    }))
class Glm5NextVModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("TRTLLM", ),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        vision_config = _vision_sub_config(self.encoder_model_config(model_config, "vision"))
        self.visual = Glm5NextVisionModel(vision_config)
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
