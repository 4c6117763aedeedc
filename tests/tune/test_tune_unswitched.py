"""Stop 46: a branch on a value the loop never changes (round 16's c11: ``if operator ==
"erode": … elif "dilate": … else: raise`` around a per-pixel write) is taken out of the loop,
one copy of the loop per branch, each batched on its own; and a value chosen by a
conditional expression (``255 if np.all(w == 255) else 0``) is the branch model's pick."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from no_fallback import HEAD, agrees

from tfperf.analysis.unswitch import invariant_branch, unswitched
from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

MORPH = '''
def f(image, operator):
    padded = np.pad(image, ((1, 1), (1, 1)), mode="constant", constant_values=0)
    output = np.zeros_like(image, dtype=np.uint8)
    for y in range(image.shape[0]):
        for x in range(image.shape[1]):
            region = padded[y:y + 3, x:x + 3]
            if operator == "erode":
                output[y, x] = 255 if np.all(region == 255) else 0
            elif operator == "dilate":
                output[y, x] = 255 if np.any(region == 255) else 0
            else:
                raise ValueError(f"Unsupported: {operator}")
    return output
'''


def _mask(shape=(20, 23)):
    r = np.random.default_rng(0)
    return np.where(r.random(shape) < 0.7, 255, 0).astype(np.uint8)


@pytest.mark.parametrize("operator", ["erode", "dilate"])
def test_each_branch_gets_its_own_batched_loop(operator):
    new = agrees(MORPH, _mask(), operator)
    assert new.count("sliding_window_view") == 2, new  # erode and dilate, batched


def test_the_other_branch_raises_as_the_loop_did():
    new = numpy_writes.rewrite(HEAD + MORPH, "f")
    ns: dict = {}
    exec(new, ns)
    with pytest.raises(ValueError, match="Unsupported: open"):
        ns["f"](_mask(), "open")


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_a_chosen_value_is_one_pick_per_element(dtype):
    text = '''
def f(x, t):
    out = np.zeros(len(x), dtype=x.dtype)
    for i in range(len(x)):
        v = x[i] * 2 if x[i] > t else x[i]
        out[i] = 0 if v > 3 * t else (1 if v > t else v)
    return out
'''
    agrees(text, np.arange(12).astype(dtype), 3)


# VALID twins: branches the loop changes, or whose test runs code

@pytest.mark.parametrize("test", ["x[i] > 0", "flag", "len(x) > 2", "opts['mode'] == 1"])
def test_valid_a_test_the_loop_changes_or_that_runs_code_stays_inside(test):
    text = f'''
def f(x, opts):
    out = np.zeros(len(x))
    flag = True
    for i in range(len(x)):
        flag = x[i] > 1
        if {test}:
            out[i] = 1.0
    return out
'''
    loop = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.For))
    assert invariant_branch(loop) is None and unswitched(loop) is None


def test_valid_an_if_under_another_statement_is_not_taken_out():
    text = '''
def f(x, mode):
    out = np.zeros(len(x))
    for i in range(len(x)):
        with np.errstate(all="ignore"):
            if mode == 1:
                out[i] = 1.0
    return out
'''
    loop = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.For))
    assert unswitched(loop) is None
    with pytest.raises(SourceEditError):
        numpy_writes.rewrite(HEAD + text, "f")


def test_an_unswitched_else_less_chain_keeps_the_loop_without_the_branch():
    text = '''
def f(x, scale):
    out = np.ones(len(x))
    for i in range(len(x)):
        if scale:
            out[i] = x[i] * 2.0
    return out
'''
    agrees(text, np.arange(5.0), True)
    agrees(text, np.arange(5.0), False)
