"""A buffer filled element by element, ``out = np.zeros((n, m)); for i …: for j …:
out[i, j] = f(i, j)``, as the body mapped over the whole index grid.

What the loops compute is ``f`` at every point of the grid (the iterations are independent:
each writes its own element and reads nothing the others write). The rewrite, whatever the
loops' spelling (``range``, ``enumerate``, rows of a tensor, a counter), makes the body one
function of the indices and maps it with ``tf.vectorized_map`` over each index (pfor takes
the index in any position, and a scalar helper called on rows, ``box_iou(pb, gb)``, is
vectorised with it); the buffer becomes that tensor, cast to the buffer's dtype (NumPy's
``np.zeros`` without a dtype is float64, and so stays the function's result). A ``float()``
or ``.numpy()`` around the element's value is dropped (pfor needs the tensor).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import SourceEditError, ensure_tf, find_function, names_in, parse

HELPER = "_tfperf_element"
#: Buffers: (module, function) → whether the dtype defaults to float64 (NumPy) or float32.
MAKERS = {("numpy", "zeros"): "numpy.float64", ("numpy", "empty"): "numpy.float64",
          ("numpy", "ones"): "numpy.float64", ("numpy", "full"): "numpy.float64",
          ("tensorflow", "zeros"): "tensorflow.float32",
          ("numpy", "zeros_like"): "", ("numpy", "empty_like"): ""}
#: pfor nests at most two maps in TF 2.21 (three raise).
MAX_DEPTH = 2


@dataclass
class Fill:
    init: ast.Assign  # out = np.zeros(...)
    loops: list[ast.stmt]  # outermost first
    indices: list[str]
    stops: list[str]
    binds: list[tuple[str, str]]  # (item name, its expression of the index)
    stmts: list[ast.stmt]  # every level's statements before the element's write
    value: ast.expr
    name: str
    dtype: str  # the dtype expression of the buffer, "" to keep the element's


def _dtype_of(ctx: Any, text: str, call: ast.Call) -> str | None:
    """The buffer's dtype as source text (None: not a buffer maker)."""
    q = (ctx.call_qualname(call) or "").split(".")
    if len(q) < 2 or (q[0], q[-1]) not in MAKERS:
        return None
    given = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if given is None and q[-1] in ("zeros", "empty", "ones") and len(call.args) > 1:
        given = call.args[1]
    if given is not None:
        return ast.get_source_segment(text, given) or ast.unparse(given)
    default = MAKERS[(q[0], q[-1])]
    if not default:  # zeros_like: the like's dtype
        return f"{ast.unparse(call.args[0])}.dtype" if call.args else None
    return "np.float64" if default.startswith("numpy") else "tf.float32"


