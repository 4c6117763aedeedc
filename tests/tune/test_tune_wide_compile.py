"""An XLA compile's cost follows the tensors an op fans out to, not the op count: held-out
round 14's c11 (unstack 512 slices, gather, unstack, stack) is 5 eager ops, and its first
``jit_compile`` call took 46 s at load 7, in-process where the first call's 6 s limit cannot
interrupt it (the search ran 87 s of 60 s). Its width (2 k tensors) now sends it to a child
process that is killed at the limit. Twin: a narrow function of as few ops is not flagged."""

from __future__ import annotations

import types

import tensorflow as tf

from tfperf.profile.watcher import watch
from tfperf.tune.search import Search


def _wide(x):
    return tf.stack(tf.unstack(x, axis=-1)[::-1], axis=-1)


def _narrow(x):
    return tf.reverse(x, axis=[-1])


def test_the_watcher_counts_an_unstack_as_wide_as_its_outputs():
    x = tf.ones([2, 300])
    with watch(functions=False, host_syncs=False, eager_ops=True) as w:
        _wide(x)
    assert w.obs.eager_op_count < 10 and w.obs.eager_op_width >= 600
    with watch(functions=False, host_syncs=False, eager_ops=True) as w:
        _narrow(x)
    assert w.obs.eager_op_width < 10


def _risk(monkeypatch, ops: int, width: int | None) -> str | None:
    eager = types.SimpleNamespace(estimate=1e-3, width=width)
    monkeypatch.setattr(Search, "_eager_start", lambda self, chosen: eager)
    monkeypatch.setattr(Search, "_eager_ops", lambda self, live: ops)
    search = object.__new__(Search)
    lever = types.SimpleNamespace(graph_loop=False, traces=True, compiles=True)
    return search._first_call_risk((lever,), 6.0)  # type: ignore[arg-type]


def test_a_wide_compile_is_a_first_call_risk_and_a_narrow_one_is_not(monkeypatch):
    why = _risk(monkeypatch, 5, 2049)
    assert why is not None and "2049 tensors wide" in why, why
    assert _risk(monkeypatch, 5, 5) is None
    assert _risk(monkeypatch, 5, None) is None  # an isolated child counts ops only
