"""``tfperf explain``: its arguments and its run; the matching is in ``explainer``.

Kept import-light on purpose: the doctor's command module adds these arguments on every
``tfperf`` start, so the knowledge base and the explainer load only when explain runs.
"""

from __future__ import annotations

import argparse
import codecs
import os
import stat
import sys
from pathlib import Path
from typing import Any

_LAZY = {"explain_text", "explain_log", "Explanation", "Match", "problems"}


def __getattr__(name: str) -> Any:  # ``from tfperf.doctor.explain import explain_log`` works
    if name in _LAZY:
        from tfperf.doctor import explainer

        return getattr(explainer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------
# CLI glue


def add_explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="*", metavar="TEXT",
                        help="log text (each argument one or more lines), or one log file's "
                             "path; '-' reads stdin, as does a pipe or redirect when no TEXT "
                             "or --file is given")
    parser.add_argument("--file", "-f", metavar="LOG", help="read the log from this file")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="JSON output")
    out.add_argument("--markdown", action="store_true", help="Markdown output")


def _read_input(args: argparse.Namespace) -> str:
    from tfperf.cli import UsageError

    text_args = list(args.text or [])
    if args.file and text_args:
        raise UsageError("give the log as TEXT, '-' or --file LOG, not several at once")
    if not args.file and len(text_args) == 1 and _names_a_file(text_args[0]):
        # `tfperf explain train.log`: what a user types; a log's text is never one bare path
        args.file = text_args.pop()
    if args.file:
        path = Path(args.file)
        try:  # os.stat, not Path.exists: a folder without access raised PermissionError
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except FileNotFoundError:
            raise UsageError(f"no such file: {args.file}") from None
        except OSError as exc:
            raise UsageError(f"cannot reach {args.file}: {exc.strerror or exc}") from None
        if is_dir:
            raise UsageError(f"{args.file} is a directory, not a log file")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
        return decode_log(data, args.file)
    if text_args == ["-"]:
        return _read_stdin(required=False)
    if "-" in text_args:
        raise UsageError("'-' (read stdin) cannot be mixed with TEXT arguments")
    if not text_args:
        return _read_stdin(required=True)
    return "\n".join(text_args)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


def decode_log(data: bytes, name: str) -> str:
    """A log's text. PowerShell's `>` writes UTF-16 (read as UTF-8 it was NUL-strewn noise,
    and a log with a cuDNN failure said "nothing wrong"). Other data holding NUL bytes is
    searched as it is (a core dump may hold the OOM line), with a note on stderr that it is
    not a text log, so that "nothing wrong" is not read as a verdict on a log."""
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
    binary = False
    head = data[:4096]
    if encoding is None and b"\x00" in head:
        encoding = _utf16_by_its_zeros(head)
        binary = encoding is None
    if encoding not in (None, "utf-8-sig"):
        text = data.decode(encoding, errors="replace")
        if _mostly_ascii(text):
            return text
        # a mark by chance (a core dump starting FF FE): the bytes are not UTF-16/32 text
        binary, encoding = True, None
    if binary:
        print(f"tfperf explain: note: {name} is not a text log (it holds binary data): "
              "only its text parts are searched; give the log TensorFlow or your run "
              "printed", file=sys.stderr)
    return data.decode(encoding or "utf-8", errors="replace")


def _utf16_by_its_zeros(head: bytes) -> str | None:
    """UTF-16 without its mark: ASCII text, every other byte 0 (which side says the order)."""
    odd, even = head[1::2].count(0), head[0::2].count(0)
    if odd > 0.9 * len(head[1::2]) and even < 0.1 * len(head[0::2]):
        return "utf-16-le"
    if even > 0.9 * len(head[0::2]) and odd < 0.1 * len(head[1::2]):
        return "utf-16-be"
    return None


def _mostly_ascii(text: str) -> bool:
    """A TensorFlow log decoded right is mostly ASCII; bytes decoded as UTF-16 by a chance
    mark are mostly CJK and other far code points."""
    head = text[:4096]
    return not head or sum(c.isascii() for c in head) >= 0.8 * len(head)


_LOG_SUFFIXES = (".log", ".txt", ".out", ".err")


def _names_a_file(arg: str) -> bool:
    """``arg`` is a path, not log text: one word that names a file or folder here (one out of
    reach too), or that ends like a log file (``train.log``: a missing one is then said to be
    missing, not explained as text)."""
    if not arg or any(c.isspace() for c in arg):
        return False
    try:
        os.stat(arg)
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return arg.lower().endswith(_LOG_SUFFIXES)
    except OSError:  # there but out of reach (no permission): said so, not read as log text
        return True
    # a folder too: `tfperf explain logs/` said "nothing wrong" about the word "logs/"
    return True


_USAGE = ("nothing to explain: pass the log as TEXT, pipe it in (tfperf explain < train.log), "
          "or use '-' (stdin) or --file LOG")


def _read_stdin(required: bool) -> str:
    """stdin's text. ``required`` (no '-' given): only a pipe or a redirect is read; a terminal
    is never waited on and no stdin at all is a usage error. A pipe that carried nothing is an
    empty log, as an empty file and an empty '-' are (stop 44: it was a usage error, exit 2,
    where an empty file said "empty", exit 0): the run printed nothing to it."""
    from tfperf.cli import UsageError

    stream = sys.stdin
    if stream is None or (required and stream.isatty()):
        raise UsageError(_USAGE)
    try:
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
    except (OSError, ValueError) as exc:  # closed, or not readable (a test runner's stand-in)
        if required:
            raise UsageError(_USAGE) from None
        raise UsageError(f"cannot read standard input: {exc}") from None
    return decode_log(data, "standard input") if isinstance(data, bytes) else data


def run_explain(args: argparse.Namespace) -> int:
    from tfperf.doctor.explain_render import report_json, report_markdown, report_text
    from tfperf.doctor.explainer import explain_log

    ex = explain_log(_read_input(args))
    if getattr(args, "json", False):
        print(report_json(ex))
    elif getattr(args, "markdown", False):
        print(report_markdown(ex), end="")
    else:
        from tfperf.core.render import use_color

        print(report_text(ex, color=use_color(sys.stdout)))
    return ex.exit_status
