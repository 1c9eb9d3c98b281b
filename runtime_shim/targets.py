"""What the shim patches or reads in TensorRT-LLM, looked up by module path and name.

Pure data, shared by the runtime shim (which patches each target when its module is imported)
and `declint shim-targets PATH` (which checks statically that each target exists with a
compatible signature in a source tree). Both package layouts are listed where they differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["class", "function", "method", "classmethod", "literal"]

_MODELS = "tensorrt_llm._torch.models"
_BACKENDS = ("tensorrt_llm._torch.attention_backend", "tensorrt_llm._torch.attention.backends")


@dataclass(frozen=True)
class Target:
    key: str
    modules: tuple[str, ...]  # candidate modules, first found wins
    qualname: str  # "Class", "function" or "Class.method" inside the module
    kind: Kind
    parameters: tuple[str, ...]  # leading parameters (after self/cls) the wrapper relies on
    purpose: str
    patched: bool = True  # False: only read (a base class, the Literal)


TARGETS: tuple[Target, ...] = (
    Target(
        "model-mixin",
        (f"{_MODELS}.modeling_multimodal_mixin",),
        "MultimodalModelMixin",
        "class",
        (),
        "multimodal models: each subclass's __init__ is wrapped (checks before and after construction)",
    ),
    Target(
        "encoder-config",
        (f"{_MODELS}.modeling_multimodal_mixin",),
        "MultimodalModelMixin.encoder_model_config",
        "classmethod",
        ("model_config", "encoder"),
        "per-encoder config derivation: which config each encoder is built from; KV-cache quantization",
    ),
    Target(
        "fixed-marker",
        (f"{_MODELS}.modeling_multimodal_mixin",),
        "FixedEncoderAttention",
        "class",
        (),
        "the marker of a fixed encoder in a declaration",
        patched=False,
    ),
    Target(
        "model-registration",
        ("tensorrt_llm.inputs.registry", f"{_MODELS}.modeling_utils"),  # TensorRT-LLM's; the stand-in's
        "register_input_processor",
        "function",
        ("processor_cls", "model_type", "placeholder_metadata"),
        "registered multimodal models and their modalities (placeholder_map keys)",
    ),
    Target(
        "encoder-mixin",
        (f"{_MODELS}.modeling_multimodal_encoder",),
        "MultimodalEncoderMixin",
        "class",
        (),
        "encoders that own attention metadata (found by isinstance after construction)",
        patched=False,
    ),
    Target(
        "metadata-setup",
        (f"{_MODELS}.modeling_multimodal_encoder",),
        "MultimodalEncoderMixin.setup_attn_metadata",
        "method",
        (),
        "encoder metadata creation: its class against every attention layer's backend",
    ),
    Target(
        "metadata-bind",
        (f"{_MODELS}.modeling_multimodal_encoder",),
        "MultimodalEncoderMixin.prepare_attn_metadata",
        "method",
        (),
        "first binding of encoder metadata (checked once per encoder)",
    ),
    Target(
        "get-attention-backend",
        tuple(f"{package}.utils" for package in _BACKENDS),
        "get_attention_backend",
        "function",
        ("backend_name",),
        "backend lookup by name: an unknown name is rejected instead of silently falling back",
    ),
    Target(
        "attention-backend-base",
        tuple(f"{package}.interface" for package in _BACKENDS),
        "AttentionBackend",
        "class",
        (),
        "the base class of attention layers' backends: its __init__ records each instance created while a model "
        "is built",
    ),
    Target(
        "shared-literal",
        ("tensorrt_llm.llmapi.llm_args",),
        "EncoderAttentionBackend",
        "literal",
        (),
        "the one typing.Literal of backend names (typing.get_args)",
        patched=False,
    ),
)

TARGETS_BY_KEY = {target.key: target for target in TARGETS}


def signature_problem(target: Target, parameters: Sequence[str], *, variadic: bool = False) -> str | None:
    """Why `parameters` (after self/cls) do not fit `target`, or None when they do.

    The target's parameters must lead, in order: the wrapper reads them by position or name.
    A signature taking only *args/**kwargs (`variadic`) is accepted; nothing can be told.
    """
    wanted = list(target.parameters)
    if not wanted or (variadic and not parameters):
        return None
    head = list(parameters[: len(wanted)])
    if head == wanted:
        return None
    return f"expected leading parameters ({', '.join(wanted)}), found ({', '.join(parameters) or 'none'})"
