"""--diff-base on a temporary git repository: annotations only on changed lines; what the change
breaks elsewhere is summarised; what was already broken elsewhere is only counted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from declint.cli import cli
from tests.conftest import MakeTree

MODEL = "tensorrt_llm/_torch/models/"
LITERAL = "tensorrt_llm/llmapi/llm_args.py"
DECLARED = (
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
    "class Declared(MultimodalModelMixin):\n"
    '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}\n'
)
OLD = 'def old(attn_backend="TRTLLM"):\n    return attn_backend\n'
EDITED = "def edited(attn_backend):\n    return attn_backend\n"
ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **ENV, "HOME": str(root)}
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(make_tree: MakeTree, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_tree(
        {MODEL + "modeling_declared.py": DECLARED, MODEL + "modeling_old.py": OLD, MODEL + "modeling_edited.py": EDITED}
    )
    monkeypatch.chdir(root)
    monkeypatch.setenv("HOME", str(root))
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "feature")
    # The change: FLASHINFER leaves the Literal (breaking modeling_declared.py, untouched), a new
    # backend literal in modeling_edited.py, and a new untracked file with one more.
    literal = root / LITERAL
    literal.write_text(literal.read_text().replace(', "FLASHINFER"]', "]"))
    (root / MODEL / "modeling_edited.py").write_text(EDITED + '\n\ndef added(attn_backend="VANILLA"):\n    pass\n')
    git(root, "commit", "-q", "-am", "change")
    (root / MODEL / "modeling_new.py").write_text('BACKEND_NAME = "TRTLLM"\n')
    return root


def check(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args])


def test_annotations_only_on_changed_lines_and_the_consequence_in_the_summary(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = check("--diff-base", "main", "--output-format", "github", "tensorrt_llm")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    annotations = [line.split("::")[1] for line in lines if line.startswith("::error ")]
    assert annotations == [
        f"error file={MODEL}modeling_edited.py,line=5,col=24,endColumn=33,title=declint DL103 (backend-literal)",
        f"error file={MODEL}modeling_new.py,line=1,col=16,endColumn=24,title=declint DL103 (backend-literal)",
    ]
    assert (
        "::notice title=declint::1 finding outside the changed lines, caused by the change: listed in the log and "
        "the job summary."
    ) in lines
    elsewhere = lines[lines.index("Outside the changed lines, caused by the change:") + 1]
    assert elsewhere == (
        f'{MODEL}modeling_declared.py:5:67: DL104 encoder "vision": "FLASHINFER" is not a member of '
        "EncoderAttentionBackend"
    )
    assert lines[-1] == (
        f"Found 3 findings in {checked(repo)} files (2 on the lines changed since main, 1 elsewhere caused by the "
        "change; 1 older ones outside the changed lines not shown)."
    )
    assert "modeling_old.py" not in result.stdout  # already there at the merge base, off the diff
    text = summary.read_text()
    on, off = text.split("### Outside the changed lines, caused by the change")
    assert "### On the lines changed since `main`" in on and "modeling_edited.py:5:24" in on
    assert "modeling_declared.py:5:67" in off and "modeling_edited" not in off


def test_json_marks_what_is_on_the_changed_lines(repo: Path) -> None:
    document = json.loads(check("--diff-base", "main", "--format", "json", "tensorrt_llm").stdout)
    assert [(f["path"], f["line"], f["code"], f["on_changed_lines"]) for f in document["findings"]] == [
        (MODEL + "modeling_declared.py", 5, "DL104", False),
        (MODEL + "modeling_edited.py", 5, "DL103", True),
        (MODEL + "modeling_new.py", 1, "DL103", True),
    ]
    base = git(repo, "rev-parse", "main")
    assert document["changed_lines"] == {
        "rev": "main",
        "merge_base": base,
        "changed_files": 3,
        "preexisting_elsewhere": 1,
    }


def test_the_merge_base_is_the_reference(repo: Path) -> None:
    """Commits on main after the branch point are not part of the change."""
    git(repo, "stash", "-u", "-q")
    git(repo, "checkout", "-q", "main")
    (repo / MODEL / "modeling_old.py").write_text("# moved down\n" + OLD)
    git(repo, "commit", "-q", "-am", "main moves on")
    git(repo, "checkout", "-q", "feature")
    git(repo, "stash", "pop", "-q")
    document = json.loads(check("--diff-base", "main", "--format", "json", "tensorrt_llm").stdout)
    assert document["changed_lines"]["merge_base"] == git(repo, "merge-base", "main", "HEAD")
    assert [f["path"] for f in document["findings"]].count(MODEL + "modeling_old.py") == 0


def test_unchanged_tree_is_clean_and_bad_revisions_are_errors(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "all in")
    result = check("--diff-base", "HEAD", "tensorrt_llm")
    assert result.exit_code == 0
    assert result.stdout.endswith(
        "(0 on the lines changed since HEAD, 0 elsewhere caused by the change; "
        "4 older ones outside the changed lines not shown).\n"
    )
    result = check("--diff-base", "no-such-branch", "tensorrt_llm")
    assert result.exit_code == 2
    assert 'unknown revision "no-such-branch"' in result.output


def checked(root: Path) -> int:
    document = json.loads(check("--format", "json", str(root / "tensorrt_llm")).stdout)
    return int(document["summary"]["files_checked"])


def test_text_report_puts_the_consequence_under_its_own_heading(repo: Path) -> None:
    lines = check("--diff-base", "main", "tensorrt_llm").stdout.splitlines()
    heading = lines.index("Outside the changed lines, caused by the change (not annotated):")
    assert [line.split(": ")[0] for line in lines[:heading]] == [
        f"{MODEL}modeling_edited.py:5:24",
        f"{MODEL}modeling_new.py:1:16",
        "",
    ]
    assert lines[heading + 1].startswith(f"{MODEL}modeling_declared.py:5:67: DL104 ")


def test_diff_parsing_handles_quoted_paths_deletions_and_counts() -> None:
    from declint.changed_lines import _parse_diff

    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -3 +3 @@\n-a\n+b\n@@ -10,2 +10,0 @@\n-c\n-d\n"
        "@@ -20,0 +21,3 @@\n+e\n+f\n+g\n"
        'diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n--- "a/caf\\303\\251.py"\n'
        '+++ "b/caf\\303\\251.py"\n@@ -1 +1,2 @@\n-x\n+y\n+z\n'
        "diff --git a/gone.py b/gone.py\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    assert _parse_diff(diff) == {"x.py": frozenset({3, 21, 22, 23}), "caf\u00e9.py": frozenset({1, 2})}


def test_project_in_a_subdirectory_of_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from declint.testing import PRELUDE, write_tree

    top = tmp_path / "repo"
    files = {
        MODEL + "modeling_declared.py": DECLARED,
        MODEL + "modeling_old.py": OLD,
        MODEL + "modeling_edited.py": EDITED,
    }
    write_tree(top / "proj", {**PRELUDE, **files})
    monkeypatch.setenv("HOME", str(top))
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "base")
    literal = top / "proj" / LITERAL
    literal.write_text(literal.read_text().replace(', "FLASHINFER"]', "]"))
    monkeypatch.chdir(top)
    result = check("--diff-base", "main", "--output-format", "github", "proj/tensorrt_llm")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("::error")] == []  # the Literal's own line is fine
    assert lines[lines.index("Outside the changed lines, caused by the change:") + 1].startswith(
        f"{MODEL}modeling_declared.py:5:67: DL104 "
    )
    assert lines[-1].endswith(
        "(0 on the lines changed since main, 1 elsewhere caused by the change; "
        "1 older ones outside the changed lines not shown)."
    )
    (top / "proj" / MODEL / "modeling_declared.py").write_text(DECLARED + "\n\nX = 1\n")
    (top / "proj" / MODEL / "modeling_edited.py").write_text(EDITED + 'BACKEND_NAME = "TRTLLM"\n')
    result = check("--diff-base", "main", "--output-format", "github", "proj/tensorrt_llm")
    annotations = [line.split("::")[1] for line in result.stdout.splitlines() if line.startswith("::error")]
    # paths from the working directory (the repository root); a change elsewhere in modeling_declared.py
    # does not make its finding's line a changed one
    assert annotations == [
        f"error file=proj/{MODEL}modeling_edited.py,line=3,col=16,endColumn=24,title=declint DL103 (backend-literal)"
    ]
