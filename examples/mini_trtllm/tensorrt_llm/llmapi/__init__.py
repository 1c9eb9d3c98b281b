"""User-facing LLM API arguments."""
