"""Documentation and registry stay in step with the code."""

from __future__ import annotations

import json
import pkgutil
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import declint.rules as rules_package
from declint.cli import cli
from declint.config import OPTIONS, load_config
from declint.docs import rules_document, rules_table, with_generated_tables
from declint.index import ProjectIndex
from declint.rule import FileGate, ProjectRule
from declint.rule_set import LazyRules, RuleEntry, rules_of_kind
from declint.rules import ALL_RULES, RULES_BY_CODE
from tests.conftest import REPO

# Keys the engine itself reads (discovery, selection, index); every other key must be some rule's.
ENGINE_KEYS = {
    "roots",
    "include",
    "exclude",
    "respect-gitignore",
    "select",
    "ignore",
    "per-path-ignores",
    "model-decorators",
    "model-mixins",
    "modality-encoders",
    "encoder-name-hints",
    "shared-literal",
    "declaration-attribute",
    "fixed-marker",
    "metadata-base",
    "backend-base",
    "check-syntax",
    "syntax-paths",
    "jobs",
    "cache-dir",
    "file-timeout",
    "max-file-size",
    "worker-stack-mib",
    "worker-memory-mib",
}


def test_every_rule_module_is_registered_once() -> None:
    modules = {m.name for m in pkgutil.iter_modules(rules_package.__path__)}
    registered = {rule.__module__.rpartition(".")[2] for rule in ALL_RULES}
    assert modules == registered
    codes = [rule.CODE for rule in ALL_RULES]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"DL\d{3}", code) for code in codes)


def test_the_registry_names_each_rule_by_its_own_code_without_importing_it() -> None:
    assert ALL_RULES.codes == tuple(rule.CODE for rule in ALL_RULES)
    assert list(RULES_BY_CODE) == list(ALL_RULES.codes) and RULES_BY_CODE["DL101"].__name__ == "DirectSdpa"
    wrong = LazyRules([RuleEntry("DL999", "declint.rules.parse_error", "ParseError", "engine")])
    assert wrong.codes == ("DL999",) and len(wrong) == 1  # known without an import
    with pytest.raises(
        RuntimeError,
        match=re.escape("declint.rules.parse_error.ParseError has the code DL000, but the registry says DL999"),
    ):
        list(wrong)


def test_the_registry_names_each_rules_kind_and_a_kind_imports_only_its_modules() -> None:
    """A run after an edit asks for the per-file rules only: the project rules' modules stay unimported."""
    assert [entry.kind for entry in ALL_RULES.entries] == [
        "engine", "project", "file", "file", "file", "file", "fact", "file", "project", "project",
        "engine", "engine", "engine", "engine",
    ]  # fmt: skip
    assert rules_of_kind(ALL_RULES, FileGate) == tuple(r for r in ALL_RULES if issubclass(r, FileGate))
    assert [r.CODE for r in rules_of_kind(ALL_RULES, ProjectRule)] == ["DL100", "DL107", "DL108"]
    registry = LazyRules(
        [
            RuleEntry("DL101", "declint.rules.direct_sdpa", "DirectSdpa", "file"),
            RuleEntry("DL998", "declint.rules.no_such_module", "Missing", "project"),
        ]
    )
    assert [r.CODE for r in rules_of_kind(registry, FileGate)] == ["DL101"]  # the missing module is not asked for
    assert registry.by_code()["DL101"].__name__ == "DirectSdpa"
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        rules_of_kind(registry, ProjectRule)
    wrong = LazyRules([RuleEntry("DL101", "declint.rules.direct_sdpa", "DirectSdpa", "project")])
    with pytest.raises(
        RuntimeError,
        match=re.escape("declint.rules.direct_sdpa.DirectSdpa is of the kind file, but the registry says project"),
    ):
        rules_of_kind(wrong, ProjectRule)


