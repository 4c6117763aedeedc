"""A loop that carries a state from one step to the next, as one ``tf.scan``.

The loop model says "carried" when an iteration reads what the previous one computed: an
exponential smoothing ``level = level + a * (y - level)``, an RNN's hidden state, a running
maximum, a Welford update. Its iterations cannot run side by side, so the loop levers leave
it, and under ``tf.function`` or XLA the Python loop is unrolled: one copy of the body per
step, whose trace and compile grow with the number of steps (held-out rounds: 1 200-step
recurrences whose XLA compile outlasted the first call's limit). ``tf.scan`` is the same
recurrence as one loop in the graph: traced once, compiled once, whatever the length.

The body becomes a step function of the state and the index, the values the loop appends
become the scan's outputs (stacked, or joined as the user's ``tf.stack``/``tf.concat``
joined them), and a state read after the loop gets its last value. The state's first value
takes the dtype and shape of what the first step makes of it (``acc = 0.0`` before a loop
adding vectors). Eagerly a scan still runs step by step: the gain comes with the compile
rungs stacked on it, which this lever's candidates go on to.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from tfperf.tune.iterations import JOIN_HELPER, JOIN_SOURCE, function_loops, loop_domain, text_of
from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import SourceEditError, block_of, ensure_tf, find_function, parse

STEP = "_tfperf_step"


def _names(node: ast.AST, store: bool) -> set[str]:
    kind = (ast.Store, ast.Del) if store else (ast.Load,)
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, kind)}


def _appends(loop: ast.For) -> list[tuple[ast.Expr, str, ast.expr]]:
    """The body's top-level ``name.append(value)`` statements."""
    out = []
    for s in loop.body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
                and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "append" \
                and isinstance(s.value.func.value, ast.Name) and len(s.value.args) == 1 \
                and not s.value.keywords:
            out.append((s, s.value.func.value.id, s.value.args[0]))
    return out


def _consumer(fn: ast.FunctionDef, loop: ast.For, name: str) -> tuple[ast.Call, str] | None:
    """The one read of the list ``name`` after the loop: ``tf.stack(name)`` (axis 0) or
    ``tf.concat(name, axis)`` with a constant axis; (the call, how: "stack" or the axis)."""
    end = (loop.end_lineno, loop.end_col_offset)
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
             and (n.lineno, n.col_offset) >= end]
    if len(reads) != 1 or not isinstance(reads[0].ctx, ast.Load):
        return None
    call = next((c for c in ast.walk(fn) if isinstance(c, ast.Call) and c.args
                 and c.args[0] is reads[0]), None)
    if call is None:
        return None
    what = ast.unparse(call.func).rsplit(".", 1)[-1]
    given = [*call.args[1:], *(k.value for k in call.keywords if k.arg == "axis")]
    if len(given) > 1 or any(k.arg not in ("axis", "name") for k in call.keywords):
        return None
    axis = given[0] if given else None
    try:
        value = 0 if axis is None else ast.literal_eval(axis)
    except ValueError:
        return None
    if not isinstance(value, int):
        return None
    if what == "stack" and value == 0:
        return call, "stack"
    if what == "concat" and axis is not None:
        return call, str(value)
    return None


class _IndexAsValue(ast.NodeTransformer):
    """The index where the body computes with it (``(x[t] - m) / (t + 1)``) cast to the
    function's float dtype: a Python ``int`` promotes, the scan's int32 index does not."""

    def __init__(self, index: str, tf: str, dtype: str) -> None:
        self.index, self.tf, self.dtype = index, tf, dtype

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        node.value = self.visit(node.value)
        return node  # an index in a subscript stays an integer

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id != self.index or not isinstance(node.ctx, ast.Load):
            return node
        return ast.parse(f"{self.tf}.cast({self.index}, {self.tf}.{self.dtype})",
                         mode="eval").body


def _steps(ctx: Any, text: str, model: Any, tensors: frozenset[str],
           tf: str) -> tuple[str, str, list[tuple[str, str, str]]] | None:
    """(index name, the scan's elements, item binds) of a loop: a ``range`` with any start
    and step, or ``reversed`` (a discounted return walks back), scans the index values
    themselves; another domain the loop model reads, the positions 0..n-1."""
    from tfperf.lint.analysis.loops import range_args

    node = model.node
    it = node.iter
    if isinstance(node.target, ast.Name):
        reverse = isinstance(it, ast.Call) and ctx.is_builtin(it.func, "reversed") \
            and len(it.args) == 1 and not it.keywords
        args = range_args(ctx, it.args[0] if reverse else it)
        if args is not None and 1 <= len(args) <= 3:
            elems = f"{tf}.range({', '.join(text_of(text, a) for a in args)})"
            return node.target.id, f"{tf}.reverse({elems}, [0])" if reverse else elems, []
    domain = loop_domain(ctx, text, model, tensors)
    if domain is None:
        return None
    index, stop, binds = domain
    return index, f"{tf}.range({stop})", binds


