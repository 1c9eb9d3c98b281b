"""A fix session over the files the last one read takes its answers (`declint.fix_memo`).

The tree: the demo with its shared Literal spelling VANILLA "vanilla", where `--diff
--unsafe-fixes` offers 12 DL104 fixes, lets 5 in and refuses 7 (each would make the docs table
drift, a DL107), each refusal found by re-linting the whole run.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from declint import fix_transforms
from declint.cache import NO_CACHE_ENV, Cache
from declint.cli import cli
from declint.config import find_config_file, load_config
from declint.engine import CRASH_HOOK_ENV, Engine, Selection
from declint.fix_memo import FixMemo
from declint.rules import ALL_RULES
from declint.types import RunResult
from tests.conftest import DEMO, copy_project, settle

MODEL = "tensorrt_llm/_torch/models/"
DOCS = "docs/encoder_attention_backends.md"


pytestmark = pytest.mark.usefixtures("cache_on")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The demo with its Literal's VANILLA retyped "vanilla", past the racy window."""
    root = tmp_path / "demo"
    copy_project(DEMO, root)
    literal = root / "tensorrt_llm/llmapi/llm_args.py"
    literal.write_text(literal.read_text().replace('Literal["VANILLA", "TRTLLM"', 'Literal["vanilla", "TRTLLM"', 1))
    settle(root)
    return root


class Work:
    """What a session computed: whole runs (`Engine.run`), libcst parses and applications."""

    def __init__(self) -> None:
        self.runs = self.parses = self.applications = 0

    def reset(self) -> tuple[int, int, int]:
        done = (self.runs, self.parses, self.applications)
        self.runs = self.parses = self.applications = 0
        return done


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    counted = Work()
    run_engine, parse, apply_fixes = Engine.run, fix_transforms.parse, fix_transforms.apply_fixes

    def engine_run(self: Engine, paths: Any) -> RunResult:
        counted.runs += 1
        return run_engine(self, paths)

    def parsing(source: Any) -> Any:
        counted.parses += 1
        return parse(source)

    def applying(*args: Any, **kwargs: Any) -> Any:
        counted.applications += 1
        return apply_fixes(*args, **kwargs)

    monkeypatch.setattr(Engine, "run", engine_run)
    monkeypatch.setattr(fix_transforms, "parse", parsing)
    monkeypatch.setattr(fix_transforms, "apply_fixes", applying)
    yield counted


