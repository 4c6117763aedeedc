"""The IPython ``Magics`` class: option parsing and dispatch only.

Each magic parses its line (:mod:`tfperf.notebook.options`), hands the work to the module
that does it, and shows the result through IPython's display system. ``-o`` returns the
result object (as ``%timeit -o`` does) instead of leaving it to the display alone.
"""

from __future__ import annotations

from typing import Any

from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class

from tfperf.notebook import display
from tfperf.notebook.errors import MagicError, describe
from tfperf.notebook.options import Option, parse_anywhere, parse_leading, split_words
from tfperf.notebook.statement import make_function, raised_where

TIMEIT_OPTIONS = (
    Option(("-n",), "number", int, "calls per timed run (default: grown until a run lasts "
                                   "10 ms)"),
    Option(("-r",), "repeat", int, "timed runs (default: until the spread is small or the "
                                   "budget is spent)"),
    Option(("-q",), "quiet", bool, "show nothing"),
    Option(("-o",), "output", bool, "return the Measurement"),
    Option(("--budget",), "budget", float, "seconds for the timed runs (default 2)"),
)
COMPARE_OPTIONS = (
    Option(("--baseline",), "baseline", str, "the variant the others are divided by"),
    Option(("--budget",), "budget", float, "seconds for the interleaved rounds (default 3)"),
    Option(("--plot",), "plot", bool, "draw the medians as a bar chart"),
    Option(("--no-check",), "no_check", bool, "do not compare the outputs"),
    Option(("-q",), "quiet", bool, "show nothing"),
    Option(("-o",), "output", bool, "return the CompareReport"),
)
PROFILE_OPTIONS = (
    Option(("--steps",), "steps", int, "run the cell this many times (default 1)"),
    Option(("--capture",), "capture", bool, "add a TensorFlow profiler capture (op times)"),
    Option(("--logdir",), "logdir", str, "where the capture goes (default: a temp folder)"),
    Option(("--memory",), "memory", bool, "the memory view: each step's peak and what held "
                                          "it; leaks from --steps 10 (docs/memory.md)"),
    Option(("-q",), "quiet", bool, "show nothing"),
    Option(("-o",), "output", bool, "return the ProfileReport"),
)
LINT_OPTIONS = (
    Option(("--preview",), "preview", bool, "also the rules still in preview"),
    Option(("-q",), "quiet", bool, "show nothing"),
    Option(("-o",), "output", bool, "return the findings"),
)
DOCTOR_OPTIONS = (
    Option(("--no-compute",), "no_compute", bool, "skip the live matmul checks"),
    Option(("--timeout",), "timeout", float, "limit for importing TF and each check "
                                             "(default 120)"),
    Option(("-o",), "output", bool, "return the findings"),
)
TUNE_OPTIONS = (
    Option(("--budget",), "budget", float, "seconds for tune's search (tune's default: 60)"),
    Option(("-q",), "quiet", bool, "show nothing"),
    Option(("-o",), "output", bool, "return what tune returns"),
)


