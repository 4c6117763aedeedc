"""A per-example loop over a batch → ``tf.vectorized_map``::

    results = []                                  def _tfperf_example(x_i):
    for i in range(x.shape[0]):                       ...body with x[i] → x_i...
        ...body using x[i]...             →           return y
        results.append(y)                         results = tf.vectorized_map(_tfperf_example, x)
    return tf.stack(results)                      return results

pfor converts each op of the body to its batched form; an op it cannot convert makes it fall
back to a ``tf.while_loop`` (one iteration per example, usually slower than the loop it
replaces): tune catches TensorFlow's warning and rejects the candidate with the op's name.
"""

from __future__ import annotations

import ast

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.levers.loop_model import reduces_the_batch
from tfperf.tune.source import (
    SourceEditError,
    ensure_tf,
    find_function,
    indent_of,
    index_uses,
    names_in,
    parse,
    range_stop,
    replace_nodes,
    sliced,
)

HELPER = "_tfperf_example"


def _is_append(stmt: ast.stmt, name: str) -> ast.expr | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append" \
            and isinstance(stmt.value.func.value, ast.Name) and stmt.value.func.value.id == name \
            and len(stmt.value.args) == 1 and not stmt.value.keywords:
        return stmt.value.args[0]
    return None


def _stack_call(node: ast.AST, name: str, tf: str) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) in {f"{tf}.stack", "tf.stack"} \
        and len(node.args) == 1 and isinstance(node.args[0], ast.Name) \
        and node.args[0].id == name and all(
            k.arg == "axis" and isinstance(k.value, ast.Constant) and k.value.value == 0
            for k in node.keywords)


def _find(fn: ast.FunctionDef, tf: str) -> tuple[ast.stmt, ast.For, ast.Call, str] | None:
    """(``R = []``, the loop, the ``tf.stack(R)`` call, R) of the first loop of the form."""
    body = fn.body
    for k, init in enumerate(body):
        if not (isinstance(init, ast.Assign) and len(init.targets) == 1
                and isinstance(init.targets[0], ast.Name) and isinstance(init.value, ast.List)
                and not init.value.elts):
            continue
        name = init.targets[0].id
        loop = next((s for s in body[k + 1:] if isinstance(s, ast.For)), None)
        if loop is None or loop.orelse or not isinstance(loop.target, ast.Name) \
                or range_stop(loop) is None or _is_append(loop.body[-1], name) is None:
            continue
        between = body[k + 1:body.index(loop)]
        if any(name in names_in(s) for s in between):
            continue
        inner = loop.body[:-1]
        if any(name in names_in(s) for s in inner) or any(
                isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Yield))
                for s in loop.body for n in ast.walk(s)):
            continue
        after = body[body.index(loop) + 1:]
        uses = [n for s in after for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name]
        stacks = [n for s in after for n in ast.walk(s)
                  if isinstance(n, ast.Call) and _stack_call(n, name, tf)]
        if len(stacks) != 1 or len(uses) != 1:
            continue
        return init, loop, stacks[0], name
    return None


class VectorizedMap(Lever):
    name, slot, stage, traces = "vectorized_map", "vectorize", 20, True
    description = "a Python loop over the examples of a batch becomes one tf.vectorized_map"
    rejections: tuple[str, ...] = (
        "pfor falls back to a tf.while_loop for an op (TensorFlow's warning)",
        "the body cannot be vectorised (raises)", "disagrees with the baseline")

    def applies(self, ctx: LeverContext) -> str | None:
        text, tf = ensure_tf(ctx.target.source)
        try:
            found = _find(find_function(parse(text), ctx.target.name), tf)
        except SourceEditError as exc:
            return str(exc)
        if found is None:
            return ("no per-example loop (results = []; for i in range(n): ... "
                    "results.append(y); tf.stack(results))")
        _, loop, _, _ = found
        assert isinstance(loop.target, ast.Name)
        subs, other = index_uses(ast.Module(body=loop.body, type_ignores=[]), loop.target.id)
        if other or not subs:
            return (f"the loop index {loop.target.id!r} is used other than as x[{loop.target.id}]"
                    if subs or other else "the loop body indexes no tensor by the loop index")
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        return _rewrite(text, ctx, batched=False)


class BatchedBody(VectorizedMap):
    """The same loop, its body run once on the whole batch: ``x[i]`` → ``x``. Most ops
    broadcast over a leading batch axis (element-wise ops, ``matvec``, reductions over the
    last axes), and then this is the batched code a person would write, eager: no pfor, no
    graph (where a graph call costs more than the whole eager computation, it wins). An op
    that needs one example's shape raises; one that reduces over the batch axis gives other
    shapes or values: both are rejected like every candidate that disagrees."""

    name, slot, stage, traces = "loop→batched ops", "vectorize", 20, False
    description = "a per-example loop's body run once on the whole batch (x[i] → x)"
    rejections: tuple[str, ...] = ("an op of the body needs one example's shape (raises)",
                  "an op reduces or mixes across the batch axis (disagrees)")

    def build(self, text: str, ctx: LeverContext) -> str:
        return _rewrite(text, ctx, batched=True)


