"""Path matching the walk and the scan rely on."""

from __future__ import annotations

import gc
import random
from pathlib import Path

import pytest

from declint.config import find_config_file, load_config
from declint.discovery import INDEX_INCLUDE, DirectoryMatcher, _Filter, discover, glob_match, known_files

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
    # `type(...) is`, not isinstance: that reads `__class__` of every object alive, and one of
    # torch's (a deprecated module attribute) warns when read.
    return sum(type(thing) is _Filter for thing in gc.get_objects())


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


# A git work tree whose top level is `repo/`, with declint's project root two levels below it
# (a monorepo): the .gitignore files of `repo/` and `repo/mid/` apply to the root's files, each
# relative to its own directory, the nearer one first, as git applies them.
MONOREPO = {
    ".gitignore": "*.py\n",  # above the git top level: never read
    "repo/.gitignore": "build/\n*_pb2.py\nmid/proj/generated.py\nlone.py\n",
    "repo/mid/.gitignore": "!keep_pb2.py\n",
    "repo/mid/proj/.gitignore": "!root_pb2.py\n",
    "repo/mid/proj/a.py": "",
    "repo/mid/proj/lone.py": "",
    "repo/mid/proj/generated.py": "",
    "repo/mid/proj/sub/generated.py": "",  # `mid/proj/generated.py` is anchored to repo/
    "repo/mid/proj/build/b.py": "",
    "repo/mid/proj/pkg/c_pb2.py": "",
    "repo/mid/proj/pkg/keep_pb2.py": "",
    "repo/mid/proj/root_pb2.py": "",
}
ABOVE_ROOT_APPLIED = ["a.py", "pkg/keep_pb2.py", "root_pb2.py", "sub/generated.py"]
ONLY_ROOTS_OWN = sorted(
    rel.removeprefix("repo/mid/proj/") for rel in MONOREPO if rel.startswith("repo/mid/proj/") and rel.endswith(".py")
)


def _monorepo(tmp_path: Path, git: str | None, extra: dict[str, str] | None = None) -> Path:
    """MONOREPO under tmp_path, with `repo/.git` a directory, a file (a worktree's or a
    submodule's) or absent; returns the project root, `repo/mid/proj`."""
    for rel, text in {**MONOREPO, **(extra or {})}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    if git == "directory":
        (tmp_path / "repo" / ".git").mkdir()
    elif git == "file":
        (tmp_path / "repo" / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n", encoding="utf-8")
    return tmp_path / "repo" / "mid" / "proj"


def _rels(root: Path, paths: list[Path] | None = None) -> list[str]:
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset())
    return [item.rel for item in discover(paths or [root], config).files]


@pytest.mark.parametrize("git", ["directory", "file"])
def test_gitignore_files_between_the_git_top_level_and_the_root_apply(tmp_path: Path, git: str) -> None:
    root = _monorepo(tmp_path, git)
    assert _rels(root) == ABOVE_ROOT_APPLIED
    # A path given explicitly (pre-commit's staged files) is held to them too.
    given = [root / "pkg" / "c_pb2.py", root / "pkg" / "keep_pb2.py", root / "build" / "b.py", root / "a.py"]
    assert _rels(root, given) == ["a.py", "pkg/keep_pb2.py"]


def test_without_a_git_top_level_above_the_root_only_its_own_gitignore_files_apply(tmp_path: Path) -> None:
    root = _monorepo(tmp_path, None)
    assert _rels(root) == ONLY_ROOTS_OWN


@pytest.mark.parametrize("ignored", ["proj/", "mid/", "/mid/proj"])
def test_no_gitignore_above_the_root_applies_when_one_ignores_the_root_itself(tmp_path: Path, ignored: str) -> None:
    """Git would ignore the whole project (a vendored tree with a configuration of its own): it
    was asked for by name, and is checked as if no work tree were around it."""
    root = _monorepo(tmp_path, "directory", {"repo/.gitignore": f"*_pb2.py\n{ignored}\n"})
    assert _rels(root) == ONLY_ROOTS_OWN


