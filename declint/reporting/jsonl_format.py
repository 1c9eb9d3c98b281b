"""JSON Lines: one finding per line, the objects of the json format's `findings` (no summary)."""

from __future__ import annotations

from declint.reporting.json_format import item_to_json
from declint.reporting.model import Report


def render(report: Report) -> str:
    import json

    return "".join(json.dumps(item_to_json(item, report), ensure_ascii=False) + "\n" for item in report.items)
