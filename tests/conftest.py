"""Fixtures every test folder shares: a user whom root's rights do not cover, and a folder
that user can reach; and, from xdist_units.py, how the README's parallel run
(``pytest -n 2 --dist loadfile``, pytest-xdist) splits the suite between its two workers."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from xdist_units import _xdist_turn, pytest_xdist_make_scheduler  # noqa: F401 (registered here)

NOBODY = 65534  # uid and gid of `nobody` on Linux


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextlib.contextmanager
def _as_nobody() -> Iterator[None]:
    if not is_root():  # already a user the kernel checks permissions for
        yield
        return
    groups = os.getgroups()
    os.setgroups([])
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)
        os.setgroups(groups)


@pytest.fixture
def unprivileged():
    """Run a block as a user root's rights do not cover: ``nobody`` (no extra groups) when
    the tests run as root, the user itself otherwise. The kernel checks the permissions;
    nothing is simulated."""
    return _as_nobody


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder that ``nobody`` can reach too (pytest's tmp_path sits in a root-only 0700
    folder when the tests run as root)."""
    d = Path(tempfile.mkdtemp(prefix="tfperf-shared-", dir="/tmp" if os.path.isdir("/tmp")
                              else None))
    d.chmod(0o777)
    yield d
    for root, dirs, _ in os.walk(d):  # open the folders a test closed, before entering them
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o755)
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def roomy_limits(monkeypatch):
    """Call limits no busy machine reaches (60 s a call, the plain compiled forms' first
    call too): for tests that assert a candidate is measured, not rejected, so that a trace
    slowed by load cannot turn the verdict into "did not finish" (review 38 item 14). The
    limits themselves are tested with planted slow calls (test_tune_first_call.py).

    A first call measured apart in a child (probe.py) gets 60 s to start too: its start, a
    TensorFlow import, is allowed what the budget leaves (8 s of a 20 s budget), and at
    load 8-11 it took longer, so a candidate the test checks was "not tried" (stop 45's
    suite run, test_tune_scalar_loops.py)."""
    from tfperf.tune import probe, search

    monkeypatch.setattr(search.Search, "call_limit", lambda self: 60.0)
    monkeypatch.setattr(search.Search, "first_call_limit", lambda self: 60.0)
    monkeypatch.setattr(search, "PLAIN_FIRST_SHARE", 60.0)
    first_call = probe.first_call
    monkeypatch.setattr(probe, "first_call", lambda target, source, workdir, limit, load_limit:
                        first_call(target, source, workdir, limit=limit, load_limit=60.0))
