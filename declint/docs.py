"""Rule documentation, generated from the rule classes themselves (docstring, options, examples)."""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Sequence

from declint.config import OPTIONS
from declint.reporting.json_format import doc_anchor
from declint.rule import EngineCode, Invalid, ProjectRule, RuleMeta, Valid

_OPTION_HELP = {spec.key: spec for spec in OPTIONS}


def kind_of(rule: type[RuleMeta]) -> str:
    if issubclass(rule, EngineCode):
        return "engine"
    return "project" if issubclass(rule, ProjectRule) else "file"


def explain_rule(rule: type[RuleMeta]) -> str:
    parts = [f"{rule.CODE} {rule.NAME}: {rule.SUMMARY}", "", inspect.cleandoc(rule.__doc__ or ""), ""]
    if rule.OPTIONS:
        parts.append("Options ([tool.declint]):")
        for key in rule.OPTIONS:
            spec = _OPTION_HELP[key]
            parts.append(f"  {key} ({spec.kind}, default {json.dumps(spec.default)}): {spec.help}")
        parts.append("")
    if rule.FIX:
        parts += ["Autofix:", *textwrap.wrap(rule.FIX, 94, initial_indent="  ", subsequent_indent="  "), ""]
    sections: tuple[tuple[str, Sequence[Valid | Invalid]], ...] = (("Valid", rule.VALID), ("Invalid", rule.INVALID))
    for title, examples in sections:
        for number, example in enumerate(examples[:2], 1):
            parts.append(f"{title} example {number} ({example.path}):")
            parts.extend("    " + line for line in example.code.rstrip("\n").splitlines())
            message = getattr(example, "message", None)
            if message:
                parts.append(f"  -> {rule.CODE} {message}")
            parts.append("")
    parts.append(f"Documentation: {doc_anchor(rule.CODE, rule.NAME)}")
    return "\n".join(parts) + "\n"


def rules_table(rules: Sequence[type[RuleMeta]], output_format: str) -> str:
    if output_format == "json":
        rows = [
            {
                "code": r.CODE,
                "name": r.NAME,
                "summary": r.SUMMARY,
                "kind": kind_of(r),
                "options": list(r.OPTIONS),
                "fix": r.FIX or None,
            }
            for r in rules
        ]
        return json.dumps(rows, indent=2) + "\n"
    if output_format == "markdown":
        lines = ["| code | name | checks |", "|---|---|---|"]
        lines += [f"| {r.CODE} | {r.NAME} | {r.SUMMARY} |" for r in rules]
        return "\n".join(lines) + "\n"
    return "".join(f"{r.CODE}  {r.NAME:<28} {r.SUMMARY}\n" for r in rules)


def rules_document(rules: Sequence[type[RuleMeta]]) -> str:
    """docs/rules.md: every rule's explanation, in registry order."""
    parts = ["# declint rules", "", "Generated from the rule classes by `python -m declint.docs --write`.", ""]
    parts.append(rules_table(rules, "markdown"))
    for rule in rules:
        parts += [f"## {rule.CODE} {rule.NAME}", "", "```text", explain_rule(rule).rstrip("\n"), "```", ""]
    return "\n".join(parts)


def options_table() -> str:
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| `{s.key}` | {s.kind} | `{json.dumps(s.default)}` | {s.help} |" for s in OPTIONS]
    return "\n".join(lines) + "\n"


def with_generated_tables(readme: str, rules: Sequence[type[RuleMeta]]) -> str:
    """README.md with the text between its generated-table markers regenerated."""
    for name, table in (("rules", rules_table(rules, "markdown")), ("options", options_table())):
        start, end = f"<!-- generated:{name} -->\n", f"<!-- /generated:{name} -->"
        head, _, rest = readme.partition(start)
        _, _, tail = rest.partition(end)
        readme = f"{head}{start}{table}{end}{tail}"
    return readme


if __name__ == "__main__":
    import sys
    from pathlib import Path

    from declint.rules import ALL_RULES

    repo = Path(__file__).resolve().parent.parent
    if "--write" in sys.argv:
        (repo / "docs" / "rules.md").write_text(rules_document(ALL_RULES), encoding="utf-8")
        readme = repo / "README.md"
        readme.write_text(with_generated_tables(readme.read_text(encoding="utf-8"), ALL_RULES), encoding="utf-8")
    else:
        sys.stdout.write(rules_document(ALL_RULES))
