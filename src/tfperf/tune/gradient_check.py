"""Is a candidate's gradient finite where the function's is?

A rewrite can keep every forward value and still break training: ``tf.cond`` → ``tf.where``
runs both branches, and a guarded ``log(x)`` on the excluded side makes the gradient NaN
(0 · Inf) where the cond's was finite. The forward check (:mod:`tfperf.bench.equivalence`)
cannot see that, so the search asks this module for a rewrite that replaced a cond.

The gradient is that of the sum of the float outputs with respect to the float tensor or
array arguments (top level, and the items of a list or tuple argument). Where are they
finite is compared by :func:`tfperf.bench.equivalence.compare_outputs` (one comparer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def replaces_conds(source: str, text: str) -> bool:
    """The edited ``text`` has fewer ``tf.cond`` than the user's ``source``: a rewrite that
    runs both branches, whose gradient is to be checked."""
    return text.count(".cond(") < source.count(".cond(")


def gradients(fn: Callable[..., Any], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> list[Any] | None:
    """Host copies of d(sum of float outputs)/d(each float input), None for an input the
    output does not depend on; None when nothing is differentiable."""
    import tensorflow as tf

    from tfperf.bench.equivalence import snapshot

    watched: list[Any] = []

    def watch(value: Any) -> Any:
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(watch(v) for v in value)
        if isinstance(value, (tf.Tensor, np.ndarray)) and _floating(value.dtype):
            t = tf.convert_to_tensor(value)
            watched.append(t)
            return t
        return value

    with tf.GradientTape(persistent=False) as tape:
        a = tuple(watch(v) for v in args)
        k = {n: watch(v) for n, v in kwargs.items()}
        if not watched:
            return None
        for t in watched:
            tape.watch(t)
        out = fn(*a, **k)
        floats = [tf.reduce_sum(tf.cast(x, tf.float64)) for x in tf.nest.flatten(out)
                  if isinstance(x, tf.Tensor) and x.dtype.is_floating]
        if not floats:
            return None
        total = tf.add_n(floats)
    grads = tape.gradient(total, watched)
    if all(g is None for g in grads):
        return None
    return [snapshot(g) if g is not None else None for g in grads]


def _floating(dtype: Any) -> bool:
    import tensorflow as tf

    try:
        return bool(tf.as_dtype(dtype).is_floating)
    except TypeError:  # object arrays and the like
        return False


def finite_gradient_lost(base_fn: Callable[..., Any], fn: Callable[..., Any],
                         args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why ``fn``'s gradient is not finite where ``base_fn``'s is (or fails where it runs);
    None when it is, or when ``base_fn`` has no gradient to keep."""
    from tfperf.bench.equivalence import compare_outputs, map_leaves
    from tfperf.bench.verify import describe_error

    try:
        base = gradients(base_fn, args, kwargs)
    except Exception:  # the user's function is not differentiable: nothing to keep
        return None
    if base is None:
        return None
    try:
        mine = gradients(fn, args, kwargs)
    except Exception as exc:  # the user's code, edited
        return f"its gradient fails where the function's is computed: {describe_error(exc)}"
    if mine is None:
        return "it has no gradient where the function has one"

    def finite(leaf: Any, _: str) -> Any:
        return np.isfinite(leaf) if isinstance(leaf, np.ndarray) else leaf

    eq = compare_outputs(map_leaves(base, finite), map_leaves(mine, finite))
    if eq.equivalent is False:
        return f"its gradient is NaN or Inf where the function's is finite ({eq.reason})"
    return None
