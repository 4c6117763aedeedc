import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


@pytest.fixture(scope="session")
def tf():
    """TensorFlow, imported once for the whole session."""
    return pytest.importorskip("tensorflow")
