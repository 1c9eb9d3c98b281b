"""Capabilities and shared plumbing of multimodal causal-LM models."""
import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, Optional, Sequence

import torch
from torch import nn

from ...llmapi.llm_args import EncoderAttentionBackend
from ..model_config import ModelConfig


@dataclass(frozen=True)
class FixedEncoderAttention:
    """Declares an encoder whose attention implementation cannot be switched.

    `reason` says why (Hugging Face tower, direct SDPA, relative-position bias, ...).
    It defaults to empty so that a bad declaration still imports; declint and the
    runtime shim both reject an empty reason.
    """

    reason: str = ""


class MultimodalModelMixin:
    """Mixin of every multimodal model: capability flags and embedding fusion."""

    supports_encoder_cache: ClassVar[bool] = False
    """Whether the forward path uses the persistent encoder cache."""

    supports_mm_encoder_item_scheduling: ClassVar[bool] = False
    """Whether encoder work can be scheduled item by item."""

    encoder_attention_backends: ClassVar[dict[str, tuple[EncoderAttentionBackend, ...]
                                              | FixedEncoderAttention]] = {}
    """Per encoder ("vision", "audio"): the selectable backends, or why it is fixed.

    Models must override this; the empty default here is not a declaration. An
    encoder-free subclass of a model with towers declares `{}` explicitly.
    """

    model_config: ModelConfig
    llm: nn.Module
    mm_token_ids: tuple[int, ...] = ()

    @staticmethod
    def text_model_config(model_config: ModelConfig) -> ModelConfig:
        text_config = getattr(model_config.pretrained_config, "text_config",
                              model_config.pretrained_config)
        return dataclasses.replace(model_config, pretrained_config=text_config)

    @classmethod
    def encoder_model_config(cls, model_config: ModelConfig, encoder: str) -> ModelConfig:
        """The config one encoder is built from: the LLM's, with the user's override applied.

        Runs before any weight is allocated, so a bad override fails here and not at
        the first forward.
        """
        mm_config = model_config.multimodal_config
        overrides = None if mm_config is None else mm_config.encoder_attention_backend
        requested = None if overrides is None else overrides.get(encoder)
        if requested is None:
            return model_config
        declared = cls.encoder_attention_backends.get(encoder)
        if declared is None:
            raise ValueError(f"{cls.__name__} has no {encoder} encoder to configure")
        if isinstance(declared, FixedEncoderAttention):
            raise ValueError(f"the {encoder} encoder of {cls.__name__} has fixed attention: "
                             f"{declared.reason}")
        if requested not in declared:
            raise ValueError(f"the {encoder} encoder of {cls.__name__} supports "
                             f"{', '.join(declared)}, not {requested}")
        return dataclasses.replace(model_config, attn_backend=requested)

    @staticmethod
    def multimodal_items(multimodal_params: Optional[Sequence[dict[str, Any]]],
                         modality: str) -> list[dict[str, torch.Tensor]]:
        """Items of one modality across the batch, in request order."""
        return [item for params in multimodal_params or () for item in params.get(modality, ())]

    def fuse_input_embeds(self, input_ids: torch.Tensor,
                          mm_embeds: Sequence[torch.Tensor]) -> torch.Tensor:
        """Token embeddings with the multimodal placeholder positions replaced by `mm_embeds`."""
        embed_tokens = self.llm.embed_tokens
        is_mm = torch.isin(input_ids, torch.tensor(self.mm_token_ids, device=input_ids.device))
        inputs_embeds = embed_tokens(input_ids.masked_fill(is_mm, 0))
        if mm_embeds:
            inputs_embeds[is_mm] = torch.cat(list(mm_embeds), dim=0).to(inputs_embeds.dtype)
        return inputs_embeds

    def load_weights(self, weights: dict[str, torch.Tensor], weight_mapper: Any = None) -> None:
        """Copy checkpoint tensors into the parameters of the same name.

        TensorRT-LLM's models each define their own (with a weight mapper); one here serves
        every stand-in model. Names not in the model are an error, as a checkpoint that does
        not fit the model must not load silently.
        """
        params = dict(self.named_parameters())  # type: ignore[attr-defined]
        unknown = sorted(set(weights) - set(params))
        if unknown:
            raise KeyError(f"{type(self).__name__} has no parameters {', '.join(unknown)}")
        with torch.no_grad():
            for name, tensor in weights.items():
                params[name].copy_(tensor)
