"""`declint doctor` on a fake environment (distribution metadata written here) and a seed log."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import REPO

LOG = REPO / "tests" / "shim_fixtures" / "serve_kv_layout.log"


def _dist(site: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        *(f"Requires-Dist: {r}" for r in requires),
    ]
    (info / "METADATA").write_text("\n".join(lines) + "\n")


def _site(tmp_path: Path, flashinfer: str) -> Path:
    site = tmp_path / "site"
    _dist(
        site, "tensorrt_llm", "1.1.0", ("torch<=2.9.0,>=2.7.1", "flashinfer-python==0.2.5", "pytest; extra == 'test'")
    )
    _dist(site, "torch", "2.8.0+cu128")
    _dist(site, "flashinfer-python", flashinfer)
    return site


def test_skew_and_log_give_the_checklist(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["doctor", "--path", str(_site(tmp_path, "0.2.9")), "--log", str(LOG)])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[:3] == [
        "tensorrt_llm       1.1.0",
        "torch              2.8.0+cu128  (tensorrt_llm requires <=2.9.0,>=2.7.1)  ok",
        "flashinfer-python  0.2.9  (tensorrt_llm requires ==0.2.5)  SKEW",
    ]
    assert "log: model defaults picked attn_backend FLASHINFER for Mistral3VLM (nobody asked for it)" in lines
    assert (
        "  1. the traceback belongs to _torch/attention_backend/flashinfer.py:604 in forward_impl (the FLASHINFER "
        "backend), but the metadata object is TrtllmAttentionMetadata (the TRTLLM backend's): a metadata/backend "
        "contract or version-skew bug, not a bug in that line (DL105/DL106)"
    ) in lines
    assert "  2. image modified: yes: flashinfer-python 0.2.9 vs ==0.2.5" in lines
    assert any(line.startswith("  3. re-run with attn_backend: TRTLLM") for line in lines)


def test_matching_versions_and_no_log_exit_zero(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["doctor", "--path", str(_site(tmp_path, "0.2.5"))])
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == "result: no skew, no known failure"


def test_log_alone_is_a_failure_even_without_skew(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["doctor", "--path", str(_site(tmp_path, "0.2.5")), "--log", str(LOG)])
    assert result.exit_code == 1
    assert "  2. image modified: no skew between the installed versions and tensorrt_llm's pins" in result.output


def test_a_long_log_is_read_line_by_line_with_the_same_checklist(tmp_path: Path) -> None:
    noise = "[TRT-LLM] [I] iteration 17: 412 tokens/s\n" * 200_000  # ~8 MB before the failure
    earlier = '  File "/usr/lib/python3/site-packages/tensorrt_llm/_torch/pyexecutor/py_executor.py", line 9, in step\n'
    log = tmp_path / "serve.log"
    log.write_text(noise + earlier + LOG.read_text(encoding="utf-8") + noise, encoding="utf-8")
    result = CliRunner().invoke(cli, ["doctor", "--path", str(_site(tmp_path, "0.2.5")), "--log", str(log)])
    assert result.exit_code == 1
    assert (
        "  1. the traceback belongs to _torch/attention_backend/flashinfer.py:604 in forward_impl (the FLASHINFER "
        "backend), but the metadata object is TrtllmAttentionMetadata (the TRTLLM backend's): a metadata/backend "
        "contract or version-skew bug, not a bug in that line (DL105/DL106)"
    ) in result.output.splitlines()
