"""A standard input for the explain CLI tests: text, and whether it claims to be a terminal."""

from __future__ import annotations

import io


class FakeStdin(io.StringIO):
    def __init__(self, text: str, tty: bool) -> None:
        super().__init__(text)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty
