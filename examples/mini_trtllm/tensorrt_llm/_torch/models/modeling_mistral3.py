"""Mistral 3: a Pixtral vision encoder (configurable `Attention`) and a patch merger."""
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


class Mistral3InputProcessor(BaseMultimodalInputProcessor):
    image_size = 1024


class PixtralTransformerBlock(nn.Module):

    def __init__(self, model_config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.attention_norm = nn.RMSNorm(vcfg.hidden_size, eps=1e-5)
        self.attention = Attention(hidden_size=vcfg.hidden_size,
                                   num_attention_heads=vcfg.num_attention_heads,
                                   layer_idx=layer_idx,
                                   config=model_config)
        self.ffn_norm = nn.RMSNorm(vcfg.hidden_size, eps=1e-5)
        self.feed_forward = nn.Sequential(
            nn.Linear(vcfg.hidden_size, vcfg.intermediate_size, bias=False),
            nn.SiLU(),
            nn.Linear(vcfg.intermediate_size, vcfg.hidden_size, bias=False),
        )

    def forward(self, x: torch.Tensor, attn_metadata: AttentionMetadata) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x),
                               attn_metadata,
                               attention_mask=PredefinedAttentionMask.FULL)
        return x + self.feed_forward(self.ffn_norm(x))


class PixtralVisionModel(nn.Module, MultimodalEncoderMixin):

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata
        self.patch_conv = nn.Conv2d(3,
                                    vcfg.hidden_size,
                                    kernel_size=vcfg.patch_size,
                                    stride=vcfg.patch_size,
                                    bias=False)
        self.ln_pre = nn.RMSNorm(vcfg.hidden_size, eps=1e-5)
        self.transformer = nn.ModuleList(
            PixtralTransformerBlock(model_config, layer_idx)
            for layer_idx in range(vcfg.num_hidden_layers))

    def forward(self, pixel_values: torch.Tensor) -> tuple[torch.Tensor, int, int]:
        x = self.patch_conv(pixel_values.unsqueeze(0))[0]
        _, height, width = x.shape
        x = self.ln_pre(x.flatten(1).transpose(0, 1))
        attn_metadata = self.prepare_attn_metadata([height * width])
        for block in self.transformer:
            x = block(x, attn_metadata)
        return x, height, width


class Mistral3PatchMerger(nn.Module):

    def __init__(self, hidden_size: int, merge: int) -> None:
        super().__init__()
        self.merge = merge
        self.merging_layer = nn.Linear(hidden_size * merge * merge, hidden_size, bias=False)

    def forward(self, x: torch.Tensor, height: int, width: int) -> torch.Tensor:
        m = self.merge
        x = x.view(height // m, m, width // m, m, -1).permute(0, 2, 1, 3, 4)
        return self.merging_layer(x.reshape((height // m) * (width // m), -1))


@register_auto_model("Mistral3ForConditionalGeneration")
@register_input_processor(
    Mistral3InputProcessor,
    model_type="mistral3",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "[IMG]"}))
class Mistral3VLM(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.vision_tower = PixtralVisionModel(self.encoder_model_config(model_config, "vision"))
        self.patch_merger = Mistral3PatchMerger(cfg.vision_config.hidden_size,
                                                cfg.spatial_merge_size)
        self.multi_modal_projector = nn.Sequential(
            nn.RMSNorm(cfg.vision_config.hidden_size, eps=1e-5),
            nn.Linear(cfg.vision_config.hidden_size, cfg.text_config.hidden_size),
            nn.GELU(),
            nn.Linear(cfg.text_config.hidden_size, cfg.text_config.hidden_size),
        )
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.image_token_index, )

    @classmethod
    def get_model_defaults(cls, llm_args: Any) -> dict[str, Any]:
        """Defaults applied when the user leaves these settings unset."""
        return {
            "attn_backend": "FLASHINFER",  # expect: DL103
            "enable_chunked_prefill": False,
        }

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        mm_embeds = []
        for item in self.multimodal_items(multimodal_params, "image"):
            features, height, width = self.vision_tower(item["pixel_values"])
            merged = self.patch_merger(features, height, width)
            mm_embeds.append(self.multi_modal_projector(merged))
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
