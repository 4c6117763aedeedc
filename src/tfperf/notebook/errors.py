"""The one error a magic raises: shown by IPython as one line, never as tfperf's traceback."""

from __future__ import annotations


class MagicError(Exception):
    """A bad option, a statement that does not parse, a cell that raised: one clear line.

    IPython shows an exception through its ``_render_traceback_`` when it has one (ipykernel
    sends those lines as the error output), so the cell fails, a "run all" stops there, and
    what the user reads is the message alone.
    """

    def __init__(self, magic: str, message: str) -> None:
        super().__init__(f"%{magic}: {message}")
        self.magic = magic

    def _render_traceback_(self) -> list[str]:
        return [str(self)]


def describe(exc: BaseException) -> str:
    """``ZeroDivisionError: division by zero`` (the type alone when there is no message)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
