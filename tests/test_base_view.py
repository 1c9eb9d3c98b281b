"""`--diff-base` checks the merge base as the working tree with the change put back
(`declint.base_view`): the same fingerprints as the merge base extracted from git, for every
change it takes, and the extraction for every change it cannot express."""

from __future__ import annotations

import dataclasses
import gc
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from unittest.mock import ANY

import pytest

from declint.base_view import BaseView, base_view
from declint.cache import NO_CACHE_ENV
from declint.changed_lines import (
    ChangedLines,
    GitCommand,
    archived_base_fingerprints,
    base_fingerprints,
    compute,
)
from declint.config import find_config_file, load_config
from declint.engine import Engine, Selection
from declint.errors import UsageError
from declint.fingerprint import fingerprints
from declint.reporting.model import DiffScope
from declint.reporting.sources import SourceCache
from declint.rules import ALL_RULES, RULES_BY_CODE
from declint.types import RunResult
from tests.conftest import DEMO, copy_project, settle
from tests.test_formats_diff_base import ENV, git

if TYPE_CHECKING:
    from declint.reporting.pipeline import CheckOutcome

MODELS = "tensorrt_llm/_torch/models/"
LITERAL = "tensorrt_llm/llmapi/llm_args.py"
UNDECLARED = (
    "from .modeling_multimodal_mixin import MultimodalModelMixin\n"
    "from .modeling_utils import register_auto_model\n\n\n"
    '@register_auto_model("NewForConditionalGeneration")\n'
    "class NewForConditionalGeneration(MultimodalModelMixin):\n"
    '    attn_backend = "TRTLLM"\n'
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo committed on `main`, a branch `feature` checked out; git (declint's too) reads
    no configuration of the machine's user or system."""
    root = tmp_path / "repo"
    isolate_git(root, monkeypatch)
    copy_project(DEMO, root)
    settle(root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "feature")
    return root


def isolate_git(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(home))
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)


def engine(root: Path, *, cache: bool = False) -> Engine:
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    return Engine(config, ALL_RULES, Selection(("DL",), ()), keep_suppressed=True, cache=cache)


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def narrow_literal(root: Path) -> None:
    """FLASHINFER leaves the Literal: declarations far from the change break."""
    edit(root, LITERAL, '"TRTLLM", "FLASHINFER"]', '"TRTLLM"]')


def add_staged_model(root: Path) -> None:
    write(root, MODELS + "modeling_new.py", UNDECLARED)
    git(root, "add", "-A")


def add_untracked_model(root: Path) -> None:
    write(root, MODELS + "modeling_new.py", UNDECLARED)


def add_model_git_ignores(root: Path) -> None:
    """A file git ignores by the user's `core.excludesFile`, which declint's walk does not read:
    checked now, absent from the merge base as git has it."""
    write(root, MODELS + "modeling_new.py", UNDECLARED)
    write(root, ".git/user-ignores", "modeling_new.py\n")
    git(root, "config", "core.excludesFile", str(root / ".git" / "user-ignores"))
    assert git(root, "status", "--porcelain") == ""


def add_literal_copy(root: Path) -> None:
    """A second Literal of the same name in a new module, and a line of a model edited."""
    write(
        root,
        "tensorrt_llm/llmapi/extra_args.py",
        'from typing import Literal\n\nEncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n',
    )
    edit(root, MODELS + "modeling_kimi_k3.py", "image_size = 448", "image_size = 336")


def break_a_model(root: Path) -> None:
    """A syntax error in a model the base parses, and a module in a new namespace directory."""
    edit(root, MODELS + "modeling_kimi_k3.py", "class KimiK3InputProcessor(", "class KimiK3InputProcessor((")
    write(
        root,
        "tensorrt_llm/_torch/extra/helpers.py",
        "import torch\n\nx = torch.nn.functional.scaled_dot_product_attention\n",
    )


def rename_a_model(root: Path) -> None:
    """`git mv`, one line edited on the way: the extracted base checks the old name too."""
    git(root, "mv", MODELS + "modeling_kimi_k3.py", MODELS + "modeling_kimi_k3_moved.py")
    edit(
        root, MODELS + "modeling_kimi_k3_moved.py", "image_size = 448", 'image_size = 448\n    attn_backend = "TRTLLM"'
    )


def delete_a_model(root: Path) -> None:
    """A model with findings deleted: its registration and declaration leave the docs table's view."""
    (root / MODELS / "modeling_kimi_k3.py").unlink()


def nothing(root: Path) -> None:
    """No change at all."""


CHANGES: dict[str, Callable[[Path], None]] = {
    "the Literal narrowed": narrow_literal,
    "a model added and staged": add_staged_model,
    "a model added, untracked": add_untracked_model,
    "a model git ignores": add_model_git_ignores,
    "a copy of the Literal added": add_literal_copy,
    "a model broken, a namespace module added": break_a_model,
    "a model renamed and edited": rename_a_model,
    "a model deleted": delete_a_model,
    "nothing": nothing,
}


def current_fingerprints(run: Engine, root: Path) -> tuple[frozenset[str], set[str]]:
    """The fingerprints of a check of the working tree, and the files its findings point at."""
    result = run.run([root])
    everything = [*result.findings, *(s.finding for s in result.suppressed)]
    return frozenset(fingerprints(everything, SourceCache(root)).values()), {f.path for f in everything}


def views(root: Path, run: Engine) -> tuple[ChangedLines, BaseView | None]:
    changed = compute(root, "main", [root])
    return changed, base_view(run.config, run.enabled_codes, [root], changed)


@pytest.mark.parametrize("change", list(CHANGES))
def test_the_base_put_back_finds_what_the_extracted_base_finds(repo: Path, change: str) -> None:
    run = engine(repo)
    before, _ = current_fingerprints(run, repo)
    CHANGES[change](repo)
    now, also = current_fingerprints(run, repo)
    changed, view = views(repo, run)
    assert view is not None
    put_back = base_fingerprints(run, [repo], changed)
    extracted = archived_base_fingerprints(run, [repo], changed, also)
    assert put_back == extracted
    # The merge base is what the tree was before the change; a renamed file's findings are
    # fingerprinted under the new name (already there, not caused by the move).
    assert (extracted == before) == (change != "a model renamed and edited")
    assert (now != before) == (change != "nothing")  # the change shows in the findings


def test_the_view_holds_the_texts_at_the_merge_base_and_leaves_out_what_is_new(repo: Path) -> None:
    original = (repo / LITERAL).read_bytes()
    odd = MODELS + "modeling_[a]*.py"  # a name that is also a pattern (modeling_ab.py matches it)
    write(repo, odd, "x = 1\n")
    write(repo, MODELS + "modeling_ab.py", "y = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd names")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "feature")
    git(repo, "checkout", "-q", "feature")
    write(repo, odd, "x = 2\n")
    narrow_literal(repo)
    add_staged_model(repo)
    write(repo, MODELS + "modeling_untracked.py", "x = 1\n")
    write(repo, "README.md", "edited: a file the check never reads\n")
    _, view = views(repo, engine(repo))
    assert view == BaseView(
        {LITERAL: original, odd: b"x = 1\n"},
        frozenset({MODELS + "modeling_new.py", MODELS + "modeling_untracked.py"}),
        (repo,),
    )


