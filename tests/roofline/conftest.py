import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch, tmp_path_factory):
    # The roofline's measured peaks must never touch the user's ~/.cache from a test.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
