"""Base classes every attention backend builds on."""
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, Optional, TypeVar

import torch


def default_device() -> torch.device:
    """Where metadata buffers live: the GPU when there is one (the stand-in also runs on CPU)."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def kv_cache_quant_algo(quant_config: Optional[Any]) -> Optional[str]:
    """The KV-cache quantization a config asks for ("FP8", ...), or None."""
    return getattr(quant_config, "kv_cache_quant_algo", None)


class PredefinedAttentionMask(str, Enum):
    """Masks a backend can build itself instead of receiving a tensor."""

    CAUSAL = "causal"
    FULL = "full"


@dataclass(kw_only=True)
class AttentionMetadata:
    """Per-step batch description shared by all attention layers of a model or encoder."""

    # Capacity the buffers are sized for.
    max_num_requests: int
    max_num_tokens: int
    # None for encoders: they attend over the current tokens only.
    kv_cache_manager: Optional[Any] = None
    mapping: Optional[Any] = None
    # Query length of each sequence, on the host; context sequences come first.
    seq_lens: Optional[torch.Tensor] = None
    num_contexts: int = 0
    position_ids: Optional[torch.Tensor] = None
    request_ids: Optional[list[int]] = None
    prompt_lens: Optional[list[int]] = None
    is_cuda_graph: bool = field(default=False, repr=False)

    # Derived counts, refreshed by on_update() so the forward pass never syncs.
    _num_ctx_tokens: int = field(init=False, default=0, repr=False)
    _num_tokens: int = field(init=False, default=0, repr=False)

    def __post_init__(self) -> None:
        self.on_update()

    def on_update(self) -> None:
        if self.seq_lens is None:
            self._num_ctx_tokens = 0
            self._num_tokens = 0
            return
        self._num_ctx_tokens = int(self.seq_lens[:self.num_contexts].sum())
        self._num_tokens = int(self.seq_lens.sum())

    @property
    def num_seqs(self) -> int:
        return 0 if self.seq_lens is None else int(self.seq_lens.shape[0])

    @property
    def num_generations(self) -> int:
        return self.num_seqs - self.num_contexts

    @property
    def context_lens(self) -> torch.Tensor:
        return self.seq_lens[:self.num_contexts]

    @property
    def num_ctx_tokens(self) -> int:
        return self._num_ctx_tokens

    @property
    def num_tokens(self) -> int:
        return self._num_tokens

    def prepare(self) -> None:
        """Hook run once per step, after `seq_lens` and `num_contexts` are set."""
        self.on_update()


TMetadata = TypeVar("TMetadata", bound=AttentionMetadata)


class AttentionBackend(Generic[TMetadata]):
    """A kernel wrapper; `Metadata` names the metadata class its forward expects."""

    Metadata: type[TMetadata] = AttentionMetadata  # type: ignore[assignment]

    def __init__(self,
                 layer_idx: int,
                 num_heads: int,
                 head_dim: int,
                 num_kv_heads: Optional[int] = None,
                 quant_config: Optional[Any] = None,
                 q_scaling: Optional[float] = None,
                 **kwargs: Any) -> None:
        self.layer_idx = layer_idx
        self.num_heads = num_heads
        self.head_dim = head_dim
        self.num_kv_heads = num_kv_heads or num_heads
        self.quant_config = quant_config
        self.q_scaling = q_scaling or 1.0

    @property
    def scale(self) -> float:
        return 1.0 / (self.q_scaling * self.head_dim**0.5)

    def forward(self,
                q: torch.Tensor,
                k: torch.Tensor,
                v: torch.Tensor,
                metadata: TMetadata,
                *,
                attention_mask: PredefinedAttentionMask = PredefinedAttentionMask.CAUSAL,
                **kwargs: Any) -> torch.Tensor:
        """Attend `q` (num_tokens, num_heads * head_dim) over `k`/`v`; same layout out."""
        raise NotImplementedError

    @classmethod
    def support_fused_qkv(cls) -> bool:
        return False

    @classmethod
    def support_fused_rope(cls) -> bool:
        return False
