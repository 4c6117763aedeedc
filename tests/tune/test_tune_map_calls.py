"""``list(map(lambda n: body, it))`` is a loop to the loop levers (held-out round 13's c07:
one ``tf.pow`` per column spelled as a map call; the comprehension of the same body was
batched, the map was "no loop"). The pass (tune/map_calls.py) is checked to give the same
values as the map; the lever batches it along the column axis; twins are left alone."""

from __future__ import annotations

import ast

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import lever_context, loops_left, run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402
from tfperf.tune.map_calls import maps_as_comprehensions  # noqa: E402
from tfperf.tune.source import SourceEditError  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

# Maps that are loops: each becomes a comprehension with the same values.
MAPS = {
    "per_column_pow_transposed": '''
def f(x, w):
    size = int(x.get_shape()[1])
    pows = list(map(lambda n: tf.pow(x[:, n], n + 1), range(size)))
    return tf.transpose(tf.stack(pows))
''',
    "tuple_of_rows": '''
def f(x, w):
    return tf.stack(tuple(map(lambda r: tf.reduce_sum(r * w[:, 0]), tf.unstack(x))))
''',
    "two_iterables_zip": '''
def f(x, w):
    rows = tf.unstack(x)
    return tf.stack(list(map(lambda r, c: r * c, rows, tf.unstack(w, axis=1))))
''',
    "nested_map_in_lambda": '''
def f(x, w):
    out = list(map(lambda i: tf.stack(list(map(lambda j: x[i, j] * 2.0, range(3)))), range(4)))
    return tf.stack(out)
''',
    "inner_lambda_not_of_the_parameter": '''
def f(x, w):
    return tf.stack(list(map(lambda n: tf.map_fn(lambda v: v * 2.0, x[:, n]), range(3))))
''',
    "conditional_body": '''
def f(x, w):
    return tf.stack(list(map(lambda n: x[:, n] if n % 2 else -x[:, n], range(x.shape[1]))))
''',
}

# Left alone: not the builtin, not eager, not a plain lambda.
TWINS = {
    "lazy_map": '''
def f(x, w):
    return tf.stack([v for v in map(lambda n: x[:, n] * 2.0, range(3))])
''',
    "named_function": '''
def f(x, w):
    return tf.stack(list(map(tf.nn.relu, tf.unstack(x))))
''',
    "default_argument": '''
def f(x, w):
    return tf.stack(list(map(lambda n, k=2.0: x[:, n] * k, range(3))))
''',
    "starred_iterables": '''
def f(x, w):
    return tf.stack(list(map(lambda a, b: a * b, *[tf.unstack(x), tf.unstack(x)])))
''',
    "walrus_in_body": '''
def f(x, w):
    y = 0.0
    out = list(map(lambda n: (y := x[:, n] * 2.0), range(3)))
    return tf.stack(out) + y
''',
    "yield_in_lambda": '''
def f(x, w):
    return list(map(lambda c: (yield c), tf.unstack(x)))
''',
    # Review 43: a closure or a lazy generator of the parameter (each call's own value;
    # a comprehension's closures all read its last).
    "closure_of_the_parameter": '''
def f(x, w):
    fs = list(map(lambda n: (lambda: x[:, n] * 2.0), range(x.shape[1])))
    return tf.stack([g() for g in fs], axis=1)
''',
    "generator_of_the_parameter": '''
def f(x, w):
    gs = list(map(lambda n: (x[:, n] * k for k in range(2)), range(x.shape[1])))
    return tf.stack([tf.add_n(list(g)) for g in gs], axis=1)
''',
    "keyword_to_list": '''
def f(x, w):
    return list(map(lambda n: x[:, n], range(3)), **{})
''',
}

SHADOWED = '''
def map(g, xs):
    return [g(v) + 1.0 for v in xs]


def f(x, w):
    return tf.stack(list(map(lambda n: x[:, n], range(3))))
'''


def _args() -> tuple:
    g = tf.random.Generator.from_seed(3)
    return (tf.abs(g.normal([4, 5])) + 0.5, g.normal([5, 4]))


@pytest.mark.parametrize("spelling", sorted(MAPS))
def test_an_eager_map_of_a_lambda_is_the_comprehension_with_the_same_values(spelling):
    text = HEAD + MAPS[spelling]
    new = maps_as_comprehensions(text, "f")
    fn = next(n for n in ast.parse(new).body if isinstance(n, ast.FunctionDef))
    assert not [n for n in ast.walk(fn) if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name) and n.func.id == "map"], new
    args = _args()
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


@pytest.mark.parametrize("spelling", sorted(TWINS))
def test_a_map_that_is_not_that_loop_is_left_alone(spelling):
    with pytest.raises(SourceEditError):
        maps_as_comprehensions(HEAD + TWINS[spelling], "f")


def test_a_map_the_module_defines_is_not_the_builtin():
    with pytest.raises(SourceEditError, match="binds map"):
        maps_as_comprehensions(HEAD + SHADOWED, "f")


def test_the_batched_lever_takes_the_per_column_map_along_its_axis():
    text = HEAD + MAPS["per_column_pow_transposed"]
    args = _args()
    ctx = lever_context(text, args, "map_calls.py")
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert loops_left(new) == 0, new
    assert "map(" not in new.split("def f", 1)[1], new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
    # A second input of another width: the batched form reads the width, not a constant.
    wide = (tf.abs(tf.random.Generator.from_seed(4).normal([3, 7])) + 0.5, args[1])
    eq = compare_outputs(snapshot(run_f(text, wide)), snapshot(run_f(new, wide)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"


def test_the_lever_leaves_a_map_of_a_defaulted_lambda_to_the_others():
    text = HEAD + TWINS["default_argument"]
    ctx = lever_context(text, _args(), "map_calls.py")
    assert LoopsBatched(True).applies(ctx) is not None


def test_a_wrong_batched_form_is_rejected_by_the_check():
    """The planted mistake a batched form could make (the power without the column's +1)
    disagrees with the map: the check the search runs sees it."""
    text = HEAD + MAPS["per_column_pow_transposed"]
    wrong = HEAD + '''
def f(x, w):
    return tf.pow(x, tf.range(x.shape[1], dtype=x.dtype))
'''
    args = _args()
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(wrong, args)))
    assert eq.equivalent is False
