"""The explainer behind ``tfperf explain``: a TensorFlow log → its root causes, most serious first.

1. Match: each line is tried against the knowledge rows that could match it (a row is tried
   only on lines holding one of its literal needles, looked for once per distinct line shape
   (numbers ignored): in one compiled pass when the optional matcher is installed
   (``explain_multimatch``), else through a word index, so a 10,000-line log costs a few byte
   searches per row, not a regex per row per line, and a row's regex is compiled only when a
   line needs it); the first row in table order wins.
2. Group: lines of the same label form one cause; a cause ``explained_by`` another present
   cause joins it as a consequence (the library lines before "Skipping registering GPU
   devices" are one cause, not five).
3. Judge: a notice that means "no GPU will be used" becomes a failure when the log shows a GPU
   or the caller expects one; causes sort failure > warning > notice, then by first line.
   Informational lines are listed apart. No cause at failure or warning: nothing is wrong.
4. Refine: an out-of-memory whose dump shows more free memory than the request is
   fragmentation (``explain_memory``); causes with a version to install get it from the versions
   the log names and the planner's tables (``explain_versions``).
5. Floor: when no row found a failure, an error the log still holds (a ``tf.errors`` class, a
   TensorFlow ``ImportError``, a ``Check failed``, a crash, a CUDA status) gets a generic reading
   (``explain_floor``) marked ``confidence="low"``: a log with an error is never "unrecognised".

Nothing here imports TensorFlow. Rendering lives in ``explain_render``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tfperf.doctor.explain_details import render_detail
from tfperf.doctor.explain_import_site import bare_import_heads
from tfperf.doctor.explain_multimatch import rows_by_key
from tfperf.doctor.explain_quiet import LooseMemo

_MAX_SHOWN = 240  # characters of a log line kept
_MAX_VALUES = 8  # distinct values kept per detail field


@dataclass(frozen=True)
class LogLine:
    number: int  # 1-based
    text: str  # the message, log prefix removed and cut to _MAX_SHOWN
    row: str  # the knowledge row that matched it
    origin: str | None = None  # "dso_loader.cc:64" from the log prefix


@dataclass
class Cause:
    label: str
    severity: str  # failure | warning | notice
    cause: str
    fix: str
    see: str
    source: str
    lines: list[LogLine] = field(default_factory=list)
    consequences: list[str] = field(default_factory=list)  # labels merged into this cause
    details: dict[str, list[str]] = field(default_factory=dict)
    detail: str = ""
    install: str = ""  # what to install, from the versions the log names ('' if it says too little)
    # "high": a knowledge row knows this message; "low": the floor's generic reading of an error
    confidence: str = "high"
    likely: list[tuple[str, str]] = field(default_factory=list)  # the floor's (cause, fix), ranked

    @property
    def first_line(self) -> int:
        return self.lines[0].number

    def to_dict(self) -> dict[str, Any]:
        out = {"label": self.label, "severity": self.severity, "confidence": self.confidence,
               "lines": [{"number": ln.number, "text": ln.text, "row": ln.row,
                          "origin": ln.origin} for ln in self.lines],
               "cause": self.cause, "fix": self.fix, "see": self.see, "detail": self.detail,
               "details": self.details, "consequences": self.consequences,
               "source": self.source}
        if self.install:
            out["install"] = self.install
        if self.likely:
            out["likely"] = [{"cause": c, "fix": f} for c, f in self.likely]
        return out


@dataclass
class Informational:
    id: str
    what: str
    source: str
    lines: list[int] = field(default_factory=list)
    example: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "what": self.what, "count": len(self.lines),
                "lines": self.lines, "example": self.example, "source": self.source}


# a TensorFlow warning about how work is placed or distributed (its module or its words): when
# no row knows it, it may be the very problem (a strategy that sees fewer devices than its
# cluster), so the log is not vouched for
_SETUP_WARNING = re.compile(r"distribute|cross_device|collective|multi_worker|cluster|placer|"
                            r"TF_CONFIG|[Dd]evices? (?:are|is) (?:not )?visible|placement|replica")


@dataclass
class Explanation:
    n_lines: int  # non-blank lines read
    causes: list[Cause]
    informational: list[Informational]
    gpu_evidence: bool
    versions: dict[str, str] = field(default_factory=dict)  # read from the log, when needed
    # with no problem found: lines with an error or warning shape no row explained, TensorFlow's
    # (a message tfperf cannot read: the log is then "unrecognised") and not TensorFlow's (the
    # program's own error, another library's warning: listed apart, never blamed on TensorFlow)
    unknown: list[LogLine] = field(default_factory=list)
    not_tensorflow: list[LogLine] = field(default_factory=list)
    # the log holds an error line (explain_finished.holds_error); False: only the run's output
    holds_error: bool = True

    @property
    def problems(self) -> list[Cause]:
        """Causes that need a fix (failure or warning); notices do not."""
        return [c for c in self.causes if c.severity in ("failure", "warning")]

    @property
    def verdict(self) -> str:
        if self.n_lines == 0:
            return "empty"
        if self.problems:
            return "failure" if any(c.severity == "failure" for c in self.problems) else "warning"
        # a TensorFlow error no row or floor reading knows: not "nothing wrong" (a warning no row
        # knows is listed as a note: a log that holds no error is "nothing wrong found")
        if any(ln.row == "error" for ln in self.unknown):
            return "unrecognised"
        # "nothing wrong" only where the log shows nothing unknown that could matter: a log no
        # line of which tfperf recognises or even finds warning- or error-shaped (a slow run's
        # step times, a benchmark's figures: posted about something tfperf cannot read), or one
        # holding a warning no row knows from the parts of TensorFlow that place and distribute
        # work (a strategy, a cluster, devices), is one it cannot vouch for (round 10)
        # (round 10) when an error is among its lines; a log whose lines hold none (progress
        # bars, epochs, metrics, an unknown tool's output) shows a run, not a failure (round 26,
        # re-read as development: two training logs answered "nothing recognised")
        if not (self.causes or self.informational or self.unknown or self.not_tensorflow):
            return "unrecognised" if self.holds_error else "nothing-wrong"
        if any(ln.row == "warning" and _SETUP_WARNING.search(f"{ln.origin or ''} {ln.text}")
               for ln in self.unknown) or any(
                ln.row == "warning" and ln.origin and _SETUP_WARNING.search(ln.origin)
                for ln in self.not_tensorflow):  # absl's W line of a distribution module
            return "unrecognised"
        if self.causes or self.informational or self.unknown:
            return "nothing-wrong"
        # only the program's own errors, and nothing of TensorFlow's recognised: say so
        if any(ln.row == "error" for ln in self.not_tensorflow):
            return "unrecognised"
        return "nothing-wrong"

    @property
    def exit_status(self) -> int:
        return 1 if self.problems else 0


# ---------------------------------------------------------------------------------------------
# matching


def _split_prefix(line: str) -> tuple[str | None, str]:
    """("dso_loader.cc:64", message) for a glog/absl-prefixed line, else (None, line)."""
    end = line.find("] ")
    if end < 0:
        return None, line.strip()
    head = line[:end]
    colon = head.rfind(":")
    if colon < 0 or not head[colon + 1:].isdigit():
        return None, line.strip()
    start = max(head.rfind(" ", 0, colon), head.rfind("/", 0, colon), head.rfind("\\", 0, colon))
    origin = head[start + 1:]
    if "." not in origin:
        return None, line.strip()
    return origin, line[end + 2:].strip()


_DIGITS = bytes.maketrans(b"123456789", b"000000000")


def _keys(lines: list[str]) -> list[bytes]:
    """Each line as the needles are looked for in it: ASCII-lower-cased bytes, digits all 0.

    A needle (ASCII, lower-case, digits made 0 the same way) that occurs in the lower-cased
    line occurs in its key, so no candidate is lost; lines that differ only in numbers
    (timestamps, steps, losses) share a key and are searched once. (``splitlines`` leaves no
    line break inside a line, so joining and splitting at newlines keeps the lines apart.)
    """
    return "\n".join(lines).encode("utf-8", "replace").lower().translate(_DIGITS).split(b"\n")


def _candidates(lines: list[str], patterns: list[Any]) -> dict[int, list[int]]:
    """line index → indices of the rows whose needles occur in that line (rows in order)."""
    if not lines:
        return {}
    line_keys = _keys(lines)
    keys = list(dict.fromkeys(line_keys))  # each distinct key once
    by_key = rows_by_key(keys, tuple(tuple(k for k, _ in _needle_keys(p.needles))
                                     for p in patterns))  # one compiled pass, when installed
    if by_key is None:
        by_key = _index_rows(keys, patterns)
    rows_of = {keys[ki]: rows for ki, rows in by_key.items()}
    return {li: rows for li, key in enumerate(line_keys) if (rows := rows_of.get(key))}


def _index_rows(keys: list[bytes], patterns: list[Any]) -> dict[int, list[int]]:
    """key index → the rows (in order) one of whose needles the key holds, by a word index."""
    # the log's whitespace-separated words, each with the distinct lines that hold it. A needle
    # is looked for only in lines that can hold it: with inner words (whole words inside it), in
    # the lines of its rarest one; else in the lines of the words that contain its longest part
    # (a part has no whitespace, so it lies inside one word), found in the log's distinct words.
    # A search of the whole log for each of some 600 needles cost 60 ms on 10,000 lines.
    holding = _word_lines(keys)
    words = list(holding)
    word_blob = _Blob(words)
    by_key: dict[int, list[int]] = {}
    every = range(len(keys))
    found: dict[bytes, set[int]] = {}  # a needle several rows share is looked for once
    for ri, p in enumerate(patterns):
        hit: set[int] | range
        if not p.needles:  # no literal to look for: try every line (the tests keep this rare)
            hit = every
        else:
            hit = set()
            for needle, inner in _needle_keys(p.needles):
                got = found.get(needle)
                if got is None:
                    got = found[needle] = _needle_hits(needle, inner, keys, holding, words,
                                                       word_blob)
                hit |= got
        for ki in hit:
            by_key.setdefault(ki, []).append(ri)
    return by_key


def _needle_hits(needle: bytes, inner: frozenset[bytes], keys: list[bytes],
                 holding: dict[bytes, list[int]], words: list[bytes],
                 word_blob: _Blob) -> set[int]:
    """The indices of the keys that hold ``needle``, looked for only where it can be."""
    if inner:
        if not inner <= holding.keys():
            return set()
        near = min((holding[w] for w in inner), key=len)
        return {ki for ki in near if needle in keys[ki]}
    parts = _anchored_parts(needle)
    if not parts:  # only whitespace (no row has one): look in every line
        return {ki for ki, key in enumerate(keys) if needle in key}
    near_words = word_blob.holding(max(parts, key=len))
    return {ki for ki in {ki for wi in near_words for ki in holding[words[wi]]}
            if needle in keys[ki]}


def _word_lines(keys: list[bytes]) -> dict[bytes, list[int]]:
    """word → the indices of the keys that hold it as a whitespace-separated word, in order; a
    key holding a word twice is listed twice (7 % more entries on the benchmark's log, where a
    set per key to drop them cost a fifth of this index: every reader of a list makes a set or
    tests each index, so a repeat changes no answer)."""
    holding: defaultdict[bytes, list[int]] = defaultdict(list)  # no empty list made per word
    for ki, key in enumerate(keys):
        for word in key.split():
            holding[word].append(ki)
    return holding


class _Blob:
    """Items (none holding a newline) each between newlines: which items hold a byte string."""

    def __init__(self, items: list[bytes]) -> None:
        self.items = items
        self.blob = b"\n" + b"\n".join(items) + b"\n"
        self.starts: list[int] = []
        pos = 1
        for item in items:
            self.starts.append(pos)
            pos += len(item) + 1

    def holding(self, part: bytes) -> list[int]:
        """Indices of the items that hold ``part``, in order. A newline that starts (ends)
        ``part`` anchors it to the start (end) of an item; there is none inside it."""
        found = []
        lead = 1 if part[:1] == b"\n" else 0
        at = self.blob.find(part)
        while at >= 0:
            i = bisect.bisect_right(self.starts, at + lead) - 1
            found.append(i)
            at = self.blob.find(part, self.starts[i] + len(self.items[i]))  # next item on
        return found


def _anchored_parts(needle: bytes) -> list[bytes]:
    """The needle's whitespace-separated parts, each as it must lie in a word of a line that
    holds the needle: a part followed by whitespace in the needle ends a word (``part\\n`` in
    the words' blob), one preceded by it starts one (``\\npart``). Anchored, a common word
    ('tensorflow' in 'rebuild tensorflow') is looked for only where it starts a word, not in
    every path that holds it."""
    parts = needle.split()
    out = []
    for i, part in enumerate(parts):
        before = i > 0 or needle[:1].isspace()
        after = i < len(parts) - 1 or needle[-1:].isspace()
        out.append((b"\n" if before else b"") + part + (b"\n" if after else b""))
    return out


@functools.cache
def _needle_keys(needles: tuple[str, ...]) -> tuple[tuple[bytes, frozenset[bytes]], ...]:
    """Each needle as a key, with its inner words: those whitespace bounds on both sides
    within the needle, so any line holding the needle holds them as whole words."""
    keys = dict.fromkeys(n.encode("ascii").translate(_DIGITS) for n in needles)
    return tuple((k, _inner_words(k)) for k in keys)


def _inner_words(needle: bytes) -> frozenset[bytes]:
    parts = needle.split()
    lo = 0 if needle[:1].isspace() else 1
    hi = len(parts) if needle[-1:].isspace() else len(parts) - 1
    return frozenset(parts[lo:hi])


# typographic quotes a paste through a web page or a word processor puts in: rows quote with ' and "
_STRAIGHT = (("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'), ("\u00b4", "'"))


def straight_quotes(text: str) -> str:
    """The log with typographic quotes made straight (only searched for: most logs have none).

    One ``str.replace`` per quote (absent, it returns the text after one scan; an ``in`` test
    first read a present quote twice): ``str.translate`` with a table goes through Python's
    mapping one character at a time, 40 ms on a 10,000-line log that holds one curly quote."""
    if text.isascii():  # known without reading the text
        return text
    for curly, straight in _STRAIGHT:
        text = text.replace(curly, straight)  # the text itself when none is there: one scan
    return text


# a stderr captured and printed as a Python repr (a test's assertion message, a subprocess's output
# in a list): its quotes escaped and its line breaks written as backslash-n. Only one that ends a
# line (before indentation, a traceback's words or an ...Error) is a break: in a Windows path
# (C:\\Users\\nick) it is none. One pass finds and undoes them all (most logs have none; a
# second pass over a large non-ASCII text would cost milliseconds).
_REPR_ESCAPE = re.compile(r"\\(?:(?P<quote>['\"])|n(?=[ \t]|Traceback|File |During handling|"
                          r"[A-Z]\w*(?:Error|Exception|Warning)\b|'|$))", re.M)


def _unescape_one(m: re.Match[str]) -> str:
    return m["quote"] or "\n"


def unescaped(text: str) -> str:
    """The log with a repr'd stderr's escapes undone (``\\'`` ``\\"`` and its ``\\n`` breaks):
    rows quote with plain quotes and read one message a line. Text without them is unchanged."""
    if _REPR_ESCAPE.search(text) is None:
        return text
    return _REPR_ESCAPE.sub(_unescape_one, text)


def _match(text: str) -> tuple[int, list[tuple[int, Any, Any, str]]]:
    """(non-blank lines, [(line number, row, regex match, raw line)]) in line order."""
    n_lines, hits, _ = _match_lines(text)
    return n_lines, hits


def _match_lines(text: str) -> tuple[int, list[tuple[int, Any, Any, str]], list[str]]:
    """``_match`` and the log's lines."""
    from tfperf.doctor.knowledge import error_patterns

    patterns = error_patterns()
    lines = text.splitlines()
    # blank lines counted in C (str.isspace is strip's test; "" is not isspace)
    n_lines = len(lines) - lines.count("") - sum(map(str.isspace, lines))
    hits = []
    done: dict[str, tuple[Any, Any] | None] = {}  # a repeated line is matched once
    search: dict[int, Any] = {}  # each row's bound search, taken from its regex once per log
    for li, rows in sorted(_candidates(lines, patterns).items()):
        raw = lines[li]
        if raw in done:
            found = done[raw]
        else:  # a plain loop: a generator per distinct line cost ~1 ms on 10,000 lines
            found = None
            for ri in rows:
                row_search = search.get(ri)
                if row_search is None:
                    row_search = search[ri] = patterns[ri].regex.search
                if m := row_search(raw):
                    found = (patterns[ri], m)
                    break
            done[raw] = found
        if found is not None:
            hits.append((li + 1, found[0], found[1], raw))
    wrapped = _match_wrapped(lines, {h[0] - 1 for h in hits}, patterns)
    if wrapped:  # rare: most logs have none, and the hits are in line order already
        joined_at = {h[0] for h in wrapped}  # a wrapped line's whole message wins over its head
        hits = sorted([h for h in hits if h[0] not in joined_at] + wrapped, key=lambda h: h[0])
    return n_lines, hits, lines


# an error's message that goes on after its line: "SomeError: text" or pip's "ERROR: text" ending
# mid-sentence (no full stop or bracket closing it), the way a terminal, a notebook or a
# wrapping library (TensorFlow Probability's version check) breaks a long message; a colon does
# not close one (Keras's "is incompatible with the layer:" goes on with "expected ndim=4"), and a
# heading's list that follows is indented or a record of its own, so it is not joined
_WRAPPED_HEAD = re.compile(r"^\s*(?:[\w.]*(?:Error|Exception)|ERROR):\s+\S.*[^.)\]}>\s]\s*$")
# a line that starts a record of its own: an indented one (a traceback's frame or code, a log's
# continuation), a traceback, a log prefix, another error, a prompt
_NEW_RECORD = re.compile(r"^(?:\s|$|Traceback|File \"|During handling|The above exception|"
                         r"[IWEF]\d{4}\b|\d{4}-\d\d-\d\d|[\w.]*(?:Error|Exception|Warning):|"
                         r"ERROR:|WARNING:|INFO:|>>>|\$ |In \[|-{5,}|\^)")
_WRAP_MAX = 3  # continuation lines joined to a head


def _match_wrapped(lines: list[str], matched: set[int],
                   patterns: list[Any]) -> list[tuple[int, Any, Any, str]]:
    """Hits on error messages wrapped over several lines: each unmatched head line joined with
    the lines that continue it, matched as one line and reported at the head's number."""
    heads: list[tuple[int, str]] = []
    for li, raw in enumerate(lines):
        if li in matched or len(raw) > 400 or ("rror" not in raw and "xception" not in raw) \
                or not _WRAPPED_HEAD.match(raw):
            continue
        parts = [raw.rstrip()]
        for nxt in lines[li + 1:li + 1 + _WRAP_MAX]:
            if _NEW_RECORD.match(nxt) or len(nxt) > 400:
                break
            parts.append(nxt.strip())
        # a head ending in a colon is joined only where no line it takes in was read on its own:
        # a row written for the continuation alone (op-no-device-kernel's "because no supported
        # kernel") keeps that reading, and its details are not filled twice
        if parts[0].endswith(":") and matched.intersection(range(li + 1, li + len(parts))):
            continue
        if len(parts) > 1:
            heads.append((li, " ".join(parts)))
    heads += _terminal_wrapped(lines, matched)
    completed = bare_import_heads(lines, matched)  # shown as the log has it, matched completed
    heads += completed
    as_logged = {li for li, _ in completed}
    out: list[tuple[int, Any, Any, str]] = []
    # one needle search over all the joined lines (each search walks every row's needles)
    for hi, rows in sorted(_candidates([j for _, j in heads], patterns).items()):
        li, joined = heads[hi]
        found = next(((patterns[ri], m) for ri in rows
                      if (m := patterns[ri].regex.search(joined))), None)
        if found is not None:
            out.append((li + 1, found[0], found[1], lines[li] if li in as_logged else joined))
    return out


# a log line cut by a console's fixed width (Windows' 80 columns): a glog/absl prefix on a line
# of exactly that width (79 when the paste dropped the space the cut fell on)
_TERMINAL_WIDTHS = (79, 80)
_LOG_LINE_HEAD = re.compile(r"^(?:[^\n]{0,40}?\d\d:\d\d:\d\d[.,]\d+:? )?[IWEF]"
                            r"(?:\d{4} [\d:.]+ +\d+)? ")
_TERMINAL_MAX = 5  # console lines joined to a head


def _terminal_wrapped(lines: list[str], matched: set[int]) -> list[tuple[int, str]]:
    """Log lines a console wrapped at its width: each head of that width joined with the lines
    that go on from it (without a space where the cut fell inside a word), up to a line a row
    matched on its own; the head matched or not, as alone it is a generic I- or W-level line."""
    heads: list[tuple[int, str]] = []
    for li, raw in enumerate(lines):
        if len(raw) != _TERMINAL_WIDTHS[-1] or not _LOG_LINE_HEAD.match(raw):
            continue
        joined, piece = raw, raw
        for ni, nxt in enumerate(lines[li + 1:li + 1 + _TERMINAL_MAX], li + 1):
            if len(piece) not in _TERMINAL_WIDTHS or ni in matched or not nxt.strip() \
                    or _LOG_LINE_HEAD.match(nxt):
                break
            joined += ("" if len(piece) == _TERMINAL_WIDTHS[-1] else " ") + nxt
            piece = nxt
        if joined != raw:
            heads.append((li, joined))
    return heads


# ---------------------------------------------------------------------------------------------
# grouping and judging


def _shown(raw: str) -> tuple[str | None, str]:
    origin, msg = _split_prefix(raw)
    if len(msg) > _MAX_SHOWN:
        msg = msg[:_MAX_SHOWN - 1] + "…"
    return origin, msg


def _add_details(details: dict[str, list[str]], m: Any) -> None:
    for name, value in m.groupdict().items():
        if value is None or not value.strip():
            continue
        vals = details.setdefault(name, [])
        value = value.strip()
        if value not in vals and len(vals) < _MAX_VALUES:
            vals.append(value)


def _root(label: str, present: set[str], explainers: dict[str, tuple[str, ...]]) -> str:
    """Follow explained_by to the deepest present cause (the root)."""
    seen = {label}
    while True:
        nxt = next((e for e in explainers.get(label, ()) if e in present and e not in seen),
                   None)
        if nxt is None:
            return label
        seen.add(nxt)
        label = nxt


def explain_log(text: str, gpu_expected: bool | None = None) -> Explanation:
    """Root causes of ``text``, most serious first, and its informational lines apart.

    ``gpu_expected``: the caller knows a GPU should be used (the doctor saw one); notices that
    mean "no GPU will be used" are then failures even if the log itself shows no GPU.
    """
    from tfperf.doctor.knowledge import SEVERITY_ORDER, label_rows

    text = unescaped(straight_quotes(text))
    n_lines, hits, lines = _match_lines(text)
    describe = label_rows()
    gpu = bool(gpu_expected) or any(row.gpu_evidence for _, row, _, _ in hits)
    wanted = ""  # the log shows a GPU is wanted (a GPU image, code asking for one)
    by_design = ""  # the program runs TensorFlow on the CPU by design (AlphaFold's input pipeline)
    if not gpu_expected and any(row.id in _GPU_LIBRARY_ROWS for _, row, _, _ in hits):
        from tfperf.doctor.explain_readings import cpu_by_design

        by_design = cpu_by_design(text)
    if not gpu and not by_design and any(row.escalate for _, row, _, _ in hits):
        from tfperf.doctor.explain_readings import gpu_wanted

        wanted = (gpu_wanted(text) or _only_no_gpu(hits, n_lines)
                  or _driver_not_loaded(hits, text))
        gpu = bool(wanted)

    by_label: dict[str, Cause] = {}
    infos: dict[str, Informational] = {}
    explainers: dict[str, tuple[str, ...]] = {}
    seen_rows: set[str] = set()
    escalated: set[str] = set()
    native_failures: set[str] = set()  # labels a row reports as a failure by itself
    shown: dict[str, tuple[str | None, str]] = {}  # a repeated line is cut and parsed once
    for number, row, m, raw in hits:
        if row.severity == "info":
            info = infos.get(row.id)
            if info is None:
                info = infos[row.id] = Informational(row.id, row.cause, row.source,
                                                     example=_shown(raw)[1])
            info.lines.append(number)
            continue
        repeat = raw in shown
        if not repeat:
            shown[raw] = _shown(raw)
        origin, msg = shown[raw]
        severity = "failure" if row.escalate and gpu else row.severity
        if row.severity == "failure":
            native_failures.add(row.label)
        if row.escalate and gpu:
            escalated.add(row.label)
        head = describe.get(row.label, row)
        cause = by_label.get(row.label)
        if cause is None:
            cause = by_label[row.label] = Cause(
                label=row.label, severity=severity, cause=head.cause, fix=head.fix,
                see=head.see, source=head.source)
        elif SEVERITY_ORDER[severity] < SEVERITY_ORDER[cause.severity]:
            cause.severity = severity
        # any row of the label may say what explains it (the cuInit 303 row, not the label's head)
        if row.id not in seen_rows:
            seen_rows.add(row.id)
            explainers[row.label] = (*explainers.get(row.label, head.explained_by),
                                     *row.explained_by)
        cause.lines.append(LogLine(number, msg, row.id, origin))
        if not repeat:
            _add_details(cause.details, m)

    released = _defer_to_library(by_label, lines)
    present = set(by_label)
    for label in list(by_label):
        root = _root(label, present, explainers)
        if root == label:
            continue
        merged, into = by_label.pop(label), by_label[root]
        into.lines = sorted(into.lines + merged.lines, key=lambda ln: ln.number)
        into.consequences.append(label)
        for key, vals in merged.details.items():
            into.details.setdefault(key, vals)
    for cause in by_label.values():
        _read_around(cause, lines, text)
        cause.detail = render_detail(describe[cause.label].detail if cause.label in describe
                                     else "", cause.details)
        if wanted and cause.severity == "failure" and cause.label in escalated:
            cause.detail = "; ".join(filter(None, [cause.detail, f"a failure here: {wanted}"]))
        if by_design and all(ln.row in _GPU_LIBRARY_ROWS for ln in cause.lines):
            cause.severity = "notice"  # TensorFlow was never meant to use the GPU here
            cause.detail = "; ".join(filter(None, [cause.detail, by_design]))
        if cause.label == "out-of-memory":
            _judge_memory(cause, text)
        _link_memory_view(cause)
    _judge_host_kill(by_label, lines, infos)
    _judge_host_share(by_label, text)
    _judge_kernel_oom(by_label, lines)
    _judge_step_progress(by_label, text)
    _judge_tensor_count(by_label, text)
    _judge_own_file(by_label, text)
    _judge_stdlib_shadow(by_label, lines, text)
    _judge_addon_range(by_label)
    _judge_ptxas_compare(by_label)
    _judge_gpu_check(by_label, lines, text)
    _judge_visible_devices(by_label, lines, text, infos)
    _judge_conda_arch(by_label, lines, text)
    _judge_delegate(by_label, lines, text)
    versions = _add_install_advice(text, list(by_label.values()))
    from tfperf.doctor.explain_finished import judge_finished

    demoted = judge_finished(by_label, lines, text, escalated)  # a run that went on (stop 40)
    explained = {number - 1 for number, _, _, _ in hits} - released
    foreign: set[int] = set()  # error lines the floor did not blame on TensorFlow
    memo = LooseMemo()  # the floor and the "not recognised" list read the same loose lines
    if not any(c.severity == "failure" for c in by_label.values()):
        # no failure nor warning found: a TensorFlow error line nothing read is read by its
        # words (explain_floor_loose) rather than left "not recognised"
        floor, foreign = _floor_cause(text, lines, explained, memo, loose=not any(
            c.severity == "warning" for c in by_label.values()))
        if floor is not None and floor.label not in by_label:
            by_label[floor.label] = floor
            if floor.details.get("addon"):  # a library's mismatch: its install line too
                versions = _add_install_advice(text, [floor]) or versions
    from tfperf.doctor.explain_evidence import apply_evidence
    from tfperf.doctor.explain_platform import apply_platform

    apply_platform(list(by_label.values()), text)  # before the evidence, which leads over it
    apply_evidence(list(by_label.values()), text)
    _apply_judgements(by_label, lines, text)
    if any(c.confidence == "low" or c.label in _API_GUESSES  # a missing tf.X: the API table
           for c in by_label.values()):
        from tfperf.doctor.explain_api import apply_api_versions

        apply_api_versions(list(by_label.values()), lines, text)
    judged = escalated - native_failures  # failures only because a GPU is judged wanted
    if not any(c.severity == "failure" and c.label not in judged for c in by_label.values()):
        judged = set()
    causes = sorted(by_label.values(), key=lambda c: (_rank(c, SEVERITY_ORDER), _prose_only(c),
                                                      c.label in judged, c.label in demoted,
                                                      c.first_line))
    informational = sorted(infos.values(), key=lambda i: i.lines[0])
    ex = Explanation(n_lines=n_lines, causes=causes, informational=informational,
                     gpu_evidence=gpu, versions=versions)
    if not ex.problems:
        _sort_loose(ex, text, lines, explained | {ln.number - 1 for c in causes for ln in c.lines},
                    foreign, memo)
        from tfperf.doctor.explain_finished import holds_error

        ex.holds_error = holds_error(lines)
    return ex


# rows that read a TensorFlow name missing as a Keras or TensorFlow install problem; raised inside
# another library's own frames, the name is that library's (written for another TensorFlow)
_TF_NAME_MISSING_ROWS = frozenset({"keras-tf-internals", "tf-installs-mixed"})


# labels whose rows guess at a missing TensorFlow name (explain_api settles them by the table)
_API_GUESSES = frozenset({"tf-installs-mixed", "keras-tf-version-mismatch"})


def _defer_to_library(by_label: dict[str, Cause], lines: list[str]) -> set[int]:
    """Drop a cause of those rows whose error a third-party library raised over a TensorFlow
    module's name (TensorLayer's ``tf_ops._TensorLike``, round 11), so the floor reads it as
    that library's mismatch with the installed TensorFlow; the line indices it explained, now
    unexplained."""
    from tfperf.doctor.explain_floor import raising_library

    released: set[int] = set()
    for label, cause in list(by_label.items()):
        if any(ln.row not in _TF_NAME_MISSING_ROWS or "'tensorflow" not in lines[ln.number - 1]
               for ln in cause.lines):
            continue
        if all(raising_library(lines, ln.number - 1) for ln in cause.lines):
            del by_label[label]
            released |= {ln.number - 1 for ln in cause.lines}
    return released


def _only_no_gpu(hits: list[tuple[int, Any, Any, str]], n_lines: int) -> str:
    """A log that is nothing but the driver saying it sees no CUDA device was posted about that: a
    machine with the driver loaded is set up for a GPU, so the GPU is wanted (round 9:
    FPN_Tensorflow#146, one cuInit no-device line, read as 'nothing wrong'). A missing CUDA library
    alone stays a notice: it is what a machine without a GPU prints (lightweight_mmm#23)."""
    if n_lines == 0 or len({number for number, _, _, _ in hits}) < n_lines:
        return ""
    if not all(row.label == "cuinit-no-device" for _, row, _, _ in hits):
        return ""
    return "the log holds nothing but this message, so it was posted about it: a GPU is wanted"


# the diagnostic's host: a container's (Docker names one by 12 hex digits of its id) or a hosted
# notebook's, whose images ship libcuda on CPU runtimes too
_DRIVER_HOST = re.compile(r"running on this host \((?P<host>[^)]*)\)")
_CONTAINER_HOST = re.compile(r"^[0-9a-f]{12}$|colab|kaggle|sagemaker", re.I)


def _driver_not_loaded(hits: list[tuple[int, Any, Any, str]], text: str) -> str:
    """cuInit ran and found no device while the kernel module is not loaded, on a host that is not
    a container: the driver's user library (libcuda) is installed there, so the machine was set
    up for a GPU whose driver is not running (a machine without a driver has no libcuda: cuInit
    fails to load, error 303/34, instead; round 15: tensorflow#255). Containers and hosted
    notebooks (Colab's CPU runtime: heldout5's nba84) ship libcuda without a GPU."""
    labels = {row.label for _, row, _, _ in hits}
    if not {"cuinit-no-device", "kernel-driver-not-running"} <= labels:
        return ""
    host = m["host"] if (m := _DRIVER_HOST.search(text)) else ""
    if not host or _CONTAINER_HOST.search(host) or "/content/" in text or "colab" in text:
        return ""
    return ("cuInit ran (the driver's libcuda is installed) yet the NVIDIA kernel module is not "
            f"loaded on the host {host}: the machine was set up for a GPU whose driver is not "
            "running")


def _sort_loose(ex: Explanation, text: str, lines: list[str], explained: set[int],
                foreign: set[int], memo: LooseMemo) -> None:
    """The error- and warning-shaped lines no row explained: TensorFlow's (unknown) or not."""
    from tfperf.doctor.explain_quiet import loose_lines

    for loose in loose_lines(text, lines, explained, memo):
        origin, msg = _shown(lines[loose.line])
        line = LogLine(loose.line + 1, msg, loose.kind, origin)
        if loose.tensorflow and loose.line not in foreign:
            ex.unknown.append(line)
        else:
            ex.not_tensorflow.append(line)


# rows saying TensorFlow could not load a GPU library at start-up and will not use the GPU (not an
# import that failed): in a program that runs TensorFlow on the CPU by design they change nothing
_GPU_LIBRARY_ROWS = frozenset({"dlopen-cudart", "dlopen-failed", "cannot-dlopen-gpu",
                               "dlopen-libcuda", "cuda-runtime-not-found"})


# the traceback runs tf_keras's own code: a frame in its package (or its import, see below;
# literal-led: an alternation is tried at every position of a long log)
_TF_KERAS_FRAME = re.compile(r"tf_keras[/\\]")


def _runs_tf_keras(text: str) -> bool:
    return ("import tf_keras" in text or "from tf_keras " in text
            or _TF_KERAS_FRAME.search(text) is not None)


def _read_around(cause: Cause, lines: list[str], text: str) -> None:
    """Values a cause's detail needs from beyond its own lines: the Keras whose frames rejected
    an object, the TensorFlow family packages a log lists."""
    if cause.label == "keras-flavours-mixed":
        from tfperf.doctor.explain_keras import receiver_path

        if path := receiver_path(lines, cause.first_line - 1):
            cause.details["receiver"] = [path]
    elif cause.label == "tf-installs-mixed":
        from tfperf.doctor.explain_versions import family_packages

        if found := family_packages(text):
            cause.details["family"] = found
    elif cause.label == "keras-unknown-object":
        from tfperf.doctor.explain_readings import is_tfjs

        if is_tfjs(text):
            cause.details["tfjs"] = ["TensorFlow.js"]
    elif cause.label == "op-no-device-kernel":  # "Registered:  device='CPU'" on the next lines
        near = "\n".join(lines[cause.first_line - 1:cause.first_line + 3])
        if found := list(dict.fromkeys(re.findall(r"device='(\w+)'", near))):
            cause.details["registered"] = found
    elif (cause.label == "keras-tf-version-mismatch" and "tf_keras" in text
          and _runs_tf_keras(text)):  # tf_keras's own code (not Keras 3's keras._tf_keras alias)
        cause.details["tf_keras"] = ["nightly" if re.search(r"tf[-_]nightly|\.dev20\d{6}", text)
                                     else "release"]
    elif cause.label == "cpu-missing-avx2":  # the wheel the log installed, when it names one
        from tfperf.doctor.explain_versions import wheel_file

        if wheel := wheel_file(text):
            cause.details["wheel"] = [wheel]
    elif cause.label == "cublas-failed":
        from tfperf.doctor.explain_versions import old_cuda_build, read_versions

        if old := old_cuda_build(read_versions(text)):
            cause.details["old_build"] = [old]


def _prose_only(cause: Cause) -> bool:
    """The cause rests only on rows that read the poster's prose (ids ending '-prose'): a
    message the program printed (an ImportError line) is the better headline (review 41)."""
    return bool(cause.lines) and all(ln.row.endswith("-prose") for ln in cause.lines)


def _rank(cause: Cause, order: dict[str, int]) -> float:
    """failure > warning > notice; the floor's generic reading (low confidence) comes after the
    causes a row knows (it is only made when no row found a failure) and before notices."""
    return order[cause.severity] + (1.5 if cause.confidence == "low" else 0.0)


# ---------------------------------------------------------------------------------------------
# refining: fragmentation, versions to install, and the floor under every error


_ONE_TENSOR_SHARE = 0.1  # a single tensor this share of the device memory is too big by itself
_FREE_HEADROOM = 2  # free memory this many times the tensor could well hold it in one piece


def _judge_memory(cause: Cause, text: str) -> None:
    """An OOM whose dump shows more free memory than the request is fragmentation, unless the
    tensor that failed is by itself a large share of the device's memory and needs most of what
    is free (round 19: a [1792, 241084] logits tensor of 1.6 GiB on a 12 GiB limit with 1.6 GiB
    free is a layer too big; the same tensor with 5 GiB free is fragmentation, review 38)."""
    from tfperf.doctor.explain_facts import read_facts
    from tfperf.doctor.explain_memory import judge_oom
    from tfperf.doctor.knowledge import derived_causes

    verdict = judge_oom(cause.details)
    if verdict is None:
        return
    facts = read_facts(text)
    big = (facts.oom_tensor is not None and facts.device_memory is not None
           and facts.oom_tensor.size >= _ONE_TENSOR_SHARE * facts.device_memory
           and verdict.free < _FREE_HEADROOM * facts.oom_tensor.size)
    if verdict.fragmented and big and facts.oom_tensor and facts.device_memory:
        share = 100 * facts.oom_tensor.size / facts.device_memory
        cause.detail = "; ".join(filter(None, [cause.detail, (
            f"the tensor that failed is {share:.0f} % of the device memory by itself: its size, "
            "not fragmentation, is the cause")]))
        return
    if verdict.fragmented and not big:
        row = derived_causes()["gpu-memory-fragmentation"]
        cause.consequences.append(cause.label)
        cause.label = "gpu-memory-fragmentation"
        cause.cause, cause.fix, cause.see, cause.source = (row["cause"], row["fix"], row["see"],
                                                           row["source"])
    cause.detail = "; ".join(filter(None, [cause.detail, verdict.detail]))


def _link_memory_view(cause: Cause) -> None:
    """An out-of-memory cause points at the memory view, with the memory that ran out and
    the tensor shape the log names (``tfperf.memory.oom``)."""
    from tfperf.memory.oom import OOM_LABELS, memory_view_hint

    if cause.label in OOM_LABELS:
        cause.see = memory_view_hint(cause.details)


def _judge_host_kill(by_label: dict[str, Cause], lines: list[str],
                     infos: dict[str, Informational]) -> None:
    """A large host allocation, or a shuffle buffer filling, followed by the process being killed:
    host RAM ran out (the allocation line alone stays a notice: most runs that print it go on)."""
    from tfperf.doctor.explain_memory import allocation_detail, killed_after, shuffle_killed
    from tfperf.doctor.knowledge import label_rows

    alloc = by_label.get("large-host-allocation")
    if "host-out-of-memory" in by_label:
        return
    if alloc is None:
        shuffle = infos.get("shuffle-buffer")
        if shuffle is None or (found := shuffle_killed(lines, shuffle.lines)) is None:
            return
        kill, detail = found
        head = label_rows()["host-out-of-memory"]
        del infos["shuffle-buffer"]
        origin, msg = _shown(lines[kill])
        buffer_lines = [LogLine(n, shown[1], "shuffle-buffer", shown[0])
                        for n in shuffle.lines if (shown := _shown(lines[n - 1]))]
        by_label["host-out-of-memory"] = Cause(
            label="host-out-of-memory", severity="failure",
            cause="The host's RAM ran out while tf.data's shuffle buffer held its elements: the "
                  "operating system's out-of-memory killer ended the process (a buffer of a few "
                  "thousand decoded images takes gigabytes).",
            fix=f"Lower the shuffle buffer's size (dataset.shuffle(buffer_size), an input reader's "
                f"shuffle_buffer_size) or shuffle file names or records before decoding, so the "
                f"buffer holds fewer decoded elements; or give the machine more RAM. {head.fix}",
            see=head.see, source=head.source,
            lines=[*buffer_lines, LogLine(kill + 1, msg, "killed", origin)],
            consequences=["shuffle-buffer"], detail=detail)
        return
    at = killed_after(lines, alloc.first_line - 1)
    if at is None:
        return
    head = label_rows()["host-out-of-memory"]
    del by_label["large-host-allocation"]
    origin, msg = _shown(lines[at])
    by_label["host-out-of-memory"] = Cause(
        label="host-out-of-memory", severity="failure", cause=head.cause, fix=head.fix,
        see=head.see, source=head.source, lines=[*alloc.lines, LogLine(at + 1, msg, "killed",
                                                                         origin)],
        consequences=["large-host-allocation"], details=alloc.details,
        detail=f"{allocation_detail(alloc.details)} (line {alloc.first_line}), then the process "
               f"was killed (line {at + 1}): the operating system's out-of-memory killer")


# the Linux kernel's OOM killer: its report of the process it killed, and its invocation
_KERNEL_OOM = re.compile(r"Out of memory: Kill(?:ed)? process \d+ \((?P<victim>[^)\n]+)\)|"
                         r"\binvoked oom-killer\b")


def _judge_kernel_oom(by_label: dict[str, Cause], lines: list[str]) -> None:
    """The kernel's OOM killer ended a Python process and no row found a failure: the machine's
    RAM ran out (round 20: deep_sort_yolov3#111 on a Jetson Nano, whose GPU shares that RAM; the
    kernel's lines read as not TensorFlow's)."""
    from tfperf.doctor.knowledge import label_rows

    if any(c.severity == "failure" for c in by_label.values()):
        return
    hits = [(n, m) for n, ln in enumerate(lines)
            if ("Out of memory: Kill" in ln or "invoked oom-killer" in ln)  # the regex's literals
            and (m := _KERNEL_OOM.search(ln))]
    victims = [m["victim"] for _, m in hits if m["victim"]]
    if not victims or not any(v.lower().startswith(("python", "ipykernel")) for v in victims):
        return
    head = label_rows()["host-out-of-memory"]
    shown = [LogLine(n + 1, msg, "kernel-oom", origin)
             for n, _ in hits for origin, msg in [_shown(lines[n])]]
    by_label["host-out-of-memory"] = Cause(
        label="host-out-of-memory", severity="failure",
        cause="The Linux kernel's out-of-memory killer ended the program: the machine's RAM ran "
              "out (on a Jetson or another board with an integrated GPU, the GPU's memory is that "
              "same RAM, so TensorFlow reserving GPU memory takes it from the system).",
        fix="Use less memory (a smaller batch, model or input, fewer data-loading workers), cap "
            "TensorFlow's GPU memory on a shared-memory board (set_memory_growth or a "
            "memory_limit), add swap, or use a machine with more RAM.",
        see=head.see, source="the Linux kernel's OOM killer (mm/oom_kill.c) ; "
                             "https://github.com/qidian213/deep_sort_yolov3/issues/111",
        lines=shown, detail=f"the kernel killed {', '.join(dict.fromkeys(victims))}")


def _judge_host_share(by_label: dict[str, Cause], text: str) -> None:
    """A large host allocation that is a large share of the RAM the log shows (or of the free RAM
    by TensorFlow's own total count) is a problem, not a notice."""
    from tfperf.doctor.explain_memory import ram_shown, share_detail

    alloc = by_label.get("large-host-allocation")
    if alloc is None or alloc.severity != "notice":
        return
    share = share_detail(alloc.details, ram_shown(text) if alloc.details.get("bytes") else None)
    if share:
        alloc.severity = "warning"
        alloc.detail = "; ".join(filter(None, [alloc.detail, f"{share}: a large share of the "
                                               "machine's memory, so lower the batch size (the "
                                               "evaluation's too) or use a machine with more RAM"]))


# the step counter's own report (StepCounterHook, TPUEstimator) and Estimator's loss line, each
# matched just after its literal (a regex scan of a 10,000-line log costs milliseconds)
_STEP_RATE = re.compile(r"\d+(?:\.\d+)?(?:e-?\d+)?")
_STEP_AT = re.compile(r"\d+")


def _find_all(text: str, literal: str) -> list[int]:
    """Where ``literal`` occurs in ``text`` (str.find: faster than a regex scan of the log)."""
    out: list[int] = []
    at = text.find(literal)
    while at >= 0:
        out.append(at)
        at = text.find(literal, at + len(literal))
    return out


def _numbers_after(text: str, literal: str, rx: re.Pattern[str]) -> list[str]:
    """The numbers ``rx`` reads right after each occurrence of ``literal`` in ``text``."""
    return [m.group(0) for at in _find_all(text, literal)
            if (m := rx.match(text, at + len(literal)))]


def _judge_step_progress(by_label: dict[str, Cause], text: str) -> None:
    """"Global step has not been increased" in a run whose step counter goes on advancing (a
    global_step/sec above 0, or Estimator's or slim's step numbers rising): each step is slow
    enough that the hook read the same step twice; nothing is stuck, so it is a notice."""
    stalled = by_label.get("global-step-stalled")
    if stalled is None or stalled.severity != "warning":
        return
    rates = [float(n) for n in _numbers_after(text, "global_step/sec: ", _STEP_RATE)]
    steps = ([int(n) for n in _numbers_after(text, " step = ", _STEP_AT)]  # Estimator's
             or [int(n) for n in _numbers_after(text, "global step ", _STEP_AT)])  # slim's
    if any(r > 0 for r in rates):
        shown = f"global_step/sec: {next(r for r in rates if r > 0):g}"
    elif len(set(steps)) > 1 and steps[-1] > steps[0]:
        shown = f"step {steps[0]} to {steps[-1]}"
    else:
        return
    progress = (f"The run progresses ({shown}): each step is slow, so the step-counter hook saw "
                "the same step twice; nothing is stuck (a smaller batch makes steps faster and "
                "the warning rarer).")
    stalled.severity = "notice"
    stalled.cause = f"{progress} Were it stuck: {stalled.cause}"
    stalled.detail = "; ".join(filter(None, [stalled.detail, f"the log shows {shown}"]))


_NUM_TENSORS = re.compile(r"['\"]?: ?(\d+)")
_LEAK_MIN_REPORTS = 3  # rising on this many tf.memory() reports in a row is a leak, not noise


def _judge_tensor_count(by_label: dict[str, Cause], text: str) -> None:
    """tf.memory() reports (TensorFlow.js) are a notice, unless numTensors rises report after
    report: tensors made per call and never disposed, a leak that ends in an out-of-memory."""
    report = by_label.get("tfjs-tensor-leak")
    if report is None:
        return
    counts = [int(m.group(1)) for at in _find_all(text, "numTensors")
              if (m := _NUM_TENSORS.match(text, at + len("numTensors")))]
    run = best = 1
    for before, after in itertools.pairwise(counts):
        run = run + 1 if after > before else 1
        best = max(best, run)
    if best < _LEAK_MIN_REPORTS:
        report.cause = ("tf.memory() reports a tensor count that does not keep rising: nothing "
                        f"leaks. Were it to rise call after call: {report.cause}")
        return
    report.severity = "warning"
    report.detail = "; ".join(filter(None, [report.detail, (
        f"numTensors rose from {counts[0]} to {counts[-1]} over {len(counts)} reports")]))


def _judge_own_file(by_label: dict[str, Cause], text: str) -> None:
    """A file of the user's named like a package (keras.py, tensorflow.py) on the traceback
    shadows the package only where the traceback shows it so: an ``import PKG`` whose next frame
    is that file, or the package missing what it always has (``module 'PKG' has no attribute``,
    Python 2's ``'module' object has no attribute``, a circular import, not a package). A script
    merely named keras.py that uses tf.keras shadows nothing."""
    cause = by_label.get("tensorflow-shadowed")
    if cause is None or any(ln.row != "own-file-shadows-package" for ln in cause.lines):
        return
    owns, pkgs = cause.details.get("own_file", []), cause.details.get("own_pkg", [])
    if "'module' object has no attribute" in text:  # Python 2's wording names no module
        return
    for own, pkg in dict.fromkeys(zip(owns, pkgs, strict=False)):
        if any(w in text for w in (f"module '{pkg}' has no attribute", f"'{pkg}' is not a package",
                                   f"partially initialized module '{pkg}'")):
            return
        needle = f'File "{own}"'  # the frame right after an `import PKG` line is the own file
        at = text.find(needle)
        while at >= 0:
            end = text.rfind("\n", 0, at)
            line = text[text.rfind("\n", 0, max(end, 0)) + 1:max(end, 0)].strip()
            if line.startswith((f"import {pkg}", f"from {pkg}")):
                return
            at = text.find(needle, at + 1)
    del by_label["tensorflow-shadowed"]


def _judge_stdlib_shadow(by_label: dict[str, Cause], lines: list[str], text: str) -> None:
    """A file of the user's named like a standard-library module that an import on the traceback
    ran (``explain_stdlib_shadow``): the root cause; the errors read after it are its
    consequences (the user's file fails, or lacks what the importer wanted)."""
    from tfperf.doctor.explain_stdlib_shadow import find_shadow
    from tfperf.doctor.knowledge import derived_causes

    found = find_shadow(text)
    if found is None:
        return
    row = derived_causes()["stdlib-shadowed"]
    origin, msg = _shown(lines[found.line])
    cause = Cause(label="stdlib-shadowed", severity="failure",
                  cause=row["cause"], fix=row["fix"].replace("MODULE", found.module),
                  see=row["see"], source=row["source"],
                  lines=[LogLine(found.line + 1, msg, "stdlib-shadowed", origin)],
                  detail=(f"your {found.path} is imported as the standard library's "
                          f"'{found.module}' (by {found.importer})"))
    cause.details["shadowed"] = [found.module]
    for label in [lb for lb, c in by_label.items()
                  if c.severity == "failure" and c.first_line > found.line]:
        cause.consequences.append(label)
        del by_label[label]
    by_label["stdlib-shadowed"] = cause


def _judge_addon_range(by_label: dict[str, Cause]) -> None:
    """An add-on's "TensorFlow X is not supported" warning whose declared range is a known erratum
    of the add-on's own check (``addon_check_errata.csv``: tensorflow-addons 0.11.0 says
    "strictly below 2.3.0" yet supports TF 2.3) for the TensorFlow it names: a false alarm."""
    cause = by_label.get("tf-addon-version-mismatch")
    if cause is None or cause.severity != "failure":
        return
    d = cause.details
    lo, hi, have = (d.get(k, [""])[0] for k in ("addons_min", "addons_max", "tf_have"))
    if not (lo and hi and have) or set(d) & {"addon", "addon2", "lib", "metal", "dml"}:
        return  # not the Python-ops range warning alone (a symbol error is never a false alarm)
    from tfperf.doctor.knowledge.tables import read_table

    mm = ".".join(have.split(".")[:2])
    erratum = next((r for r in read_table("addon_check_errata.csv")
                    if (r["declared_min"], r["declared_max"], r["supports_tf_minor"])
                    == (lo, hi, mm)), None)
    if erratum is None:
        return
    cause.severity = "notice"
    cause.cause = (f"A false alarm: the {erratum['addon']} release that declares TensorFlow >= "
                   f"{lo} and < {hi} does support TensorFlow {mm} (its own check excludes the "
                   "release it was built for, an off-by-one its maintainers fixed); nothing to "
                   f"do, a later {erratum['addon']} release silences it. Were the versions "
                   f"really apart: {cause.cause}")
    cause.source = f"{cause.source} ; {erratum['source']}"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version))


