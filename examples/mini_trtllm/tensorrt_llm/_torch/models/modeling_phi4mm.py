"""Phi-4-multimodal: Hugging Face vision and audio towers in front of a TensorRT-LLM LLM."""
from typing import Any, Optional, Sequence

import torch
from torch import nn
from transformers import AutoModel

from ..attention_backend import AttentionMetadata
from ..model_config import ModelConfig
from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class Phi4MMInputProcessor(BaseMultimodalInputProcessor):
    image_size = 448
    audio_sample_rate = 16000


class Phi4MMProjector(nn.Module):

    def __init__(self, in_size: int, out_size: int) -> None:
        super().__init__()
        self.up = nn.Linear(in_size, out_size)
        self.act = nn.GELU()
        self.down = nn.Linear(out_size, out_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.act(self.up(x)))


@register_auto_model("Phi4MMForCausalLM")
@register_input_processor(
    Phi4MMInputProcessor,
    model_type="phi4mm",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<|image_{0}|>",
        "audio": "<|audio_{0}|>",
    }))
class Phi4MMModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {  # expect: DL102
        "vision": FixedEncoderAttention("Hugging Face implementation"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        # Both towers come from the checkpoint's remote code.
        self.vision_tower = AutoModel.from_config(cfg.vision_config,
                                                  attn_implementation="flash_attention_2",
                                                  trust_remote_code=True)
        self.audio_tower = AutoModel.from_config(cfg.audio_config, trust_remote_code=True)
        text_hidden = cfg.text_config.hidden_size
        self.image_projection = Phi4MMProjector(cfg.vision_config.hidden_size, text_hidden)
        self.audio_projection = Phi4MMProjector(cfg.audio_config.hidden_size, text_hidden)
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.image_token_id, cfg.audio_token_id)

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        mm_embeds = []
        for item in self.multimodal_items(multimodal_params, "image"):
            hidden = self.vision_tower(pixel_values=item["pixel_values"].unsqueeze(0))
            mm_embeds.append(self.image_projection(hidden.last_hidden_state.squeeze(0)))
        for item in self.multimodal_items(multimodal_params, "audio"):
            hidden = self.audio_tower(input_features=item["input_features"].unsqueeze(0))
            mm_embeds.append(self.audio_projection(hidden.last_hidden_state.squeeze(0)))
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
