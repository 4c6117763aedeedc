"""The first ``n`` of a full sort as ``tf.math.top_k`` of ``n`` (held-out round 11's c12: a
nearest-neighbour accuracy kept ``tf.argsort(d, axis=1)[:, :n]``, sorting every row of a
distance matrix to read its first ``n``).

Why it is exact, not approximate: ``tf.argsort`` and ``tf.sort`` *are* ``top_k`` of every
element along the axis (TensorFlow's ``sort_ops``: descending is ``top_k(values, size)``,
ascending the same of a key that reverses the order: ``-values`` for floats, ``-values - 1``
for signed integers, ``max - values`` for unsigned ones), and ``top_k`` returns its ``k``
sorted, equal values lower index first. So the first ``n`` of the full sort are ``top_k`` of
``n`` of the same key, ties in the same order (lower index first, for argsort's ascending and
descending alike); the helper computes that key as the sort does. A NaN's place may differ
between the full sort and ``top_k`` of ``n`` (the kernel picks another algorithm for a small
``k``), so for a float dtype the helper asks first whether the values hold a NaN
(``tf.cond``: eager, traced and XLA alike) and sorts in full where they do.

Read from the code, whatever the spelling: a subscript of a ``tf.argsort``/``tf.sort`` call
(``tf.math.*``, imported names; the direction a literal) that keeps every position but one
(``:``, one ``...``) and takes the first ``n`` at that one (``[:n]``, ``[0:n]``; after a
reversal at the same position, ``[::-1][:n]``: ``top_k`` of the reversed values, whose ties
come highest index first as the reversed sort's, indices mapped back), directly or
through a name bound once to the sort and read once, in that subscript, where ``n`` is known
when the sort runs. The sort's axis and the sliced position are compared when the code runs
(the rank is known then): where they differ, or the rank is not known, the helper sorts and
slices as written.
"""

from __future__ import annotations

import ast
from typing import Any

from tfperf.tune.lever import Lever, LeverContext, RewriteLever
from tfperf.tune.source import SourceEditError, ensure_tf, find_function, parse, replace_nodes

HELPER = "_tfperf_sorted_prefix"
SORTS = {"tensorflow.argsort": True, "tensorflow.math.argsort": True,
         "tensorflow.sort": False, "tensorflow.math.sort": False}  # qualname -> indices?

#: Written into the user's module (``TF`` -> its TensorFlow alias); the patch shows it.
HELPER_SOURCE = '''

def _tfperf_sorted_prefix(values, n, axis, at, descending, indices, reverse=False):
    """tfperf tune: TF.argsort (TF.sort if not indices) along axis, its first n at position
    at (reversed first if reverse), as TF.math.top_k of n: the sort is top_k of every
    element, equal ones lower index first, so its first n are top_k's n (reversed: top_k of
    the reversed values, whose ties come highest index first, as the reversed sort's)."""
    values = TF.convert_to_tensor(values)
    rank = values.shape.rank

    def as_written():
        kind = TF.argsort if indices else TF.sort
        full = kind(values, axis=axis, direction="DESCENDING" if descending else "ASCENDING")
        if at >= 0:  # the subscripts as written
            lead, tail = (slice(None),) * at, ()
        else:
            lead, tail = (Ellipsis,), (slice(None),) * (-at - 1)
        if reverse:
            full = full[lead + (slice(None, None, -1),) + tail]
        return full[lead + (slice(None, n),) + tail]

    if not rank or axis % rank != at % rank:  # not the first n along the sorted axis
        return as_written()
    if values.dtype.is_floating:  # top_k of a small k may place a NaN otherwise: sort then
        return TF.cond(TF.reduce_any(TF.math.is_nan(values)), as_written,
                       lambda: _tfperf_sorted_prefix_top_k(values, n, axis, rank, descending,
                                                           indices, reverse))
    return _tfperf_sorted_prefix_top_k(values, n, axis, rank, descending, indices, reverse)


def _tfperf_sorted_prefix_top_k(values, n, axis, rank, descending, indices, reverse):
    """tfperf tune: the first n of the sort along axis (the last but one position kept)
    as TF.math.top_k of n on the sort's own key."""
    axis = axis % rank
    perm = list(range(rank))
    perm[axis], perm[-1] = rank - 1, axis
    moved = TF.transpose(values, perm) if axis != rank - 1 else values
    if reverse:  # the reversed sort is the other direction's, ties highest index first
        moved, descending = TF.reverse(moved, [-1]), not descending
    dtype, size = values.dtype, moved.shape[-1]
    if size is None:
        size = TF.shape(moved)[-1]
    if isinstance(n, int) and isinstance(size, int):
        k = min(max(n if n >= 0 else size + n, 0), size)
    else:
        n = TF.cast(n, TF.int32)
        k = TF.clip_by_value(TF.where(n < 0, size + n, n), 0, size)
    if descending:
        key = moved
    elif dtype.is_unsigned:
        key = dtype.max - moved
    elif dtype.is_integer:
        key = -moved - 1
    else:
        key = -moved
    top, where = TF.math.top_k(key, k)
    if indices:
        out = size - 1 - where if reverse else where
    elif descending:
        out = top
    else:
        out = dtype.max - top if dtype.is_unsigned else -top - 1 if dtype.is_integer else -top
    return TF.transpose(out, perm) if axis != rank - 1 else out
'''


