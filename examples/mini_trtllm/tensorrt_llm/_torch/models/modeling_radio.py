"""RADIO: a shared ViT vision encoder (no model of its own; multimodal models embed it)."""
import torch
from torch import nn

from ..model_config import ModelConfig


class RadioAttention(nn.Module):

    def __init__(self, hidden_size: int, num_heads: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size)
        self.proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = x.shape
        qkv = self.qkv(x).view(batch, seq, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)  # expect: DL101
        return self.proj(out.transpose(1, 2).reshape(batch, seq, hidden))


class RadioBlock(nn.Module):

    def __init__(self, hidden_size: int, num_heads: int, mlp_ratio: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden_size, eps=1e-6)
        self.attn = RadioAttention(hidden_size, num_heads)
        self.norm2 = nn.LayerNorm(hidden_size, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(hidden_size, int(hidden_size * mlp_ratio)),
            nn.GELU(),
            nn.Linear(int(hidden_size * mlp_ratio), hidden_size),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class RadioVisionModel(nn.Module):
    """ViT with a learned position grid interpolated to the input size and summary tokens."""

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.patch_size = vcfg.patch_size
        self.num_cls_tokens = vcfg.num_cls_tokens
        self.patch_generator = nn.Linear(3 * vcfg.patch_size**2, vcfg.hidden_size, bias=False)
        self.pos_grid = nn.Parameter(
            torch.zeros(1, vcfg.hidden_size, vcfg.max_grid_size, vcfg.max_grid_size))
        self.cls_token = nn.Parameter(torch.zeros(1, vcfg.num_cls_tokens, vcfg.hidden_size))
        self.blocks = nn.ModuleList(
            RadioBlock(vcfg.hidden_size, vcfg.num_attention_heads, vcfg.mlp_ratio)
            for _ in range(vcfg.num_hidden_layers))

    def _embed(self, pixel_values: torch.Tensor) -> torch.Tensor:
        batch, _, height, width = pixel_values.shape
        p = self.patch_size
        patches = pixel_values.unfold(2, p, p).unfold(3, p, p)
        patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(batch, -1, 3 * p * p)
        pos = nn.functional.interpolate(self.pos_grid,
                                        size=(height // p, width // p),
                                        mode="bilinear",
                                        align_corners=False)
        x = self.patch_generator(patches) + pos.flatten(2).transpose(1, 2)
        return torch.cat([self.cls_token.expand(batch, -1, -1), x], dim=1)

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self._embed(pixel_values)
        for block in self.blocks:
            x = block(x)
        return x[:, self.num_cls_tokens:]
