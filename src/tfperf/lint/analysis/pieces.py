"""A piece of data that a loop hands out per iteration and that is already a batch: a
batch of the ``tf.data`` dataset the loop walks (``for x, y in val_ds``), or a slice of
one array cut with bounds the loop picks (``patches[start:stop]``). A call that pays a
fixed set-up per call (Keras ``predict``) pays it once per piece; one call over the whole
dataset or array, or a direct model call per piece, does not."""

from __future__ import annotations

import ast
from typing import Any

from tfperf.lint.analysis.loops import loop_iterables, loop_targets, progress_wrapped, range_args
from tfperf.lint.semantic import Context
from tfperf.lint.semantic.tf_api import DATASET_NAME

_DEPTH = 4
# Iterating these yields a dataset's batches as NumPy (`ds.as_numpy_iterator()`).
_NUMPY_ITERATORS = frozenset({"as_numpy_iterator"})
_TFDS_AS_NUMPY = frozenset({"tensorflow_datasets.as_numpy"})


def _made_by_dataset_factory(ctx: Context, expr: Any) -> bool:
    """``expr`` is a name bound to a call of a function named as making a dataset
    (``test_set = make_test_dataset(path)``): the project's own pipeline factory, whose
    body this module does not see (``is_dataset``'s naming guess, for a call)."""
    if type(expr) is ast.Name:
        b = ctx.binding(expr)
        if b is None or b.kind != "assign" or type(b.value) is not ast.Call:
            return False
        expr = b.value
    if type(expr) is not ast.Call:
        return False
    f = expr.func
    name = f.id if type(f) is ast.Name else f.attr if type(f) is ast.Attribute else ""
    return bool(name) and bool(DATASET_NAME.search(name))


def walks_dataset(ctx: Context, it: Any) -> bool:
    """``it`` (one iterable of a loop) yields a ``tf.data`` dataset's elements: a dataset,
    its NumPy iterator, or a project factory's dataset."""
    if type(it) is ast.Call:
        f = it.func
        if type(f) is ast.Attribute and f.attr in _NUMPY_ITERATORS:
            return walks_dataset(ctx, f.value)
        if ctx.call_qualname(it) in _TFDS_AS_NUMPY and it.args:
            return walks_dataset(ctx, it.args[0])
    return ctx.is_dataset(it) or _made_by_dataset_factory(ctx, it)


def dataset_batch(ctx: Context, arg: Any, loop: Any, depth: int = 0) -> bool:
    """``arg`` is (a part of) the element one iteration of ``loop`` takes from a dataset
    it walks: a name the loop's target binds (``for x, y in ds``, ``enumerate(ds)``,
    ``zip(ds, names)``, a ``tqdm`` bar), a field of it (``batch["image"]``, ``batch[0]``),
    or a name assigned from one in the loop."""
    if depth > _DEPTH or type(loop) not in (ast.For, ast.AsyncFor):
        return False
    while type(arg) in (ast.Subscript, ast.Attribute):
        arg = arg.value
    if type(arg) is not ast.Name:
        return False
    b = ctx.binding(arg)
    if b is not None and b.kind == "assign" and b.value is not None \
            and any(p is loop for p in ctx.ancestors(b.value)):
        return dataset_batch(ctx, b.value, loop, depth + 1)
    return arg.id in _element_names(ctx, loop.iter, loop.target)


def peeks(ctx: Context, loop: Any) -> bool:
    """``loop`` walks the first few batches of a dataset (``for x, y in ds.take(num)``):
    a look at some data (a plot of three predictions), not a pass over it."""
    return any(type(it) is ast.Call and type(it.func) is ast.Attribute
               and it.func.attr == "take" for it in loop_iterables(loop, ctx))


