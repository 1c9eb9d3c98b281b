"""The byte prefilters agree with the definitions they speed up."""

from __future__ import annotations

import dataclasses
import difflib
import random
import string
from pathlib import Path

from declint.bases import class_bases
from declint.config import load_config
from declint.facts import FactOptions, ModuleFacts, extract_facts
from declint.prefilter import TRACKER, NeedleSet, PlaceholderFacts, _Checker, build_index, strings_close_to

NAMES = ("FLASHINFER", "TRTLLM", "VANILLA")


_CONFIG = load_config(None, default_root=Path("/nonexistent"), known_codes=frozenset())
_OPTIONS = FactOptions("encoder_attention_backends", "FixedEncoderAttention", ())


def _extracted(text: str, module: str, path: str) -> ModuleFacts:
    """The facts of a small module, as the index tests below build their indexes from."""
    return extract_facts(text, module, path, _OPTIONS, False)


def _variants(rng: random.Random) -> list[str]:
    """Names with edits (near misses and far ones), and random words of every plausible length."""
    alphabet = string.ascii_uppercase + "_0123456789"
    out = []
    for _ in range(3000):
        text = list(rng.choice(NAMES))
        for _ in range(rng.randint(0, 5)):
            position = rng.randrange(len(text) + 1)
            edit = rng.choice("insert delete replace swap")
            if edit == "insert":
                text.insert(position, rng.choice(alphabet))
            elif text and edit == "delete":
                del text[min(position, len(text) - 1)]
            elif text and edit == "replace":
                text[min(position, len(text) - 1)] = rng.choice(alphabet)
            elif len(text) > 1:
                i = min(position, len(text) - 2)
                text[i], text[i + 1] = text[i + 1], text[i]
        out.append("".join(text))
    out += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 20))) for _ in range(3000)]
    return out


def test_the_letter_bound_never_changes_difflibs_answer() -> None:
    for cutoff in (0.6, 0.75, 0.8, 0.9):
        checker = _Checker(NAMES, cutoff)
        rng = random.Random(cutoff)
        compared = 0
        for text in _variants(rng):
            expected = bool(difflib.get_close_matches(text, NAMES, n=1, cutoff=cutoff))
            assert checker._close(text) == expected, (text, cutoff)
            compared += expected
        assert compared > 300  # the near misses really are near: both answers are exercised


def test_strings_close_to_sees_literals_in_either_quote_and_escaped() -> None:
    assert strings_close_to(b'backend = "trtllm"\n', NAMES, cutoff=0.8)
    assert strings_close_to(b"backend = 'FLASHINFR'\n", NAMES, cutoff=0.8)
    assert strings_close_to(b'backend = "VANI\\x4cLA"\n', NAMES, cutoff=0.8)
    assert strings_close_to(b'backend = "\\N{LATIN CAPITAL LETTER T}RTLLM"\n', NAMES, cutoff=1.0)  # a named escape
    assert not strings_close_to(b'backend = "\\N{NO SUCH NAME}RTLLM"\n', NAMES, cutoff=0.8)  # kept as written
    assert not strings_close_to(b'backend = "cuda"\nname = "float32"\n', NAMES, cutoff=0.8)
    assert not strings_close_to(b"backend = TRTLLM\n", NAMES, cutoff=0.8)  # a name, not a literal


def test_needle_set_finds_exactly_the_needles_a_search_for_each_finds() -> None:
    needles = [b"attn_backend", b"ATTN_BACKEND", b"AttentionMetadata", b"Literal", b"declint:", b"zz_top"]
    needle_set = NeedleSet(needles)
    # One group per gate: a needle that contains no shared gate is its own (lower-cased) gate.
    assert [gate for gate, _ in needle_set.groups] == [b"attention", b"backend", b"declint:", b"literal", b"zz_top"]
    rng = random.Random(7)
    pieces = [*needles, b"Attn_Backend", b"BACKEND", b"attention", b"literal", b"ZZ_TOP", b"x = 1\n", b"# declint"]
    for _ in range(2000):
        data = b" ".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        assert needle_set.found(data) == frozenset(n for n in needles if n in data), data
    assert needle_set.found(b"ATTN_backend Attn_Backend literal") == frozenset()  # gates pass, no exact needle


def test_class_bases_sees_headers_at_line_starts_and_their_aliases() -> None:
    data = (
        b"from torch import nn as tnn\n"
        b"x = 'class Fake(Hidden):'\n"  # not at a line start
        b"class A(tnn.Module, metaclass=M):\n"
        b"    class Inner [T] (Base[T]):\r"
        b"\tclass  Lone( (Grouped) ):\n"
        b"@classmethod\n"
    )
    assert class_bases(data) == {"tnn", "Module", "metaclass", "M", "nn", "Base", "T", "Grouped"}


