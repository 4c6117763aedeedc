"""Functions without a .py file (compiled from text that linecache holds, as IPython does with
every cell): tune edits that text, the patch is its diff, and nothing can be applied."""

from __future__ import annotations

import linecache

import pytest

from tfperf.tune.lever import Lever
from tfperf.tune.patch import apply_patch
from tfperf.tune.target import TuneError

tf = pytest.importorskip("tensorflow")

from tfperf.tune import tune  # noqa: E402

TEXT = """\
import tensorflow as tf
scale = 3.0


def triple(x):
    y = x
    for _ in range(30):
        y = y * 1.0
    return y * scale
"""


class DropLoop(Lever):
    name = slot = "planted: drop the no-op loop"
    stage = 10

    def build(self, text, ctx):
        return text.replace("    for _ in range(30):\n        y = y * 1.0\n", "")


def _compiled(text: str, filename: str, cache: bool) -> dict:
    if cache:
        lines = text.splitlines(keepends=True)
        linecache.cache[filename] = (len(text), None, lines, filename)
    namespace: dict = {"__name__": "__main__"}
    exec(compile(text, filename, "exec"), namespace)
    return namespace


def test_a_function_compiled_from_cached_text_is_tuned_from_that_text():
    ns = _compiled(TEXT, "<tfperf-test-text>", cache=True)
    x = tf.ones([8])
    result = tune(ns["triple"], (x,), budget=3, levers=[DropLoop()])
    assert result.in_file is False and result.cell is None
    assert result.best is not None and result.best.name == "planted: drop the no-op loop"
    assert result.patch.startswith("--- a/<tfperf-test-text>")
    assert "-    for _ in range(30):" in result.patch
    # the candidate ran in a copy of the text's own namespace (it read `scale` from there)
    assert float(result.best_fn(x)[0]) == pytest.approx(3.0)
    with pytest.raises(TuneError, match=r"not in a \.py file"):
        apply_patch(result)
    assert result.to_dict()["in_file"] is False


def test_a_function_whose_text_is_nowhere_says_so():
    linecache.cache.pop("<tfperf-test-lost>", None)
    ns = _compiled(TEXT, "<tfperf-test-lost>", cache=False)
    with pytest.raises(TuneError, match="its source cannot be found"):
        tune(ns["triple"], (tf.ones([8]),), budget=1, levers=[])


def test_isolate_needs_a_file_and_says_so():
    ns = _compiled(TEXT, "<tfperf-test-isolate>", cache=True)
    with pytest.raises(TuneError, match=r"--isolate needs a function defined in a \.py file"):
        tune(ns["triple"], (tf.ones([8]),), budget=1, levers=[], isolate=True)