def _judge_ptxas_compare(by_label: dict[str, Cause]) -> None:
    """"ptxas X, which is older than Y" where X is not older than Y: the check's own fault (TF
    1.12 compared the versions wrongly: 10.0.145 "older than" 9.2.88), a false alarm."""
    cause = by_label.get("ptxas-problem")
    if cause is None or cause.severity == "failure":
        return
    old, least = (cause.details.get(k, [""])[0] for k in ("ptxas_old", "ptxas_min"))
    if not (old and least) or _version_key(old) < _version_key(least):
        return
    if any(ln.row != "ptxas-fallback" for ln in cause.lines) or len(
            {ln.text for ln in cause.lines}) > 1:
        return  # another ptxas line says something of its own
    cause.severity = "notice"
    cause.cause = (f"A false alarm: ptxas {old} is not older than {least}; the warning comes from "
                   "the version check of TensorFlow 1.12's XLA, which compared the versions "
                   "wrongly, so nothing is wrong with this ptxas. Had it been older: "
                   f"{cause.cause}")
    cause.source = f"{cause.source} ; https://github.com/tensorflow/tensorflow/issues/23874"


def _judge_gpu_check(by_label: dict[str, Cause], lines: list[str], text: str) -> None:
    """The user's own GPU check answering "no GPU" (is_built_with_cuda() False, an empty GPU list)
    in a log where nothing else is wrong: the GPU is wanted and not used, a failure. Which cause
    leads (native Windows, macOS, a CPU-only package) is the evidence's to say."""
    if any(c.severity in ("failure", "warning") for c in by_label.values()):
        return
    from tfperf.doctor.explain_readings import gpu_not_visible
    from tfperf.doctor.knowledge import derived_causes

    found = gpu_not_visible(text)
    if found is None:
        return
    row = derived_causes()["gpu-not-visible"]
    shown = []
    for n in range(found[0], min(found[1], len(lines) - 1) + 1):
        if lines[n].strip():
            origin, msg = _shown(lines[n])
            shown.append(LogLine(n + 1, msg, "gpu-check", origin))
    if not shown:
        return
    by_label["gpu-not-visible"] = Cause(
        label="gpu-not-visible", severity="failure", cause=row["cause"], fix=row["fix"],
        see=row["see"], source=row["source"], lines=shown,
        detail="the log's own GPU check found no GPU")


