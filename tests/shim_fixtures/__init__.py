"""Fixtures of the runtime-shim tests: tiny configs for the demo models, stand-ins for optional packages."""