def test_placeholder_at_builds_the_same_instance_as_the_constructor() -> None:
    quick = PlaceholderFacts.at("pkg.models.modeling_x", "pkg/models/modeling_x.py")
    slow = PlaceholderFacts("pkg.models.modeling_x", "pkg/models/modeling_x.py")
    assert type(quick) is PlaceholderFacts
    assert quick == slow
    assert hash(quick) == hash(slow)
    assert vars(quick) == vars(slow)


def test_a_failed_lookup_reads_the_placeholder_that_would_define_it_every_time_it_is_asked() -> None:
    """The owner of a missed name is memoized per index (`_Owners`); each miss is still a read."""
    text = "class Known:\n    pass\n\ndef helper():\n    pass\n"
    full = _extracted(text, "pkg.full", "pkg/full.py")
    placeholder = PlaceholderFacts.at("pkg.hidden", "pkg/hidden.py")
    index = build_index([full, placeholder], _CONFIG)
    TRACKER.take()
    for _ in range(2):  # the second ask is answered from the memo, and reads the same module
        assert index.classes.get("pkg.hidden.Missing") is None
        assert TRACKER.take() == {"pkg.hidden"}
        assert "pkg.hidden.Sub.attr" not in index.functions  # a dotted name walks up to its module
        assert TRACKER.take() == {"pkg.hidden"}
        assert "pkg.hidden.VALUE" not in index.values
        assert TRACKER.take() == {"pkg.hidden"}
    assert index.classes.get("pkg.full.Missing") is None  # a module held in full answers by itself
    assert "pkg.hidden" not in index.classes  # a module's own name is answered by its presence
    assert "elsewhere.Missing" not in index.functions  # no module of the project would define it
    assert TRACKER.take() == set()
    assert index.classes.get("pkg.full.Known") is not None and "pkg.full.helper" in index.functions
    TRACKER.enabled = False
    try:
        assert index.classes.get("pkg.hidden.Other") is None  # untracked (the whole reference graph)
        assert TRACKER.take() == set()
    finally:
        TRACKER.enabled = True
    assert index.classes.get("pkg.hidden.Other") is None  # tracked again: the untracked ask left no memo
    assert TRACKER.take() == {"pkg.hidden"}


def test_a_resolved_name_reads_the_same_placeholders_every_time_it_is_asked() -> None:
    """`resolve` is memoized per index; the placeholder modules its first ask read are read
    again by every later ask, and an untracked first ask leaves nothing a tracked one replays."""
    package = "from pkg.hidden import Base\nfrom pkg.stars import *\n"
    facts = [
        _extracted(package, "pkg", "pkg/__init__.py"),
        _extracted("from pkg.inner import *\n", "pkg.stars", "pkg/stars.py"),
        _extracted("class Deep:\n    pass\n", "pkg.inner", "pkg/inner.py"),
        PlaceholderFacts.at("pkg.hidden", "pkg/hidden.py"),
        PlaceholderFacts.at("pkg.quiet", "pkg/quiet.py"),
    ]
    index = build_index(facts, _CONFIG)
    TRACKER.take()
    TRACKER.enabled = False
    try:  # untracked first (the whole reference graph): the answer, and no memo of its reads
        assert index.resolve("pkg.quiet.Thing") == "pkg.quiet.Thing"
        assert TRACKER.take() == set()
    finally:
        TRACKER.enabled = True
    for _ in range(2):  # the second ask of each is answered by the memo
        assert index.resolve("pkg.Base") == "pkg.hidden.Base"  # a re-export into a placeholder
        assert TRACKER.take() == {"pkg.hidden"}
        assert index.resolve("pkg.Deep") == "pkg.inner.Deep"  # two star imports, held in full
        assert TRACKER.take() == set()
        assert index.resolve("pkg.quiet.Thing") == "pkg.quiet.Thing"
        assert TRACKER.take() == {"pkg.quiet"}
    TRACKER.touched.add("before")  # reads of the query around it are kept, not swallowed
    assert index.resolve("pkg.Base") == "pkg.hidden.Base"
    assert index.resolve("pkg.inner.Deep") == "pkg.inner.Deep"  # a first ask inside that query
    assert TRACKER.take() == {"before", "pkg.hidden"}
    TRACKER.enabled = False
    try:
        assert index.resolve("pkg.Base") == "pkg.hidden.Base"  # a memo hit while untracked reads nothing
        assert TRACKER.take() == set()
    finally:
        TRACKER.enabled = True
    assert index.resolve("pkg.Base", 1) == "pkg.hidden.Base"  # other hops: asked afresh, not from the memo
    assert TRACKER.take() == set()  # one hop follows the re-export without looking inside its target