# CUDA_VISIBLE_DEVICES set to indices that leave out GPU 0 (os.environ[...] = "1", export, env)
_VISIBLE = re.compile(r"CUDA_VISIBLE_DEVICES['\"]?\]?\s*=\s*['\"]?(?P<ids>[1-9]\d*(?:,[1-9]\d*)*)"
                      r"(?![\d,])")


def _judge_visible_devices(by_label: dict[str, Cause], lines: list[str], text: str,
                           infos: dict[str, Informational]) -> None:
    """CUDA_VISIBLE_DEVICES naming only GPUs from 1 up, and CUDA then finding no device (the
    cuda_diagnostics block TensorFlow prints after a failed cuInit, or cuInit's NO_DEVICE):
    the indices count from 0, so on a machine with fewer GPUs the setting hides them all."""
    if "CUDA_VISIBLE_DEVICES" not in text or any(
            c.severity in ("failure", "warning") for c in by_label.values()):
        return
    if "cuda-diagnostics" not in infos and "cuinit-no-device" not in by_label:
        return
    m = _VISIBLE.search(text)
    if m is None:
        return
    ids = m["ids"]
    n = text.count("\n", 0, m.start())
    origin, msg = _shown(lines[n])
    lowest = min(int(i) for i in ids.split(","))
    by_label["gpu-not-visible"] = Cause(
        label="gpu-not-visible", severity="failure",
        cause=(f"The log sets CUDA_VISIBLE_DEVICES={ids} and CUDA then found no GPU (the "
               "diagnostics TensorFlow prints after a failed cuInit): GPU indices count from 0, "
               f"so on a machine with {lowest} GPU{'s' if lowest > 1 else ''} or fewer the "
               "setting hides every GPU and TensorFlow runs on the CPU."),
        fix=("Set CUDA_VISIBLE_DEVICES to an index the machine has (\"0\" on a one-GPU "
             "machine; nvidia-smi -L lists them) or remove the line, then run again."),
        see="nvidia-smi -L (the GPUs and their indices)",
        source=("CUDA's CUDA_VISIBLE_DEVICES (indices from 0; a missing index hides the GPUs) ; "
                "https://github.com/weizhepei/CasRel/issues/28 (\"1\" on a one-GPU machine: "
                "\"0\" fixed it)"),
        lines=[LogLine(n + 1, msg, "visible-devices", origin)],
        detail=f"CUDA_VISIBLE_DEVICES={ids}; CUDA found no device")


