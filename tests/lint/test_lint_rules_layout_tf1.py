"""Focused tests for the layout rules added for issue 18 (TFP405, TFP403's broadcast forms),
the TF1 run-time rules and the mixed-precision order rules: their context, which fixes are
offered, and fixes checked by execution with real TensorFlow."""

from __future__ import annotations

import pytest

from tfperf.core.findings import Applicability
from tfperf.lint import registry
from tfperf.lint.engine import lint_source
from tfperf.lint.fix import fix_source


def _lint(source: str, code: str, path: str = "t.py"):
    return [f for f in lint_source(source, path, rules=[registry.get(code)]) if f.code == code]


def _fixed(source: str, code: str, unsafe: bool = False) -> str:
    result = fix_source(source, lambda s: lint_source(s, "t.py", rules=[registry.get(code)]),
                        unsafe=unsafe)
    assert result.error is None
    return result.source


def _run(source: str, name: str):
    ns: dict = {}
    exec(compile(source, "<example>", "exec"), ns)
    return ns[name]


# ------------------------------------------------------------------ TFP405

def test_tfp405_fixes_are_unsafe_and_skip_calls_that_set_the_flag():
    src = ("import tensorflow as tf\n"
           "def f(a, b):\n"
           "    return tf.matmul(a, tf.transpose(b, [1, 0]))\n")
    [f] = _lint(src, "TFP405")
    assert f.fix is not None and f.fix.applicability is Applicability.UNSAFE
    assert _fixed(src, "TFP405") == src  # nothing safe to apply
    flagged = src.replace("[1, 0]))", "[1, 0]), transpose_b=True)")
    [g] = _lint(flagged, "TFP405")  # a transpose of a transpose: still a copy, no fix
    assert g.fix is None


def test_tfp405_only_matmul_operands():
    src = ("import tensorflow as tf\n"
           "def f(a, b):\n"
           "    return tf.add(a, tf.transpose(b)), tf.matmul(tf.transpose(b, perm=p), a)\n")
    assert _lint(src, "TFP405") == []


@pytest.mark.tf
def test_tfp405_unsafe_fixes_compute_the_same_values():
    tf = pytest.importorskip("tensorflow")
    np = pytest.importorskip("numpy")
    source = ("import tensorflow as tf\n"
              "def f(q, k):\n"
              "    return tf.matmul(q, tf.transpose(k, perm=[0, 2, 1]))\n"
              "def g(q, k):\n"
              "    return tf.linalg.matmul(tf.linalg.matrix_transpose(k), q)\n"
              "def h(q, k):\n"
              "    return tf.linalg.matvec(tf.linalg.adjoint(k), q[:, :, 0])\n"
              "def o(q, k):\n"
              "    op = tf.linalg.LinearOperatorFullMatrix(q)\n"
              "    return op.matmul(tf.linalg.matrix_transpose(k))\n")
    fixed = _fixed(source, "TFP405", unsafe=True)
    assert "transpose(" not in fixed and "adjoint(" not in fixed
    assert fixed.count("=True") == 4
    q = tf.random.stateless_normal([2, 3, 4], seed=[1, 2])
    k = tf.random.stateless_normal([2, 3, 4], seed=[3, 4])
    for name in ("f", "g", "h", "o"):
        before, after = _run(source, name)(q, k), _run(fixed, name)(q, k)
        assert before.shape == after.shape and before.dtype == after.dtype
        np.testing.assert_allclose(before.numpy(), after.numpy(), rtol=1e-6, atol=1e-6)