def add_a_package(root: Path) -> None:
    write(root, "tensorrt_llm/_torch/extra/__init__.py", "")


def add_a_module_beside_its_directory(root: Path) -> None:
    write(root, "tensorrt_llm/_torch/models.py", "")


def edit_the_docs_table(root: Path) -> None:
    path = root / "docs/encoder_attention_backends.md"
    path.write_text(path.read_text() + "\nA line more.\n")


def add_a_gitignore(root: Path) -> None:
    write(root, "tensorrt_llm/.gitignore", "modeling_kimi_k3.py\n")


def edit_a_schema(root: Path) -> None:
    edit(root, "schemas/trtllm-serve-config.schema.json", '"TRTLLM"', '"VANILLA"')


def add_an_ignored_schema(root: Path) -> None:
    """Ignored by the user's `core.excludesFile`: no change git shows, yet DL108 reads it."""
    write(root, "build/trtllm-serve-config.schema.json", "{}\n")
    write(root, ".git/user-ignores", "build/\n")
    git(root, "config", "core.excludesFile", str(root / ".git" / "user-ignores"))
    assert git(root, "status", "--porcelain") == ""


def add_an_untracked_schema(root: Path) -> None:
    write(root, "deploy/trtllm-serve-config.schema.json", "{}\n")


