"""TensorFlow's public API by release: which releases have ``tf.sort``, ``tf.Session``,
``tf.keras.layers.Dense``.

The table is read from the real wheels by ``benchmarks/tf_api_table.py`` (each release's wheel file
and sha256 in ``data/tf_api_sources.csv``): ``data/tf_api_by_version.csv.gz`` holds one row per
public symbol with the releases (``minor`` versions, inclusive ranges) that have it. Releases
before the table's first (1.13, the first whose API modules were generated) are unknown to it.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

_DATA = Path(__file__).with_name("data")
TABLE = "tf_api_by_version.csv.gz"
SOURCES = "tf_api_sources.csv"


def version_key(version: str) -> tuple[int, ...]:
    """``"2.16.1"`` -> (2, 16): releases compare by major and minor."""
    parts = version.split(".")[:2]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(f"not a TensorFlow version: {version!r}") from None


@dataclass(frozen=True)
class ApiTable:
    releases: tuple[str, ...]  # "1.13", ..., "2.21", in order
    keras: dict[str, str]  # release -> the Keras it ships ("tf (in the wheel)", "keras 3.0.0")
    rows: dict[str, str]  # symbol -> its ranges, unparsed ("1.13-1.15 2.3")

    def has_symbol(self, symbol: str) -> bool:
        return symbol in self.rows

    def versions(self, symbol: str) -> tuple[str, ...]:
        """The releases that have ``symbol`` (empty if none of the table's does)."""
        cell = self.rows.get(symbol)
        if not cell:
            return ()
        index = {r: i for i, r in enumerate(self.releases)}
        out: list[str] = []
        for part in cell.split():
            first, _, last = part.partition("-")
            if first not in index or (last and last not in index):
                raise ValueError(f"{symbol}: release range {part!r} not in the table")
            out += self.releases[index[first]:index[last or first] + 1]
        return tuple(out)

    @functools.cached_property
    def _by_last(self) -> dict[str, list[str]]:
        """last part -> symbols (built once: a log may ask several names, a long log many)."""
        out: dict[str, list[str]] = {}
        for s in self.rows:
            out.setdefault(s.rpartition(".")[2], []).append(s)
        return out

    @functools.cached_property
    def _by_namespace(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for s in self.rows:
            ns, _, last = s.rpartition(".")
            out.setdefault(ns, []).append(last)
        return out

    def names_in(self, namespace: str) -> list[str]:
        """The last parts of the symbols directly under ``namespace`` (``tf.nn`` -> relu ...)."""
        return list(self._by_namespace.get(namespace, ()))

    def ending_with(self, name: str, release: str) -> list[str]:
        """Symbols of ``release`` whose last part is ``name`` (where a moved name lives now)."""
        return sorted(s for s in self._by_last.get(name, ()) if release in self.versions(s))


def parse(table_text: str, sources_text: str) -> ApiTable:
    """An ``ApiTable`` from the two files' text (the tests pass synthetic ones)."""
    releases: list[str] = []
    keras: dict[str, str] = {}
    for row in csv.DictReader(io.StringIO(sources_text)):
        release = ".".join(row["release"].split(".")[:2])
        version_key(release)  # a clear error for a malformed row
        releases.append(release)
        keras[release] = row.get("keras", "")
    if sorted(releases, key=version_key) != releases:
        raise ValueError("tf_api_sources.csv: releases out of order")
    # symbols and ranges hold no comma or quote: a split reads the 15,000 rows ~5x faster than
    # csv.DictReader (the table is read once, on the first log that names a missing TF name)
    head, _, body = table_text.partition("\n")
    if head.strip() != "symbol,versions":
        raise ValueError(f"tf_api_by_version: unexpected header {head!r}")
    rows = dict(line.split(",", 1) for line in body.splitlines() if line)
    return ApiTable(tuple(releases), keras, rows)


@functools.cache
def api_table() -> ApiTable:
    """The packaged table (read once per process, on first use: only logs that name a missing
    TensorFlow API need it)."""
    with gzip.open(_DATA / TABLE, "rt", encoding="utf-8") as fh:
        table = fh.read()
    return parse(table, (_DATA / SOURCES).read_text(encoding="utf-8"))
