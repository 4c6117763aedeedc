"""A file of the user's named like a standard-library module, reached by an import on the traceback.

Python puts the script's folder first on sys.path, so a ``grp.py`` or ``code.py`` next to the
script is imported by every ``import grp`` / ``import code``, TensorFlow's and its dependencies'
included (``tarfile.py ... import grp`` then ``File "/tmp/x/grp.py"``). The reading is generic: the
imported name is a standard-library module (``sys.stdlib_module_names``) and the frame that runs
right after the import line is a file of that name outside site-packages and the standard library.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass

# folders where a module of that name is the real one (the installed Python or a package)
_INSTALLED = re.compile(r"site-packages|dist-packages|<frozen|\.zip[/\\]|\.egg[/\\]")

# 3.10+ lists the names; an older interpreter falls back to the modules most often shadowed
_STDLIB: frozenset[str] = frozenset(getattr(sys, "stdlib_module_names", ())) or frozenset({
    "abc", "argparse", "array", "ast", "base64", "bisect", "calendar", "code", "collections",
    "copy", "csv", "datetime", "decimal", "email", "enum", "functools", "glob", "grp", "hashlib",
    "heapq", "html", "http", "inspect", "io", "json", "logging", "math", "numbers", "operator",
    "os", "pickle", "platform", "queue", "random", "re", "select", "signal", "socket", "ssl",
    "stat", "string", "struct", "subprocess", "tarfile", "tempfile", "test", "threading", "time",
    "token", "tokenize", "types", "typing", "unittest", "uuid", "warnings", "weakref", "zipfile"})


@dataclass(frozen=True)
class Shadow:
    line: int  # 0-based index of the user file's frame line
    module: str  # the standard-library name it shadows
    path: str  # the user's file as the traceback names it
    importer: str  # the file whose import reached it


def _is_the_real_one(path: str, module: str) -> bool:
    if _INSTALLED.search(path):
        return True
    # the standard library itself: .../lib/python3.10/grp.py, C:\Python38\Lib\code.py,
    # .../Lib/email/__init__.py
    tail = rf"(?:{re.escape(module)}\.py|{re.escape(module)}[/\\]__init__\.py)$"
    return re.search(rf"[/\\][Ll]ib(?:[/\\]python\d[\d.]*)?[/\\]{tail}", path) is not None


def _own_module(path: str) -> str | None:
    """The top-level module a frame's file would be imported as (grp.py, random/__init__.py)."""
    parts = path.replace("\\", "/").rsplit("/", 2)
    name = parts[-1]
    if name == "__init__.py" and len(parts) > 1:
        return parts[-2]
    return name[:-3] if name.endswith(".py") else None


_FRAME_PATH = re.compile(r'File "([^"\n]*)"')


def _suspects(text: str) -> bool:
    """Whether any frame runs a file named like a standard module outside the installed Python:
    the distinct quoted paths only (a log repeats its frames), so a log without one costs one
    C-level pass and no per-frame regex."""
    for path in set(_FRAME_PATH.findall(text)):
        mod = _own_module(path)
        if mod in _STDLIB and not _is_the_real_one(path, mod):
            return True
    return False


# from a frame's 'File "': its path and, when the next line is one, the top-level module its code
# line imports (found by str.find first: a scan from every line start costs 5 ms on 10,000 lines)
_FRAME_IMPORT = re.compile(
    r'File "(?P<path>[^"\n]+)", line \d+[^\n]*\n'
    r'(?:[ \t]*(?:import|from)[ \t]+(?P<mod>[A-Za-z_]\w*)(?![\w]))?')


def _frames(text: str) -> Iterator[re.Match[str]]:
    at = text.find('File "')
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        if not text[start:at].strip():  # the frame line's own indent only
            m = _FRAME_IMPORT.match(text, at)
            if m:
                yield m
        at = text.find('File "', at + 6)


def find_shadow(text: str) -> Shadow | None:
    """The first frame where an ``import X`` line (X a standard-library module) is followed by a
    frame running the user's own X.py; None when no traceback shows that."""
    if not _suspects(text):
        return None
    importer, wanted = "", ""  # the last frame's file and the stdlib module its code line imports
    for m in _frames(text):
        path = m.group("path")
        if "<frozen" in path:  # importlib's own frames may sit between the import and the file
            continue
        if wanted and _own_module(path) == wanted and not _is_the_real_one(path, wanted):
            return Shadow(text.count("\n", 0, m.start()), wanted, path, importer)
        mod = m.group("mod") or ""
        importer, wanted = path, mod if mod in _STDLIB else ""
    return None
