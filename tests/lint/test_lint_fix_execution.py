"""Fixes checked by execution: each fixed INVALID example computes what the original does.

Every example with an expected fix is run twice (original, fixed) with the same inputs: its
module-level tensors are compared, and each function whose parameters this harness knows
how to feed is called and its results compared. An original that cannot run here (it needs
a model, files...) is skipped; a fixed version that fails where the original ran is a bug.
"""

from __future__ import annotations

import inspect

import pytest

from tfperf.lint import registry

pytestmark = pytest.mark.tf
tf = pytest.importorskip("tensorflow")
np = pytest.importorskip("numpy")

# Inputs by parameter name (shapes chosen so the examples' loops and reductions make sense).
_INPUTS = {
    "x": lambda: tf.random.stateless_normal([6, 4], seed=[1, 2]),
    "t": lambda: tf.random.stateless_normal([5, 3], seed=[3, 4]),
    "n": lambda: 4,
    "samples": lambda: tf.random.stateless_normal([3, 5, 4], seed=[5, 6]),
    "weights": lambda: tf.random.stateless_normal([5], seed=[7, 8]),
    "w": lambda: tf.random.stateless_normal([4], seed=[9, 10]),
}


def _values(source: str):
    tf.random.set_seed(1234)  # examples that draw random tensors draw the same ones twice
    np.random.seed(1234)
    ns: dict = {}
    exec(compile(source, "<example>", "exec"), ns)
    out = {k: v for k, v in ns.items() if tf.is_tensor(v)}
    for name, fn in ns.items():
        if inspect.isfunction(fn):
            params = list(inspect.signature(fn).parameters)
            if params and all(p in _INPUTS for p in params):
                out[f"{name}()"] = fn(*[_INPUTS[p]() for p in params])
    return out


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [v for item in value for v in _flat(item)]
    return [np.asarray(value)]


FIXED = [(r, i, ex) for r in registry.all_rules() for i, ex in enumerate(r.invalid)
         if ex.fixed is not None]


@pytest.mark.parametrize(("rule", "i", "ex"), FIXED,
                         ids=[f"{r.code}-{i}" for r, i, _ in FIXED])
def test_fixed_example_computes_the_same_values(rule, i, ex):
    try:
        before = _values(ex.source)
    except Exception as exc:  # the example needs more than this harness provides
        pytest.skip(f"original does not run here: {type(exc).__name__}: {exc}")
    after = _values(ex.fixed)
    compared = 0
    for key, value in before.items():
        if key not in after:
            continue
        for a, b in zip(_flat(value), _flat(after[key]), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=key)
            compared += 1
    if rule.code == "TFP102":  # the reference rule's examples must really be compared
        assert compared > 0, "nothing was compared"
    elif compared == 0:
        pytest.skip("no value this harness can compare")
