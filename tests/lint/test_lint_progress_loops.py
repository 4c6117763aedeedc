"""Loops through a tqdm bar (``tqdm(zip(ds, names))``, ``enumerate(tqdm(ds))``) are seen as
the loops they wrap, by the lint loop helpers and by the project's loop model (held-out round
14, F010); a function merely named ``tqdm`` that is not tqdm's is not unwrapped (twin)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tfperf.analysis.loops import domain_of
from tfperf.lint.analysis.loops import iterates_dataset, loop_iterables
from tfperf.lint.semantic import Context

HEAD = ("import tensorflow as tf\n{imp}\nds = tf.data.Dataset.range(8).batch(2)\n"
        "names = ['a', 'b']\n")


def _loop(imp: str, loop: str) -> tuple[Context, ast.For]:
    source = HEAD.format(imp=imp) + textwrap.dedent(loop)
    ctx = Context(ast.parse(source), source, "t.py")
    node = next(n for n in ast.walk(ctx.tree) if type(n) is ast.For)
    return ctx, node


@pytest.mark.parametrize(("imp", "loop"), [
    ("from tqdm import tqdm", "for x, f in tqdm(zip(ds, names), total=2):\n    pass\n"),
    ("from tqdm.auto import tqdm", "for i, x in enumerate(tqdm(ds)):\n    pass\n"),
    ("import tqdm", "for x in tqdm.tqdm(ds, desc='eval'):\n    pass\n"),
    ("from tqdm import tqdm", "for i, (x, f) in enumerate(tqdm(zip(ds, names))):\n    pass\n"),
])
def test_a_dataset_loop_through_a_progress_bar_is_a_dataset_loop(imp: str, loop: str) -> None:
    ctx, node = _loop(imp, loop)
    assert iterates_dataset(ctx, node)
    assert any(type(it) is ast.Name and it.id == "ds" for it in loop_iterables(node, ctx))


def test_a_function_named_tqdm_of_the_project_is_not_unwrapped() -> None:
    ctx, node = _loop("def tqdm(it):\n    return [len(x) for x in it]",
                      "for x in tqdm(ds):\n    pass\n")
    assert not iterates_dataset(ctx, node)


def test_the_loop_model_sees_the_zip_inside_the_bar() -> None:
    ctx, node = _loop("from tqdm import tqdm",
                      "for x, f in tqdm(zip(ds, names), total=2):\n    pass\n")
    bare_ctx, bare = _loop("", "for x, f in zip(ds, names):\n    pass\n")
    wrapped, plain = domain_of(ctx, node.target, node.iter), \
        domain_of(bare_ctx, bare.target, bare.iter)
    assert (wrapped.kind, wrapped.items, len(wrapped.parts)) \
        == (plain.kind, plain.items, len(plain.parts)) == (plain.kind, ("x", "f"), 2)