def test_respect_gitignore_off_ignores_the_gitignore_files_above_the_root_too(tmp_path: Path) -> None:
    root = _monorepo(tmp_path, "directory", {"repo/mid/proj/declint.toml": "respect-gitignore = false\n"})
    assert _rels(root) == ONLY_ROOTS_OWN


def test_a_nearer_git_top_level_hides_the_gitignore_files_of_the_repository_around_it(tmp_path: Path) -> None:
    """A submodule (or a nested clone) between the outer repository and the root: git reads no
    .gitignore above the submodule's top level, and neither does declint."""
    root = _monorepo(tmp_path, "directory")
    (tmp_path / "repo" / "mid" / ".git").write_text("gitdir: ../.git/modules/mid\n", encoding="utf-8")
    assert _rels(root) == [
        "a.py",
        "build/b.py",
        "generated.py",
        "lone.py",
        "pkg/c_pb2.py",
        "pkg/keep_pb2.py",
        "root_pb2.py",
        "sub/generated.py",
    ]


def test_a_git_top_level_without_gitignore_files_above_the_root_keeps_the_walk_probe_free(tmp_path: Path) -> None:
    """With no .gitignore between the git top level and the root, a directory without one of its
    own has none that applies, and the walk skips the per-entry probe there (as before)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "proj" / "pkg").mkdir(parents=True)
    config = load_config(None, default_root=tmp_path / "proj", known_codes=frozenset())
    assert _Filter(config)._applicable(str(tmp_path / "proj" / "pkg")) == ()
    (tmp_path / ".gitignore").write_text("build/\n", encoding="utf-8")
    [ignore] = _Filter(config)._applicable(str(tmp_path / "proj" / "pkg"))
    assert ignore.directory == str(tmp_path)


def test_a_nearer_gitignore_decides_and_an_ignored_directory_stays_ignored(tmp_path: Path) -> None:
    """Git's precedence within the root as above it: the nearest .gitignore with a matching
    pattern decides (its `!pattern` re-includes a file one further up ignores), but nothing below
    an ignored directory comes back, even given by name (git never looks inside it)."""
    files = {
        ".gitignore": "gen_*.py\nbuild/\n",
        "sub/.gitignore": "!gen_keep.py\n",
        "sub/gen_keep.py": "",
        "sub/gen_other.py": "",
        "build/.gitignore": "!b.py\n",
        "build/b.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    assert _rels(tmp_path) == ["sub/gen_keep.py"]
    given = [tmp_path / "build" / "b.py", tmp_path / "sub" / "gen_keep.py", tmp_path / "sub" / "gen_other.py"]
    assert _rels(tmp_path, given) == ["sub/gen_keep.py"]


@pytest.mark.parametrize("negation", ["!gen/", "!gen"])
def test_a_directory_re_included_by_a_nearer_gitignore_does_not_re_include_its_ignored_files(
    tmp_path: Path, negation: str
) -> None:
    """Red-team 44 of 00ac16c: `!gen/` in sub/.gitignore re-includes the directory `gen`, not the
    `*.py` files the root's .gitignore ignores (git: `proj/.gitignore:1:*.py sub/gen/x.py`); a
    pattern of the nearer file matching the file itself still decides."""
    (tmp_path / ".gitignore").write_text("*.py\n", encoding="utf-8")
    (tmp_path / "sub" / "gen").mkdir(parents=True)
    (tmp_path / "sub" / ".gitignore").write_text(f"{negation}\n!keep.py\n", encoding="utf-8")
    for rel in ("sub/gen/x.py", "sub/gen/keep.py", "sub/y.py"):
        (tmp_path / rel).write_text("x = 1\n", encoding="utf-8")
    config = load_config(None, default_root=tmp_path, known_codes=frozenset())
    assert [item.rel for item in discover([tmp_path], config).files] == ["sub/gen/keep.py"]
    given = discover([tmp_path / "sub" / "gen" / "x.py", tmp_path / "sub" / "gen" / "keep.py"], config)
    assert [item.rel for item in given.files] == ["sub/gen/keep.py"]


def test_no_gitignore_from_around_a_nested_repository_applies_inside_it(tmp_path: Path) -> None:
    """Red-team 44 of 00ac16c: git applies no .gitignore of an outer repository inside a nested
    one (`vendor/.git`): its files are not ignored by the root's or the top level's patterns,
    walked or given by name; its own .gitignore applies."""
    top = tmp_path / "top"
    (top / ".git").mkdir(parents=True)
    (top / ".gitignore").write_text("gen.py\n", encoding="utf-8")
    root = top / "proj"
    (root / "vendor" / ".git").mkdir(parents=True)
    (root / ".gitignore").write_text("other.py\n", encoding="utf-8")
    (root / "vendor" / ".gitignore").write_text("own.py\n", encoding="utf-8")
    for rel in ("a.py", "gen.py", "vendor/gen.py", "vendor/other.py", "vendor/own.py"):
        (root / rel).write_text("x = 1\n", encoding="utf-8")
    config = load_config(None, default_root=root, known_codes=frozenset())
    assert [item.rel for item in discover([root], config).files] == ["a.py", "vendor/gen.py", "vendor/other.py"]
    given = discover([root / "vendor" / "gen.py", root / "vendor" / "own.py", root / "gen.py"], config)
    assert [item.rel for item in given.files] == ["vendor/gen.py"]


def test_a_symlinked_gitignore_is_not_read_as_git_does_not_read_it(tmp_path: Path) -> None:
    """gitignore(5): a .gitignore that is a symbolic link in the work tree is not followed
    (red-team 44: declint applied its patterns)."""
    (tmp_path / "patterns").write_text("a.py\n", encoding="utf-8")
    (tmp_path / ".gitignore").symlink_to(tmp_path / "patterns")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("b.py\n", encoding="utf-8")
    for rel in ("a.py", "sub/a.py", "sub/b.py"):
        (tmp_path / rel).write_text("x = 1\n", encoding="utf-8")
    config = load_config(None, default_root=tmp_path, known_codes=frozenset())
    assert [item.rel for item in discover([tmp_path], config).files] == ["a.py", "sub/a.py"]


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        # `*/` ignores every directory (its files too), not a top-level file
        ("*/\n", ["m.py"]),
        ("**/\n", ["m.py"]),
        # `*/` ignores a/b: a later `!a/` re-includes a itself, not a/b
        ("*/\n!a/\n", ["a/keep.py", "a/m.py", "m.py"]),
        # `dir/**` matches what is below a/, not a/: `!a/keep.py` re-includes that file
        ("a/**\n!a/keep.py\n", ["a/keep.py", "m.py"]),
    ],
    ids=["star-slash", "starstar-slash", "star-slash-then-negated-dir", "dir-starstar-then-negated-file"],
)
def test_directory_patterns_decide_as_git_does(tmp_path: Path, patterns: str, expected: list[str]) -> None:
    """Red-team 45 of 8df2ed3, each checked against `git status --ignored`: pathspec matches
    `*/` with `search` (8df2ed3 used `match`, and `*/` ignored nothing), a directory pattern must
    match up to the end of the path, and `dir/**` does not match the directory itself."""
    (tmp_path / ".gitignore").write_text(patterns, encoding="utf-8")
    (tmp_path / "a" / "b").mkdir(parents=True)
    for rel in ("m.py", "a/m.py", "a/keep.py", "a/b/m.py"):
        (tmp_path / rel).write_text("x = 1\n", encoding="utf-8")
    config = load_config(None, default_root=tmp_path, known_codes=frozenset())
    assert [item.rel for item in discover([tmp_path], config).files] == sorted(expected)


def _files(root: Path, contents: dict[str, str]) -> None:
    for rel, text in contents.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _walked(root: Path, *given: str) -> list[str]:
    config = load_config(None, default_root=root, known_codes=frozenset())
    return [item.rel for item in discover([root / rel for rel in given] or [root], config).files]


def test_info_exclude_applies_after_every_gitignore(tmp_path: Path) -> None:
    """`.git/info/exclude` ignores as a .gitignore at the top level would, but is asked last: a
    `!pattern` of any .gitignore re-includes what it ignores. Checked against `git ls-files
    --others --exclude-standard` (git 2.39)."""
    _files(tmp_path, {".git/info/exclude": "# local\na/gen/\n*.py\n!m.py\n", "a/.gitignore": "!keep.py\n"})
    _files(tmp_path, {rel: "x = 1\n" for rel in ("m.py", "a/x.py", "a/gen/y.py", "a/keep.py")})
    assert _walked(tmp_path) == ["a/keep.py", "m.py"]
    assert _walked(tmp_path, "a/gen/y.py", "a/x.py", "m.py") == ["m.py"]


def test_info_exclude_of_a_work_tree_above_the_root_is_relative_to_its_top_level(tmp_path: Path) -> None:
    _files(tmp_path, {".git/info/exclude": "proj/sub/\ngen.py\n/proj/top.py\n"})
    _files(tmp_path, {f"proj/{rel}": "x = 1\n" for rel in ("a.py", "gen.py", "top.py", "sub/b.py", "c/top.py")})
    assert _walked(tmp_path / "proj") == ["a.py", "c/top.py"]


@pytest.mark.parametrize("kind", ["worktree", "submodule"])
def test_info_exclude_is_found_through_a_git_file(tmp_path: Path, kind: str) -> None:
    """A worktree's `.git` file names its git directory, whose `commondir` names the one holding
    `info/exclude`; a submodule's names the git directory in the superproject's `.git/modules`.
    Both checked against git 2.39 (`git worktree add`, `git submodule add`)."""
    if kind == "worktree":
        _files(tmp_path, {"main/.git/worktrees/wt/commondir": "../..\n", "main/.git/info/exclude": "ign.py\n"})
        _files(tmp_path, {"wt/.git": f"gitdir: {tmp_path / 'main/.git/worktrees/wt'}\n"})
        root = tmp_path / "wt"
    else:
        pointer = "gitdir: ../.git/modules/sub\n"
        _files(tmp_path, {"top/.git/modules/sub/info/exclude": "ign.py\n", "top/sub/.git": pointer})
        root = tmp_path / "top" / "sub"
    _files(root, {"ign.py": "x = 1\n", "ok.py": "x = 1\n"})
    assert _walked(root) == ["ok.py"]
    if kind == "submodule":  # walked from the superproject: a nested repository with its own exclude
        assert _walked(tmp_path / "top") == ["sub/ok.py"]


def test_only_a_nested_repositorys_own_info_exclude_applies_inside_it(tmp_path: Path) -> None:
    _files(tmp_path, {".git/info/exclude": "out.py\n", "vendor/.git/info/exclude": "own.py\n"})
    _files(tmp_path, {rel: "x = 1\n" for rel in ("out.py", "top.py", "vendor/out.py", "vendor/own.py", "vendor/v.py")})
    assert _walked(tmp_path) == ["top.py", "vendor/out.py", "vendor/v.py"]
    assert _walked(tmp_path, "vendor/own.py", "vendor/out.py", "out.py") == ["vendor/out.py"]


def test_an_info_exclude_of_comments_only_adds_no_probe_to_the_walk(tmp_path: Path) -> None:
    """Git's template writes comments only: no pattern, so no file of the walk is asked about it."""
    from declint.discovery import _info_exclude

    _files(tmp_path, {".git/info/exclude": "# git ls-files --others --exclude-from=.git/info/exclude\n# *.o\n"})
    assert _info_exclude(str(tmp_path)) == ()
    config = load_config(None, default_root=tmp_path, known_codes=frozenset())
    assert not _Filter(config).listed(str(tmp_path), [])