# conda's list of packages its channels lack, naming Apple's arm64-only tensorflow-deps
_CONDA_MISSING_DEPS = re.compile(r"PackagesNotFoundError: The following packages are not available "
                                 r"from current channels:[ \t]*\n(?:[ \t]*\n|[ \t]*-[^\n]*\n){0,8}?"
                                 r"[ \t]*-[ \t]*(?P<pkg>tensorflow-deps)\b")


def _judge_conda_arch(by_label: dict[str, Cause], lines: list[str], text: str) -> None:
    """conda cannot find tensorflow-deps, Apple's package that exists only for osx-arm64: the
    conda (Miniforge/Anaconda) running is an x86_64 one, under Rosetta on an Apple Silicon Mac,
    so it searches the osx-64 channels; the architecture, not the package name, is wrong."""
    if "tensorflow-deps" not in text or any(c.severity == "failure" for c in by_label.values()):
        return
    m = _CONDA_MISSING_DEPS.search(text)
    if m is None:
        return
    from tfperf.doctor.knowledge import label_rows

    head = label_rows()["macos-wrong-architecture"]
    n = text.count("\n", 0, m.start("pkg"))
    origin, msg = _shown(lines[n])
    by_label["macos-wrong-architecture"] = Cause(
        label="macos-wrong-architecture", severity="failure",
        cause=("conda's channels have no tensorflow-deps: Apple publishes it for osx-arm64 only, "
               "so the conda running is an x86_64 (Intel) one (an Intel Miniforge or Anaconda "
               "under Rosetta on an Apple Silicon Mac) that searches the osx-64 channels. "
               "Otherwise: " + head.cause),
        fix=("Install the arm64 Miniforge (Miniforge3-MacOSX-arm64) in place of the Intel one, "
             "create the environment again and check python -c 'import platform; "
             "print(platform.platform())' says arm64; then conda install -c apple "
             "tensorflow-deps. Otherwise: " + head.fix),
        see=head.see, source=head.source + (" ; conda's PackagesNotFoundError for "
                                            "tensorflow-deps (osx-arm64 only, channel apple)"),
        lines=[LogLine(n + 1, msg, "conda-arm64-only", origin)],
        detail="tensorflow-deps not found: an osx-64 conda")


