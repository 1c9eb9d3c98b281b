"""The cache: same findings as without it, reused only while every input is unchanged.

Inputs of a file's findings: declint itself, the configuration and rule selection, the file's
bytes, and the answers the project index gave its rules (recorded, then asked again when any
indexed file changed). The tests edit one input at a time and compare with a cold run.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import errno
import importlib
import os
import pickle
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from declint.cache import (
    FORMAT,
    NO_CACHE_ENV,
    Cache,
    CacheData,
    FileEntry,
    InputRecorder,
    content_digest,
    stat_key,
    still_valid,
)
from declint.config import find_config_file, load_config
from declint.engine import Engine, Selection, _Run
from declint.prefilter import ScanRecord
from declint.rules import ALL_RULES, RULES_BY_CODE
from declint.testing import PRELUDE, write_tree
from declint.types import RunResult
from tests.conftest import settle

MODELS = "tensorrt_llm/_torch/models/"
LITERAL = "tensorrt_llm/llmapi/llm_args.py"


pytestmark = pytest.mark.usefixtures("cache_on")


def engine(
    root: Path,
    *,
    cache: bool = True,
    select: tuple[str, ...] = ("DL",),
    jobs: int | None = None,
    full_index: bool = False,
) -> Engine:
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    return Engine(config, ALL_RULES, Selection(select, ()), cache=cache, jobs=jobs, full_index=full_index)


def lines(result: RunResult) -> list[str]:
    return [f"{f.path}:{f.line}:{f.column}: {f.code} {f.message}" for f in result.findings]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def move_facts(path: Path) -> None:
    """An import added at the top: the file's facts change (what it imports, and every line below),
    so a run takes the full path (an edit that keeps a held file's facts, or moves only their
    positions, is patched into the snapshot: tests/test_patching.py)."""
    path.write_text("import os as _moved\n" + path.read_text(encoding="utf-8"), encoding="utf-8")


def test_warm_run_equals_cold_and_reads_nothing(demo: Path) -> None:
    cold_engine = engine(demo)
    cold = cold_engine.run([demo])
    assert cold_engine.stats.files_read == 37 and cold_engine.stats.check_cache_hits == 0
    warm_engine = engine(demo)
    warm = warm_engine.run([demo])
    assert lines(warm) == lines(cold)
    assert warm == cold
    assert warm_engine.stats.files_read == 0
    assert warm_engine.stats.files_checked_fresh == 0
    assert warm_engine.stats.check_cache_hits == 37  # every checked file, from the snapshot
    assert lines(engine(demo, cache=False).run([demo])) == lines(cold)


# Modules bound with `lazy_module` sit in sys.modules unloaded, as instances of a subclass of
# ModuleType until their first use: only plain modules count as loaded.
_LOADED = (
    "import sys, types\nfrom declint.cli import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n    code = done.code\n"
    "loaded = [m for m, module in sys.modules.items() if type(module) is types.ModuleType]\n"
    "print(code, sorted(m for m in loaded if m.startswith(('declint.', 'libcst', 'pathspec', 'difflib'))))\n"
)


def _loaded_by_a_check(root: Path, *paths: str) -> tuple[str, list[str]]:
    """(exit code, declint and libcst modules loaded) of `declint check PATHS` in a new process."""
    env = {k: v for k, v in os.environ.items() if k != NO_CACHE_ENV}
    done = subprocess.run(
        [sys.executable, "-c", _LOADED, "check", *paths], cwd=root, env=env, capture_output=True, text=True, check=True
    )
    code, modules = done.stdout.splitlines()[-1].split(" ", 1)
    return code, ast.literal_eval(modules)


def test_a_module_bound_lazily_counts_as_loaded_once_used() -> None:
    """`lazy.loaded` tells an imported module from one `lazy_module` bound and nothing used yet
    (a run warms a check worker only while libcst is not loaded in its own process)."""
    code = (
        "from declint.lazy import lazy_module, loaded\n"
        "bound = lazy_module('difflib')\nbefore = loaded('difflib')\nbound.SequenceMatcher\n"
        "print(before, loaded('difflib'), loaded('no_such_module'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False True False\n"


def test_a_run_the_snapshot_answers_loads_no_rule_facts_or_index(demo: Path) -> None:
    """A warm pre-commit run replays the snapshot: its start-up imports no rule module, and none
    of the facts, the index, the prefilter or libcst (they were a third of it), nor the workers'
    state, the suppression parser, difflib or pathspec (the files passed were found by the last
    walk). A run that checks a file again loads them (libcst in its workers)."""
    model = MODELS + "modeling_radio.py"
    _loaded_by_a_check(demo, ".")
    code, loaded = _loaded_by_a_check(demo, model)
    assert code == "1"  # its findings are reported from the snapshot
    heavy = {"declint.facts", "declint.index", "declint.prefilter", "declint.rule", "libcst", "pathspec"}
    heavy |= {"declint.run_state", "declint.suppressions", "difflib"}  # ~12 ms to create or import
    assert not heavy & set(loaded)
    assert not [name for name in loaded if name.startswith("declint.rules.")]
    move_facts(demo / model)  # (the full path: an edit that moved positions only is patched)
    code, loaded = _loaded_by_a_check(demo, model)
    assert (
        code == "1" and heavy - {"libcst", "difflib"} <= set(loaded) and "declint.rules.direct_sdpa" in loaded
    )  # (libcst: in workers; pathspec: the walk of the index; difflib: only for a string close to a name)
    assert "difflib" not in loaded


def test_cache_directory_layout(demo: Path) -> None:
    engine(demo).run([demo])
    directory = demo / ".declint_cache"
    assert (directory / ".gitignore").read_text(encoding="utf-8") == "# created by declint\n*\n"
    assert (
        (directory / "CACHEDIR.TAG")
        .read_text(encoding="utf-8")
        .startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
    )
    suffixes = sorted(p.suffix for p in (directory / f"v{FORMAT}").iterdir())
    assert suffixes == [".held", ".listings", ".pickle", ".snapshot", ".walk"]


def test_an_edited_file_keeps_its_syntax_scope_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether check-syntax or syntax-paths asks for a file's syntax is kept in its cached record:
    a file edited into a syntax error is judged as a cold run judges it, and the glob is not asked."""
    inside, outside = MODELS + "modeling_plain.py", "tensorrt_llm/_torch/pyexecutor/plain.py"
    write_tree(tmp_path, {**PRELUDE, inside: "def fine():\n    pass\n", outside: "def fine():\n    pass\n"})
    settle(tmp_path)
    engine(tmp_path).run([tmp_path])
    edit(tmp_path / inside, "fine():", "broken(:")
    edit(tmp_path / outside, "fine():", "broken(:")
    settle(tmp_path)
    asked: list[str] = []
    original = _Run._syntax_scope
    monkeypatch.setattr(_Run, "_syntax_scope", lambda run, rel: asked.append(rel) or original(run, rel))
    warm_engine = engine(tmp_path)
    warm = warm_engine.run([tmp_path])
    assert warm_engine.stats.files_read == 2 and asked == []
    assert lines(warm) == [f"{inside}:1:11: DL000 syntax error: invalid syntax"]
    assert lines(warm) == lines(engine(tmp_path, cache=False).run([tmp_path]))


def test_an_edited_file_alone_is_checked_again(demo: Path) -> None:
    engine(demo).run([demo])
    target = demo / MODELS / "modeling_radio.py"
    edit(target, "out = torch.nn.functional", "out  = torch.nn.functional")
    settle(demo)
    warm_engine = engine(demo)
    warm = warm_engine.run([demo])
    assert warm_engine.stats.files_read == 1
    assert warm_engine.stats.files_checked_fresh == 1
    assert "discover" not in warm_engine.stats.seconds  # no directory changed: the last walk's list
    assert lines(warm) == lines(engine(demo, cache=False).run([demo]))
    assert any(line.startswith(f"{MODELS}modeling_radio.py:21:15: DL101 ") for line in lines(warm))


