"""Shared fixtures of the tune tests: user modules written to real files and imported the way
tfperf imports user code, a private cache directory, and a search budget whose clock stands
still (no outcome may depend on how busy the machine is)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    # tune's cache must never touch the user's ~/.cache from a test.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))


@pytest.fixture
def user_module(tmp_path):
    """``user_module(source, name="mod")`` → the imported module of a file with ``source``."""
    from tfperf.core.usercode import import_file

    def make(source: str, name: str = "usermod"):
        path = Path(tmp_path) / f"{name}.py"
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return import_file(path, prefix="_tfperf_test_tune_")

    return make


@pytest.fixture(autouse=True)
def frozen_budget(monkeypatch):
    """The search's budget clock stands still: every "how much is left" answers as at the
    start of the search (80 % of the budget for the search, the 20 % reserve for the final
    timing), however long the machine takes. So on a busy machine no candidate is "not tried:
    the budget was spent", call limits and timing lengths are what an idle machine gets,
    and the search still ends: after its levers, each tried once. The budget itself (the
    search's wall time) is a figure of benchmarks/bench_tune.py, not of a test.

    ``frozen_budget(search_s, final_s)`` sets other answers (an isolated search compares the
    budget left with a child's start, 17 s on a loaded machine)."""
    from tfperf.tune.search import FINAL_SHARE, Search

    def freeze(search_s: float | None = None, final_s: float | None = None) -> None:
        def left(self, final: bool = False) -> float:
            if final:
                return final_s if final_s is not None else FINAL_SHARE * self.budget
            return search_s if search_s is not None else (1 - FINAL_SHARE) * self.budget

        monkeypatch.setattr(Search, "left", left)

    freeze()
    return freeze


