"""Shared fixtures of the tune tests: user modules written to real files and imported the way
tfperf imports user code, and a private cache directory."""

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
