"""The benchmark trees' generator: trees of every size have the same composition of model files."""

from __future__ import annotations

from collections import Counter

from benchmarks.gen_tree import KINDS, model_kinds


def test_every_prefix_of_the_model_kinds_holds_each_share_to_within_one_file() -> None:
    total = sum(weight for _, weight in KINDS)
    kinds = model_kinds(700)
    for size in range(1, len(kinds) + 1):
        counts = Counter(kinds[:size])
        for kind, weight in KINDS:
            assert abs(counts[kind] - weight * size / total) < 1, (size, kind, counts)
    assert model_kinds(150) == kinds[:150]  # a smaller tree's models are a larger one's first ones
    assert Counter(model_kinds(600)) == {
        "clean": 300,
        "fixed": 90,
        "sdpa": 72,
        "missing": 48,
        "literal": 48,
        "invalid": 42,
    }