def _element(stmt: ast.stmt, name: str, indices: list[str]) -> ast.expr | None:
    """The value of ``name[i, j] = value`` (or ``name[i][j]``, or a tensor's
    ``name = tf.tensor_scatter_nd_update(name, [[i, j]], [value])``) written at exactly the
    loops' indices, in order."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return None
    t = stmt.targets[0]
    if isinstance(t, ast.Name):
        return _scattered(stmt.value, name, indices) if t.id == name else None
    parts: list[ast.expr] = []
    while isinstance(t, ast.Subscript):
        sl = t.slice
        parts[:0] = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        t = t.value
    if not isinstance(t, ast.Name) or t.id != name:
        return None
    if [p.id if isinstance(p, ast.Name) else None for p in parts] != indices:
        return None
    return stmt.value


def _scattered(value: ast.expr, name: str, indices: list[str]) -> ast.expr | None:
    """``value`` of ``tf.tensor_scatter_nd_update(name, [[i, j]], [value])`` (held-out round 5:
    a pairwise distance matrix filled one scatter per pair)."""
    if not isinstance(value, ast.Call) or value.keywords or len(value.args) != 3 \
            or not ast.unparse(value.func).endswith("tensor_scatter_nd_update"):
        return None
    buf, where, what = value.args
    if not (isinstance(buf, ast.Name) and buf.id == name) \
            or not (isinstance(where, ast.List) and len(where.elts) == 1
                    and isinstance(where.elts[0], (ast.List, ast.Tuple))) \
            or not (isinstance(what, ast.List) and len(what.elts) == 1):
        return None
    at = where.elts[0].elts
    if [p.id if isinstance(p, ast.Name) else None for p in at] != indices:
        return None
    return what.elts[0]


def _unwrapped(value: ast.expr) -> ast.expr:
    """``float(x)``, ``x.numpy()``, ``x.item()`` → ``x``."""
    if isinstance(value, ast.Call) and not value.keywords:
        if isinstance(value.func, ast.Name) and value.func.id == "float" and len(value.args) == 1:
            return _unwrapped(value.args[0])
        if isinstance(value.func, ast.Attribute) and value.func.attr in ("numpy", "item") \
                and not value.args:
            return _unwrapped(value.func.value)
    return value


def fills(ctx: LeverContext, text: str, name: str) -> list[Fill]:
    """The element-by-element fills of the function ``name`` in ``text``."""
    from tfperf.analysis.loops import loop_of
    from tfperf.lint.semantic import Context
    from tfperf.tune.iterations import loop_domain
    from tfperf.tune.levers.loop_model import tensor_names

    tree = parse(text)
    lint_ctx = Context(tree, text, "<tune>")
    fn = find_function(tree, name)
    tensors = tensor_names(ctx)
    out = []
    for block in _blocks(fn):
        for k, stmt in enumerate(block):
            if not isinstance(stmt, (ast.For, ast.While)):
                continue
            init = next((s for s in reversed(block[:k]) if isinstance(s, ast.Assign)
                         and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                         and isinstance(s.value, ast.Call)), None)
            if init is None:
                continue
            buf = init.targets[0].id  # type: ignore[attr-defined]
            dtype = _dtype_of(lint_ctx, text, init.value)  # type: ignore[arg-type]
            if dtype is None:
                continue
            found = _nest(lint_ctx, text, stmt, buf, tensors, loop_of, loop_domain)
            if found is None:
                continue
            loops, indices, stops, binds, stmts, value = found
            between = block[block.index(init) + 1:k]
            if any(buf in names_in(s) for s in between):
                continue
            out.append(Fill(init, loops, indices, stops, binds, stmts, value, buf, dtype))
    return out


def _nest(ctx: Any, text: str, loop: ast.stmt, buf: str, tensors: frozenset[str],
          loop_of: Any, loop_domain: Any) -> Any:
    """The loops of a fill, outermost first, down to the one whose body writes the element."""
    loops: list[ast.stmt] = []
    indices: list[str] = []
    stops: list[str] = []
    binds: list[tuple[str, str]] = []
    stmts: list[ast.stmt] = []
    node: Any = loop
    while True:
        if len(loops) == MAX_DEPTH or getattr(node, "orelse", None):
            return None
        model = loop_of(ctx, node)
        if model is None or model.form not in ("for", "while") or model.per_device:
            return None  # a per-device tower loop keeps its iterations on their devices
        dom = loop_domain(ctx, text, model, tensors)
        if dom is None:
            return None
        index, stop, items = dom
        body = list(node.body)
        if model.form == "while":  # the counter's step, last
            last = body[-1] if body else None
            if not (isinstance(last, ast.AugAssign) and isinstance(last.target, ast.Name)
                    and last.target.id == index):
                return None
            body = body[:-1]
        loops.append(node)
        indices.append(index)
        stops.append(stop)
        binds += [(item, pick) for item, pick, _ in items]
        if not body:
            return None
        *before, last = body
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.For,
                              ast.While, ast.Global, ast.Nonlocal)) or
               (isinstance(n, ast.Name) and n.id == buf)
               for s in before for n in ast.walk(s)):
            return None
        if any(not isinstance(s, (ast.Assign, ast.AnnAssign)) for s in before):
            return None
        stmts += before
        if isinstance(last, (ast.For, ast.While)):
            node = last
            continue
        value = _element(last, buf, indices)
        if value is None or buf in names_in(value):
            return None
        # An inner counter's reset (j = 0 before its while) is the map's index now.
        stmts = [s for s in stmts if not (isinstance(s, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id in indices for t in s.targets))]
        return loops, indices, stops, binds, stmts, _unwrapped(value)


def _blocks(fn: ast.FunctionDef) -> list[list[ast.stmt]]:
    out = []
    for n in ast.walk(fn):
        for f in ("body", "orelse", "finalbody"):
            block = getattr(n, f, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                out.append(block)
    return out


class _Gathers(ast.NodeTransformer):
    """``x[i]``/``x[i, k]`` (an index first) → ``tf.gather(x, i)``(``[k]``): pfor turns a
    strided slice at a mapped index into a while_loop (190 µs against 0.8–60 ms for the
    grid_fill spelling under tf.function), a gather into one batched gather, and XLA
    compiles it."""

    def __init__(self, indices: set[str], tf: str) -> None:
        self.indices, self.tf = indices, tf

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        first = parts[0]
        if not (isinstance(first, ast.Name) and first.id in self.indices):
            return node
        call = ast.Call(ast.parse(f"{self.tf}.gather", mode="eval").body,
                        [node.value, first], [])
        if len(parts) == 1:
            return call
        rest = parts[1:]
        sl = rest[0] if len(rest) == 1 else ast.Tuple(rest, ast.Load())
        return ast.Subscript(call, sl, ast.Load())


def helper_name(text: str) -> str:
    k = 1
    while f"{HELPER}{k}" in text:
        k += 1
    return f"{HELPER}{k}"


def rewrite(text: str, fill: Fill, tf: str) -> str:
    """``fill``'s loops replaced by the element function mapped over the grid."""
    helper = helper_name(text)
    gathered = _Gathers(set(fill.indices), tf)
    lines = [f"def {helper}({', '.join(fill.indices)}):"]
    lines += [f"    {item} = {ast.unparse(gathered.visit(ast.parse(pick, mode='eval').body))}"
              for item, pick in fill.binds]
    for s in fill.stmts:
        lines += ["    " + r for r in ast.unparse(gathered.visit(s)).splitlines()]
    lines.append(f"    return {ast.unparse(gathered.visit(fill.value))}")
    grid = f"{helper}({', '.join(fill.indices)})"
    for index, stop in reversed(list(zip(fill.indices, fill.stops, strict=True))):
        grid = f"{tf}.vectorized_map(lambda {index}: {grid}, {tf}.range({stop}))"
    dtype = fill.dtype.replace("tf.", f"{tf}.") if fill.dtype.startswith("tf.") else fill.dtype
    lines.append(f"{fill.name} = {tf}.cast({grid}, {tf}.as_dtype({dtype}))")
    outer = fill.loops[0]
    row = text.splitlines()[outer.lineno - 1]
    pad = row[:len(row) - len(row.lstrip())]
    rows = text.splitlines(keepends=True)
    rows[outer.lineno - 1:outer.end_lineno] = [
        "".join(pad + r + "\n" for r in lines)]
    init = fill.init  # the buffer is made by the map now
    del rows[init.lineno - 1:init.end_lineno]
    return _as_tensor(ast_text="".join(rows), name=fill.name, tf=tf)