def _function(text: str, name: str) -> tuple[Any, ast.FunctionDef]:
    from tfperf.lint.semantic import Context

    tree = parse(text)
    return Context(tree, text, "<tune>"), find_function(tree, name)


def _arg(call: ast.Call, pos: int, key: str) -> ast.expr | None:
    if len(call.args) > pos:
        return call.args[pos]
    return next((k.value for k in call.keywords if k.arg == key), None)


def _sort(call: ast.AST, names: Any) -> tuple[ast.expr, ast.expr | None, bool, bool] | None:
    """``(values, axis, descending, indices)`` of a ``tf.argsort``/``tf.sort`` call whose
    direction is a literal; None for anything else."""
    if not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return None
    indices = SORTS.get(names.call_qualname(call) or "")
    values = _arg(call, 0, "values")
    if indices is None or values is None:
        return None
    direction = _arg(call, 2, "direction")
    if direction is None:
        descending = False
    elif isinstance(direction, ast.Constant) and direction.value in ("ASCENDING",
                                                                     "DESCENDING"):
        descending = direction.value == "DESCENDING"
    else:
        return None
    return values, _arg(call, 1, "axis"), descending, indices


def _prefix(sl: ast.expr) -> tuple[int, ast.expr] | None:
    """``(position, n)`` where the subscript ``sl`` keeps every position but one and takes
    the first ``n`` there (a position from the end when a ``...`` comes before it)."""
    elems = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
    dots = [i for i, e in enumerate(elems) if isinstance(e, ast.Constant) and e.value is ...]
    if len(dots) > 1:
        return None
    cut: list[tuple[int, ast.expr]] = []
    for i, e in enumerate(elems):
        if i in dots:
            continue
        if not isinstance(e, ast.Slice) or e.step is not None:
            return None
        lower_ok = e.lower is None or (isinstance(e.lower, ast.Constant)
                                       and e.lower.value == 0 and type(e.lower.value) is int)
        if not lower_ok:
            return None
        if e.upper is not None:
            cut.append((i, e.upper))
        elif e.lower is not None:  # [0:] keeps everything: as a ':'
            continue
    if len(cut) != 1:
        return None
    i, n = cut[0]
    if dots and i > dots[0]:
        return i - len(elems), n
    return i, n


def _reversal(sl: ast.expr) -> int | None:
    """The position a subscript reverses (``[::-1]``, ``[:, ::-1]``, ``[..., ::-1]``) while
    keeping every other whole, counted as :func:`_prefix` counts; None for anything else."""
    elems = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
    dots = [i for i, e in enumerate(elems) if isinstance(e, ast.Constant) and e.value is ...]
    if len(dots) > 1:
        return None
    flips = []
    for i, e in enumerate(elems):
        if i in dots:
            continue
        if not isinstance(e, ast.Slice) or e.lower is not None or e.upper is not None:
            return None
        if e.step is None:
            continue
        step = e.step
        if isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub) \
                and isinstance(step.operand, ast.Constant) and step.operand.value == 1 \
                and type(step.operand.value) is int:
            flips.append(i)
        else:
            return None
    if len(flips) != 1:
        return None
    i = flips[0]
    return i - len(elems) if dots and i > dots[0] else i


def _seg(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text, node) or ast.unparse(node)


