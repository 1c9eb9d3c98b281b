"""DL105 across files: the backend, its metadata class and the base class in three modules."""

from __future__ import annotations

from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import MakeTree

PKG = "tensorrt_llm/_torch/attention_backend/"
METADATA = (
    "from dataclasses import dataclass\n"
    "from .interface import AttentionMetadata\n\n"
    "@dataclass\n"
    "class TrtllmAttentionMetadata(AttentionMetadata):\n"
    "    workspace: object = None\n\n"
    "    def __post_init__(self):\n"
    "        self.kv_lens_cuda = None\n"
)
BACKEND = (
    "from . import AttentionBackend, TrtllmAttentionMetadata\n\n"
    "class FlashInferAttention(AttentionBackend[TrtllmAttentionMetadata]):\n"
    "    Metadata = TrtllmAttentionMetadata\n\n"
    "    def forward_impl(self, q, metadata):\n"
    "        metadata.kv_lens_cuda\n"
    "        metadata.num_tokens\n"
    "        return metadata.kv_layout\n"
)


def test_three_files_and_a_package_reexport(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            PKG
            + "__init__.py": "from .interface import AttentionBackend\nfrom .trtllm import TrtllmAttentionMetadata\n",
            PKG + "trtllm.py": METADATA,
            PKG + "flashinfer.py": BACKEND,
        }
    )
    result = CliRunner().invoke(cli, ["check", "--select", "DL105", str(root / PKG / "flashinfer.py")])
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "tensorrt_llm/_torch/attention_backend/flashinfer.py:9:16: DL105 FlashInferAttention.forward_impl reads "
        "metadata.kv_layout, which its metadata class TrtllmAttentionMetadata does not provide (AttributeError at "
        "the first forward); no metadata class provides kv_layout"
    )
    assert len([line for line in result.output.splitlines() if " DL105 " in line]) == 1


def test_unknown_base_outside_the_project_reports_nothing(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            PKG + "flashinfer.py": (
                "from external import SomeMetadata\n"
                "from .interface import AttentionBackend\n\n"
                "class Meta(SomeMetadata):\n    pass\n\n"
                "class FlashInferAttention(AttentionBackend[Meta]):\n"
                "    Metadata = Meta\n\n"
                "    def forward(self, q, metadata):\n"
                "        return metadata.anything\n"
            ),
        }
    )
    result = CliRunner().invoke(cli, ["check", "--select", "DL105", str(root / PKG / "flashinfer.py")])
    assert result.exit_code == 0