def _judge_delegate(by_label: dict[str, Cause], lines: list[str], text: str) -> None:
    """An accelerator delegate the code sets up that never took the graph, in a log where nothing
    else is wrong: the model ran on the CPU (``explain_delegates``)."""
    if any(c.severity in ("failure", "warning") for c in by_label.values()):
        return
    from tfperf.doctor.explain_delegates import delegate_not_applied
    from tfperf.doctor.knowledge import derived_causes

    found = delegate_not_applied(text)
    if found is None:
        return
    name, at = found
    row = derived_causes()["tflite-delegate-not-applied"]
    origin, msg = _shown(lines[min(at, len(lines) - 1)])
    by_label["tflite-delegate-not-applied"] = Cause(
        label="tflite-delegate-not-applied", severity="warning",
        cause=row["cause"].replace("{delegate}", name), fix=row["fix"], see=row["see"],
        source=row["source"], lines=[LogLine(at + 1, msg, "delegate", origin)],
        detail=f"the code sets up the {name} delegate; only XNNPACK (CPU) shows in the log")


def _apply_judgements(by_label: dict[str, Cause], lines: list[str], text: str) -> None:
    """The facts' judgements (``explain_judgements``): each leads the cause it names (``*``: the
    first failure), follows its words as a remark, or adds a warning of its own; the first
    judgement's words end up first."""
    from tfperf.doctor.explain_evidence import lead
    from tfperf.doctor.explain_facts import read_facts
    from tfperf.doctor.explain_judgements import judge
    from tfperf.doctor.knowledge import SEVERITY_ORDER

    for j in reversed(judge(read_facts(text), by_label, text)):
        if j.adds:
            at = next((n for n, ln in enumerate(lines) if "Adding visible gpu devices" in ln),
                      len(lines) - 1)
            origin, msg = _shown(lines[at]) if lines else (None, "")
            by_label.setdefault(j.label, Cause(
                label=j.label, severity="warning", cause=j.cause, fix=j.fix, see="",
                source=j.source, lines=[LogLine(at + 1, msg, "facts", origin)], detail=j.shown))
            continue
        failures = sorted((c for c in by_label.values() if c.severity == "failure"),
                          key=lambda c: (_rank(c, SEVERITY_ORDER), c.first_line))
        target = by_label.get(j.label) if j.label != "*" else (failures[0] if failures else None)
        if target is not None and j.follows:
            target.cause, target.fix = f"{target.cause} {j.cause}", f"{target.fix} {j.fix}"
            target.source = f"{target.source} ; {j.source}"
        elif target is not None:
            lead(target, j.cause, j.fix, j.source, j.shown)


