"""DL904 stale-baseline-entry (reported by `check --baseline`)."""

from __future__ import annotations

from typing import ClassVar

from declint.rule import EngineCode, Invalid, Valid
from declint.types import Finding

BASELINE_PATH = "declint-baseline.json"
# The file every example checks against its baseline: one DL103 finding, in `is_trtllm`.
EXAMPLE_MODEL = (
    "tensorrt_llm/_torch/models/modeling_example.py",
    'def is_trtllm(attn_backend):\n    return attn_backend == "TRTLLM"\n',
)
_HEAD = '{\n  "schema_version": 1,\n  "tool": "declint",\n  "entries": [\n'
_TAIL = "  ]\n}\n"
_CURRENT = (
    '    {"fingerprint": "db4b672d154f18a9", "code": "DL103", "path": "tensorrt_llm/_torch/models/modeling_example.py", '
    '"context": "is_trtllm", "message": "backend name \\"TRTLLM\\" retyped as a string literal; read it from the shared '
    'Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"}'
)
_GONE = (
    '    {"fingerprint": "0123456789abcdef", "code": "DL103", "path": "tensorrt_llm/_torch/models/modeling_example.py", '
    '"context": "is_vanilla", "message": "backend name \\"VANILLA\\" retyped as a string literal"}'
)


class StaleBaselineEntry(EngineCode):
    """A baseline entry that no finding matches any more.

    A baseline (`declint baseline write FILE`, `declint check --baseline FILE`) lists known
    findings by fingerprint so that only new ones fail a pull request. Once a listed finding is
    fixed, its entry would silently excuse the next finding that happens to hash the same, and
    the file would never shrink. Run `declint baseline write FILE` to drop stale entries (it
    never adds entries unless given `--allow-grow`).

    Only entries in the run's scope are judged: a file the run checked (or that would be under a
    directory it was given) and a code it enabled. The finding points at the entry's line in
    the baseline file. The examples below are baselines, checked against a project whose one
    finding is a DL103 in `is_trtllm`.
    """

    CODE = "DL904"
    NAME = "stale-baseline-entry"
    SUMMARY = "a baseline entry that matches no finding any more"
    VALID: ClassVar = (Valid(_HEAD + _CURRENT + "\n" + _TAIL, path=BASELINE_PATH),)
    INVALID: ClassVar = (
        Invalid(
            _HEAD + _CURRENT + ",\n" + _GONE + "\n" + _TAIL,
            expect=((6, 4),),
            message=(
                "stale baseline entry 0123456789abcdef: no DL103 finding in "
                "tensorrt_llm/_torch/models/modeling_example.py (is_vanilla) matches it any more; "
                "run `declint baseline write` to drop it"
            ),
            path=BASELINE_PATH,
        ),
    )

    @classmethod
    def example_findings(cls, example: Valid | Invalid) -> list[Finding]:
        """The example is a baseline: check the example project against it (see declint.testing)."""
        import tempfile
        from pathlib import Path

        from declint.config import find_config_file, load_config
        from declint.engine import Engine, Selection
        from declint.reporting.pipeline import CheckRequest, run
        from declint.rules import ALL_RULES
        from declint.testing import PRELUDE, write_tree

        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory).resolve()
            write_tree(root, {**PRELUDE, EXAMPLE_MODEL[0]: EXAMPLE_MODEL[1], example.path: example.code})
            known = frozenset(rule.CODE for rule in ALL_RULES)
            config = load_config(find_config_file(root), default_root=root, known_codes=known)
            engine = Engine(config, ALL_RULES, Selection(("DL",), ()))
            request = CheckRequest((root / "tensorrt_llm",), baseline=root / example.path, cwd=root)
            report = run(engine, request, ALL_RULES).report
        return [item.finding for item in report.items if item.finding.code == cls.CODE]