def test_module_names_read_namespace_packages_inside_packages_as_imports_do(tmp_path: Path) -> None:
    """PEP 420: a directory without __init__.py inside a package is a namespace package
    (`pkg.ns.mod`); one no package holds, or whose name no import can spell, names nothing. The
    engine's names for a tree and `module_name` for one file (fixes, previews) agree."""
    from declint.discovery import module_name
    from declint.engine import _module_names

    expected = {
        "pkg/__init__.py": "pkg",
        "pkg/ns/mod.py": "pkg.ns.mod",
        "pkg/ns/deeper/x.py": "pkg.ns.deeper.x",
        "pkg/ns/sub/__init__.py": "pkg.ns.sub",
        "pkg/ns/sub/m.py": "pkg.ns.sub.m",
        "pkg/my-dir/m.py": "m",
        "top/mod.py": "mod",
        "top/inner/__init__.py": "inner",
        "top/inner/y.py": "inner.y",
        "a/b/c.py": "c",
        # a module beside a directory of its name is what Python imports: the directory is no package
        "pkg/towers.py": "pkg.towers",
        "pkg/towers/vit.py": "vit",
    }
    _files(tmp_path, {rel: "" for rel in expected})
    config = load_config(None, default_root=tmp_path, known_codes=frozenset())
    files = discover([tmp_path], config).files
    assert _module_names(files, str(tmp_path)) == expected
    assert {rel: module_name(tmp_path / rel, tmp_path) for rel in expected} == expected


