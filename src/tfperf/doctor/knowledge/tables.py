"""Reading the packaged CSV tables: once per process, through importlib.resources."""

from __future__ import annotations

import csv
import functools
import io
from importlib import resources

OSES = ("linux", "windows", "wsl", "macos")


@functools.cache
def read_table(name: str) -> tuple[dict[str, str], ...]:
    """Rows of ``data/<name>`` as dicts (cached; callers must not mutate them)."""
    text = resources.files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    return tuple(csv.DictReader(io.StringIO(text)))


def table_os(os: str) -> str:
    """The table an OS reads: WSL2 runs the Linux wheels, so it reads the Linux rows."""
    if os not in OSES:
        raise ValueError(f"unknown os {os!r}; expected one of {', '.join(OSES)}")
    return "linux" if os == "wsl" else os


def truthy(cell: str) -> bool:
    return cell.strip().lower() in ("true", "1", "yes")
