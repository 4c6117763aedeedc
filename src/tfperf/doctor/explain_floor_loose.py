"""The floor's last step: a TensorFlow error line no classifier read still gets a reading.

``explain_floor.scan_errors`` reads error lines by their form (a class prefix, a status, a CHECK,
a known wording). Pastes often lose that form: the message without its ``...Error:`` prefix
("Cannot batch tensors with different shapes in component 0" under TensorFlow's frames), a class
named in prose ("OutOfRangeError Occurred"), a loader failure in words ("libcudart.so.11.0 not
found"), a traceback cut before its message. ``explain_quiet.loose_lines`` already finds such
lines (error-shaped, TensorFlow's) to say "not recognised"; here the first of them becomes an
``ErrorSite`` whose class is inferred from its words, so the floor's ranked causes apply. The
reading says how its class was inferred (lower confidence than a class the log prints).

Only error-shaped lines count (warnings never do), and only when no failure or warning was found
otherwise, so start-up noise and warnings in a run that went on keep "nothing wrong".
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from tfperf.doctor import explain_floor as F
from tfperf.doctor.explain_finished import PROGRESS_BAR, went_on
from tfperf.doctor.explain_quiet import LooseMemo, loose_lines

# a class named in the words of the line ("OutOfRangeError Occurred", "got an InvalidArgumentError")
_NAMED_CLASS = re.compile(r"\b(?P<cls>_?[A-Z][A-Za-z]*(?:Error|Exception))\b[:.]?\s*(?P<rest>.*)$")
# the dynamic loader's things: a shared library, a symbol version, a DLL
_LOADER = re.compile(r"\.(?:so|dll|dylib)\b|\bGLIBC(?:XX)?_\d|\bCXXABI_\d|shared object|"
                     r"DLL load|undefined symbol|[Ss]ymbol not found")
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\)")
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>\S+)')
# a frame that imports TensorFlow or runs its package's module-level code: an import statement,
# or a path .../tensorflow[_core]/.../__init__.py (``_imports_tf``: read without a regex that
# backtracks over a long path-like line, which cost minutes on one 130 KB line, review 41)
_IMPORT_STMT = re.compile(r"^\s*(?:import|from)\s+(?:tensorflow|keras|tf_keras)\b")
_TF_DIR = re.compile(r"[/\\]tensorflow(?:_core)?[/\\]")
_INIT = "__init__.py"


def _imports_tf(line: str) -> bool:
    if _IMPORT_STMT.search(line):
        return True
    at = line.find(_INIT)
    while at > 0:
        if line[at - 1] in "/\\":
            start = at  # back over the path's characters (word characters and separators)
            while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_/\\"):
                start -= 1
            if _TF_DIR.search(line, start, at):
                return True
        at = line.find(_INIT, at + len(_INIT))
    return False
_MAX_FRAMES = 120
# a line of a run's own output, not an error's message: progress, a log line with a level or a
# timestamp, a shell prompt
_GOES_ON = re.compile(r"^\s*(?:Epoch \d+/\d+|\d+/\d+ \[|Step \d+|\d{4}-\d\d-\d\d[ T]\d\d:|"
                      r"[IWEF]\d{4} |(?:INFO|WARNING|DEBUG)\b|\$ |>>> )")
_NO_PREFIX = "its class inferred from the words: the log prints none"


def _after_traceback(lines: list[str], li: int) -> tuple[str, int, str, str] | None:
    """(how, line, class, message) of the traceback headed at ``li``: the line after its frames
    is its message without a class; with nothing after its frames, the paste was cut (inside
    TensorFlow's import: an ImportError). None: a blank line, then more log (a traceback quoted
    inside a warning)."""
    frames: list[str] = []
    end = min(len(lines), li + 1 + _MAX_FRAMES)
    for at in range(li + 1, end):
        text = lines[at]
        if not (text.startswith((" ", "\t")) or _FRAME.match(text)) or PROGRESS_BAR.match(text):
            end = at
            break
        frames.append(text)
    if end < len(lines) and lines[end].strip():  # the message, printed without its class
        if _GOES_ON.search(lines[end]) or went_on(lines, end - 1):
            # output of a run that went on (an epoch, a log line, a progress bar, a retry, later
            # progress: explain_finished's one reading of it): no message here
            return None
        return _NO_PREFIX, end, F.wording_class(lines[end]), lines[end].strip()
    if any(text.strip() for text in lines[end:]):
        return None
    code = [f.strip() for f in frames if f.strip() and not _FRAME.match(f)]
    where = f"; its last frame runs: {code[-1]}" if code else ""
    cut = "the paste ends inside the traceback, before its message"
    # the message the causes read: the last frame's code says where the import stopped
    # (protobuf, TensorFlow's native library, NumPy)
    message = f"(cut before its message) last frame: {code[-1]}" if code else ""
    if any(_imports_tf(f) for f in frames) and all(
            m["func"] == "<module>" for f in frames if (m := _FRAME.match(f))):
        return (f"{cut}: it was raised while Python imported TensorFlow{where}", li,
                "ImportError", message)
    return f"{cut}{where}", li, "UnknownError", message


def infer_class(lines: list[str], li: int) -> tuple[str, int, str, str] | None:
    """(how, line, class, message) of the error line ``li`` that carries no class prefix: the
    class its words name, a loader's failure, or the status class its wording reads as; a
    traceback's header is read by what follows its frames."""
    line = lines[li].strip()
    if _TRACEBACK_HEAD.search(line):
        return _after_traceback(lines, li)
    if (m := _NAMED_CLASS.search(line)) and F.class_known(m["cls"]):
        return "its class named in the words, not as 'Class: message'", li, m["cls"], (
            m["rest"].strip() or line)
    if _LOADER.search(line):
        return _NO_PREFIX, li, "LibraryLoadError", line
    return _NO_PREFIX, li, F.wording_class(line), line


def loose_site(text: str, lines: list[str], explained: AbstractSet[int],
               foreign: AbstractSet[int], memo: LooseMemo | None = None) -> F.ErrorSite | None:
    """The site of the first TensorFlow error line that no classifier read (``loose_lines``'s
    error-shaped TensorFlow lines), with its class inferred; None when there is none."""
    for loose in loose_lines(text, lines, set(explained), memo):
        if loose.kind != "error" or not loose.tensorflow or loose.line in foreign:
            continue
        if (got := infer_class(lines, loose.line)) is None:
            continue
        how, at, cls, msg = got
        if at in explained or at in foreign:
            continue
        site = F.site_at(lines, at, cls, msg)
        site.inferred = how
        return site
    return None
