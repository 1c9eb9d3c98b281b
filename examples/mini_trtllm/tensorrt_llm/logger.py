"""Package logger (the real package wraps its C++ logger; a stdlib logger is enough here)."""
import logging

logger = logging.getLogger("tensorrt_llm")