def test_ignore_files_are_read_as_git_reads_them(tmp_path: Path) -> None:
    """Red-team 50, checked against git 2.39: a leading BOM is no part of the first pattern, and
    a line that is not UTF-8 costs only itself (the whole file was dropped)."""
    _files(tmp_path, {rel: "x = 1\n" for rel in ("a.py", "b.py", "c.py", "d.py")})
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_bytes(b"\xef\xbb\xbfa.py\nz\xff.py\n")
    (tmp_path / ".gitignore").write_bytes(b"\xef\xbb\xbfb.py\nq\xfe.py\nc.py\n")
    assert _walked(tmp_path) == ["d.py"]


def test_ignore_file_lines_are_split_as_git_splits_them(tmp_path: Path) -> None:
    """Red-team 51, checked against git 2.39: only "\\n" ends a pattern (with a "\\r" before it
    dropped); a lone "\\r", a form feed or U+0085 is part of its pattern."""
    _files(tmp_path, {f"{name}.py": "x = 1\n" for name in "abcdefh"})
    (tmp_path / ".gitignore").write_bytes(b"a.py\rb.py\nc.py\x0cd.py\ne.py\xc2\x85f.py\nh.py\r\n")
    assert _walked(tmp_path) == [f"{name}.py" for name in "abcdef"]


