"""Gemma 4: a configurable SigLIP vision tower and a conformer audio encoder.

The audio encoder uses chunked local attention with a learned relative-position
bias, written out eagerly; no backend kernel takes that bias, so it is fixed.
"""
from typing import Any, Optional, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..attention_backend import AttentionMetadata, PredefinedAttentionMask
from ..attention_backend.utils import get_attention_backend
from ..model_config import ModelConfig
from ..modules.attention import Attention
from .modeling_multimodal_encoder import MultimodalEncoderMixin
from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin
from .modeling_utils import (BaseMultimodalInputProcessor, DecoderModelForCausalLM,
                             MultimodalPlaceholderMetadata, register_auto_model,
                             register_input_processor)


class Gemma4InputProcessor(BaseMultimodalInputProcessor):
    image_size = 896
    num_mel_bins = 128

    def preprocess(self, modality: str, item: torch.Tensor) -> dict[str, torch.Tensor]:
        if modality == "audio":
            # item: a log-mel spectrogram (frames, mel bins)
            return {"input_features": item.float()[:, :self.num_mel_bins]}
        return super().preprocess(modality, item)


class Gemma4VisionLayer(nn.Module):

    def __init__(self, model_config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.layer_norm1 = nn.LayerNorm(vcfg.hidden_size, eps=vcfg.layer_norm_eps)
        self.self_attn = Attention(hidden_size=vcfg.hidden_size,
                                   num_attention_heads=vcfg.num_attention_heads,
                                   bias=True,
                                   layer_idx=layer_idx,
                                   config=model_config)
        self.layer_norm2 = nn.LayerNorm(vcfg.hidden_size, eps=vcfg.layer_norm_eps)
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


class Gemma4VisionModel(nn.Module, MultimodalEncoderMixin):

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        vcfg = model_config.pretrained_config.vision_config
        self.model_config = model_config
        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata
        self.num_patches = (vcfg.image_size // vcfg.patch_size)**2
        self.patch_embedding = nn.Conv2d(3,
                                         vcfg.hidden_size,
                                         kernel_size=vcfg.patch_size,
                                         stride=vcfg.patch_size)
        self.position_embedding = nn.Embedding(self.num_patches, vcfg.hidden_size)
        self.layers = nn.ModuleList(
            Gemma4VisionLayer(model_config, layer_idx)
            for layer_idx in range(vcfg.num_hidden_layers))
        self.post_layernorm = nn.LayerNorm(vcfg.hidden_size, eps=vcfg.layer_norm_eps)

    def forward(self, pixel_values: torch.Tensor) -> torch.Tensor:
        # Tokens of all images are packed into one ragged batch.
        x = self.patch_embedding(pixel_values).flatten(2).transpose(1, 2)
        x = (x + self.position_embedding.weight).flatten(0, 1)
        attn_metadata = self.prepare_attn_metadata([self.num_patches] * pixel_values.shape[0])
        for layer in self.layers:
            x = layer(x, attn_metadata)
        return self.post_layernorm(x).view(pixel_values.shape[0], self.num_patches, -1)


class Gemma4AudioChunkedAttention(nn.Module):
    """Each frame attends within its chunk, plus a relative-position bias per head."""

    def __init__(self, hidden_size: int, num_heads: int, chunk_size: int) -> None:
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.chunk_size = chunk_size
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size, bias=False)
        self.rel_pos_bias = nn.Embedding(2 * chunk_size - 1, num_heads)
        self.out = nn.Linear(hidden_size, hidden_size, bias=False)
        offsets = torch.arange(chunk_size)
        self.register_buffer("rel_index",
                             offsets[None, :] - offsets[:, None] + chunk_size - 1,
                             persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, frames, hidden = x.shape
        pad = (-frames) % self.chunk_size
        x = F.pad(x, (0, 0, 0, pad))
        chunks = x.shape[1] // self.chunk_size
        qkv = self.qkv(x).view(batch, chunks, self.chunk_size, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.permute(3, 0, 1, 4, 2, 5).unbind(0)
        scores = torch.matmul(q, k.transpose(-1, -2)) / self.head_dim**0.5
        scores = scores + self.rel_pos_bias(self.rel_index).permute(2, 0, 1)
        out = torch.matmul(scores.softmax(dim=-1), v)
        out = out.permute(0, 1, 3, 2, 4).reshape(batch, chunks * self.chunk_size, hidden)
        return self.out(out[:, :frames])


class Gemma4AudioConformerBlock(nn.Module):

    def __init__(self, audio_config: Any) -> None:
        super().__init__()
        hidden = audio_config.hidden_size
        self.ffw_start = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, 4 * hidden),
                                       nn.SiLU(), nn.Linear(4 * hidden, hidden))
        self.attn_norm = nn.LayerNorm(hidden)
        self.attn = Gemma4AudioChunkedAttention(hidden, audio_config.num_attention_heads,
                                                audio_config.chunk_size)
        self.conv_norm = nn.LayerNorm(hidden)
        self.depthwise_conv = nn.Conv1d(hidden,
                                        hidden,
                                        kernel_size=audio_config.conv_kernel_size,
                                        padding=audio_config.conv_kernel_size // 2,
                                        groups=hidden)
        self.ffw_end = nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, 4 * hidden),
                                     nn.SiLU(), nn.Linear(4 * hidden, hidden))
        self.norm_out = nn.LayerNorm(hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + 0.5 * self.ffw_start(x)
        x = x + self.attn(self.attn_norm(x))
        x = x + self.depthwise_conv(self.conv_norm(x).transpose(1, 2)).transpose(1, 2)
        x = x + 0.5 * self.ffw_end(x)
        return self.norm_out(x)


class Gemma4AudioEncoder(nn.Module):

    def __init__(self, audio_config: Any) -> None:
        super().__init__()
        self.subsample = nn.Sequential(
            nn.Conv1d(audio_config.num_mel_bins, audio_config.hidden_size, 3, stride=2, padding=1),
            nn.GELU(),
            nn.Conv1d(audio_config.hidden_size, audio_config.hidden_size, 3, stride=2, padding=1),
        )
        self.blocks = nn.ModuleList(
            Gemma4AudioConformerBlock(audio_config)
            for _ in range(audio_config.num_hidden_layers))

    def forward(self, input_features: torch.Tensor) -> torch.Tensor:
        x = self.subsample(input_features.transpose(1, 2)).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        return x


@register_auto_model("Gemma4ForConditionalGeneration")
@register_input_processor(
    Gemma4InputProcessor,
    model_type="gemma4",
    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={
        "image": "<start_of_image>",
        "audio": "<start_of_audio>",
    }))
