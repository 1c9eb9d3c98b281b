"""JUnit XML: one test suite per file with findings, one failed test case per finding.

A clean run is one passing test case, so CI test-report views show that declint ran. No
timestamps or durations: the same findings give the same bytes. Every attribute and text is
written with its control characters escaped (`\\x01`): XML 1.0 cannot hold most of them even as
character references, and one of them in a file name made the whole report unreadable.
"""

from __future__ import annotations

from itertools import groupby
from typing import TYPE_CHECKING

from declint.reporting.model import TOOL_NAME, Item, Report
from declint.reporting.text_format import finding_line
from declint.types import escape_controls

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET
else:
    from declint.lazy import lazy_module

    ET = lazy_module("xml.etree.ElementTree")  # ~3 ms to import: only a junit report needs it


def render(report: Report) -> str:
    failures = str(len(report.items))
    suites = ET.Element("testsuites", name=TOOL_NAME, tests=str(max(1, len(report.items))), failures=failures)
    suites.set("errors", "0")
    if not report.items:
        suite = ET.SubElement(suites, "testsuite", name=TOOL_NAME, tests="1", failures="0", errors="0", skipped="0")
        ET.SubElement(suite, "testcase", name=f"{TOOL_NAME} check", classname=TOOL_NAME)
    for path, group in groupby(report.items, key=lambda item: item.finding.path):
        items = list(group)
        suite = ET.SubElement(suites, "testsuite", name=_path(report, path), tests=str(len(items)))
        suite.set("failures", str(len(items)))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        for item in items:
            _case(suite, item, report)
    ET.indent(suites, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _case(suite: ET.Element, item: Item, report: Report) -> None:
    finding = item.finding
    path = _path(report, finding.path)
    case = ET.SubElement(
        suite,
        "testcase",
        name=f"{finding.code} {finding.name} at {finding.line}:{finding.column + 1}",
        classname=path,
        file=path,
        line=str(finding.line),
    )
    failure = ET.SubElement(case, "failure", message=escape_controls(finding.message), type=finding.code)
    failure.text = finding_line(finding) + (f"\nin {escape_controls(finding.context)}" if finding.context else "")


def _path(report: Report, rel: str) -> str:
    return escape_controls(report.display_path(rel))