def test_an_edited_checked_file_is_checked_by_a_worker_warmed_while_the_run_loads(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an edit of a checked file that changes its facts (an import added above a class: the
    patch cannot take it), the run forks its check worker before the cache load, the
    scan and the index, to import libcst meanwhile (~0.2 s), and the check's pool adopts it; a
    run the snapshot answers (a touch, the same bytes) forks none, nor does a cold run, one with
    a single core, or one in a process that loaded libcst (a fix's re-lint: a fork inherits it)."""
    from declint import lazy, stat_check

    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)  # (else only with a second core)
    monkeypatch.setattr(lazy, "loaded", lambda name: False)  # (this test process may have loaded it)
    cold = engine(demo, jobs=2)
    cold.run([demo])
    target = demo / MODELS / "modeling_radio.py"
    os.utime(target, (time.time() - 40, time.time() - 40))
    touched = engine(demo, jobs=2)
    touched.run([demo])
    assert (cold.stats.workers_warmed, touched.stats.workers_warmed) == (0, 0)
    edit(target, "class RadioAttention(", "import os as _one\nclass RadioAttention(")
    settle(demo)
    warm_engine = engine(demo, jobs=2)
    warm = warm_engine.run([demo])
    assert (warm_engine.stats.workers_warmed, warm_engine.stats.workers_adopted) == (1, 1)
    assert warm_engine.stats.files_checked_fresh == 1
    assert lines(warm) == lines(engine(demo, cache=False).run([demo]))
    monkeypatch.setattr(stat_check, "fork_pays", lambda: False)  # one core: the check's worker imports it
    edit(target, "class RadioAttention(", "import os as _two\nclass RadioAttention(")
    settle(demo)
    one_core = engine(demo, jobs=2)
    assert lines(one_core.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert (one_core.stats.workers_warmed, one_core.stats.files_checked_fresh) == (0, 1)
    monkeypatch.setattr(stat_check, "fork_pays", lambda: True)
    monkeypatch.setattr(lazy, "loaded", lambda name: name == "libcst")
    edit(target, "class RadioAttention(", "\nclass RadioAttention(")
    settle(demo)
    loaded = engine(demo, jobs=2)
    assert lines(loaded.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert (loaded.stats.workers_warmed, loaded.stats.files_checked_fresh) == (0, 1)
    # No process to spare for it: the run goes on, its check forks its worker later.
    from declint import workers

    def refused(warm_up: object) -> None:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(lazy, "loaded", lambda name: False)
    monkeypatch.setattr(workers, "Warmed", refused)
    edit(target, "class RadioAttention(", "\nclass RadioAttention(")
    settle(demo)
    unforked = engine(demo, jobs=2)
    assert lines(unforked.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert (unforked.stats.workers_warmed, unforked.stats.files_checked_fresh) == (0, 1)


def _stored(root: Path, suffix: str) -> list[Path]:
    return sorted((root / ".declint_cache" / f"v{FORMAT}").glob(f"*{suffix}"))


def test_an_edit_is_written_to_a_journal_that_the_next_run_applies(demo: Path) -> None:
    engine(demo).run([demo])
    [full] = _stored(demo, ".pickle")
    written = full.read_bytes()
    assert _stored(demo, ".journal") == []
    move_facts(demo / MODELS / "modeling_radio.py")
    settle(demo)
    first = engine(demo)
    assert lines(first.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert first.stats.files_read == 1
    assert full.read_bytes() == written  # one entry changed: the full write is left as it was
    [journal] = _stored(demo, ".journal")
    assert journal.stem == full.stem
    # A second edit elsewhere: the first edited file's new entry comes from the journal, so
    # only the second file is read; the journal then holds both entries.
    move_facts(demo / LITERAL)
    settle(demo)
    second = engine(demo)
    assert lines(second.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert second.stats.files_read == 1
    assert full.read_bytes() == written
    third = engine(demo)
    third.run([demo])
    assert third.stats.files_read == 0


def test_a_journal_of_another_full_write_or_damaged_is_ignored(demo: Path) -> None:
    engine(demo).run([demo])
    move_facts(demo / MODELS / "modeling_radio.py")
    settle(demo)
    engine(demo).run([demo])
    [journal] = _stored(demo, ".journal")
    stale = journal.read_bytes()
    for path in _stored(demo, ".pickle") + _stored(demo, ".snapshot"):
        path.unlink()
    engine(demo).run([demo])  # a full write with a new token, which removes the journal
    assert _stored(demo, ".journal") == []
    journal.write_bytes(stale)  # planted back: it extends a full write that no longer exists
    (demo / ".declint_cache" / f"v{FORMAT}" / f"{journal.stem}.snapshot").unlink()
    again = engine(demo)
    assert lines(again.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert again.stats.files_read == 0  # the full write alone holds every file's current entry
    journal.write_bytes(stale[:50])
    damaged = engine(demo)
    assert lines(damaged.run([demo])) == lines(engine(demo, cache=False).run([demo]))


def test_a_journal_that_grows_past_a_quarter_of_the_files_is_folded_into_a_full_write(demo: Path) -> None:
    engine(demo).run([demo])
    [full] = _stored(demo, ".pickle")
    written = full.read_bytes()
    models = sorted((demo / MODELS).glob("modeling_*.py"))
    files = len(pickle.loads(written).files)
    assert len(models) > files // 4 + 1 > 2
    for path in models[:2]:
        move_facts(path)
    settle(demo)
    engine(demo).run([demo])
    assert full.read_bytes() == written and len(_stored(demo, ".journal")) == 1
    for path in models[2 : files // 4 + 1]:
        move_facts(path)
    settle(demo)
    folded = engine(demo)
    assert lines(folded.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert full.read_bytes() != written and _stored(demo, ".journal") == []


def _literal_project(root: Path) -> Path:
    write_tree(
        root,
        {
            **PRELUDE,
            MODELS + "modeling_route.py": 'def route(config):\n    return config.attn_backend == "CUTLASS"\n',
        },
    )
    settle(root)
    return root


def test_a_change_to_the_literal_invalidates_the_files_that_read_it(tmp_path: Path) -> None:
    root = _literal_project(tmp_path)
    assert lines(engine(root).run([root])) == []
    # The file itself is unchanged: only its recorded question (the Literal's members) is.
    edit(root / LITERAL, '"FLASHINFER"]', '"FLASHINFER", "CUTLASS"]')
    settle(root)
    warm_engine = engine(root)
    warm = warm_engine.run([root])
    assert lines(warm) == lines(engine(root, cache=False).run([root]))
    assert lines(warm) == [
        f'{MODELS}modeling_route.py:2:34: DL103 backend name "CUTLASS" retyped as a string literal; read it '
        "from the shared Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked "
        "and cannot drift"
    ]
    assert warm_engine.stats.files_read == 1  # the Literal's file; the checked file was not read again


def test_a_change_to_another_literal_invalidates_the_comparisons_it_types(tmp_path: Path) -> None:
    """DL103 leaves alone what a variable typed by another namespace's Literal is compared with;
    the file depends on that Literal's members, in another file the prefilter only half-indexes."""
    moe = 'MoeBackend = Literal["CUTLASS", "TRTLLM"]\n'
    write_tree(
        tmp_path,
        {
            **PRELUDE,
            LITERAL: PRELUDE[LITERAL] + moe,
            "tensorrt_llm/_torch/modules/create_moe.py": (
                "from ...llmapi.llm_args import MoeBackend\n\n"
                "def get_moe_cls(config):\n    backend_name: MoeBackend = config.moe_backend\n"
                '    return backend_name == "TRTLLM"\n'
            ),
        },
    )
    settle(tmp_path)
    assert lines(engine(tmp_path).run([tmp_path])) == []
    edit(tmp_path / LITERAL, moe, 'MoeBackend = Literal["VANILLA", "TRTLLM"]\n')  # now attention names only
    settle(tmp_path)
    warm = engine(tmp_path).run([tmp_path])
    assert lines(warm) == lines(engine(tmp_path, cache=False).run([tmp_path]))
    assert lines(warm) == [
        'tensorrt_llm/_torch/modules/create_moe.py:5:27: DL103 backend name "TRTLLM" retyped as a string literal; '
        "read it from the shared Literal EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is "
        "type-checked and cannot drift"
    ]


def test_a_change_to_a_config_field_in_another_file_invalidates_its_keywords_and_reads(tmp_path: Path) -> None:
    """DL103 leaves alone a value a config class's field types by another namespace's Literal
    (the class in the Literal's file); annotated `str` there, the file that passes and reads the
    field is checked again, unchanged, and reports them."""
    field = '    attention_backend: VisualGenAttentionBackend = "TORCH_SDPA"\n'
    write_tree(
        tmp_path,
        {
            **PRELUDE,
            LITERAL: PRELUDE[LITERAL]
            + 'VisualGenAttentionBackend = Literal["TORCH_SDPA", "FLASHINFER"]\n\n'
            + "class VisualGenConfig:\n"
            + field,
            "tensorrt_llm/_torch/modules/pipeline.py": (
                "from ...llmapi.llm_args import VisualGenConfig\n\n"
                'def fast():\n    return VisualGenConfig(attention_backend="FLASHINFER")\n\n'
                'def pick(config: VisualGenConfig):\n    return config.attention_backend == "FLASHINFER"\n'
            ),
        },
    )
    settle(tmp_path)
    assert lines(engine(tmp_path).run([tmp_path])) == []
    edit(tmp_path / LITERAL, field, field.replace("VisualGenAttentionBackend", "str"))
    settle(tmp_path)
    warm = engine(tmp_path).run([tmp_path])
    assert lines(warm) == lines(engine(tmp_path, cache=False).run([tmp_path]))
    retyped = (
        'DL103 backend name "{}" retyped as a string literal; read it from the shared Literal '
        "EncoderAttentionBackend (tensorrt_llm.llmapi.llm_args) so it is type-checked and cannot drift"
    )
    assert lines(warm) == [
        "tensorrt_llm/_torch/modules/pipeline.py:4:45: " + retyped.format("FLASHINFER"),
        "tensorrt_llm/_torch/modules/pipeline.py:7:39: " + retyped.format("FLASHINFER"),
    ]


def test_an_unrelated_edit_keeps_the_other_results(tmp_path: Path) -> None:
    root = _literal_project(tmp_path)
    (root / "tensorrt_llm/_torch/other.py").write_text("x = 1\n", encoding="utf-8")
    settle(root)
    engine(root).run([root])
    (root / "tensorrt_llm/_torch/other.py").write_text("x = 2\n", encoding="utf-8")
    settle(root)
    warm_engine = engine(root)
    warm_engine.run([root])
    # The index changed (a file did), so recorded answers were asked again, and still hold.
    assert warm_engine.stats.files_checked_fresh == 0
    assert warm_engine.stats.check_cache_hits > 0


def test_an_edit_that_leaves_a_file_a_placeholder_asks_no_cached_question_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index holds no facts of a checked file its needles do not reach (a placeholder): an
    edit of it leaves the index as it was, so the other files' cached results hold without their
    recorded questions asked again. An edit of the Literal's file, whose facts it holds, asks them."""
    root = _literal_project(tmp_path)
    helper = root / "tensorrt_llm/_torch/helper.py"
    helper.write_text('def mode(config):\n    return config.attn_backend == "TRTLLM"\n', encoding="utf-8")
    settle(root)
    engine(root).run([root])
    asked: list[int] = []
    real = still_valid

    def counted(deps: Any, *rest: Any) -> bool:
        asked.append(len(deps))
        return real(deps, *rest)

    monkeypatch.setattr("declint.engine.still_valid", counted)
    helper.write_text("# a line above\n" + helper.read_text(encoding="utf-8"), encoding="utf-8")
    settle(root)
    _stored(root, ".held")[0].unlink()  # the full path (with them this run patches the snapshot)
    edited = engine(root)
    result = edited.run([root])
    assert lines(result) == lines(engine(root, cache=False).run([root]))
    assert [(f.code, f.line) for f in result.findings if f.path == "tensorrt_llm/_torch/helper.py"] == [("DL103", 3)]
    assert (edited.stats.files_checked_fresh, edited.stats.check_cache_hits) == (1, 6)
    assert asked == []
    edit(root / LITERAL, '"FLASHINFER"]', '"FLASHINFER", "CUTLASS"]')
    settle(root)
    _stored(root, ".held")[0].unlink()  # (else a patch tries first, confirming the results it can)
    literal_edited = engine(root).run([root])
    assert lines(literal_edited) == lines(engine(root, cache=False).run([root]))
    assert len(asked) == 6 and all(asked)  # each of the 6 cached results' recorded questions, asked again


def test_the_index_signature_follows_the_bytes_of_the_files_the_index_holds_facts_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other bytes of a file the index holds in full, or of one it holds for its Literals alone,
    give another signature; other bytes of a placeholder do not (its module name still counts)."""
    write_tree(
        tmp_path,
        {
            **PRELUDE,
            "tensorrt_llm/_torch/modules/moe_backends.py": 'from typing import Literal\n\nMoe = Literal["A"]\n',
            "tensorrt_llm/_torch/helper.py": 'def mode(config):\n    return config.attn_backend == "TRTLLM"\n',
        },
    )
    settle(tmp_path)
    retained: list[_Run] = []
    monkeypatch.setattr("declint.engine.RETAINED", retained)
    engine(tmp_path).run([tmp_path])
    (run,) = retained
    files = run._built_from  # every file of the tree, as the index was built from them
    signature = run._signature(files)
    full = MODELS + "modeling_utils.py"
    partial, placeholder = "tensorrt_llm/_torch/modules/moe_backends.py", "tensorrt_llm/_torch/helper.py"
    assert [rel in run.demanded for rel in (full, partial, placeholder)] == [True, False, False]
    assert [run.records[rel].literal for rel in (full, partial, placeholder)] == [False, True, False]

    def signed_with(rel: str, **changed: str) -> str:
        kept = run.records[rel]
        run.records[rel] = kept._replace(**changed)
        try:
            return run._signature(files)
        finally:
            run.records[rel] = kept

    assert signed_with(full, digest="other bytes") != signature
    assert signed_with(partial, digest="other bytes") != signature
    assert signed_with(placeholder, digest="other bytes") == signature
    run.modules[placeholder] = "tensorrt_llm._torch.moved"
    assert run._signature(files) != signature


BASE = """\
from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin
from tensorrt_llm._torch.models.modeling_utils import register_input_processor


@register_input_processor(object, model_type="b", placeholder_metadata=dict(placeholder_map={"image": "<i>"}))
class BaseVL(MultimodalModelMixin):
    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}

    def __init__(self):
        self.tower = Tower()


class Tower:
    pass
"""

CHILD = """\
import torch.nn.functional as F

from tensorrt_llm._torch.models.modeling_base import BaseVL


class ChildVL(BaseVL):
    def __init__(self):
        self.tower = ChildTower()


class ChildTower:
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)
"""


def test_a_change_to_a_base_class_in_another_file_reaches_the_subclass(tmp_path: Path) -> None:
    write_tree(tmp_path, {**PRELUDE, MODELS + "modeling_base.py": BASE, MODELS + "modeling_child.py": CHILD})
    settle(tmp_path)
    first = lines(engine(tmp_path).run([tmp_path / MODELS / "modeling_child.py"]))
    assert [line.split(": DL101 ")[1].split(" declares ")[0] for line in first] == [
        "`ChildTower.forward` calls torch.nn.functional.scaled_dot_product_attention directly, but ChildVL"
    ]
    # The base now declares the vision encoder fixed: the child's file is unchanged, its finding goes.
    edit(
        tmp_path / MODELS / "modeling_base.py",
        '("VANILLA", "TRTLLM", "FLASHINFER")',
        'FixedEncoderAttention("a tower on SDPA")',
    )
    edit(
        tmp_path / MODELS / "modeling_base.py",
        "import MultimodalModelMixin",
        "import MultimodalModelMixin, FixedEncoderAttention",
    )
    settle(tmp_path)
    warm_engine = engine(tmp_path)
    warm = lines(warm_engine.run([tmp_path / MODELS / "modeling_child.py"]))
    assert warm == lines(engine(tmp_path, cache=False).run([tmp_path / MODELS / "modeling_child.py"])) == []
    assert warm_engine.stats.files_checked_fresh == 1


ALIAS_MODULE = """\
import torch.nn.functional as F

sdpa = F.scaled_dot_product_attention
"""

ALIAS_USER = """\
from tensorrt_llm._torch.models.attn_utils import sdpa
from tensorrt_llm._torch.models.modeling_base import BaseVL


class AliasVL(BaseVL):
    def __init__(self):
        self.tower = AliasTower()


class AliasTower:
    def forward(self, q, k, v):
        return sdpa(q, k, v)
"""


def test_a_change_to_an_imported_alias_reaches_the_file_calling_it(tmp_path: Path) -> None:
    """DL101 asks the index what `attn_utils.sdpa` is: when another file rebinds it, the calling
    file (unchanged) is checked again and its finding goes."""
    user = MODELS + "modeling_alias.py"
    write_tree(
        tmp_path,
        {**PRELUDE, MODELS + "modeling_base.py": BASE, MODELS + "attn_utils.py": ALIAS_MODULE, user: ALIAS_USER},
    )
    settle(tmp_path)
    cold_engine = engine(tmp_path)
    cold = lines(cold_engine.run([tmp_path / user]))
    assert cold_engine.stats.safety_rounds == 0  # its bytes name SDPA: attn_utils is indexed up front
    assert cold == [
        f"{user}:12:15: DL101 `AliasTower.forward` calls torch.nn.functional.scaled_dot_product_attention "
        "directly, but AliasVL declares its vision encoder configurable (VANILLA, TRTLLM, FLASHINFER): an "
        "encoder_attention_backend override is silently bypassed; route the call through the attention backend "
        "or declare the encoder FixedEncoderAttention(reason)"
    ]
    unchanged = engine(tmp_path)
    assert lines(unchanged.run([tmp_path / user])) == cold
    assert unchanged.stats.files_checked_fresh == 0
    edit(tmp_path / MODELS / "attn_utils.py", "sdpa = F.scaled_dot_product_attention", "sdpa = F.softmax")
    settle(tmp_path)
    warm_engine = engine(tmp_path)
    warm = lines(warm_engine.run([tmp_path / user]))
    assert warm == lines(engine(tmp_path, cache=False).run([tmp_path / user])) == []
    assert warm_engine.stats.files_checked_fresh == 1


# A class between the model and its base, in a file no needle matches and outside `syntax-paths`
# (else it would be parsed anyway): it is indexed for its bases.
MIDDLE = """\
from tensorrt_llm._torch.models.modeling_base import BaseVL


class MiddleVL(BaseVL):
    pass
"""

FIXED = """\
from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin
from tensorrt_llm._torch.models.modeling_utils import register_input_processor


@register_input_processor(object, model_type="f", placeholder_metadata=dict(placeholder_map={"image": "<i>"}))
class FixedVL(MultimodalModelMixin):
    encoder_attention_backends = {"vision": FixedEncoderAttention("a tower on SDPA")}
"""


def _through_middle() -> dict[str, str]:
    """The child model, its base in MIDDLE (a needle-free file outside syntax-paths), BASE above it."""
    child = CHILD.replace("_torch.models.modeling_base import BaseVL", "shared.middle import MiddleVL").replace(
        "ChildVL(BaseVL)", "ChildVL(MiddleVL)"
    )
    return {
        MODELS + "modeling_base.py": BASE,
        "tensorrt_llm/shared/__init__.py": "",
        "tensorrt_llm/shared/middle.py": MIDDLE,
        MODELS + "modeling_child.py": child,
    }


def test_a_file_no_needle_matches_is_known_by_its_stat_until_it_is_indexed(tmp_path: Path) -> None:
    files = _through_middle()
    write_tree(
        tmp_path, {**PRELUDE, **files, MODELS + "modeling_fixed.py": FIXED, "tensorrt_llm/unrelated.py": "X = 1\n"}
    )
    settle(tmp_path)
    first = engine(tmp_path)
    assert [line.split(" directly, ")[0] for line in lines(first.run([tmp_path]))] == [
        f"{MODELS}modeling_child.py:13:15: DL101 `ChildTower.forward` calls "
        "torch.nn.functional.scaled_dot_product_attention"
    ]
    with _Run(first) as run:
        entries = run.data.files
    # The unrelated file is never hashed: its stat stands for its bytes. The middle file was
    # indexed (ChildVL's declaration comes through it): it carries the digest of its bytes.
    unrelated = os.stat(tmp_path / "tensorrt_llm/unrelated.py")
    assert entries["tensorrt_llm/unrelated.py"].scan.digest == (
        f"stat:{unrelated.st_size}:{unrelated.st_mtime_ns}:{unrelated.st_ctime_ns}:{unrelated.st_ino}"
    )
    middle = tmp_path / "tensorrt_llm/shared/middle.py"
    assert entries["tensorrt_llm/shared/middle.py"].scan.digest == content_digest(middle.read_bytes())
    # So an edit elsewhere re-checks that file alone: the middle file's check result still holds.
    (tmp_path / "tensorrt_llm/unrelated.py").write_text("X = 2\n", encoding="utf-8")
    settle(tmp_path)
    second = engine(tmp_path)
    assert lines(second.run([tmp_path])) == lines(first.run([tmp_path]))
    assert (second.stats.files_read, second.stats.files_checked_fresh) == (1, 0)
    # The middle class now derives from a model declared fixed: the child's finding goes.
    middle.write_text(
        MIDDLE.replace("modeling_base import BaseVL", "modeling_fixed import FixedVL").replace("(BaseVL)", "(FixedVL)"),
        encoding="utf-8",
    )
    settle(tmp_path)
    third = engine(tmp_path)
    assert lines(third.run([tmp_path / MODELS / "modeling_child.py"])) == []
    assert lines(engine(tmp_path, cache=False).run([tmp_path])) == lines(engine(tmp_path).run([tmp_path])) == []


def test_a_checked_file_under_another_module_name_is_checked_again(tmp_path: Path) -> None:
    """Red-team case (2026-12-02): an `__init__.py` removed above a file and put back changes its
    module name and back, not its bytes; the result cached under the other name asked the index
    other questions, so it is not reused (it was, and the snapshot then replayed it)."""
    files = _through_middle()
    write_tree(tmp_path, {**PRELUDE, **files})
    settle(tmp_path)
    expected = lines(engine(tmp_path, cache=False).run([tmp_path]))
    assert "but ChildVL declares its vision encoder configurable" in expected[0]
    assert lines(engine(tmp_path).run([tmp_path])) == expected
    marker = tmp_path / MODELS / "__init__.py"
    marker.unlink()
    assert lines(engine(tmp_path).run([tmp_path])) == lines(engine(tmp_path, cache=False).run([tmp_path]))
    marker.write_text("", encoding="utf-8")
    settle(tmp_path)
    again = engine(tmp_path)
    assert lines(again.run([tmp_path])) == expected
    assert lines(engine(tmp_path).run([tmp_path])) == expected  # and from the snapshot


def test_a_configuration_change_is_a_cold_run(demo: Path) -> None:
    engine(demo).run([demo])
    edit(demo / "pyproject.toml", "[tool.declint]\n", '[tool.declint]\nextra-backend-names = ["OLD_BACKEND"]\n')
    warm_engine = engine(demo)
    warm_engine.run([demo])
    assert warm_engine.stats.files_read == 37
    assert warm_engine.stats.check_cache_hits == 0


def test_another_selection_has_its_own_cache(demo: Path) -> None:
    everything = lines(engine(demo).run([demo]))
    only = engine(demo, select=("DL101",))
    assert lines(only.run([demo])) == [line for line in everything if ": DL101 " in line]
    assert only.stats.check_cache_hits == 0
    again = engine(demo)
    assert lines(again.run([demo])) == everything
    assert again.stats.files_checked_fresh == 0


def test_an_edit_within_the_racy_window_is_seen(tmp_path: Path) -> None:
    root = _literal_project(tmp_path)
    target = root / MODELS / "modeling_route.py"
    target.write_text('def route(config):\n    return config.attn_backend == "CUTLAS"\n', encoding="utf-8")
    before = target.stat()
    assert lines(engine(root).run([root])) == []  # "CUTLAS" is no backend name, nor close to one
    # Same size, same mtime, same inode: only the content moved, right after it was hashed.
    target.write_text('def route(config):\n    return config.attn_backend == "TRTLLX"\n', encoding="utf-8")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert lines(engine(root).run([root])) == [
        f'{MODELS}modeling_route.py:2:34: DL103 "TRTLLX" is not a member of EncoderAttentionBackend '
        '(did you mean "TRTLLM"?)'
    ]


def test_a_file_rewritten_in_place_with_its_mtime_restored_is_read_again(demo: Path) -> None:
    """`cp -p`, `rsync -t --inplace`, `touch -r`: same size, same mtime, same inode, other bytes.
    Only the inode's change time (which no program can set back) tells."""
    engine(demo).run([demo])
    target = demo / MODELS / "modeling_radio.py"
    before = target.stat()
    text = target.read_text(encoding="utf-8")
    call = "torch.nn.functional.scaled_dot_product_attention("
    assert call in text
    with open(target, "r+", encoding="utf-8") as handle:  # the same inode
        handle.write(text.replace(call, call.replace("torch", "tarch")))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = target.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    again = engine(demo)
    assert lines(again.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert again.stats.files_read == 1
    assert not any(line.startswith(f"{MODELS}modeling_radio.py:21:") for line in lines(again.run([demo])))


def test_no_cache_and_the_environment_variable_write_nothing(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine(demo, cache=False).run([demo])
    assert not (demo / ".declint_cache").exists()
    monkeypatch.setenv(NO_CACHE_ENV, "1")
    engine(demo).run([demo])
    assert not (demo / ".declint_cache").exists()


def test_a_damaged_cache_file_is_a_cold_cache(demo: Path) -> None:
    cold = lines(engine(demo).run([demo]))
    stored = sorted((demo / ".declint_cache" / f"v{FORMAT}").iterdir())
    assert [path.suffix for path in stored] == [".held", ".listings", ".pickle", ".snapshot", ".walk"]
    for path in stored:
        path.write_bytes(path.read_bytes()[:100])
    again = engine(demo)
    assert lines(again.run([demo])) == cold
    assert again.stats.files_read == 37


class _FullDisk:
    """`os.fdopen` as the cache's writes meet a full disk: the writes numbered in `failing` (all
    of them when None) write half their bytes, then fail with ENOSPC."""

    def __init__(self, failing: set[int] | None = None) -> None:
        self.failing = failing
        self.writes = 0
        self._fdopen = os.fdopen

    def __call__(self, fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = self._fdopen(fd, mode, *args, **kwargs)
        if "w" not in mode:
            return handle
        self.writes += 1
        return _HalfWritten(handle) if self.failing is None or self.writes in self.failing else handle


class _HalfWritten:
    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def __enter__(self) -> _HalfWritten:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def write(self, data: bytes) -> int:
        self.handle.write(data[: len(data) // 2])
        self.handle.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _left_behind(root: Path) -> list[str]:
    return sorted(path.name for path in (root / ".declint_cache").rglob(".tmp-*"))


def _full_disk_warning(root: Path) -> str:
    return (
        f"declint: warning: cannot write the cache in {root / '.declint_cache'} (No space left on device): "
        "later runs will not be faster; --no-cache turns the cache off\n"
    )


def test_a_full_disk_costs_the_cache_never_the_run(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    uncached = lines(engine(demo, cache=False).run([demo]))
    full = _FullDisk()
    monkeypatch.setattr(os, "fdopen", full)
    capsys.readouterr()
    assert lines(engine(demo).run([demo])) == uncached
    assert capsys.readouterr().err == _full_disk_warning(demo)  # said once, for the 5 writes
    assert full.writes == 5  # the cache, its listings, held facts, snapshot and walk file: each failed
    assert _left_behind(demo) == []  # each half-written temporary file removed
    assert sorted(path.name for path in (demo / ".declint_cache" / f"v{FORMAT}").iterdir()) == []
    again = engine(demo)
    assert lines(again.run([demo])) == uncached
    assert again.stats.files_read == 37  # nothing was kept: a cold run again


@pytest.mark.parametrize("failing", range(1, 6))
def test_one_write_lost_to_a_full_disk_leaves_a_cache_that_still_tells_the_truth(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failing: int
) -> None:
    """The cache's files name one another by token: whichever one is lost (the cache, its
    listings, held facts, snapshot or walk file), the runs after it, with an edit between them,
    report what runs without the cache report."""
    with monkeypatch.context() as patched:
        patched.setattr(os, "fdopen", _FullDisk({failing}))
        capsys.readouterr()
        engine(demo).run([demo])
        assert capsys.readouterr().err == _full_disk_warning(demo)
    assert _left_behind(demo) == []
    assert lines(engine(demo).run([demo])) == lines(engine(demo, cache=False).run([demo]))
    model = demo / "tensorrt_llm" / "_torch" / "models" / "modeling_qwen3vl.py"
    edit(model, '"VANILLA"', '"vanilla"')
    settle(demo)
    edited = lines(engine(demo).run([demo]))
    assert edited == lines(engine(demo, cache=False).run([demo]))
    assert any('"vanilla"' in line for line in edited)


def test_temporary_files_of_killed_writes_are_removed_by_a_full_write(demo: Path) -> None:
    """A write killed before its rename (SIGKILL, the OOM killer) leaves its temporary file; the
    next full write removes those over an hour old, never one another run may be writing now."""
    cold = lines(engine(demo).run([demo]))
    stored = demo / ".declint_cache" / f"v{FORMAT}"
    an_hour_ago = time.time() - 3700
    stale = [stored / f".tmp-0123456789abcdef{suffix}" for suffix in (".pickle", ".snapshot", ".walk")]
    for path in stale:
        path.write_bytes(b"half a write")
        os.utime(path, (an_hour_ago, an_hour_ago))
    fresh = stored / ".tmp-fedcba9876543210.pickle"
    fresh.write_bytes(b"being written")
    for path in stored.iterdir():
        if not path.name.startswith(".tmp-"):
            path.unlink()  # a cold cache: the next run makes a full write
    assert lines(engine(demo).run([demo])) == cold
    assert sorted(path.name for path in stored.glob(".tmp-*")) == [fresh.name]
    assert [path.suffix for path in sorted(stored.iterdir()) if not path.name.startswith(".tmp-")] == [
        ".held",
        ".listings",
        ".pickle",
        ".snapshot",
        ".walk",
    ]


class _Planted:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch planted-by-cache",))


def test_a_planted_cache_file_cannot_run_code(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cold = lines(engine(demo).run([demo]))
    for path in (demo / ".declint_cache" / f"v{FORMAT}").iterdir():
        path.write_bytes(pickle.dumps(_Planted()))
    monkeypatch.chdir(demo)
    assert lines(engine(demo).run([demo])) == cold
    assert not (demo / "planted-by-cache").exists()


def test_a_cache_file_with_malformed_entries_is_a_cold_cache(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cold = lines(engine(demo).run([demo]))
    (full,) = _stored(demo, ".pickle")
    _stored(demo, ".snapshot")[0].unlink()  # the run must load the full cache file
    bad = {"tensorrt_llm/__init__.py": ((1, 2, 3, 4), True)}  # two fields of the five of an entry
    with monkeypatch.context() as patched:  # a CacheData whose packed entries have the wrong shape
        patched.setattr(CacheData, "__getstate__", lambda self: (self.key, bad, "token"))
        full.write_bytes(pickle.dumps(CacheData(full.stem), pickle.HIGHEST_PROTOCOL))
    again = engine(demo)
    assert lines(again.run([demo])) == cold
    assert again.stats.files_read == 37


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: (*entry[:2], entry[2][:-1], *entry[3:]),  # a scan record a field short
        lambda entry: (*entry[:4], "not pickled bytes"),  # a check that is not a pickle's bytes
        lambda entry: entry[:4],  # no check field
    ],
    ids=["short-scan", "check-not-bytes", "four-fields"],
)
def test_a_cache_entry_of_the_wrong_shape_is_found_at_load(
    demo: Path, monkeypatch: pytest.MonkeyPatch, damage: Any
) -> None:
    """Entries are built when first read; their shape is checked when the file loads, so a
    damaged entry gives a cold cache, not an error in mid-run."""
    cold = lines(engine(demo).run([demo]))
    (full,) = _stored(demo, ".pickle")
    _stored(demo, ".snapshot")[0].unlink()
    key, packed, token, demanded, closure = _loaded(demo, full).__getstate__()
    packed[f"{MODELS}modeling_radio.py"] = damage(packed[f"{MODELS}modeling_radio.py"])
    _write_state(full, (key, packed, token, demanded, closure), monkeypatch)
    assert _loaded(demo, full).files == {}
    again = engine(demo)
    assert lines(again.run([demo])) == cold
    assert again.stats.files_read == 37


def test_a_damaged_check_in_the_cache_costs_that_files_check_alone(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file's check is kept pickled in the cache file until a run reads it: bytes that do not
    load as a check are a cache miss for that file, found when read; every other entry holds."""
    cold = lines(engine(demo).run([demo]))
    (full,) = _stored(demo, ".pickle")
    key, packed, token, demanded, closure = _loaded(demo, full).__getstate__()
    checked = sorted(rel for rel, entry in packed.items() if entry[4] is not None)
    damaged = f"{MODELS}modeling_radio.py"
    assert damaged in checked
    packed[damaged] = (*packed[damaged][:4], packed[damaged][4][:-7])  # cut short
    _write_state(full, (key, packed, token, demanded, closure), monkeypatch)
    _stored(demo, ".snapshot")[0].unlink()  # the run must load the full cache file
    again = engine(demo)
    assert lines(again.run([demo])) == cold
    assert (again.stats.files_checked_fresh, again.stats.check_cache_hits) == (1, len(checked) - 1)
    # The next run's cache holds the file's check again, from that run.
    assert _loaded(demo, _stored(demo, ".pickle")[0]).files[damaged].check is not None


def test_a_check_whose_bytes_do_not_load_is_a_miss_and_not_written_back(demo: Path) -> None:
    engine(demo).run([demo])
    (full,) = _stored(demo, ".pickle")
    loaded = _loaded(demo, full)
    rel = f"{MODELS}modeling_radio.py"
    stat, settled, scan, facts, check = loaded.__getstate__()[1][rel]
    read = loaded.files[rel].check
    assert check is not None and read is not None and pickle.loads(check).findings == read.findings
    entry = FileEntry(stat, settled, ScanRecord._make(scan), facts, None, check[:-7])
    assert entry.check is None
    assert entry.packed() == (stat, settled, scan, facts, None)


def test_entries_a_run_does_not_change_are_written_back_as_loaded(demo: Path) -> None:
    """A full write gives back the tuples of the entries never read and, for those read and not
    replaced, the same fields and the check's bytes as loaded."""
    engine(demo).run([demo])
    (full,) = _stored(demo, ".pickle")
    store = Cache.for_config(engine(demo).config)
    assert store is not None
    loaded = store.load(full.stem)
    before = loaded.__getstate__()[1]
    checked = sorted(rel for rel, entry in before.items() if entry[4] is not None)
    assert len(checked) > 2
    assert loaded.files[checked[0]].check is not None  # read
    loaded.files[checked[1]].check = None  # replaced
    store.save(loaded)  # (no list of the entries changed: a full write)
    after = store.load(full.stem).__getstate__()[1]
    assert list(after) == list(before)
    assert after[checked[1]] == (*before[checked[1]][:4], None)
    assert {rel: entry for rel, entry in after.items() if rel != checked[1]} == {
        rel: entry for rel, entry in before.items() if rel != checked[1]
    }


def _loaded(root: Path, full: Path) -> CacheData:
    store = Cache.for_config(engine(root).config)
    assert store is not None
    return store.load(full.stem)


def _write_state(full: Path, state: tuple[Any, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patched:  # a CacheData pickled with this state
        patched.setattr(CacheData, "__getstate__", lambda self: state)
        full.write_bytes(pickle.dumps(CacheData(full.stem), pickle.HIGHEST_PROTOCOL))


def test_a_symlinked_cache_directory_is_not_used(demo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (demo / ".declint_cache").symlink_to(elsewhere, target_is_directory=True)
    engine(demo).run([demo])
    assert list(elsewhere.iterdir()) == []


def test_nothing_changed_is_answered_without_walking(demo: Path) -> None:
    cold = engine(demo).run([demo])
    again = engine(demo)
    assert again.run([demo]) == cold
    assert "snapshot" in again.stats.seconds and "discover" not in again.stats.seconds
    staged = [demo / MODELS / "modeling_radio.py", demo / MODELS / "modeling_step3vl.py"]
    precommit = engine(demo)
    result = precommit.run(staged)
    assert "discover" not in precommit.stats.seconds
    assert result == engine(demo, cache=False).run(staged)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("new-module", "tensorrt_llm/_torch/models/sub/modeling_new.py:2:34: DL103"),
        ("new-schema", "schemas/extra/trtllm-serve-config.schema.json:4:0: DL108"),
        ("deleted", None),
        ("gitignore", None),
        ("nested-gitignore", None),
    ],
)
def test_a_new_deleted_or_ignored_file_is_seen_without_a_full_cache_miss(
    demo: Path, change: str, expected: str | None
) -> None:
    engine(demo).run([demo])
    if change == "new-module":
        (demo / MODELS / "sub").mkdir()
        (demo / MODELS / "sub" / "modeling_new.py").write_text(
            'def route(config):\n    return config.attn_backend == "TRTLLM"\n', encoding="utf-8"
        )
    elif change == "new-schema":
        (demo / "schemas" / "extra").mkdir()
        (demo / "schemas" / "extra" / "trtllm-serve-config.schema.json").write_text(
            '{\n  "properties": {\n    "attn_backend": {\n      "enum": ["VANILLA", "TRTLLM"]\n    }\n  }\n}\n',
            encoding="utf-8",
        )
    elif change == "deleted":
        (demo / MODELS / "modeling_radio.py").unlink()
    elif change == "nested-gitignore":  # a .gitignore the snapshot holds no stat of: its directory's moves
        (demo / MODELS / ".gitignore").write_text("modeling_radio.py\n", encoding="utf-8")
    else:
        (demo / ".gitignore").write_text("tensorrt_llm/_torch/models/modeling_radio.py\n", encoding="utf-8")
    settle(demo)
    warm = lines(engine(demo).run([demo]))
    assert warm == lines(engine(demo, cache=False).run([demo]))
    if expected is not None:
        assert any(line.startswith(expected) for line in warm), warm
    else:
        assert not any("modeling_radio.py" in line for line in warm)


def test_the_snapshot_stats_each_path_once_and_no_absent_file_of_a_listed_directory(demo: Path) -> None:
    from declint.cache import Snapshot, _unpickle

    engine(demo).run([demo])
    [stored] = _stored(demo, ".snapshot")
    with open(stored, "rb") as handle:
        snapshot = _unpickle(handle)
    assert isinstance(snapshot, Snapshot)
    walk, inputs = dict(snapshot.walk), dict(snapshot.inputs)
    directories = {path for path in walk if os.path.isdir(path)}
    assert os.path.abspath(demo / MODELS.rstrip("/")) in directories
    assert walk.keys().isdisjoint(inputs)
    absent = [path for path, key in (*snapshot.walk, *snapshot.inputs) if key is None]
    assert [path for path in absent if os.path.dirname(path) in directories] == []
    assert not os.path.exists(demo / MODELS / ".gitignore")  # probed by the walk, held by its directory


def _json_report(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    from click.testing import CliRunner

    from declint.cli import cli

    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["check", "--format", "json", "."])
    assert result.exit_code == 1, result.output
    return result.output


def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the main process parses with libcst for fix previews from now on."""
    from declint import fix_transforms

    parsed: list[str] = []
    original = fix_transforms.parse

    def counting(source: Any) -> Any:
        parsed.append(source.rel)
        return original(source)

    monkeypatch.setattr(fix_transforms, "parse", counting)
    return parsed


def test_fix_previews_are_reused_until_the_file_changes(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cold = _json_report(demo, monkeypatch)
    assert '"fix": {' in cold  # the demo has fixable findings, so previews were computed
    directory = demo / ".declint_cache" / f"v{FORMAT}"
    assert sorted(p.suffix for p in directory.iterdir()) == [
        ".held",
        ".listings",
        ".pickle",
        ".previews",
        ".snapshot",
        ".walk",
    ]

    parsed = _counting_parses(monkeypatch)
    assert _json_report(demo, monkeypatch) == cold
    assert parsed == []  # every preview from the memo, no libcst parse

    target = demo / MODELS / "modeling_llava_next.py"
    target.write_text(target.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert _json_report(demo, monkeypatch) == cold  # same previews, recomputed
    # ... by the check worker, from the tree its rules parsed: the main process parses nothing
    assert parsed == []
    stored = Cache.open(demo, ".declint_cache")
    assert stored is not None
    digest = content_digest(target.read_bytes())
    fresh = {key.split("\0")[1] for key in stored.load_previews() if key.startswith(digest)}
    assert fresh == {"unrewritable", "tensorrt_llm/_torch/models/modeling_llava_next.py"}  # previews by path


def test_a_warm_run_never_imports_libcst(demo: Path) -> None:
    """libcst's import is most of a warm run's time: it loads only when a file is parsed or a fix previewed."""
    import subprocess
    import sys

    # `libcst` itself is in sys.modules from the start (a lazy module); its submodules load with it.
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('libcst imported:', 'libcst._nodes.module' in sys.modules, file=sys.stderr))\n"
        "from declint.cli import cli\n"
        "cli(['check', '.'])\n"
    )

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", code], cwd=demo, capture_output=True, text=True, check=False)
        assert done.returncode == 1, done.stderr
        return done.stderr.strip().splitlines()[-1]

    # cold: DL102/DL104/DL106 parse with libcst, in the check workers, which also compute
    # the fix previews from those trees; the main process imports libcst for neither
    assert run() == "libcst imported: False"
    assert run() == "libcst imported: False"  # warm: findings from the cache, previews from the memo


def test_a_preview_that_raises_in_a_worker_costs_the_preview_not_the_findings(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from declint import fix_transforms, previews

    monkeypatch.setenv(NO_CACHE_ENV, "1")
    clean = json.loads(_json_report(demo, monkeypatch))["findings"]
    assert sum(bool(f["fix"]) for f in clean) == 3  # the demo's fixable findings, with previews

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("transform bug")

    monkeypatch.setattr(fix_transforms, "apply_fixes", broken)  # forked workers inherit it
    for kind in previews._SPLICES:  # DL104's and DL902's previews, spliced as text
        monkeypatch.setitem(previews._SPLICES, kind, broken)
    failing = json.loads(_json_report(demo, monkeypatch))["findings"]
    assert [{k: v for k, v in f.items() if k != "fix"} for f in failing] == [
        {k: v for k, v in f.items() if k != "fix"} for f in clean
    ]
    assert not any(f["fix"] for f in failing)


# ---- changes made while a run reads the tree ----------------------------------------------------
CREATED_MEANWHILE = MODELS + "modeling_created_meanwhile.py"
DIRECT_SDPA = (
    "import torch\n\n\n"
    "def attend(config, q, k, v):\n"
    '    if config.attn_backend == "TRTLLM":\n'
    "        return torch.nn.functional.scaled_dot_product_attention(q, k, v)\n"
    "    return q\n"
)
DISAGG_SCHEMA = "schemas/trtllm-serve-disagg-config.schema.json"
_PROJECT_FINDINGS = _Run._project_findings


def _after_project_rules(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    """Make `change` right after this run's project rules ran: the walk has listed every
    directory and the rules have read their inputs, the snapshot is not written yet."""
    original = _Run._project_findings

    def project_findings(self: _Run, index: Any) -> Any:
        found = original(self, index)
        change()
        return found

    monkeypatch.setattr(_Run, "_project_findings", project_findings)


def test_a_file_created_while_the_run_reads_the_tree_is_checked_next_time(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = demo / CREATED_MEANWHILE
    _after_project_rules(monkeypatch, lambda: created.write_text(DIRECT_SDPA, encoding="utf-8"))
    during = engine(demo).run([demo])
    assert not any(f.path == CREATED_MEANWHILE for f in during.findings)  # listed before it existed
    monkeypatch.setattr(_Run, "_project_findings", _PROJECT_FINDINGS)
    after = engine(demo).run([demo])
    assert [f"{f.path}:{f.line}:{f.column}: {f.code}" for f in after.findings if f.path == CREATED_MEANWHILE] == [
        f"{CREATED_MEANWHILE}:5:30: DL103",
        f"{CREATED_MEANWHILE}:6:15: DL101",
    ]
    assert lines(after) == lines(engine(demo, cache=False).run([demo]))


def test_an_input_edited_after_the_project_rules_read_it_is_read_again_next_time(
    demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = demo / DISAGG_SCHEMA
    fixed = '"enum": ["VANILLA", "vanilla", "TRTLLM", "trtllm", "FLASHINFER", "flashinfer"]'
    _after_project_rules(monkeypatch, lambda: edit(schema, schema.read_text().split("\n")[15].strip(), fixed))
    during = engine(demo).run([demo])
    assert sum(f.path == DISAGG_SCHEMA for f in during.findings) == 2  # as read before the edit
    monkeypatch.setattr(_Run, "_project_findings", _PROJECT_FINDINGS)
    after = engine(demo).run([demo])
    assert not any(f.path == DISAGG_SCHEMA for f in after.findings)
    assert lines(after) == lines(engine(demo, cache=False).run([demo]))


def test_cache_files_of_another_format_are_removed_by_a_full_write(demo: Path) -> None:
    directory = demo / ".declint_cache"
    old, kept = directory / "v0", directory / "v1"
    for folder in (old, kept):
        folder.mkdir(parents=True)
        for name in ("k.pickle", "k.snapshot", "k.journal", "fix-previews.previews", ".tmp-0a1b.pickle"):
            (folder / name).write_bytes(b"old format")
    (kept / "notes.txt").write_text("not declint's\n", encoding="utf-8")
    engine(demo).run([demo])
    assert not old.exists()
    assert sorted(p.name for p in kept.iterdir()) == ["notes.txt"]
    suffixes = sorted(p.suffix for p in (directory / f"v{FORMAT}").iterdir())
    assert suffixes == [".held", ".listings", ".pickle", ".snapshot", ".walk"]


# ---- cache-dir: declint's marks never land in a directory of sources ------------------------------


def _check_cli(root: Path, *extra: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    from declint.cli import cli

    result = CliRunner().invoke(cli, ["check", *extra, str(root)])
    return result.exit_code, result.stdout, result.stderr


def _with_cache_dir(root: Path, value: str) -> Path:
    pyproject = root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + f'cache-dir = "{value}"\n', encoding="utf-8")
    return pyproject


_NEEDS = (
    "it must name a directory of declint's own (default: .declint_cache), because declint marks its cache "
    'directory with a .gitignore of "*" and a CACHEDIR.TAG, which would hide every file below it'
)


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (".", 'names the project root (".")'),
        ("", 'names the project root ("")'),
        ("tensorrt_llm/..", 'names the project root ("tensorrt_llm/..")'),
        ("..", 'names a directory above the project root ("..")'),
        ("tensorrt_llm", 'names the indexed root "tensorrt_llm" or a directory above it'),
    ],
)
def test_a_cache_dir_that_would_hide_the_project_is_a_configuration_error(demo: Path, value: str, what: str) -> None:
    pyproject = _with_cache_dir(demo, value)
    before = sorted(p.name for p in demo.iterdir())
    code, out, err = _check_cli(demo, "--select", "DL101")
    assert (code, out) == (2, "")
    assert err == f'declint: error: {pyproject}:4: "cache-dir" {what}; {_NEEDS}\n'
    assert sorted(p.name for p in demo.iterdir()) == before  # no .gitignore, CACHEDIR.TAG or v2/ written
    assert not (demo / "tensorrt_llm" / ".gitignore").exists()
    assert not (demo.parent / "CACHEDIR.TAG").exists()


def test_a_cache_dir_holding_other_files_is_a_configuration_error(demo: Path) -> None:
    pyproject = _with_cache_dir(demo, "docs")
    code, out, err = _check_cli(demo)
    assert (code, out) == (2, "")
    assert err == (
        f'declint: error: {pyproject}:4: "cache-dir" names "docs", which holds files that are not declint\'s '
        '("encoder_attention_backends.md"); declint marks its cache directory with a .gitignore of "*" and a '
        "CACHEDIR.TAG, which would hide them: name a new directory\n"
    )
    assert sorted(p.name for p in (demo / "docs").iterdir()) == ["encoder_attention_backends.md"]
    (demo / "pyproject.toml").write_text(pyproject.read_text(encoding="utf-8").replace('"docs"', '"README.md"'))
    assert _check_cli(demo)[::2] == (
        2,
        f'declint: error: {pyproject}:4: "cache-dir" names "README.md", which exists and is not a directory\n',
    )


def test_a_new_or_empty_cache_dir_below_the_root_is_used(demo: Path) -> None:
    expected = _check_cli(demo, "--no-cache")
    assert expected[0] == 1 and expected[1].endswith("Found 24 findings in 37 files.\n")
    (demo / "build" / "empty").mkdir(parents=True)
    for value in ("build/declint", "build/empty", ".cache/declint"):
        pyproject = _with_cache_dir(demo, value)
        assert _check_cli(demo) == expected  # cold, then warm from the same directory
        assert _check_cli(demo) == expected
        directory = demo / value
        assert (directory / ".gitignore").read_text(encoding="utf-8") == "# created by declint\n*\n"
        assert sorted(p.name for p in directory.iterdir()) == [".gitignore", "CACHEDIR.TAG", f"v{FORMAT}"]
        pyproject.write_text(pyproject.read_text(encoding="utf-8").replace(f'cache-dir = "{value}"\n', ""))
    assert not (demo / "build" / ".gitignore").exists()  # marks only in the cache directory itself


def test_a_cache_dir_outside_the_root_says_the_cache_is_off(demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere-cache"
    _with_cache_dir(demo, str(outside))
    code, out, err = _check_cli(demo)
    assert (code, out.splitlines()[-1]) == (1, "Found 24 findings in 37 files.")
    assert err == (
        f'declint: warning: cache-dir "{outside}" is outside the project root {demo} or goes through a symlink; '
        "declint writes its cache only into a directory below the root: the cache is off\n"
    )
    assert not outside.exists()


def test_a_stray_gitignore_declint_wrote_into_the_root_does_not_hide_the_project(demo: Path) -> None:
    """An earlier version wrote its marks wherever cache-dir said, the root included."""
    expected = _check_cli(demo, "--no-cache")
    (demo / ".gitignore").write_text("# created by declint\n*\n", encoding="utf-8")
    (demo / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")
    code, out, err = _check_cli(demo, "--no-cache")
    assert (code, out) == expected[:2]
    assert err == (
        f"declint: warning: {demo / '.gitignore'} was written by declint to mark a cache directory, but {demo} "
        'holds other files; declint does not honour its "*" (git still does): delete it, and the CACHEDIR.TAG '
        "next to it\n"
    )
    # The same "*" written by the user is the user's: it is honoured (nothing left to check, as it warns).
    (demo / ".gitignore").write_text("*\n", encoding="utf-8")
    nothing = "declint: warning: no Python files found under the given paths; nothing was checked\n"
    assert _check_cli(demo, "--no-cache", "--select", "DL101") == (0, "All clear: 0 files checked.\n", nothing)


def _age(path: Path) -> None:
    """`settle` for a file outside the demo (its fresh mtime would cost the run its snapshot)."""
    then = time.time() - 60
    os.utime(path, (then, then))


@pytest.mark.parametrize("change", ["created", "edited", "deleted", "git-init"])
def test_a_gitignore_above_the_root_is_an_input_of_the_walk(demo: Path, change: str) -> None:
    """The demo as a subdirectory of a git work tree (a monorepo): the .gitignore files between
    the git top level and the root are read by the walk, and a warm run walks again when one is
    created, edited or deleted, or when the directory above becomes a git work tree."""
    top = demo.parent
    ignore = top / ".gitignore"
    if change != "git-init":
        (top / ".git").mkdir()
    if change in ("edited", "deleted", "git-init"):
        ignore.write_text("nothing_here/\n" if change == "edited" else "modeling_radio.py\n", encoding="utf-8")
        _age(ignore)
    cold = lines(engine(demo).run([demo]))
    assert any("modeling_radio.py" in line for line in cold) == (change in ("created", "edited", "git-init"))
    warm = engine(demo)
    assert lines(warm.run([demo])) == cold and "discover" not in warm.stats.seconds  # the snapshot holds
    if change == "created" or change == "edited":
        ignore.write_text("# generated\nmodeling_radio.py\n", encoding="utf-8")
        _age(ignore)
    elif change == "deleted":
        ignore.unlink()
    else:
        (top / ".git").mkdir()
    again = engine(demo)
    after = lines(again.run([demo]))
    assert "discover" in again.stats.seconds
    assert after == lines(engine(demo, cache=False).run([demo]))
    assert any("modeling_radio.py" in line for line in after) == (change == "deleted")


@pytest.mark.parametrize("change", ["created", "edited", "deleted"])
@pytest.mark.parametrize("top", ["root", "above"])
def test_info_exclude_is_an_input_of_the_walk(demo: Path, change: str, top: str) -> None:
    """The repository's `.git/info/exclude` (the root's own, or the work tree's above it) is read
    by the walk, and a warm run walks again when it is created, edited or deleted."""
    level = demo if top == "root" else demo.parent
    prefix = "" if top == "root" else f"{demo.name}/"
    exclude = level / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True)
    if change != "created":
        exclude.write_text("nothing_here/\n" if change == "edited" else f"{prefix}**/modeling_radio.py\n", "utf-8")
        _age(exclude)
    cold = lines(engine(demo).run([demo]))
    assert any("modeling_radio.py" in line for line in cold) == (change != "deleted")
    warm = engine(demo)
    assert lines(warm.run([demo])) == cold and "discover" not in warm.stats.seconds  # the snapshot holds
    if change == "deleted":
        exclude.unlink()
    else:
        exclude.write_text(f"# local\n{prefix}**/modeling_radio.py\n", encoding="utf-8")
        _age(exclude)
    again = engine(demo)
    after = lines(again.run([demo]))
    assert "discover" in again.stats.seconds
    assert after == lines(engine(demo, cache=False).run([demo]))
    assert any("modeling_radio.py" in line for line in after) == (change == "deleted")


def test_git_writing_its_own_directory_keeps_the_snapshot(demo: Path) -> None:
    """The `.git` that makes the directory above a work tree is not an input: every git command
    that writes the index moves its mtime. The top level's directory is (its `.git` removed, the
    walk changes), and the `.git` entries looked for and not found."""
    from declint.cache import Snapshot, _unpickle

    top = demo.parent
    (top / ".git").mkdir()
    (top / ".gitignore").write_text("build/\n", encoding="utf-8")
    _age(top / ".gitignore")
    cold = engine(demo).run([demo])
    [stored] = _stored(demo, ".snapshot")
    with open(stored, "rb") as handle:
        snapshot = _unpickle(handle)
    assert isinstance(snapshot, Snapshot)
    walk = dict(snapshot.walk)
    assert str(top) in walk and str(top / ".gitignore") in walk and str(top / ".git") not in walk
    assert str(demo / ".git") not in walk  # looked for, absent: the root's listing holds that
    assert str(top.parent / ".git") not in walk and str(top.parent / ".gitignore") not in walk  # never above the top
    (top / ".git" / "index").write_bytes(b"DIRC")
    warm = engine(demo)
    assert warm.run([demo]) == cold and "discover" not in warm.stats.seconds


RACE_MODEL = """\
from tensorrt_llm._torch.models.base2 import Base2
from tensorrt_llm._torch.models.modeling_utils import register_input_processor


@register_input_processor(object, model_type="m", placeholder_metadata=dict(placeholder_map={"image": "<i>"}))
class RaceVL(Base2):
    pass
"""
RACE_BASE3 = """\
from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin


class Base3(MultimodalModelMixin):
    encoder_attention_backends = {"vision": ("VANILLA",)}
"""
RACE_A = "from tensorrt_llm._torch.models.base3 import Base3\n\n\nclass Base2(Base3):\n    pass\n"
RACE_B = "from tensorrt_llm._torch.models.base3 import Base3\n\n\nclass Base2:\n    pass\n"


def test_facts_of_a_file_saved_during_the_run_are_not_cached_under_its_earlier_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Red-team 46: a file the scan hashed (just edited) and saved again before the facts phase
    read it had the new bytes' facts cached under the old bytes' digest; back to those bytes (an
    undo), every warm run used the wrong facts (a DL102 that --no-cache did not give)."""
    base2 = tmp_path / MODELS / "base2.py"
    write_tree(tmp_path, {**PRELUDE, MODELS + "modeling_m.py": RACE_MODEL, MODELS + "base3.py": RACE_BASE3})
    base2.write_text(RACE_A)
    settle(tmp_path)
    assert lines(engine(tmp_path).run([tmp_path])) == []
    edited = RACE_A + "# edited\n"
    base2.write_text(edited)  # fresh: the scan hashes it
    extract = _Run._extract

    def saved_meanwhile(self: _Run, files: Any, wanted: set[str]) -> None:
        if base2.read_text() == edited:
            base2.write_text(RACE_B)
        extract(self, files, wanted)

    monkeypatch.setattr(_Run, "_extract", saved_meanwhile)
    engine(tmp_path).run([tmp_path])
    monkeypatch.setattr(_Run, "_extract", extract)
    base2.write_text(edited)  # undone
    settle(tmp_path)
    cold = lines(engine(tmp_path, cache=False).run([tmp_path]))
    assert cold == [] and lines(engine(tmp_path).run([tmp_path])) == cold


def test_a_symlinked_path_given_and_re_pointed_is_walked_again(tmp_path: Path) -> None:
    """Red-team 46: `check src` with `src -> v1`, then `ln -sfn v2 src`: every warm run answered
    from the snapshot of v1 (its paths, its findings), whose files had not changed."""
    write_tree(tmp_path, {**PRELUDE, "v1/mod.py": 'def f(attn_backend="TRTLLM"):\n    return attn_backend\n'})
    write_tree(tmp_path, {"v2/mod.py": "def f(attn_backend=None):\n    return attn_backend\n"})
    (tmp_path / "src").symlink_to("v1")
    settle(tmp_path)
    first = lines(engine(tmp_path).run([tmp_path / "src"]))
    assert [line.split(": ")[0] for line in first] == ["v1/mod.py:1:19"]
    assert lines(engine(tmp_path).run([tmp_path / "src"])) == first  # answered from the snapshot
    (tmp_path / "src").unlink()
    (tmp_path / "src").symlink_to("v2")
    assert (
        lines(engine(tmp_path).run([tmp_path / "src"]))
        == lines(engine(tmp_path, cache=False).run([tmp_path / "src"]))
        == []
    )


class _CountingIndex:
    """An index stand-in that counts how often each question is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    @property
    def literal_members(self) -> tuple[str, ...]:
        self.asked.append("literal_members")
        return ("VANILLA", "TRTLLM")

    def providers(self, attribute: list[str]) -> list[str]:  # a list argument: cannot be hashed
        self.asked.append("providers")
        return ["M"]


def test_still_valid_shares_answers_between_files_and_still_compares_each() -> None:
    from declint.cache import Dep, digest_of, still_valid

    index: Any = _CountingIndex()
    members = Dep("attr", "literal_members", answer=digest_of(("VANILLA", "TRTLLM")))
    stale = Dep("attr", "literal_members", answer=digest_of(("VANILLA",)))
    unhashable = Dep("call", "providers", args=(["x"],), answer=digest_of(["M"]))
    answers: dict[Any, Any] = {}
    assert still_valid([members], index, answers) is True
    assert still_valid([members, unhashable], index, answers) is True
    assert still_valid([stale], index, answers) is False  # the shared answer, compared with this file's
    assert still_valid([unhashable], index, answers) is True
    assert index.asked == ["literal_members", "providers", "providers"]
    assert still_valid([stale], index) is False  # without shared answers: asked again
    assert index.asked[-1] == "literal_members"


class _Kind(enum.Enum):
    VISION = "vision"


class _Record(NamedTuple):
    name: str
    bases: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class _Plain:
    members: frozenset[str]
    extra: dict[str, int]


def test_the_canonical_form_of_each_kind_of_answer() -> None:
    """An answer's digest is the hash of its canonical form's repr: each kind of value has its own
    tag (a NamedTuple, a dataclass and an enum their class too), sets and dicts are sorted, and a
    value that is not plain data has none."""
    from declint.cache import Uncacheable, _canonical

    value = [None, True, 3, 2.5, "s", b"b", _Record("M", ("A", "B")), (1,), {"b", "a"}, _Kind.VISION]
    value += [_Plain(frozenset({"y", "x"}), {"k": 2, "j": 1})]
    assert _canonical(value) == (
        "T",
        (
            None, True, 3, 2.5, "s", b"b",
            ("N", "_Record", ("M", ("T", ("A", "B")))),
            ("T", (1,)),
            ("S", ("a", "b")),
            ("E", "_Kind", "vision"),
            ("D", "_Plain", (("S", ("x", "y")), ("M", (("j", 1), ("k", 2))))),
        ),
    )  # fmt: skip
    for unfit in (object(), _Plain, {"x": object()}):
        with pytest.raises(Uncacheable):
            _canonical(unfit)


# ---- the walk's listings, kept for the runs that take the walk from the snapshot ---------------


def _saved(demo: Path) -> tuple[str, dict[str, Any], Any]:
    """(token, listings) of the listings file, and the snapshot."""
    import marshal

    directory = demo / ".declint_cache" / f"v{FORMAT}"
    (listings_file,) = directory.glob("*.listings")
    token, listings = marshal.loads(listings_file.read_bytes())
    (snapshot_file,) = directory.glob("*.snapshot")
    return token, listings, pickle.loads(snapshot_file.read_bytes())


def _run_listing(root: Path) -> tuple[Engine, RunResult, list[str]]:
    """A run of `engine(root)`, and every directory it listed with os.scandir."""
    listed: list[str] = []
    real = os.scandir

    def scandir(path: Any = ".") -> Any:
        listed.append(os.fspath(path))
        return real(path)

    warm = engine(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "scandir", scandir)
        result = warm.run([root])
    return warm, result, listed


def test_a_run_taking_the_walk_from_the_snapshot_lends_dl108_the_walks_listings(demo: Path) -> None:
    """After an edit that changes the index (not a directory), the project rules run again
    without a walk: DL108's search for serving schemas reads the last walk's listings instead of
    listing those directories again, and finds what a cold run finds. The next snapshot names the
    same listings, so the run after it does too."""
    engine(demo).run([demo])
    token, listings, snapshot = _saved(demo)
    assert snapshot.listings == token and len(token) == 16
    assert os.path.join(demo, "tensorrt_llm") in listings
    model = demo / MODELS / "modeling_radio.py"
    for round_ in (1, 2):
        # Rewritten in place (no directory changes), and the index with it (its digest).
        model.write_text(model.read_text(encoding="utf-8") + f"\n# edited {round_}\n", encoding="utf-8")
        settle(demo)
        warm, result, listed = _run_listing(demo)
        assert warm.stats.files_read == 1
        assert lines(result) == lines(engine(demo, cache=False).run([demo]))
        assert [line for line in lines(result) if " DL108 " in line]
        assert not set(listed) & set(listings), sorted(set(listed) & set(listings))
        assert _saved(demo)[2].listings == token  # carried over: the walk is still the first run's


def test_listings_of_another_walk_are_not_lent(demo: Path) -> None:
    """A listings file whose token is not the one the snapshot names (written by another run, or
    damaged) is not used: DL108 lists the directories itself, with the same findings."""
    import marshal

    engine(demo).run([demo])
    (listings_file,) = (demo / ".declint_cache" / f"v{FORMAT}").glob("*.listings")
    listings_file.write_bytes(marshal.dumps(("0" * 16, {})))
    model = demo / MODELS / "modeling_radio.py"
    move_facts(model)
    settle(demo)
    _, result, listed = _run_listing(demo)
    assert lines(result) == lines(engine(demo, cache=False).run([demo]))
    assert os.path.join(demo, "tensorrt_llm") in listed


def test_the_index_closure_starts_from_the_last_runs_demanded_files(demo: Path) -> None:
    """The cache keeps the files the index held in full; after an edit, the next run starts its
    closure there and ends in one round (a cold run needs more), with a cold run's findings."""
    rounds: list[int] = []
    real_build = _Run._build

    def counting(self: _Run, files: Any) -> Any:
        rounds[-1] += 1
        return real_build(self, files)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_Run, "_build", counting)
        rounds.append(0)
        cold = engine(demo)
        cold.run([demo])
        (stored,) = (demo / ".declint_cache" / f"v{FORMAT}").glob("*.pickle")
        demanded = pickle.loads(stored.read_bytes()).demanded
        assert len(demanded) == cold.stats.files_indexed == 32 and demanded == tuple(sorted(demanded))
        model = demo / MODELS / "modeling_radio.py"
        move_facts(model)
        settle(demo)
        rounds.append(0)
        warm = engine(demo)
        result = warm.run([demo])
    assert rounds[0] >= 2 and rounds[1] == 1, rounds
    assert warm.stats.files_indexed == 32
    assert lines(result) == lines(engine(demo, cache=False).run([demo]))


def test_an_edit_the_closure_does_not_read_skips_its_search(demo: Path) -> None:
    """After an edit that changes nothing the index closure reads (a comment above the classes,
    in a model file and then in the Literal's module, the second run's cache a journal: the
    facts move, and the facts saved with the snapshot are removed before each run, so that the
    patch cannot take it), a run ends the closure where the last one did
    without asking the index again, also when another file is passed (as pre-commit does after
    an edit the commit leaves out). An edit that adds a class, and a new file, make it search
    again. Every run has a cold run's findings."""
    from declint import prefilter

    searches: list[int] = []
    real_more = prefilter.Demand.more

    def counting(self: prefilter.Demand, index: Any, indexed: set[str]) -> set[str]:
        searches.append(1)
        return real_more(self, index, indexed)

    def searched_after(path: Path, appended: str, passed: Path = demo, *, above: str = "") -> tuple[int, int]:
        """(searches, files read) of a run on `passed` after `above` and `appended` are added
        to `path`, at its top and at its end."""
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        path.write_text(above + text + appended, encoding="utf-8")
        settle(demo)
        for held in _stored(demo, ".held"):
            held.unlink()
        before = len(searches)
        warm = engine(demo)
        result = warm.run([passed])
        done = len(searches) - before
        assert lines(result) == lines(engine(demo, cache=False).run([passed]))
        return done, warm.stats.files_read

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prefilter.Demand, "more", counting)
        engine(demo).run([demo])
        assert len(searches) >= 1
        model = demo / MODELS / "modeling_radio.py"
        assert searched_after(model, "", above="# edited\n") == (0, 1)
        assert _stored(demo, ".journal")
        assert searched_after(demo / LITERAL, "", above="# edited\n") == (0, 1)
        # Pre-commit with another file passed: the edited one, syntax-checked by the last run,
        # is only indexed by this one (its scan record says its syntax was not checked).
        other = demo / MODELS / "modeling_qwen3vl.py"  # a model: facts read by the scan, syntax too when checked
        assert searched_after(other, "", model, above="# edited\n") == (0, 1)
        assert searched_after(other, "", model, above="# one\n# two\n") == (0, 1)
        assert searched_after(model, "\n\nclass Added(RadioVisionModel):\n    pass\n")[0] >= 1
        assert searched_after(model, "", above="# edited again\n") == (0, 1)  # the closure of the last run
        assert searched_after(demo / "tensorrt_llm" / "added.py", "X = 1\n")[0] >= 1


def test_a_cache_written_before_closures_were_kept_has_none() -> None:
    """Pickled states of the earlier layouts load with an unknown closure (the search runs)."""
    from declint.cache import Journal

    data = CacheData.__new__(CacheData)
    data.__setstate__(("k", {}, "t", ("a.py",)))
    assert (data.demanded, data.closure) == (("a.py",), "")
    journal = Journal.__new__(Journal)
    journal.__setstate__(("k", "t", {}))
    assert (journal.files, journal.demanded, journal.closure) == ({}, (), "")
    data.__setstate__(("k", {}, "t", ("a.py",), "c" * 32))
    assert (data.demanded, data.closure) == (("a.py",), "c" * 32)


def test_facts_without_positions_differ_only_in_what_a_module_defines() -> None:
    from declint.facts import FactOptions, extract_facts, without_positions

    options = FactOptions("encoder_attention_backends", "FixedEncoderAttention", ())
    source = (
        "from typing import Literal\nfrom x import Base\n"
        "B = Literal['A', 'B']\n"
        "class Model(Base):\n    encoder_attention_backends = {'vision': ['A']}\n"
        "    def forward(self, metadata: M):\n        return metadata.seq_lens\n"
    )

    def facts(text: str) -> Any:
        return extract_facts(text, "pkg.m", "pkg/m.py", options, False)

    moved = facts("# one\n# two\n" + source.replace("):\n    enc", "):\n\n    enc"))
    assert facts(source) != moved  # lines and columns are facts too
    assert without_positions(facts(source)) == without_positions(moved)
    assert without_positions(facts(source)).classes[0].line == 0
    assert without_positions(facts(source)) != without_positions(facts(source.replace("(Base)", "(Other)")))
    assert without_positions(facts(source)) != without_positions(facts(source.replace("'A']}", "'B']}")))


def _snapshot_of(root: Path) -> Any:
    from declint.cache import Snapshot, _unpickle

    [stored] = _stored(root, ".snapshot")
    with open(stored, "rb") as handle:
        snapshot = _unpickle(handle)
    assert isinstance(snapshot, Snapshot)
    return snapshot


def _touch(path: Path, seconds_ago: float) -> None:
    """A new mtime (and change time), the same bytes."""
    moment = time.time() - seconds_ago
    os.utime(path, (moment, moment))


def test_a_touched_file_with_the_same_bytes_keeps_the_snapshot(demo: Path) -> None:
    """`touch`, a file saved again in place unchanged: the stat moved,
    the bytes did not. The file is read and hashed again and the snapshot answers; one file of
    37 is hashed again by the next run rather than the snapshot written anew."""
    model = MODELS + "modeling_radio.py"
    cold = engine(demo).run([demo])
    recorded = _snapshot_of(demo).files[model][1]
    assert model in _snapshot_of(demo).digests
    _touch(demo / model, 120)
    for _ in range(2):
        touched = engine(demo)
        assert touched.run([demo]) == cold
        assert touched.stats.files_read == 1
        assert "scan" not in touched.stats.seconds and "discover" not in touched.stats.seconds
        assert _snapshot_of(demo).files[model][1] == recorded
    staged = [demo / model]  # the pre-commit case: the files passed
    precommit = engine(demo)
    assert precommit.run(staged) == engine(demo, cache=False).run(staged)
    assert precommit.stats.files_read == 1 and "scan" not in precommit.stats.seconds


def _more_than_an_eighth(root: Path) -> list[str]:
    """Hashed files of the snapshot, more than an eighth of its files (`engine._REHASH_SHARE`)."""
    snapshot = _snapshot_of(root)
    count = len(snapshot.files) // 8 + 1
    assert len(snapshot.digests) >= count
    return sorted(snapshot.digests)[:count]


def test_touched_files_past_an_eighth_of_the_snapshot_have_their_stats_written_back(demo: Path) -> None:
    cold = engine(demo).run([demo])
    touched = _more_than_an_eighth(demo)
    for rel in touched:
        _touch(demo / rel, 120)
    run = engine(demo)
    assert run.run([demo]) == cold
    assert run.stats.files_read == len(touched) and "scan" not in run.stats.seconds
    assert [_snapshot_of(demo).files[rel][1][1] for rel in touched] == [
        (demo / rel).stat().st_mtime_ns for rel in touched
    ]
    again = engine(demo)
    assert again.run([demo]) == cold
    assert again.stats.files_read == 0


def test_touched_files_within_the_racy_window_are_hashed_again_until_they_settle(demo: Path) -> None:
    """Bytes hashed within two seconds of their mtime could still change under the same stat: the
    snapshot answers, but keeps the stats it had, and the next run hashes the files again."""
    cold = engine(demo).run([demo])
    touched = _more_than_an_eighth(demo)
    recorded = [_snapshot_of(demo).files[rel][1] for rel in touched]
    for rel in touched:
        _touch(demo / rel, 0)
    for _ in range(2):
        run = engine(demo)
        assert run.run([demo]) == cold
        assert run.stats.files_read == len(touched) and "scan" not in run.stats.seconds
        assert [_snapshot_of(demo).files[rel][1] for rel in touched] == recorded


def test_one_touched_file_beside_one_edited_is_a_full_run(demo: Path) -> None:
    engine(demo).run([demo])
    _touch(demo / MODELS / "modeling_radio.py", 100)
    move_facts(demo / MODELS / "modeling_step3vl.py")
    settle(demo)
    run = engine(demo)
    assert lines(run.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert "scan" in run.stats.seconds


_HELPER = "tensorrt_llm/_torch/pyexecutor/helper.py"  # no needle: a placeholder no rule reads


def _with_a_helper(demo: Path) -> RunResult:
    """The demo with a file no needle matches, whose one class has bases; its cold run."""
    (demo / _HELPER).parent.mkdir(parents=True, exist_ok=True)
    (demo / _HELPER).write_text("class Helper(dict):\n    pass\n", encoding="utf-8")
    settle(demo)
    cold = engine(demo).run([demo])
    snapshot = _snapshot_of(demo)
    assert _HELPER not in snapshot.digests and snapshot.bases[_HELPER] == {"dict"}
    return cold


@pytest.mark.parametrize(
    "text",
    [
        "class Helper(dict):\n    pass\n",  # touched, the same bytes
        "import os\n\n\nclass Helper(dict):\n    size = 2\n",  # edited: no needle, the same bases
    ],
)
def test_a_file_no_rule_reads_edited_without_a_needle_keeps_the_snapshot(demo: Path, text: str) -> None:
    """Edited in place (its directory unchanged) with no needle and the same class bases, it is
    the same placeholder for the index, and no rule reads it: every finding is the same."""
    cold = _with_a_helper(demo)
    with open(demo / _HELPER, "r+", encoding="utf-8") as handle:  # in place: the same inode
        handle.truncate(0)
        handle.write(text)
    _touch(demo / _HELPER, 120)
    run = engine(demo)
    assert run.run([demo]) == cold == engine(demo, cache=False).run([demo])
    assert run.stats.files_read == 1 and "scan" not in run.stats.seconds


@pytest.mark.parametrize(
    ("text", "phases"),
    [
        ("class Helper(dict, Mapping):\n    pass\n", {"patch", "scan"}),  # another base: a full run
        # a needle, the same bases: the same placeholder for the index, read and checked alone
        ("class Helper(dict):\n    attn_backend = 'TRTLLM'\n", {"patch"}),
        ("class Helper(dict):\n    name = '\xe9'\n", set()),  # not ASCII, still UTF-8: a placeholder as before
    ],
)
def test_a_file_no_rule_reads_edited_into_a_needle_or_other_bases_is_read_again(
    demo: Path, text: str, phases: set[str]
) -> None:
    _with_a_helper(demo)
    with open(demo / _HELPER, "r+", encoding="utf-8") as handle:
        handle.truncate(0)
        handle.write(text)
    _touch(demo / _HELPER, 120)
    run = engine(demo)
    assert lines(run.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert run.stats.seconds.keys() & {"patch", "scan"} == phases


def test_a_file_no_rule_reads_edited_into_undecodable_bytes_is_a_full_run(demo: Path) -> None:
    _with_a_helper(demo)
    with open(demo / _HELPER, "r+b") as handle:
        handle.truncate(0)
        handle.write(b"class Helper(dict):\n    name = '\xff'\n")
    _touch(demo / _HELPER, 120)
    run = engine(demo)
    assert lines(run.run([demo])) == lines(engine(demo, cache=False).run([demo]))
    assert "scan" in run.stats.seconds


def test_two_versions_of_declint_keep_their_own_fix_previews(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pre-commit hook's declint and a virtual environment's of another version, on one tree:
    neither recomputes its previews because the other ran (they once shared one file)."""
    from declint import cache

    first = _json_report(demo, monkeypatch)
    parsed = _counting_parses(monkeypatch)
    fingerprint = cache.code_fingerprint()
    monkeypatch.setattr(cache, "code_fingerprint", lambda: "another version")
    assert _json_report(demo, monkeypatch) == first
    monkeypatch.setattr(cache, "code_fingerprint", lambda: fingerprint)
    parsed.clear()
    assert _json_report(demo, monkeypatch) == first
    assert parsed == []  # its own previews, still there
    names = {p.name for p in (demo / ".declint_cache" / f"v{FORMAT}").glob("*.previews")}
    assert names == {f"fix-previews-{fingerprint}.previews", "fix-previews-another version.previews"}


def test_fix_previews_of_the_four_newest_versions_are_kept(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from declint import cache

    directory = demo / ".declint_cache" / f"v{FORMAT}"
    _json_report(demo, monkeypatch)
    fingerprint = cache.code_fingerprint()
    for number in range(5):
        older = directory / f"fix-previews-old{number}.previews"
        older.write_bytes(b"")
        os.utime(older, (time.time() - 100 + number, time.time() - 100 + number))
    (directory / f"fix-previews-{fingerprint}.previews").unlink()
    _json_report(demo, monkeypatch)  # previews computed again and saved: the oldest two go
    names = {p.name for p in directory.glob("*.previews")}
    assert names == {f"fix-previews-{fingerprint}.previews"} | {f"fix-previews-old{n}.previews" for n in (2, 3, 4)}


def test_the_code_fingerprint_follows_libcsts_version_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """libcst's parses are in the cached findings and its output in the fix memo's texts: an
    upgrade of libcst alone gives another fingerprint (another cache key, another memo file)."""
    from importlib.util import find_spec

    from declint import cache

    spec = find_spec("libcst")
    assert spec is not None and spec.origin is not None
    version_file = os.stat(os.path.join(os.path.dirname(spec.origin), "_version.py"))
    assert cache._libcst_version_stat() == f"libcst:{version_file.st_size}:{version_file.st_mtime_ns}"
    cache.code_fingerprint.cache_clear()
    installed = cache.code_fingerprint()
    monkeypatch.setattr(cache, "_libcst_version_stat", lambda: "libcst:another version")
    cache.code_fingerprint.cache_clear()
    try:
        assert cache.code_fingerprint() != installed
    finally:
        cache.code_fingerprint.cache_clear()


def test_libcsts_version_file_is_found_without_importing_a_lazily_bound_libcst() -> None:
    """A process that bound libcst with `lazy_module` (any module of the check's) and has not used
    it yet: the fingerprint reads libcst's version file as a process without it does, and libcst
    stays unimported (`find_spec` read the lazy module's `__spec__`: all of libcst, ~0.17 s)."""
    program = (
        "import sys\n"
        "from declint import cache, lazy\n"
        "plain = cache._libcst_version_stat()\n"
        "lazy.lazy_module('libcst')\n"
        "bound = cache._libcst_version_stat()\n"
        "print(plain == bound, plain.count(':'), lazy.loaded('libcst'), 'libcst._nodes' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout == "True 2 False False\n"


# ---- a directory whose mtime moved while its entries did not -----------------------------------


def _save_by_rename(path: Path, text: str) -> None:
    """Save as editors' safe write and git do: a new file renamed over the old one (a new inode;
    the directory's mtime moves)."""
    fresh = path.with_name(path.name + ".tmp")
    fresh.write_text(text, encoding="utf-8")
    os.replace(fresh, path)
    _touch(path, 60)


def test_a_file_saved_by_rename_is_read_without_a_walk(demo: Path) -> None:
    """The file's directory lists the same names and kinds: the last walk still holds, the file
    alone is read, and the next snapshot records the directory's new stat (the run after it is
    answered from the snapshot, listing nothing)."""
    model = demo / MODELS / "modeling_radio.py"
    engine(demo).run([demo])
    _save_by_rename(model, model.read_text(encoding="utf-8") + "\n# saved\n")
    saved = engine(demo)
    result = saved.run([demo])
    assert "discover" not in saved.stats.seconds and saved.stats.files_read == 1
    assert result == engine(demo, cache=False).run([demo])
    assert dict(_snapshot_of(demo).walk)[str(model.parent)] == stat_key(os.stat(model.parent))
    again, _, listed = _run_listing(demo)
    assert listed == [] and "scan" not in again.stats.seconds


def test_a_temporary_file_created_and_removed_keeps_the_snapshot(demo: Path) -> None:
    """An editor's swap file (or vim's probe `4913`) moves the directory's mtime and leaves it as
    it was: the snapshot answers, reads nothing, and is written again with the directory's new
    stat (the run after it lists nothing)."""
    cold = engine(demo).run([demo])
    probe = demo / MODELS / "4913"
    probe.write_bytes(b"")
    probe.unlink()
    warm = engine(demo)
    assert warm.run([demo]) == cold
    assert "discover" not in warm.stats.seconds and "scan" not in warm.stats.seconds
    assert warm.stats.files_read == 0
    assert dict(_snapshot_of(demo).walk)[str(probe.parent)] == stat_key(os.stat(probe.parent))
    _, result, listed = _run_listing(demo)
    assert result == cold and listed == []


@pytest.mark.parametrize("change", ["new-file", "renamed", "file-to-directory", "gitignore-by-rename"])
def test_a_directory_whose_entries_changed_is_walked_again(demo: Path, change: str) -> None:
    """Other names, another kind of entry, or a .gitignore saved by rename with another pattern:
    the walk is made again, with a cold run's findings."""
    models = demo / MODELS
    ignore = models / ".gitignore"
    ignore.write_text("*.tmp\n", encoding="utf-8")
    settle(demo)
    engine(demo).run([demo])
    if change == "new-file":
        (models / "modeling_extra.py").write_text('def f(attn_backend="TRTLLM"):\n    return 1\n', encoding="utf-8")
    elif change == "renamed":
        os.replace(models / "modeling_radio.py", models / "modeling_radio2.py")
    elif change == "file-to-directory":
        (models / "modeling_radio.py").unlink()
        (models / "modeling_radio.py").mkdir()
    else:
        _save_by_rename(ignore, "modeling_radio.py\n")
    settle(demo)
    warm = engine(demo)
    result = warm.run([demo])
    assert "discover" in warm.stats.seconds
    assert result == engine(demo, cache=False).run([demo])
    assert any("modeling_radio.py" in line for line in lines(result)) is (change == "new-file")


def test_more_directories_moved_than_are_listed_again_is_a_walk(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import declint.engine

    cold = engine(demo).run([demo])
    for directory in (demo / MODELS, demo / "tensorrt_llm"):
        (directory / "4913").write_bytes(b"")
        (directory / "4913").unlink()
    monkeypatch.setattr(declint.engine, "_RELIST_MOST", 1)
    walked = engine(demo)
    assert walked.run([demo]) == cold and "discover" in walked.stats.seconds
    monkeypatch.setattr(declint.engine, "_RELIST_MOST", 2)
    listed = engine(demo)
    assert listed.run([demo]) == cold and "discover" not in listed.stats.seconds


def test_entries_signature_tells_names_kinds_and_link_targets_apart(tmp_path: Path) -> None:
    from declint.discovery import entries_signature

    def signature() -> bytes:
        with os.scandir(tmp_path) as scan:
            return entries_signature(sorted(scan, key=lambda entry: entry.name))

    (tmp_path / "a.py").write_text("", encoding="utf-8")
    (tmp_path / "b.py").write_text("", encoding="utf-8")
    (tmp_path / "link.py").symlink_to("a.py")
    first = signature()
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")  # contents are not the listing's
    assert signature() == first
    (tmp_path / "link.py").unlink()
    (tmp_path / "link.py").symlink_to("b.py")
    retargeted = signature()
    assert retargeted != first
    (tmp_path / "b.py").unlink()
    (tmp_path / "b.py").mkdir()
    assert signature() not in (first, retargeted)


def test_a_symlink_re_pointed_outside_the_root_is_walked_again(tmp_path: Path) -> None:
    """The same names and kinds, another link target: the walk decides by the target (one
    outside the project root is not followed), so it is made again."""
    root, outside = tmp_path / "project", tmp_path / "outside"
    write_tree(root, {**PRELUDE, "pkg/real.py": "x = 1\n"})
    write_tree(outside, {"real.py": 'def f(attn_backend="TRTLLM"):\n    return attn_backend\n'})
    (root / "pkg" / "link.py").symlink_to(root / "pkg" / "real.py")
    settle(root)
    settle(outside)
    engine(root).run([root])
    (root / "pkg" / "link.py").unlink()
    (root / "pkg" / "link.py").symlink_to(outside / "real.py")
    warm = lines(engine(root).run([root]))
    assert warm == lines(engine(root, cache=False).run([root]))
    assert any("pkg/link.py" in line and "DL000" in line and "outside" in line for line in warm), warm


def test_the_walks_listings_read_by_dl108_are_no_input_of_the_snapshot(demo: Path) -> None:
    """The listings file is the cache's own: read while the project rules run (DL108 walks the
    tree), it was recorded as their input, fresh after the walk that wrote it, and the edit's run
    wrote no snapshot (each run until it aged past the racy window went the long way)."""
    engine(demo).run([demo])
    model = demo / MODELS / "modeling_radio.py"
    model.write_text(model.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    settle(demo)
    before = _snapshot_of(demo).token
    engine(demo).run([demo])
    snapshot = _snapshot_of(demo)
    assert snapshot.token != before
    assert [path for path, _ in snapshot.inputs if ".declint_cache" in path] == []
    warm = engine(demo)
    warm.run([demo])
    assert "scan" not in warm.stats.seconds


def test_a_file_saved_by_rename_and_passed_by_path_is_read_without_a_walk(demo: Path) -> None:
    """The pre-commit form: the files passed by path, one of them saved by rename since the last
    run; the walk of the roots still holds."""
    staged = [demo / MODELS / "modeling_radio.py", demo / MODELS / "modeling_step3vl.py"]
    engine(demo).run([demo])
    engine(demo).run(staged)
    _save_by_rename(staged[0], staged[0].read_text(encoding="utf-8") + "\n# saved\n")
    precommit = engine(demo)
    result = precommit.run(staged)
    assert "discover" not in precommit.stats.seconds and precommit.stats.files_read == 1
    assert result == engine(demo, cache=False).run(staged)


def test_one_directory_listed_alike_and_another_with_a_new_file_is_a_walk(demo: Path) -> None:
    """Every moved directory must list what the walk saw: the second one's new module is found
    (`modules/` comes after `models/` in the snapshot's walk)."""
    model = demo / MODELS / "modeling_radio.py"
    engine(demo).run([demo])
    _save_by_rename(model, model.read_text(encoding="utf-8") + "\n# saved\n")
    (demo / "tensorrt_llm" / "_torch" / "modules" / "modeling_new.py").write_text(
        'def route(config):\n    return config.attn_backend == "TRTLLM"\n', encoding="utf-8"
    )
    settle(demo)
    warm = engine(demo)
    result = warm.run([demo])
    assert "discover" in warm.stats.seconds
    assert result == engine(demo, cache=False).run([demo])
    assert any(line.startswith("tensorrt_llm/_torch/modules/modeling_new.py:2:") for line in lines(result)), lines(
        result
    )


_SUBCLASS = "tensorrt_llm/_torch/pyexecutor/vision_variant.py"  # outside syntax-paths


@pytest.mark.parametrize("on_disk", [True, False], ids=["saved", "an editor's buffer"])
def test_a_file_that_left_the_closure_without_parsing_is_reported_as_without_the_cache(
    demo: Path, on_disk: bool
) -> None:
    """A subclass declared (a needle: the last run's closure holds it) loses the line of its
    declaration, and with it its body: nothing demands it now, so a run without the cache never
    parses it and reports no DL000. A run starting from the last closure once parsed it for the
    index and reported the DL000 (campaign seed 9105)."""
    head = "from tensorrt_llm._torch.models.modeling_kimi_k3 import MoonViTModel as Base\n\n\nclass Variant(Base):\n"
    declared = head + '    encoder_attention_backends = {"vision": ("VANILLA",)}\n'
    write_tree(demo, {_SUBCLASS: declared})
    settle(demo)
    engine(demo).run([demo])
    overrides = {} if on_disk else {_SUBCLASS: head.encode()}
    if on_disk:
        (demo / _SUBCLASS).write_text(head, encoding="utf-8")
        _touch(demo / _SUBCLASS, 120)
    cached = dataclasses.replace(engine(demo), overrides=overrides).run([demo])
    uncached = dataclasses.replace(engine(demo, cache=False), overrides=overrides).run([demo])
    assert not [line for line in lines(uncached) if line.startswith(_SUBCLASS)]
    assert lines(cached) == lines(uncached)


def test_a_file_that_does_not_parse_leaves_the_closure_when_its_base_is_renamed(demo: Path) -> None:
    """The subclass of a model that does not parse is in the closure (its base names a model),
    and its DL000 is reported; the model is renamed, nothing demands the subclass any more, and
    the run with the cache must drop its DL000 as the run without it does."""
    text = "from tensorrt_llm._torch.models.modeling_kimi_k3 import KimiK3Model\n\n\nclass Variant(KimiK3Model):\n"
    write_tree(demo, {_SUBCLASS: text})
    settle(demo)
    broken = f"{_SUBCLASS}:4:27: DL000 syntax error: expected an indented block after class definition on line 4"
    assert broken in lines(engine(demo).run([demo]))
    edit(demo / MODELS / "modeling_kimi_k3.py", "class KimiK3Model(", "class KimiK3Renamed(")
    _touch(demo / MODELS / "modeling_kimi_k3.py", 120)
    cached, uncached = engine(demo).run([demo]), engine(demo, cache=False).run([demo])
    assert broken not in lines(uncached)
    assert lines(cached) == lines(uncached)


def test_modules_imported_while_the_project_rules_run_are_no_input_of_the_snapshot(demo: Path, tmp_path: Path) -> None:
    """A fresh interpreter imports the project rules, and what they import (`json`,
    `declint.table`), while their reads are recorded. Recorded, those modules' files were the
    snapshot's inputs: stated by every warm run and, just compiled (a fresh checkout), too fresh to
    trust, so that run wrote no snapshot. Here every `.pyc` is as just written."""
    env = {name: value for name, value in os.environ.items() if name not in {NO_CACHE_ENV, "PYTHONDONTWRITEBYTECODE"}}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    command = [sys.executable, "-m", "declint", "check", str(demo)]
    compiling = subprocess.run([*command, "--no-cache"], env=env, capture_output=True, check=False)
    compiled = list((tmp_path / "pycache").rglob("*.pyc"))
    assert compiling.returncode == 1 and compiled
    now = time.time()
    for path in compiled:
        os.utime(path, (now, now))
    fresh = subprocess.run(command, env=env, capture_output=True, check=False)
    assert (fresh.returncode, fresh.stdout) == (1, compiling.stdout)
    assert sorted(os.path.relpath(path, demo) for path, _ in _snapshot_of(demo).inputs) == [
        "docs/encoder_attention_backends.md",
        "schemas/trtllm-serve-config.schema.json",
        "schemas/trtllm-serve-disagg-config.schema.json",
    ]


def test_the_input_recorder_leaves_out_what_the_import_system_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module imported while recording (from a directory, from a zip archive) is no input;
    a file read and a directory listed meanwhile are."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "declint_probe_plain.py").write_text("VALUE = 1\n", encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "zipped.zip", "w") as archive:
        archive.writestr("declint_probe_zipped.py", "VALUE = 2\n")
    data = tmp_path / "data.txt"
    data.write_text("read\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "zipped.zip"))
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    with InputRecorder.recording() as recorded:
        values = [importlib.import_module(name).VALUE for name in ("declint_probe_plain", "declint_probe_zipped")]
        data.read_text(encoding="utf-8")
        os.listdir(tmp_path)
    for name in ("declint_probe_plain", "declint_probe_zipped"):
        monkeypatch.delitem(sys.modules, name)
    assert values == [1, 2]
    assert sorted(recorded) == [str(tmp_path), str(data)]