def _recurrences(ctx: Any, fn: ast.FunctionDef, text: str, tensors: frozenset[str],
                 tf: str) -> list[tuple[Any, Any]]:
    """(loop model, its domain) of each carried ``for`` loop the rewrite can take."""
    out = []
    for model in function_loops(ctx, fn):
        node = model.node
        if model.form != "for" or model.shape != "carried" or node.orelse:
            continue
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.Global,
                              ast.Nonlocal, ast.For, ast.While))
               for s in node.body for n in ast.walk(s)):
            continue
        domain = _steps(ctx, text, model, tensors, tf)
        if domain is None or block_of(fn, node) is None:
            continue
        out.append((model, domain))
    return out


def _buffers(loop: ast.For, state: list[str]) -> set[str]:
    """States the body writes into or reads from by method (``ta = ta.write(t, v)``)."""
    return {n.func.value.id for n in ast.walk(loop) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute) and n.func.attr in ("write", "read", "scatter")
            and isinstance(n.func.value, ast.Name) and n.func.value.id in state}


#: tf.Variable methods that change the variable in place.
VARIABLE_WRITES = frozenset({"assign", "assign_add", "assign_sub", "scatter_update",
                             "scatter_add", "scatter_sub", "scatter_mul", "scatter_div",
                             "scatter_max", "scatter_min", "scatter_nd_update",
                             "scatter_nd_add", "scatter_nd_sub", "batch_scatter_update"})


def _variables_written(text: str, loop: ast.For) -> list[str]:
    """The variables the body changes in place (``alpha.assign(...)``), as source text.

    The step run once to learn the state's dtype and shape would change them too, and the
    scan would start one step ahead (held-out round 5, an HMM forward pass): they are read
    before that step and put back after it."""
    local = set().union(*(_names(s, True) for s in loop.body)) | _names(loop.target, True)
    out: list[str] = []
    for n in ast.walk(loop):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr in VARIABLE_WRITES:
            if _names(n.func.value, False) & local:
                raise SourceEditError(f"the body changes a variable it picks per step "
                                      f"({ast.unparse(n.func)})")
            name = text_of(text, n.func.value)
            if name not in out:
                out.append(name)
    return out