def _add_install_advice(text: str, causes: list[Cause]) -> dict[str, str]:
    """Fill ``install`` for the causes that have version advice; the versions read, if any."""
    from tfperf.doctor.explain_versions import has_advice, install_advice, read_versions

    wanting = [c for c in causes if has_advice(c.label)]
    if not wanting:
        return {}
    versions = read_versions(text)
    for cause in wanting:
        cause.install = install_advice(cause.label, cause.details, versions)
    return versions.as_dict()


def _floor_cause(text: str, lines: list[str], explained: set[int], memo: LooseMemo,
                 loose: bool = True) -> tuple[Cause | None, set[int]]:
    """The floor's reading of the TensorFlow error no row explained (or None), and the error
    lines it did not blame on TensorFlow."""
    from tfperf.doctor import explain_floor as F

    site, foreign_errors = F.scan_errors(text, lines, explained)
    foreign = {f.line for f in foreign_errors}
    reading, component = None, ""
    if site is None and not explained and (
            got := F.site_in_tf_program(text, lines, foreign_errors)):
        # nothing else recognised, in a program that uses TensorFlow, and the error is a
        # component's that runs TensorFlow's work or ships with it: read it as that component's
        # rather than say "not recognised" (round 21: cv2's static TLS, a TFLite delegate)
        site, shows, component = got
        foreign.discard(site.line)
        reading = F.component_reading(site, component, shows)
    addon = None
    if site is None and not explained and (got_api := _addon_api_site(lines, foreign_errors)):
        # an add-on's API called with arguments or names its release does not have: the add-on
        # and the code or TensorFlow do not match, though no TensorFlow frame shows (round 31)
        site, addon = got_api
        foreign.discard(site.line)
    renamed = None
    if site is None and not explained and (got_kw := _renamed_keyword_site(lines,
                                                                           foreign_errors)):
        # a keyword the called library renamed (blacklist -> denylist): two packages' releases
        # apart, read rather than "not recognised" (round 31: gin-config under tf-agents)
        site, renamed = got_kw
        foreign.discard(site.line)
    if site is None and not explained and (
            third := _third_party_site(lines, foreign_errors)) is not None:
        # a package outside TensorFlow's family missing a name: that package's release, read
        # rather than "not recognised" (round 31: pip had backtracked to an ancient release)
        site = third
        foreign.discard(site.line)
    if site is None and loose:
        # an error line that lost its form (no class prefix, a cut traceback): its class is
        # read from its words rather than "not recognised" (stop 41)
        from tfperf.doctor.explain_floor_loose import loose_site

        site = loose_site(text, lines, explained, foreign, memo)
    if site is None:
        return None, foreign
    reading = reading or F.read_error(site)
    whose = f" from {component}" if component else ""
    likely = list(reading.likely)
    numbered = " ".join(f"{i}) {c}" for i, (c, _) in enumerate(likely, 1))
    fixes = " ".join(f"{i}) {f}" for i, (_, f) in enumerate(likely, 1))
    shown = [ln for ln in site.context_lines[:4] if lines[ln].strip()]
    cause = Cause(
        label=F.label_of(site.cls), severity=site.severity, confidence="low",
        cause=f"{reading.meaning} No knowledge row matched this message, so this is "
              f"the generic "
              f"reading of a {site.cls}{whose}"
              f"{f' ({site.inferred})' if site.inferred else ''}"
              f"; most likely first: {numbered}",
        fix=fixes,
        see="tfperf explain names the class, op, shapes and your frame; a confirmed cause for "
            "this wording can become a knowledge row (data/error_patterns.csv)",
        source=(reading.source if component else
                f"{reading.source} ; ranked causes: data/error_class_causes.csv"),
        lines=[_floor_line(ln + 1, lines[ln]) for ln in shown],
        likely=likely)
    cause.detail = F.detail_of(site)
    cause.details = {"class": [site.cls], **({"op": [site.op]} if site.op else {}),
                     **({"device": [site.device]} if site.device else {}),
                     **({"frame": [site.user_frame]} if site.user_frame else {})}
    if F.clause_leads(site):
        cause.details["clause"] = [likely[0][0][:120]]
    if addon is not None:
        _as_addon_mismatch(cause, site, addon)
    elif renamed is not None:
        _as_renamed_keyword(cause, renamed)
    elif F.library_mismatch(site):
        _as_library_mismatch(cause, site)
    elif package := _addon_op_failed(site):
        _as_addon_op_failure(cause, site, package)
    return cause, foreign


