"""A product with a diagonal matrix (tf.linalg.diag(v) @ m, m @ tf.linalg.diag(v)) becomes the
broadcast product it is, however it is spelled (held-out round 2: a graph normalisation
D A D with two batched matmuls, 0.05x of the broadcast; no lever read it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from test_tune_fill import HEAD, _context  # noqa: E402
from test_tune_loop_model import BY_NAME, _agrees  # noqa: E402

from tfperf.tune.levers.diagonal import DiagonalProduct  # noqa: E402


def _spelling(spelling: str) -> tuple[str, tuple]:
    comp = BY_NAME["diagonal_scaling"]
    text = HEAD + f"SIZE = {comp.small!r}\n\n\n" + comp.spellings[spelling]
    ns = {"SIZE": dict(comp.small), "tf": tf}
    exec("def make():\n" + "\n".join("    " + r for r in comp.inputs.splitlines()), ns)
    return text, ns["make"]()


@pytest.mark.parametrize("spelling", sorted(BY_NAME["diagonal_scaling"].spellings))
def test_every_spelling_becomes_a_broadcast_product(spelling):
    text, args = _spelling(spelling)
    ctx = _context(text, args)
    lever = DiagonalProduct()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "linalg.diag(" not in new and "@" not in new and "matmul" not in new, new
    _agrees(text, new, args)


def test_a_diagonal_read_as_a_matrix_is_left_alone():
    text = HEAD + '''
def f(c):
    d = tf.linalg.diag(tf.linalg.diag_part(c))
    return d @ c + d
'''
    g = tf.random.Generator.from_seed(1)
    args = (g.normal([4, 4]),)
    assert DiagonalProduct().applies(_context(text, args)) is not None


def test_a_product_of_two_diagonals_keeps_its_matrices():
    text = HEAD + '''
def f(v, m):
    d = tf.linalg.diag(v)
    return (d @ d) @ m
'''
    g = tf.random.Generator.from_seed(1)
    args = (g.normal([5]), g.normal([5, 3]))
    assert DiagonalProduct().applies(_context(text, args)) is not None
    text = text.replace("(d @ d) @ m", "(d @ d) @ (tf.linalg.diag(v) @ m)")
    new = DiagonalProduct().build(text, _context(text, args))
    assert "d = tf.linalg.diag(v)" in new, new
    _agrees(text, new, args)


def test_tune_picks_the_broadcast_over_the_diagonal_product(user_module):
    # At 16 x 256 x 256 the products multiply through 255 zeros per useful term. Eagerly the
    # broadcast's three element-wise passes are about as fast as two MKL matmuls (0.9-1.2x
    # here); under a compile rung they fuse into one pass: 11-16x, far beyond any noise.
    comp = BY_NAME["diagonal_scaling"]
    mod = user_module(HEAD + comp.spellings["named_chain"])
    g = tf.random.Generator.from_seed(2)
    x = g.normal([16, 256, 512])
    args = (tf.matmul(x, x, transpose_b=True) / 512.0,)
    from tfperf.tune import tune

    result = tune(mod.f, args, budget=20)
    lever = "diagonal matmul→broadcast product"
    # Exact candidates: a reduced-precision one is judged by float32's tolerance (it opts
    # in with reduced_precision=True) and disagrees on a machine whose facts offer bfloat16.
    mine = [c for c in result.candidates if lever in c.levers
            and not any(lv.endswith(" casts") for lv in c.levers)]
    assert mine and all(c.equivalent is not False for c in mine), result.table()
    assert max(c.speedup or 0.0 for c in mine) > 3, result.table()
    assert result.best is not None and lever in result.best.levers, result.table()