def check(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result: Result = CliRunner().invoke(cli, ["check", *args], input=stdin)
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, result.stdout, result.stderr


def store(root: Path) -> Cache:
    found = Cache.open(root, ".declint_cache")
    assert found is not None
    return found


def memo_file(root: Path) -> Path:
    (path,) = (root / ".declint_cache" / "v2").glob("fix-memo-*.memo")
    return path


def refusals(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("declint: not fixed: ")]


def test_a_session_over_the_files_of_the_last_takes_all_its_answers(root: Path, work: Work) -> None:
    """The second session runs only its first lint and the report's (both answered by the
    snapshot), parses and applies nothing, says byte for byte what the first said and what a
    session without the cache says, and leaves the memo as it found it."""
    first = check("--diff", "--unsafe-fixes", str(root))
    runs, parses, applications = work.reset()
    assert first[0] == 1 and first[2].splitlines()[0] == "declint: would fix 5 findings in 4 files"
    assert len(refusals(first[2])) == 7
    assert runs == 18 and parses > 0 and applications > 0  # the first lint, 16 re-lints, the report's
    stored = memo_file(root).stat()

    second = check("--diff", "--unsafe-fixes", str(root))
    assert work.reset() == (2, 0, 0)
    assert second == first
    assert (memo_file(root).stat().st_ino, memo_file(root).stat().st_mtime_ns) == (stored.st_ino, stored.st_mtime_ns)
    assert check("--diff", "--unsafe-fixes", "--no-cache", str(root)) == first


def test_timings_count_the_answers_of_the_fix_memo(root: Path) -> None:
    def said(*options: str) -> str:
        return check("--diff", "--unsafe-fixes", "--timings", *options, str(root))[2].splitlines()[-1]

    first = said()
    kept = store(root).load_fix_memo()
    answers = sum(len(kept[kind]) for kind in ("lints", "applied", "verdicts", "parsed"))
    assert len(kept["lints"]) == 16  # the re-lints
    tail = "(re-lints, fixes applied, verdicts)"
    assert first == f"declint: fix session: 0 answers from the last session's, {answers} computed {tail}"
    assert said() == f"declint: fix session: {answers} answers from the last session's, 0 computed {tail}"
    # without the cache, nothing from the last session (and the same work)
    assert said("--no-cache") == f"declint: fix session: 0 answers from the last session's, {answers} computed {tail}"


def test_an_edit_between_sessions_takes_no_answer_of_the_last(root: Path, work: Work) -> None:
    """With the docs table spelling VANILLA "vanilla" too, all 12 fixes go in; the table put
    back, 7 of them would make it drift, and are refused again. A memo keyed without the state
    of the files answers the first re-lint of the second session (all 12 fixes, the same texts)
    with the first session's result, which brings no new finding: all 12 would go in. The memo
    then holds that session's re-lints only."""
    docs = root / DOCS
    table = docs.read_text()
    docs.write_text(table.replace("VANILLA", "vanilla"))
    settle(root)
    agreeing = check("--diff", "--unsafe-fixes", str(root))
    assert agreeing[2].splitlines() == ["declint: would fix 12 findings in 11 files"]
    docs.write_text(table)
    settle(root)
    work.reset()

    drifting = check("--diff", "--unsafe-fixes", str(root))
    runs, _, _ = work.reset()
    assert drifting == check("--diff", "--unsafe-fixes", "--no-cache", str(root))
    assert drifting[2].splitlines()[0] == "declint: would fix 5 findings in 4 files"
    assert len(refusals(drifting[2])) == 7
    kept = store(root).load_fix_memo()
    assert kept["state"] is not None and len(kept["lints"]) == runs - 2


def test_the_memo_of_a_text_on_stdin(root: Path, work: Work) -> None:
    """An editor fixing its buffer again: the buffer's text is part of what the re-lints are
    keyed by; the same buffer twice, the second answered; another buffer, computed again. (A
    run over a text on stdin writes no snapshot: a plain check names the state of the files.)"""
    check(str(root))
    buffer = root / MODEL / "modeling_gemma4.py"
    options = ["--fix", "--unsafe-fixes", "--stdin-filename", str(buffer)]
    work.reset()
    first = check(*options, stdin=buffer.read_bytes())
    # The first lint, a re-lint of the fix, the report's: the fix alone is tried again with the
    # same texts once the group (of one) failed, answered by the memo.
    assert work.reset()[0] == 3
    assert first[1] == buffer.read_text()  # its one fix refused: the buffer as it came
    assert refusals(first[2]) == [
        f"declint: not fixed: {MODEL}modeling_gemma4.py:175:20: DL104: re-linting the fixed text reports DL107 in "
        f"{DOCS}: Gemma4Model / vision: backends is 'VANILLA, TRTLLM, FLASHINFER' in the docs but "
        "'vanilla, TRTLLM, FLASHINFER' in the code"
    ]
    assert check(*options, stdin=buffer.read_bytes()) == first
    assert work.reset() == (2, 0, 0)

    edited = buffer.read_bytes() + b"# a comment typed in the buffer\n"
    again = check(*options, stdin=edited)
    assert work.reset()[0] == 3
    assert again[1] == edited.decode() and refusals(again[2]) == refusals(first[2])


def test_a_damaged_memo_is_computed_again(root: Path, work: Work) -> None:
    first = check("--diff", "--unsafe-fixes", str(root))
    runs = work.reset()[0]
    path = memo_file(root)
    path.write_bytes(b"\x80\x05 not a pickle")
    assert check("--diff", "--unsafe-fixes", str(root)) == first
    assert work.reset()[0] == runs

    # Entries of the right keys but of the wrong shapes (a file of another program's making).
    kept = store(root).load_fix_memo()
    assert kept["lints"] and kept["applied"] and kept["verdicts"] and kept["parsed"]
    wrong: dict[str, object] = {"lints": ("x",), "applied": ("text", (99,), ()), "verdicts": 1, "parsed": b""}
    store(root).save_fix_memo({"state": kept["state"], **{k: dict.fromkeys(kept[k], v) for k, v in wrong.items()}})
    assert check("--diff", "--unsafe-fixes", str(root)) == first
    assert work.reset()[0] == runs
    assert store(root).load_fix_memo() == kept


def test_a_re_lint_in_which_a_worker_crashed_is_not_kept(make_tree: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed while re-linting a fixed text refuses the fix (its DL000 is new); the next
    session over the same files tries it again (a crash is never replayed) and it goes in."""
    source = (
        "from torch import nn\n"
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n\n\n"
        "class Tidy(MultimodalModelMixin, nn.Module):\n"
        '    encoder_attention_backends = {"vision": ("trtllm",)}\n'
    )
    root = make_tree({MODEL + "modeling_tidy.py": source})
    settle(root)
    monkeypatch.setenv(CRASH_HOOK_ENV, '("TRTLLM",)')  # in the fixed text only
    crashed = check("--diff", "-j", "1", str(root / "tensorrt_llm"))
    assert crashed[2].splitlines() == [
        "declint: would fix 0 findings in 0 files",
        f"declint: not fixed: {MODEL}modeling_tidy.py:6:46: DL104: re-linting the fixed text reports DL000 in "
        f"{MODEL}modeling_tidy.py: worker process killed by SIGSEGV while checking this file "
        "(nesting too deep for the parser?)",
    ]
    monkeypatch.delenv(CRASH_HOOK_ENV)
    fixed = check("--diff", "-j", "1", str(root / "tensorrt_llm"))
    assert fixed[2].splitlines() == ["declint: would fix 1 finding in 1 file"]
    assert '+    encoder_attention_backends = {"vision": ("TRTLLM",)}' in fixed[1]


def test_no_re_lint_is_kept_without_a_state_of_the_files(tmp_path: Path) -> None:
    """With no snapshot naming the files' state (a file too fresh for its stat to be trusted,
    say), every re-lint is computed and none is written; the other answers are kept."""
    (tmp_path / ".declint_cache" / "v2").mkdir(parents=True)
    cache = store(tmp_path)
    memo = FixMemo(cache, None, ())
    results: list[RunResult] = []

    def compute() -> tuple[RunResult, bool]:
        results.append(RunResult((), len(results), 0))
        return results[-1], True

    texts = {"a.py": b"x = 1\n"}
    assert memo.lint(texts, compute) is results[0] and memo.lint(texts, compute) is results[1]
    assert memo.verdict("a.py", b"x = 1\n", lambda: "read-only") == "read-only"
    assert memo.verdict("a.py", b"x = 1\n", lambda: pytest.fail("computed twice")) == "read-only"
    memo.save()
    kept = cache.load_fix_memo()
    assert kept["state"] is None and kept["lints"] == {} and list(kept["verdicts"].values()) == ["read-only"]

    again = FixMemo(cache, "a-token", ())
    assert again.verdict("a.py", b"x = 1\n", lambda: pytest.fail("not taken from the memo")) == "read-only"
    assert again.verdict("a.py", b"x = 2\n", lambda: None) is None
    assert (again.found, again.computed) == (1, 1)


def test_fixed_texts_past_the_limit_are_computed_and_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from declint import fix_memo

    monkeypatch.setattr(fix_memo, "KEPT_CHARACTERS", 10)
    (tmp_path / ".declint_cache" / "v2").mkdir(parents=True)
    memo = FixMemo(store(tmp_path), "a-token", ())
    computed: list[str] = []

    def compute(text: str) -> Any:
        computed.append(text)
        return (text, (0,), ())

    assert memo.applied("a.py", "a", b"1", ["fix"], lambda: compute("x" * 11)) == ("x" * 11, (0,), ())
    assert memo.applied("a.py", "a", b"1", ["fix"], lambda: compute("again")) == ("x" * 11, (0,), ())
    assert memo.applied("b.py", "b", b"2", ["fix"], lambda: compute("y")) == ("y", (0,), ())
    assert memo.applied("b.py", "b", b"2", ["fix"], lambda: compute("y")) == ("y", (0,), ())
    assert computed == ["x" * 11, "y", "y"]
    memo.save()
    assert [entry[0] for entry in store(tmp_path).load_fix_memo()["applied"].values()] == ["x" * 11]


def test_the_state_token_names_the_files_as_the_run_read_them(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal tokens, equal files: a run that wrote the snapshot and one it answers share its
    token; after an edit, none until a run writes a snapshot again (a new one); a run without
    the cache has none."""
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(r.CODE for r in ALL_RULES))
    engine = Engine(config, ALL_RULES, Selection(("DL",), ()), cache=True)
    engine.run([root])
    written = engine.state_token
    engine.run([root])
    assert written is not None and engine.state_token == written
    model = root / MODEL / "modeling_gemma4.py"
    model.write_text(model.read_text() + "# edited\n")
    future = time.time() + 3600  # a stat too fresh to trust (the racy window): no snapshot is written
    os.utime(model, (future, future))
    engine.run([root])
    assert engine.state_token is None
    settle(root)
    engine.run([root])
    assert engine.state_token not in (None, written)
    monkeypatch.setenv(NO_CACHE_ENV, "1")
    engine.run([root])
    assert engine.state_token is None


def test_the_memo_file_is_one_per_version_of_declint(root: Path) -> None:
    check("--diff", "--unsafe-fixes", str(root))
    stored = pickle.loads(memo_file(root).read_bytes())
    assert (
        isinstance(stored, tuple)
        and len(stored) == 2
        and set(stored[1])
        == {
            "state",
            "lints",
            "applied",
            "verdicts",
            "parsed",
        }
    )
    assert memo_file(root).name == f"fix-memo-{stored[0]}.memo"
