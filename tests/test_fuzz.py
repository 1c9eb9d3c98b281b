"""Fuzzing: generated modules and mutated copies of the demo never crash the engine.

Every result is findings or a DL000 for the file. CI runs a fixed-seed sample; a longer run:

    DECLINT_FUZZ_EXAMPLES=20000 DECLINT_FUZZ_MUTATIONS=2000 pytest tests/test_fuzz.py
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from declint.config import find_config_file, load_config
from declint.engine import Engine, Selection
from declint.rules import ALL_RULES, RULES_BY_CODE
from declint.testing import PRELUDE, write_tree
from tests.conftest import DEMO, copy_project

EXAMPLES = int(os.environ.get("DECLINT_FUZZ_EXAMPLES", "1000"))
MUTATIONS = int(os.environ.get("DECLINT_FUZZ_MUTATIONS", "40"))
TARGET = "tensorrt_llm/_torch/models/modeling_fuzz.py"


def make_engine(root: Path) -> Engine:
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    return Engine(config, ALL_RULES, Selection(("DL",), ()))


def assert_sane(engine: Engine, paths: list[Path]) -> None:
    result = engine.run(paths)  # must not raise
    for finding in result.findings:
        assert finding.code in RULES_BY_CODE, finding
        assert finding.line >= 1 and finding.column >= 0, finding
        assert finding.message, finding


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz")
    write_tree(root, PRELUDE)
    return root


@settings(
    max_examples=EXAMPLES,
    derandomize=True,  # a fixed seed: CI sees the same modules every run
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(source=hypothesmith.from_grammar())
# hypothesmith compiles each module it generates; the SyntaxWarnings of that `compile` (filename
# "<string>", thousands a run) are the generator's. declint's own are tested in test_bad_input.py.
@pytest.mark.filterwarnings("ignore::SyntaxWarning")
def test_generated_modules(fuzz_root: Path, source: str) -> None:
    (fuzz_root / TARGET).write_text(source, encoding="utf-8")
    assert_sane(make_engine(fuzz_root), [fuzz_root / TARGET])


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(rng.randint(1, 4)):
        if not lines:
            break
        position = rng.randrange(len(lines))
        if rng.random() < 0.5:
            del lines[position]
        else:
            lines.insert(rng.randrange(len(lines) + 1), lines[position])
    return "".join(lines)


def test_mutated_demo_trees(tmp_path: Path) -> None:
    copy = tmp_path / "demo"
    copy_project(DEMO, copy)
    files = sorted(copy.rglob("*.py"))
    originals = {path: path.read_text(encoding="utf-8") for path in files}
    engine = make_engine(copy)
    rng = random.Random(20261129)
    for _ in range(MUTATIONS):
        chosen = rng.sample(files, 3)
        for path in chosen:
            path.write_text(mutate(originals[path], rng), encoding="utf-8")
        assert_sane(engine, [copy])
        for path in chosen:
            path.write_text(originals[path], encoding="utf-8")
