"""User code made traceable without changing what it computes (held-out round 8's c03, c05).

Measured on TF 2.21 / Keras 3 (stop 38), why such code raises under ``tf.function``:

- **A Keras layer's ``call`` is never converted by AutoGraph**: ``Layer.__call__`` is
  allowlisted ("DoNotConvert rule for keras"), so the user's ``call`` behind it runs as plain
  Python and an ``if tf.random.uniform([]) <= self.factor:`` in it raises
  (``OperatorNotAllowedInGraphError: Using a symbolic tf.Tensor as a Python bool``). Tune's
  rewritten module is not the cause: it is written to a file that AutoGraph reads. Remedy:
  the ``call`` of the classes the function reaches is decorated with
  ``tf.autograph.to_graph`` (eagerly the converted code computes the same).
- **Unpacking a tensor** (``x1, y1, x2, y2 = boxes[i, j]``) iterates it, which AutoGraph does
  not convert (``Iterating over a symbolic tf.Tensor is not allowed``). Remedy: the value is
  indexed, ``_v = boxes[i, j]; x1, y1, x2, y2 = _v[0], _v[1], _v[2], _v[3]`` (the same for a
  tensor, an array, a list or a tuple of that length; anything else raises and is rejected).
- **Scalars carried through a loop over a tensor's items** (held-out round 14's c09): the
  builtins ``max``/``min`` of two tensors, which AutoGraph does not convert, and a Python
  number as a TF loop's first value of a float: :mod:`tfperf.tune.levers.scalar_loops`.
- **A ``break``/``return`` under an ``if`` on a tensor in a Python ``for i in range(n)``**:
  AutoGraph raises ``NotImplementedError: break and return statements which depend on a TF
  condition are not supported in Python for loops``. Remedy: ``range`` → ``tf.range``, a TF
  loop (eagerly the index is a scalar tensor: indexing and ops take it alike).

The loop bounds of :mod:`tfperf.tune.levers.static_bounds` are applied first where they
apply (``range(tf.shape(x)[0])`` raises too): one lever, so the compile rung stacks on it.
The edits reach the tuned function and, one name deep, the module-level functions it calls,
the classes it names and the classes of module-level instances it uses.
"""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.scalar_loops import carried_edits, extrema_edits
from tfperf.tune.levers.static_bounds import rewrite as static_bounds
from tfperf.tune.levers.static_bounds import tensor_params
from tfperf.tune.source import (
    SourceEditError,
    bound_names,
    ensure_tf,
    find_function,
    parse,
    replace_nodes,
)


def reached(tree: ast.Module, fn: ast.FunctionDef) -> tuple[list[ast.FunctionDef],
                                                                list[ast.ClassDef]]:
    """The functions (the tuned one first) and classes the tuned function reaches by name."""
    used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    instances = {t.id: n.value.func.id for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
                 for t in n.targets if isinstance(t, ast.Name)}
    names = used | {instances[u] for u in used if u in instances}
    funcs = [fn] + [n for n in tree.body if isinstance(n, ast.FunctionDef)
                    and n.name in used and n is not fn]
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in names]
    for c in classes:
        funcs += [m for m in c.body if isinstance(m, ast.FunctionDef)]
    return funcs, classes


