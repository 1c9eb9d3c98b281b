"""Attention backends: one metadata class and one kernel wrapper per backend."""
from .flashinfer import FlashInferAttention, FlashInferAttentionMetadata
from .interface import AttentionBackend, AttentionMetadata, PredefinedAttentionMask
from .trtllm import TrtllmAttention, TrtllmAttentionMetadata
from .utils import create_attention, get_attention_backend
from .vanilla import VanillaAttention, VanillaAttentionMetadata

__all__ = [
    "AttentionBackend",
    "AttentionMetadata",
    "FlashInferAttention",
    "FlashInferAttentionMetadata",
    "PredefinedAttentionMask",
    "TrtllmAttention",
    "TrtllmAttentionMetadata",
    "VanillaAttention",
    "VanillaAttentionMetadata",
    "create_attention",
    "get_attention_backend",
]
