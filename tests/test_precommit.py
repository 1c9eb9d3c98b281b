"""The real pre-commit (from PyPI) runs this repository's hooks on a temporary git repository.

pre-commit installs the hook repository with pip, so this test needs PyPI (and takes a while the
first time). The hook repository is a snapshot of this working tree (tracked and untracked files
git does not ignore), committed in a temporary directory, so the test checks the code as it is,
not the last commit.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from declint.testing import PRELUDE, write_tree
from tests.conftest import REPO

PRE_COMMIT = shutil.which("pre-commit", path=os.path.dirname(sys.executable))
pytestmark = pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install -e '.[test]')")

MODEL = "tensorrt_llm/_torch/models/modeling_kimi.py"
VIOLATING = (
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
    "class Kimi(MultimodalModelMixin):\n"
    '    encoder_attention_backends = {"vision": ("VANILLA", "FLASHINFR")}\n'
)
ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=environment(cwd), capture_output=True, text=True, check=True)
    return done.stdout


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    return {**env, **ENV, "HOME": str(home)}


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This working tree, committed in a temporary repository."""
    target = tmp_path_factory.mktemp("hooks") / "declint"
    listed = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file() and not source.is_symlink():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "snapshot")
    return target


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def pre_commit(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert PRE_COMMIT is not None
    env = {**environment(cwd), "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return subprocess.run([PRE_COMMIT, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def test_manifest_is_valid() -> None:
    assert PRE_COMMIT is not None
    done = subprocess.run(
        [PRE_COMMIT, "validate-manifest", str(REPO / ".pre-commit-hooks.yaml")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_hook_fails_on_a_staged_violation_then_passes(tmp_path: Path, hook_repo: Path, pre_commit_home: Path) -> None:
    project = tmp_path / "project"
    write_tree(project, PRELUDE)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "clean")
    (project / MODEL).write_text(VIOLATING)
    git(project, "add", MODEL)

    failed = pre_commit(project, pre_commit_home, "try-repo", str(hook_repo), "declint")
    output = failed.stdout + failed.stderr
    assert failed.returncode == 1, output
    # The Literal lives in an unstaged file: the hook still knows its members (index from the roots).
    assert (
        f'{MODEL}:5:57: DL104 encoder "vision": "FLASHINFR" is not a member of EncoderAttentionBackend '
        '(did you mean "FLASHINFER"?)'
    ) in output
    assert "Found 1 finding in 1 file." in output

    full = pre_commit(project, pre_commit_home, "try-repo", str(hook_repo), "declint-full", "--hook-stage", "manual")
    assert full.returncode == 1, full.stdout + full.stderr
    assert f"{MODEL}:5:57: DL104 " in full.stdout

    (project / MODEL).write_text(VIOLATING.replace("FLASHINFR", "FLASHINFER"))
    git(project, "add", MODEL)
    passed = pre_commit(project, pre_commit_home, "try-repo", str(hook_repo), "declint")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout

    # A stub or a script the hook's `types: [python]` matches, but declint's `include` does not:
    # not passed to declint at all (it said "no Python files found" of them).
    git(project, "commit", "-q", "-m", "fixed")
    (project / "stubs").mkdir()
    (project / "stubs/x.pyi").write_text('attn_backend: str = "TRTLLM"\n')
    (project / "run").write_text('#!/usr/bin/env python3\nattn_backend = "TRTLLM"\n')
    (project / "run").chmod(0o755)
    git(project, "add", "stubs/x.pyi", "run")
    skipped = pre_commit(project, pre_commit_home, "try-repo", str(hook_repo), "declint")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "(no files to check)Skipped" in skipped.stdout


def test_ci_examples_use_real_options() -> None:
    """Every `declint ...` command in examples/ci parses with the real command line."""
    import re
    import shlex

    import click
    import yaml

    from declint.cli import cli

    commands: list[str] = []
    for path in sorted((REPO / "examples" / "ci").glob("*.yml")):
        text = yaml.safe_load(path.read_text(encoding="utf-8"))
        commands += [line for line in _strings(text) if "declint check" in line]
    assert len(commands) >= 4
    for command in commands:
        command = re.sub(r"\$\{\{[^}]*\}\}", "REF", command)
        words = shlex.split(command.split("|")[0])
        words = words[words.index("declint") + 1 :]
        assert words[0] == "check"
        check = cli.commands["check"]
        assert isinstance(check, click.Command)
        check.make_context("check", words[1:])  # raises on an unknown option or a bad value


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in _strings(value)]
    if isinstance(node, list):
        return [s for value in node for s in _strings(value)]
    return []


def test_pre_commit_config_example_is_valid() -> None:
    assert PRE_COMMIT is not None
    example = REPO / "examples" / "ci" / "pre-commit-config.yaml"
    done = subprocess.run([PRE_COMMIT, "validate-config", str(example)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