class Gemma4Model(MultimodalModelMixin, nn.Module):
    encoder_attention_backends = {
        "vision": ("VANILLA", "TRTLLM", "FLASHINFER"),
        "audio": FixedEncoderAttention("chunked local attention with relative-position bias"),
    }

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.llm = DecoderModelForCausalLM(self.text_model_config(model_config))
        self.mm_token_ids = (cfg.image_token_id, cfg.audio_token_id)
        self.build_encoders(model_config)

    def build_encoders(self, model_config: ModelConfig) -> None:
        cfg = model_config.pretrained_config
        text_hidden = cfg.text_config.hidden_size
        self.vision_tower = Gemma4VisionModel(self.encoder_model_config(model_config, "vision"))
        self.embed_vision = nn.Linear(cfg.vision_config.hidden_size, text_hidden, bias=False)
        self.audio_tower = Gemma4AudioEncoder(cfg.audio_config)
        self.embed_audio = nn.Linear(cfg.audio_config.hidden_size, text_hidden, bias=False)

    def encode(self, multimodal_params: Optional[Sequence[dict[str, Any]]]) -> list[torch.Tensor]:
        mm_embeds = []
        images = self.multimodal_items(multimodal_params, "image")
        if images:
            pixel_values = torch.stack([item["pixel_values"] for item in images])
            mm_embeds.extend(self.embed_vision(self.vision_tower(pixel_values)))
        for item in self.multimodal_items(multimodal_params, "audio"):
            features = item["input_features"].unsqueeze(0)
            mm_embeds.append(self.embed_audio(self.audio_tower(features)).squeeze(0))
        return mm_embeds

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: torch.Tensor,
                position_ids: Optional[torch.Tensor] = None,
                multimodal_params: Optional[Sequence[dict[str, Any]]] = None,
                **kwargs: Any) -> torch.Tensor:
        inputs_embeds = self.fuse_input_embeds(input_ids, self.encode(multimodal_params))
        return self.llm(attn_metadata, position_ids=position_ids, inputs_embeds=inputs_embeds)


@register_auto_model("Gemma4UnifiedForCausalLM")
class Gemma4UnifiedModel(Gemma4Model):
    """Early-fusion variant: image patches go straight into the LLM through one linear layer."""

    encoder_attention_backends = {}

    def build_encoders(self, model_config: ModelConfig) -> None:
        cfg = model_config.pretrained_config
        self.patch_size = cfg.patch_size
        self.patch_proj = nn.Linear(3 * cfg.patch_size**2, cfg.text_config.hidden_size)

    def encode(self, multimodal_params: Optional[Sequence[dict[str, Any]]]) -> list[torch.Tensor]:
        mm_embeds = []
        for item in self.multimodal_items(multimodal_params, "image"):
            patches = F.unfold(item["pixel_values"].unsqueeze(0),
                               kernel_size=self.patch_size,
                               stride=self.patch_size)
            mm_embeds.append(self.patch_proj(patches.squeeze(0).transpose(0, 1)))
        return mm_embeds