def _helper_call(text: str, found: tuple[ast.expr, ast.expr | None, bool, bool],
                 at: int, n: ast.expr, reverse: bool = False) -> str:
    values, axis, descending, indices = found
    ax = "-1" if axis is None else _seg(text, axis)
    return (f"{HELPER}({_seg(text, values)}, {_seg(text, n)}, {ax}, {at}, {descending}, "
            f"{indices}{', reverse=True' if reverse else ''})")


def _stored_once(fn: ast.FunctionDef, name: str) -> bool:
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
              and isinstance(n.ctx, (ast.Store, ast.Del))]
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    return len(stores) == 1 and name not in params and not any(
        isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(fn))


def _known_before(fn: ast.FunctionDef, n: ast.expr) -> bool:
    """``n`` has the same value wherever it is read in the function: literals, and
    parameters the function never rebinds (so it may be read where the sort runs)."""
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    for node in ast.walk(n):
        if isinstance(node, ast.Name):
            if node.id not in params or not _stored_never(fn, node.id):
                return False
        elif isinstance(node, (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda,
                               ast.NamedExpr)):
            return False
    return True


def _stored_never(fn: ast.FunctionDef, name: str) -> bool:
    return not any(isinstance(n, ast.Name) and n.id == name
                   and isinstance(n.ctx, (ast.Store, ast.Del)) for n in ast.walk(fn))


def rewrite(text: str, name: str) -> str:
    """Every first ``n`` of a sort in function ``name`` as ``top_k`` (module docstring)."""
    text, tf = ensure_tf(text)
    names, fn = _function(text, name)
    edits: list[tuple[ast.AST, str]] = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load):
            continue
        cut = _prefix(node.slice)
        if cut is None:
            continue
        found = _sort(node.value, names)
        if found is not None:  # tf.argsort(x)[:, :n]
            edits.append((node, _helper_call(text, found, *cut)))
            continue
        inner = node.value
        if isinstance(inner, ast.Subscript) and _reversal(inner.slice) == cut[0]:
            found = _sort(inner.value, names)  # tf.argsort(x)[:, ::-1][:, :n]
            if found is not None:
                edits.append((node, _helper_call(text, found, *cut, reverse=True)))
                continue
        if isinstance(node.value, ast.Name):  # idx = tf.argsort(x); ... idx[:, :n]
            edit = _through_a_name(text, fn, names, node, node.value.id, cut)
            if edit:
                edits.extend(edit)
    if not edits:
        raise SourceEditError("no first n of a tf.argsort or tf.sort in the function")
    text = replace_nodes(text, edits)
    if f"def {HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + HELPER_SOURCE.replace("TF.", f"{tf}.")
    return text


def _through_a_name(text: str, fn: ast.FunctionDef, names: Any, read: ast.Subscript,
                    name: str, cut: tuple[int, ast.expr]) -> list[tuple[ast.AST, str]]:
    """The edits for a sort bound to ``name`` and read once, in ``read``: the binding
    computes the first ``n`` (known there) and the read takes the name whole."""
    if not _stored_once(fn, name) or not _known_before(fn, cut[1]):
        return []
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Load)]
    bind = next((s for s in ast.walk(fn) if isinstance(s, ast.Assign) and len(s.targets) == 1
                 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name), None)
    if bind is None or len(reads) != 1 or reads[0] is not read.value:
        return []
    found = _sort(bind.value, names)
    if found is None or (read.lineno, read.col_offset) < (bind.end_lineno or 0,
                                                          bind.end_col_offset or 0):
        return []
    if any(isinstance(n, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef))
           and any(m is read for m in ast.walk(n)) for n in ast.walk(fn) if n is not fn):
        return []  # read in a nested function: when it runs is not known here
    return [(bind.value, _helper_call(text, found, *cut)), (read, name)]


class SortedPrefixToTopK(RewriteLever):
    name, slot, stage, traces = "first n of a sort→top_k", "top_k", 10, False
    description = ("tf.argsort(x, axis)[..., :n] (tf.sort's too, through a name bound once) "
                   "as tf.math.top_k of n on the sort's own key: the same n, ties in the same "
                   "order, without sorting the rest")
    rejections = ("disagrees (a NaN placed otherwise)",)

    edit = staticmethod(rewrite)


def levers(ctx: LeverContext) -> list[Lever]:
    return [SortedPrefixToTopK()]