@pytest.mark.parametrize(
    "include",
    [("*.py",), ("*.py", "*.pyi"), ("*_model.py",), ("modeling_*.py",), ("*/x.py",), ("*.p[yi]",), ("*",), ("*.py?",)],
)
def test_include_answers_as_its_globs_do_with_or_without_the_suffix_shortcut(
    tmp_path: Path, include: tuple[str, ...]
) -> None:
    """`include` patterns that are "*" and a plain suffix are answered by `str.endswith`; the
    others by their regexes, and both give fnmatch's answer for the name or the rel."""
    import fnmatch

    config = load_config(None, default_root=tmp_path, known_codes=frozenset())
    flt = _Filter(config, include)
    plain = all(p.startswith("*") and not set(p[1:]) & set("*?[]/\\") for p in include)
    assert (flt.suffixes is not None) == plain
    rels = ("a.py", "a/b.py", "a/b.pyi", "x.pyc", "pkg/x.py", "pkg/y_model.py", "modeling_a.py", "py", ".py", "a/.py")
    for rel in rels:
        name = rel.rsplit("/", 1)[-1]
        expected = any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(rel, p) for p in include)
        assert flt.included(rel) is expected, (rel, include)
        assert flt.included(rel, name) is expected, (rel, include)
    root = tmp_path / "tree"
    for rel in ("a.py", "pkg/b.pyi", "pkg/y_model.py", "pkg/x.py", "c.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    config = load_config(None, default_root=root, known_codes=frozenset())
    walked = [item.rel for item in discover([root], config, include=include).files]
    expected_files = [
        rel
        for rel in ("a.py", "c.txt", "pkg/b.pyi", "pkg/x.py", "pkg/y_model.py")
        if any(fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], p) or fnmatch.fnmatchcase(rel, p) for p in include)
    ]
    assert walked == expected_files


