"""The benchmark trees' generator: trees of every size have the same composition of model files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from benchmarks.gen_tree import KINDS, generate, model_kinds


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


def test_a_cap_on_mentions_changes_only_the_files_past_it(tmp_path: Path) -> None:
    """The tree measuring files that cannot match holds as many files that mention attn_backend
    (they can match) as the tree it is compared with; everything else is the uncapped tree."""
    marker = b"def choose(config, fallback):"
    free = generate(tmp_path / "free", 600, model_share=0.01)
    capped = generate(tmp_path / "capped", 600, model_share=0.01, mention_files=2)
    files = {p.relative_to(tmp_path / "free") for p in (tmp_path / "free").rglob("*.py")}
    assert files == {p.relative_to(tmp_path / "capped") for p in (tmp_path / "capped").rglob("*.py")}
    mentioning = sorted(str(rel) for rel in files if marker in (tmp_path / "free" / rel).read_bytes())
    kept = sorted(str(rel) for rel in files if marker in (tmp_path / "capped" / rel).read_bytes())
    assert (free["mention_files"], capped["mention_files"]) == (len(mentioning), 2)
    assert len(mentioning) > 2 and kept == sorted(mentioning, key=_number)[:2]
    changed = [
        str(rel) for rel in files if (tmp_path / "free" / rel).read_bytes() != (tmp_path / "capped" / rel).read_bytes()
    ]
    assert sorted(changed) == sorted(sorted(mentioning, key=_number)[2:])


def _number(rel: str) -> int:
    """The running number gen_tree puts last in a filler file's name (its order of generation)."""
    return int(rel.rpartition("_")[2].removesuffix(".py"))
