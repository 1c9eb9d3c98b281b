"""Backend lookup by name."""
from typing import Any, Optional

from ...llmapi.llm_args import BACKEND_TRTLLM, EncoderAttentionBackend
from ...logger import logger
from .flashinfer import FlashInferAttention
from .interface import AttentionBackend
from .trtllm import TrtllmAttention
from .vanilla import VanillaAttention

# Keyed by the shared Literal, so a key that is not a backend name is a type error.
_BACKENDS: dict[EncoderAttentionBackend, type[AttentionBackend]] = {
    "VANILLA": VanillaAttention,
    "TRTLLM": TrtllmAttention,
    "FLASHINFER": FlashInferAttention,
}


def get_attention_backend(backend_name: EncoderAttentionBackend) -> type[AttentionBackend]:
    """Backend class for `backend_name` (any case); unknown names fall back to the default."""
    backend_cls = _BACKENDS.get(backend_name.upper())
    if backend_cls is None:
        logger.warning(f"Unknown attention backend {backend_name!r}; "
                       f"falling back to {BACKEND_TRTLLM}")
        return _BACKENDS[BACKEND_TRTLLM]
    return backend_cls


def create_attention(backend_name: EncoderAttentionBackend,
                     layer_idx: int,
                     num_heads: int,
                     head_dim: int,
                     num_kv_heads: Optional[int] = None,
                     quant_config: Optional[Any] = None,
                     q_scaling: Optional[float] = None,
                     **kwargs: Any) -> AttentionBackend:
    attn_cls = get_attention_backend(backend_name)
    return attn_cls(layer_idx,
                    num_heads,
                    head_dim,
                    num_kv_heads,
                    quant_config=quant_config,
                    q_scaling=q_scaling,
                    **kwargs)
