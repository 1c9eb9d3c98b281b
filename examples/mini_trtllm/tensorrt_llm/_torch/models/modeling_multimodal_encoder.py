"""Encoders that run their attention on a TensorRT-LLM backend."""
from typing import Optional

import torch

from ..attention_backend import AttentionMetadata


class MultimodalEncoderMixin:
    """Owns the encoder's attention metadata.

    The encoder sets `metadata_cls` from the same config its attention layers are
    built from; the engine calls `setup_attn_metadata()` after load.
    """

    metadata_cls: type[AttentionMetadata]
    attn_metadata: Optional[AttentionMetadata] = None

    def setup_attn_metadata(self, max_num_requests: int, max_num_tokens: int) -> None:
        self.attn_metadata = self.metadata_cls(max_num_requests=max_num_requests,
                                               max_num_tokens=max_num_tokens,
                                               kv_cache_manager=None)

    def prepare_attn_metadata(self, seq_lens: list[int]) -> AttentionMetadata:
        """Describe one encoder call: every item is a context sequence."""
        if self.attn_metadata is None:
            raise RuntimeError(f"{type(self).__name__}.setup_attn_metadata() was not called")
        self.attn_metadata.seq_lens = torch.tensor(seq_lens, dtype=torch.int32)
        self.attn_metadata.num_contexts = len(seq_lens)
        self.attn_metadata.prepare()
        return self.attn_metadata
