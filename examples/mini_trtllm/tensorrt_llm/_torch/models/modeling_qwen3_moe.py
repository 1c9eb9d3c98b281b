"""Qwen3 MoE: a text-only model (no encoders) whose MoE code reuses backend-like names."""
from typing import Any, get_args

import torch
import torch.nn.functional as F
from torch import nn

from ...llmapi.llm_args import BACKEND_FLASHINFER, EncoderAttentionBackend
from ...logger import logger
from ..model_config import ModelConfig
from .modeling_utils import DecoderLayer, DecoderModelForCausalLM, GatedMLP, register_auto_model


def _check_attn_backend(model_config: ModelConfig) -> None:
    backend = model_config.attn_backend
    if backend not in get_args(EncoderAttentionBackend):
        raise ValueError(f"attn_backend must be one of VANILLA, TRTLLM, FLASHINFER, got {backend}")


class Qwen3MoeSparseBlock(nn.Module):
    """Top-k routed experts; the routing precision depends on the MoE kernel."""

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.top_k = cfg.num_experts_per_tok
        self.gate = nn.Linear(cfg.hidden_size, cfg.num_experts, bias=False)
        self.experts = nn.ModuleList(
            GatedMLP(cfg.hidden_size, cfg.moe_intermediate_size) for _ in range(cfg.num_experts))
        if model_config.moe_backend == "TRTLLM":
            # The fused TRTLLM MoE kernel routes in fp32.
            self.routing_dtype = torch.float32
        else:
            self.routing_dtype = model_config.torch_dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.gate(x).to(self.routing_dtype)
        weights, experts = torch.topk(F.softmax(logits, dim=-1), self.top_k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        out = torch.zeros_like(x)
        for expert_id in experts.unique().tolist():
            token_idx, slot = torch.where(experts == expert_id)
            out.index_add_(0, token_idx,
                           self.experts[expert_id](x[token_idx]) * weights[token_idx, slot, None])
        return out


class Qwen3MoeDecoderLayer(DecoderLayer):

    def build_mlp(self, model_config: ModelConfig) -> nn.Module:
        return Qwen3MoeSparseBlock(model_config)


@register_auto_model("Qwen3MoeForCausalLM")
class Qwen3MoeForCausalLM(DecoderModelForCausalLM):
    """Qwen3 MoE for causal LM.

    Tested on the FLASHINFER and TRTLLM backends; the MoE kernels are chosen separately
    through `moe_backend`.
    """

    layer_cls = Qwen3MoeDecoderLayer

    def __init__(self, model_config: ModelConfig) -> None:
        _check_attn_backend(model_config)
        super().__init__(model_config)
        if model_config.attn_backend == BACKEND_FLASHINFER:
            logger.info("Applied model defaults: attn_backend FLASHINFER")

    @classmethod
    def get_model_defaults(cls, llm_args: Any) -> dict[str, Any]:
        # TRTLLM is the default attention backend; this model only changes the MoE kernels.
        return {"moe_backend": "TRTLLM"}
