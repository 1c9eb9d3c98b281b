"""Engine behaviour through the CLI: isolation of bad files, exit codes, determinism, cross-file."""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.testing import PRELUDE, write_tree
from tests.conftest import MakeTree, settle

MODEL = "tensorrt_llm/_torch/models/"
CONFIG_CHECK = 'def is_trtllm(config):\n    return config.attn_backend == "TRTLLM"\n'


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", *args])
    return result.exit_code, result.output


def test_bad_files_become_dl000_and_the_run_goes_on(make_tree: MakeTree) -> None:
    root = make_tree(
        {MODEL + "modeling_broken.py": "def broken(:\n    pass\n", MODEL + "modeling_good.py": CONFIG_CHECK}
    )
    (root / MODEL / "modeling_binary.py").write_bytes(b"x = '\xff\xfe'\n")
    code, output = check(str(root / MODEL))
    assert code == 1
    assert output.splitlines()[:3] == [
        "tensorrt_llm/_torch/models/modeling_binary.py:1:1: DL000 cannot decode as utf-8: "
        "invalid byte 0xff at offset 5",
        "tensorrt_llm/_torch/models/modeling_broken.py:1:12: DL000 syntax error: invalid syntax",
        'tensorrt_llm/_torch/models/modeling_good.py:2:35: DL103 backend name "TRTLLM" retyped as a string '
        "literal; read it from the shared Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it "
        "is type-checked and cannot drift",
    ]
    assert output.splitlines()[3] == "Found 3 findings in 6 files."


def test_backend_literals_are_found_before_the_shared_literal_exists(make_tree: MakeTree) -> None:
    """A tree that predates the Literal (today's TensorRT-LLM): DL100 says it is missing, and DL103
    still finds the retyped names, from fallback-backend-names, and their near misses."""
    typo = 'def pick(attn_backend="FLASHINFR"):\n    return attn_backend\n'
    root = make_tree(
        {
            "tensorrt_llm/llmapi/llm_args.py": "attn_backend_default = 1\n",
            MODEL + "modeling_good.py": CONFIG_CHECK,
            MODEL + "modeling_typo.py": typo,
            MODEL + "modeling_other.py": 'def pick(attn_backend="CUTLASS"):\n    return attn_backend\n',
        }
    )
    code, output = check(str(root / "tensorrt_llm"))
    assert code == 1
    assert output.splitlines() == [
        'tensorrt_llm/_torch/models/modeling_good.py:2:35: DL103 backend name "TRTLLM" retyped as a string '
        "literal; read it from the shared Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it "
        "is type-checked and cannot drift",
        'tensorrt_llm/_torch/models/modeling_typo.py:1:23: DL103 "FLASHINFR" is not a backend name (did you '
        'mean "FLASHINFER"?)',
        'tensorrt_llm/llmapi/llm_args.py:1:1: DL100 shared Literal "EncoderAttentionBackend" is not defined as a '
        "typing.Literal in tensorrt_llm.llmapi.llm_args",
        "Found 3 findings in 17 files.",
    ]
    (root / "pyproject.toml").write_text(
        '[tool.declint]\nroots = ["tensorrt_llm"]\nfallback-backend-names = ["CUTLASS"]\n', encoding="utf-8"
    )
    # Checked alone, as pre-commit would pass them: "TRTLLM" is no longer a name it looks for.
    code, output = check(str(root / MODEL / "modeling_other.py"), str(root / MODEL / "modeling_good.py"))
    assert code == 1
    assert output.splitlines() == [
        'tensorrt_llm/_torch/models/modeling_other.py:1:23: DL103 backend name "CUTLASS" retyped as a string '
        "literal; read it from the shared Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it "
        "is type-checked and cannot drift",
        "Found 1 finding in 2 files.",
    ]


def test_null_bytes_and_bad_cookie_are_dl000(make_tree: MakeTree) -> None:
    root = make_tree({})
    (root / "nul.py").write_bytes(b"x = 1\x00\n")
    (root / "cookie.py").write_bytes(b"# -*- coding: no-such-codec -*-\nx = 1\n")
    code, output = check(str(root / "nul.py"), str(root / "cookie.py"))
    assert code == 1
    assert "cookie.py:1:1: DL000 bad encoding declaration: unknown encoding: no-such-codec" in output
    assert "nul.py:1:1: DL000 file contains null bytes (binary file?)" in output


