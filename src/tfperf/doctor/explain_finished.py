"""A run that went on is not a failure (issue 31, stop 40).

Some rows read lines that are warnings by their shape (a Python ``RuntimeWarning:``, a
W-level glog line, the BFC allocator's "ran out of memory trying to allocate") as failures,
because in many threads the run died right after them. When the log shows no error at all and
either the run going on after the line (epochs, steps, "Saved", results, exit code 0) or the
message hedging itself ("may indicate", "may mean", "not a failure"), the line is a note, not the
cause: the cause becomes a notice that says so and keeps the original reading as "were it to
fail". Rows about the GPU stack (escalated ones, and those whose line proves a GPU) are not
touched: a run that goes on without the GPU it wanted still failed. The allocator's own line
without an out-of-memory error after it is its retry warning (TensorFlow raises
ResourceExhaustedError when the retry fails too).
"""

from __future__ import annotations

import re
from typing import Any

# an error the log holds (any of these keeps every failure as it is)
_HARD = re.compile(
    r"Traceback \(most recent call last\)|^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b(?!\w)"
    r"(?:[:\s]|$)|\bAborted\b|core dumped|[Ss]egmentation fault|zsh: (?:bus error|abort)\b|"
    r"^\s*Killed\b|Check failed|"
    r"(?:^|\s)F\d{4} |\] *F |^F tensorflow|OOM when allocating|[Rr]esource ?[Ee]xhausted|"
    r"RESOURCE_EXHAUSTED|exit(?:ed)? (?:with )?(?:code|status) (?:-?[1-9]|0x0*[1-9A-Fa-f])|"
    # (a Windows crash is a negative or hexadecimal status: -1073740791, 0xC0000409)
    r"Fatal Python error|terminate called after throwing|"
    r"non-zero (?:exit )?status|See logs for memory state|\[\[[Nn]ode:? |"
    r"Current allocation summary follows|[Ii]llegal instruction|"
    # the allocator's failing request and memory map, a kernel's failed check, a collective's
    # abort, a checkpoint that cannot be read: each is the failure itself, W-level or not
    r"\(rounded to \d|\)?requested by op |\] ?[*_x]{16,}\s*$|\bInUse at [0-9a-fx]+|"
    r"Sum Total of in-use chunks|OP_REQUIRES failed|StartAbort|not an sstable|"
    r"Unsuccessful TensorSliceReader|Failed to find any matching files|perhaps your file is in "
    r"a different file format|[Ff]ailed to restore|Data loss:", re.M)
# ... and words any tool's failure uses, read where no line had an error's shape at all: an
# unknown tool's "failed", "command not found", "Could not ..." is an error tfperf cannot read
# (a metric's name, val_mean_squared_error, is one word with its underscores: no match)
_ERROR_WORDS = re.compile(
    r"\b(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ff]ailure|[Ff]atal|FATAL|[Ee]xception|[Pp]anic)\b|"
    r"command not found|No such file|[Cc]annot |[Cc]ould not |[Uu]nable to |[Pp]ermission "
    r"denied|\bnot found\b|[Tt]erminated|[Ii]nvalid |not recognized as an internal")


def holds_error(lines: list[str]) -> bool:
    """The log holds an error: a traceback, an ...Error line, an abort, a crash, a CHECK, an
    out-of-memory, a non-zero exit, or any tool's failure words. One definition for both sides
    of the verdict: a log without one whose lines tfperf does not know is the run's own output
    ("nothing wrong"); a log with one keeps the floor or "not recognised"."""
    joined = "\n".join(lines)
    return bool(_HARD.search(joined) or _ERROR_WORDS.search(joined))


# a warning by its shape: Python's warnings, glog/absl W lines, Keras/TF WARNING lines
# (the glog prefix's classes are bounded: a timestamp class and a path class that overlap on
# digits, ':' and '.' backtrack quadratically on a long line when unbounded; review 40)
_SOFT = re.compile(r"\b(?:Runtime|User|Deprecation|PendingDeprecation|Future|Resource)Warning\b|"
                   r"(?:^|\s)W(?:\d{4})? ?[\d:. ]{0,32}[\w./\\:-]{1,240}\.(?:cc|h|py):\d+\]|"
                   r"^\s*(?:WARNING|Warning|W)[: ]|WARNING:(?:tensorflow|absl|root)")
# the BFC allocator's retry line: a warning until an out-of-memory error follows it
_ALLOCATOR = re.compile(r"[Rr]an out of memory trying to allocate")
# ... and its retry form, which says itself it is no failure (the request's "(rounded to ...)
# requested by op" form is the failing one, in _HARD). A line without the "Allocator (NAME)"
# prefix is TF 1.x's retry wording cut short (its failing line says "See logs for memory
# state", in _HARD); with the prefix and no hedge it is the failing request cut short
_ALLOCATOR_RETRY = re.compile(r"freed_by_count|not a failure|could be performance gains|"
                              r"^(?:(?!Allocator \().)*[Rr]an out of memory trying to allocate "
                              r"[\d.]+ ?[KMGT]?i?B\.?\s*$")
