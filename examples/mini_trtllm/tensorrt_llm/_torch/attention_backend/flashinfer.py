"""FlashInfer backend: ragged prefill for encoders, paged prefill/decode for the LLM."""
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from .interface import (AttentionBackend, AttentionMetadata, PredefinedAttentionMask, default_device,
                        kv_cache_quant_algo)

_WORKSPACE_BYTES = 128 * 1024 * 1024


@dataclass(kw_only=True)
class FlashInferAttentionMetadata(AttentionMetadata):
    """Owns the FlashInfer wrappers; `plan()` must run before the first kernel call."""

    workspace_buffer: Optional[torch.Tensor] = None
    kv_layout: str = "NHD"

    _qo_indptr: Optional[torch.Tensor] = field(init=False, default=None, repr=False)
    _paged_kv_indptr: Optional[torch.Tensor] = field(init=False, default=None, repr=False)
    _paged_kv_indices: Optional[torch.Tensor] = field(init=False, default=None, repr=False)
    _paged_kv_last_page_len: Optional[torch.Tensor] = field(init=False,
                                                            default=None,
                                                            repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        device = default_device()
        if self.workspace_buffer is None:
            self.workspace_buffer = torch.empty(_WORKSPACE_BYTES, dtype=torch.uint8, device=device)
        self._qo_indptr = torch.zeros(self.max_num_requests + 1, dtype=torch.int32, device=device)
        self._paged_kv_indptr = torch.zeros(self.max_num_requests + 1,
                                            dtype=torch.int32,
                                            device=device)
        self._paged_kv_indices = torch.zeros(self.max_num_tokens, dtype=torch.int32, device=device)
        self._paged_kv_last_page_len = torch.zeros(self.max_num_requests,
                                                   dtype=torch.int32,
                                                   device=device)
        self._plan_key: Optional[tuple[Any, ...]] = None
        self._ragged_prefill_wrapper: Optional[Any] = None
        self._paged_prefill_wrapper: Optional[Any] = None
        self._decode_wrapper: Optional[Any] = None

    @property
    def page_size(self) -> int:
        return self.kv_cache_manager.tokens_per_block

    @property
    def qo_indptr(self) -> torch.Tensor:
        return self._qo_indptr[:self.num_seqs + 1]

    @property
    def paged_kv_indptr_prefill(self) -> torch.Tensor:
        return self._paged_kv_indptr[:self.num_contexts + 1]

    @property
    def paged_kv_indptr_decode(self) -> torch.Tensor:
        return self._paged_kv_indptr[self.num_contexts:self.num_seqs + 1]

    @property
    def paged_kv_indices(self) -> torch.Tensor:
        return self._paged_kv_indices

    @property
    def paged_kv_last_page_len(self) -> torch.Tensor:
        return self._paged_kv_last_page_len[:self.num_seqs]

    def prepare(self) -> None:
        super().prepare()
        seq_lens = self.seq_lens.to(torch.int32)
        self._qo_indptr[1:self.num_seqs + 1].copy_(torch.cumsum(seq_lens, 0), non_blocking=True)
        if self.kv_cache_manager is not None:
            block_ids = [self.kv_cache_manager.get_block_ids(r) for r in self.request_ids]
            num_blocks = torch.tensor([len(ids) for ids in block_ids], dtype=torch.int32)
            flat = torch.tensor([i for ids in block_ids for i in ids], dtype=torch.int32)
            total = torch.tensor([self.kv_cache_manager.get_num_tokens(r) for r in self.request_ids],
                                 dtype=torch.int32)
            self._paged_kv_indptr[1:self.num_seqs + 1].copy_(torch.cumsum(num_blocks, 0),
                                                             non_blocking=True)
            self._paged_kv_indices[:flat.numel()].copy_(flat, non_blocking=True)
            self._paged_kv_last_page_len[:self.num_seqs].copy_((total - 1) % self.page_size + 1,
                                                               non_blocking=True)
        # Shapes changed: the next forward has to plan again.
        self._plan_key = None

    def plan(self,
             num_heads: int,
             num_kv_heads: int,
             head_dim: int,
             q_dtype: torch.dtype,
             *,
             causal: bool) -> None:
        key = (num_heads, num_kv_heads, head_dim, q_dtype, causal)
        if key == self._plan_key:
            return
        import flashinfer  # imported lazily: the package is optional

        if self.kv_cache_manager is None:
            ragged = flashinfer.BatchPrefillWithRaggedKVCacheWrapper(self.workspace_buffer,
                                                                     self.kv_layout)
            ragged.plan(self.qo_indptr, self.qo_indptr, num_heads, num_kv_heads, head_dim,
                        causal=causal, q_data_type=q_dtype)
            self._ragged_prefill_wrapper = ragged
        else:
            prefill = flashinfer.BatchPrefillWithPagedKVCacheWrapper(self.workspace_buffer,
                                                                     self.kv_layout)
            prefill.plan(self.qo_indptr[:self.num_contexts + 1], self.paged_kv_indptr_prefill,
                         self.paged_kv_indices, self.paged_kv_last_page_len[:self.num_contexts],
                         num_heads, num_kv_heads, head_dim, self.page_size,
                         causal=causal, q_data_type=q_dtype)
            decode = flashinfer.BatchDecodeWithPagedKVCacheWrapper(self.workspace_buffer,
                                                                   self.kv_layout)
            decode.plan(self.paged_kv_indptr_decode, self.paged_kv_indices,
                        self.paged_kv_last_page_len[self.num_contexts:], num_heads, num_kv_heads,
                        head_dim, self.page_size, q_data_type=q_dtype)
            self._paged_prefill_wrapper = prefill
            self._decode_wrapper = decode
        self._plan_key = key

    def get_ragged_prefill_wrapper(self) -> Any:
        if self._ragged_prefill_wrapper is None:
            raise RuntimeError("plan() has not been called for a cache-free batch")
        return self._ragged_prefill_wrapper

    def get_paged_prefill_wrapper(self) -> Any:
        if self._paged_prefill_wrapper is None:
            raise RuntimeError("plan() has not been called for a paged batch")
        return self._paged_prefill_wrapper

    def get_decode_wrapper(self) -> Any:
        if self._decode_wrapper is None:
            raise RuntimeError("plan() has not been called for a paged batch")
        return self._decode_wrapper


class FlashInferAttention(AttentionBackend[FlashInferAttentionMetadata]):
    Metadata = FlashInferAttentionMetadata

    def forward(self,
                q: torch.Tensor,
                k: torch.Tensor,
                v: torch.Tensor,
                metadata: FlashInferAttentionMetadata,
                *,
                attention_mask: PredefinedAttentionMask = PredefinedAttentionMask.CAUSAL,
                **kwargs: Any) -> torch.Tensor:
        if metadata.kv_cache_manager is None and kv_cache_quant_algo(self.quant_config):
            raise ValueError("FlashInfer cannot apply a KV-cache quantization without a KV cache")
        if metadata.kv_layout != "NHD":
            raise ValueError(f"expected the NHD KV layout, got {metadata.kv_layout}")
        q = q.view(-1, self.num_heads, self.head_dim)
        k = k.view(-1, self.num_kv_heads, self.head_dim)
        v = v.view(-1, self.num_kv_heads, self.head_dim)
        metadata.plan(self.num_heads,
                      self.num_kv_heads,
                      self.head_dim,
                      q.dtype,
                      causal=attention_mask == PredefinedAttentionMask.CAUSAL)
        if metadata.kv_cache_manager is None:
            out = metadata.get_ragged_prefill_wrapper().run(q, k, v)
        else:
            kv_cache = metadata.kv_cache_manager.get_buffers(self.layer_idx)
            if kv_cache.shape[2] != metadata.page_size:
                raise ValueError("KV cache pages do not match the planned page size")
            num_ctx_tokens = metadata.num_ctx_tokens
            parts = []
            if metadata.num_contexts > 0:
                parts.append(metadata.get_paged_prefill_wrapper().run(q[:num_ctx_tokens], kv_cache))
            if metadata.num_generations > 0:
                parts.append(metadata.get_decode_wrapper().run(q[num_ctx_tokens:], kv_cache))
            out = torch.cat(parts, dim=0)
        return out.reshape(-1, self.num_heads * self.head_dim)
