"""Reference backend: PyTorch SDPA, one sequence at a time, no KV cache."""
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from .interface import AttentionBackend, AttentionMetadata, PredefinedAttentionMask, kv_cache_quant_algo


@dataclass(kw_only=True)
class VanillaAttentionMetadata(AttentionMetadata):
    """The reference backend needs nothing beyond the base fields."""


class VanillaAttention(AttentionBackend[VanillaAttentionMetadata]):
    Metadata = VanillaAttentionMetadata

    def _split_heads(self, x: torch.Tensor, num_heads: int) -> torch.Tensor:
        # (seq, heads * head_dim) -> (heads, seq, head_dim)
        return x.view(x.shape[0], num_heads, self.head_dim).transpose(0, 1)

    def forward(self,
                q: torch.Tensor,
                k: torch.Tensor,
                v: torch.Tensor,
                metadata: VanillaAttentionMetadata,
                *,
                attention_mask: PredefinedAttentionMask = PredefinedAttentionMask.CAUSAL,
                **kwargs: Any) -> torch.Tensor:
        if metadata.kv_cache_manager is not None and metadata.num_generations > 0:
            raise NotImplementedError("the reference backend does not read a KV cache")
        if kv_cache_quant_algo(self.quant_config):
            raise ValueError("the reference backend cannot apply a KV-cache quantization")
        # Segment boundaries come from the host: a CUDA graph replay would reuse the captured ones.
        is_causal = attention_mask == PredefinedAttentionMask.CAUSAL
        outputs = []
        offset = 0
        for seq_len in metadata.seq_lens.tolist():
            end = offset + seq_len
            out = F.scaled_dot_product_attention(
                self._split_heads(q[offset:end], self.num_heads),
                self._split_heads(k[offset:end], self.num_kv_heads),
                self._split_heads(v[offset:end], self.num_kv_heads),
                is_causal=is_causal,
                scale=self.scale,
                enable_gqa=self.num_kv_heads != self.num_heads,
            )
            outputs.append(out.transpose(0, 1).reshape(seq_len, self.num_heads * self.head_dim))
            offset = end
        return torch.cat(outputs, dim=0)
