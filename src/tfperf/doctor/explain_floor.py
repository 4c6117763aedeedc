"""The floor under every error: a log that holds a TensorFlow error is never "not recognised".

When no knowledge row explains a failure, the error itself still says a lot: its class (the
``tf.errors`` status, a Keras ``ValueError``, an ``ImportError`` while importing TensorFlow, a
``Check failed``, a crash, a CUDA status), the op and device it names, the shapes and dtypes in
its message, and the user's own frame in the traceback above it. This module finds that error
and reads it; the likely causes for its class come ranked from ``data/error_class_causes.csv``
(rows whose ``when`` matches the message first). The result is a cause marked
``confidence="low"``: a generic reading, weaker than a row that knows the message.

A Python exception counts only when it is TensorFlow's: a ``tf.errors`` class, or another class
whose message or traceback mentions TensorFlow, Keras or a TensorFlow add-on. Lines a knowledge
row already matched (informational ones included) are never read again here.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass, field

# what any error line holds (case-sensitive, as TensorFlow and Python print them)
_TRIGGER = re.compile(r"Error\b|Exception\b|Check failed|core dumped|Segmentation fault|"
                      r"Fatal Python error|CUDA_ERROR_|cudaError|CUBLAS_STATUS_|CUDNN_STATUS_|"
                      r"OP_REQUIRES failed|^Aborted|^\s*Killed\s*$|exit code", re.M)
_PY_EXC = re.compile(r"^\s*(?:>\s*|E {2,})*(?:[\w.]+\.)?(?P<cls>[A-Z]\w*(?:Error|Exception))"
                     r"(?: \(see above for traceback\))?:(?P<msg>.*)$")
_JUPYTER_HEAD = re.compile(r"^\s*(?P<cls>[A-Z]\w*(?:Error|Exception))\s{3,}"
                           r"Traceback \(most recent call last\)")
_CHECK = re.compile(r"Check failed: (?P<msg>.*)")
_OP_REQUIRES = re.compile(r"OP_REQUIRES failed at (?P<file>[\w./\\-]+(?::\d+)?) : "
                          r"(?P<status>[A-Za-z][A-Za-z _]*?): (?P<msg>.*)")
_CRASH = re.compile(r"^\s*(?P<msg>Segmentation fault|Aborted|Bus error|Killed)(?: \(core dumped\))?"
                    r"\s*$|Fatal Python error: (?P<msg2>.*)|(?P<msg3>core dumped)|"
                    r"(?P<msg4>(?:exit code|exited with code|exit status) "
                    r"(?:-?\d+ \(0x[0-9A-Fa-f]+\)|13[47]|139|-9|-11)\b)")
# glog/absl INFO or WARNING lines: a CUDA status named there is a report, not the failure
_INFO_LINE = re.compile(r"^(?:[\d\-: .]+)?[IW](?:\d{4} [\d:.]+ +\d+)? [\w/.\\-]+\.(?:cc|h):\d+\]")
_CUDA = re.compile(r"(?P<code>CUDA_ERROR_[A-Z_]+|cudaError\w+|CUBLAS_STATUS_[A-Z_]+|"
                   r"CUDNN_STATUS_[A-Z_]+)")

# the tf.errors classes (errors_impl.py) and the absl/C++ status spellings that map to them
_STATUS_CLASS = {
    "cancelled": "CancelledError", "unknown": "UnknownError",
    "invalid argument": "InvalidArgumentError", "deadline exceeded": "DeadlineExceededError",
    "not found": "NotFoundError", "already exists": "AlreadyExistsError",
    "permission denied": "PermissionDeniedError", "unauthenticated": "UnauthenticatedError",
    "resource exhausted": "ResourceExhaustedError",
    "failed precondition": "FailedPreconditionError", "aborted": "AbortedError",
    "out of range": "OutOfRangeError", "unimplemented": "UnimplementedError",
    "internal": "InternalError", "unavailable": "UnavailableError", "data loss": "DataLossError",
}
TF_ERRORS = frozenset(_STATUS_CLASS.values())
_TF_CONTEXT = re.compile(r"tensorflow|keras|tf_keras|\btf\.|tensor|Tensor|[Ll]ayer|\bshape|"
                         r"dtype|cuda|CUDA|cudnn|libtensorflow|_pywrap")
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_NB_FRAME = re.compile(r"^\s*(?P<path><ipython-input-[\w-]+>|(?:[A-Za-z]:)?[~\w./\\ -]+\.py)"
                       r"(?::(?P<line>\d+))? in (?P<func>[\w<>.]+)")
_NOT_USER = re.compile(r"site-packages|dist-packages|[/\\]lib[/\\]python\d|[/\\]Lib[/\\]|"
                       r"<frozen|<string>|[/\\]lib[/\\]python[/\\]|importlib|runpy|ipykernel|"
                       r"IPython|tornado|asyncio|traitlets|[/\\]tensorflow[/\\]|[/\\]keras[/\\]",
                       re.I)
_NODE = re.compile(r"\{\{node (?P<a>[^}]+)\}\}|\[\[node (?P<b>[^\s\]]+)|\[\[Node: (?P<c>[^\s=]+)"
                   r" = (?P<optype>\w+)\[|Detected at node '(?P<d>[^']+)'|Node: '(?P<e>[^']+)'|"
                   r"\[Op:(?P<op>\w+)\]|op (?P<f>[A-Z]\w+)\b")
_DEVICE = re.compile(r"/job:\w+/replica:\d+/task:\d+/device:(?P<a>[A-Z_]+:\d+)|"
                     r"\bon (?:device:)?(?P<b>[GCT]PU:\d+)")
_SHAPE = re.compile(r"\[(?:-?\d+|\?|None)(?:,\s*(?:-?\d+|\?|None))+\]|"
                    r"\((?:None|\d+)(?:,\s*(?:None|\d+))+,?\)|shape=\([^)]*\)|shape\[[\d,]*\]")
_DTYPE = re.compile(r"\b(?:DT_[A-Z0-9]+|float16|float32|float64|bfloat16|half|double|int8|int16|"
                    r"int32|int64|uint8|bool|string|complex64|complex128)\b")
_PROGRESS = re.compile(r"^\s*(?P<step>\d+)/(?:\d+|Unknown) \[|^\s*Epoch (?P<epoch>\d+)/\d+|"
                       r"\bstep[ =:]+(?P<step2>\d+)", re.I)
_CONTEXT_STOP = re.compile(r"^\s*(?:During handling of the above exception|"
                           r"The above exception was the direct cause|Traceback \(most recent)")
_MAX_CONTEXT = 40  # lines of message read after the error line
_MAX_BACK = 200  # lines searched above it for the traceback
_TOP_CAUSES = 3


@dataclass
class ErrorSite:
    """One error the log holds, read as far as its text allows."""

    line: int  # 0-based index of the error line
    cls: str  # InvalidArgumentError, ValueError, CheckFailed, ProcessCrash, CudaError...
    message: str
    context: str  # the message with the lines that belong to it (nodes, 'defined at' frames)
    context_lines: list[int] = field(default_factory=list)
    op: str = ""
    device: str = ""
    shapes: list[str] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    user_frame: str = ""
    first_step: bool | None = None  # True: nothing ran before it; None: the log does not say


@dataclass(frozen=True)
class Reading:
    """The generic reading of an error: its meaning and likely causes, most likely first."""

    site: ErrorSite
    meaning: str
    likely: tuple[tuple[str, str], ...]  # (cause, fix)
    source: str


def _line_starts(text: str) -> list[int]:
    starts, pos = [0], 0
    while (pos := text.find("\n", pos) + 1) > 0:
        starts.append(pos)
    return starts


def _candidate_lines(text: str, skip: set[int]) -> list[int]:
    """0-based indices of the lines holding an error word, in order, not already explained."""
    starts = _line_starts(text)
    found: dict[int, None] = {}
    for m in _TRIGGER.finditer(text):
        li = bisect.bisect_right(starts, m.start()) - 1
        if li not in skip:
            found[li] = None
    return list(found)


def _classify(line: str) -> tuple[str, str] | None:
    """(class, message) of an error line, or None."""
    if m := _PY_EXC.match(line):
        return m["cls"], m["msg"].strip()
    if m := _OP_REQUIRES.search(line):
        cls = _STATUS_CLASS.get(m["status"].strip().lower().replace("_", " "))
        return (cls or "UnknownError"), m["msg"].strip()
    if m := _CHECK.search(line):
        return "CheckFailed", m["msg"].strip()
    if m := _CRASH.search(line):
        return "ProcessCrash", (m["msg"] or m["msg2"] or m["msg3"] or m["msg4"] or "").strip()
    if m := _JUPYTER_HEAD.match(line):
        return m["cls"], ""
    if (m := _CUDA.search(line)) and not _INFO_LINE.match(line):
        return "CudaError", m["code"]
    return None


def _context(lines: list[str], at: int) -> list[int]:
    out = [at]
    for li in range(at + 1, min(len(lines), at + 1 + _MAX_CONTEXT)):
        if _CONTEXT_STOP.match(lines[li]) or _PY_EXC.match(lines[li]):
            break
        out.append(li)
    return out


def _is_tf(cls: str, context: str, lines: list[str], at: int) -> bool:
    if cls in TF_ERRORS or cls in ("CheckFailed", "CudaError"):
        return True
    if cls == "ProcessCrash":
        return True  # find_error reads a crash only when the log mentions TensorFlow at all
    if _TF_CONTEXT.search(context):
        return True
    above = "\n".join(lines[max(0, at - _MAX_BACK):at])
    return bool(re.search(r"tensorflow|keras|tf_keras", above))


def _user_frame(lines: list[str], at: int, context_lines: list[int]) -> str:
    """The innermost frame of the user's own code: 'defined at' frames in the message first,
    then the traceback above the error."""
    def scan(indices) -> str:
        best = ""
        for li in indices:
            text = lines[li]
            m = _FRAME.search(text) or _NB_FRAME.match(text)
            if not m or _NOT_USER.search(m["path"]):
                continue
            where = m["path"] + (f":{m['line']}" if m["line"] else "") + f" in {m['func']}"
            code = lines[li + 1].strip() if li + 1 < len(lines) else ""
            if code and not _FRAME.search(code) and not code.startswith(("File ", "----")):
                where += f": {code[:100]}"
            best = where
        return best

    return (scan(context_lines[1:]) or scan(range(max(0, at - _MAX_BACK), at)))


def _first_step(lines: list[str], at: int) -> bool | None:
    """True when the log shows training starting and no step finishing before the error."""
    epoch_seen = False
    for li in range(max(0, at - _MAX_BACK), at):
        m = _PROGRESS.search(lines[li])
        if not m:
            continue
        if m["epoch"]:
            epoch_seen = int(m["epoch"]) <= 1
            continue
        return False  # a step finished
    return True if epoch_seen else None


def _site(lines: list[str], at: int, cls: str, message: str) -> ErrorSite:
    ctx = _context(lines, at)
    context = "\n".join(lines[li] for li in ctx)
    site = ErrorSite(line=at, cls=cls, message=message, context=context, context_lines=ctx)
    for m in _NODE.finditer(context):
        node = next((v for k, v in m.groupdict().items() if v and k != "optype"), "")
        if node and not site.op:
            site.op = node + (f" ({m['optype']})" if m["optype"] else "")
    if dm := _DEVICE.search(context):
        site.device = dm["a"] or dm["b"]
    site.shapes = list(dict.fromkeys(_SHAPE.findall(context)))[:4]
    site.dtypes = list(dict.fromkeys(_DTYPE.findall(context)))[:4]
    site.user_frame = _user_frame(lines, at, ctx)
    site.first_step = _first_step(lines, at)
    return site


def find_error(text: str, lines: list[str], explained: set[int]) -> ErrorSite | None:
    """The error of the log no row explained: a tf.errors class first, then the first other
    TensorFlow error, then a C++ CHECK, a CUDA status, a crash. None when there is none."""
    found: list[tuple[float, int, str, str]] = []  # (rank, line, class, message)
    mentions_tf: bool | None = None
    for li in _candidate_lines(text, explained):
        got = _classify(lines[li])
        if got is None:
            continue
        cls, msg = got
        ctx = "\n".join(lines[i] for i in _context(lines, li))
        if not _is_tf(cls, ctx, lines, li):
            continue
        if cls == "ProcessCrash":
            if mentions_tf is None:
                mentions_tf = bool(re.search(r"tensorflow|keras|cuda", text, re.I))
            if not mentions_tf:
                continue
        rank = (0.0 if cls in TF_ERRORS else 3.0 if cls == "ProcessCrash" else
                2.0 if cls in ("CheckFailed", "CudaError") else 1.0)
        if not msg:  # a notebook header: its message comes later, keep it last of its rank
            rank += 0.5
        found.append((rank, li, cls, msg))
    if not found:
        return None
    _, li, cls, msg = min(found, key=lambda f: (f[0], f[1]))
    return _site(lines, li, cls, msg)


@functools.cache
def _classes() -> dict[str, dict[str, str]]:
    from tfperf.doctor.knowledge.tables import read_table

    return {r["class"]: r for r in read_table("tf_error_classes.csv")}


@functools.cache
def _causes() -> tuple[tuple[str, re.Pattern[str] | None, str, str, str], ...]:
    from tfperf.doctor.knowledge.tables import read_table

    return tuple((r["class"], re.compile(r["when"]) if r["when"] and r["when"] != "@first-step"
                  else None, r["when"], r["cause"], r["fix"]) for r in
                 read_table("error_class_causes.csv"))


def class_meaning(cls: str) -> tuple[str, str]:
    row = _classes().get(cls)
    if row is None:
        return (f"{cls} was raised while TensorFlow or Keras ran.",
                "Python exception raised by TensorFlow/Keras")
    return row["meaning"], row["source"]


def likely_causes(site: ErrorSite) -> tuple[tuple[str, str], ...]:
    """(cause, fix) for the site's class, those whose condition the message meets first."""
    rows = [r for r in _causes() if r[0] == site.cls] or [r for r in _causes() if r[0] == "*"]
    text = f"{site.message}\n{site.context}\n{site.op}"
    hits, generic = [], []
    for _cls, rx, when, cause, fix in rows:
        if when == "@first-step":
            if site.first_step:
                hits.append((cause, fix))
        elif rx is None:
            generic.append((cause, fix))
        elif rx.search(text):
            hits.append((cause, fix))
    return tuple([*hits, *generic][:_TOP_CAUSES])


def read_error(site: ErrorSite) -> Reading:
    meaning, source = class_meaning(site.cls)
    return Reading(site=site, meaning=meaning, likely=likely_causes(site), source=source)


def label_of(cls: str) -> str:
    """InvalidArgumentError -> invalid-argument-error; CheckFailed -> check-failed."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", cls).lower()


def detail_of(site: ErrorSite) -> str:
    parts = []
    if site.op:
        parts.append(f"op {site.op}")
    if site.device:
        parts.append(f"device {site.device}")
    if site.shapes:
        parts.append("shapes " + " ".join(site.shapes))
    if site.dtypes:
        parts.append("dtypes " + ", ".join(site.dtypes))
    if site.user_frame:
        parts.append(f"your code: {site.user_frame}")
    if site.first_step:
        parts.append("at the first step (nothing ran before it)")
    return "; ".join(parts)
