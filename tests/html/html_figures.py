"""Reading a page's figures back: each shown figure's JSON path, value, unit and text, and
the text parsed back to a number by its unit, to compare with the JSON document."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from typing import Any

SECONDS = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
BYTES = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def lookup(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def _number(text: str) -> tuple[float, float]:
    """A number as shown, and half a unit of its last digit (the rounding it may carry)."""
    text = text.replace(",", "")
    mantissa = text.split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    exponent = int(text.split("e")[1]) if "e" in text else 0
    return float(text), 0.5 * 10.0 ** (exponent - decimals)


def parse_shown(text: str, unit: str) -> tuple[float, float]:
    """(value, tolerance) of a figure's text: ``12.3 ms`` → (0.0123, 5e-5)."""
    text = text.strip()
    if unit == "s":
        m = re.fullmatch(r"(-?[\d.,]+) (s|ms|µs|ns)", text)
        assert m, text
        x, tol = _number(m.group(1))
        return x * SECONDS[m.group(2)], tol * SECONDS[m.group(2)]
    if unit == "x" or (unit == "%" and text.endswith("×")):
        x, tol = _number(text.rstrip("×"))
        return x, tol
    if unit == "%":
        m = re.fullmatch(r"(-?[\d.,]+) %", text)
        assert m, text
        x, tol = _number(m.group(1))
        return x / 100, tol / 100
    if unit == "B":
        m = re.fullmatch(r"([\d.e+-]+) (B|KiB|MiB|GiB)", text)
        assert m, text
        x, tol = _number(m.group(1))
        return x * BYTES[m.group(2)], tol * BYTES[m.group(2)]
    return _number(text)  # n, g


def check_figures(figures: list[dict[str, str]], data: dict[str, Any]) -> int:
    """Every figure equals the JSON's value at its path, and its text shows that value.
    Returns how many were checked."""
    for f in figures:
        expected = lookup(data, f["path"])
        if f["unit"] == "t":  # a string, shown as it is
            assert f["value"] == expected, (f, expected)
            assert f["text"].split() == expected.split(), (f, expected)  # as the browser wraps
            continue
        assert isinstance(expected, (int, float)), f
        assert float(f["value"]) == expected, (f, expected)
        shown, tol = parse_shown(f["text"], f["unit"])
        # a ratio shown with 3 significant figures: half a unit of its last digit
        assert math.isclose(shown, expected, rel_tol=1e-9, abs_tol=tol * 1.0001), (f, expected)
    return len(figures)


class _Figures(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[dict[str, str]] = []
        self._open: list[dict[str, str] | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        entry = None
        if a.get("data-path"):
            entry = {"path": a["data-path"] or "", "value": a.get("data-value") or "",
                     "unit": a.get("data-unit") or "", "text": ""}
            self.found.append(entry)
        self._open.append(entry)

    def handle_endtag(self, tag: str) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for entry in self._open:
            if entry is not None:
                entry["text"] += data


def figures_in(page: str) -> list[dict[str, str]]:
    """The figures of a page, read by Python's HTML parser (no browser)."""
    parser = _Figures()
    parser.feed(page)
    return parser.found
