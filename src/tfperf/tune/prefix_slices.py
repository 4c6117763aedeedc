"""A reduction of a prefix of a tensor for every step of a loop or a map: one cumulative op.

    [tf.reduce_sum(x[:i]) for i in range(n)]            →  tf.cumsum(x, axis=0, exclusive=True)
    tf.map_fn(lambda i: tf.reduce_sum(x[:i + 1]), tf.range(n))  →  tf.cumsum(x, axis=0)

What is read is the computation, not a spelling: a reduction (``reduce_sum``, ``reduce_prod``,
``reduce_max``, ``reduce_min``) of ``x[:u]`` (or ``x[0:u]``, ``x[:u, :]``) along the first
axis, where ``u`` is the iteration's index (exclusive: the rows before it) or the index + 1
(inclusive), ``x`` not depending on the iteration. Row ``i`` of the cumulative op along axis 0
is that reduction at step ``i``; a reduction over every axis (no ``axis``) reduces each
cumulative row over its other axes. A maximum has no exclusive form (the maximum of no rows),
and no cumulative op in TensorFlow: ``tf.scan`` of ``tf.maximum`` (one graph loop). The
loop model's batching (:mod:`tfperf.tune.levers.loop_model`) calls this for each call of the
body; the search's check on the user's inputs and a varied copy judges the result.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass

#: reduction → (the cumulative form, with ``{tf}``/``{x}``/``{excl}``; an exclusive one exists)
CUMULATIVE = {
    "reduce_sum": ("{tf}.cumsum({x}, axis=0{excl})", True),
    "reduce_prod": ("{tf}.math.cumprod({x}, axis=0{excl})", True),
    "reduce_max": ("{tf}.scan({tf}.maximum, {x})", False),
    "reduce_min": ("{tf}.scan({tf}.minimum, {x})", False),
}
_MODULES = {"tf", "tf.math", "tensorflow", "tensorflow.math"}


@dataclass(frozen=True)
class Prefix:
    """One prefix reduction of a body: ``call`` reduces ``base[:index (+ 1)]``."""

    call: ast.Call
    reduction: str
    base: ast.expr
    inclusive: bool
    every_axis: bool  # no axis given: each prefix reduced over all its axes
    stop: str  # the iteration count the index runs over


def _upper(node: ast.expr, stop_of: Callable[[ast.expr], str | None],
           ) -> tuple[str, bool] | None:
    """(stop, inclusive) of a slice's upper bound that is the index or the index + 1."""
    stop = stop_of(node)
    if stop is not None:
        return stop, False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        for a, b in ((node.left, node.right), (node.right, node.left)):
            if isinstance(b, ast.Constant) and b.value == 1 and type(b.value) is int:
                stop = stop_of(a)
                if stop is not None:
                    return stop, True
    return None


def _prefix_slice(node: ast.expr) -> ast.Slice | None:
    """The slice of the first axis of ``x[:u]``/``x[0:u]``/``x[:u, :, ...]``, None else."""
    if not isinstance(node, ast.Subscript):
        return None
    parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    first = parts[0]
    if not isinstance(first, ast.Slice) or first.step is not None or first.upper is None:
        return None
    if first.lower is not None and not (isinstance(first.lower, ast.Constant)
                                        and first.lower.value == 0):
        return None
    if any(not (isinstance(p, ast.Slice) and p.lower is None and p.upper is None
                and p.step is None) for p in parts[1:]):
        return None
    return first


def _literal(node: ast.expr, bound: dict[str, str] | None = None) -> object:
    """``node``'s value when it is a literal (``0``, ``[0]``, ``(0,)``), its names read
    through ``bound`` (names bound once: ``k = 0``); None for anything else (``[k]`` of a
    parameter): literal_eval raises on a name (it did here: the lever was lost)."""
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    if names:
        if not bound or not names <= set(bound):
            return None
        node = _Resolve(bound).visit(copy.deepcopy(node))
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


class _Resolve(ast.NodeTransformer):
    def __init__(self, bound: dict[str, str]) -> None:
        self.bound = bound

    def visit_Name(self, node: ast.Name) -> ast.expr:
        try:
            return ast.parse(self.bound[node.id], mode="eval").body
        except SyntaxError:
            return node


