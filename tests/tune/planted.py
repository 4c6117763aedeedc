"""A lever the tests plant: it replaces one text by another in the module (a fast wrong
lever, a raising one, a segfault...), so the search's verdicts can be checked on known cases."""

from __future__ import annotations

from tfperf.tune.lever import Lever


class Planted(Lever):
    """A lever planted by the test: replaces one text by another in the module."""

    stage = 10

    def __init__(self, name: str, old: str, new: str) -> None:
        self.name, self.slot, self.old, self.new = name, name, old, new

    def build(self, text, ctx):
        assert self.old in text
        return text.replace(self.old, self.new)
