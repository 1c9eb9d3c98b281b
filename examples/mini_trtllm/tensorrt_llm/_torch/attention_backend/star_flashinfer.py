"""Star attention (older releases): context blocks attend to an anchor block, then FlashInfer.

Its metadata class was split off `AttentionMetadata` rather than FlashInfer's, so the fields the
FlashInfer wrappers need are not all there.
"""
from dataclasses import dataclass
from typing import Any, Optional

import torch

from .interface import AttentionBackend, AttentionMetadata, PredefinedAttentionMask


@dataclass(kw_only=True)
class StarAttentionMetadata(AttentionMetadata):
    """Anchor-block bookkeeping; sets its counters in prepare()."""

    block_size: int = 2048
    anchor_size: int = 2048

    def prepare(self) -> None:
        super().prepare()
        self.num_blocks = (self.num_ctx_tokens + self.block_size - 1) // self.block_size
        self.anchor_tokens = min(self.anchor_size, self.num_ctx_tokens)


class StarAttention(AttentionBackend[StarAttentionMetadata]):
    Metadata = StarAttentionMetadata

    def forward(self,
                q: torch.Tensor,
                k: torch.Tensor,
                v: torch.Tensor,
                metadata: StarAttentionMetadata,
                *,
                attention_mask: PredefinedAttentionMask = PredefinedAttentionMask.CAUSAL,
                **kwargs: Any) -> torch.Tensor:
        # Guarded reads are fine: the attribute may or may not exist.
        page_size: Optional[int] = getattr(metadata, "page_size", None)
        if hasattr(metadata, "paged_kv_indices") and page_size:
            del metadata.paged_kv_indices  # only the FlashInfer metadata caches these
        blocks = metadata.num_blocks
        layout = metadata.kv_layout  # expect: DL105
        return self._anchored_attention(q, k, v, blocks, metadata.anchor_tokens, layout)

    def _anchored_attention(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, blocks: int,
                            anchor_tokens: int, layout: str) -> torch.Tensor:
        shape = (-1, self.num_heads, self.head_dim) if layout == "NHD" else (self.num_heads, -1, self.head_dim)
        scores = q.view(shape) @ k.view(shape).transpose(-1, -2) * self.scale
        return (scores.softmax(-1) @ v.view(shape)).reshape(q.shape)
