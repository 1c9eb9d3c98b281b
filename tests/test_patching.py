"""A run after an edit the index cannot see (`declint.patching`): the snapshot patched, same findings.

Each test edits files between runs and compares the run's findings with a run without the cache;
the phases a run went through (`RunStats.seconds`) tell a patched run ("patch", no "cache load")
from one that tried and took the full path ("patch" and "cache load").
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from declint import engine as engine_module
from declint.cache import NO_CACHE_ENV
from declint.engine import CRASH_HOOK_ENV, Engine, _Run
from declint.testing import PRELUDE, write_tree
from tests.conftest import settle
from tests.test_cache import LITERAL, MODELS, _stored, edit, engine, lines

HELPER = "tensorrt_llm/_torch/helper.py"
HELPER_TEXT = 'def mode(config):\n    return config.attn_backend == "TRTLLM"\n'


pytestmark = pytest.mark.usefixtures("cache_on")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The shared Literal, a model file, and a helper the index holds as a placeholder (no index
    needle, no Literal) that DL103 reads; run once, so that a snapshot stands."""
    write_tree(
        tmp_path,
        {
            **PRELUDE,
            MODELS + "modeling_route.py": 'def route(config):\n    return config.attn_backend == "CUTLASS"\n',
            HELPER: HELPER_TEXT,
        },
    )
    _settle_all(tmp_path)
    engine(tmp_path).run([tmp_path])
    return tmp_path


def _settle_all(root: Path) -> None:
    """`settle`, directories too: a file just created moved its directory's mtime, and a walk
    within the racy window of a directory writes no snapshot."""
    settle(root)
    past = time.time() - 60
    for path in [root, *root.rglob("*")]:
        if path.is_dir() and ".declint_cache" not in path.parts:
            os.utime(path, (past, past))


def _cache_file(root: Path, suffix: str) -> Path:
    (found,) = _stored(root, suffix)
    return found


def _patched(run: Engine) -> bool:
    """Did the run answer by patching the snapshot (it tried, and never loaded the full cache)?"""
    return "patch" in run.stats.seconds and "cache load" not in run.stats.seconds


def _patched_reindexed(run: Engine) -> bool:
    """Did the run answer by patching the snapshot after an edit that changed the index (the
    cache loaded to confirm the cached results of the files asked for, no scan of the tree)?"""
    return "patch" in run.stats.seconds and "scan" not in run.stats.seconds


def _tried_then_full(run: Engine) -> bool:
    return "patch" in run.stats.seconds and "cache load" in run.stats.seconds and "scan" in run.stats.seconds


def _helper_findings(run: Any) -> list[tuple[str, int, int]]:
    return [(f.code, f.line, f.column) for f in run.findings if f.path == HELPER]


def test_an_edit_the_index_cannot_see_is_checked_alone_and_patched_into_the_snapshot(root: Path) -> None:
    helper = root / HELPER
    helper.write_text("# a line above\n" + HELPER_TEXT, encoding="utf-8")
    settle(root)
    patched = engine(root)
    result = patched.run([root])
    assert _patched(patched)
    assert _helper_findings(result) == [("DL103", 3, 34)]
    assert lines(result) == lines(engine(root, cache=False).run([root]))
    assert (patched.stats.files_read, patched.stats.files_checked_fresh) == (1, 1)
    assert patched.stats.check_cache_hits == result.files_checked - 1
    again = engine(root)  # the patched snapshot holds the edit: nothing is read
    assert lines(again.run([root])) == lines(result)
    assert again.stats.files_read == 0 and "patch" not in again.stats.seconds


def test_a_patched_run_within_the_racy_window_writes_no_snapshot(root: Path) -> None:
    snapshot = _cache_file(root, ".snapshot")
    before = snapshot.read_bytes()
    (root / HELPER).write_text("# a line above\n" + HELPER_TEXT, encoding="utf-8")  # not settled
    first = engine(root)
    found = lines(first.run([root]))
    assert _patched(first)
    assert snapshot.read_bytes() == before  # its mtime is too fresh to stand for its bytes
    second = engine(root)
    assert lines(second.run([root])) == found and _patched(second)


def test_a_file_that_loses_then_regains_its_needles_is_patched_both_ways(root: Path) -> None:
    """Without a needle the file is known by its stat alone (its bases kept); with one again it
    is hashed and checked: both edits leave the index as it was."""
    helper = root / HELPER
    helper.write_text("def mode(config):\n    return 1\n", encoding="utf-8")
    settle(root)
    without = engine(root)
    assert _helper_findings(without.run([root])) == [] and _patched(without)
    assert lines(engine(root).run([root])) == lines(engine(root, cache=False).run([root]))
    helper.write_text("\n\n" + HELPER_TEXT, encoding="utf-8")
    settle(root)
    regained = engine(root)
    result = regained.run([root])
    assert _patched(regained) and regained.stats.files_checked_fresh == 1
    assert _helper_findings(result) == [("DL103", 4, 34)]
    assert lines(result) == lines(engine(root, cache=False).run([root]))