def test_latin1_cookie_is_decoded_like_cpython(make_tree: MakeTree) -> None:
    root = make_tree({})
    (root / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n# caf\xe9\ndef f(attn_backend='TRTLLM'):\n    pass\n")
    code, output = check(str(root / "latin.py"))
    assert code == 1
    assert output.startswith("latin.py:3:20: DL103 ")


def test_clean_tree_exits_zero_and_exit_zero_flag(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    assert check(str(root / "tensorrt_llm/llmapi"))[0] == 0
    assert check("--exit-zero", str(root))[0] == 0
    assert check(str(root))[0] == 1


def test_a_declint_toml_is_found_before_pyproject_and_a_dot_declint_toml_before_it(make_tree: MakeTree) -> None:
    """In each directory: .declint.toml, then declint.toml, then pyproject.toml's [tool.declint]."""
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    assert check(str(root))[0] == 1  # the prelude's pyproject.toml: DL103 is on
    (root / "declint.toml").write_text('roots = ["tensorrt_llm"]\nignore = ["DL103"]\n')
    assert check(str(root)) == (0, f"All clear: {_python_files(root)} files checked.\n")
    (root / ".declint.toml").write_text('roots = ["tensorrt_llm"]\nslect = []\n')
    assert check(str(root / MODEL)) == (
        2,
        f'declint: error: {root / ".declint.toml"}:2: unknown key "slect" (did you mean "select"?)\n',
    )


def _python_files(root: Path) -> int:
    return sum(1 for _ in (root / "tensorrt_llm").rglob("*.py"))


def test_unknown_config_key_exits_2_naming_file_and_key(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\nslect = ["DL101"]\n'})
    code, output = check(str(root))
    assert code == 2
    assert output == f'declint: error: {root / "pyproject.toml"}:3: unknown key "slect" (did you mean "select"?)\n'


def test_bad_config_values_exit_2(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": '[tool.declint]\nignore = ["DL1O3"]\n'})
    code, output = check(str(root))
    assert (code, output) == (
        2,
        f'declint: error: {root / "pyproject.toml"}:2: "ignore": unknown rule code "DL1O3" (did you mean "DL103"?)\n',
    )
    (root / "pyproject.toml").write_text('[tool.declint]\nroots = "tensorrt_llm"\n')
    assert check(str(root)) == (2, f'declint: error: {root / "pyproject.toml"}:2: "roots" must be list[str], got str\n')
    (root / "pyproject.toml").write_text("[tool.declint\n")
    code, output = check(str(root))
    assert code == 2 and "invalid TOML" in output and ":1:" in output


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("file-timeout = inf", '"file-timeout" must be a number from 0 to 86400, got inf'),
        ("file-timeout = 1e7", '"file-timeout" must be a number from 0 to 86400, got 10000000.0'),
        ("worker-memory-mib = 64", '"worker-memory-mib" must be 0 (no limit) or an int from 256 to 1048576, got 64'),
        ("worker-stack-mib = 100000000", '"worker-stack-mib" must be an int from 8 to 4096, got 100000000'),
        ("worker-stack-mib = 0", '"worker-stack-mib" must be an int from 8 to 4096, got 0'),
    ],
)
def test_resource_options_out_of_range_are_configuration_errors(
    make_tree: MakeTree, setting: str, message: str
) -> None:
    """They crashed the run (OverflowError: a poll() timeout of inf or past a C int) or made
    every file a DL000 that blamed the file (a worker too small to parse, or unable to start)."""
    root = make_tree({"pyproject.toml": f'[tool.declint]\nroots = ["tensorrt_llm"]\n{setting}\n'})
    assert check(str(root)) == (2, f"declint: error: {root / 'pyproject.toml'}:3: {message}\n")


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            'modality-encoders = { "image" = "visoin" }',
            '"modality-encoders" names encoder "visoin", which "encoders" does not list (vision, audio) '
            '(did you mean "vision"?)',
        ),
        (
            'encoder-name-hints = { "speech" = ["whisper"] }',
            '"encoder-name-hints" names encoder "speech", which "encoders" does not list (vision, audio)',
        ),
    ],
)
def test_an_encoder_the_encoders_option_does_not_list_is_a_configuration_error(
    make_tree: MakeTree, setting: str, message: str
) -> None:
    """Red-team 47: accepted, a registered image modality then required an encoder no
    declaration may name. The defaults name audio, which `encoders` may leave out: not checked."""
    root = make_tree({"pyproject.toml": f'[tool.declint]\nroots = ["tensorrt_llm"]\n{setting}\n'})
    assert check(str(root)) == (2, f"declint: error: {root / 'pyproject.toml'}:3: {message}\n")
    (root / "pyproject.toml").write_text('[tool.declint]\nroots = ["tensorrt_llm"]\nencoders = ["vision"]\n')
    assert check("--no-cache", str(root))[0] == 0


