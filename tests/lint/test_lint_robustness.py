"""Robustness: lint the installed TensorFlow and Keras sources (about a million lines).

No crash, no internal error (TFP001). Also a rough speed check: it must finish within a few
minutes on CI's two cores (the real speed figures come from benchmarks/bench_lint_speed.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tfperf.lint.session import LintRequest, run


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@pytest.mark.slow
def test_lint_installed_tensorflow_and_keras_sources():
    dirs = [d for d in (_package_dir("tensorflow"), _package_dir("keras")) if d is not None]
    if not dirs:
        pytest.skip("neither tensorflow nor keras is installed")
    out = run(LintRequest(paths=[str(d) for d in dirs], cache=False))
    assert out.files > 500, f"only {out.files} files found under {dirs}"
    internal = [f for f in out.findings if f.code == "TFP001"]
    assert internal == [], "\n".join(f.message for f in internal[:20])
    # The installed sources are valid Python: nothing should fail to parse either.
    unparsed = [f for f in out.findings if f.code == "TFP000"]
    assert len(unparsed) <= out.files // 100, [f.location.path for f in unparsed[:10]]