@pytest.mark.parametrize(
    ("include", "included"),
    [
        ('["*.py"]', ["a.py", "pkg/x_model.py", "vendor/ignored.py"]),
        ('["*_model.py", "vendor/*"]', ["pkg/x_model.py", "vendor/ignored.py"]),
    ],
)
def test_files_known_from_the_last_walk_are_the_files_discovery_gives_for_them(
    tmp_path: Path, include: str, included: list[str]
) -> None:
    """A run the snapshot answers takes the files passed by path from the last walk (the index's,
    of every `.py` file) instead of discovering them: for each file it answers, the answer is
    discovery's; a file the walk did not find as given (excluded, ignored, reached through a
    symlink) is left to discovery (None)."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "vendor" / ".git").mkdir(parents=True)
    contents = {
        "pyproject.toml": f'[tool.declint]\ninclude = {include}\nexclude = ["build/", "skip_me.py"]\n',
        ".gitignore": "ignored.py\n",
        "a.py": "",
        "ignored.py": "",
        "pkg/x_model.py": "",
        "pkg/skip_me.py": "",
        "build/gen_model.py": "",
        "vendor/ignored.py": "",  # a nested repository: the root's .gitignore does not apply
    }
    _files(root, contents)
    (root / "link").symlink_to("pkg")
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset())
    walked = {item.rel: (item.path,) for item in discover([root], config, include=INDEX_INCLUDE).files}
    assert sorted(walked) == ["a.py", "pkg/x_model.py", "vendor/ignored.py"]
    paths = [str(root / rel) for rel in contents if rel.endswith(".py")] + [str(root / "link" / "x_model.py")]
    answered = []
    for path in paths:
        known = known_files([path], config, walked)
        expected = tuple(item.rel for item in discover([Path(path)], config).files)
        assert known is None or known == expected, path
        if known is not None:
            answered.append(path.removeprefix(str(root) + "/"))
    assert answered == included
    everything = [str(root / rel) for rel in [*reversed(answered), answered[0]]]  # unsorted, one twice
    wanted = tuple(item.rel for item in discover([Path(p) for p in everything], config).files)
    assert known_files(everything, config, walked) == wanted
    assert wanted == tuple(included)


def test_an_empty_glob_list_matches_nothing_without_importing_pathspec() -> None:
    """`sdpa-allowed-paths = []` (and any list option set empty) is asked of every file a rule
    may check: the answer needs no pattern compiled, so a one-file run never imports pathspec."""
    import subprocess
    import sys

    probe = (
        "import sys, types\nfrom declint.discovery import DirectoryMatcher, glob_match\n"
        "answers = [glob_match('a/b.py', ()), DirectoryMatcher(())('a/b.py')]\n"
        "print(answers, type(sys.modules.get('pathspec')) is types.ModuleType)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "[False, False] False\n"
    assert glob_match("a/b.py", ("a/",)) and not glob_match("a/b.py", ("c/",))