def export_ignore(root: Path) -> None:
    git(root, "checkout", "-q", "main")
    write(root, ".gitattributes", "schemas/** export-ignore\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "attributes")
    git(root, "checkout", "-q", "feature")
    git(root, "rebase", "-q", "main")


def delete_a_package_marker(root: Path) -> None:
    (root / "tensorrt_llm/_torch/attention_backend/__init__.py").unlink()


FALLBACKS: dict[str, Callable[[Path], None]] = {
    "a package marker added": add_a_package,
    "a package marker deleted": delete_a_package_marker,
    "a module beside a directory of its name": add_a_module_beside_its_directory,
    "the docs table edited": edit_the_docs_table,
    "a .gitignore added": add_a_gitignore,
    "a serving schema edited": edit_a_schema,
    "a serving schema git ignores": add_an_ignored_schema,
    "an untracked serving schema": add_an_untracked_schema,
    "files git archive leaves out": export_ignore,
}


@pytest.mark.parametrize("change", list(FALLBACKS))
def test_a_change_the_view_cannot_express_falls_back_to_the_extracted_base(repo: Path, change: str) -> None:
    FALLBACKS[change](repo)
    assert views(repo, engine(repo))[1] is None


def test_the_view_of_a_project_in_a_subdirectory_names_files_as_git_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = tmp_path / "top"
    isolate_git(top, monkeypatch)
    project = top / "sub" / "proj"
    copy_project(DEMO, project)
    git(top, "init", "-q", "-b", "main")
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "base")
    old = (project / LITERAL).read_bytes()
    narrow_literal(project)
    write(project, MODELS + "modeling_new.py", UNDECLARED)
    changed, view = views(project, engine(project))
    assert view == BaseView({LITERAL: old}, frozenset({MODELS + "modeling_new.py"}), (project,))
    assert changed.files.keys() == {LITERAL, MODELS + "modeling_new.py"}


def test_a_path_outside_the_project_root_falls_back(repo: Path) -> None:
    """... before the view reads what git was asked ahead: those commands are stopped and reaped."""
    narrow_literal(repo)
    run = engine(repo)
    changed = compute(repo, "main", [repo])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert base_view(run.config, run.enabled_codes, [repo.parent], changed) is None
        gc.collect()  # (an unclosed pipe or a process never waited for warns when collected)
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_a_git_command_that_cannot_start_stops_those_asked_before_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from declint import base_view as module

    started: list[list[str]] = []

    class Refused(GitCommand):
        def __init__(self, args: list[str], cwd: Path, *, stdin: bytes | None = None) -> None:
            if started:
                raise OSError(11, "Resource temporarily unavailable")
            super().__init__(args, cwd, stdin=stdin)
            started.append(args)

    monkeypatch.setattr(module, "GitCommand", Refused)
    run = engine(repo)
    changed = compute(repo, "main", [repo])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(OSError, match="Resource temporarily unavailable"):
            base_view(run.config, run.enabled_codes, [repo], changed)
        gc.collect()
    assert len(started) == 1
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_git_commands_run_side_by_side_and_a_failure_names_the_subcommand(repo: Path) -> None:
    listing = GitCommand(["ls-tree", "--name-only", "main", "--", "tensorrt_llm/llmapi/"], repo)
    failing = GitCommand(["--literal-pathspecs", "ls-tree", "no-such-rev"], repo)
    with pytest.raises(UsageError) as failed:
        failing.output()
    assert str(failed.value) == "git ls-tree failed: fatal: Not a valid object name no-such-rev"
    assert listing.output() == b"tensorrt_llm/llmapi/__init__.py\ntensorrt_llm/llmapi/llm_args.py\n"
    assert GitCommand(["grep", "-l", "no such text", "main"], repo).output(none_found=1) == b""