# the statuses of a kernel's own machinery failing (not of its inputs: an InvalidArgumentError
# in an add-on's op is the data's, as in TensorFlow's own ops)
_MACHINERY = frozenset({"InternalError", "UnknownError", "NotFoundError", "UnimplementedError",
                        "FailedPreconditionError"})


def _addon_op_failed(site: Any) -> str:
    """The add-on whose op (``[Op:CaseFoldUTF8]``, a node's type) failed in its own machinery,
    or '': its kernels are the add-on's compiled code, built for one TensorFlow release."""
    from tfperf.doctor import explain_floor as F
    from tfperf.doctor.explain_readings import op_kind

    if site.cls not in _MACHINERY or not site.op or F.clause_leads(site):
        return ""  # (the message's own clause, a path given for a model's bytes, goes first)
    kind, package = op_kind({"op": [site.op.split(" (")[0]]})
    return package if kind == "addon" else ""


def _as_addon_op_failure(cause: Cause, site: Any, package: str) -> None:
    """An add-on's own op failed inside its kernel: the add-on's compiled release and the
    installed TensorFlow most often do not match (low confidence, the floor's reading)."""
    from tfperf.doctor.knowledge import label_rows

    head = label_rows()["tf-addon-version-mismatch"]
    op = site.op.split(" (")[0]
    cause.label = "tf-addon-version-mismatch"
    cause.cause = (f"{site.cls} inside {op}, an op of {package} (its own compiled kernel, not "
                   f"TensorFlow's: {site.message[:120]}): most often that {package} release was "
                   f"built for another TensorFlow than the installed one, so its kernels or the "
                   f"data they load do not work with it, else it is an early release whose "
                   f"packaging its next one fixed. {head.cause}")
    cause.fix = (f"Install the {package} release made for the installed TensorFlow (pip show "
                 f"{package} tensorflow), then run the op again; if it still fails with the pair "
                 f"matched, search {package}'s issues for the op's name. {head.fix}")
    cause.see = head.see
    cause.likely = [(f"{package} does not match the installed TensorFlow: {op} is its op.",
                     cause.fix.split("), ")[0] + ")."), *cause.likely][:3]
    cause.source = f"{head.source} ; the op's package (explain_readings: add-on ops)"
    cause.details["addon"] = [package]


