"""declint: keeps TensorRT-LLM's multimodal encoder attention-backend declarations honest."""

__version__ = "0.1.0"