def test_a_gated_rule_names_its_own_needles_and_says_no_without_them(tmp_path: Path) -> None:
    """The registry's needles of DL103, DL104 and DL106 (a check imports such a rule only for a
    file holding one) are the rules' own, on the default configuration and on one that changes
    them; none asks for files to be indexed; and each rule's prefilter says no to every file of
    the demo without them (yes to some with them)."""
    (tmp_path / "declint.toml").write_text(
        'backend-context-names = ["*chosen_path*"]\nbackend-functions = ["pick"]\n'
        'declaration-attribute = "_encoder_backends"\n',
        encoding="utf-8",
    )
    known = frozenset(ALL_RULES.codes)
    configs = [load_config(None, default_root=REPO, known_codes=known)]
    configs.append(load_config(tmp_path / "declint.toml", default_root=tmp_path, known_codes=known))
    gated = [entry for entry in ALL_RULES.entries if entry.needles is not None]
    assert [entry.code for entry in gated] == ["DL103", "DL104", "DL106"]
    assert gated[0].needles(configs[1]) == (b"CHOSEN_PATH", b"PICK", b"chosen_path", b"pick")
    assert gated[1].needles(configs[1]) == (b"_encoder_backends",)
    sources = [path.read_bytes() for path in sorted((REPO / "examples" / "mini_trtllm").rglob("*.py"))]
    for entry in gated:
        rule = RULES_BY_CODE[entry.code]
        assert issubclass(rule, FileGate)
        for config in configs:
            index = ProjectIndex.build([], config)
            needles = entry.needles(config)
            assert needles == rule.needles(config, index) and rule.index_needles(config) == ()
            holding = [any(needle in data for needle in needles) for data in sources]
            said = [rule.prefilter(data, config, index) for data in sources]
            assert not any(yes and not held for yes, held in zip(said, holding, strict=True)), entry.code
        assert any(rule.prefilter(data, configs[0], ProjectIndex.build([], configs[0])) for data in sources)


def test_every_option_is_read_by_someone() -> None:
    read = ENGINE_KEYS | {key for rule in ALL_RULES for key in rule.OPTIONS}
    assert {spec.key for spec in OPTIONS} == read


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    assert (REPO / "docs" / "rules.md").read_text(encoding="utf-8") == rules_document(ALL_RULES), (
        "docs/rules.md is stale: run `python -m declint.docs --write`"
    )


def test_readme_tables_match_the_code() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert with_generated_tables(readme, ALL_RULES) == readme, (
        "README tables are stale: run python -m declint.docs --write"
    )
    assert rules_table(ALL_RULES, "markdown") in readme
    for spec in OPTIONS:
        assert f"| `{spec.key}` | {spec.kind} | `{json.dumps(spec.default)}` | {spec.help} |" in readme


def test_readme_first_screen_has_exactly_two_setup_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_block = readme.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["pip install . && declint check examples/mini_trtllm", "pip install -e '.[test]' && pytest"]


def test_rule_command_explains_with_examples() -> None:
    result = CliRunner().invoke(cli, ["rule", "dl101"])
    assert result.exit_code == 0
    assert result.output.startswith("DL101 direct-sdpa: encoder code calls scaled-dot-product attention directly\n")
    assert "Invalid example 1" in result.output and "sdpa-allowed-paths" in result.output
    unknown = CliRunner().invoke(cli, ["rule", "DL10"])
    assert unknown.exit_code == 2
    assert 'unknown rule code "DL10"' in unknown.output


def test_rules_command_lists_every_code() -> None:
    result = CliRunner().invoke(cli, ["rules", "--format", "json"])
    assert [row["code"] for row in json.loads(result.output)] == [rule.CODE for rule in ALL_RULES]


def test_every_rule_explanation_shows_an_invalid_example() -> None:
    for rule_class in ALL_RULES:
        result = CliRunner().invoke(cli, ["rule", rule_class.CODE])
        assert result.exit_code == 0
        assert "Invalid example 1" in result.output, rule_class.CODE


def test_every_rule_whose_findings_carry_fixes_says_so_in_its_explanation() -> None:
    """`declint rule CODE` tells what --fix does: the rules whose findings carry fixes in the
    demo's golden report (DL102, DL104) and the suppression hygiene's DL902, and no other."""
    golden = json.loads((REPO / "tests" / "golden" / "demo.json").read_text(encoding="utf-8"))
    fixing = {f["code"] for f in golden["findings"] if f["fix"]} | {"DL902"}
    assert fixing == {"DL102", "DL104", "DL902"}
    assert {rule.CODE for rule in ALL_RULES if rule.FIX} == fixing
    explained = CliRunner().invoke(cli, ["rule", "DL104"]).output
    assert "Autofix:\n  safe: a backend name in the wrong case becomes the member" in explained
    rows = json.loads(CliRunner().invoke(cli, ["rules", "--format", "json"]).output)
    assert {row["code"] for row in rows if row["fix"]} == fixing