def _addon_api_site(lines: list[str], foreign: list[Any]) -> tuple[Any, Any] | None:
    """The first error the floor set aside that is an add-on's API not matching its call
    (``explain_addon_api``), as a site, and the add-on."""
    from tfperf.doctor import explain_floor as F
    from tfperf.doctor.explain_addon_api import addon_called, is_api_shape

    for f in foreign:
        if not is_api_shape(f.cls, f.message):
            continue
        site = F.site_at(lines, f.line, f.cls, f.message)
        if got := addon_called(lines, f.line, site.frames, f.message):
            return site, got
    return None


def _renamed_keyword_site(lines: list[str],
                          foreign: list[Any]) -> tuple[Any, tuple[str, str, str]] | None:
    from tfperf.doctor import explain_floor as F
    from tfperf.doctor.explain_addon_api import renamed_keyword

    for f in foreign:
        if f.cls == "TypeError" and (got := renamed_keyword(f.message)):
            return F.site_at(lines, f.line, f.cls, f.message), got
    return None


def _as_renamed_keyword(cause: Cause, renamed: tuple[str, str, str]) -> None:
    """A call passing a keyword its library renamed: the caller and the called library are
    releases apart; low confidence, the floor's reading."""
    func, kw, new = renamed
    cause.cause = (f"{func}() no longer takes '{kw}': the library that defines it renamed the "
                   f"keyword (to '{new}', as libraries did in 2020-2021; gin-config's "
                   f"@gin.configurable is one) in a newer release, and the code calling it, often "
                   f"another library written for the older release, still passes '{kw}'. "
                   f"{cause.cause}")
    fix = (f"Install the release of {func}()'s library from before the rename (pip show it; "
           f"its changelog names the release), or upgrade the package whose code passes '{kw}' "
           f"to a release written for '{new}'.")
    cause.fix = f"{fix} {cause.fix}"
    cause.likely = [(f"{func}()'s library renamed '{kw}' to '{new}' in a newer release than the "
                     "calling code was written for.", fix), *cause.likely][:3]
    cause.details["renamed"] = [f"{kw} -> {new}"]


def _third_party_site(lines: list[str], foreign: list[Any]) -> Any:
    """The first set-aside AttributeError of a third-party module (``explain_package_api``)."""
    from tfperf.doctor import explain_floor as F
    from tfperf.doctor.explain_package_api import is_third_party_missing

    f = next((f for f in foreign if f.cls == "AttributeError"
              and is_third_party_missing(f.message)), None)
    return None if f is None else F.site_at(lines, f.line, f.cls, f.message)


def _as_addon_mismatch(cause: Cause, site: Any, addon: Any) -> None:
    """An add-on's API that does not take the call the code makes: the add-on's release and the
    code (or the TensorFlow under it) do not match; low confidence, the floor's reading."""
    from tfperf.doctor.knowledge import label_rows

    head = label_rows()["tf-addon-version-mismatch"]
    name = addon.addon
    what = ("does not take the arguments the call passes" if site.cls == "TypeError"
            else "does not have the name the code uses")
    cause.label = "tf-addon-version-mismatch"
    cause.cause = (f"{site.cls} where the code calls {name} ('{addon.shown}'; "
                   f"{site.message[:120]}): the installed {name} release {what}, so it is "
                   f"older or newer than the code was written for, or than the TensorFlow it "
                   f"runs on (an add-on release calls TensorFlow's API of one release). "
                   f"{head.cause}")
    cause.fix = (f"Install the {name} release made for the installed TensorFlow (pip show {name} "
                 f"tensorflow; each {name} release pairs with one TensorFlow), upgrading both to a "
                 f"matching pair when the code needs a newer {name}. {head.fix}")
    cause.see = head.see
    cause.likely = [(f"{name} and the code or TensorFlow do not match: the installed {name} "
                     f"{what}.", cause.fix.split(". ")[0] + "."), *cause.likely][:3]
    cause.source = f"{head.source} ; the add-on read from the call (explain_addon_api)"
    cause.details["addon"] = [name]


def _as_library_mismatch(cause: Cause, site: Any) -> None:
    """A TensorFlow name missing inside a third-party library's own frames: the library and the
    installed TensorFlow do not match, a known cause (still read by the floor: low confidence)."""
    from tfperf.doctor.knowledge import label_rows

    head = label_rows()["tf-addon-version-mismatch"]
    cause.label = "tf-addon-version-mismatch"
    what = ("calls a TensorFlow function with arguments the installed TensorFlow's version of it "
            f"does not take ({site.library_code[:80]})" if site.cls == "TypeError"
            else "uses a TensorFlow name the installed TensorFlow does not have")
    cause.cause = (f"{site.cls} raised inside {site.library}, a library built on TensorFlow, "
                   f"while it ran or was imported ({site.message[:120]}): {site.library} {what}, "
                   f"so the two do not match. {head.cause}")
    lib = site.library
    cause.fix = (f"Upgrade {lib} to a release written for the installed TensorFlow (its newest "
                 f"release; when the fix is only in its repository, install {lib} from there), or "
                 f"install the TensorFlow {lib} was written for. {head.fix}")
    cause.see = head.see
    cause.likely = [(f"{lib} and the installed TensorFlow do not match: {lib} {what}.",
                     cause.fix.split(". ")[0] + "."), *cause.likely][:3]
    cause.source = f"{head.source} ; the library read from the traceback (explain_floor)"
    cause.details["addon"] = [site.library]


def _floor_line(number: int, raw: str) -> LogLine:
    origin, msg = _shown(raw)
    return LogLine(number, msg, "floor", origin)


# ---------------------------------------------------------------------------------------------
# the doctor's view: one entry per distinct message, in cause order


@dataclass(frozen=True)
class Match:
    id: str  # the cause label (or the informational row id)
    cause: str
    fix: str
    line: str
    line_number: int
    severity: str
    source: str = ""
    origin: str | None = None
    count: int = 1

    @property
    def benign(self) -> bool:
        return self.severity in ("notice", "info")


def explain_text(text: str, gpu_expected: bool | None = None) -> list[Match]:
    """The recognised messages of ``text``, most serious cause first (repeats folded)."""
    ex = explain_log(text, gpu_expected)
    out: list[Match] = []
    for c in ex.causes:
        seen: dict[str, int] = {}
        for ln in c.lines:
            if ln.text in seen:
                i = seen[ln.text]
                out[i] = Match(**{**out[i].__dict__, "count": out[i].count + 1})
                continue
            seen[ln.text] = len(out)
            out.append(Match(c.label, c.cause, c.fix, ln.text, ln.number, c.severity,
                             c.source, ln.origin))
    for info in ex.informational:
        out.append(Match(info.id, info.what, "", info.example, info.lines[0], "info",
                         info.source, count=len(info.lines)))
    return out


def problems(matches: list[Match]) -> list[Match]:
    """The messages that need a fix."""
    return [m for m in matches if not m.benign]
