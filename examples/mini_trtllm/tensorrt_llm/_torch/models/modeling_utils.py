"""Model registries, their decorators, and the small decoder every demo model uses as its LLM."""
from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar

import torch
import torch.nn.functional as F
from torch import nn

from ..attention_backend import AttentionMetadata
from ..model_config import ModelConfig
from ..modules.attention import Attention

_T = TypeVar("_T", bound=type)

# Architecture name (config.architectures[0]) -> model class.
MODEL_CLASS_MAPPING: dict[str, type] = {}
# Model class name -> (encoder class, vision base model), for encoder-only serving.
MODEL_CLASS_VISION_ENCODER_MAPPING: dict[str, tuple[type, Optional[type]]] = {}
# Model class name -> how its prompts are turned into tokens and encoder inputs.
INPUT_PROCESSOR_REGISTRY: dict[str, "InputProcessorEntry"] = {}


@dataclass(frozen=True)
class MultimodalPlaceholderMetadata:
    """How media placeholders appear in a prompt; the keys of `placeholder_map` are modalities."""

    placeholder_map: dict[str, str]
    placeholder_placement: str = "before_text"
    placeholders_separator: str = "\n"


@dataclass(frozen=True)
class InputProcessorEntry:
    processor_cls: type
    model_type: str
    placeholder_metadata: Optional[MultimodalPlaceholderMetadata]


def register_auto_model(arch_name: str) -> Callable[[_T], _T]:

    def decorator(model_cls: _T) -> _T:
        MODEL_CLASS_MAPPING[arch_name] = model_cls
        return model_cls

    return decorator


def register_vision_encoder(encoder_cls: type,
                            vlm_base_model: Optional[type] = None) -> Callable[[_T], _T]:

    def decorator(model_cls: _T) -> _T:
        MODEL_CLASS_VISION_ENCODER_MAPPING[model_cls.__name__] = (encoder_cls, vlm_base_model)
        return model_cls

    return decorator


def register_input_processor(
        processor_cls: type,
        model_type: str,
        placeholder_metadata: Optional[MultimodalPlaceholderMetadata] = None
) -> Callable[[_T], _T]:

    def decorator(model_cls: _T) -> _T:
        INPUT_PROCESSOR_REGISTRY[model_cls.__name__] = InputProcessorEntry(
            processor_cls, model_type, placeholder_metadata)
        return model_cls

    return decorator


class BaseMultimodalInputProcessor:
    """Turns a prompt and its media into token ids plus per-modality encoder inputs."""

    image_size: int = 448

    def __init__(self,
                 model_path: str,
                 config: Any,
                 tokenizer: Any,
                 trust_remote_code: bool = True) -> None:
        self.model_path = model_path
        self.config = config
        self.tokenizer = tokenizer
        self.trust_remote_code = trust_remote_code

    def preprocess(self, modality: str, item: torch.Tensor) -> dict[str, torch.Tensor]:
        """One media item to encoder inputs; models override for their own layouts."""
        if modality == "audio":
            return {"input_features": item.float()}
        # Images are (C, H, W); videos are (T, C, H, W) and resize frame by frame.
        frames = item.float() if item.dim() == 4 else item.float().unsqueeze(0)
        frames = F.interpolate(frames,
                               size=(self.image_size, self.image_size),
                               mode="bilinear",
                               align_corners=False) / 255.0
        return {"pixel_values": frames if item.dim() == 4 else frames.squeeze(0)}

    def __call__(self, inputs: dict[str, Any],
                 sampling_params: Any) -> tuple[list[int], dict[str, Any]]:
        token_ids = self.tokenizer.encode(inputs["prompt"])
        media = inputs.get("multi_modal_data") or {}
        processed = {
            modality: [self.preprocess(modality, item) for item in items]
            for modality, items in media.items()
        }
        return token_ids, {"multimodal_data": processed}


class GatedMLP(nn.Module):

    def __init__(self, hidden_size: int, intermediate_size: int, bias: bool = False) -> None:
        super().__init__()
        self.gate_up_proj = nn.Linear(hidden_size, 2 * intermediate_size, bias=bias)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


class DecoderLayer(nn.Module):

    def __init__(self, model_config: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.input_layernorm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.self_attn = Attention(hidden_size=cfg.hidden_size,
                                   num_attention_heads=cfg.num_attention_heads,
                                   num_key_value_heads=cfg.num_key_value_heads,
                                   layer_idx=layer_idx,
                                   config=model_config)
        self.post_attention_layernorm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.mlp = self.build_mlp(model_config)

    def build_mlp(self, model_config: ModelConfig) -> nn.Module:
        cfg = model_config.pretrained_config
        return GatedMLP(cfg.hidden_size, cfg.intermediate_size)

    def forward(self, hidden_states: torch.Tensor,
                attn_metadata: AttentionMetadata) -> torch.Tensor:
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states),
                                                       attn_metadata)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class DecoderModelForCausalLM(nn.Module):
    """Embeddings, a stack of decoder layers and the LM head."""

    layer_cls: type[DecoderLayer] = DecoderLayer

    def __init__(self, model_config: ModelConfig) -> None:
        super().__init__()
        cfg = model_config.pretrained_config
        self.model_config = model_config
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(
            self.layer_cls(model_config, layer_idx) for layer_idx in range(cfg.num_hidden_layers))
        self.norm = nn.RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def forward(self,
                attn_metadata: AttentionMetadata,
                input_ids: Optional[torch.Tensor] = None,
                position_ids: Optional[torch.Tensor] = None,
                inputs_embeds: Optional[torch.Tensor] = None,
                **kwargs: Any) -> torch.Tensor:
        hidden_states = self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds
        for layer in self.layers:
            hidden_states = layer(hidden_states, attn_metadata)
        return self.lm_head(self.norm(hidden_states))
