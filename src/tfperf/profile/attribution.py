"""Which line of the user's code caused an event: the innermost frame outside libraries.

Every observed event (an eager op, a host sync, a ``tf.function`` call) happens deep inside
TensorFlow; the line worth reporting is the caller's. Deciding whether a code object is
"library" costs a path check, so the verdict is cached per code object and the per-event cost
is a short frame walk with dictionary look-ups.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
from pathlib import Path
from types import CodeType, FrameType

_TFPERF_DIR = str(Path(__file__).resolve().parents[1]) + os.sep
# The bundled examples are user code for the purpose of attribution (the case study).
_TFPERF_USER_DIRS = (str(Path(_TFPERF_DIR) / "examples") + os.sep,)


def _library_prefixes() -> tuple[str, ...]:
    prefixes = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            prefixes.add(str(Path(path).resolve()) + os.sep)
    for path in sys.path:  # other site-packages folders (user site, virtualenvs)
        if path.rstrip(os.sep).endswith(("site-packages", "dist-packages")):
            prefixes.add(str(Path(path).resolve()) + os.sep)
    return tuple(sorted(prefixes))


def installed_elsewhere(entries: list[str]) -> tuple[str, ...]:
    """Packages pip installed into a folder put on the path (``pip install --target``,
    PYTHONPATH): ``<folder>/<package>/`` for each top-level name a ``.dist-info`` there lists.
    Third-party code, though not under site-packages; the user's own folders have no
    ``.dist-info`` next to their code."""
    out = set()
    for entry in entries:
        if not entry or entry.rstrip(os.sep).endswith(("site-packages", "dist-packages")):
            continue
        try:
            infos = [d for d in os.scandir(entry) if d.name.endswith(".dist-info")]
        except OSError:
            continue
        root = str(Path(entry).resolve())
        for info in infos:
            try:
                record = Path(info.path, "RECORD").read_text(encoding="utf-8")
            except OSError:
                continue
            for row in record.splitlines():
                top = row.split(",", 1)[0].split("/", 1)[0]
                if top and not top.endswith((".dist-info", ".data")) and top not in ("..", "bin"):
                    out.add(os.path.join(root, top.removesuffix(".py")) +
                            ("" if top.endswith(".py") else os.sep))
    return tuple(sorted(out))


def _launchers() -> frozenset[str]:
    """tfperf's own console script (``<venv>/bin/tfperf``, the user scheme's, the one this
    process started from): pip writes it outside site-packages, so its ``sys.exit(main())``
    read as the user's line, and ``profile MODULE:FUNCTION`` blamed "compiled step called at
    tfperf:8" where ``python -m tfperf`` found no cause (stop 45)."""
    out = set()
    folders = [sysconfig.get_paths().get("scripts")]
    with contextlib.suppress(KeyError):  # a platform without a user scheme
        folders.append(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")))
    for folder in folders:
        if folder:
            out.add(os.path.realpath(os.path.join(folder, "tfperf")))
    if sys.argv and os.path.basename(sys.argv[0]).removesuffix(".exe") == "tfperf":
        out.add(os.path.realpath(sys.argv[0]))
    return frozenset(out)


_LAUNCHERS = _launchers()
_TARGET_PACKAGES = installed_elsewhere(sys.path)
_LIBRARY_PREFIXES = _library_prefixes() + _TARGET_PACKAGES

#: code object → True when it belongs to user code
_user_code: dict[CodeType, bool] = {}


# Code typed into IPython: ``<ipython-input-3-1a2b3c>`` (terminal IPython, older kernels).
# ipykernel's cells are real paths (``/tmp/ipykernel_123/456.py``) and pass the path test.
_INTERACTIVE_PREFIXES = ("<ipython-input-",)


def is_user_file(filename: str) -> bool:
    if filename.startswith("<"):
        # <frozen importlib._bootstrap> and similar are not; typed code is.
        return filename in ("<stdin>", "<string>") or filename.startswith(_INTERACTIVE_PREFIXES)
    try:
        path = os.path.realpath(filename)
    except (OSError, ValueError):
        return True
    if path.startswith(_TFPERF_DIR):
        return path.startswith(_TFPERF_USER_DIRS)
    return not path.startswith(_LIBRARY_PREFIXES) and path not in _LAUNCHERS


def is_user_code(code: CodeType) -> bool:
    verdict = _user_code.get(code)
    if verdict is None:
        verdict = _user_code[code] = is_user_file(code.co_filename)
    return verdict


# Packages whose frames between a conversion and the user's line do not make it theirs.
_NOT_THIRD_PARTY = frozenset({"tensorflow", "numpy", "tfperf"})
_SITE_PREFIXES = tuple(p for p in _LIBRARY_PREFIXES
                       if p.rstrip(os.sep).endswith(("site-packages", "dist-packages")))


def third_party_package(code: CodeType) -> str:
    """The installed package (other than TF and NumPy) ``code`` belongs to, else ""."""
    name = library_package(code)
    return "" if name in _NOT_THIRD_PARTY else name


#: code object → the installed top-level package it belongs to, TF and NumPy included
_library: dict[CodeType, str] = {}


def library_package(code: CodeType) -> str:
    """The installed package ``code`` belongs to (``tensorflow``, ``keras``, ``numpy``...),
    "" for user code, the standard library and code typed in."""
    name = _library.get(code)
    if name is None:
        name = ""
        if not code.co_filename.startswith("<"):
            path = os.path.realpath(code.co_filename)
            for prefix in _SITE_PREFIXES:
                if path.startswith(prefix):
                    name = path[len(prefix):].split(os.sep, 1)[0].split(".", 1)[0]
                    break
            else:
                name = next((os.path.basename(p.rstrip(os.sep)) for p in _TARGET_PACKAGES
                             if path.startswith(p)), "")
        _library[code] = name
    return name


def user_frame_and_callee(frame: FrameType | None) -> tuple[FrameType | None,
                                                            FrameType | None]:
    """The innermost user frame at or above ``frame``, and the frame it called (None when
    ``frame`` is the user frame itself)."""
    cache = _user_code
    callee = None
    while frame is not None:
        code = frame.f_code
        verdict = cache.get(code)
        if verdict is None:
            verdict = is_user_code(code)
        if verdict:
            return frame, callee
        callee, frame = frame, frame.f_back
    return None, None


def user_frame(frame: FrameType | None) -> FrameType | None:
    """The innermost user frame at or above ``frame``; None if none."""
    cache = _user_code
    while frame is not None:
        code = frame.f_code
        verdict = cache.get(code)
        if verdict is None:
            verdict = is_user_code(code)
        if verdict:
            return frame
        frame = frame.f_back
    return None


def user_site(frame: FrameType | None) -> tuple[str, int] | None:
    """(filename, line) of the innermost user frame at or above ``frame``; None if none."""
    found = user_frame(frame)
    return (found.f_code.co_filename, found.f_lineno) if found is not None else None


def caller_site(depth: int = 2) -> tuple[str, int] | None:
    """``user_site`` starting ``depth`` frames above the caller of this function."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return None
    return user_site(frame)
