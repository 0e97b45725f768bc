"""The text and JSON forms of the profiler's aggregate statistics (what ``dumps()`` returns).

Pure formatting of ``{(category, name): [count, total, min, max]}`` tables, kept apart from
:mod:`mxjax.profiler`, which owns the tables and the lock that guards them.
"""
from __future__ import annotations

import json
from typing import Any

_SORT_KEYS = ("total", "avg", "min", "max", "count")


def _sorted_rows(table: dict, sort_by: str, ascending: bool) -> dict[str, list]:
    """{category: [(name, count, total, min, max, avg)]} sorted within each category."""
    order = {"count": 1, "total": 2, "min": 3, "max": 4, "avg": 5}[sort_by]  # its position in a row
    by_category: dict[str, list] = {}
    for (category, name), (count, total, low, high) in table.items():
        by_category.setdefault(category, []).append((name, count, total, low, high, total / count))
    return {category: sorted(rows, key=lambda r: r[order], reverse=not ascending)
            for category, rows in sorted(by_category.items())}


def _table(title: str, header: tuple[str, ...], rows: list, scale: float) -> str:
    lines = [title, "=================", f"{'Name':<30}" + "".join(f"{h:>17}" if i else f"{h:>11}"
                                                                   for i, h in enumerate(header))]
    lines.append(f"{'----':<30}" + "".join(f"{'-' * len(h):>17}" if i else f"{'-' * len(h):>11}"
                                           for i, h in enumerate(header)))
    for name, count, total, low, high, avg in rows:
        values = (total, low, high, avg) if len(header) == 5 else (low, high, avg)
        lines.append(f"{name:<29} {count:>11}" + "".join(f"{v * scale:>17.4f}" for v in values))
    return "\n".join(lines) + "\n"


def _render(times: dict[str, list], counters: dict[str, list], format: str) -> str:  # noqa: A002
    """``dumps()``'s text: ``times``/``counters`` are :func:`_sorted_rows` of the two tables."""
    if format == "json":
        fields = ("Count", "Total", "Min", "Max", "Avg")
        result: dict[str, Any] = {"Time": {c: {r[0]: dict(zip(fields, (r[1], *(v / 1000 for v in r[2:]))))
                                               for r in rows} for c, rows in times.items()}}
        if counters:
            result["Counter"] = {c: {r[0]: {"Count": r[1], "Min": r[3], "Max": r[4], "Avg": r[5]}
                                     for r in rows} for c, rows in counters.items()}
        result["Unit"] = {"Time": "ms"}
        return json.dumps(result, indent=4)
    parts = ["\nProfile Statistics:\n\tNote the difference in units for different entries.\n"]
    time_header = ("Total Count", "Time (ms)", "Min Time (ms)", "Max Time (ms)", "Avg Time (ms)")
    parts += [_table(c, time_header, rows, 1e-3) + "\n" for c, rows in times.items()]
    value_header = ("Total Count", "Min Value", "Max Value", "Avg Value")
    parts += [_table(f"{c},counter", value_header, rows, 1.0) + "\n" for c, rows in counters.items()]
    return "".join(parts)
