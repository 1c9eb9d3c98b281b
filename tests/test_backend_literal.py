"""DL103 on the edge cases of its contexts (implicit concatenation, f-strings, bytes, starred
arguments, lambdas, positional-only and keyword-only defaults, `match` patterns, the excluded
regions): what it reports and where (line, 0-based column, enclosing scope). The expected rows
are what DL103 reported when it still ran over libcst; since it runs on the `ast` tree
(2026-12-01) it must report exactly the same."""

from __future__ import annotations

import json

from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import MakeTree

SOURCE = '''\
from typing import Literal
import dataclasses

class Cfg:
    attn_backend: str = "TRTLLM"
    other_attn_backend: "EncoderAttentionBackend" = "VANILLA"
    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM"), "attn_backend": "FLASHINFER"}
    backend_name = ("FLASHINFER", *("VANILLA", "TRTLLM"))
    ok: Literal["TRTLLM"] = "x"

    @staticmethod
    @register(attn_backend="TRTLLM")
    def default_attn_backend(x="FLASHINFER", /, attn_backend="VANILLA", *, backend_name="TRTLLX", **kw):
        def inner():
            return "TRTLLM"
        if x:
            return ("VANILLA")
        return "TRT" "LLM"

f = lambda attn_backend="FLASHINFER", *a, backend_name='TRTLLM': attn_backend
g = lambda: "TRTLLM"

def h(config, attn_backend: EncoderAttentionBackend = "VANILLA", backend_name: "str" = "VANILA"):
    if config.attn_backend.upper().lower() in ("TRTLLM", "FLASHINFER") or "VANILLA" == config.attn_backend:
        pass
    if config.attn_backend is not "TRTLLM" and 1 < 2 == config.attn_backend != "FLASHINFER":
        pass
    if config.attn_backend == b"TRTLLM" or config.attn_backend == f"TRTLLM" or config.attn_backend == rb"X":
        pass
    if config.attn_backend == u"TRTLLM" or config.attn_backend == r'VANILLA' or config.attn_backend == """FLASHINFER""":
        pass
    if config.attn_backend == ("TRT"
                               "LLM"):
        pass
    d = {"attn_backend": "TRTLLM", "attn_" "backend": "VANILLA", **config, "x": "TRTLLM",
         ("backend_name"): "FLASHINFER"}
    match config.attn_backend.strip():
        case "TRTLLM" | "VANILLA":
            pass
        case ("FLASHINFER" as y):
            pass
        case "flashinfr":
            pass
        case _:
            pass
    dataclasses.replace(config, attn_backend="TRTLLM", other="VANILLA")
    get_attention_backend("FLASHINFER", "VANILLA")
    create_attention(*["TRTLLM"])
    create_attention(name="TRTLLM")
    config.attn_backend = ["TRTLLM", ["VANILLA"]]
    a = b.attn_backend = "FLASHINFER"
    (c, d2) = attn_backend = "TRTLLM", "x"
    x = {"é attn_backend": "TRTLLM"}; y = "é"; z = config.attn_backend == "VANILLA"
\t
async def fetch_attn_backend():
    return "FLASHINFER"

class Q:
    def backend_name(self):
        class Inner:
            x = 1
        return ["VANILLA", "TRTLLM"]
    encoder_attention_backends: dict = {"v": "TRTLLM", "attn_backend": "VANILLA"}
    z = Literal["TRTLLM", attn_backend == "VANILLA"]
'''

EXPECTED = [
    (5, 24, "Cfg", 'backend name "TRTLLM" retyped as a string literal'),
    (6, 52, "Cfg", 'backend name "VANILLA" retyped as a string literal'),
    (8, 20, "Cfg", 'backend name "FLASHINFER" retyped as a string literal'),
    (8, 36, "Cfg", 'backend name "VANILLA" retyped as a string literal'),
    (8, 47, "Cfg", 'backend name "TRTLLM" retyped as a string literal'),
    (12, 27, "Cfg.default_attn_backend", 'backend name "TRTLLM" retyped as a string literal'),
    (13, 61, "Cfg.default_attn_backend", 'backend name "VANILLA" retyped as a string literal'),
    (13, 88, "Cfg.default_attn_backend", '"TRTLLX" is not a member of EncoderAttentionBackend'),
    (17, 20, "Cfg.default_attn_backend", 'backend name "VANILLA" retyped as a string literal'),
    (20, 24, "", 'backend name "FLASHINFER" retyped as a string literal'),
    (20, 55, "", 'backend name "TRTLLM" retyped as a string literal'),
    (23, 87, "h", '"VANILA" is not a member of EncoderAttentionBackend'),
    (24, 47, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (24, 57, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (24, 74, "h", 'backend name "VANILLA" retyped as a string literal'),
    (26, 34, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (26, 79, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (30, 30, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (30, 66, "h", 'backend name "VANILLA" retyped as a string literal'),
    (30, 103, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (35, 25, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (36, 27, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (38, 13, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (38, 24, "h", 'backend name "VANILLA" retyped as a string literal'),
    (42, 13, "h", '"flashinfr" is not a member of EncoderAttentionBackend'),
    (46, 45, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (47, 26, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (48, 23, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (50, 27, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (50, 38, "h", 'backend name "VANILLA" retyped as a string literal'),
    (51, 25, "h", 'backend name "FLASHINFER" retyped as a string literal'),
    (52, 29, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (53, 27, "h", 'backend name "TRTLLM" retyped as a string literal'),
    (53, 74, "h", 'backend name "VANILLA" retyped as a string literal'),
    (56, 11, "fetch_attn_backend", 'backend name "FLASHINFER" retyped as a string literal'),
    (62, 16, "Q.backend_name", 'backend name "VANILLA" retyped as a string literal'),
    (62, 27, "Q.backend_name", 'backend name "TRTLLM" retyped as a string literal'),
]


def test_every_context_and_every_exclusion(make_tree: MakeTree) -> None:
    root = make_tree({"tensorrt_llm/_torch/models/modeling_edge.py": SOURCE})
    result = CliRunner().invoke(
        cli,
        ["check", "--select", "DL103", "--format", "json", str(root / "tensorrt_llm/_torch/models/modeling_edge.py")],
    )
    findings = json.loads(result.output)["findings"]
    found = [(f["line"], f["column"], f["context"], f["message"].split(";")[0].split(" (")[0]) for f in findings]
    assert found == EXPECTED
    assert result.exit_code == 1
