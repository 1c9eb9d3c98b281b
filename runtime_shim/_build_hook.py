"""Build step: ship `declint_runtime_shim.pth` at the top of site-packages.

Only a .pth file at the top level runs at interpreter start, and setuptools' declarative
config cannot put one there, so build_py copies it (wheel builds) or writes it next to the
editable finder (editable installs). Used only at build time (pyproject's cmdclass).
"""

from __future__ import annotations

import os

from setuptools.command.build_py import build_py  # type: ignore[import-untyped, unused-ignore]

PTH = "declint_runtime_shim.pth"


class BuildPyWithStartupHook(build_py):  # type: ignore[misc, unused-ignore]
    def run(self) -> None:
        super().run()
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), PTH)
        targets = [self.build_lib]
        if getattr(self, "editable_mode", False):
            # PEP 660 editable wheels are built from `install_lib`, not build_lib.
            targets = [self.get_finalized_command("install").install_lib]
        for target in targets:
            self.copy_file(source, os.path.join(target, PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs: list[str] = super().get_outputs(include_bytecode)
        return [*outputs, os.path.join(self.build_lib, PTH)]