@magics_class
class TfperfMagics(Magics):
    """``%tftimeit``, ``%tfcompare``, ``%%tfprofile``, ``%tflint``, ``%tftune``, ``%tfdoctor``."""

    # -- %tftimeit ---------------------------------------------------------------------------

    @line_cell_magic
    def tftimeit(self, line: str, cell: str | None = None) -> Any:
        """Time a statement with tfperf's measurement core.

        %tftimeit [-n N] [-r R] [-q] [-o] [--budget S] STATEMENT
        %%tftimeit [-n N] [-r R] [-q] [-o] [--budget S] [SETUP]   (the cell is timed;
                                                                  SETUP runs once before)

        The device is synced after every run, the first call (tracing, XLA compile) is timed
        apart and split when TensorFlow traced, and the line reads as %timeit's: median ±
        IQR/2 of R runs, N loops each. A spread above 10 % of the median is flagged.
        """
        from tfperf.notebook.timeit import timeit

        opts, rest = parse_leading("tftimeit", line, TIMEIT_OPTIONS, "STATEMENT")
        setup = ""
        if cell is not None:  # as %%timeit: the rest of the magic line is the setup
            source, first_line, setup = cell, 2, rest
        else:
            source, first_line = rest, 1
        fn = make_function(self.shell, "tftimeit", source, first_line=first_line, setup=setup)
        statement = " ".join(source.split())[:60]
        try:
            result = timeit(fn, number=opts["number"], repeat=opts["repeat"],
                            budget=opts["budget"], statement=statement)
        except KeyboardInterrupt:
            raise MagicError("tftimeit", "interrupted before a run completed") from None
        except Exception as exc:
            raise MagicError("tftimeit", f"the statement raised {describe(exc)}"
                                         f"{raised_where(self.shell, exc)}") from None
        if not opts["quiet"]:
            display.show(display.Rendering(result.text()))
        return result if opts["output"] else None

    # -- %tfcompare --------------------------------------------------------------------------

    @line_cell_magic
    def tfcompare(self, line: str, cell: str | None = None) -> Any:
        """Compare statements on speed and on what they compute (bench.compare).

        %tfcompare [--baseline NAME] [--budget S] [--plot] [--no-check] [-q] [-o] A B C
        %%tfcompare [options]      (one statement per line; NAME=STATEMENT names a variant)

        A statement with spaces outside brackets is written NAME=STATEMENT or put in the
        cell form. A variant's name is its function's name (``slow(x)`` → ``slow``).
        """
        from tfperf.notebook.compare import compare_statements, line_statements

        opts, words = parse_anywhere("tfcompare", split_words(line, separators=";"),
                                     COMPARE_OPTIONS, "A(x) B(x) ...")
        if cell is not None:
            if words:
                raise MagicError("tfcompare", "%%tfcompare takes the statements from the cell, "
                                              f"one a line; unexpected {words[0]!r}")
            lines = [(i + 2, t) for i, t in enumerate(cell.splitlines())
                     if t.strip() and not t.lstrip().startswith("#")]
        else:
            lines = line_statements(words)
        report = compare_statements(self.shell, lines, baseline=opts["baseline"],
                                    budget=opts["budget"], check=not opts["no_check"],
                                    plot=opts["plot"], quiet=opts["quiet"])
        return report if opts["output"] else None

    # -- %tfprofile --------------------------------------------------------------------------

    @line_cell_magic
    def tfprofile(self, line: str, cell: str | None = None) -> Any:
        """Run a cell (or one statement) under tfperf.watch(): retraces with their cause, host
        syncs and eager ops by cell line; a profiler capture's op times with --capture.

        %%tfprofile [--steps N] [--capture] [--logdir DIR] [--memory] [-q] [-o]
        %tfprofile [--steps N] [--capture] [--memory] [-q] [-o] STATEMENT
        """
        from tfperf.notebook.profile import profile_cell

        opts, rest = parse_leading("tfprofile", line, PROFILE_OPTIONS, "[STATEMENT]")
        if cell is not None:
            if rest:
                raise MagicError("tfprofile", "%%tfprofile profiles the cell; put nothing "
                                              "after the options")
            source, first_line = cell, 2
        else:
            if not rest:
                raise MagicError("tfprofile", "no statement given (or use %%tfprofile on a "
                                              "cell)")
            source, first_line = rest, 1
        if opts["memory"]:
            from tfperf.notebook.profile import memory_cell

            report = memory_cell(self.shell, source, first_line=first_line,
                                 steps=opts["steps"], logdir=opts["logdir"],
                                 quiet=opts["quiet"])
            return report if opts["output"] else None
        report = profile_cell(self.shell, source, first_line=first_line,
                              steps=opts["steps"] or 1, capture=opts["capture"],
                              logdir=opts["logdir"], quiet=opts["quiet"])
        return report if opts["output"] else None

    # -- %tflint -----------------------------------------------------------------------------

    @line_cell_magic
    def tflint(self, line: str, cell: str | None = None) -> Any:
        """Lint the cells run so far (%tflint) or this cell (%%tflint: its findings, read
        after the cells run before it), positions by cell and line, each fix shown as a diff
        of its cell.

        %tflint [--preview] [-q] [-o] [CODES...]      e.g. %tflint TFP101 TFP2
        """
        from tfperf.notebook.lint import lint_cells_so_far, lint_one_cell

        opts, words = parse_anywhere("tflint", split_words(line), LINT_OPTIONS, "[CODES...]")
        if cell is not None:
            result = lint_one_cell(self.shell, cell, codes=words, preview=opts["preview"])
        else:
            result = lint_cells_so_far(self.shell, codes=words, preview=opts["preview"])
        if not opts["quiet"]:
            display.show(result)
        return result if opts["output"] else None

    # -- %tftune -----------------------------------------------------------------------------

    @line_magic
    def tftune(self, line: str) -> Any:
        """Search the levers for FN(ARGS) with tfperf.tune, when this tfperf has it.

        %tftune [--budget S] [-q] [-o] FN(ARGS)
        """
        from tfperf.notebook.tune import run_tune

        opts, rest = parse_leading("tftune", line, TUNE_OPTIONS, "FN(ARGS)")
        result, shown = run_tune(self.shell, rest, budget=opts["budget"])
        if not opts["quiet"] or result is None:
            display.show(shown)
        return result if opts["output"] else None

    # -- %tfdoctor ---------------------------------------------------------------------------

    @line_magic
    def tfdoctor(self, line: str) -> Any:
        """The doctor's report on this machine's TF ↔ CUDA ↔ driver ↔ GPU chain.

        %tfdoctor [--no-compute] [--timeout S] [-o]
        """
        from tfperf.notebook.doctor import run_doctor

        opts, rest = parse_leading("tfdoctor", line, DOCTOR_OPTIONS, "")
        if rest:
            raise MagicError("tfdoctor", f"unexpected {rest!r}; usage: %tfdoctor "
                                         "[--no-compute] [--timeout S] [-o]")
        result, progress = run_doctor(self.shell, compute=not opts["no_compute"],
                                      timeout=opts["timeout"] or 120.0)
        progress.finish(result)
        return result if opts["output"] else None


__all__ = ["TfperfMagics"]
