"""declint never imports or runs what it checks, touches nothing outside the root and its cache,
and escapes hostile text in every output format."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.testing import PRELUDE, write_tree
from tests.conftest import MakeTree

AUDIT_SCRIPT = textwrap.dedent("""
    import json, os, sys
    from declint.cli import main

    root, warmup = sys.argv[1], sys.argv[2]
    try:  # import everything a run needs first, on another tree, so only the real run is watched
        main(["check", "--output-format", "json", warmup])
    except SystemExit:
        pass
    events = []

    def hook(event, args):
        if event == "open":
            events.append(["open", os.fsdecode(args[0]) if isinstance(args[0], (str, bytes)) else "", str(args[1])])
        elif event == "exec":
            events.append(["exec", getattr(args[0], "co_filename", "")])
        elif event == "import":
            events.append(["import", str(args[0]), str(args[1] or "")])
        elif event.startswith(("subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn")):
            events.append(["process", event])

    sys.addaudithook(hook)
    try:
        main(["check", "--output-format", "json", root])
    except SystemExit as done:
        code = done.code
    sys.addaudithook(lambda *a: None)
    print(json.dumps({"code": code, "events": events}), file=sys.stderr)
""")

PLANTED = "import os\nopen({sentinel!r}, 'w').write('{name} ran')\n"


def test_checking_hostile_modules_never_runs_them(tmp_path: Path) -> None:
    root, warmup, sentinel = tmp_path / "project", tmp_path / "warmup", tmp_path / "SENTINEL"
    write_tree(warmup, PRELUDE)
    files = dict(PRELUDE)
    for rel in [r for r in PRELUDE if r.endswith(".py")] + [
        "setup.py",
        "conftest.py",
        "tensorrt_llm/_torch/models/modeling_x.py",
    ]:
        files[rel] = PLANTED.format(sentinel=str(sentinel), name=rel) + files.get(rel, "")
    files["tensorrt_llm/_torch/models/modeling_x.py"] += "def build(attn_backend='TRTLLM'):\n    pass\n"
    write_tree(root, files)
    done = subprocess.run(
        [sys.executable, "-c", AUDIT_SCRIPT, str(root), str(warmup)], capture_output=True, text=True, check=False
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 1  # DL findings about the planted code: it was read, not run
    assert not sentinel.exists()
    inside = (str(root) + "/",)
    events = report["events"]
    assert [e for e in events if e[0] == "exec" and e[1].startswith(inside)] == []
    assert [e for e in events if e[0] == "import" and e[2].startswith(inside)] == []
    assert [e for e in events if e[0] == "process"] == []
    opened = [e for e in events if e[0] == "open"]
    assert opened, "the audit hook saw no file being opened: it was not watching"
    outside = [e for e in opened if not e[1].startswith(inside)]
    assert outside == []
    writes = [e for e in opened if any(flag in e[2] for flag in "wax+")]
    assert all("/.declint_cache/" in e[1] for e in writes), writes


HOSTILE_KEY = r'"x\n::error file=a.py::%0A<script>alert(1)</script>\r,\x1b[31m"'
ESCAPED = r"x\n::error file=a.py::%0A<script>alert(1)</script>\r,\x1b[31m"
EVIL = (
    "from .modeling_multimodal_mixin import MultimodalModelMixin\n\n"
    "class Evil(MultimodalModelMixin):\n"
    f'    encoder_attention_backends = {{{HOSTILE_KEY}: ("TRTLLM",)}}\n'
)
MESSAGE = f'unknown encoder "{ESCAPED}"; known encoders: vision, audio'
FORMATS = ["text", "full", "json", "jsonl", "sarif", "github", "rdjson", "rdjsonl", "gitlab", "junit"]


@pytest.mark.parametrize("output_format", FORMATS)
def test_hostile_text_is_escaped(make_tree: MakeTree, output_format: str) -> None:
    root = make_tree({"tensorrt_llm/_torch/models/modeling_evil.py": EVIL})
    result = CliRunner().invoke(
        cli, ["check", "--output-format", output_format, str(root / "tensorrt_llm/_torch/models/modeling_evil.py")]
    )
    output = result.output
    assert result.exit_code == 1
    assert "\r" not in output and "\x1b" not in output
    assert not any(line.startswith("::error file=a.py") for line in output.splitlines())
    if output_format in ("json", "sarif", "rdjson", "gitlab"):
        assert MESSAGE in _all_strings(json.loads(output))
    elif output_format in ("jsonl", "rdjsonl"):
        assert any(MESSAGE in _all_strings(json.loads(line)) for line in output.splitlines())
    elif output_format == "junit":
        tree = ET.fromstring(output)
        assert tree.find(".//script") is None
        assert any(MESSAGE in (node.get("message") or "") for node in tree.iter("failure"))
    elif output_format == "github":
        annotation = next(line for line in output.splitlines() if line.startswith("::error "))
        assert annotation.endswith("::" + MESSAGE.replace("%", "%25"))
    else:
        assert any(line.endswith(MESSAGE) for line in output.splitlines())


def _all_strings(value: object) -> str:
    if isinstance(value, str):
        return value + "\n"
    if isinstance(value, dict):
        return "".join(_all_strings(v) for v in value.values())
    if isinstance(value, list):
        return "".join(_all_strings(v) for v in value)
    return ""
