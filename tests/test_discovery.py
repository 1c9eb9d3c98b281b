"""Path matching the walk and the scan rely on."""

from __future__ import annotations

import gc
import random
from pathlib import Path

import pytest

from declint.config import load_config
from declint.discovery import DirectoryMatcher, _Filter, discover, glob_match

RELS = [
    "setup.py",
    "models.py",
    "tensorrt_llm/_torch/models/modeling_a.py",
    "tensorrt_llm/_torch/models/sub/modeling_b.py",
    "tensorrt_llm/_torch/modelsx/c.py",
    "tensorrt_llm/_torch/attention_backend/flashinfer.py",
    "tensorrt_llm/_torch/attention_backend.py",
    "models/a.py",
    "x/models/b.py",
    "x/modeling_c.py",
    "x/helper.py",
    "x/y/modeling_d.py",
]
PATTERNS = [
    ("**/_torch/models/**", "**/_torch/attention_backend/**"),  # the default kind: per directory
    ("models/**",),
    ("**/mod*/**",),
    ("**/modeling_*.py",),  # names a file: asked per file
    ("**/_torch/**", "!**/_torch/models/**"),  # a negation: asked per file
    (),
]


@pytest.mark.parametrize("patterns", PATTERNS, ids=[",".join(p) or "none" for p in PATTERNS])
def test_directory_matcher_answers_as_glob_match_in_any_order(patterns: tuple[str, ...]) -> None:
    expected = {rel: glob_match(rel, patterns) for rel in RELS}
    if patterns:  # each set tells some files apart, in a directory another answer shares
        assert set(expected.values()) == {True, False}
    rng = random.Random(5)
    for _ in range(20):
        order = rng.sample(RELS, len(RELS))
        matcher = DirectoryMatcher(patterns)
        assert {rel: matcher(rel) for rel in order} == expected


def test_only_patterns_below_a_directory_are_answered_per_directory() -> None:
    assert DirectoryMatcher(("**/_torch/models/**",))._answers == {}
    assert DirectoryMatcher(("**/modeling_*.py",))._answers is None
    assert DirectoryMatcher(("a/**", "!a/b/**"))._answers is None


def _filters_alive() -> int:
    gc.collect()
    return sum(isinstance(thing, _Filter) for thing in gc.get_objects())


def test_a_walk_keeps_nothing_alive_after_it(tmp_path: Path) -> None:
    """A walk's filter, with the listings and .gitignore specs it holds, goes with the walk: a
    long-lived process (the tests, an editor integration) walking again and again must not grow.
    Its memo of the .gitignore files that apply was a `functools.cache` on the method, which
    lives on the class and held every filter for the life of the process."""
    (tmp_path / ".gitignore").write_text("build/\n", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n", encoding="utf-8")
    config = load_config(None, default_root=tmp_path, known_codes=frozenset())
    before = _filters_alive()
    for _ in range(3):
        assert [item.rel for item in discover([tmp_path], config).files] == ["pkg/a.py"]
    assert _filters_alive() == before