def described(result: RunResult) -> list[str]:
    return [f"{f.path}:{f.span.start.line}:{f.span.start.column}: {f.code} {f.message}" for f in result.findings]


def test_a_run_leaving_files_out_finds_what_a_tree_without_them_does_and_writes_no_cache(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Engine.absent`: the files as if deleted, the cache and the snapshot read, never written;
    the snapshot's walk taken, less those files, where no directory changed since."""
    monkeypatch.delenv(NO_CACHE_ENV)
    left_out, dangling = MODELS + "modeling_kimi_k3.py", "tensorrt_llm/dangling.py"
    without = tmp_path / "without"
    copy_project(repo, without)
    (without / left_out).unlink()
    (repo / dangling).symlink_to("missing.py")  # skipped by the walk, with a DL000
    settle(repo)  # .git/info/exclude, which the walk reads, too: else no snapshot is written
    run = engine(repo, cache=True)
    full = run.run([repo])
    token = run.state_token
    assert token is not None  # a snapshot written: the next run of the same request takes it
    assert {left_out, dangling} <= {f.path for f in full.findings}
    cache = repo / ".declint_cache"
    written = {path: path.read_bytes() for path in cache.rglob("*") if path.is_file()}
    leaving = dataclasses.replace(run, absent=frozenset({left_out, dangling}))
    partial = leaving.run([repo])
    assert "discover" not in leaving.stats.seconds  # no walk
    assert {path: path.read_bytes() for path in cache.rglob("*") if path.is_file()} == written
    assert described(partial) == described(engine(without).run([without]))
    again = run.run([repo])
    assert (described(again), run.stats.files_checked_fresh, run.state_token) == (described(full), 0, token)


def test_a_run_vouched_for_takes_the_disk_as_that_run_saw_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Engine.vouched`: the snapshot of a run a moment ago is taken without its stats (the check
    of the merge base sees the files as the check of the working tree did)."""
    monkeypatch.delenv(NO_CACHE_ENV)
    settle(repo)
    run = engine(repo, cache=True)
    full = run.run([repo])
    assert run.state_token is not None
    model = MODELS + "modeling_kimi_k3.py"
    edit(repo, model, "class ", "class Renamed")  # after that run: its snapshot no longer holds
    settle(repo)
    leaving = frozenset({MODELS + "modeling_radio.py"})
    seen = dataclasses.replace(run, absent=leaving, vouched=run.state_token).run([repo])
    fresh = dataclasses.replace(run, absent=leaving).run([repo])
    assert [line for line in described(full) if "modeling_radio.py" not in line] == described(seen)
    assert described(seen) != described(fresh)


def check_diff_base(run: Engine, root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[CheckOutcome, list[Engine]]:
    """`check --diff-base main ROOT` through `run`, and the engines of its runs (the working
    tree's, then the merge base's)."""
    from declint.reporting import pipeline

    runs: list[Engine] = []
    unrecorded = Engine.run

    def recorded(self: Engine, paths: list[Path]) -> RunResult:
        runs.append(self)
        return unrecorded(self, paths)

    monkeypatch.setattr(Engine, "run", recorded)
    outcome = pipeline.run(run, pipeline.CheckRequest((root,), diff_base="main"), ALL_RULES)
    return outcome, runs


@pytest.mark.parametrize("cache", [True, False], ids=["cache", "no cache"])
def test_the_merge_base_reads_only_the_texts_put_back(repo: Path, monkeypatch: pytest.MonkeyPatch, cache: bool) -> None:
    """The check of the merge base takes every other file from the check just made: from the
    cache, or without one from what that check kept in memory."""
    if cache:
        monkeypatch.delenv(NO_CACHE_ENV)
    narrow_literal(repo)
    settle(repo)
    outcome, (current, base) = check_diff_base(engine(repo, cache=cache), repo, monkeypatch)
    assert (current.overrides, base.overrides.keys(), base.absent) == ({}, {LITERAL}, frozenset())
    assert (current.stats.files_read, base.stats.files_read) == (37, 1)  # the demo has 37 Python files
    assert (base.vouched, current.state_token is None) == (current.state_token, not cache)
    assert outcome.report.diff == DiffScope("main", git(repo, "rev-parse", "main"), 1, 22)


def add_a_module_declint_excludes(root: Path) -> None:
    """A Python file git shows as untracked, in a directory declint never walks."""
    write(root, ".venv/tool.py", "x = 1\n")


WARMING: dict[str, tuple[Callable[[Path], None], int, list[tuple[int, int, object]]]] = {
    # change: (its function, workers forked ahead, (warmed, adopted, checked) of each run)
    # The Literal's old text and the 22 files that read it, checked again from the first run's data:
    "the Literal narrowed": (narrow_literal, 1, [(0, 0, 32), (1, 1, 23)]),
    # Left out: the two files reading the registry of models checked again.
    "a model added": (add_untracked_model, 1, [(0, 0, 33), (1, 1, 2)]),
    # The merge base extracted (how many of its files are checked afresh depends on whether their
    # mtimes, a moment old, are settled), no worker forked: no Python file changed.
    "the docs table edited": (edit_the_docs_table, 0, [(0, 0, 32), (0, 0, ANY)]),
    # The merge base extracted: its check adopts the worker.
    "a package marker deleted": (delete_a_package_marker, 1, [(0, 0, 32), (1, 1, ANY)]),
    # A Python file git sees and declint never checks: forked, then killed by the run that needed none.
    "a module added under .venv/": (add_a_module_declint_excludes, 1, [(0, 0, 32), (1, 0, 0)]),
}


@pytest.mark.parametrize("change", list(WARMING))
def test_a_check_worker_is_forked_before_the_view_when_a_python_text_is_put_back(
    repo: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """The text put back is checked by a worker that imports libcst while git gives the texts
    and the check of the merge base loads; a change that puts no Python text back forks none,
    and one the extracted base takes kills it."""
    from declint import lazy, stat_check, workers

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)  # (else only with a second core)
    monkeypatch.setattr(lazy, "loaded", lambda name: False)  # (this test process may have loaded it)
    made: list[workers.Warmed] = []

    class Recorded(workers.Warmed):
        def __init__(self, warm_up: Callable[[], None]) -> None:
            super().__init__(warm_up)
            made.append(self)

    monkeypatch.setattr(workers, "Warmed", Recorded)
    make, forked, stats = WARMING[change]
    make(repo)
    settle(repo)
    outcome, runs = check_diff_base(dataclasses.replace(engine(repo), jobs=2), repo, monkeypatch)
    assert [(r.stats.workers_warmed, r.stats.workers_adopted, r.stats.files_checked_fresh) for r in runs] == stats
    assert (len(made), [each.process for each in made]) == (forked, [None] * forked)  # adopted or killed
    assert outcome.report.diff is not None


def test_a_text_over_the_size_limit_at_the_merge_base_falls_back(repo: Path) -> None:
    """A text in place of a file is checked whatever its size; the extracted file is refused."""
    model = repo / MODELS / "modeling_kimi_k3.py"
    size = model.stat().st_size
    model.write_text("x = 1\n")
    pyproject = repo / "pyproject.toml"
    settings = pyproject.read_text()
    pyproject.write_text(settings + f"max-file-size = {size - 1}\n")
    assert views(repo, engine(repo))[1] is None
    pyproject.write_text(settings + f"max-file-size = {size}\n")
    view = views(repo, engine(repo))[1]
    assert view is not None and len(view.texts[MODELS + "modeling_kimi_k3.py"]) == size