def _element_names(ctx: Context, it: Any, target: Any, depth: int = 0) -> set[str]:
    """The names ``target`` binds to a dataset's element when iterating ``it``, through
    ``enumerate`` (its second slot), ``zip`` (slot by slot) and progress bars."""
    if depth > _DEPTH:
        return set()
    inner = progress_wrapped(ctx, it)
    if inner is not None:
        return _element_names(ctx, inner, target, depth + 1)
    if type(it) is ast.Call and type(it.func) is ast.Name and it.args \
            and it.func.id in ("enumerate", "zip"):
        if type(target) is not ast.Tuple:
            return set()
        if it.func.id == "enumerate":
            if len(target.elts) != 2:
                return set()
            return _element_names(ctx, it.args[0], target.elts[1], depth + 1)
        if len(target.elts) != len(it.args):
            return set()
        return {n for a, t in zip(it.args, target.elts, strict=True)
                for n in _element_names(ctx, a, t, depth + 1)}
    if not walks_dataset(ctx, it):
        return set()
    return {n.id for n in ast.walk(target) if type(n) is ast.Name}


def _bound_in(ctx: Context, name: ast.Name, loop: Any) -> bool:
    """``name`` is bound by ``loop``'s target or assigned inside it."""
    if name.id in loop_targets(loop):
        return True
    b = ctx.binding(name)
    return b is not None and b.kind == "assign" and b.value is not None \
        and any(p is loop for p in ctx.ancestors(b.value))


def _range_walk(ctx: Context, it: Any) -> bool:
    """``it`` is a ``range`` (Python 2's ``xrange`` too), also inside a progress bar
    (``tqdm(xrange(0, n, 500))``): fixed-size chunks, the caller's own batching."""
    it = progress_wrapped(ctx, it) or it
    if type(it) is ast.Call and type(it.func) is ast.Name and it.func.id == "tqdm" \
            and it.args and ctx.binding(it.func) is None:
        it = it.args[0]  # `from tqdm import *`: the bar by its name
    if range_args(ctx, it) is not None:
        return True
    f = getattr(it, "func", None)
    return type(f) is ast.Name and f.id == "xrange" and ctx.binding(f) is None


def array_slice(ctx: Context, arg: Any, loop: Any, depth: int = 0) -> bool:
    """``arg`` is a slice with bounds ``loop`` picks (``x[start:stop]``, ``x[i:i + n]``)
    of an array the loop does not rebind: one piece of data that exists whole before the
    loop. ``x[i:i + 1]`` (one example) is TFP110's other form; a slice of the loop's own
    element is not this. Chunks of a fixed size cut by a ``range`` (``for i in range(0, n,
    64)``) are the caller's own batching, left alone; the bounds must come from what the
    loop walks (segments, boundaries: ``for lab, start, stop in segments``)."""
    if depth > _DEPTH or type(loop) not in (ast.For, ast.AsyncFor) \
            or _range_walk(ctx, loop.iter):
        return False
    if type(arg) is ast.Name:
        b = ctx.binding(arg)
        if b is not None and b.kind == "assign" and b.value is not None \
                and any(p is loop for p in ctx.ancestors(b.value)):
            return array_slice(ctx, b.value, loop, depth + 1)
        return False
    if type(arg) is not ast.Subscript:
        return False
    s = arg.slice
    first = s.elts[0] if type(s) is ast.Tuple and s.elts else s
    if type(first) is not ast.Slice or first.step is not None:
        return False
    bounds = [n for part in (first.lower, first.upper) if part is not None
              for n in ast.walk(part) if type(n) is ast.Name]
    if not bounds or not any(_bound_in(ctx, n, loop) for n in bounds):
        return False
    if type(first.upper) is ast.BinOp and type(first.upper.right) is ast.Constant \
            and first.upper.right.value == 1:
        return False  # `x[i:i + 1]`: one example
    base = arg.value
    while type(base) in (ast.Subscript, ast.Attribute):
        base = base.value
    return type(base) is ast.Name and not _bound_in(ctx, base, loop)
