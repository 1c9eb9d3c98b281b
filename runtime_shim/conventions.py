"""The names the shim looks for: the same defaults as declint's `[tool.declint]` options.

The shim cannot read pyproject.toml in a serving process (it may not be there), so a project
with other names passes `Conventions(...)` to `install()`.
"""

from __future__ import annotations

from dataclasses import dataclass

from declint.hints import hinted_encoder

MODELS_PACKAGE = "tensorrt_llm._torch.models"
BACKEND_PACKAGES = ("tensorrt_llm._torch.attention_backend", "tensorrt_llm._torch.attention.backends")


@dataclass(frozen=True)
class Conventions:
    shared_literal: str = "tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend"
    declaration_attribute: str = "encoder_attention_backends"
    fixed_marker: str = "FixedEncoderAttention"
    model_mixin: str = "MultimodalModelMixin"
    encoders: tuple[str, ...] = ("vision", "audio")
    modality_encoders: tuple[tuple[str, str], ...] = (("image", "vision"), ("video", "vision"), ("audio", "audio"))
    encoder_name_hints: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("audio", ("audio", "whisper", "speech", "conformer", "sound", "parakeet")),
        ("vision", ("vision", "visual", "image", "video", "siglip")),
    )
    # Files where a direct SDPA call is the backend itself (fnmatch on the POSIX path).
    sdpa_allowed_paths: tuple[str, ...] = ("*/_torch/attention_backend/*", "*/_torch/attention/backends/*")
    # Backends that fail on a KV-cache quantization when there is no KV cache (encoders have none).
    kv_quant_rejecting_backends: tuple[str, ...] = ("VANILLA", "FLASHINFER")
    # Backends that derive segment boundaries on the host: a CUDA graph replays the captured ones.
    host_boundary_backends: tuple[str, ...] = ("VANILLA",)
    flashinfer_backends: tuple[str, ...] = ("FLASHINFER",)
    # Names get_attention_backend accepts outside the Literal (declint's extra-backend-names).
    extra_backend_names: tuple[str, ...] = ("FLASHINFER_STAR_ATTENTION",)
    flashinfer_module: str = "flashinfer"
    cuda_graph_attribute: str = "enable_encoder_cuda_graph"
    disable_encoder_attribute: str = "disable_multimodal_encoder"
    override_attribute: str = "encoder_attention_backend"
    watched_prefix: str = "tensorrt_llm"
    # The base every metadata class shares (declint's metadata-base): its __getattr__ answers nothing new.
    metadata_base: str = "AttentionMetadata"

    def encoder_for_modality(self, modality: str) -> str | None:
        """The encoder a modality requires; none when it maps to an encoder `encoders` does not
        list (as declint keeps its defaults to `encoders`: `encoders=("vision",)` alone would
        otherwise require an audio encoder no declaration may name; red-team 51)."""
        encoder = dict(self.modality_encoders).get(modality)
        return encoder if encoder in self.encoders else None

    def encoder_from_name(self, class_name: str) -> str:
        """Which encoder a class belongs to, from its name, as declint's DL101 reads it
        (`declint.hints`, of the encoders `encoders` lists); a name with no hint is the vision
        encoder's."""
        hints = {e: h for e, h in self.encoder_name_hints if e in self.encoders}
        return hinted_encoder(class_name, hints) or "vision"
