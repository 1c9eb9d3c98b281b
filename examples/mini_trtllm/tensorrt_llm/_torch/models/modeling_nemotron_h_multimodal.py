"""Nemotron H multimodal: a RADIO vision encoder and a FastConformer audio encoder.

The audio encoder adds a relative-position bias to its attention scores as an
additive mask, written out eagerly, so its attention is fixed.
"""
from typing import Any, Optional, Sequence

import torch
from torch import nn

from ..attention_backend import AttentionMetadata
from ..model_config import ModelConfig
from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin
from .modeling_radio import RadioVisionModel
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class NemotronHMultimodalInputProcessor(BaseMultimodalInputProcessor):
    image_size = 512


class NemotronHAudioAttention(nn.Module):
    """Self-attention with a relative-position bias passed as an additive mask."""

    def __init__(self, hidden_size: int, num_heads: int, max_rel_pos: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.max_rel_pos = max_rel_pos
        self.linear_qkv = nn.Linear(hidden_size, 3 * hidden_size)
        self.linear_out = nn.Linear(hidden_size, hidden_size)
        self.rel_bias = nn.Embedding(2 * max_rel_pos + 1, num_heads)

    def _bias_mask(self, frames: int, device: torch.device) -> torch.Tensor:
        pos = torch.arange(frames, device=device)
        rel = (pos[None, :] - pos[:, None]).clamp(-self.max_rel_pos, self.max_rel_pos)
        return self.rel_bias(rel + self.max_rel_pos).permute(2, 0, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, frames, hidden = x.shape
        qkv = self.linear_qkv(x).view(batch, frames, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        scores = torch.matmul(q, k.transpose(-1, -2)) / self.head_dim**0.5
        probs = (scores + self._bias_mask(frames, x.device)).softmax(dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(batch, frames, hidden)
        return self.linear_out(out)


class NemotronHAudioEncoder(nn.Module):

    def __init__(self, audio_config: Any) -> None:
        super().__init__()
        hidden = audio_config.hidden_size
        self.subsampling = nn.Sequential(
            nn.Conv1d(audio_config.num_mel_bins, hidden, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv1d(hidden, hidden, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv1d(hidden, hidden, 3, stride=2, padding=1),
        )
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(audio_config.num_layers))
        self.attns = nn.ModuleList(
            NemotronHAudioAttention(hidden, audio_config.num_attention_heads,
                                    audio_config.max_rel_pos)
            for _ in range(audio_config.num_layers))
        self.ffns = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, 4 * hidden), nn.SiLU(),
                          nn.Linear(4 * hidden, hidden)) for _ in range(audio_config.num_layers))

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        x = self.subsampling(input_features.transpose(1, 2)).transpose(1, 2)
        for norm, attn, ffn in zip(self.norms, self.attns, self.ffns):
            x = x + attn(norm(x))
            x = x + ffn(x)
        return x


@register_auto_model("NemotronH_Nano_VL_V2")
@register_input_processor(
    NemotronHMultimodalInputProcessor,
    model_type="nemotron_h_multimodal",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<image>",
        "video": "<video>",
        "audio": "<so_embedding>",
    }))
class NemotronHMultimodalModel(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
        "audio": FixedEncoderAttention("relative-position bias passed as an attention mask"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        text_hidden = cfg.text_config.hidden_size
        self.model_config = model_config
        self.vision_model = RadioVisionModel(self.encoder_model_config(model_config, "vision"))
        self.mlp1 = nn.Sequential(
            nn.LayerNorm(cfg.vision_config.hidden_size * 4),
            nn.Linear(cfg.vision_config.hidden_size * 4, text_hidden),
            nn.GELU(),
            nn.Linear(text_hidden, text_hidden),
        )
        self.sound_encoder = NemotronHAudioEncoder(cfg.audio_config)
        self.sound_projection = nn.Linear(cfg.audio_config.hidden_size, text_hidden)
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.img_context_token_id, cfg.video_context_token_id,
                             cfg.sound_context_token_id)

    def _pixel_shuffle(self, x: torch.Tensor) -> torch.Tensor:
        # (batch, tokens, hidden) -> (batch, tokens / 4, hidden * 4)
        batch, tokens, hidden = x.shape
        side = int(tokens**0.5)
        x = x.view(batch, side // 2, 2, side // 2, 2, hidden).permute(0, 1, 3, 2, 4, 5)
        return x.reshape(batch, tokens // 4, hidden * 4)

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
                features = self._pixel_shuffle(self.vision_model(frames))
                mm_embeds.append(self.mlp1(features).flatten(0, 1))
        for item in self.multimodal_items(multimodal_params, "audio"):
            features = self.sound_encoder(item["input_features"].unsqueeze(0))
            mm_embeds.append(self.sound_projection(features).squeeze(0))
        inputs_embeds = self.fuse_input_embeds(input_ids, mm_embeds)
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)
