"""Path matching the walk and the scan rely on."""

from __future__ import annotations

import random

import pytest

from declint.discovery import DirectoryMatcher, glob_match

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