def rewrite(text: str, name: str, tensors: frozenset[str], dtype: str = "") -> str:
    """The first carried loop of ``name`` as a ``tf.scan``; raises ``SourceEditError``."""
    from tfperf.lint.semantic import Context

    text, tf = ensure_tf(text)
    tree = parse(text)
    fn = find_function(tree, name)
    ctx = Context(tree, text, "<tune>")
    found = _recurrences(ctx, fn, text, tensors, tf)
    if not found:
        raise SourceEditError("no loop carrying a state from one step to the next")
    model, (index, elems, binds) = found[0]
    loop: ast.For = model.node
    appends = _appends(loop)
    lists = [a[1] for a in appends]
    if len(set(lists)) != len(lists):
        raise SourceEditError("a list appended twice in one step")
    consumers = []
    for _, lst, _ in appends:
        got = _consumer(fn, loop, lst)
        if got is None:
            raise SourceEditError(f"{lst!r} is not stacked or concatenated once after the loop")
        consumers.append(got)
    state = sorted(set(model.carried) - set(lists) - {index})
    if not state:
        raise SourceEditError("no state carried from one step to the next")
    buffers = sorted(_buffers(loop, state))
    if buffers:  # a scan's state is tensors; a TensorArray's handle is not one
        raise SourceEditError(f"the state {buffers[0]!r} is a buffer written step by step "
                              "(TensorArray .write/.read), not a value a scan can carry")
    start = (loop.lineno, loop.col_offset)
    set_before = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                  and not isinstance(n.ctx, ast.Load) and (n.lineno, n.col_offset) < start}
    set_before |= {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    if set(state) - set_before:
        raise SourceEditError("a state the loop reads is not set before it (its first step "
                              "sets it)")
    end = (loop.end_lineno, loop.end_col_offset)
    later = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
             and (n.lineno, n.col_offset) >= end}
    stored = set().union(*(_names(s, True) for s in loop.body))
    if (stored - set(state)) & later:
        raise SourceEditError("a name the loop body sets is read after it")
    # The step: the state in, the body (each append a named output), the state and outputs out.
    pad = " " * loop.col_offset
    outs = [f"_tfperf_out{k}" for k in range(len(appends))]
    body: list[str] = []
    for s in loop.body:
        hit = next((k for k, a in enumerate(appends) if a[0] is s), None)
        if hit is not None:
            body.append(f"{outs[hit]} = {text_of(text, appends[hit][2])}")
        else:
            if dtype:
                s = _IndexAsValue(index, tf, dtype).visit(copy.deepcopy(s))
            body += ast.unparse(s).splitlines()
    packed = "(" + "".join(f"{c}, " for c in state) + ")"
    out_tuple = "(" + "".join(f"{o}, " for o in outs) + ")"
    lines = [f"def {STEP}(_tfperf_acc, {index}):",
             f"    {packed} = _tfperf_acc[0]"]
    lines += [f"    {b} = {pick}" for b, pick, _ in binds]
    lines += ["    " + r for r in body]
    lines.append(f"    return {packed}, {out_tuple}")
    first = "_tfperf_first"
    kept = _variables_written(text, loop)
    lines += [f"_tfperf_steps = {elems}"]
    lines += [f"_tfperf_kept{k} = {tf}.identity({v}.read_value())" for k, v in enumerate(kept)]
    lines += [f"{first} = {STEP}(({packed}, ()), _tfperf_steps[0])"]
    lines += [f"{v}.assign(_tfperf_kept{k})" for k, v in enumerate(kept)]
    lines += [
        # The state's first value in the dtype and shape the first step gives it.
        f"_tfperf_init = ({tf}.nest.map_structure(lambda s, f: {tf}.cast(s, f.dtype) + "
        f"{tf}.zeros_like(f), {packed}, {first}[0]), "
        f"{tf}.nest.map_structure({tf}.zeros_like, {first}[1]))",
        f"_tfperf_states, _tfperf_outs = {tf}.scan({STEP}, _tfperf_steps, "
        f"initializer=_tfperf_init)",
    ]
    lines += [f"{c} = _tfperf_states[{k}][-1]" for k, c in enumerate(state) if c in later]
    block = "\n".join(pad + r for r in lines) + "\n"
    block_stmts = block_of(fn, loop) or []
    pos = block_stmts.index(loop)
    inits = []  # each list's creation before the loop, with the values it starts with
    for lst in lists:
        init = next((s for s in reversed(block_stmts[:pos]) if isinstance(s, ast.Assign)
                     and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                     and s.targets[0].id == lst), None)
        if init is None or not isinstance(init.value, ast.List):
            raise SourceEditError(f"{lst!r} is not created as a list before the loop")
        inits.append(init)
    # Consumers after the loop first (later text), then the loop, then the lists' creation.
    edits: list[tuple[ast.AST, str]] = []
    for k, (call, how) in enumerate(consumers):
        steps = f"_tfperf_outs[{k}]"
        if how == "stack":
            joined, axis = steps, "0"
        elif how in ("0", "-0"):
            joined, axis = f"{tf}.reshape({steps}, {tf}.concat([[-1], " \
                           f"{tf}.shape({steps})[2:]], 0))", "0"
        else:
            joined, axis = f"{JOIN_HELPER}({steps}, {how})", how
        # A list that starts with values keeps them, taken where the user's list took them.
        begun = f"_tfperf_start{k}"
        if inits[k].value.elts and how == "stack":  # type: ignore[attr-defined]
            joined = f"{tf}.concat([{tf}.stack({begun}), {joined}], axis=0)"
        elif inits[k].value.elts:  # type: ignore[attr-defined]
            joined = f"{tf}.concat([*{begun}, {joined}], axis={axis})"
        edits.append((call, joined))
    from tfperf.tune.source import replace_nodes

    text = replace_nodes(text, edits)
    rows = text.splitlines(keepends=True)
    rows[loop.lineno - 1:loop.end_lineno] = [block]
    for k, init in sorted(enumerate(inits), key=lambda p: -p[1].lineno):
        values = init.value.elts  # type: ignore[attr-defined]
        kept = [" " * init.col_offset + f"_tfperf_start{k} = {text_of(text, init.value)}\n"]
        rows[init.lineno - 1:init.end_lineno] = kept if values else []
    text = "".join(rows)
    if any(how not in ("stack", "0", "-0") for _, how in consumers) \
            and f"def {JOIN_HELPER}(" not in text:
        text = text.rstrip("\n") + "\n" + JOIN_SOURCE.replace("TF.", f"{tf}.")
    parse(text)
    return text


class LoopToScan(Lever):
    name, slot, stage, traces = "recurrence→tf.scan", "scan", 20, False
    graph_loop = True  # eagerly one op per step; traced, one loop (no unrolling guard)
    description = ("a loop carrying a state from step to step (a recurrence, any loop "
                   "spelling the model reads) as one tf.scan: one loop in the graph, not "
                   "one copy of the body per step")
    rejections = ("the state changes shape or dtype from step to step (raises)",
                  "the body needs a Python value of the index (raises)", "disagrees")

    def applies(self, ctx: LeverContext) -> str | None:
        try:
            self.build(ctx.target.source, ctx)
        except SourceEditError as exc:
            return str(exc)
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        from tfperf.tune.levers.loop_model import float_dtype, tensor_names

        return rewrite(text, ctx.target.name, tensor_names(ctx), float_dtype(ctx))


def levers(ctx: LeverContext) -> list[Lever]:
    return [LoopToScan()]
