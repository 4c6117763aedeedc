"""``tfperf explain`` output: text, JSON and Markdown of one :class:`Explanation`.

The summary line says the root cause and its fix first. Informational lines are listed apart,
grouped per kind with their count, so a long log of library notices reads as one line.
"""

from __future__ import annotations

import re
from typing import Any

from tfperf import __version__
from tfperf.doctor.explainer import Cause, Explanation, LogLine

EXPLAIN_SCHEMA_VERSION = 2
_SHOWN_LINES = 3  # distinct log lines quoted per cause
_TAGS = {"failure": "FAILURE", "warning": "WARNING", "notice": "NOTICE"}
_COLOURS = {"failure": "red", "warning": "yellow", "notice": "cyan"}


def first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not the one in "e.g.")."""
    m = re.search(r"(?<!e\.g)(?<!i\.e)(?<!\bvs)\.(\s|$)", text)
    return text[: m.start()] if m else text


def ranges(numbers: list[int]) -> str:
    """[3, 4, 5, 9] → "3-5, 9"."""
    out: list[str] = []
    for n in sorted(set(numbers)):
        if out and "-" not in out[-1].split(", ")[-1] and int(out[-1]) == n - 1:
            out[-1] = f"{out[-1]}-{n}"
        elif out and "-" in out[-1] and int(out[-1].split("-")[1]) == n - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _quote(line: LogLine, width: int = 120) -> str:
    text = line.text if len(line.text) <= width else line.text[:width - 1] + "…"
    return f"line {line.number}: {text}"


def summary(ex: Explanation) -> str:
    if ex.verdict == "empty":
        # the commonest empty log: stdout captured, TensorFlow's lines and the traceback on stderr
        return ("the log is empty: nothing to explain (TensorFlow and Python write to stderr: "
                "capture it too, python train.py > train.log 2>&1)")
    if ex.verdict == "unrecognised" and ex.unknown:
        errors = [ln for ln in ex.unknown if ln.row == "error"] or ex.unknown
        first = errors[0]
        more = len(errors) - 1
        out = (f"nothing recognised as a problem, but a TensorFlow {first.row} tfperf does not "
               f"know ({_quote(first)}{f'; +{more} more' if more else ''}): which does not prove "
               "the log is fine")
        if ex.causes:
            out += f"; note {ex.causes[0].label}: {first_sentence(ex.causes[0].cause)}"
        return out
    if ex.verdict == "unrecognised" and not ex.not_tensorflow:
        return (f"nothing recognised in {ex.n_lines} line{'s' if ex.n_lines != 1 else ''}: no "
                "line is one tfperf knows, so it cannot say what this log is about (which does not "
                "prove it is fine)")
    if ex.verdict == "unrecognised":
        return (f"nothing recognised in {ex.n_lines} line{'s' if ex.n_lines != 1 else ''}, and an "
                f"error that is not TensorFlow's ({_quote(ex.not_tensorflow[0])}): this log is not "
                "in tfperf's knowledge base (which does not prove it is fine)")
    if ex.problems:
        top = ex.problems[0]
        more = len(ex.problems) - 1
        tail = f" (+{more} more cause{'s' if more != 1 else ''})" if more else ""
        if top.confidence == "low":
            cls = top.details.get("class", [top.label])[0]
            likely = f" Likely: {first_sentence(top.likely[0][0])}." if top.likely else ""
            fix = f" Fix: {first_sentence(top.likely[0][1])}." if top.likely else ""
            head = first_sentence(top.cause)
            if top.likely and head == first_sentence(top.likely[0][0]):
                # the evidence's reading leads both: the class's meaning heads, it follows once
                head = first_sentence(top.cause.split(" Otherwise: ", 1)[-1])
            return (f"{_TAGS[top.severity]} {cls} (generic reading, no knowledge row matched): "
                    f"{head}.{likely}{fix}{tail}")
        # the log's own evidence leads the fix (a macOS too old for the plugin), else the install
        fix = (first_sentence(top.fix) if top.details.get("evidence")
               else top.install or first_sentence(top.fix))
        return (f"{_TAGS[top.severity]} {top.label}: {first_sentence(top.cause)}. "
                f"Fix: {fix}.{tail}")
    n_info = sum(len(i.lines) for i in ex.informational)
    whose = " with TensorFlow" if ex.not_tensorflow else ""
    clean = ("no TensorFlow error in the log" if any(ln.row == "error" for ln in ex.not_tensorflow)
             else "no error in the log")
    out = f"nothing wrong{whose}: {clean}" + (
        f"; {n_info} informational line{'s' if n_info != 1 else ''}" if n_info else "")
    if not (ex.causes or ex.informational or ex.unknown or ex.not_tensorflow):
        out += (f"; none of its {ex.n_lines} line{'s' if ex.n_lines != 1 else ''} is a failure "
                "or an error (the run's own output: progress, steps, metrics), and none is a "
                "TensorFlow line tfperf knows")
    if ex.causes:
        top = ex.causes[0]
        out += f"; note {top.label}: {first_sentence(top.cause)}"
        if top.label == "cuda-library-missing" and top.install:
            # the same one line is what a CPU-only machine prints and what a GPU user posts
            # (lightweight_mmm#23 vs dc_tts#59): nothing wrong for one, the install for the other
            out += ("; if this machine has an NVIDIA GPU for TensorFlow, it is not used: "
                    f"{top.install}")
    if ex.unknown:  # warnings only (an unknown error makes the log "unrecognised")
        more = len(ex.unknown) - 1
        out += (f"; note: a TensorFlow warning tfperf has no row for, informational "
                f"({_quote(ex.unknown[0])}{f'; +{more} more' if more else ''})")
    if ex.not_tensorflow:
        out += (f"; not TensorFlow's ({_NOT_TF}): {_quote(ex.not_tensorflow[0])}"
                + (f" (+{len(ex.not_tensorflow) - 1} more)" if len(ex.not_tensorflow) > 1 else ""))
    return out


_NOT_TF = ("the program's own or another library's: no TensorFlow frame, name, op or log line "
           "in it")


def _quoted(c: Cause) -> list[tuple[str, int, str]]:
    """(text, count, row) for the first distinct log lines of a cause."""
    seen: dict[str, list[Any]] = {}
    for ln in c.lines:
        if ln.text in seen:
            seen[ln.text][1] += 1
        else:
            seen[ln.text] = [ln.text, 1, ln.row]
    return [tuple(v) for v in seen.values()]


def report_text(ex: Explanation, color: bool = False) -> str:
    from tfperf.core.render import style

    head_colour = "red" if ex.verdict == "failure" else "yellow" if ex.problems else "green"
    out = [style(summary(ex), "bold", head_colour, color=color)]
    for c in ex.causes:
        tag = style(_TAGS[c.severity], _COLOURS[c.severity], "bold", color=color)
        lines = ranges([ln.number for ln in c.lines])
        where = f"line{'s' if len(c.lines) > 1 else ''} {lines}"
        if c.confidence == "low":
            where += "; generic reading, lower confidence than a knowledge-row match"
        out += ["", f"{tag} {c.label}  ({where})"]
        quoted = _quoted(c)
        for text, count, _row in quoted[:_SHOWN_LINES]:
            out.append(f"  log:    {text}" + (f"  (x{count})" if count > 1 else ""))
        if len(quoted) > _SHOWN_LINES:
            out.append(f"          … {len(quoted) - _SHOWN_LINES} more distinct line(s)")
        if c.consequences:
            out.append(f"  also:   {', '.join(c.consequences)} (consequences of this cause)")
        if c.detail:
            out.append(f"  detail: {c.detail}")
        out.append(f"  {style('cause:', 'dim', color=color)}  {c.cause}")
        if c.install:
            out.append(f"  {style('install:', 'cyan', color=color)} {c.install}")
        out.append(f"  {style('fix:', 'cyan', color=color)}    {c.fix}")
        if c.see:
            out.append(f"  see:    {c.see}")
        out.append(f"  {style('source:', 'dim', color=color)} {c.source}")
    if ex.informational:
        n = sum(len(i.lines) for i in ex.informational)
        out += ["", style(f"Informational, nothing to do ({n} line{'s' if n != 1 else ''}):",
                          "dim", color=color)]
        for i in ex.informational:
            where = f"line{'s' if len(i.lines) > 1 else ''} {ranges(i.lines)}"
            out.append(f"  {i.id} x{len(i.lines)} ({where}): {i.what}")
    unknown_title = ("TensorFlow messages tfperf does not know (not recognised, not proven fine)"
                     if ex.verdict == "unrecognised" else
                     "TensorFlow warnings tfperf does not know (informational: the log holds no "
                     "error)")
    for title, shown in ((unknown_title, ex.unknown),
                         (f"Not TensorFlow's ({_NOT_TF}; not read as a TensorFlow problem)",
                          ex.not_tensorflow)):
        if shown:
            out += ["", style(f"{title}:", "dim", color=color)]
            out += [f"  {line.row} {_quote(line, 200)}" for line in shown[:_SHOWN_LINES]]
            if len(shown) > _SHOWN_LINES:
                out.append(f"  … {len(shown) - _SHOWN_LINES} more")
    return "\n".join(out)


def _loose(lines: list[LogLine]) -> list[dict[str, Any]]:
    return [{"number": ln.number, "text": ln.text, "kind": ln.row} for ln in lines]


def report_json(ex: Explanation) -> str:
    from tfperf.core.render import to_json

    return to_json({
        "tfperf": __version__, "schema": EXPLAIN_SCHEMA_VERSION, "lines": ex.n_lines,
        "verdict": ex.verdict, "summary": summary(ex), "gpu_evidence": ex.gpu_evidence,
        "versions": ex.versions,
        "causes": [c.to_dict() for c in ex.causes],
        "informational": [i.to_dict() for i in ex.informational],
        **({"unknown": _loose(ex.unknown)} if ex.unknown else {}),
        **({"not_tensorflow": _loose(ex.not_tensorflow)} if ex.not_tensorflow else {}),
        "exit_status": ex.exit_status})


def report_markdown(ex: Explanation) -> str:
    from tfperf.core.render import markdown_table

    out = ["## tfperf explain", "", f"**{summary(ex)}**"]
    if ex.causes:
        out += ["", markdown_table(
            ["severity", "cause", "lines", "log", "fix", "see"],
            [(c.severity + (" (generic reading)" if c.confidence == "low" else ""),
              f"`{c.label}`" + (f" ({c.detail})" if c.detail else ""),
              ranges([ln.number for ln in c.lines]), f"`{c.lines[0].text}`",
              (f"{c.install}. " if c.install else "") + c.fix, c.see)
             for c in ex.causes])]
    if ex.informational:
        out += ["", "Informational (nothing to do): " + ", ".join(
            f"{i.id} x{len(i.lines)}" for i in ex.informational)]
    if ex.unknown:
        out += ["", ("TensorFlow messages not recognised: " if ex.verdict == "unrecognised" else
                     "TensorFlow warnings tfperf has no row for (informational): ") + "; ".join(
            f"`{_quote(ln)}`" for ln in ex.unknown[:_SHOWN_LINES])]
    if ex.not_tensorflow:
        out += ["", f"Not TensorFlow's ({_NOT_TF}): " + "; ".join(
            f"`{_quote(ln)}`" for ln in ex.not_tensorflow[:_SHOWN_LINES])]
    return "\n".join(out) + "\n"
