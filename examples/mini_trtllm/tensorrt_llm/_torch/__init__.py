"""PyTorch backend of the miniature TensorRT-LLM tree."""
