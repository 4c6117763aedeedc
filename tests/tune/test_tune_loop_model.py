"""Levers derived from the loop model: every spelling of a loop of independent iterations
(range, tf.unstack, enumerate, zip, a counter-driven while, a comprehension, tf.map_fn;
values appended and stacked, written to out[i] or a TensorArray, added up, a running sum)
is rewritten to the same computation without the Python loop. Checked by running the
rewrite on the spelling's inputs against the spelling itself (no timing); one search on the
article's tuple-index spelling, whose levers were "not applicable" before (issue 26)."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from spellings import COMPUTATIONS  # noqa: E402

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.device import DeviceFacts  # noqa: E402
from tfperf.tune.lever import LeverContext  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched, LoopsVectorizedMap  # noqa: E402
from tfperf.tune.levers.numpy_round_trip import NumpyRoundTrip  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

BY_NAME = {c.name: c for c in COMPUTATIONS}


def _spelling(name: str) -> tuple[str, tuple, LeverContext]:
    comp_name, spelling = name.split("/")
    comp = BY_NAME[comp_name]
    text = "import numpy as np\nimport tensorflow as tf\n\n\n" + comp.spellings[spelling]
    ns = {"SIZE": dict(comp.small), "tf": tf, "np": np}
    exec("def make():\n" + "\n".join("    " + r for r in comp.inputs.splitlines()), ns)
    args = ns["make"]()
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("spelling.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(_run(text, args))]
    return text, args, ctx


def _run(text: str, args: tuple):
    ns: dict = {}
    exec(compile(text, "<rewrite>", "exec"), ns)
    return ns["f"](*args)


def _agrees(text: str, new: str, args: tuple) -> None:
    eq = compare_outputs(snapshot(_run(text, args)), snapshot(_run(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


def _loops_left(new: str) -> list[str]:
    fn = next(n for n in ast.parse(new).body if isinstance(n, ast.FunctionDef) and n.name == "f")
    return [type(n).__name__ for n in ast.walk(fn)
            if isinstance(n, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp))]


BATCHED = [  # one spelling per form of the loop: the body runs once on the whole batch
    "norms/norm_append",             # range + append + tf.stack, a reduction of one example
    "norms/comprehension_sqrt",      # comprehension over tf.unstack
    "norms/while_counter",           # a counter-driven while
    "norms/prealloc_enumerate",      # enumerate(tf.unstack) + out[i] = ...
    "norms/feature_loop",            # an accumulation nested in a map
    "pairwise/coordinate_loop",      # three loops, the innermost a sum
    "per_example/while_tensor_array",  # a TensorArray written at the counter
    "per_example/map_fn",            # tf.map_fn of a lambda
    "per_example/row_matmul_concat",  # rows joined by tf.concat
    "per_example/einsum_loop",       # an einsum of one example: the batch axis gets a letter
    "weighted_sum/nested_tuple_index",  # s[i, j] * w[j] in two loops (the article, issue 26)
    "weighted_sum/zip_unstack",      # zip of two tf.unstack
    "weighted_sum/while_counters",   # two counters
    "pairwise/nested_comprehension",  # nested comprehensions: a broadcast over both indices
    "lookups/index_append",          # table[ids[i]] → tf.gather
    "running_mean/sum_then_divide",  # a running sum read each step → tf.cumsum
    "running_mean/total_and_count",  # two running sums, one of a constant
]


@pytest.mark.parametrize("name", BATCHED)
def test_the_body_runs_once_on_the_batch_whatever_the_spelling(name):
    text, args, ctx = _spelling(name)
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert _loops_left(new) == [], new
    assert "vectorized_map" not in new
    _agrees(text, new, args)


MAPPED = ["weighted_sum/enumerate_columns",  # x[:, j, :]: the index not first
          "pairwise/row_at_a_time",          # one row against all
          "pairwise/nested_rows",            # two loops: a map of maps
          "lookups/map_fn_pairs",            # tf.map_fn over a tuple
          "lookups/map_fn_elems_keyword",    # elems= and dtype= given by keyword (round 2)
          "weighted_sum/inner_add_n"]        # tf.add_n of a comprehension


@pytest.mark.parametrize("name", MAPPED)
def test_independent_iterations_become_one_vectorized_map(name):
    text, args, ctx = _spelling(name)
    lever = LoopsVectorizedMap()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "vectorized_map" in new and not [k for k in _loops_left(new)
                                            if k in ("For", "While")], new
    _agrees(text, new, args)


def test_one_examples_matvec_becomes_one_matmul_of_the_batch():
    # A broadcast matvec would run one small product per example (3.8 ms against 70 µs for
    # the matmul at 256×128×64 on the 2-core CPU): the batch gets one matrix product.
    for name in ("per_example/matvec_append", "per_example/map_fn"):
        text, args, ctx = _spelling(name)
        new = LoopsBatched(True).build(text, ctx)
        assert "tf.matmul(x, w)" in new and "matvec" not in new, new
        _agrees(text, new, args)


def test_a_recurrence_is_not_taken_for_independent_iterations():
    text, _, ctx = _spelling("running_mean/incremental_mean")  # mean reads itself
    assert LoopsBatched(True).applies(ctx) is not None
    with pytest.raises(SourceEditError):
        LoopsVectorizedMap().build(text, ctx)


@pytest.mark.parametrize("name", ["norms/numpy_rows", "per_example/numpy_rows",
                                  "lookups/numpy_rows"])
def test_a_numpy_round_trip_then_its_loop(name):
    text, args, ctx = _spelling(name)
    lever = NumpyRoundTrip()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert ".numpy()" not in new
    _agrees(text, new, args)
    batched = LoopsBatched(True).build(new, ctx)
    assert _loops_left(batched) == [], batched
    _agrees(text, batched, args)


def test_a_numpy_round_trip_through_array_methods_leaves_no_host_copy():
    # Held-out round 2: the rewrite left xn.sum(...) on a tensor (no such method: raised).
    text, args, ctx = _spelling("norms/numpy_array_methods")
    new = NumpyRoundTrip().build(text, ctx)
    assert ".numpy()" not in new and ".sum(" not in new and ".astype(" not in new, new
    _agrees(text, new, args)


def test_tune_rewrites_the_articles_tuple_index_spelling(user_module, roomy_limits):
    """Issue 26: tf.function and jit_compile were too slow to trace, vectorized_map and
    loop→batched ops "not applicable: the loop index 'i' is used other than as x[i]"."""
    comp = BY_NAME["weighted_sum"]
    mod = user_module("import tensorflow as tf\n\n\n" + comp.spellings["nested_tuple_index"])
    g = tf.random.Generator.from_seed(0)
    args = (g.normal([6, 12, 256]), g.normal([12]))
    from tfperf.tune import tune

    result = tune(mod.f, args, budget=20)
    by = {c.name: c for c in result.candidates}
    batched = by["loops→batched ops (per-example axes)"]
    assert batched.rejected is None and batched.equivalent is True, result.table()
    # The map applies (issue 26: "not applicable" before) and agrees where it ran: an eager
    # tf.vectorized_map converts its body on every call, 4.5 s a call at load 15 on 2 cores,
    # past the steady-state limit (4x the baseline's first call): "too slow" is the one
    # verdict the load may give it, never a disagreement.
    mapped = by["loops→vectorized_map"]
    assert mapped.patch and (mapped.equivalent is True or (
        mapped.equivalent is None and mapped.rejected.startswith("too slow"))), result.table()
    # 72 eager iterations against one batched op: far beyond any noise (tens of times on an
    # idle machine; 3.9x was seen with both cores shared by eight processes, so the bar is
    # 2x). The pick may be that op or the loop unrolled and compiled whole by XLA
    # (jit_compile: as fast, once its compile is paid); either is equivalent.
    assert batched.speedup is not None and batched.speedup > 2
    assert result.best is not None and result.best.equivalent is True


def test_a_scan_of_a_running_sum_is_a_cumsum():
    from tfperf.tune.levers.loop_model import ScanToCumsum

    text, args, ctx = _spelling("running_mean/scan")
    lever = ScanToCumsum()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "tf.cumsum(x, axis=0)" in new and "tf.scan" not in new
    _agrees(text, new, args)
    text, _, ctx = _spelling("running_mean/prefix_slices")
    assert lever.applies(ctx) == "no tf.scan of a running sum"


def test_each_examples_own_element_is_a_batched_gather():
    # q[i, a[i]] (held-out round 1: the value of the action taken): batched as q[:, a] it
    # picks every example's action in every row ([n, n]); each row's own is a gather.
    from test_tune_fill import HEAD, _context

    text = HEAD + '''
def f(q, a):
    picked = []
    for i in range(q.shape[0]):
        picked.append(q[i, a[i]])
    return tf.stack(picked)
'''
    g = tf.random.Generator.from_seed(2)
    args = (g.normal([9, 4]), g.uniform([9], 0, 4, dtype=tf.int32))
    new = LoopsBatched(True).build(text, _context(text, args))
    assert "batch_dims=1" in new and not _loops_left(new), new
    _agrees(text, new, args)


def test_a_dot_with_each_example_as_its_second_operand_contracts_the_right_axes():
    # np.dot(q, v) for each row v (held-out round 1's cosine scores, once the round trip is
    # TF ops): tf.tensordot(q, rows, axes=1) would contract the batch axis.
    from test_tune_fill import HEAD, _context

    text = HEAD + '''
def f(q, rows):
    return tf.stack([tf.tensordot(q, v, axes=1) / (tf.norm(q) * tf.norm(v))
                     for v in tf.unstack(rows)])
'''
    g = tf.random.Generator.from_seed(4)
    args = (g.normal([6]), g.normal([10, 6]))
    new = LoopsBatched(True).build(text, _context(text, args))
    assert "axes=[[-1], [-1]]" in new and not _loops_left(new), new
    _agrees(text, new, args)


def test_a_list_built_in_two_branches_keeps_its_stack():
    # Held-out round 3 (c13): the list is a comprehension in each branch of an if, stacked
    # once after; rewriting one branch's comprehension replaced the shared tf.stack, and the
    # other branch returned a Python list ("changes the function's contract").
    from test_tune_fill import HEAD, _context

    text = HEAD + '''
def f(x, scale):
    if scale.shape[0] == x.shape[0]:
        rows = [tf.exp(r) * s for r, s in zip(tf.unstack(x), tf.unstack(scale))]
    else:
        rows = [r * 2.0 for r in tf.unstack(x)]
    return tf.stack(rows, axis=0)
'''
    g = tf.random.Generator.from_seed(5)
    for k in (8, 1):  # the first branch taken, then the second
        args = (g.normal([8, 5]), g.normal([k]))
        ctx = _context(text, args)
        for lever in (LoopsVectorizedMap(), LoopsBatched(True)):
            try:
                new = lever.build(text, ctx)
            except SourceEditError:
                continue
            _agrees(text, new, args)
        new = LoopsVectorizedMap().build(text, ctx)
        assert "vectorized_map" in new, new


FIRST_TERM = {  # a sum over channels started by its first term, three ways (held-out round 3 c01)
    "if_index": '''
def f(a, b):
    n = a.shape[-1]
    for c in range(n):
        overlap = tf.reduce_sum(a[..., c] * b[..., c])
        score = overlap / (tf.reduce_sum(a[..., c]) + 1.0)
        if c == 0:
            total = score
        else:
            total = total + score
    return total / n
''',
    "conditional_expression": '''
def f(a, b):
    for c in range(a.shape[-1]):
        score = tf.reduce_sum(a[..., c] * b[..., c]) / (tf.reduce_sum(a[..., c]) + 1.0)
        total = score if c == 0 else total + score
    return total
''',
    "none_start": '''
def f(a, b):
    total = None
    for c in range(a.shape[-1]):
        score = tf.reduce_sum(a[..., c] * b[..., c]) / (tf.reduce_sum(a[..., c]) + 1.0)
        if total is None:
            total = score
        else:
            total += score
    return total
''',
}


@pytest.mark.parametrize("spelling", sorted(FIRST_TERM))
def test_a_sum_started_by_its_first_term_is_a_sum(spelling):
    from test_tune_fill import HEAD, _context

    text = HEAD + FIRST_TERM[spelling]
    g = tf.random.Generator.from_seed(6)
    args = (g.uniform([4, 8, 8, 3]), g.uniform([4, 8, 8, 3]))
    ctx = _context(text, args)
    lever = LoopsVectorizedMap()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "vectorized_map" in new and not _loops_left(new), new
    _agrees(text, new, args)


def test_an_every_row_but_one_mask_is_vectorised_as_a_gather(caplog):
    # Held-out round 4 (an NT-Xent loss): ``z[tf.range(n) != i]`` in a per-example loop made
    # pfor fall back to a while_loop (no converter for Where) and broke the batched rewrite.
    from tfperf.tune.screen import FALLBACK_NEEDLES

    text = '''import tensorflow as tf


def f(z):
    total = 0.0
    for i in range(z.shape[0]):
        others = z[tf.range(z.shape[0]) != i]
        total += tf.reduce_sum(tf.exp(tf.linalg.matvec(others, z[i])))
    return total
'''
    args = (tf.random.Generator.from_seed(8).normal([12, 5]),)
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("mask.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(_run(text, args))]
    new = LoopsVectorizedMap().build(text, ctx)
    assert "!=" not in new and "tf.gather(z, " in new, new
    with caplog.at_level("WARNING"):
        _agrees(text, new, args)
    said = [r.getMessage() for r in caplog.records]
    assert not [m for m in said if any(n in m for n in FALLBACK_NEEDLES)], said


def test_a_bincount_of_each_example_is_counted_per_row():
    # Held-out round 4 (c05): the batched form counted every example's values together (a
    # shape [] where the map gave [32]); one example's bincount is its row's, axis=-1.
    text = '''import tensorflow as tf


def f(x):
    return tf.map_fn(lambda img: tf.reduce_max(tf.math.bincount(img)), x)
'''
    args = (tf.random.stateless_uniform([6, 4, 5], seed=[1, 1], maxval=9, dtype=tf.int32),)
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("counts.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(_run(text, args))]
    new = LoopsBatched(axes=True).build(text, ctx)
    assert "axis=-1" in new and not _loops_left(new) and "map_fn" not in new, new
    _agrees(text, new, args)


def test_a_counter_under_an_if_is_a_sum_the_loop_levers_take():
    # Held-out round 4 (c11): ``if pred[k] == labels[k]: hits += 1`` was no loop of the model
    # (a Python if per element); as ``hits += 1 * tf.cast(cond, tf.int32)`` it is a sum.
    text = '''import tensorflow as tf


def f(pred, labels):
    hits = 0
    for k in range(pred.shape[0]):
        if pred[k] == labels[k]:
            hits += 1
    return hits
'''
    args = (tf.constant([i % 3 for i in range(20)]), tf.constant([i % 2 for i in range(20)]))
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("count.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(_run(text, args))]
    lever = LoopsVectorizedMap()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "if pred" not in new and "tf.vectorized_map(" in new, new
    assert int(_run(new, args)) == _run(text, args)  # a tensor here; tune converts it back


WINDOWS = {  # per-start window sums joined along the time axis (held-out round 5, c12)
    "comprehension_axis1": '''
def f(r):
    T = 5
    sums = [tf.reduce_sum(tf.slice(r, [0, k, 0], [tf.shape(r)[0], T, tf.shape(r)[-1]]),
                          axis=1, keepdims=True)
            for k in range(tf.shape(r)[1] - T)]
    return tf.concat(sums, axis=1)
''',
    "append_last_axis": '''
def f(r):
    out = []
    for k in range(tf.shape(r)[1] - 5):
        out.append(tf.reduce_sum(r[:, k:k + 5, :], axis=1, keepdims=True))
    return tf.concat(out, -2)
''',
}


@pytest.mark.parametrize("spelling", sorted(WINDOWS))
def test_values_joined_along_another_axis_are_vectorised(spelling):
    # Only tf.concat along axis 0 was read as the loop's join: windows joined along time
    # (axis 1 of each value) left the comprehension without a loop lever ("no loop of
    # independent iterations whose values leave it one per iteration").
    text = "import numpy as np\nimport tensorflow as tf\n\n\n" + WINDOWS[spelling]
    args = (tf.random.Generator.from_seed(12).normal([3, 40, 2]),)
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("windows.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(_run(text, args))]
    lever = LoopsVectorizedMap()
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert "vectorized_map" in new and not [k for k in _loops_left(new)
                                            if k in ("For", "While", "ListComp")], new
    _agrees(text, new, args)


def test_a_double_loop_writing_at_a_counter_is_one_loop_over_the_counter():
    # Held-out round 5 (c11, a GNN layer): `ta = ta.write(idx, x); idx += 1` inside two
    # loops was not a loop whose values leave it (the write is at the counter, not an index).
    text = "import numpy as np\nimport tensorflow as tf\n\n\n" + '''
def f(x, w):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    idx = 0
    for m in range(tf.shape(x)[1]):
        for k in range(tf.shape(x)[2]):
            y = tf.matmul(x[:, m, k, :], w) + tf.reduce_sum(x[:, m, :, :], axis=1)
            ta = ta.write(idx, y)
            idx += 1
    return tf.transpose(ta.stack(), [1, 0, 2])
'''
    g = tf.random.Generator.from_seed(11)
    args = (g.normal([2, 3, 4, 5]), g.normal([5, 5]))
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("counter.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(_run(text, args))]
    lever = LoopsVectorizedMap()
    assert lever.applies(ctx) is None, lever.applies(ctx)
    new = lever.build(text, ctx)
    assert "vectorized_map" in new and "idx // (tf.shape(x)[2])" in new and not [
        k for k in _loops_left(new) if k in ("For", "While")], new
    _agrees(text, new, args)



def test_a_per_device_tower_loop_is_not_batched():
    """A TF1 multi-device tower loop (each iteration under its own ``tf.device``) is "per
    device" in the loop model: tune's loop levers (which start from ``function_loops``) get
    no such loop; its twin on one device is one of them. (The levers leave a ``with`` body
    alone anyway; this keeps a later lever that enters ``with`` from batching towers.)"""
    from tfperf.lint.semantic import Context
    from tfperf.tune.iterations import function_loops

    tower = ("import tensorflow as tf\n\n\ndef f(x, w):\n    outs = []\n"
             "    for i in range(x.shape[0]):\n        with tf.device({device}):\n"
             "            outs.append(tf.linalg.matvec(w, x[i]))\n    return tf.stack(outs)\n")
    for device, kept in (("'/gpu:%d' % i", 0), ("f'/gpu:{i}'", 0), ("'/cpu:0'", 1)):
        text = tower.format(device=device)
        tree = ast.parse(text)
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
        assert len(function_loops(Context(tree, text, "t.py"), fn)) == kept, device


BROADCAST = {  # one example's c[i] (rank 2) times u[i] (rank 1): u broadcasts per example
    "binop_range": '''
def f(c, u):
    return tf.stack([tf.reduce_sum(c[i] * u[i], axis=-1) for i in range(c.shape[0])])
''',
    "multiply_start": '''
def f(c, u):
    return tf.stack([tf.reduce_sum(tf.multiply(c[i], u[i]), axis=-1)
                     for i in range(0, 12)], axis=0)
''',
    "zip_items": '''
def f(c, u):
    out = []
    for ci, ui in zip(tf.unstack(c), tf.unstack(u)):
        out.append(tf.reduce_sum(ui * ci, axis=-1))
    return tf.stack(out)
''',
}


@pytest.mark.parametrize("spelling", sorted(BROADCAST))
def test_operands_of_unequal_example_ranks_line_up_after_the_batch_axis(spelling):
    # Held-out round 10's c04m: batched as c * u, u's batch axis met c's candidate axis
    # ("Incompatible shapes: [128,5,256] vs. [128,256]"); u's example axes go after the batch.
    from test_tune_fill import HEAD, _context

    text = HEAD + BROADCAST[spelling]
    g = tf.random.Generator.from_seed(5)
    args = (g.normal([12, 5, 8]), g.normal([12, 8]))
    new = LoopsBatched(True).build(text, _context(text, args))
    assert "[:, None]" in new and not _loops_left(new), new
    _agrees(text, new, args)


def test_operands_of_equal_example_ranks_are_not_given_an_axis():
    # The VALID twin: c[i] * u[i] of equal ranks broadcast as the batch does already.
    from test_tune_fill import HEAD, _context

    text = HEAD + BROADCAST["binop_range"]
    g = tf.random.Generator.from_seed(6)
    args = (g.normal([12, 8]), g.normal([12, 8]))
    new = LoopsBatched(True).build(text, _context(text, args))
    assert "None" not in new and not _loops_left(new), new
    _agrees(text, new, args)


MASKED = {  # one row's reduction of its masked elements, spelled as users do
    "map_fn_tuple_min": '''
def f(d, m):
    return tf.map_fn(lambda x: tf.reduce_min(tf.boolean_mask(x[0], x[1])), (d, m), tf.float32)
''',
    "map_fn_tuple_max_kw": '''
def f(d, m):
    return tf.map_fn(lambda x: tf.reduce_max(tf.boolean_mask(x[0], x[1])), elems=(d, m),
                     fn_output_signature=tf.float32)
''',
    "loop_sum": '''
def f(d, m):
    out = []
    for i in range(d.shape[0]):
        out.append(tf.reduce_sum(tf.boolean_mask(d[i], m[i])))
    return tf.stack(out)
''',
}


@pytest.mark.parametrize("spelling", sorted(MASKED))
def test_a_masked_reduction_of_each_row_is_one_where_and_an_axis_reduction(spelling):
    # Held-out round 10's c01 (batch-hard triplet loss: each row's closest negative); a row
    # whose mask is empty gets the empty reduction's value (inf, -inf, 0) both ways.
    from test_tune_fill import HEAD, _context

    text = HEAD + MASKED[spelling]
    g = tf.random.Generator.from_seed(7)
    m = g.uniform([10, 6]) < 0.5
    m = tf.concat([tf.zeros([1, 6], tf.bool), m[1:]], axis=0)  # row 0: nothing selected
    args = (g.normal([10, 6]), m)
    new = LoopsBatched(True).build(text, _context(text, args))
    assert ".where(" in new and "boolean_mask" not in new and not _loops_left(new), new
    assert "map_fn" not in new
    _agrees(text, new, args)


def test_a_masked_row_that_is_not_reduced_is_not_batched():
    # The VALID twin: each row's selected elements, stacked (ragged rows), are not one
    # reduction: no where() rewrite; the map stays.
    from test_tune_fill import HEAD, _context

    text = HEAD + '''
def f(d, m):
    return tf.map_fn(lambda x: tf.reduce_min(tf.boolean_mask(x[0], x[1]) * 2.0), (d, m),
                     tf.float32)
'''
    args = (tf.ones([4, 3]), tf.ones([4, 3], tf.bool))
    with pytest.raises(SourceEditError):
        LoopsBatched(True).build(text, _context(text, args))


# Stop 40 (held-out round 10's c11, wavefrontify): an index that sets a slice's begin or a
# pad was batched as a float range in the begin list (it raised when run: a lost candidate
# at best). Its VALID twin: the index as a value (a per-example weight) is still batched.
SHIFTED_ROWS = """
import tensorflow as tf