def test_defaults_naming_an_encoder_the_encoders_option_leaves_out_keep_to_the_listed_ones(
    make_tree: MakeTree,
) -> None:
    """Red-team 50: with `encoders = ["vision"]`, the default modality-encoders still mapped
    audio to an audio encoder: a model registering audio got DL102 (declare audio) and, declaring
    it, DL104 (unknown encoder). The defaults keep to the listed encoders."""
    model = (
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n"
        "from tensorrt_llm._torch.models.modeling_utils import register_input_processor\n\n\n"
        "@register_input_processor(\n"
        "    object, model_type='m', placeholder_metadata=dict(placeholder_map={'image': '<i>', 'audio': '<a>'})\n"
        ")\n"
        "class MModel(MultimodalModelMixin):\n"
        "    encoder_attention_backends = {'vision': FixedEncoderAttention('hf')}\n"
    )
    root = make_tree({MODEL + "modeling_m.py": model})
    assert "DL102" in check("--no-cache", str(root))[1]  # audio is an encoder by default: declare it
    (root / "pyproject.toml").write_text('[tool.declint]\nroots = ["tensorrt_llm"]\nencoders = ["vision"]\n')
    assert check("--no-cache", str(root)) == (0, "All clear: 15 files checked.\n")


def test_resource_options_at_their_limits_are_accepted(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    expected = check("--no-cache", str(root))
    assert expected[0] == 1
    for settings in (
        "file-timeout = 86400\nworker-memory-mib = 0\nworker-stack-mib = 8\n",
        "file-timeout = 0\nworker-memory-mib = 256\nworker-stack-mib = 4096\n",
        "file-timeout = 0.5\nworker-memory-mib = 1048576\n",
    ):
        (root / "pyproject.toml").write_text(f'[tool.declint]\nroots = ["tensorrt_llm"]\n{settings}')
        assert check("--no-cache", "--jobs", "2", str(root)) == expected


def test_the_pool_waits_without_limit_on_an_infinite_or_huge_timeout() -> None:
    """Limits made in code are not validated: poll() is given no limit for infinity and at most
    its C int of milliseconds (both raised OverflowError)."""
    import math

    from declint.workers import Limits, ProcessPool, _poll_ms

    assert (_poll_ms(math.inf), _poll_ms(1e7), _poll_ms(0.0015), _poll_ms(None)) == (None, 2**31 - 1, 2, None)
    for timeout in (math.inf, 1e7):
        with ProcessPool(_double, None, 2, Limits(timeout=timeout)) as pool:
            assert pool.map([1, 2, 3]) == [2, 4, 6]


def _double(state: object, item: int) -> int:
    return 2 * item


def test_select_and_ignore_on_the_command_line(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    assert check("--select", "DL101", str(root))[0] == 0
    assert check("--ignore", "DL103", str(root))[0] == 0
    code, output = check("--select", "DL1O3", str(root))
    assert code == 2 and 'unknown rule code "DL1O3" (did you mean "DL103"?)' in output


FINDING_DL103 = (
    'tensorrt_llm/_torch/models/modeling_good.py:2:35: DL103 backend name "TRTLLM" retyped as a string literal; '
    "read it from the shared Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is "
    "type-checked and cannot drift\n"
)


def test_a_cli_select_starts_a_new_selection(make_tree: MakeTree) -> None:
    """As ruff's: --select replaces the configuration's select *and* ignore; --ignore still applies."""
    root = make_tree(
        {
            "pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\nselect = ["DL101"]\nignore = ["DL103"]\n',
            MODEL + "modeling_good.py": CONFIG_CHECK,
        }
    )
    assert check(str(root)) == (0, "All clear: 15 files checked.\n")
    assert check("--select", "DL103", str(root)) == (1, FINDING_DL103 + "Found 1 finding in 15 files.\n")
    assert check("--select", "DL1", "--ignore", "DL103", str(root)) == (0, "All clear: 15 files checked.\n")


@pytest.mark.parametrize(
    ("config", "args", "message"),
    [
        ("select = []\n", (), "no rule is enabled (select: none; ignore: none)"),
        ("", ("--ignore", "DL"), "no rule is enabled (select: DL; ignore: DL)"),
        ("", ("--select", "DL103", "--ignore", "DL103"), "no rule is enabled (select: DL103; ignore: DL103)"),
        ('ignore = ["DL103"]\n', ("--select", ""), "no rule is enabled (select: none; ignore: none)"),
    ],
)
def test_a_run_with_no_rule_enabled_is_a_usage_error(
    make_tree: MakeTree, config: str, args: tuple[str, ...], message: str
) -> None:
    """Checking with no rule must not print "All clear"."""
    root = make_tree(
        {
            "pyproject.toml": f'[tool.declint]\nroots = ["tensorrt_llm"]\n{config}',
            MODEL + "modeling_good.py": CONFIG_CHECK,
        }
    )
    assert check(*args, str(root)) == (2, f"declint: error: {message}\n")


def test_per_path_ignores(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            "pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\n[tool.declint.per-path-ignores]\n'
            '"tensorrt_llm/_torch/models/**" = ["DL103"]\n',
            MODEL + "modeling_good.py": CONFIG_CHECK,
        }
    )
    assert check(str(root)) == (0, "All clear: 15 files checked.\n")


def test_json_output_is_versioned_and_complete(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    code, output = check("--format", "json", str(root))
    document = json.loads(output)
    assert code == 1
    assert document["schema_version"] == 1
    assert document["findings"] == [
        {
            "code": "DL103",
            "name": "backend-literal",
            "severity": "error",
            "path": "tensorrt_llm/_torch/models/modeling_good.py",
            "line": 2,
            "column": 34,
            "end_line": 2,
            "end_column": 42,
            "message": 'backend name "TRTLLM" retyped as a string literal; read it from the shared Literal '
            "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift",
            "context": "is_trtllm",
            "doc": "docs/rules.md#dl103-backend-literal",
            # added compatibly since the first release: the stable fingerprint, and the fix (none here)
            "fingerprint": "23a5fe464b12022e",
            "fix": None,
        }
    ]


def test_statistics_and_output_file(make_tree: MakeTree, tmp_path: Path) -> None:
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    report = tmp_path / "report.txt"
    code, output = check("--statistics", "--output", str(report), str(root))
    assert (code, output) == (1, "")
    assert report.read_text().splitlines()[-1] == "    1  DL103  backend-literal"


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    code, output = check(str(tmp_path / "nope"))
    assert code == 2 and "path does not exist" in output


def test_rule_crash_costs_one_file(make_tree: MakeTree, monkeypatch: object) -> None:
    import pytest

    from declint.rules.backend_literal import BackendLiteral

    def _message(self: object, value: str) -> str | None:
        raise ValueError("boom")

    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK, MODEL + "modeling_other.py": "x = 1\n"})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BackendLiteral, "_message", _message)
        code, output = check(str(root / MODEL))
    assert code == 1
    assert output.splitlines()[0] == (
        "tensorrt_llm/_torch/models/modeling_good.py:1:1: DL000 rule DL103 crashed: ValueError: boom"
    )


