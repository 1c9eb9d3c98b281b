"""The demo tree as an importable stand-in: tiny configs and encoder inputs for every demo model.

`use_demo()` puts `examples/mini_trtllm` on sys.path (and a stand-in `transformers`, whose
`AutoModel.from_config` builds a small module, when the real one is absent) so that
`import tensorrt_llm` finds the stand-in. One config (`tiny_config`) carries every attribute any
demo model reads; the sizes are small enough for CPU tests and scale up for the GPU benchmark.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "examples" / "mini_trtllm"
STUB_SITE = Path(__file__).resolve().parent / "site"

MODEL_MODULES = (
    "cosmos3",
    "deepseek_v4_1",
    "exaone4_5_vl",
    "gemma4",
    "glm5_next",
    "hyperclovax",
    "kimi_k25",
    "llava_next",
    "minicpmv",
    "mistral3",
    "mllama",
    "nemotron_h_multimodal",
    "phi4mm",
    "qwen3_moe",
    "qwen3vl",
    "step3vl",
)


def use_demo() -> None:
    if str(DEMO) not in sys.path:
        sys.path.insert(0, str(DEMO))
    if "transformers" not in sys.modules and importlib.util.find_spec("transformers") is None:
        sys.modules["transformers"] = _transformers_stub()


@contextmanager
def flashinfer_importable() -> Iterator[None]:
    """Make the FlashInfer stand-in importable for the duration (no-op if the real one is)."""
    added = str(STUB_SITE) not in sys.path
    if added:
        sys.path.insert(0, str(STUB_SITE))
    try:
        yield
    finally:
        if added:
            sys.path.remove(str(STUB_SITE))
            if getattr(sys.modules.get("flashinfer"), "__version__", "").endswith("declint.stub"):
                del sys.modules["flashinfer"]


@contextmanager
def vanilla_declared_for_glm5() -> Iterator[None]:
    """GLM5 declares VANILLA for a test, but its vision sub-config still pins TRTLLM: the override
    is accepted before __init__ and silently ignored by the layers (DL106 override-ignored)."""
    from tensorrt_llm._torch.models import modeling_glm5_next

    original = modeling_glm5_next.Glm5NextVModel.encoder_attention_backends
    modeling_glm5_next.Glm5NextVModel.encoder_attention_backends = {"vision": ("TRTLLM", "VANILLA")}
    try:
        yield
    finally:
        modeling_glm5_next.Glm5NextVModel.encoder_attention_backends = original


def import_models() -> dict[str, type]:
    """Every class defined in the demo model modules, by name."""
    use_demo()
    classes: dict[str, type] = {}
    for name in MODEL_MODULES:
        module = importlib.import_module(f"tensorrt_llm._torch.models.modeling_{name}")
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                classes[value.__name__] = value
    return classes


def _ns(**values: Any) -> types.SimpleNamespace:
    return types.SimpleNamespace(**values)


def pretrained_config(
    hidden: int = 32,
    heads: int = 2,
    depth: int = 2,
    text_layers: int = 1,
    *,
    intermediate: int | None = None,
    text_hidden: int | None = None,
    text_heads: int | None = None,
    text_intermediate: int | None = None,
    vocab: int = 128,
) -> Any:
    """Vision and audio towers `hidden` wide; the text model too unless `text_*` say otherwise
    (the GPU benchmark builds real-size text models; the tests keep everything tiny)."""
    text_hidden = text_hidden or hidden
    text_heads = text_heads or heads
    vision = _ns(
        hidden_size=hidden,
        num_heads=heads,
        num_attention_heads=heads,
        num_key_value_heads=max(heads // 2, 1),
        intermediate_size=intermediate or 2 * hidden,
        depth=depth,
        num_hidden_layers=depth,
        patch_size=8,
        image_size=32,
        in_channels=3,
        num_channels=3,
        temporal_patch_size=2,
        spatial_merge_size=2,
        out_hidden_size=hidden,
        output_hidden_size=hidden,
        layer_norm_eps=1e-6,
        rms_norm_eps=1e-6,
        merge_window=2,
        num_cls_tokens=1,
        max_grid_size=4,
        mlp_ratio=2.0,
    )
    text = _ns(
        hidden_size=text_hidden,
        num_attention_heads=text_heads,
        num_key_value_heads=text_heads,
        rms_norm_eps=1e-6,
        intermediate_size=text_intermediate or 2 * text_hidden,
        vocab_size=vocab,
        num_hidden_layers=text_layers,
    )
    audio = _ns(
        hidden_size=hidden,
        num_attention_heads=heads,
        chunk_size=4,
        conv_kernel_size=3,
        num_mel_bins=16,
        num_hidden_layers=1,
        num_layers=1,
        max_rel_pos=8,
    )
    return _ns(
        vision_config=vision,
        text_config=text,
        audio_config=audio,
        image_token_id=100,
        video_token_id=101,
        audio_token_id=102,
        image_token_index=100,
        media_placeholder_token_id=100,
        img_context_token_id=100,
        video_context_token_id=101,
        sound_context_token_id=102,
        num_queries_side=2,
        spatial_merge_size=2,
        patch_size=8,
    )


def model_config(
    attn_backend: str = "TRTLLM",
    overrides: dict[str, str] | None = None,
    *,
    disable_encoder: bool = False,
    cuda_graph: bool = False,
    kv_cache_quant: str | None = None,
    **sizes: int,
) -> Any:
    use_demo()
    from tensorrt_llm._torch.model_config import ModelConfig
    from tensorrt_llm.llmapi.llm_args import MultimodalConfig

    multimodal = MultimodalConfig(
        encoder_attention_backend=overrides,
        disable_multimodal_encoder=disable_encoder,
        enable_encoder_cuda_graph=cuda_graph,
    )
    quant = _ns(kv_cache_quant_algo=kv_cache_quant) if kv_cache_quant else None
    return ModelConfig(
        pretrained_config=pretrained_config(**sizes),
        multimodal_config=multimodal,
        attn_backend=attn_backend,
        quant_config=quant,
    )


def _pixels(*shape: int) -> Any:
    import torch

    return torch.randn(*shape)


def _qwen_patches() -> tuple[Any, ...]:
    import torch

    return (torch.randn(16, 3 * 2 * 8 * 8), torch.tensor([1, 4, 4]))


# Model class name -> (encoder attribute, inputs of one forward). Only encoders that run on a
# backend or call SDPA themselves are listed: those are what the SDPA probe looks at.
ENCODER_CALLS: dict[str, tuple[str, Callable[[], tuple[Any, ...]]]] = {
    "Qwen3VLModel": ("visual", _qwen_patches),
    "Cosmos3Model": ("visual", _qwen_patches),
    "Gemma4Model": ("vision_tower", lambda: (_pixels(1, 3, 32, 32),)),
    "Glm5NextVModel": ("visual", lambda: (_pixels(1, 3, 32, 32),)),
    "KimiK25Model": ("vision_tower", lambda: (_pixels(3, 32, 32),)),
    "MiniCPMV46Model": ("vpm", lambda: (_pixels(3, 32, 32),)),
    "Mistral3VLM": ("vision_tower", lambda: (_pixels(3, 32, 32),)),
    "Step3p7VLModel": ("vision_model", lambda: (_pixels(1, 3, 32, 32),)),
    "Exaone45VLModel": ("visual", lambda: (_pixels(1, 3, 32, 32),)),
    "NemotronHMultimodalModel": ("vision_model", lambda: (_pixels(1, 3, 32, 32),)),
    "DeepseekV41VLModel": ("vision_tower", lambda: (_pixels(1, 3, 32, 32),)),
}


def run_encoder(model: Any) -> Any:
    """One forward of the model's vision encoder, with metadata set up as the engine does."""
    attribute, make_inputs = ENCODER_CALLS[type(model).__name__]
    encoder = getattr(model, attribute)
    if hasattr(encoder, "setup_attn_metadata") and encoder.attn_metadata is None:
        encoder.setup_attn_metadata(max_num_requests=4, max_num_tokens=256)
    return encoder(*make_inputs())


def _transformers_stub() -> types.ModuleType:
    """`transformers.AutoModel.from_config` for the Phi-4-multimodal demo: a small linear tower."""
    import torch
    from torch import nn

    class _Tower(nn.Module):
        def __init__(self, config: Any) -> None:
            super().__init__()
            self.proj = nn.Linear(config.hidden_size, config.hidden_size)

        def forward(self, **inputs: torch.Tensor) -> Any:
            (value,) = inputs.values()
            return types.SimpleNamespace(last_hidden_state=self.proj(value))

    class AutoModel:
        @staticmethod
        def from_config(config: Any, **kwargs: Any) -> nn.Module:
            return _Tower(config)

    module = types.ModuleType("transformers")
    module.AutoModel = AutoModel  # type: ignore[attr-defined]
    module.__declint_stub__ = True  # type: ignore[attr-defined]
    return module
