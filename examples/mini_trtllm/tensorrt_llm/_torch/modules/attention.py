"""Self-attention layer: projections here, the kernel in the configured backend."""
from typing import Optional

import torch
from torch import nn

from ..attention_backend import AttentionMetadata, PredefinedAttentionMask
from ..attention_backend.utils import create_attention, get_attention_backend
from ..model_config import ModelConfig


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                         head_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotate q and k (tokens, heads * head_dim) by per-token cos/sin (tokens, head_dim)."""

    def rotate(x: torch.Tensor) -> torch.Tensor:
        x = x.view(x.shape[0], -1, head_dim)
        out = x * cos.unsqueeze(1) + _rotate_half(x) * sin.unsqueeze(1)
        return out.flatten(1)

    return rotate(q), rotate(k)


class Attention(nn.Module):
    """Multi-head (or grouped-query) attention whose kernel follows `config.attn_backend`."""

    def __init__(self,
                 *,
                 hidden_size: int,
                 num_attention_heads: int,
                 num_key_value_heads: Optional[int] = None,
                 head_dim: Optional[int] = None,
                 bias: bool = False,
                 layer_idx: int = 0,
                 q_scaling: Optional[float] = None,
                 config: ModelConfig) -> None:
        super().__init__()
        self.num_heads = num_attention_heads
        self.num_key_value_heads = num_key_value_heads or num_attention_heads
        self.head_dim = head_dim or hidden_size // num_attention_heads
        self.q_size = self.num_heads * self.head_dim
        self.kv_size = self.num_key_value_heads * self.head_dim
        self.layer_idx = layer_idx
        self.qkv_proj = nn.Linear(hidden_size, self.q_size + 2 * self.kv_size, bias=bias)
        self.o_proj = nn.Linear(self.q_size, hidden_size, bias=bias)

        self.attn_backend = config.attn_backend
        backend_cls = get_attention_backend(config.attn_backend)
        self.fused_rope = backend_cls.support_fused_rope()
        self.attn = create_attention(config.attn_backend,
                                     layer_idx,
                                     self.num_heads,
                                     self.head_dim,
                                     self.num_key_value_heads,
                                     quant_config=config.quant_config,
                                     q_scaling=q_scaling)

    def forward(self,
                hidden_states: torch.Tensor,
                attn_metadata: AttentionMetadata,
                *,
                attention_mask: PredefinedAttentionMask = PredefinedAttentionMask.CAUSAL,
                position_embeddings: Optional[tuple[torch.Tensor, torch.Tensor]] = None
                ) -> torch.Tensor:
        qkv = self.qkv_proj(hidden_states)
        q, k, v = qkv.split([self.q_size, self.kv_size, self.kv_size], dim=-1)
        if position_embeddings is not None:
            q, k = apply_rotary_pos_emb(q, k, *position_embeddings, self.head_dim)
        out = self.attn.forward(q, k, v, attn_metadata, attention_mask=attention_mask)
        return self.o_proj(out)
