"""Small user scripts written for profile's tests (shared by the test modules here)."""
import textwrap
from pathlib import Path


def write_script(folder: Path, body: str, name: str = "train.py") -> Path:
    """``body`` dedented into ``folder/name``."""
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def line_of(path: Path, needle: str) -> int:
    """The 1-based number of the first line of ``path`` that holds ``needle``."""
    for number, text in enumerate(path.read_text().splitlines(), 1):
        if needle in text:
            return number
    raise AssertionError(needle)
