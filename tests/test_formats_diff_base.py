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
    from declint.changed_lines import parse_diff

    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -3 +3 @@\n-a\n+b\n@@ -10,2 +10,0 @@\n-c\n-d\n"
        "@@ -20,0 +21,3 @@\n+e\n+f\n+g\n"
        'diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n--- "a/caf\\303\\251.py"\n'
        '+++ "b/caf\\303\\251.py"\n@@ -1 +1,2 @@\n-x\n+y\n+z\n'
        "diff --git a/gone.py b/gone.py\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    added = {file.new: file.lines for file in parse_diff(diff) if file.new is not None}
    assert added == {"x.py": frozenset({3, 21, 22, 23}), "caf\u00e9.py": frozenset({1, 2})}


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
        f"proj/{MODEL}modeling_declared.py:5:67: DL104 "  # from the repository root, as the annotations
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


def annotated(*args: str) -> list[str]:
    """file:line:code of the findings on changed lines, from the json report."""
    document = json.loads(check("--diff-base", "main", "--format", "json", *args).stdout)
    return [f"{f['path']}:{f['line']}:{f['code']}" for f in document["findings"] if f["on_changed_lines"]]


def test_a_path_with_a_space_is_matched(repo: Path) -> None:
    """git ends the `+++` line of a path with a space in it with a tab: the path never matched."""
    (repo / MODEL / "modeling spaced.py").write_text(EDITED)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "spaced")
    (repo / MODEL / "modeling spaced.py").write_text(EDITED + 'BACKEND_NAME = "TRTLLM"\n')
    assert annotated(MODEL + "modeling spaced.py") == [f"{MODEL}modeling spaced.py:3:DL103"]


def test_an_added_line_that_reads_like_a_file_header_is_a_changed_line(repo: Path) -> None:
    """`++ note` added is `+++ note` in the diff: read as a new file's header, it hid the file's
    later hunks."""
    edited = repo / MODEL / "modeling_edited.py"
    edited.write_text(
        'def edited(attn_backend):\n    """Doc.\n++ note\n"""\n    return attn_backend\n\n\nBACKEND_NAME = "TRTLLM"\n'
    )
    assert annotated(MODEL + "modeling_edited.py") == [f"{MODEL}modeling_edited.py:8:DL103"]


@pytest.mark.parametrize("setting", ["diff.mnemonicPrefix", "diff.noprefix"])
def test_the_users_diff_prefixes_do_not_matter(repo: Path, setting: str) -> None:
    """With diff.mnemonicPrefix, git writes `w/` for `b/`: no finding was ever on a changed line."""
    git(repo, "config", setting, "true")
    assert annotated("tensorrt_llm") == [f"{MODEL}modeling_edited.py:5:DL103", f"{MODEL}modeling_new.py:1:DL103"]


def test_a_renamed_file_keeps_its_old_findings_older(repo: Path) -> None:
    """`git mv` of a file with a finding: the finding was already there, not caused by the change,
    whether the whole tree or only the new path is checked; a line edited in the move is changed."""
    git(repo, "mv", MODEL + "modeling_old.py", MODEL + "modeling_moved.py")
    for paths in (["tensorrt_llm"], [MODEL + "modeling_moved.py"]):
        document = json.loads(check("--diff-base", "main", "--format", "json", *paths).stdout)
        assert [f["path"] for f in document["findings"] if "modeling_moved" in f["path"]] == []
    result = check("--diff-base", "main", MODEL + "modeling_moved.py")
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (
        0,
        "All clear: 1 file checked (0 on the lines changed since main, 0 elsewhere caused by the change; "
        "1 older ones outside the changed lines not shown).",
    )
    (repo / MODEL / "modeling_moved.py").write_text(OLD + "\n\n" + 'BACKEND_NAME = "VANILLA"\n')
    assert annotated(MODEL + "modeling_moved.py") == [f"{MODEL}modeling_moved.py:5:DL103"]
    (repo / MODEL / "modeling_moved.py").write_text(OLD.replace("TRTLLM", "VANILLA"))  # near miss: an edited line
    assert annotated(MODEL + "modeling_moved.py") == [f"{MODEL}modeling_moved.py:1:DL103"]


def test_diff_parsing_reads_hunks_by_their_counts_and_paths_git_writes_with_tabs() -> None:
    from declint.changed_lines import FileDiff, parse_diff

    diff = (
        "diff --git a/my x.py b/my x.py\n--- a/my x.py\t\n+++ b/my x.py\t\n@@ -1,0 +2,3 @@\n"
        '+"""Doc.\n+++ note\n+--- b/other.py\n@@ -5 +8 @@\n-x\n\\ No newline at end of file\n+y\n'
        'diff --git "a/t\\tb.py" "b/t\\tb.py"\n--- "a/t\\tb.py"\n+++ "b/t\\tb.py"\n@@ -1 +1 @@\n-a\n+b\n'
        "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n"
        "diff --git a/was.py b/now é.py\nsimilarity index 80%\nrename from was.py\nrename to now é.py\n"
        "index 1..2 100644\n--- a/was.py\n+++ b/now é.py\t\n@@ -3,2 +3,3 @@\n c\n-d\n+e\n+f\n"
    )
    assert parse_diff(diff) == [
        FileDiff("my x.py", "my x.py", frozenset({2, 3, 4, 8})),
        FileDiff("t\tb.py", "t\tb.py", frozenset({1})),
        FileDiff("old.py", "new.py", frozenset()),
        FileDiff("was.py", "now é.py", frozenset({4, 5})),
    ]
