"""``%%tfprofile``: a cell run under :func:`tfperf.watch`, reported by cell and line.

The cell is compiled through IPython's compiler cache, so its code carries a file name
IPython maps to the cell's number; the watcher attributes each event to the innermost user
frame, and the report names sites ``cell 12, line 4`` (functions defined in earlier cells
keep their own cell). Names the cell assigns stay in the namespace, as when it runs plainly.
With ``--capture`` a TensorFlow profiler capture covers the run (each repetition a step)
and the report adds its op-time table.
"""

from __future__ import annotations

from typing import Any

from tfperf.notebook import display
from tfperf.notebook.errors import MagicError, describe
from tfperf.notebook.statement import (
    cell_number,
    compile_cell,
    raised_where,
    site_labeller,
    user_traceback,
)


def profile_cell(shell: Any, source: str, *, first_line: int, steps: int, capture: bool,
                 logdir: str | None, quiet: bool) -> Any:
    from tfperf.profile import capture as capture_mod
    from tfperf.profile.report import build_report
    from tfperf.profile.watcher import Watcher

    if not source.strip():
        raise MagicError("tfprofile", "the cell is empty")
    code = compile_cell(shell, "tfprofile", source, first_line=first_line)
    if capture and logdir is not None:  # before the cell runs, not charged to it
        from tfperf.core.usercode import UserCodeError, check_output_path

        try:
            check_output_path(_path(logdir), "--logdir")
        except UserCodeError as exc:
            raise MagicError("tfprofile", str(exc)) from None
    try:
        import tensorflow  # noqa: F401  (the hooks are TensorFlow's)
    except ImportError:
        raise MagicError("tfprofile", "needs TensorFlow: pip install 'tfperf[tf-cpu]'") from None
    session = capture_mod.Capture(capture_mod.default_logdir() if logdir is None
                                  else _path(logdir)) if capture else None
    watcher = Watcher(placement=capture)  # per-replica figures need the placement map
    error: BaseException | None = None
    interrupted = False
    try:
        if session is not None:
            session.start()
        with watcher:
            for step in range(steps):
                if session is not None and session.running:
                    with capture_mod.step(step):
                        exec(code, shell.user_ns)
                else:
                    exec(code, shell.user_ns)
    except KeyboardInterrupt:
        interrupted = True  # the report covers what ran
    except Exception as exc:
        error = user_traceback(exc)
    finally:
        if session is not None:
            session.stop()
    report = build_report(watcher.obs, error=error, capture=_summary(session),
                          capture_note=_note(session), target=f"cell {_cell(shell)}",
                          logdir=str(session.logdir) if session else None)
    report.site_label = site_labeller(shell)
    if not quiet:
        text = _cells_in_traceback(shell, report.text())
        display.show(display.Rendering(text, _html(text)))
    if interrupted:
        raise MagicError("tfprofile", "interrupted; the report covers what ran before")
    if error is not None:
        raise MagicError("tfprofile", f"the cell raised {describe(error)}"
                                      f"{raised_where(shell, error)}; the report covers what "
                                      "ran before it")
    return report


def memory_cell(shell: Any, source: str, *, first_line: int, steps: int | None,
                logdir: str | None, quiet: bool) -> Any:
    """``%%tfprofile --memory``: the cell run once to warm up, then ``steps`` times (default
    3) under the profiler: each step's peak and what held it, by cell and line; from
    ``--steps 10`` it runs ``steps`` times more, sampled for leaks."""
    if not source.strip():
        raise MagicError("tfprofile", "the cell is empty")
    code = compile_cell(shell, "tfprofile", source, first_line=first_line)
    if logdir is not None:
        from tfperf.core.usercode import UserCodeError, check_output_path

        try:
            check_output_path(_path(logdir), "--logdir")
        except UserCodeError as exc:
            raise MagicError("tfprofile", str(exc)) from None
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        raise MagicError("tfprofile", "needs TensorFlow: pip install 'tfperf[tf-cpu]'") from None
    from tfperf.memory.runner import memory_profile

    def cell() -> None:
        exec(code, shell.user_ns)

    n = steps or 3
    try:
        report = memory_profile(cell, steps=n, leak_steps=n if n >= 10 else 0,
                                logdir=None if logdir is None else _path(logdir),
                                target=f"cell {_cell(shell)}")
    except KeyboardInterrupt:  # one line, not TensorFlow's frames; the profiler is stopped
        raise MagicError("tfprofile", "interrupted; the memory view needs its steps to "
                                      "finish: nothing to report") from None
    if report.error is not None:
        report.error = user_traceback(report.error)
    if not quiet:
        text = _cells_in_traceback(shell, report.text())
        label = site_labeller(shell)
        text = _sites_as_cells(text, label)
        display.show(display.Rendering(text, _html(text)))
    if report.error is not None:
        raise MagicError("tfprofile", f"the cell raised {describe(report.error)}"
                                      f"{raised_where(shell, report.error)}; the report covers "
                                      "what ran before it")
    return report


def _sites_as_cells(text: str, label: Any) -> str:
    """``/tmp/ipykernel_1/123.py:4`` → ``cell 12, line 4`` in the memory view's tables."""
    import re

    def name(m: re.Match[str]) -> str:
        try:
            return str(label(m.group(1), int(m.group(2))))
        except Exception:
            return m.group(0)

    return re.sub(r"(\S+\.py|<ipython-input-[^>]+>):(\d+)", name, text)


def _path(text: str) -> Any:
    from pathlib import Path

    return Path(text).expanduser()


def _cell(shell: Any) -> int:
    from tfperf.notebook.statement import current_cell

    return current_cell(shell)


def _summary(session: Any) -> Any:
    if session is None or session.xplane is None:
        return None
    from tfperf.profile import xplane

    try:
        return xplane.summarise(session.xplane)
    except xplane.CaptureError:
        return None


def _note(session: Any) -> str:
    if session is None:
        return "not captured (add --capture for op times)"
    return session.error or ("capture unreadable" if session.xplane else "no capture written")


def _html(text: str) -> str:
    from tfperf.core import render

    return render.html_pre(text)


def _cells_in_traceback(shell: Any, text: str) -> str:
    """``File "<ipython-input-21-…>", line 3`` → ``File "cell 21", line 3`` (the name the
    reader knows; ipykernel's ``/tmp/ipykernel_…/….py`` names alike)."""
    import re

    def name(m: re.Match[str]) -> str:
        number = cell_number(shell, m.group(1))
        return f'File "cell {number}"' if number is not None else m.group(0)

    return re.sub(r'File "([^"]+)"', name, text)
