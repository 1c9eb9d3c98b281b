"""MiniCPM-V 4.6: a configurable SigLIP tower and a window merger that stays on SDPA."""
from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F
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


class MiniCPMVInputProcessor(BaseMultimodalInputProcessor):
    image_size = 448


class MiniCPMVVisionLayer(nn.Module):

    def __init__(self, model_config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.layer_norm1 = nn.LayerNorm(vcfg.hidden_size, eps=1e-6)
        self.self_attn = Attention(hidden_size=vcfg.hidden_size,
                                   num_attention_heads=vcfg.num_attention_heads,
                                   bias=True,
                                   layer_idx=layer_idx,
                                   config=model_config)
        self.layer_norm2 = nn.LayerNorm(vcfg.hidden_size, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(vcfg.hidden_size, vcfg.intermediate_size),
            nn.GELU(approximate="tanh"),
            nn.Linear(vcfg.intermediate_size, vcfg.hidden_size),
        )

    def forward(self, x: torch.Tensor, attn_metadata: AttentionMetadata) -> torch.Tensor:
        x = x + self.self_attn(self.layer_norm1(x),
                               attn_metadata,
                               attention_mask=PredefinedAttentionMask.FULL)
        return x + self.mlp(self.layer_norm2(x))


class MiniCPMVWindowMerger(nn.Module):
    """Compresses each window of patches into one token by attention from a learned query.

    The query attends over a handful of keys per window: a backend launch per window
    costs more than the attention itself, so this stays on SDPA on purpose.
    """

    def __init__(self, hidden_size: int, num_heads: int, window: int, out_size: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.window_tokens = window * window
        self.query = nn.Parameter(torch.zeros(1, 1, hidden_size))
        self.q_proj = nn.Linear(hidden_size, hidden_size)
        self.kv_proj = nn.Linear(hidden_size, 2 * hidden_size)
        self.out_proj = nn.Linear(hidden_size, out_size)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], x.shape[1], self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (patches, hidden) in window-major order
        windows = x.view(-1, self.window_tokens, x.shape[-1])
        q = self._heads(self.q_proj(self.query.expand(windows.shape[0], -1, -1)))
        k, v = (self._heads(t) for t in self.kv_proj(windows).chunk(2, dim=-1))
        # declint: ignore[DL101] window merger stays on SDPA on purpose (support table)
        out = F.scaled_dot_product_attention(q, k, v)
        return self.out_proj(out.transpose(1, 2).reshape(windows.shape[0], -1))


class MiniCPMVVisionModel(nn.Module, MultimodalEncoderMixin):

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata
        self.window = vcfg.merge_window
        self.grid = vcfg.image_size // vcfg.patch_size
        self.patch_embedding = nn.Conv2d(3,
                                         vcfg.hidden_size,
                                         kernel_size=vcfg.patch_size,
                                         stride=vcfg.patch_size)
        self.position_embedding = nn.Embedding(self.grid * self.grid, vcfg.hidden_size)
        self.layers = nn.ModuleList(
            MiniCPMVVisionLayer(model_config, layer_idx)
            for layer_idx in range(vcfg.num_hidden_layers))
        self.merger = MiniCPMVWindowMerger(vcfg.hidden_size, vcfg.num_attention_heads,
                                           self.window, vcfg.out_hidden_size)

    def _window_major(self, x: torch.Tensor) -> torch.Tensor:
        w, n = self.window, self.grid // self.window
        x = x.view(n, w, n, w, -1).permute(0, 2, 1, 3, 4)
        return x.reshape(self.grid * self.grid, -1)

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        x = self.patch_embedding(pixel_values.unsqueeze(0)).flatten(2).transpose(1, 2)[0]
        x = x + self.position_embedding.weight
        attn_metadata = self.prepare_attn_metadata([x.shape[0]])
        for layer in self.layers:
            x = layer(x, attn_metadata)
        return self.merger(self._window_major(x))


@register_auto_model("MiniCPMV46ForCausalLM")
@register_input_processor(
    MiniCPMVInputProcessor,
    model_type="minicpmv",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "(<image>./</image>)",
        "video": "(<video>./</video>)",
    }))
class MiniCPMV46Model(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.vpm = MiniCPMVVisionModel(self.encoder_model_config(model_config, "vision"))
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
                mm_embeds.extend(self.vpm(frame) for frame in frames)
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
