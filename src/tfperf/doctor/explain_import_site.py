"""The module a bare ``cannot import name 'X'`` came from, read from the import line above it.

Python before 3.7 (and a notebook's short form) prints ``ImportError: cannot import name 'abs'``
without the module; the traceback's code line just above it (``from
tensorflow.python.keras._impl.keras.backend import abs``, IPython's ``---> 22 from ...``) names
it. The message completed with that module reads like Python 3.7's ``cannot import name 'abs'
from 'tensorflow.python...'``, so the rows that read the module (tf-installs-mixed) apply to it.
"""

from __future__ import annotations

import re

_BARE = re.compile(r"^\s*(?:ImportError: )?cannot import name '(?P<name>\w+)'\s*$")
_FROM = re.compile(r"^\s*(?:-*>\s*)?(?:\d+\s+)?from (?P<module>[\w.]+) import (?P<names>[^\n]+)$")
_LOOK_BACK = 12  # lines above the message searched for its import line


def bare_import_heads(lines: list[str], matched: set[int]) -> list[tuple[int, str]]:
    """(line index, the message with the module its import line names) for each bare message
    no row matched whose traceback shows the import line of that name."""
    heads: list[tuple[int, str]] = []
    for li, raw in enumerate(lines):
        if li in matched or "cannot import name '" not in raw or (m := _BARE.match(raw)) is None:
            continue
        for above in reversed(lines[max(0, li - _LOOK_BACK):li]):
            got = _FROM.match(above)
            if got and m["name"] in re.findall(r"\w+", got["names"]):
                heads.append((li, f"{raw.rstrip()} from '{got['module']}'"))
                break
    return heads
