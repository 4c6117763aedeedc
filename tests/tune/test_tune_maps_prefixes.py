"""Maps of a function and prefix reductions (stop 39; held-out rounds 8 and 9's misses):

- ``tf.map_fn``/``K.map_fn``/``keras.ops.map`` of a lambda, a ``def`` (nested or at module
  level), a name bound to a lambda, a ``functools.partial``, a lambda calling a function: the
  mapped function is read as one expression of its element (tune/map_bodies.py) and its body
  runs once on the whole batch; pfor maps it where it has no Python side effect;
- ``tf.reduce_sum(x[:i])`` (``x[:i + 1]``, ``reduce_prod``, ``reduce_max``) for every step of a
  loop or a map: one cumulative op (tune/prefix_slices.py).

Each rewrite is run against the spelling on its inputs (no timing); the VALID twins are
functions the rewrite must leave alone (a side effect, a shape set by the data, a module
function whose free name the caller shadows, a suffix rather than a prefix)."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from rewrites import lever_context, loops_left  # noqa: E402
from spellings import COMPUTATIONS  # noqa: E402
from test_tune_loop_model import _agrees, _spelling  # noqa: E402

from tfperf.tune.levers.loop_model import (  # noqa: E402
    LoopsBatched,
    LoopsVectorizedMap,
    exclusive_sums,
)
from tfperf.tune.source import SourceEditError  # noqa: E402

BY_NAME = {c.name: c for c in COMPUTATIONS}
MAPS = [f"mapped_rows/{s}" for s in BY_NAME["mapped_rows"].spellings]
# Not built: an unbatched matrix times one example's vector broadcast (w * r, [k, d] * [d]),
# a reshape of one example to a column: mapped by pfor, batched not (misses in the figures).
MATVECS = [f"mapped_matvec/{s}" for s in BY_NAME["mapped_matvec"].spellings
           if s not in ("def_reshape_matmul", "map_fn_broadcast_sum", "keras_backend_dot")]
PREFIXES = [f"prefix_sums/{s}" for s in BY_NAME["prefix_sums"].spellings]


def _no_map_left(new: str) -> bool:
    fn = next(n for n in ast.parse(new).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    calls = {ast.unparse(c.func).rsplit(".", 1)[-1] for c in ast.walk(fn)
             if isinstance(c, ast.Call)}
    return not calls & {"map_fn", "map", "vectorized_map"}


@pytest.mark.parametrize("name", MAPS + MATVECS + PREFIXES + ["norms/map_fn"])
def test_the_mapped_body_runs_once_on_the_batch(name):
    text, args, ctx = _spelling(name)
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert _no_map_left(new) and loops_left(new) == 0, new
    _agrees(text, new, args)


@pytest.mark.parametrize("name", MAPS + [f"mapped_matvec/{s}" for s in
                                         BY_NAME["mapped_matvec"].spellings])
def test_a_map_of_a_function_without_side_effects_becomes_vectorized_map(name):
    text, args, ctx = _spelling(name)
    new = LoopsVectorizedMap().build(text, ctx)
    assert "vectorized_map(" in new, new
    _agrees(text, new, args)


@pytest.mark.parametrize("name", PREFIXES)
def test_a_prefix_sum_of_every_step_is_one_exclusive_cumsum(name):
    text, _, ctx = _spelling(name)
    new = LoopsBatched(True).build(text, ctx)
    fn = next(n for n in ast.parse(new).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    own = "\n".join(ast.unparse(s) for s in fn.body  # (a def inside f, left unused)
                    if not isinstance(s, ast.FunctionDef))
    assert "cumsum(lengths, axis=0" in own and "reduce_sum" not in own, new


def _module(body: str) -> str:
    return "import functools\n\nimport tensorflow as tf\n\n\n" + textwrap.dedent(body)


X = tf.constant([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [2.0, 2.0, -3.0], [1.5, -0.5, 0.25]])


@pytest.mark.parametrize(("body", "expect"), [
    ("""
     def f(x):
         return tf.map_fn(lambda i: tf.reduce_prod(x[:i + 1], axis=0), tf.range(x.shape[0]),
                          fn_output_signature=tf.float32)
     """, "cumprod(x, axis=0)"),
    ("""
     def f(x):
         return tf.stack([tf.reduce_max(x[:i + 1]) for i in range(x.shape[0])])
     """, "scan(tf.maximum, x)"),
    ("""
     def f(x):
         out = []
         for i in range(x.shape[0]):
             out.append(tf.reduce_sum(x[:i + 1]))
         return tf.stack(out)
     """, "_tfperf_per_example(tf.reduce_sum, tf.cumsum(x, axis=0))"),
])
def test_other_prefix_reductions_and_a_prefix_over_every_axis(body, expect):
    text = _module(body)
    ctx = lever_context(text, (X,), "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert expect in new, new
    _agrees(text, new, (X,))


def test_a_loop_over_fewer_steps_than_rows_keeps_its_steps():
    text = _module("""
        def f(x, n):
            return tf.stack([tf.reduce_sum(x[:i], axis=0) for i in range(n)])
        """)
    ctx = lever_context(text, (X, 3), "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert "exclusive=True)[:n]" in new, new
    _agrees(text, new, (X, 3))


TWINS = {
    "print": """
        def f(x):
            def row(r):
                print("row")
                return tf.reduce_sum(r)
            return tf.map_fn(row, x)
        """,
    "numpy": """
        def f(x):
            return tf.map_fn(lambda r: tf.constant(r.numpy().sum()), x)
        """,
    "append": """
        seen = []


        def f(x):
            def row(r):
                seen.append(1)
                return tf.reduce_sum(r)
            return tf.map_fn(row, x)
        """,
    "data_shaped": """
        def f(x):
            return tf.map_fn(lambda r: tf.reduce_sum(tf.unique(r)[0]), x)
        """,
}


@pytest.mark.parametrize("name", sorted(TWINS))
def test_valid_a_map_body_with_a_side_effect_or_a_data_shape_is_not_batched(name):
    text = _module(TWINS[name])
    ctx = lever_context(text, (X,), "m.py")
    with pytest.raises(SourceEditError):
        LoopsBatched(True).build(text, ctx)
    # (a reduction of boolean_mask(r, m) is batched since tune17: a where() and an axis
    # reduction, tests/tune/test_tune_loop_model.py; unique's rows stay data-shaped)
    if name != "data_shaped":  # (pfor of a data shape is its own check: the verdict)
        with pytest.raises(SourceEditError):
            LoopsVectorizedMap().build(text, ctx)


def test_valid_a_module_function_reading_a_global_the_caller_shadows_is_not_inlined():
    text = _module("""
        w = tf.constant([1.0, 1.0, 1.0])


        def score(r):
            return tf.reduce_sum(r * w)


        def f(x, w):
            return tf.map_fn(score, x)
        """)
    args = (X, tf.constant([2.0, 3.0, 4.0]))
    ctx = lever_context(text, args, "m.py")
    with pytest.raises(SourceEditError):
        LoopsBatched(True).build(text, ctx)
    new = LoopsVectorizedMap().build(text, ctx)  # mapped as it is: the global still read
    _agrees(text, new, args)


def test_valid_a_suffix_is_not_a_prefix():
    text = _module("""
        def f(x):
            return tf.stack([tf.reduce_sum(x[i:], axis=0) for i in range(x.shape[0])])
        """)
    ctx = lever_context(text, (X,), "m.py")
    try:
        new = LoopsBatched(True).build(text, ctx)
    except SourceEditError:
        return
    assert "cumsum" not in new, new


def test_a_plain_function_called_per_example_is_inlined_and_batched():
    # A comprehension (or a loop) calling a module function per row: its reduction of one
    # example was refused as "reduces one example" before; inlined, it is a reduction over
    # the example's own axis.
    text = _module("""
        def norm_of(r):
            squared = r * r
            return tf.sqrt(tf.reduce_sum(squared))


        def f(x):
            return tf.stack([norm_of(r) for r in tf.unstack(x)])
        """)
    ctx = lever_context(text, (X,), "m.py")
    new = LoopsBatched(True).build(text, ctx)
    f_text = new[new.index("def f("):]
    assert "norm_of(" not in f_text and loops_left(new) == 0, new
    _agrees(text, new, (X,))


def test_valid_a_function_with_a_side_effect_is_not_inlined():
    text = _module("""
        calls = []


        def norm_of(r):
            calls.append(r)
            return tf.sqrt(tf.reduce_sum(r * r))


        def f(x):
            return tf.stack([norm_of(r) for r in tf.unstack(x)])
        """)
    ctx = lever_context(text, (X,), "m.py")
    with pytest.raises(SourceEditError):
        LoopsBatched(True).build(text, ctx)


def test_an_op_named_like_a_list_method_is_no_side_effect():
    # tf.add / tf.math.add are ops; a set's .add() is a side effect (read apart by receiver).
    text = _module("""
        def f(x):
            return tf.map_fn(lambda r: tf.reduce_sum(tf.math.add(r, 1.0)), x)
        """)
    ctx = lever_context(text, (X,), "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert "map_fn" not in new[new.index("def f("):], new
    _agrees(text, new, (X,))


def test_a_float_sum_read_before_its_update_is_a_cumsum_less_each_term():
    text = _module("""
        def f(x):
            acc = tf.zeros_like(x[0])
            out = []
            for i in range(x.shape[0]):
                out.append(acc * 0.5)
                acc += x[i]
            return tf.stack(out)
        """)
    ctx = lever_context(text, (X,), "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert "cumsum" in new and loops_left(new) == 0, new
    _agrees(text, new, (X,))


def test_valid_a_sum_also_read_after_its_update_is_left_as_written():
    text = _module("""
        def f(x):
            acc = tf.zeros_like(x[0])
            before, after = [], []
            for i in range(x.shape[0]):
                before.append(acc)
                acc += x[i]
                after.append(acc * 2.0)
            return tf.stack(before), tf.stack(after)
        """)
    assert exclusive_sums(text, "f") == text


def test_an_inclusive_prefix_less_its_own_row_is_the_exclusive_cumsum():
    text, args, ctx = _spelling("prefix_sums/inclusive_minus_own")
    new = LoopsBatched(True).build(text, ctx)
    assert "exclusive=True" in new and " - lengths" not in new, new
    _agrees(text, new, args)


@pytest.mark.parametrize("name", ["mapped_matvec/map_fn_einsum", "mapped_matvec/map_fn_tensordot",
                                  "mapped_matvec/map_fn_matvec"])
def test_a_shared_matrix_times_each_example_is_one_matmul(name):
    # einsum/tensordot of the batch ran 3-4× slower than MatMul with transpose_b eagerly
    # (a transposed copy and a GEMM against one oneDNN call: 401/486 µs vs 115 µs at
    # 1024×64 by 32×64 on the 2-core CPU, one interleaved run at load 8).
    text, args, ctx = _spelling(name)
    new = LoopsBatched(True).build(text, ctx)
    assert "tf.matmul(x, w, transpose_b=True)" in new, new
    _agrees(text, new, args)


# A reduction's axis given by a name (stop 40, item 3): literal_eval raised on ``axis=[k]``
# and the loop levers lost the whole candidate; a name's axis is shifted past the batch axis
# when it runs (it was left as written: the batch reduced over the example's axis less one).
X3 = tf.constant(np.random.default_rng(4).normal(size=(5, 4, 3)).astype(np.float32))


@pytest.mark.parametrize("body", [
    """
    def f(x):
        k = 0
        return tf.stack([tf.reduce_sum(x[:i], axis=[k]) for i in range(x.shape[0])])
    """,
    """
    def f(x):
        k = 0
        out = []
        for i in range(x.shape[0]):
            out.append(tf.reduce_sum(x[:i + 1], axis=k))
        return tf.stack(out)
    """,
])
def test_a_prefix_reduction_over_an_axis_bound_to_a_name_is_a_cumsum(body):
    text = _module(body)
    ctx = lever_context(text, (X3,), "m.py")
    new = LoopsBatched(True).build(text, ctx)
    assert "cumsum(x, axis=0" in new and "reduce_sum" not in new, new
    _agrees(text, new, (X3,))


@pytest.mark.parametrize(("body", "args"), [
    ("""
     def f(x):
         ax = 1
         out = []
         for i in range(x.shape[0]):
             out.append(tf.reduce_sum(x[i], axis=[ax]))
         return tf.stack(out)
     """, (X3,)),
    ("""
     def f(x, ax):
         return tf.stack([tf.reduce_max(x[i], axis=[ax, -1]) for i in range(x.shape[0])])
     """, (X3, 0)),
    ("""
     def f(x, ax):
         return tf.map_fn(lambda r: tf.reduce_mean(r, axis=ax), x)
     """, (X3, -1)),
])
def test_a_reduction_over_an_axis_given_by_a_name_is_shifted_when_it_runs(body, args):
    text = _module(body)
    ctx = lever_context(text, args, "m.py")
    new = LoopsBatched(True).build(text, ctx)
    # (a bare name may be None when it runs: the batch's rank goes with it, review 40)
    assert ("_tfperf_past_batch(ax)" in new or "_tfperf_past_batch(ax, len(" in new) \
        and loops_left(new) == 0, new
    _agrees(text, new, args)


def test_valid_a_prefix_over_an_axis_the_text_does_not_fix_is_no_cumsum():
    # ``k`` a parameter (0 here, but the text does not say so): no cumulative op is written.
    text = _module("""
        def f(x, k):
            return tf.stack([tf.reduce_sum(x[:i], axis=[k]) for i in range(x.shape[0])])
        """)
    ctx = lever_context(text, (X3, 0), "m.py")
    try:
        new = LoopsBatched(True).build(text, ctx)
    except SourceEditError:
        return
    assert "cumsum" not in new, new
