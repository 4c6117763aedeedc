"""Shared by the memory view's tests: TensorFlow, a CLI runner, and two busy processes for the
loaded runs (the leak checks must hold at the ambient load of a shared 2-core machine and
with two extra processes spinning)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tf():
    return pytest.importorskip("tensorflow")


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: int = 600) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    if env is None:  # the child decides, as a user's shell would
        full.pop("TF_CPU_ALLOCATOR_USE_BFC", None)
    return subprocess.run([sys.executable, "-m", "tfperf", *args], capture_output=True,
                          text=True, cwd=cwd, env=full, timeout=timeout)


@pytest.fixture
def cli():
    """``tfperf`` in a child process (a fresh TensorFlow: the CLI switches the allocator)."""
    return run_cli


@pytest.fixture(params=["ambient", pytest.param("two-busy", marks=pytest.mark.alone)])
def load(request: pytest.FixtureRequest) -> Iterator[str]:
    """The machine as it is, or with two extra processes spinning on its 2 cores."""
    procs: list[subprocess.Popen[bytes]] = []
    if request.param == "two-busy":
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
    try:
        yield request.param
    finally:
        for p in procs:  # only the processes this fixture started, by their own handle
            p.kill()
            p.wait(timeout=30)