@pytest.mark.parametrize(
    ("rel", "old", "new"),
    [
        # the shared Literal's file: the index holds its facts
        (LITERAL, '"FLASHINFER"]', '"FLASHINFER", "CUTLASS"]'),
        # a class statement: the class bases the closure follows
        (HELPER, "def mode", "class Local(Base):\n    pass\n\n\ndef mode"),
        # an index needle: the file becomes a seed, indexed in full
        (HELPER, "def mode", "class Model(MultimodalModelMixin):\n    pass\n\n\ndef mode"),
    ],
    ids=["literal", "bases", "seed"],
)
def test_an_edit_the_index_sees_takes_the_full_path(root: Path, rel: str, old: str, new: str) -> None:
    edit(root / rel, old, new)
    settle(root)
    run = engine(root)
    assert lines(run.run([root])) == lines(engine(root, cache=False).run([root]))
    assert _tried_then_full(run)


def test_a_check_that_reads_a_placeholder_module_takes_the_full_path(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule that reads a module the index holds as a placeholder (a miss of the prefilter's
    closure, which the full path mends with a safety round) makes the index another one: the
    patch gives way. Simulated: the first check reports such a read, as `TRACKER` would."""
    real = engine_module._check_handler
    calls: list[str] = []

    def first_reads_a_placeholder(state: Any, item: Any) -> Any:
        checked = real(state, item)
        calls.append(item.rel)
        return checked._replace(touched=frozenset({"tensorrt_llm._torch.other"})) if len(calls) == 1 else checked

    monkeypatch.setattr(engine_module, "_check_handler", first_reads_a_placeholder)
    edit(root / HELPER, "def mode", "# a line above\ndef mode")
    settle(root)
    run = engine(root)
    found = lines(run.run([root]))
    assert calls == [HELPER, HELPER]  # the patch's check, then the full path's
    assert _tried_then_full(run)
    assert run.stats.files_checked_fresh == 1  # the attempt's check is not counted
    assert found == lines(engine(root, cache=False).run([root]))


def test_an_edit_of_a_file_a_project_rule_read_takes_the_full_path(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project rules' findings are the snapshot's only while what they read is unchanged."""
    original = _Run._project_findings
    helper = root / HELPER

    def reading_the_helper(self: _Run, index: Any) -> Any:
        helper.read_bytes()
        return original(self, index)

    monkeypatch.setattr(_Run, "_project_findings", reading_the_helper)
    edit(helper, "def mode", "# a first edit\ndef mode")  # a full run, whose snapshot records the read
    settle(root)
    _cache_file(root, ".held").unlink()
    engine(root).run([root])
    edit(helper, "# a first edit", "# a second edit")
    settle(root)
    run = engine(root)
    run.run([root])
    assert _tried_then_full(run)


def test_without_the_held_facts_the_full_path_decides(root: Path) -> None:
    _cache_file(root, ".held").write_bytes(b"damaged")
    edit(root / HELPER, "def mode", "# a line above\ndef mode")
    settle(root)
    run = engine(root)
    assert lines(run.run([root])) == lines(engine(root, cache=False).run([root]))
    assert _tried_then_full(run)


def test_more_edited_files_than_a_patch_reads_take_the_full_path(root: Path) -> None:
    others = [f"tensorrt_llm/_torch/helper_{n}.py" for n in range(4)]
    write_tree(root, {rel: HELPER_TEXT for rel in others})
    _settle_all(root)
    engine(root).run([root])
    for rel in [HELPER, *others]:
        edit(root / rel, "def mode", "# edited\ndef mode")
    settle(root)
    run = engine(root)
    assert lines(run.run([root])) == lines(engine(root, cache=False).run([root]))
    assert "patch" not in run.stats.seconds and "cache load" in run.stats.seconds
    edit(root / HELPER, "# edited", "# edited again")  # one file: patched again
    settle(root)
    one = engine(root)
    assert lines(one.run([root])) == lines(engine(root, cache=False).run([root])) and _patched(one)


def test_a_crash_while_checking_the_edited_file_is_its_finding_and_no_snapshot(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _cache_file(root, ".snapshot")
    before = snapshot.read_bytes()
    monkeypatch.setenv(CRASH_HOOK_ENV, "MARKED")
    edit(root / HELPER, "def mode", "# MARKED\ndef mode")
    settle(root)
    run = engine(root, jobs=1)
    result = run.run([root])
    assert _patched(run) and run.stats.worker_crashes == 1
    assert [(f.code, f.line) for f in result.findings if f.path == HELPER] == [("DL000", 1)]
    assert "SIGSEGV while checking this file" in next(f.message for f in result.findings if f.path == HELPER)
    assert snapshot.read_bytes() == before  # a crash is retried by the next run, never replayed


def test_a_patched_run_and_the_full_path_give_the_same_findings_with_workers(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """... and only the full path warms a check worker ahead: the patch checks the file at once,
    and DL103 reads `ast`, which a worker forked then never imports libcst for (warming one
    made a touched file's run 0.2 s slower on the transformers sources)."""
    from declint import lazy, stat_check

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)
    monkeypatch.setattr(lazy, "loaded", lambda name: False)  # as in a fresh declint process
    edit(root / HELPER, '"TRTLLM"', '"TRTLM"')
    settle(root)
    run = engine(root, jobs=2)
    result = run.run([root])
    assert _patched(run) and run.stats.workers_warmed == 0
    assert [(code, line) for code, line, _ in _helper_findings(result)] == [("DL103", 2)]
    assert lines(result) == lines(engine(root, cache=False).run([root]))
    edit(root / HELPER, "def mode", "class Model(MultimodalModelMixin):\n    pass\n\n\ndef mode")
    settle(root)
    full = engine(root, jobs=2)
    result = full.run([root])
    assert _tried_then_full(full) and (full.stats.workers_warmed, full.stats.workers_adopted) == (1, 1)
    assert lines(result) == lines(engine(root, cache=False).run([root]))


def test_a_file_syntax_paths_cover_is_judged_as_a_cold_run_judges_it(root: Path) -> None:
    """A checked file in `syntax-paths` (the models directory by default) is hashed and its
    syntax checked by the scan; the snapshot keeps that scope, and the patch scans it so."""
    plain = MODELS + "modeling_plain.py"
    write_tree(root, {plain: "def fine():\n    pass\n"})
    _settle_all(root)
    engine(root).run([root])
    edit(root / plain, "def fine", "# a comment\ndef fine")
    settle(root)
    commented = engine(root)
    assert lines(commented.run([root])) == lines(engine(root, cache=False).run([root]))
    assert _patched(commented)
    edit(root / plain, "fine():", "broken(:")
    settle(root)
    broken = engine(root)
    found = lines(broken.run([root]))
    assert f"{plain}:2:11: DL000 syntax error: invalid syntax" in found
    assert found == lines(engine(root, cache=False).run([root]))
    assert _tried_then_full(broken)  # the scan's error is part of its view


def test_an_edit_saved_by_rename_is_patched_and_its_directory_listed_again(root: Path) -> None:
    """Editors' safe write and git: a new file renamed over the old one moves the directory's
    mtime; the directory lists the same entries, so the walk holds and the edit is patched."""
    helper = root / HELPER
    written = helper.with_name(".helper.py.tmp")
    written.write_text("# saved by rename\n" + HELPER_TEXT, encoding="utf-8")
    os.replace(written, helper)
    settle(root)
    run = engine(root)
    found = lines(run.run([root]))
    assert _patched(run) and "discover" not in run.stats.seconds
    assert found == lines(engine(root, cache=False).run([root]))
    again = engine(root)  # the patched snapshot holds the directory's new stat
    assert lines(again.run([root])) == found
    assert list(again.stats.seconds) == ["snapshot"] and again.stats.files_read == 0


_GATED_LOADS = (
    "import sys\nfrom pathlib import Path\n"
    "from declint.config import find_config_file, load_config\n"
    "from declint.engine import Engine, Selection\nfrom declint.rules import ALL_RULES\n"
    "root = Path.cwd()\n"
    "config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(ALL_RULES.codes))\n"
    "engine = Engine(config, ALL_RULES, Selection(('DL',), ()), cache=True, jobs=None)\n"
    "result = engine.run([root])\n"
    "print(engine.stats.files_checked_fresh, 'patch' in engine.stats.seconds, 'cache load' in engine.stats.seconds)\n"
    "print([f'{f.path}:{f.line}:{f.column}: {f.code} {f.message}' for f in result.findings])\n"
    "print(sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith('declint.rules.')))\n"
)


def _checked_in_process(root: Path) -> tuple[str, list[str], set[str]]:
    """(files checked afresh and the phases patch and cache load, the findings, the rule modules
    loaded) of a run in a new process that checks in its own process (`jobs=None`), as a worker
    would."""
    env = {k: v for k, v in os.environ.items() if k != NO_CACHE_ENV}
    done = subprocess.run([sys.executable, "-c", _GATED_LOADS], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    checked, findings, modules = done.stdout.splitlines()
    return checked, ast.literal_eval(findings), set(ast.literal_eval(modules))


def test_a_check_imports_a_gated_rule_only_for_a_file_holding_its_needles(root: Path) -> None:
    """DL103, DL104 and DL106 can fire only on a file holding their needles (the registry names
    them): a patched run after an edit of a file with none of them checks it without importing
    their modules; after an edit of the helper, which holds DL103's only, DL103's is imported.
    Findings as without the cache, each time."""
    sdpa = "tensorrt_llm/_torch/sdpa_user.py"
    (root / sdpa).write_text(
        "import torch.nn.functional as F\n\ndef attend(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n",
        encoding="utf-8",
    )
    _settle_all(root)
    checked, findings, modules = _checked_in_process(root)
    assert checked == "1 False True" and findings == lines(engine(root, cache=False).run([root]))  # a new file
    per_file = {"direct_sdpa", "missing_declaration", "metadata_contract"}
    for path, loaded in ((sdpa, set()), (HELPER, {"backend_literal"})):
        with (root / path).open("a", encoding="utf-8") as handle:
            handle.write("# an edit the index cannot see\n")
        settle(root)
        checked, findings, modules = _checked_in_process(root)
        assert (checked, modules) == ("1 True False", per_file | loaded), path  # the snapshot patched
        assert findings == lines(engine(root, cache=False).run([root]))


STEP3VL = MODELS + "modeling_step3vl.py"
STAR = "tensorrt_llm/_torch/attention_backend/star_flashinfer.py"


@pytest.mark.parametrize(
    ("rel", "old", "new", "codes"),
    [
        # a model file's comment appended below its last class
        (STEP3VL, "inputs_embeds=inputs_embeds)\n", "inputs_embeds=inputs_embeds)\n# appended\n", ["DL101"]),
        # a comment of a model file changed in place
        (STEP3VL, "# x: (batch, heads, seq, head_dim)", "# x: batch first", ["DL101"]),
        # its DL101 call suppressed on the line (the finding moves to the suppressed ones)
        (STEP3VL, "sdpa(q, k, v)  # expect: DL101", "sdpa(q, k, v)  # declint: ignore[DL101] exact here", []),
        # a metadata backend whose one finding comes from a fact rule (DL105): checked again,
        # as the full path checks every file the index holds in full
        (STAR, "kv_layout  # expect: DL105", "kv_layout  # expect: DL105, in place", ["DL105"]),
    ],
    ids=["appended", "comment", "suppressed", "fact-rule"],
)
def test_an_edit_that_keeps_the_facts_of_a_file_the_index_held_is_patched(
    demo: Path, rel: str, old: str, new: str, codes: list[str]
) -> None:
    """The index held the file in full: the same facts, lines and columns included, leave the
    index the last run's, and the file alone is checked again."""
    _settle_all(demo)
    engine(demo).run([demo])
    _patched_edit(demo, rel, old, new, codes, held_kept=True)


def _patched_edit(demo: Path, rel: str, old: str, new: str, codes: list[str], *, held_kept: bool) -> list[str]:
    """`rel` edited after a run: the next run is patched, reads and checks that file alone, reports
    what `--no-cache` does (`codes` in that file), keeps the held facts or writes them again, and
    the run after it reads nothing. Returns its findings' lines."""
    held = _cache_file(demo, ".held").read_bytes()
    edit(demo / rel, old, new)
    settle(demo)
    patched = engine(demo)
    result = patched.run([demo])
    assert _patched(patched)
    assert (patched.stats.files_read, patched.stats.files_checked_fresh) == (1, 1)
    assert lines(result) == lines(engine(demo, cache=False).run([demo]))
    assert [f.code for f in result.findings if f.path == rel] == codes
    assert (_cache_file(demo, ".held").read_bytes() == held) is held_kept
    again = engine(demo)  # the patched snapshot holds the edit: nothing is read
    assert lines(again.run([demo])) == lines(result)
    assert again.stats.files_read == 0 and "patch" not in again.stats.seconds
    return lines(result)


LOCAL_COPY = '\nfrom typing import Literal\n\nLocalBackends = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'
STAR_READ = "        layout = metadata.kv_layout  # expect: DL105"
STEP3VL_CODES = ["DL101", "DL100"]  # its SDPA call, its copy of the Literal


@pytest.mark.parametrize(
    ("rel", "old", "new", "codes"),
    [
        # a line above a class of a model file holding a copy of the Literal: its DL101 and its
        # project rule finding (DL100, on the copy) move down
        (
            STEP3VL,
            "class Step3VisionAttention(nn.Module):",
            "# above\nclass Step3VisionAttention(nn.Module):",
            STEP3VL_CODES,
        ),
        # a class statement spaced otherwise: the class name's column moves
        (STEP3VL, "class Step3VisionAttention(nn.Module):", "class  Step3VisionAttention(nn.Module):", STEP3VL_CODES),
        # a metadata backend whose one finding comes from a fact rule (DL105), on the moved read
        (STAR, STAR_READ, "        # above\n" + STAR_READ, ["DL105"]),
    ],
    ids=["line-above", "column", "fact-rule"],
)
def test_an_edit_that_moves_the_facts_of_a_file_the_index_held_is_patched(
    demo: Path, rel: str, old: str, new: str, codes: list[str]
) -> None:
    """Only the positions of the file's facts moved: the index is the last one but for them, the
    file is checked again, the project rules run again (DL100's finding points into the model
    file), and the held facts are written again: the edit undone is patched as well, its
    project findings back where they were."""
    (demo / STEP3VL).write_text((demo / STEP3VL).read_text(encoding="utf-8") + LOCAL_COPY, encoding="utf-8")
    _settle_all(demo)
    engine(demo).run([demo])
    original = (demo / rel).read_text(encoding="utf-8")
    moved = _patched_edit(demo, rel, old, new, codes, held_kept=False)
    (demo / rel).write_text(original, encoding="utf-8")
    settle(demo)
    undone = engine(demo)
    found = lines(undone.run([demo]))
    assert _patched(undone)
    assert found == lines(engine(demo, cache=False).run([demo]))
    assert (found != moved) is (new.count("\n") > old.count("\n"))  # findings below moved back up


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # a call into another module, in place of an expression: a fact of its function
        ("return x * self.cos + _rotate_half(x) * self.sin", "return sdpa(x, x, x)"),
        # a line above a class and an import: the facts move, and the module imports more
        ("class Step3VisionAttention(nn.Module):", "import os\nclass Step3VisionAttention(nn.Module):"),
    ],
    ids=["call", "import"],
)
def test_an_edit_that_changes_the_facts_of_a_file_the_index_held_takes_the_full_path_for_the_tree(
    demo: Path, old: str, new: str
) -> None:
    """The index changes: every hashed file asked for would be confirmed or checked again, and
    `declint check .` asks for more of them than a patch confirms (a few files passed by path are
    patched: the tests below)."""
    _settle_all(demo)
    engine(demo).run([demo])
    edit(demo / STEP3VL, old, new)
    settle(demo)
    run = engine(demo)
    assert lines(run.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert _tried_then_full(run)


def _moved_above(demo: Path) -> None:
    edit(demo / STEP3VL, "class Step3VisionAttention(nn.Module):", "# above\nclass Step3VisionAttention(nn.Module):")
    settle(demo)


def test_a_moved_file_whose_module_another_file_shares_takes_the_full_path(demo: Path) -> None:
    """A rule finds a class by module and name: with two files of one module (a package beside a
    module of its name), another file's class could answer for the moved one's."""
    package = demo / STEP3VL.removesuffix(".py") / "__init__.py"
    package.parent.mkdir()
    package.write_text("class Unrelated:\n    pass\n", encoding="utf-8")
    _settle_all(demo)
    engine(demo).run([demo])
    _moved_above(demo)
    run = engine(demo)
    assert lines(run.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert _tried_then_full(run)


@pytest.mark.parametrize("reads", ["placeholder", "new input"])
def test_a_moved_file_whose_project_rules_read_more_takes_the_full_path(
    demo: Path, monkeypatch: pytest.MonkeyPatch, reads: str
) -> None:
    """The project rules run again on the patched index: a placeholder module they read (a miss
    of the closure, simulated as `TRACKER` reports one) or an input the snapshot has no stat of
    makes the patch give way."""
    from declint import prefilter

    extra = demo / "extra.txt"
    extra.write_text("read by a project rule\n", encoding="utf-8")
    _settle_all(demo)
    engine(demo).run([demo])
    original = _Run._project_findings

    def reading_more(self: _Run, index: Any, *last: Any) -> Any:
        if reads == "placeholder":
            prefilter.TRACKER.touched.add("tensorrt_llm._torch.helper")
        else:
            extra.read_bytes()
        return original(self, index, *last)

    monkeypatch.setattr(_Run, "_project_findings", reading_more)
    _moved_above(demo)
    run = engine(demo)
    run.run([demo])
    assert _tried_then_full(run)


def test_a_patch_of_a_model_checks_it_in_a_worker_warmed_while_the_patch_loads(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's check needs libcst: the worker that checks it is forked, and imports libcst,
    before the patch loads the held facts and rebuilds the index; for a model's base class (the
    index holds it in full through the closure, no needle made it a seed), once the held facts
    say so. A file that was no index seed and is held as a placeholder (a helper: DL103 reads
    `ast`) is checked by a worker forked for it, which never imports it."""
    from declint import lazy, patching, stat_check
    from tests.test_cache import _snapshot_of

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)  # (else only with a second core)
    monkeypatch.setattr(lazy, "loaded", lambda name: False)  # (this test process may have loaded it)
    _settle_all(demo)
    engine(demo, jobs=2).run([demo])
    base_class = MODELS + "modeling_radio.py"
    assert not patching.was_seed(_snapshot_of(demo), base_class)
    edits = [
        (STEP3VL, "# x: (batch, heads, seq, head_dim)", "# x: batch first"),
        (base_class, "class RadioAttention(", "\nclass RadioAttention("),
    ]
    for rel, old, new in edits:
        edit(demo / rel, old, new)
        settle(demo)
        model = engine(demo, jobs=2)
        assert lines(model.run([demo])) == lines(engine(demo, cache=False).run([demo]))
        assert _patched(model)
        warmed = (model.stats.workers_warmed, model.stats.workers_adopted, model.stats.files_checked_fresh)
        assert warmed == (1, 1, 1), rel
    helper = demo / "tensorrt_llm" / "_torch" / "helper.py"
    helper.write_text(HELPER_TEXT, encoding="utf-8")
    _settle_all(demo)
    engine(demo, jobs=2).run([demo])
    helper.write_text("# a line above\n" + HELPER_TEXT, encoding="utf-8")
    settle(demo)
    placeholder = engine(demo, jobs=2)
    assert lines(placeholder.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert _patched(placeholder)
    assert (placeholder.stats.workers_warmed, placeholder.stats.files_checked_fresh) == (0, 1)


def test_a_patch_that_moved_facts_runs_the_project_rules_while_its_check_is_in_flight(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The moved model is handed to its check worker first; the project rules run again while
    that worker checks, and only then does the run wait for its result (as the full path
    overlaps them): same findings as a run without the cache."""
    from declint import stat_check, workers

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)  # (else only with a second core)
    _settle_all(demo)
    engine(demo, jobs=2).run([demo])
    events: list[str] = []
    submit, results, project = workers.ProcessPool.submit, workers._Mapping.results, _Run._project_findings
    monkeypatch.setattr(workers.ProcessPool, "submit", lambda *a, **k: events.append("submit") or submit(*a, **k))
    monkeypatch.setattr(workers._Mapping, "results", lambda *a, **k: events.append("results") or results(*a, **k))
    monkeypatch.setattr(_Run, "_project_findings", lambda *a, **k: events.append("project") or project(*a, **k))
    _moved_above(demo)
    run = engine(demo, jobs=2)
    found = lines(run.run([demo]))
    assert _patched(run)
    assert events == ["submit", "project", "results"]
    assert found == lines(engine(demo, cache=False).run([demo]))


def test_project_rules_that_fail_during_a_patch_leave_no_check_worker_behind(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error in the project rules while the moved model's check is in flight propagates, and
    the check's pool is closed first: its worker does not outlive the run."""
    from declint import stat_check, workers

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)
    _settle_all(demo)
    engine(demo, jobs=2).run([demo])
    closed: list[bool] = []
    close = workers.ProcessPool.close

    def closing(pool: workers.ProcessPool[Any, Any]) -> None:
        closed.append(any(worker.batch is not None for worker in pool._workers))
        close(pool)

    def failing(self: _Run, index: Any, *last: Any) -> Any:
        raise RuntimeError("a project rule failed")

    monkeypatch.setattr(workers.ProcessPool, "close", closing)
    monkeypatch.setattr(_Run, "_project_findings", failing)
    _moved_above(demo)
    with pytest.raises(RuntimeError, match="a project rule failed"):
        engine(demo, jobs=2).run([demo])
    assert closed == [True]  # closed once, its check still in flight


def test_the_project_rules_that_show_no_position_find_the_same_when_every_fact_moves(demo: Path) -> None:
    """`ProjectRule.SHOWS_POSITIONS = False` holds on the demo (with a copy of the Literal in a
    model file): every Python file with two lines above what it holds gives those rules the same
    findings, so a patch that moved positions may keep their last ones; DL100, which reports at
    the copy, says it shows them, and its finding moves."""
    from declint.rule import ProjectRule
    from declint.rule_set import rules_of_kind
    from declint.rules import ALL_RULES

    (demo / STEP3VL).write_text((demo / STEP3VL).read_text(encoding="utf-8") + LOCAL_COPY, encoding="utf-8")
    before = engine(demo, cache=False)
    index = before.build_index([demo])
    for path in (demo / "tensorrt_llm").rglob("*.py"):
        path.write_text("# moved\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    after = engine(demo, cache=False)
    moved = after.build_index([demo])
    attention = "tensorrt_llm._torch.models.modeling_step3vl.Step3VisionAttention"
    assert moved.classes[attention].line == index.classes[attention].line + 2
    shows = {}
    for rule in rules_of_kind(ALL_RULES, ProjectRule):
        found = rule().check_project(index, before.config)
        shows[rule.CODE] = found != rule().check_project(moved, after.config)
        assert found, rule.CODE  # (each finds something to move or keep)
        assert shows[rule.CODE] <= rule.SHOWS_POSITIONS, rule.CODE
    assert shows == {"DL100": True, "DL107": False, "DL108": False}


NEMOTRON = MODELS + "modeling_nemotron_h_multimodal.py"
RADIO = MODELS + "modeling_radio.py"
MISTRAL3 = MODELS + "modeling_mistral3.py"
NEMOTRON_VISION = '"vision": ("VANILLA", "TRTLLM", "FLASHINFER"),'
NEMOTRON_FIXED = '"vision": FixedEncoderAttention("position embeddings interpolated per image"),'
RADIO_DL101 = "modeling_radio.py:21:14: DL101 "  # (`lines` gives 0-based columns)
NEMOTRON_DL107 = "NemotronHMultimodalModel / vision: backends is 'VANILLA, TRTLLM, FLASHINFER' in the docs"


def _asked(demo: Path, *rels: str) -> list[Path]:
    return [demo / rel for rel in rels]


@pytest.mark.parametrize(
    ("other", "read"), [(RADIO, 2), (MISTRAL3, 1)], ids=["its-encoder-asked", "its-encoder-not-asked"]
)
def test_an_edit_that_changes_what_a_model_declares_is_patched_for_the_files_asked_for(
    demo: Path, other: str, read: int
) -> None:
    """NemotronH's vision encoder declared fixed: the index changes (RADIO's SDPA call is no longer
    a bypass, DL101; the docs table now differs, DL107). A pre-commit run passing the model and
    another file is patched: the model read and checked again against the index with the new
    facts, the other file too when its cached result asked a question the new index answers
    otherwise (RADIO's), else its cached result confirmed (MISTRAL3's); every project rule run
    again; the findings those of `--no-cache`; the run after it reads nothing. The snapshot keeps
    no finding of the files neither checked again nor confirmed: `declint check .` then takes the
    full path, and RADIO's finding is gone even when RADIO was not asked for."""
    _settle_all(demo)
    engine(demo).run([demo])
    asked = _asked(demo, NEMOTRON, other)
    assert any(RADIO_DL101 in line for line in lines(engine(demo).run([demo])))
    edit(demo / NEMOTRON, NEMOTRON_VISION, NEMOTRON_FIXED)
    settle(demo)
    patched = engine(demo)
    found = lines(patched.run(asked))
    assert _patched_reindexed(patched)
    assert (patched.stats.files_read, patched.stats.files_checked_fresh) == (read, read)
    assert found == lines(engine(demo, cache=False).run(asked))
    assert not any(RADIO_DL101 in line for line in found)
    assert any(NEMOTRON_DL107 in line for line in found)  # DL107 ran again: no position to move, yet new
    again = engine(demo)
    assert lines(again.run(asked)) == found
    assert again.stats.files_read == 0 and "patch" not in again.stats.seconds
    whole = engine(demo)
    everything = lines(whole.run([demo]))
    assert everything == lines(engine(demo, cache=False).run([demo]))
    assert "scan" in whole.stats.seconds and not any(RADIO_DL101 in line for line in everything)


def test_a_file_asked_for_that_the_new_index_does_not_confirm_is_checked_by_the_same_warmed_worker(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With worker processes: the edited model goes to the warmed worker at once; RADIO, whose
    cached result the new index does not confirm, is found so while that worker checks, and
    goes to it next (one pool, two maps), not to a worker forked cold. Same findings as
    `--no-cache`."""
    from declint import lazy, stat_check, workers

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)  # (else only with a second core)
    monkeypatch.setattr(lazy, "loaded", lambda name: False)  # (this test process may have loaded it)
    _settle_all(demo)
    engine(demo, jobs=2).run([demo])
    maps: list[list[str]] = []
    pools: list[object] = []
    submit, check_pool = workers.ProcessPool.submit, _Run._check_pool

    def submitting(pool: workers.ProcessPool[Any, Any], items: Any, batch: int = 1) -> Any:
        maps.append([item.rel for item in items])
        return submit(pool, items, batch)

    monkeypatch.setattr(workers.ProcessPool, "submit", submitting)
    monkeypatch.setattr(_Run, "_check_pool", lambda self, state: pools.append(state) or check_pool(self, state))
    edit(demo / NEMOTRON, NEMOTRON_VISION, NEMOTRON_FIXED)
    settle(demo)
    patched = engine(demo, jobs=2)
    asked = _asked(demo, NEMOTRON, RADIO)
    found = lines(patched.run(asked))
    assert _patched_reindexed(patched)
    assert maps == [[NEMOTRON], [RADIO]] and len(pools) == 1
    warmed = (patched.stats.workers_warmed, patched.stats.workers_adopted, patched.stats.files_checked_fresh)
    assert warmed == (1, 1, 2)
    assert found == lines(engine(demo, cache=False).run(asked))


def test_an_import_added_to_a_model_is_patched_for_the_files_asked_for(demo: Path) -> None:
    """The edit of `precommit_ab.py --imported`: what the model imports changes, and nothing else
    the index answers; of three model files asked for, the edited one is read and checked again,
    the others' cached results confirmed."""
    _settle_all(demo)
    engine(demo).run([demo])
    asked = _asked(demo, STEP3VL, NEMOTRON, MISTRAL3)
    engine(demo).run(asked)
    model = demo / STEP3VL
    model.write_text("import os as _edited\n" + model.read_text(encoding="utf-8"), encoding="utf-8")
    settle(demo)
    patched = engine(demo)
    found = lines(patched.run(asked))
    assert _patched_reindexed(patched)
    assert (patched.stats.files_read, patched.stats.files_checked_fresh, patched.stats.check_cache_hits) == (1, 1, 2)
    assert found == lines(engine(demo, cache=False).run(asked))
    assert [line.split(": ")[1][:5] for line in found if line.startswith(STEP3VL)] == STEP3VL_CODES[:1]


def test_a_changed_model_with_many_files_asked_for_takes_the_full_path(demo: Path) -> None:
    """More hashed files asked for than a patch confirms (`declint check .` asks for all, here
    every Python file of the package passed by path) take the full path."""
    _settle_all(demo)
    engine(demo).run([demo])
    asked = sorted((demo / "tensorrt_llm").rglob("*.py"))
    edit(demo / NEMOTRON, NEMOTRON_VISION, NEMOTRON_FIXED)
    settle(demo)
    run = engine(demo)
    assert lines(run.run(asked)) == lines(engine(demo, cache=False).run(asked))
    assert _tried_then_full(run)


def test_a_changed_literal_whose_files_asked_for_need_more_reads_than_a_patch_takes_the_full_path(
    demo: Path,
) -> None:
    """A backend added to the shared Literal changes the answers every backend-name check asked:
    with the Literal's module, more files to check again than a patch reads (`_READ_HERE`)."""
    _settle_all(demo)
    engine(demo).run([demo])
    retyping = [rel for rel in sorted(_rels_with(demo, '"TRTLLM"')) if rel != LITERAL][:4]
    asked = _asked(demo, LITERAL, *retyping)
    engine(demo).run(asked)
    edit(
        demo / LITERAL,
        'Literal["VANILLA", "TRTLLM", "FLASHINFER"]',
        'Literal["VANILLA", "TRTLLM", "FLASHINFER", "SDPA"]',
    )
    settle(demo)
    run = engine(demo)
    assert lines(run.run(asked)) == lines(engine(demo, cache=False).run(asked))
    assert _tried_then_full(run)


def _rels_with(demo: Path, text: str) -> list[str]:
    package = demo / "tensorrt_llm"
    return [path.relative_to(demo).as_posix() for path in package.rglob("*.py") if text in path.read_text("utf-8")]


def test_an_edit_that_makes_the_closure_want_a_placeholder_takes_the_full_path(demo: Path) -> None:
    """A class of a model file becomes a multimodal model (a decorator, no new base or needle):
    the closure now wants the file whose class derives from it, which the last index held as a
    placeholder (`patching.closure_holds`)."""
    tower = "\n\nclass ExtraTower(nn.Module):\n    pass\n"
    (demo / MISTRAL3).write_text((demo / MISTRAL3).read_text(encoding="utf-8") + tower, encoding="utf-8")
    sub = MODELS + "modeling_sub.py"
    (demo / sub).write_text("from .modeling_mistral3 import ExtraTower\n\n\nclass SubTower(ExtraTower):\n    pass\n")
    _settle_all(demo)
    engine(demo).run([demo])
    asked = _asked(demo, MISTRAL3, sub)
    engine(demo).run(asked)
    edit(demo / MISTRAL3, "class ExtraTower(", "@register_input_processor(None)\nclass ExtraTower(")
    settle(demo)
    run = engine(demo)
    found = lines(run.run(asked))
    assert found == lines(engine(demo, cache=False).run(asked))
    assert _tried_then_full(run)
    assert any(line.startswith(f"{MISTRAL3}:") and " DL102 " in line and "ExtraTower" in line for line in found)
