"""Cosmos3: the Qwen3-VL architecture trained for physical-world video understanding.

The vision tower and its encoder declaration are inherited from `Qwen3VLModel`.
"""
import torch

from .modeling_qwen3vl import Qwen3VLInputProcessor, Qwen3VLModel
from .modeling_utils import (MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class Cosmos3InputProcessor(Qwen3VLInputProcessor):
    """Videos are sampled at a fixed rate before patching."""

    frames_per_clip = 16

    def preprocess(self, modality: str, item: torch.Tensor) -> dict[str, torch.Tensor]:
        if modality == "video" and item.shape[0] > self.frames_per_clip:
            index = torch.linspace(0, item.shape[0] - 1, self.frames_per_clip).long()
            item = item[index]
        return super().preprocess(modality, item)


@register_auto_model("Cosmos3ForConditionalGeneration")
@register_input_processor(
    Cosmos3InputProcessor,
    model_type="cosmos3",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<|vision_start|><|image_pad|><|vision_end|>",
        "video": "<|vision_start|><|video_pad|><|vision_end|>",
    }))
class Cosmos3Model(Qwen3VLModel):
    supports_encoder_cache = True
