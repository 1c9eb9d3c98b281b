"""User-facing arguments of the LLM API (the slice that concerns attention backends)."""
from dataclasses import dataclass
from typing import Literal, Optional, get_args

# The one shared list of attention-backend names. Every setting, default and
# declaration that names an attention backend is typed by it, so adding a
# backend here is the only edit needed to make it selectable.
EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]

# Literal-typed names for code that has to refer to one particular backend.
BACKEND_VANILLA: EncoderAttentionBackend = "VANILLA"
BACKEND_TRTLLM: EncoderAttentionBackend = "TRTLLM"
BACKEND_FLASHINFER: EncoderAttentionBackend = "FLASHINFER"

# MoE kernels live in another namespace that happens to reuse some of the words.
MoeBackend = Literal["CUTLASS", "TRTLLM", "VANILLA", "DEEPGEMM"]

# Visual-generation (diffusion) pipelines choose their own attention kernels.
VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]


@dataclass
class MultimodalConfig:
    """Settings of the multimodal encoders; encoder keys are "vision" and "audio"."""

    # Per-encoder attention backend; an omitted encoder keeps the model's default.
    encoder_attention_backend: Optional[dict[str, EncoderAttentionBackend]] = None
    # Text-only runs (benchmarks) skip building the encoders.
    disable_multimodal_encoder: bool = False
    # Replay the encoders' forward from CUDA graphs.
    enable_encoder_cuda_graph: bool = False

    def __post_init__(self) -> None:
        if self.encoder_attention_backend is None:
            return
        allowed = get_args(EncoderAttentionBackend)
        normalized: dict[str, EncoderAttentionBackend] = {}
        for encoder, backend in self.encoder_attention_backend.items():
            # The serving config accepts names case-insensitively.
            upper = backend.upper()
            if upper not in allowed:
                raise ValueError(
                    f"encoder_attention_backend[{encoder!r}] must be one of "
                    f"{', '.join(allowed)}, got {backend!r}")
            normalized[encoder] = upper
        self.encoder_attention_backend = normalized


@dataclass
class VisualGenConfig:
    """Diffusion pipelines; unrelated to the LLM's attention backends."""

    attention_backend: VisualGenAttentionBackend = "TORCH_SDPA"
    num_inference_steps: int = 50


@dataclass
class TorchLlmArgs:
    """Arguments of the PyTorch-backend LLM."""

    model: str = ""
    attn_backend: EncoderAttentionBackend = "TRTLLM"
    moe_backend: MoeBackend = "CUTLASS"
    max_batch_size: int = 64
    max_num_tokens: int = 8192
    multimodal_config: Optional[MultimodalConfig] = None
    visual_gen_config: Optional[VisualGenConfig] = None
