"""declint's runtime shim (installed as `declint.runtime_shim`).

Not built yet: the runtime checks are tracked in their own issue. Importing this package has
no side effects and imports neither libcst nor click.
"""
