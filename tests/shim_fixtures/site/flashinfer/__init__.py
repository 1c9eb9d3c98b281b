"""A stand-in for the `flashinfer` package: the ragged prefill wrapper, computed with torch SDPA.

Tests (and the GPU benchmark) put `tests/shim_fixtures/site` on sys.path to make FlashInfer
"importable" where the real package is not installed. Only what the demo backend calls exists;
anything else raises AttributeError, as a version skew would.
"""

from __future__ import annotations

from typing import Any

import torch

__version__ = "0.0.0+declint.stub"


class BatchPrefillWithRaggedKVCacheWrapper:
    def __init__(self, workspace_buffer: torch.Tensor, kv_layout: str = "NHD") -> None:
        if kv_layout != "NHD":
            raise ValueError(f"unsupported kv_layout {kv_layout}")
        self._indptr: list[int] = []
        self._causal = False

    def plan(
        self,
        qo_indptr: torch.Tensor,
        kv_indptr: torch.Tensor,
        num_qo_heads: int,
        num_kv_heads: int,
        head_dim: int,
        *,
        causal: bool = False,
        q_data_type: Any = None,
    ) -> None:
        self._indptr = [int(i) for i in qo_indptr.tolist()]
        self._heads = (num_qo_heads, num_kv_heads)
        self._causal = causal

    def run(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # q: (tokens, heads, head_dim), NHD.
        outputs = []
        for start, end in zip(self._indptr[:-1], self._indptr[1:], strict=True):
            out = torch.nn.functional.scaled_dot_product_attention(
                q[start:end].transpose(0, 1),
                k[start:end].transpose(0, 1),
                v[start:end].transpose(0, 1),
                is_causal=self._causal,
                enable_gqa=self._heads[0] != self._heads[1],
            )
            outputs.append(out.transpose(0, 1))
        return torch.cat(outputs, dim=0)