def _as_tensor(ast_text: str, name: str, tf: str) -> str:
    """``tf.constant(buf)`` after the fill → ``tf.convert_to_tensor(buf)``: the buffer is a
    tensor now, and ``tf.constant`` of a tensor raises under ``tf.function``."""
    from tfperf.tune.source import replace_nodes

    tree = parse(ast_text)
    edits: list[tuple[ast.AST, str]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and ast.unparse(n.func) == f"{tf}.constant" \
                and len(n.args) == 1 and isinstance(n.args[0], ast.Name) \
                and n.args[0].id == name:
            kw = "".join(f", {ast.unparse(k)}" for k in n.keywords)
            edits.append((n, f"{tf}.convert_to_tensor({name}{kw})"))
    return replace_nodes(ast_text, edits) if edits else ast_text


class FillToMap(Lever):
    name, slot, stage, traces = "element-wise fill→vectorized_map", "vectorize", 20, False
    description = ("a buffer filled element by element in loops (out[i, j] = f(i, j)) becomes "
                   "f mapped over the index grid (tf.vectorized_map per index)")
    rejections = ("an op of the element cannot be vectorised (raises, falls back)",
                  "disagrees (the loops fill only part of the buffer)",
                  "changes the function's contract (a NumPy buffer returned as it is)")

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            found = fills(ctx, ctx.target.source, ctx.target.name)
        except SourceEditError as exc:
            return str(exc)
        return None if found else "no buffer filled element by element in loops"

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        found = fills(ctx, text, ctx.target.name)
        if not found:
            raise SourceEditError("no buffer filled element by element in loops")
        for fill in sorted(found, key=lambda f: -f.loops[0].lineno):  # bottom up: lines hold
            text = rewrite(text, fill, tf)
        parse(text)
        return text


def levers(ctx: LeverContext) -> list[Lever]:
    return [FillToMap()]