def prefix_reduction(call: ast.Call, stop_of: Callable[[ast.expr], str | None],
                     bound: dict[str, str] | None = None) -> Prefix | None:
    """``call`` as a prefix reduction of the iteration whose index ``stop_of`` recognises
    (it gives the iteration count for a name that is the index), or None; ``bound``: names
    bound once, for an axis given by a name (``axis=[k]``, ``k = 0``)."""
    func = ast.unparse(call.func)
    module, _, last = func.rpartition(".")
    if last not in CUMULATIVE or module not in _MODULES or len(call.args) not in (1, 2):
        return None
    axis = call.args[1] if len(call.args) == 2 else None
    for k in call.keywords:
        if k.arg != "axis" or axis is not None:
            return None
        axis = k.value
    if axis is not None and _literal(axis, bound) not in (0, [0], (0,)):
        return None  # another axis, or one the text does not fix (``axis=[k]``)
    sl = _prefix_slice(call.args[0])
    if sl is None or sl.upper is None:
        return None
    found = _upper(sl.upper, stop_of)
    if found is None:
        return None
    base = call.args[0].value  # type: ignore[attr-defined]
    if any(stop_of(n) is not None for n in ast.walk(base) if isinstance(n, ast.expr)):
        return None  # the prefixed tensor changes with the iteration
    stop, inclusive = found
    if not inclusive and not CUMULATIVE[last][1]:
        return None
    return Prefix(call, last, base, inclusive, axis is None, stop)


def prefix_uppers(nodes: list[ast.AST], stop_of: Callable[[ast.expr], str | None],
                  ) -> set[int]:
    """Ids of the index names that are only a prefix reduction's slice bound in ``nodes``."""
    out: set[int] = set()
    for n in nodes:
        if isinstance(n, ast.Call):
            found = prefix_reduction(n, stop_of)
            if found is not None:
                sl = _prefix_slice(n.args[0])
                assert sl is not None and sl.upper is not None
                out |= {id(m) for m in ast.walk(sl.upper) if isinstance(m, ast.Name)}
    return out


def cumulative(prefix: Prefix, tf: str, rank_one: bool, whole_helper: str,
               bound: dict[str, str] | None = None) -> str:
    """The batched text of ``prefix``: row ``i`` is the reduction at step ``i``; ``bound``:
    names the function binds once, to their expressions (``n = x.shape[0]``)."""
    form, _ = CUMULATIVE[prefix.reduction]
    x = ast.unparse(prefix.base)
    excl = "" if prefix.inclusive else ", exclusive=True"
    text = form.format(tf=tf, x=x, excl=excl)
    if prefix.every_axis and not rank_one:  # each prefix's other axes reduced too
        text = f"{whole_helper}({tf}.{prefix.reduction}, {text})"
    whole = {f"{x}.shape[0]", f"len({x})", f"{tf}.shape({x})[0]"}
    stop = (bound or {}).get(prefix.stop, prefix.stop)
    if stop.replace(" ", "") not in {w.replace(" ", "") for w in whole}:
        text = f"{text}[:{prefix.stop}]"  # (a loop over fewer steps than x has rows)
    return text


def bound_once(fn: ast.FunctionDef) -> dict[str, str]:
    """Names ``fn`` binds once, by a plain assignment of its own body, to that text."""
    stores: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    return {s.targets[0].id: ast.unparse(s.value) for s in fn.body
            if isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Name) and stores.get(s.targets[0].id) == 1}


def exclusive_of(left: ast.Call, right: ast.expr, tf: str) -> str | None:
    """``tf.cumsum(x, axis=0) - x`` (an inclusive prefix sum less each step's own row) as
    the exclusive ``tf.cumsum(x, axis=0, exclusive=True)``; None for anything else."""
    if ast.unparse(left.func) != f"{tf}.cumsum" or len(left.args) != 1 \
            or [(k.arg, ast.unparse(k.value)) for k in left.keywords] != [("axis", "0")]:
        return None
    x = ast.unparse(left.args[0])
    if ast.unparse(right) != x:
        return None
    return f"{tf}.cumsum({x}, axis=0, exclusive=True)"
