"""Model families; each `modeling_*.py` registers its architectures on import."""
