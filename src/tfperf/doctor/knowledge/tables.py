"""Reading the packaged CSV tables: once per process, from the files (importlib.resources if
the package is zipped)."""

from __future__ import annotations

import csv
import functools
import io
from pathlib import Path

OSES = ("linux", "windows", "wsl", "macos")


_DATA = Path(__file__).with_name("data")


@functools.cache
def read_table(name: str) -> tuple[dict[str, str], ...]:
    """Rows of ``data/<name>`` as dicts (cached; callers must not mutate them)."""
    if _DATA.is_dir():  # installed as files (the usual case): skip importlib.resources' imports
        text = (_DATA / name).read_text(encoding="utf-8")
    else:  # pragma: no cover - a zipped install
        from importlib import resources

        data = resources.files(__package__).joinpath("data")
        text = data.joinpath(name).read_text(encoding="utf-8")
    return tuple(csv.DictReader(io.StringIO(text)))


def table_os(os: str) -> str:
    """The table an OS reads: WSL2 runs the Linux wheels, so it reads the Linux rows."""
    if os not in OSES:
        raise ValueError(f"unknown os {os!r}; expected one of {', '.join(OSES)}")
    return "linux" if os == "wsl" else os


def truthy(cell: str) -> bool:
    return cell.strip().lower() in ("true", "1", "yes")
