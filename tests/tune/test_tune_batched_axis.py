"""The batched loop lever where the loop's index is not the first axis (issue 26's "not
built": `samples[:, j, :]` was taken by `vectorized_map` only; held-out rounds 4 and 5's hands
run such bodies once on the whole tensor, the indexed axis kept): the indexed axis becomes the
batch axis, moved first. Checked against the loop itself on its inputs (no timing)."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

from rewrites import run_f  # noqa: E402  (tests/tune/rewrites.py)

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.device import DeviceFacts  # noqa: E402
from tfperf.tune.lever import LeverContext  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n\n"

SPELLINGS = {
    "middle_axis_append_stack": '''
def f(x, w):
    out = []
    for j in range(x.shape[1]):
        out.append(tf.nn.relu(tf.matmul(x[:, j, :], w)))
    return tf.stack(out)
''',
    "last_axis_comprehension": '''
def f(x, w):
    return tf.stack([tf.reduce_sum(x[:, :, t] * 2.0, axis=1) for t in range(x.shape[2])])
''',
    "middle_axis_running_sum": '''
def f(x, w):
    total = tf.zeros([x.shape[0], w.shape[1]])
    for j in range(x.shape[1]):
        total += tf.matmul(x[:, j], w)
    return total
''',
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_an_index_on_a_later_axis_is_batched_with_that_axis_first(spelling):
    text = HEAD + SPELLINGS[spelling]
    g = tf.random.Generator.from_seed(7)
    args = (g.normal([5, 9, 4]), g.normal([4, 3]))
    target = types.SimpleNamespace(source=text, name="f", args=args, kwargs={},
                                   path=Path("axis.py"), inputs=None)
    ctx = LeverContext(target, DeviceFacts())  # type: ignore[arg-type]
    ctx.returns = [snapshot(run_f(text, args))]
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    fn = next(n for n in ast.parse(new).body if isinstance(n, ast.FunctionDef))
    assert not [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.ListComp))], new
    eq = compare_outputs(snapshot(run_f(text, args)), snapshot(run_f(new, args)))
    assert eq.equivalent is True, f"{eq.reason}\n{new}"
