"""SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

- Paths are relative URIs resolved against `%SRCROOT%` (the project root, given in
  `originalUriBaseIds`), so the report does not depend on where the checkout lives. They encode
  the file's name as the file system holds it, byte for byte.
- Columns are Unicode code points (`columnKind`), 1-based; end columns are exclusive, as SARIF
  defines them. A finding at a point (a suppression comment, a file that does not parse) has no
  end column: its region runs to the end of the line.
- The driver lists every rule with its help text (and `helpUri`, given an absolute `--docs-url`); results
  point at it by index.
- `partialFingerprints["declint/v1"]` is the fingerprint of the json output and the baseline.
- Suppressed results appear only with `--include-suppressed`, with the comment's reason (or the
  baseline) as `justification`.
"""

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from declint.reporting.model import TOOL_NAME, Edit, Item, Report
from declint.types import Finding, Severity

if TYPE_CHECKING:
    from declint.rule import RuleMeta

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "declint/v1"


def render(report: Report) -> str:
    import json

    index = {rule.CODE: number for number, rule in enumerate(report.rules)}
    results = [_result(item, report, index) for item in report.items]
    if report.include_suppressed:
        results += [_result(item, report, index) for item in report.suppressed]
        results.sort(key=lambda r: _order(r))
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": TOOL_NAME,
                "version": report.version,
                "semanticVersion": report.version,
                "rules": [_rule(rule, report) for rule in report.rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": report.root.resolve().as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": True}],
        "results": results,
    }
    if report.docs_url:
        run["tool"]["driver"]["informationUri"] = report.docs_url
    document = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _order(result: dict[str, Any]) -> tuple[str, int, int, str]:
    location = result["locations"][0]["physicalLocation"]
    region = location.get("region", {})
    return (
        location["artifactLocation"]["uri"],
        region.get("startLine", 0),
        region.get("startColumn", 0),
        result["ruleId"],
    )


def _rule(rule: type[RuleMeta], report: Report) -> dict[str, Any]:
    from declint.docs import explain_rule  # declint.docs imports this package: import late

    doc = inspect.cleandoc(rule.__doc__ or "")
    first_paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    # SARIF declares helpUri an absolute URI: without --docs-url there is none to give.
    help_uri = {"helpUri": report.doc_url(rule.CODE, rule.NAME)} if report.docs_url else {}
    return {
        "id": rule.CODE,
        "name": rule.NAME,
        "shortDescription": {"text": rule.SUMMARY},
        "fullDescription": {"text": first_paragraph or rule.SUMMARY},
        "help": {"text": explain_rule(rule), "markdown": _help_markdown(rule, doc, report)},
        **help_uri,
        "defaultConfiguration": {
            "enabled": rule.CODE in report.rule_codes,
            "level": _level(rule.SEVERITY),
        },
        "properties": {"tags": ["declint", rule.NAME]},
    }


def _help_markdown(rule: type[RuleMeta], doc: str, report: Report) -> str:
    parts = [f"**{rule.CODE} {rule.NAME}**: {rule.SUMMARY}", doc]
    if rule.FIX:
        parts.append(f"**Autofix**: {rule.FIX}")
    for title, examples in (("Valid", rule.VALID), ("Invalid", rule.INVALID)):
        if examples:
            parts.append(f"{title} example (`{examples[0].path}`):\n\n```python\n{examples[0].code.rstrip()}\n```")
    where = report.doc_url(rule.CODE, rule.NAME)
    # A link only to an absolute URL: a relative one is broken wherever the SARIF is shown.
    parts.append(f"[Documentation]({where})" if report.docs_url else f"Documentation: `{where}` in declint's sources")
    return "\n\n".join(parts)


def _level(severity: Severity) -> str:
    return "error" if severity is Severity.ERROR else "warning"


def _result(item: Item, report: Report, index: dict[str, int]) -> dict[str, Any]:
    finding = item.finding
    result: dict[str, Any] = {"ruleId": finding.code}
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    result["level"] = _level(finding.severity)
    result["message"] = {"text": finding.message}
    location: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": artifact(report.file_name(finding.path)), "region": _region(finding)}
    }
    if finding.context:
        location["logicalLocations"] = [{"fullyQualifiedName": finding.context}]
    result["locations"] = [location]
    result["partialFingerprints"] = {FINGERPRINT_KEY: item.fingerprint}
    if item.fix is not None:
        result["fixes"] = [
            {
                "description": {"text": f"{item.fix.description} ({item.fix.applicability.value} fix)"},
                "artifactChanges": [
                    {
                        "artifactLocation": artifact(report.file_name(finding.path)),
                        "replacements": [_replacement(e) for e in item.fix.edits],
                    }
                ],
            }
        ]
    if item.justification is not None:
        result["suppressions"] = [{"kind": item.suppression_kind, "justification": item.justification}]
    if report.baseline is not None:
        result["baselineState"] = "unchanged" if item.suppression_kind == "external" else "new"
    return result


def artifact(name: str) -> dict[str, str]:
    """The artifact location of the file the file system calls `name`: its bytes percent-encoded
    (a name that is not UTF-8 is `bad_%FF.py`, not the escaped text the other formats show)."""
    encoded = quote(os.fsencode(name))
    if name.startswith("/"):
        return {"uri": "file://" + encoded}
    return {"uri": encoded, "uriBaseId": SRCROOT}


def _region(finding: Finding) -> dict[str, int]:
    start, end = finding.span.start, finding.span.end
    region = {"startLine": start.line, "startColumn": start.column + 1}
    if (end.line, end.column) > (start.line, start.column):
        region["endLine"] = end.line
        region["endColumn"] = end.column + 1
    return region


def _replacement(edit: Edit) -> dict[str, Any]:
    return {
        "deletedRegion": {
            "startLine": edit.start.line,
            "startColumn": edit.start.column + 1,
            "endLine": edit.end.line,
            "endColumn": edit.end.column + 1,
        },
        "insertedContent": {"text": edit.content},
    }