def test_a_classs_ancestors_read_step_by_step_what_the_lazy_walk_reads() -> None:
    """`ancestors` is memoized per class and replayed: a caller that stops early reads what the
    walk read up to there, on the first ask (walked whole, its reads held back) and every later one."""
    text = (
        "from pkg.hidden import Far\n\nclass Top:\n    pass\n\nclass Mid(Top, Far):\n    pass\n\n"
        "class Leaf(Mid):\n    pass\n\nclass Other(Far):\n    pass\n"
    )
    facts = [
        _extracted(text, "pkg.m", "pkg/m.py"),
        PlaceholderFacts.at("pkg.hidden", "pkg/hidden.py"),
    ]
    index = build_index(facts, _CONFIG)
    leaf, other = index.classes["pkg.m.Leaf"], index.classes["pkg.m.Other"]
    TRACKER.take()
    for _ in range(2):
        walk = index.ancestors(leaf)
        assert next(walk)[0] == "pkg.m.Mid"
        assert TRACKER.take() == set()  # Far is resolved only when Mid's bases are pushed
        assert [name for name, _ in walk] == ["pkg.m.Top", "pkg.hidden.Far"]
        assert TRACKER.take() == {"pkg.hidden"}
    TRACKER.enabled = False
    try:
        assert [name for name, _ in index.ancestors(other)] == ["pkg.hidden.Far"]
        assert TRACKER.take() == set()
    finally:
        TRACKER.enabled = True
    assert [name for name, _ in index.ancestors(other)] == ["pkg.hidden.Far"]  # not replayed from an untracked ask
    assert TRACKER.take() == {"pkg.hidden"}
    rebased = leaf._replace(bases=("pkg.m.Top",))  # the same name, other bases: its own walk
    assert [name for name, _ in index.ancestors(rebased)] == ["pkg.m.Top"]
    assert TRACKER.take() == set()


def test_a_check_state_pickled_for_a_warmed_worker_is_rebuilt_with_the_same_facts_in_order() -> None:
    """`CheckState.__reduce__`: placeholders travel as joined paths and module names, every
    other entry (full facts, a partial one, a placeholder under another path) as it is, at its
    position; the rebuilt state holds equal facts of the same types in the same order, and its
    index answers as the original's (a read of a placeholder tracked)."""
    import pickle

    from declint.prefilter import PartialFacts
    from declint.run_state import CheckState

    full = _extracted("class Model:\n    pass\n", "pkg.model", "pkg/model.py")
    partial = PartialFacts.of(_extracted("X = 1\n", "pkg.partial", "pkg/partial.py"))
    facts = {
        "pkg/model.py": full,
        "pkg/a.py": PlaceholderFacts.at("pkg.a", "pkg/a.py"),
        "pkg/b.py": PlaceholderFacts.at("pkg.b", "pkg/b.py"),
        "pkg/partial.py": partial,
        "pkg/moved.py": PlaceholderFacts.at("pkg.moved", "elsewhere/moved.py"),
        "pkg/c/__init__.py": PlaceholderFacts.at("pkg.c", "pkg/c/__init__.py"),
    }
    state = CheckState(
        _CONFIG, (), (), frozenset({"DL101"}), frozenset({"DL101"}),
        build_index(list(facts.values()), _CONFIG), facts, {"pkg/a.py": b"x = 1\n"}, 1000, True,
    )  # fmt: skip
    data = pickle.dumps(state, pickle.HIGHEST_PROTOCOL)
    assert b"pkg/model.py\x00pkg/a.py\x00pkg/b.py" in data  # the paths, joined
    rebuilt = pickle.loads(data)
    assert list(rebuilt.facts) == list(facts)
    assert [type(value) for value in rebuilt.facts.values()] == [type(value) for value in facts.values()]
    assert list(rebuilt.facts.values()) == list(facts.values())
    assert rebuilt.facts["pkg/moved.py"].path == "elsewhere/moved.py"
    assert (rebuilt.overrides, rebuilt.max_size, rebuilt.previews) == ({"pkg/a.py": b"x = 1\n"}, 1000, True)
    assert sorted(rebuilt.index.modules) == sorted(state.index.modules)
    TRACKER.take()
    assert rebuilt.index.classes.get("pkg.b.Missing") is None
    assert TRACKER.take() == {"pkg.b"}
    assert "pkg.model.Model" in rebuilt.index.classes
    empty = pickle.loads(pickle.dumps(dataclasses.replace(state, facts={}, index=build_index([], _CONFIG))))
    assert empty.facts == {}
    unnamed = {"__init__.py": PlaceholderFacts.at("", "__init__.py"), "pkg/model.py": full}  # one empty name
    rebuilt = pickle.loads(pickle.dumps(dataclasses.replace(state, facts=unnamed)))
    assert list(rebuilt.facts.items()) == list(unnamed.items())