# the message says itself that it may not matter
_HEDGE = re.compile(r"\bmay (?:indicate|mean|consume|cause|be|slow)\b|not a failure|"
                    r"could be performance gains|can be (?:safely )?ignored", re.I)
# a tqdm bar (' 12%|#   | 60/500 [00:03<00:22]'): indented like a traceback's frames
PROGRESS_BAR = re.compile(r"^\s*\d{1,3}%\|[^|\n]{0,80}\| *\d+/\d+")
# the run going on after a line: progress, saving, results, a clean exit
_WENT_ON = re.compile(
    r"^\s*Epoch \d+/\d+|^\s*\d+/\d+ \[[=>.]|\bstep[ =:]+\d+|\bloss[ =:]+\d|\bacc(?:uracy)?[ =:]+\d|"
    r"\b[Ss]av(?:ed|ing) (?:model|checkpoint|to|the)|\bSaved\b|exit(?:ed)? (?:with )?"
    r"(?:code|status) 0\b|\b(?:Done|Finished|Completed)\b|\b[Tt]est (?:accuracy|loss)\b|"
    r"\bIteration \d+|\bresults?:|"
    # a tqdm bar ('12%|#   | 60/500'), a retry that the program makes itself (review 41)
    + PROGRESS_BAR.pattern + r"|\bretry(?:ing)?\b[^\n]{0,40}?\bin \d+(?:\.\d+)? ?s\b",
    re.M)


# readings the run going on does not clear: an add-on built for another TensorFlow fails at its
# first custom op, later; a model server keeps polling a base path that holds no model
_PERSISTS = frozenset({"tf-addon-version-mismatch", "tf-serving-model-path"})


def _soft(raw: str) -> bool:
    if _ALLOCATOR.search(raw):  # the allocator's line is a warning only in its retry form
        return bool(_ALLOCATOR_RETRY.search(raw))
    return bool(_SOFT.search(raw))


def went_on(lines: list[str], after: int) -> str:
    """The first line after index ``after`` that shows the run going on ('' if none)."""
    for raw in lines[after + 1:]:
        if _WENT_ON.search(raw):
            return raw.strip()[:80]
    return ""


def judge_finished(by_label: dict[str, Any], lines: list[str], text: str,
                   escalated: set[str]) -> set[str]:
    """Demote to notices the failures of warning-shaped lines in a log with no error where the
    run went on or the message hedges; the labels demoted."""
    from tfperf.doctor.knowledge import error_patterns, label_rows

    # whether the log holds an error is asked only once a cause could be demoted: the search
    # walks the whole log (140 ms on 10,000 lines of progress bars), and most logs with a
    # failure have none whose lines are all warning-shaped
    hard: bool | None = None

    # rows about the GPU stack: a run that goes on without the GPU it wanted still failed
    gpu_rows = {p.id for p in error_patterns() if p.escalate or p.gpu_evidence}
    demoted: set[str] = set()
    for label, cause in list(by_label.items()):
        if (cause.severity != "failure" or label in escalated or cause.confidence == "low"
                or label in _PERSISTS):
            continue
        if any(ln.row in gpu_rows for ln in cause.lines):
            continue
        raws = [lines[ln.number - 1] for ln in cause.lines if ln.number - 1 < len(lines)]
        if not raws or not all(_soft(r) for r in raws):
            continue
        if hard is None:  # judged on the lines as split (a CR-only log is one "line" to ^)
            hard = bool(_HARD.search("\n".join(lines)))
        if hard:
            return set()  # nothing was demoted yet: the first candidate asks
        allocator = all(_ALLOCATOR.search(r) for r in raws)
        went_on_at = went_on(lines, max(ln.number for ln in cause.lines) - 1)
        hedged = all(_HEDGE.search(r) for r in raws)
        if not (went_on_at or hedged or allocator):
            continue
        why = (f"the run went on after it ('{went_on_at}')" if went_on_at else
               "the allocator retries and TensorFlow raises an out-of-memory error only when "
               "that fails too; none follows here" if allocator else
               "the message itself says it may not matter, and no error follows it")
        row = label_rows().get("gpu-memory-pressure") if allocator else None
        if row is not None and row.label in by_label:
            # the log holds that reading already: it takes this line; the other cause stays
            kept = by_label.pop(label)
            by_label[row.label].lines = sorted(by_label[row.label].lines + kept.lines,
                                               key=lambda ln: ln.number)
            by_label[row.label].consequences.append(label)
            demoted.add(row.label)
            continue
        if row is not None:
            cause.consequences.append(label)
            cause.label, cause.cause, cause.fix = row.label, row.cause, row.fix
            cause.see, cause.source = row.see, f"{row.source} ; {cause.source}"
            del by_label[label]
            by_label[row.label] = cause
            label = row.label
        else:
            cause.cause = (f"A warning, not the cause of a failure: {why}. Were the run to fail "
                           f"right after it: {cause.cause}")
            cause.fix = (f"Nothing is needed for the run to work; the line can be ignored. Were "
                         f"it followed by a failure: {cause.fix}")
        cause.severity = "notice"
        cause.install = ""
        cause.detail = "; ".join(filter(None, [cause.detail, f"a warning here: {why}"]))
        demoted.add(label)
    return demoted
