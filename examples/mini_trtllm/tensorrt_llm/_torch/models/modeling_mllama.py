"""Mllama (Llama 3.2 Vision): the text path runs; vision input is not implemented yet."""
from typing import Any, Optional, Sequence

import torch

from ..attention_backend import AttentionMetadata
from ..model_config import ModelConfig
from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class MllamaInputProcessor(BaseMultimodalInputProcessor):
    image_size = 560


@register_auto_model("MllamaForConditionalGeneration")
@register_input_processor(
    MllamaInputProcessor,
    model_type="mllama",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={"image": "<|image|>"}))
class MllamaModel(MultimodalModelMixin, DecoderModelForCausalLM):
    encoder_attention_backends = {
        "vision": FixedEncoderAttention(),  # expect: DL104
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__(self.text_model_config(model_config))
        self.multimodal_model_config = model_config

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: Optional[torch.Tensor] = None,
                position_ids: Optional[torch.Tensor] = None,
                inputs_embeds: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        if self.multimodal_items(multimodal_params, "image"):
            raise NotImplementedError("Mllama vision input is not implemented yet")
        return super().forward(attn_metadata,
                               input_ids=input_ids,
                               position_ids=position_ids,
                               inputs_embeds=inputs_embeds)
