"""Nothing wrong, or nothing recognised: the lines no row explained, and whether any of them could
be a TensorFlow problem.

A log with no cause at failure or warning is "nothing wrong" only when every line tfperf did
not recognise is ordinary output: progress bars, epoch lines, the program's own prints. A line
with an error or warning shape (an exception, ``ERROR``/``Error:``, ``WARNING``/``Warning:``, a
``...Warning:`` category, an E-, F- or W-level log line, ``failed``, ``Traceback``) that no row
knows decides otherwise when it is TensorFlow's (``is_tf_line``: a TensorFlow log line, a
``WARNING:tensorflow``/``absl`` line, TFLite's reporter, or one naming TensorFlow things): then the
log holds a TensorFlow message tfperf cannot read, and it says "nothing recognised". The same
shapes in lines that are not TensorFlow's (the program's own error, pip's or another library's
warning) are listed apart as "not TensorFlow's" and do not stop "nothing wrong with TensorFlow".

Only run when no problem was found; the lines are found with literal finds (a regex per line of
a 10,000-line log would cost more than the rest of the check).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

# literals one of which every shaped line holds (case-sensitive, as programs print them)
_SHAPE_WORDS = ("WARN", "Warn", "warn", "ERROR", "Error", "error", "FATAL", "Fatal",
                "Traceback", "failed", "Failed", "Exception", "Killed", "Aborted",
                "Segmentation fault", "core dumped", "Check failed", *(
                    # failure messages a line can have without an error class or level (the
                    # plainer wordings are looked for in the log's last lines only)
                    "has no attribute", "No module named", "No such file", "bad magic",
                    "ata loss", "precondition", "nvalid argument", "out of memory",
                    # a loader's object named missing in prose (stop 41: "libcudart.so.11.0 not
                    # found", "a missing dependency on GLIBCXX_3.4.21")
                    "not found", "missing",
                    # the loader's words, also told in prose (round 31: 'import horovod.tensorflow
                    # throws "undefined symbol" error')
                    "undefined symbol"))
_ERROR = re.compile(r"^\s*(?:[\w.]+\.)?_?[A-Z]\w*(?:Error|Exception)\b|\b\w*(?:Error|Exception): |"
                    r"\bERROR\b|\bFATAL\b|\bFatal\b|^\s*[Ee]rror\b|\berror: |"
                    r"Traceback \(most recent|\b[Ff]ailed\b|^\s*(?:Killed|Aborted)\b|"
                    r"Segmentation fault|core dumped|Check failed")
# the same wordings as regexes, when no level or warning word says otherwise: Python's and
# TensorFlow's own failure messages are errors wherever they stand; a plain "could not" or "not
# found" is one only where the log ends (a program prints "Could not find a GPU, training on the
# CPU" and goes on; a failure pasted without its class is the last thing the log says)
_FAILURE = re.compile(r"has no attribute|No module named|undefined symbol|No such file|bad magic|"
                      r"[Dd]ata loss:|"
                      r"[Ff]ailed precondition|[Ii]nvalid argument|\b[Oo]ut of memory|"
                      # a shared library or symbol version named not found or missing, in prose
                      r"\.(?:so|dll|dylib)\b[\w.]*[`'\"]?[^\n]{0,40}?\b(?:not found|is missing|"
                      r"missing|cannot be (?:found|loaded|opened))|"
                      r"\b[Mm]issing\b[^\n]{0,40}?\b[\w.+-]+\.(?:so|dll|dylib)\b")
# a library named missing where the line itself says that is fine (review 41): an optional
# library ("libnvinfer.so.8 not found, TensorRT disabled (optional)"), a check script's listing,
# a comment line
_OPTIONAL = re.compile(r"^\s*#|\boptional\b|\bdisabled\b|^\s*checking for\b|\bno longer\b")
_LIBRARY_WORDS = re.compile(r"\.(?:so|dll|dylib)\b")
# a line that merely names an error class: a count of it, or a loop's end it caught (TF 1's
# "OutOfRangeError caught: done training"); no failure by itself (review 41)
_NAMED_ONLY = re.compile(r"\b[A-Z]\w*(?:Error|Exception)s? (?:was |were |is )?(?:caught|handled|"
                         r"ignored|expected|counts?|counter|total|rate)\b")
_FAILURE_AT_END = re.compile(r"\b(?:[Cc]ould not|[Cc]annot|[Cc]an't|[Uu]nable to)\s+\w|"
                             r"\b[Nn]ot found\b|\bdo(?:es|esn't) (?:not )?exist")
_END = 2  # non-blank lines at the end of a log where a plain failure wording is an error
# an I-level log line (TensorFlow's information: never an error, whatever its words)
_INFO_LEVEL = re.compile(r"^(?:[^\n]{0,60}?\d\d:\d\d:\d\d[.,]\d+:? )?I(?:\d{4} [\d:.]+ +\d+)? ?"
                         r"[\w./\\:-]+\.(?:cc|h|cpp|c|py):\d+\]")
# a line led by a warning level: a Python logger's 'WARNING:' (WARNING:tensorflow:, WARNING:absl:),
# or Python's warnings format 'path.py:12: UserWarning: ...'
_WARNING_LEAD = re.compile(r"^\s*(?:WARNING:|WARNING\s+-\s|(?:[^\s:]+(?::[^\s:]+)?\.py:\d+: )?"
                           r"[A-Z]\w*Warning: )")
_WARNING = re.compile(r"\bWARNING\b|\bWarning\b|\b\w+Warning\b|warnings\.warn|\bWARN\b")
# a glog/absl log line at level W, E or F (its origin a source file)
_LEVEL = re.compile(r"^(?:[^\n]{0,60}?\d\d:\d\d:\d\d[.,]\d+:? )?(?P<level>[WEF])"
                    r"(?:\d{4} [\d:.]+ +\d+)? ?(?P<file>[\w./\\:-]+\.(?:cc|h|cpp|c|py)):\d+\]")
_TF_SOURCE = re.compile(r"tensorflow|tf_serving|xla|tsl[/\\]|stream_executor|tflite|keras")
# TensorFlow's own Python loggers and TFLite's reporter
_TF_LOGGER = re.compile(r"WARNING:(?:tensorflow|absl|keras)|^\s*(?:WARNING|ERROR|INFO): "
                        r"[^\n]*\b(?:op|opcode|builtin|[Tt]ensors?|[Dd]elegate|[Ii]nterpreter|"
                        r"[Ss]ubgraph|[Nn]ode|TfLite|TFLite|XNNPACK)\b")


# words only TensorFlow prints: the tf.errors classes no other library raises, its file system's
# own calls ("NewRandomAccessFile failed to Create/Open: PATH", round 25's VOC paths)
_TF_OWN_WORDS = re.compile(r"\b(?:OutOfRange|InvalidArgument|ResourceExhausted|FailedPrecondition|"
                           r"DataLoss|DeadlineExceeded|Unauthenticated)Error\b|"
                           r"\bNew(?:RandomAccess|Writeable|AppendableFile|ReadOnlyMemoryRegion)"
                           r"\w* failed")


@dataclass(frozen=True)
class LooseLine:
    """A line no row explained that has an error or warning shape."""

    line: int  # 0-based
    kind: str  # "error" | "warning"
    tensorflow: bool  # TensorFlow's (a message tfperf cannot read) or not (the program's own)


def _shape(text: str) -> str:
    if m := _LEVEL.match(text):
        return "warning" if m["level"] == "W" else "error"
    if _WARNING_LEAD.match(text):  # a warning's own level decides over its words ("failed")
        return "warning"
    if _NAMED_ONLY.search(text):
        return ""
    if _ERROR.search(text):
        return "error"
    if _WARNING.search(text):
        return "warning"
    if _INFO_LEVEL.match(text):
        return ""
    if m := _FAILURE.search(text):
        if _LIBRARY_WORDS.search(m.group(0)) and _OPTIONAL.search(text):
            return ""  # an optional library, a check's listing, a comment
        return "error"  # a failure in words, without a class ("Data loss:", "has no attribute")
    if _FAILURE_AT_END.search(text):
        return "error at end"  # an error only where the log ends (``loose_lines``)
    return ""


def is_tf_line(text: str) -> bool:
    """The line is TensorFlow's own: a log line from its sources, its Python loggers, TFLite's
    reporter, or a line naming TensorFlow things (tensorflow, keras, tf., a tensor, a layer...)."""
    from tfperf.doctor.explain_floor import TF_CODE, TF_CONTEXT

    if (m := _LEVEL.match(text)) and _TF_SOURCE.search(m["file"]):
        return True
    if _TF_OWN_WORDS.search(text):
        return True
    return bool(_TF_LOGGER.search(text) or TF_CONTEXT.search(text) or TF_CODE.search(text))


@dataclass
class LooseMemo:
    """Each distinct line's shape and owner, read once per log: the floor's last step and the
    "nothing recognised" list both ask for the loose lines of one log."""

    shapes: dict[str, str] = field(default_factory=dict)
    owners: dict[str, bool] = field(default_factory=dict)


def loose_lines(text: str, lines: list[str], explained: set[int],
                memo: LooseMemo | None = None) -> list[LooseLine]:
    """The lines with an error or warning shape that no row explained, in order."""
    starts, pos = [0], 0
    while (pos := text.find("\n", pos) + 1) > 0:
        starts.append(pos)
    found: set[int] = set()
    for needle in _SHAPE_WORDS:
        at = text.find(needle)
        while at >= 0:
            li = bisect.bisect_right(starts, at) - 1
            found.add(li)
            at = text.find(needle, starts[li + 1]) if li + 1 < len(starts) else -1
    for prefix in (": W ", ": E ", ": F "):  # timestamped log lines at W/E/F
        at = text.find(prefix)
        while at >= 0:
            found.add(bisect.bisect_right(starts, at) - 1)
            at = text.find(prefix, at + 1)
    # glog's "W tensorflow/..." and absl's "W0713 ..." (not "Epoch", "Found")
    found.update(li for li, at in enumerate(starts) if text[at:at + 1] in ("W", "E", "F")
                 and (text[at + 1:at + 2] == " " or text[at + 1:at + 2].isdigit()))
    # the log's last lines, where a plain failure wording ("could not ...") is an error
    tail = _tail_lines(lines)
    found.update(tail)
    out: list[LooseLine] = []
    memo = memo or LooseMemo()  # a repeated line's shape and owner are read once
    shapes, owners = memo.shapes, memo.owners
    for li in sorted(found - explained):
        if li >= len(lines):
            continue
        line = lines[li]
        if (kind := shapes.get(line)) is None:
            kind = shapes[line] = _shape(line)
        if not kind or _head_of_next(lines, li, explained):
            continue
        if kind == "error at end":
            if li not in tail:
                continue  # the program went on after it: its own note, ordinary output
            kind = "error"
        if (tf := owners.get(line)) is None:
            tf = owners[line] = is_tf_line(line)
        out.append(LooseLine(li, kind, tf or _traceback_runs_through_tf(lines, li)))
    # a traceback's header belongs to the exception line that ends it
    return [loose for i, loose in enumerate(out)
            if not (_TRACEBACK_HEAD.search(lines[loose.line]) and i + 1 < len(out))]


_FRAMES_READ = 60  # lines of a traceback read below its header


def _traceback_runs_through_tf(lines: list[str], li: int) -> bool:
    """A traceback's header whose frames run through TensorFlow's (or Keras's) code: the error it
    ends in is TensorFlow's even when the paste stops before the exception line (round 14's
    NumPy 2 import cut inside tensorflow/__init__.py)."""
    if not _TRACEBACK_HEAD.search(lines[li]):
        return False
    from tfperf.doctor.explain_floor import TF_CODE

    frames = [lines[li]]  # a paste may join the first frame to the header
    for text in lines[li + 1:li + 1 + _FRAMES_READ]:
        if not _FRAME_OR_CODE.match(text):
            break
        frames.append(text)
    return any(TF_CODE.search(f) for f in frames if 'File "' in f)


_FRAME_OR_CODE = re.compile(r'^\s+\S|^\s*File "')


def _tail_lines(lines: list[str]) -> set[int]:
    """The indices of the log's last ``_END`` non-blank lines."""
    out: set[int] = set()
    for li in range(len(lines) - 1, -1, -1):
        if len(out) == _END:
            break
        if lines[li].strip():
            out.add(li)
    return out


# a marker that starts a message (a log prefix, a Python logger's 'WARNING:tensorflow:'), then at
# most one word: a paste broke the line there and the message goes on on the next line
_CUT_HEAD = re.compile(r"(?:\]|\b(?:WARNING|ERROR|INFO):[\w.]*:?)\s*\S*\s*$")
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\)")


def _head_of_next(lines: list[str], li: int, explained: set[int]) -> bool:
    """A message's head alone at the end of its line (a log prefix, or 'WARNING:tensorflow:Skipping'
    where a paste broke the line) whose message, the next non-blank line, a row explained: the
    two are one explained line."""
    if not _CUT_HEAD.search(lines[li]):
        return False
    nxt = next((i for i in range(li + 1, min(len(lines), li + 3)) if lines[i].strip()), None)
    return nxt is not None and nxt in explained