def f(t):
    n, w = t.shape[0], t.shape[1]
    rows = []
    for i in range(n):
        row = tf.slice(t, [i, 0], [1, w])
        rows.append(tf.pad(row, [[0, 0], [n - 1 - i, i]]))
    return tf.concat(rows, 0)
"""
INDEX_AS_A_WEIGHT = """
import tensorflow as tf


def f(t):
    out = []
    for i in range(t.shape[0]):
        out.append(t[i] * tf.cast(i, t.dtype))
    return tf.stack(out)
"""


def _context(text: str, args: tuple) -> LeverContext:
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("m.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(_run(text, args))]
    return ctx


def test_an_index_that_sets_a_slices_begin_or_a_pad_is_not_batched_as_a_value():
    args = (tf.reshape(tf.range(20, dtype=tf.float32), [4, 5]),)
    ctx = _context(SHIFTED_ROWS, args)
    with pytest.raises(SourceEditError):
        LoopsBatched(True).build(SHIFTED_ROWS, ctx)


def test_valid_the_index_as_a_value_is_still_batched():
    args = (tf.reshape(tf.range(20, dtype=tf.float32), [4, 5]),)
    ctx = _context(INDEX_AS_A_WEIGHT, args)
    new = LoopsBatched(True).build(INDEX_AS_A_WEIGHT, ctx)
    assert not _loops_left(new), new
    _agrees(INDEX_AS_A_WEIGHT, new, args)


FEWER_ROWS = {  # a loop whose count is not the row count of the tensor it indexes
    "param_range": "def f(x, k):\n    out = []\n    for i in range(k):\n"
                   "        out.append(tf.reduce_max(x[i]))\n    return tf.stack(out)\n",
    "param_range_0": "def f(x, k):\n    out = []\n    for i in range(0, k):\n"
                     "        out.append(tf.reduce_max(x[i]))\n    return tf.stack(out)\n",
    "constant_range": "def f(x, k):\n    out = []\n    for i in range(3):\n"
                      "        out.append(x[i] * 2.0)\n    return tf.stack(out)\n",
    "constant_range_columns": "def f(x, k):\n    out = []\n    for i in range(0, 3):\n"
                              "        out.append(tf.reduce_sum(x[i, 1:]))\n"
                              "    return tf.stack(out)\n",
    "constant_range_axis_1": "def f(x, k):\n    return tf.stack([tf.reduce_sum(x[:, i])"
                             " for i in range(2)])\n",
}


@pytest.mark.parametrize("spelling", sorted(FEWER_ROWS))
def test_a_count_below_the_row_count_batches_only_those_rows(spelling):
    # Review 40: range(k) over a tensor of more rows was batched over every row (tune picked
    # it where the measured k was the row count); the batch is the first k rows.
    from test_tune_fill import HEAD, _context

    text = HEAD + FEWER_ROWS[spelling]
    x = tf.random.Generator.from_seed(9).normal([8, 5])
    new = LoopsBatched(True).build(text, _context(text, (x, 8)))
    assert not _loops_left(new), new
    for k in (8, 3, 1):
        if spelling.startswith("param") or k == 8:
            _agrees(text, new, (x, k))
    _agrees(text, new, (x[:6], 6))


@pytest.mark.parametrize("stop", ["x.shape[0]", "len(x)", "tf.shape(x)[0]", "n"])
def test_a_count_that_is_the_row_count_is_not_sliced(stop):
    # The VALID twin: a count that is x's row count (n bound once to it) reads x whole.
    from test_tune_fill import HEAD, _context

    text = HEAD + ("def f(x):\n    n = x.shape[0]\n    out = []\n"
                   f"    for i in range({stop}):\n        out.append(tf.reduce_max(x[i]))\n"
                   "    return tf.stack(out)\n")
    x = tf.random.Generator.from_seed(10).normal([6, 4])
    new = LoopsBatched(True).build(text, _context(text, (x,)))
    assert "x[:" not in new and not _loops_left(new), new
    _agrees(text, new, (x,))
    _agrees(text, new, (x[:2],))


def test_an_axis_parameter_of_none_reduces_every_axis_of_each_example():
    # Review 40: a per-example axis the text does not fix runs through _tfperf_past_batch,
    # which raised TypeError on None (one example's every axis); it is every axis past the
    # batch axis.
    from test_tune_fill import HEAD, _context

    text = HEAD + ("def f(s, ax):\n    out = []\n    for i in range(s.shape[0]):\n"
                   "        out.append(tf.reduce_sum(s[i], axis=ax))\n    return tf.stack(out)\n")
    s = tf.random.Generator.from_seed(11).normal([4, 3, 5])
    new = LoopsBatched(True).build(text, _context(text, (s, 1)))
    assert "_tfperf_past_batch(ax, len(s.shape))" in new and not _loops_left(new), new
    for ax in (0, 1, -1, None, [0, 1]):
        _agrees(text, new, (s, ax))


SCALAR_PER_EXAMPLE = {
    # one example's whole reduction times the index: keepdims made (n, 1) * (n,) an (n, n)
    "reduction_times_index": ("def f(x, t):\n    out = []\n    for i in range(x.shape[0]):\n"
                              "        out.append(tf.reduce_sum(x[i]) * tf.cast(i, tf.float32))"
                              "\n    return tf.stack(out)\n"),
    "reduction_times_rank1": ("def f(x, t):\n    out = []\n    for i in range(x.shape[0]):\n"
                              "        out.append(tf.reduce_max(x[i]) - t[i])\n"
                              "    return tf.stack(out)\n"),
    # a row against its own threshold, then the first True index (the true-index form)
    "row_threshold_true_index": ("def f(x, t):\n    out = []\n"
                                 "    for i in range(x.shape[0]):\n"
                                 "        out.append(tf.reduce_min(tf.where(x[i] > t[i])[:, 0]))"
                                 "\n    return tf.stack(out)\n"),
}


@pytest.mark.parametrize("spelling", sorted(SCALAR_PER_EXAMPLE))
def test_one_scalar_per_example_lines_up_with_the_batch(spelling):
    # Review 40: a per-example scalar (the index, t[i] of a rank-1 t) beside one example's
    # reduction or row was lined up against the wrong axis (an (n, n) result; each row
    # compared with every threshold).
    from test_tune_fill import HEAD, _context

    text = HEAD + SCALAR_PER_EXAMPLE[spelling]
    g = tf.random.Generator.from_seed(12)
    args = (g.normal([6, 9]), g.normal([6]))
    new = LoopsBatched(True).build(text, _context(text, args))
    assert not _loops_left(new), new
    _agrees(text, new, args)
    _agrees(text, new, (args[0][:3], tf.constant([9.0, -9.0, 0.0])))


def test_valid_a_collector_appended_for_some_examples_is_not_batched():
    # Review 40: hi.append under `if i % 2 == 0` (hi made with lo in one tuple assignment)
    # was written as an `if` on the batch of indices; a conditional body is left as written.
    from test_tune_fill import HEAD, _context

    text = HEAD + ("def f(x):\n    lo, hi = [], []\n    for i in range(x.shape[0]):\n"
                   "        lo.append(tf.reduce_min(x[i]))\n        if i % 2 == 0:\n"
                   "            hi.append(tf.reduce_max(x[i]))\n"
                   "    return tf.stack(lo), tf.stack(hi)\n")
    x = tf.random.Generator.from_seed(13).normal([5, 3])
    try:
        new = LoopsBatched(True).build(text, _context(text, (x,)))
    except SourceEditError:
        return
    assert "if i % 2 == 0" in new, new  # the loop, as written
    for rows in (5, 1):
        _agrees(text, new, (x[:rows],))
