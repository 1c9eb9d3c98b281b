"""A miniature TensorRT-LLM tree: just enough of the PyTorch backend to exercise declint."""