def _rewrite(text: str, ctx: LeverContext, batched: bool) -> str:
    """The per-example loop as a ``tf.vectorized_map`` of a nested function of one example,
    or (``batched``) its body on the whole batch."""
    text, tf = ensure_tf(text)
    fn = find_function(parse(text), ctx.target.name)
    found = _find(fn, tf)
    if found is None:
        raise SourceEditError("the per-example loop is gone after the other edits")
    init, loop, stack, name = found
    assert isinstance(loop.target, ast.Name)
    index, stop = loop.target.id, range_stop(loop)
    assert stop is not None
    body = ast.Module(body=loop.body, type_ignores=[])
    if batched:
        why = reduces_the_batch(loop.body, text)
        if why:  # (the per-example-axes lever of the loop model moves such axes)
            raise SourceEditError(why)
    subs, other = index_uses(body, index)
    if other or not subs:
        raise SourceEditError(f"the loop index {index!r} is used other than as x[{index}]")
    names = list(dict.fromkeys(s.value.id for s in subs))  # type: ignore[attr-defined]
    taken = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
    if batched:  # x[i] → the whole batch (x, or x[:n] when the loop stops earlier)
        params = {n: sliced(n, stop) for n in names}
    else:
        params = {n: _fresh(f"{n}_{index}", taken) for n in names}
    pad = indent_of(text, loop.lineno)
    lines = []
    inner = "" if batched else "    "
    if batched:
        elems = ""
    elif len(names) == 1:
        lines.append(f"def {HELPER}({params[names[0]]}):")
        elems = sliced(names[0], stop)
    else:
        lines.append(f"def {HELPER}(elems):")
        lines.append(f"    {', '.join(params[n] for n in names)} = elems")
        elems = "(" + ", ".join(sliced(n, stop) for n in names) + ")"
    for stmt in loop.body[:-1]:
        seg = _segment_lines(text, stmt)
        seg = replace_nodes(seg, [(_relative(n, stmt), new)
                                  for n, new in _edits(stmt, index, params, batched)])
        lines.extend(inner + row for row in _dedent(seg, stmt.col_offset).splitlines())
    result = _is_append(loop.body[-1], name)
    assert result is not None
    result_text = ast.get_source_segment(text, result) or ""
    res_node = ast.parse(result_text, mode="eval").body
    result_text = replace_nodes(result_text, _edits(res_node, index, params, batched))
    if batched:
        lines.append(f"{name} = {result_text}")
    else:
        lines.append(f"    return {result_text}")
        lines.append(f"{name} = {tf}.vectorized_map({HELPER}, {elems})")
    new_loop = "\n".join(pad + row if row.strip() else row for row in lines)
    # Bottom-up: the stack call, the loop, the empty list.
    text = replace_nodes(text, [(stack, name)])
    text = replace_nodes(text, [(loop, new_loop.lstrip())])
    return _drop_line(text, init)


def _edits(node: ast.AST, index: str, params: dict[str, str],
           batched: bool) -> list[tuple[ast.AST, str]]:
    """``x[i]`` → ``params[x]``. On the whole batch, a matrix-vector product of one example,
    ``tf.linalg.matvec(m, x[i], transpose_a=t)``, becomes one matrix product of the batch,
    ``tf.matmul(x, m, transpose_b=not t)``: broadcast as it is, matvec would run one small
    product per example (a batched GEMV), the very loop this lever removes."""
    out: list[tuple[ast.AST, str]] = []
    inside: set[int] = set()
    for call in (n for n in ast.walk(node) if batched and isinstance(n, ast.Call)):
        func = ast.unparse(call.func)
        if not func.endswith("linalg.matvec") or len(call.args) != 2:
            continue
        matrix, vector = call.args
        subs, _ = index_uses(vector, index)
        flags = {k.arg: k.value.value for k in call.keywords
                 if isinstance(k.value, ast.Constant) and isinstance(k.value.value, bool)}
        if subs != [vector] or index_uses(matrix, index) != ([], False) \
                or len(flags) != len(call.keywords) or set(flags) - {"transpose_a"}:
            continue
        transposed = ", transpose_b=True" if not flags.get("transpose_a", False) else ""
        prefix = func[:-len("linalg.matvec")]
        batch = params[vector.value.id]  # type: ignore[attr-defined]
        out.append((call, f"{prefix}matmul({batch}, {ast.unparse(matrix)}{transposed})"))
        inside |= {id(n) for n in ast.walk(call)}
    out += [(s, params[s.value.id]) for s in index_uses(node, index)[0]  # type: ignore[attr-defined]
            if id(s) not in inside]
    return out


def _fresh(name: str, taken: set[str]) -> str:
    out, k = name, 1
    while out in taken:
        k += 1
        out = f"{name}{k}"
    taken.add(out)
    return out


def _segment_lines(text: str, stmt: ast.stmt) -> str:
    """The statement's full lines (its first line from column 0)."""
    rows = text.splitlines(keepends=True)[stmt.lineno - 1:stmt.end_lineno]
    return "".join(rows)


def _relative(node: ast.AST, stmt: ast.stmt) -> ast.AST:
    copy = ast.Name(id="_")
    copy.lineno = node.lineno - stmt.lineno + 1  # type: ignore[attr-defined]
    copy.end_lineno = node.end_lineno - stmt.lineno + 1  # type: ignore[attr-defined]
    copy.col_offset, copy.end_col_offset = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    return copy


def _dedent(seg: str, col: int) -> str:
    return "\n".join(row[col:] if row[:col].strip() == "" else row.lstrip()
                     for row in seg.splitlines())


def _drop_line(text: str, stmt: ast.stmt) -> str:
    rows = text.splitlines(keepends=True)
    return "".join(rows[:stmt.lineno - 1] + rows[stmt.end_lineno or stmt.lineno:])


def levers(ctx: LeverContext) -> list[Lever]:
    return [VectorizedMap(), BatchedBody()]
