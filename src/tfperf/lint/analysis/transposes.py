"""Transposes: ``tf.transpose`` calls with a literal permutation, and whether two of them
undo each other."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tfperf.lint.semantic import Context

TRANSPOSE_CALLS = frozenset({"tensorflow.transpose", "tensorflow.compat.v1.transpose",
                             "keras.ops.transpose"})


REVERSE = ()  # a transpose without ``perm``: reverses the axes, whatever the rank


@dataclass(frozen=True)
class Transpose:
    """A ``tf.transpose(operand, perm)`` call with a literal (or absent) permutation.
    ``perm`` is ``REVERSE`` (empty) when absent."""

    call: ast.Call
    operand: ast.expr
    perm: tuple[int, ...]


def _int_list(node: ast.AST | None) -> tuple[int, ...] | None:
    if type(node) not in (ast.List, ast.Tuple):
        return None
    out = []
    for e in node.elts:
        if type(e) is not ast.Constant or type(e.value) is not int:
            return None
        out.append(e.value)
    if sorted(out) != list(range(len(out))):
        return None  # not a permutation: tf.transpose would raise; not our business
    return tuple(out)


def transpose_of(ctx: Context, node: ast.AST | None) -> Transpose | None:
    """``node`` as a transpose with a literal permutation, else ``None`` (also for calls
    with ``conjugate=`` or other arguments we cannot reason about)."""
    if type(node) is not ast.Call or ctx.qualname(node.func) not in TRANSPOSE_CALLS:
        return None
    args = list(node.args)
    perm_node: ast.AST | None = args[1] if len(args) > 1 else None
    if len(args) > 2 or (not args and not node.keywords):
        return None
    operand: ast.expr | None = args[0] if args else None
    for k in node.keywords:
        if k.arg in ("perm", "axes"):
            perm_node = k.value
        elif k.arg in ("a", "x") and operand is None:
            operand = k.value
        elif k.arg != "name":
            return None
    if operand is None:
        return None
    if perm_node is None or (type(perm_node) is ast.Constant and perm_node.value is None):
        return Transpose(node, operand, REVERSE)
    perm = _int_list(perm_node)
    return Transpose(node, operand, perm) if perm is not None else None


def inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def undoes(first: tuple[int, ...], second: tuple[int, ...]) -> bool:
    """Whether transposing by ``first`` then by ``second`` is the identity."""
    if first == REVERSE or second == REVERSE:
        return first == second == REVERSE
    return len(first) == len(second) and inverse(first) == second


# Transposes of the last two axes by name (``conjugate=True`` makes them adjoints).
MATRIX_TRANSPOSE_CALLS = frozenset(
    f"tensorflow.{p}{n}" for p in ("", "compat.v1.")
    for n in ("linalg.matrix_transpose", "linalg.transpose", "matrix_transpose"))
ADJOINT_CALLS = frozenset({"tensorflow.linalg.adjoint", "tensorflow.compat.v1.linalg.adjoint"})


@dataclass(frozen=True)
class MatrixTranspose:
    """A call that swaps the last two axes of ``operand`` (``adjoint``: and conjugates).
    ``exact`` is ``False`` for ``tf.transpose(x)`` without ``perm``, which reverses every
    axis: the same as swapping the last two only for a matrix (rank 2)."""

    call: ast.Call
    operand: ast.expr
    adjoint: bool
    exact: bool


def swaps_last_two(perm: tuple[int, ...]) -> bool:
    n = len(perm)
    return n >= 2 and perm == (*range(n - 2), n - 1, n - 2)


def matrix_transpose_of(ctx: Context, node: ast.AST | None) -> MatrixTranspose | None:
    """``node`` as a transpose of the last two axes, else ``None``."""
    if type(node) is not ast.Call:
        return None
    q = ctx.qualname(node.func)
    if q in MATRIX_TRANSPOSE_CALLS or q in ADJOINT_CALLS:
        args = list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
        operand = args[0] if args else kw.get("a", kw.get("matrix"))
        conj = kw.get("conjugate", args[1] if len(args) > 1 else None)
        if operand is None or set(kw) - {"a", "matrix", "conjugate", "name"}:
            return None
        if conj is not None and not (type(conj) is ast.Constant and type(conj.value) is bool):
            return None
        adjoint = q in ADJOINT_CALLS or bool(getattr(conj, "value", False))
        return MatrixTranspose(node, operand, adjoint, True)
    t = transpose_of(ctx, node)
    if t is None:
        return None
    if t.perm == REVERSE:
        return MatrixTranspose(t.call, t.operand, False, False)
    return MatrixTranspose(t.call, t.operand, False, True) if swaps_last_two(t.perm) else None
