"""TensorRT-LLM fused attention: packed QKV into the C++ attention op."""
from dataclasses import dataclass
from typing import Any, Optional

import torch

from .interface import AttentionBackend, AttentionMetadata, PredefinedAttentionMask, default_device

# The real package registers torch.ops.trtllm.attention from its C++ library.
_HAS_TRTLLM_OPS = False

# Request types as the C++ op numbers them.
_CONTEXT_REQUEST = 0
_GENERATION_REQUEST = 1


@dataclass(kw_only=True)
class TrtllmAttentionMetadata(AttentionMetadata):
    """Most runtime fields are buffers created in __post_init__ and filled in prepare()."""

    workspace: Optional[torch.Tensor] = None
    max_seq_len: Optional[int] = None
    use_paged_context_fmha: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kv_lens_cuda = torch.zeros(self.max_num_requests, dtype=torch.int32, device=default_device())
        self.host_request_types = torch.zeros(self.max_num_requests, dtype=torch.int32)
        self.max_ctx_seq_len = 0
        self.max_gen_seq_len = 0
        if self.workspace is None:
            self.workspace = torch.empty((0, ), dtype=torch.int8, device=default_device())

    def _cached_token_lens(self) -> torch.Tensor:
        if self.kv_cache_manager is None or self.request_ids is None:
            return torch.zeros(self.num_seqs, dtype=torch.int32)
        return torch.tensor(
            [self.kv_cache_manager.get_num_cached_tokens(r) for r in self.request_ids],
            dtype=torch.int32)

    def prepare(self) -> None:
        super().prepare()
        num_seqs = self.num_seqs
        seq_lens = self.seq_lens.to(torch.int32)
        kv_lens = seq_lens + self._cached_token_lens()
        self.kv_lens_cuda[:num_seqs].copy_(kv_lens, non_blocking=True)
        self.host_request_types[:self.num_contexts].fill_(_CONTEXT_REQUEST)
        self.host_request_types[self.num_contexts:num_seqs].fill_(_GENERATION_REQUEST)
        ctx_kv_lens = kv_lens[:self.num_contexts]
        gen_kv_lens = kv_lens[self.num_contexts:]
        self.max_ctx_seq_len = int(ctx_kv_lens.max()) if ctx_kv_lens.numel() else 0
        self.max_gen_seq_len = int(gen_kv_lens.max()) if gen_kv_lens.numel() else 0
        self.max_seq_len = max(self.max_seq_len or 0, self.max_ctx_seq_len, self.max_gen_seq_len)


class TrtllmAttention(AttentionBackend[TrtllmAttentionMetadata]):
    Metadata = TrtllmAttentionMetadata

    def forward(self,
                q: torch.Tensor,
                k: torch.Tensor,
                v: torch.Tensor,
                metadata: TrtllmAttentionMetadata,
                *,
                attention_mask: PredefinedAttentionMask = PredefinedAttentionMask.CAUSAL,
                **kwargs: Any) -> torch.Tensor:
        # The fused kernel reads one packed QKV buffer. Without the C++ op (this stand-in),
        # the same call is computed with SDPA over a block-diagonal mask built on the device
        # from kv_lens_cuda, so it needs no host sync and replays correctly in a CUDA graph.
        qkv = torch.cat([q, k, v], dim=-1)
        if not _HAS_TRTLLM_OPS:
            return _fused_attention_reference(self, qkv, metadata,
                                              attention_mask == PredefinedAttentionMask.CAUSAL)
        output = q.new_empty(metadata.num_tokens, self.num_heads * self.head_dim)
        torch.ops.trtllm.attention(
            qkv,
            output,
            metadata.workspace,
            metadata.seq_lens,
            metadata.kv_lens_cuda,
            metadata.host_request_types,
            metadata.num_contexts,
            metadata.max_ctx_seq_len,
            metadata.max_seq_len,
            self.layer_idx,
            self.num_heads,
            self.num_kv_heads,
            self.head_dim,
            self.scale,
            attention_mask == PredefinedAttentionMask.CAUSAL,
        )
        return output

    @classmethod
    def support_fused_qkv(cls) -> bool:
        return True

    @classmethod
    def support_fused_rope(cls) -> bool:
        return True


def _fused_attention_reference(backend: TrtllmAttention, qkv: torch.Tensor,
                               metadata: TrtllmAttentionMetadata, causal: bool) -> torch.Tensor:
    """What the fused op computes for context requests without a KV cache (encoders)."""
    q_size = backend.num_heads * backend.head_dim
    kv_size = backend.num_kv_heads * backend.head_dim
    q, k, v = qkv.split([q_size, kv_size, kv_size], dim=-1)
    num_tokens = metadata.num_tokens
    num_seqs = metadata.num_seqs
    lens = metadata.kv_lens_cuda[:num_seqs]
    segment = torch.repeat_interleave(torch.arange(num_seqs, device=lens.device), lens,
                                      output_size=num_tokens)
    mask = segment[:, None] == segment[None, :]
    if causal:
        mask = mask.tril()
    out = torch.nn.functional.scaled_dot_product_attention(
        q.view(num_tokens, backend.num_heads, backend.head_dim).transpose(0, 1),
        k.view(num_tokens, backend.num_kv_heads, backend.head_dim).transpose(0, 1),
        v.view(num_tokens, backend.num_kv_heads, backend.head_dim).transpose(0, 1),
        attn_mask=mask,
        scale=backend.scale,
        enable_gqa=backend.num_kv_heads != backend.num_heads,
    )
    return out.transpose(0, 1).reshape(num_tokens, q_size)