def _unpack_edit(node: ast.Assign, text: str) -> str | None:
    """``a, b = x[i, j]`` → ``_v = x[i, j]; a, b = _v[0], _v[1]`` (a subscript's value only:
    a call may return a tuple, which unpacks fine already)."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], (ast.Tuple, ast.List)) \
            or not isinstance(node.value, ast.Subscript):
        return None
    elts = node.targets[0].elts
    if any(isinstance(e, ast.Starred) for e in elts):
        return None
    tmp = f"_unpacked_{node.lineno}"
    value = ast.get_source_segment(text, node.value) or ast.unparse(node.value)
    items = ", ".join(f"{tmp}[{k}]" for k in range(len(elts)))
    return f"{tmp} = {value}; {ast.unparse(node.targets[0])} = {items}"


def _breaks_on_a_call(loop: ast.For) -> bool:
    """A ``break``/``return`` right under an ``if`` whose test calls something (a tensor
    test: ``tf.reduce_all(...)``), in this loop's own body (not a nested loop's)."""
    def walk(stmts: list[ast.stmt]) -> bool:
        for s in stmts:
            if isinstance(s, ast.If) and any(isinstance(n, ast.Call) for n in ast.walk(s.test)) \
                    and any(isinstance(b, (ast.Break, ast.Return)) for b in s.body + s.orelse):
                return True
            if isinstance(s, (ast.If, ast.With, ast.Try)) and walk(
                    [*getattr(s, "body", []), *getattr(s, "orelse", [])]):
                return True
        return False
    return walk(loop.body)


def rewrite(text: str, name: str, tensors: set[str]) -> str:
    try:
        text = static_bounds(text, name, tensors)
        edited = True
    except SourceEditError:
        edited = False
    text, tf = ensure_tf(text)
    tree = parse(text)
    funcs, classes = reached(tree, find_function(tree, name))
    edits: list[tuple[ast.AST, str]] = []
    for scope in funcs:
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and (new := _unpack_edit(node, text)) is not None:
                edits.append((node, new))
            elif isinstance(node, ast.For) and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range" \
                    and _breaks_on_a_call(node):
                edits.append((node.iter.func, f"{tf}.range"))
    taken = [node for node, _ in edits]
    bound = bound_names(tree)
    for scope in funcs:
        edits += extrema_edits(scope, tf, bound, taken)
    edits += carried_edits(funcs[0], tf, tensors)
    if not edits and not edited and not _calls(classes):
        raise SourceEditError("nothing that stops tracing: no Keras layer's call, no tensor "
                              "unpacked, no break on a tensor in a range loop, no dynamic "
                              "bound, no max/min in a loop, no number carried from a "
                              "tensor's items")
    text = replace_nodes(text, edits) if edits else text
    tree = parse(text)
    _, classes = reached(tree, find_function(tree, name))
    rows = text.splitlines(keepends=True)
    for m in sorted(_calls(classes), key=lambda m: -m.lineno):
        first = m.decorator_list[0] if m.decorator_list else m
        pad = rows[first.lineno - 1][:first.col_offset]
        rows.insert(first.lineno - 1, f"{pad}@{tf}.autograph.to_graph\n")
    return "".join(rows)


def _calls(classes: list[ast.ClassDef]) -> list[ast.FunctionDef]:
    """The ``call`` methods of these classes, save those with a zero-argument ``super()``
    (it needs the class cell, which AutoGraph's converted copy lacks)."""
    return [m for c in classes for m in c.body if isinstance(m, ast.FunctionDef)
            and m.name == "call" and not any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id == "super" and not n.args for n in ast.walk(m))]


class Traceable(Lever):
    name, slot, stage, traces = "traceable: AutoGraph into call, unpacking, tf.range", \
        "bounds", 5, False
    enables_only = True  # eagerly the converted code runs the same ops (held-out round 13's c09)
    description = ("a Keras layer's call converted by AutoGraph, a tensor unpacked by "
                   "indexing, a range loop that breaks on a tensor made a tf.range loop, "
                   "max/min in a loop as tf.maximum/minimum, a number carried from a "
                   "tensor's items given their dtype (and static loop bounds): the code "
                   "traces, so it can be compiled")
    rejections = ("still raises while tracing", "disagrees with the baseline")

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            new = self.build(ctx.target.source, ctx)
        except SourceEditError as exc:
            return str(exc)
        # A tf.range loop is one loop in the traced graph: the eager ops it runs step by
        # step do not say how long its trace is (round 8's c05: "may unroll 13377 ops").
        self.graph_loop = ".range(" in new and new.count(".range(") > \
            ctx.target.source.count(".range(")
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        return rewrite(text, ctx.target.name, tensor_params(ctx))


def levers(ctx: LeverContext) -> list[Lever]:
    return [Traceable()]
