"""HyperCLOVAX-SEED Vision: the LLaVA-NeXT architecture with a C-Abstractor projector."""
from typing import Any

import torch
from torch import nn

from .modeling_llava_next import LlavaNextModel
from .modeling_utils import register_auto_model


class HCXCAbstractor(nn.Module):
    """Convolutional projector: pools the patch grid before projecting into the LLM."""

    def __init__(self, in_size: int, out_size: int, num_queries_side: int) -> None:
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_size, in_size, kernel_size=3, padding=1),
            nn.SiLU(),
            nn.AdaptiveAvgPool2d(num_queries_side),
        )
        self.proj = nn.Linear(in_size, out_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, hidden = x.shape
        side = int(tokens**0.5)
        grid = x.transpose(1, 2).reshape(batch, hidden, side, side)
        return self.proj(self.conv(grid).flatten(2).transpose(1, 2))


@register_auto_model("HCXVisionForCausalLM")
class HCXVisionModel(LlavaNextModel):  # expect: DL102

    def build_projector(self, cfg: Any) -> nn.Module:
        return HCXCAbstractor(cfg.vision_config.hidden_size, cfg.text_config.hidden_size,
                              cfg.num_queries_side)