def test_gitignore_and_excludes_are_respected(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            "pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\nexclude = ["**/generated/"]\n',
            MODEL + "modeling_good.py": CONFIG_CHECK,
            MODEL + "generated/modeling_gen.py": CONFIG_CHECK,
            MODEL + "ignored/modeling_ign.py": CONFIG_CHECK,
            MODEL + ".gitignore": "ignored/\n",
        }
    )
    code, output = check(str(root))
    assert code == 1
    assert [line.split(":")[0] for line in output.splitlines()[:-1]] == ["tensorrt_llm/_torch/models/modeling_good.py"]


def test_symlink_out_of_root_is_not_followed(make_tree: MakeTree, tmp_path_factory: object) -> None:
    import tempfile

    root = make_tree({})
    with tempfile.TemporaryDirectory() as outside:
        target = Path(outside) / "secret.py"
        target.write_text(CONFIG_CHECK)
        (root / "link.py").symlink_to(target)
        code, output = check(str(root))
    assert code == 1
    assert output.splitlines()[0] == "link.py:1:1: DL000 symlink points outside the project root; not followed"


def test_output_is_identical_across_hash_seeds(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK, MODEL + "modeling_bad.py": "def f(:\n"})
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-m", "declint", "check", "--format", "json", str(root)],
            capture_output=True,
            env=env,
            check=False,
        )
        assert done.returncode == 1
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_exit_zero_keeps_2_for_errors(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": "[tool.declint]\nroot = 1\n"})
    code, output = check("--exit-zero", str(root))
    assert code == 2
    assert 'unknown key "root" (did you mean "roots"?)' in output


@pytest.mark.parametrize(
    ("pyproject", "line"),
    [
        ('[tool.declint]\nroots = ["tensorrt_llm"]\nshared-literal = "tensorrt_llm.nope.Backend"\n', 3),
        # Blank lines above the key (the line of the first blank one was reported), and another
        # tool's key of that name above the table.
        ('[tool.declint]\nroots = ["tensorrt_llm"]\n\n\nshared-literal = "tensorrt_llm.nope.Backend"\n', 5),
        (
            '[tool.other]\nshared-literal = "x"\n\n[tool.declint]\nroots = ["tensorrt_llm"]\n'
            'shared-literal = "tensorrt_llm.nope.Backend"\n',
            6,
        ),
    ],
)
def test_missing_literal_module_is_dl100_at_the_config_key(make_tree: MakeTree, pyproject: str, line: int) -> None:
    root = make_tree({"pyproject.toml": pyproject})
    code, output = check(str(root / "tensorrt_llm/llmapi"))
    assert code == 1
    assert output.splitlines()[0] == (
        f"pyproject.toml:{line}:1: DL100 shared Literal tensorrt_llm.nope.Backend not found: no module "
        "tensorrt_llm.nope under the indexed roots (tensorrt_llm); set shared-literal in [tool.declint]"
    )


def test_index_show_lists_models_and_the_literal(make_tree: MakeTree) -> None:
    root = make_tree(
        {
            "tensorrt_llm/_torch/models/modeling_m.py": (
                "from .modeling_multimodal_mixin import MultimodalModelMixin\n\n"
                "class Base(MultimodalModelMixin):\n    encoder_attention_backends = {'vision': ('TRTLLM',)}\n\n"
                "class Child(Base):\n    pass\n"
            ),
        }
    )
    result = CliRunner().invoke(cli, ["index", "show", str(root)])
    document = json.loads(result.output)
    assert result.exit_code == 0
    assert document["shared_literal"] == {
        "qualname": "tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend",
        "found": True,
        "members": ["VANILLA", "TRTLLM", "FLASHINFER"],
    }
    child = document["models"][1]
    assert child["qualname"] == "tensorrt_llm._torch.models.modeling_m.Child"
    assert child["declared_in"] == "tensorrt_llm._torch.models.modeling_m.Base"
    assert child["declaration"] == [{"encoder": "vision", "kind": "configurable", "backends": ["TRTLLM"], "reason": ""}]


def test_progress_line_only_for_long_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from declint.cli import _progress

    for done in range(1, 11):
        _progress(done, 10)
    for done in range(1, 251):
        _progress(done, 250)
    err = capsys.readouterr().err
    assert err == "".join(f"\rdeclint: checked {n}/250 files" for n in (50, 100, 150, 200)) + (
        "\rdeclint: checked 250/250 files\n"
    )


GLOBS = (
    ("**/_torch/models/**", "**/_torch/attention_backend/**"),
    ("*.py",),
    ("docs/", "/top.py", "a/**/b.py"),
    ("tests/**", "!tests/keep.py"),  # a negation: the spec decides
    ("build", "x/y/"),
)
GLOB_PATHS = (
    "tensorrt_llm/_torch/models/modeling_a.py",
    "_torch/models/x/y.py",
    "tensorrt_llm/_torch/attention_backend/trtllm.py",
    "top.py",
    "sub/top.py",
    "docs/conf.py",
    "a/b.py",
    "a/x/y/b.py",
    "tests/keep.py",
    "tests/other.py",
    "build/lib/m.py",
    "x/y/z.py",
    "x/y",
    "./a/b.py",
    "/abs/docs/conf.py",
)


@pytest.mark.parametrize("patterns", GLOBS)
def test_glob_match_agrees_with_pathspec(patterns: tuple[str, ...]) -> None:
    """The per-path option matcher answers as pathspec's GitIgnoreSpec does, negations included."""
    import pathspec

    from declint.discovery import glob_match

    spec = pathspec.GitIgnoreSpec.from_lines(list(patterns))
    expected = {rel: spec.match_file(rel) for rel in GLOB_PATHS}
    assert {rel: glob_match(rel, patterns) for rel in GLOB_PATHS} == expected
    assert any(expected.values()) and not all(expected.values())


def test_the_schema_walk_reuses_the_run_walk_and_finds_what_os_walk_finds(tmp_path: Path) -> None:
    """DL108's walk of the root reads the directories discovery listed from its listings and lists
    the others itself (excluded, gitignored): the same files as os.walk, pruned the same way."""
    from declint.config import load_config
    from declint.discovery import discover, json_files_under, listings_lent

    schema = "trtllm-serve-config.schema.json"
    for rel in ("docs", "build/out", "ignored", "node_modules/pkg", "a/b.json"):
        (tmp_path / rel).mkdir(parents=True)
    for rel in (f"docs/{schema}", f"build/out/{schema}", f"ignored/{schema}", f"node_modules/pkg/{schema}", "x.json"):
        (tmp_path / rel).write_text("{}", encoding="utf-8")
    (tmp_path / "docs" / "m.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "linked").symlink_to(tmp_path / "docs")  # not followed, as os.walk does not
    (tmp_path / "dangling.json").symlink_to(tmp_path / "missing.json")  # a file entry to os.walk
    (tmp_path / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.declint]\nexclude = ["build/"]\n', encoding="utf-8")
    config = load_config(tmp_path / "pyproject.toml", default_root=tmp_path, known_codes=frozenset())
    pruned = frozenset({"node_modules"})

    found = discover([tmp_path], config)
    assert str(tmp_path / "docs") in found.listings and str(tmp_path / "build") not in found.listings
    expected = []
    for directory, subdirectories, files in os.walk(tmp_path):
        subdirectories[:] = [d for d in subdirectories if d not in pruned]
        expected += [Path(directory, name) for name in files if name.endswith(".json")]
    expected.sort()
    assert [p.relative_to(tmp_path).as_posix() for p in expected] == [
        f"build/out/{schema}",
        "dangling.json",
        f"docs/{schema}",
        f"ignored/{schema}",
        "x.json",
    ]
    assert sorted(json_files_under(tmp_path, pruned)) == expected
    with listings_lent(found.listings):
        assert sorted(json_files_under(tmp_path, pruned)) == expected


def test_a_run_leaves_no_reference_cycles_that_grow_with_the_tree(tmp_path: Path) -> None:
    """The CLI runs without the cyclic collector (`declint.cli.main`): what a run allocates must be
    freed by reference counting alone, so the garbage only that collector could free may not
    grow with the number of files (it held every file's index entry, through a closure, before)."""
    model = (
        "from tensorrt_llm._torch.attention_backend.interface import AttentionBackend\n\n\n"
        "class Backend{n}(AttentionBackend):\n    attn_backend = 'TRTLLM'\n"
    )
    filler = "import os\n\n\nclass Helper{n}(object):\n    def run(self):\n        return os.sep\n"

    def tree(name: str, files: int) -> Path:
        root = tmp_path / name
        sources = {f"tensorrt_llm/pkg{n % 7}/sub/filler_{n}.py": filler.format(n=n) for n in range(files)}
        sources |= {f"tensorrt_llm/_torch/models/modeling_m{n}.py": model.format(n=n) for n in range(files // 10)}
        write_tree(root, {**PRELUDE, **sources})
        return root

    def cyclic_garbage(root: Path) -> int:
        gc.collect()
        enabled = gc.isenabled()
        gc.disable()
        try:
            result = CliRunner().invoke(cli, ["check", "--no-cache", "--jobs", "1", str(root)])
            assert result.exit_code == 1, result.output
            return gc.collect()
        finally:
            if enabled:
                gc.enable()

    small, large = tree("small", 20), tree("large", 200)
    cyclic_garbage(small)  # first use: lazily built caches
    assert cyclic_garbage(large) == cyclic_garbage(small)


def test_timings_go_to_stderr_and_leave_the_report_alone(make_tree: MakeTree) -> None:
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    files = len(list(root.rglob("*.py")))
    plain = CliRunner().invoke(cli, ["check", "--format", "json", "--no-cache", "--jobs", "1", str(root)])
    timed = CliRunner().invoke(cli, ["check", "--format", "json", "--no-cache", "--jobs", "1", "--timings", str(root)])
    assert (plain.exit_code, timed.exit_code) == (1, 1)
    assert json.loads(timed.stdout)["findings"] == json.loads(plain.stdout)["findings"]
    assert plain.stderr == ""
    wall, cpu, counts = timed.stderr.splitlines()
    phases = r"(?:snapshot|discover|cache load|scan|index|project rules|check|cache save) \d+\.\d{3} s"
    assert re.fullmatch(
        rf"declint: timings \(wall\): discover \d+\.\d{{3}} s(?:, {phases})*; total \d+\.\d{{3}} s after start-up",
        wall,
    )
    assert "cache" not in wall  # --no-cache: neither loaded nor saved
    assert re.fullmatch(
        r"declint: CPU: start-up and imports \d+\.\d\d s, this process \d+\.\d\d s, workers \d+\.\d\d s", cpu
    )
    assert counts == (
        f"declint: files: {files} read, 4 indexed in full, 6 checked, 0 results from the cache, "
        "0 worker crashes, 0 timeouts"
    )


def test_timings_of_a_run_answered_from_the_snapshot(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DECLINT_NO_CACHE", raising=False)  # the suite runs without a cache
    root = make_tree({MODEL + "modeling_good.py": CONFIG_CHECK})
    files = len(list(root.rglob("*.py")))
    settle(root)  # files written in the last seconds are read again next time (racily clean)
    cold = CliRunner().invoke(cli, ["check", "--jobs", "1", "--timings", str(root)])
    warm = CliRunner().invoke(cli, ["check", "--jobs", "1", "--timings", str(root)])
    assert cold.stdout == warm.stdout
    assert "cache save" in cold.stderr.splitlines()[0]
    assert re.fullmatch(r"declint: timings \(wall\): snapshot \d+\.\d{3} s; total \d+\.\d{3} s after start-up",
                        warm.stderr.splitlines()[0])  # fmt: skip
    assert warm.stderr.splitlines()[2] == (
        f"declint: files: 0 read, 0 indexed in full, 0 checked, {files} results from the cache, "
        "0 worker crashes, 0 timeouts"
    )


def test_include_narrows_the_checked_files_not_the_index(make_tree: MakeTree) -> None:
    """`include` selects the files to check; phase 1 still indexes every Python file under the
    roots, so the shared Literal in llmapi/ (outside the pattern) is found: no DL100."""
    root = make_tree(
        {
            "pyproject.toml": '[tool.declint]\nroots = ["tensorrt_llm"]\ninclude = ["**/models/*.py"]\n',
            MODEL + "modeling_plain.py": "def f(x):\n    return x\n",
        }
    )
    assert check(str(root)) == (0, "All clear: 4 files checked.\n")
    assert check(str(root / MODEL / "modeling_plain.py")) == (0, "All clear: 1 file checked.\n")
    result = CliRunner().invoke(cli, ["index", "show", str(root)])
    assert result.exit_code == 0
    assert json.loads(result.output)["shared_literal"]["found"] is True


def test_paths_from_two_projects_are_a_usage_error(tmp_path: Path) -> None:
    """Two configurations cannot both apply: the common parent used to be checked with neither."""
    for name in ("s1", "s2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text('[tool.declint]\nroots = ["."]\n')
        (tmp_path / name / "a.py").write_text("x = 1\n")
    s1, s2 = tmp_path / "s1", tmp_path / "s2"
    refused = (
        f"declint: error: the paths belong to different projects, configured by {s1 / 'pyproject.toml'} and "
        f"{s2 / 'pyproject.toml'}; run declint once per project (or pass --config)\n"
    )
    assert check(str(s2), str(s1)) == (2, refused)
    assert check("--show-settings", str(s1), str(s2)) == (2, refused)
    # One project, however its paths are given; or an explicit --config, which applies to all.
    code, output = check(str(s1 / "a.py"), str(s1))
    assert (code, output.splitlines()[-1]) == (1, "Found 1 finding in 1 file.")
    code, output = check("--config", str(s1 / "pyproject.toml"), str(s1), str(s2))
    assert (code, output.splitlines()[-1]) == (1, "Found 1 finding in 2 files.")


def test_a_literal_module_named_otherwise_for_a_missing_init_says_why(make_tree: MakeTree) -> None:
    """tensorrt_llm/llmapi/llm_args.py exists, but without tensorrt_llm/__init__.py it is module
    llmapi.llm_args: "no module ... under the indexed roots" sent the user looking for a file
    that is there."""
    root = make_tree({})
    (root / "tensorrt_llm/__init__.py").unlink()
    code, output = check(str(root / "tensorrt_llm/llmapi"))
    assert code == 1
    assert output.splitlines()[0] == (
        "pyproject.toml:1:1: DL100 shared Literal tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend not found: "
        "tensorrt_llm/llmapi/llm_args.py is module llmapi.llm_args, not tensorrt_llm.llmapi.llm_args, because a "
        "directory above it has no __init__.py (declint reads a namespace package only inside a package): add "
        "the __init__.py, or set shared-literal in [tool.declint]"
    )


def test_a_directory_without_init_inside_a_package_is_a_namespace_package(make_tree: MakeTree) -> None:
    """PEP 420: without tensorrt_llm/llmapi/__init__.py, `import tensorrt_llm.llmapi.llm_args`
    still works (TensorRT-LLM's `_torch/models/checkpoints/hf/` has no __init__.py): the shared
    Literal is found there, as with the __init__.py."""
    root = make_tree({})
    assert check(str(root)) == (0, "All clear: 14 files checked.\n")
    (root / "tensorrt_llm/llmapi/__init__.py").unlink()
    assert check(str(root)) == (0, "All clear: 13 files checked.\n")


def test_a_literal_module_inside_a_larger_package_names_the_module_it_is(make_tree: MakeTree) -> None:
    """An __init__.py above the project's package makes its files part of a larger package: the
    file is there under a longer name, which is no missing __init__.py."""
    root = make_tree({"__init__.py": ""})
    code, output = check(str(root / "tensorrt_llm/llmapi"))
    assert code == 1
    module = f"{root.name}.tensorrt_llm.llmapi.llm_args"
    assert output.splitlines()[0] == (
        "pyproject.toml:1:1: DL100 shared Literal tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend not found: "
        f"tensorrt_llm/llmapi/llm_args.py is module {module}, not tensorrt_llm.llmapi.llm_args: the __init__.py "
        f"files around it make it part of a larger package; set shared-literal to {module}.EncoderAttentionBackend, "
        "or remove the __init__.py above the package"
    )
