"""``list(map(lambda n: body, it))`` read as the loop it is: ``[body for n in it]``.

The loop model reads ``for`` statements, comprehensions and TensorFlow's loop calls; the
builtin ``map`` of a lambda is the same loop spelled as a call (held-out round 13's c07:
``list(map(lambda n: tf.pow(t[:, n], n + 1), range(size)))``). This pass gives the loop
levers that loop as a comprehension. Only where the two are the same program: the builtin
``map`` (not a name the module binds), a lambda of plain positional parameters, one per
iterable (several iterables become ``zip``, which stops at the shortest as ``map`` does),
and the map consumed at once by ``list``/``tuple`` (a bare ``map`` is lazy: left alone; a
tuple joined by ``tf.stack``/``tf.concat``/``add_n`` is written as the list it may be).
"""

from __future__ import annotations

import ast

from tfperf.tune.iterations import text_of
from tfperf.tune.source import (
    SourceEditError,
    bound_names,
    find_function,
    names_in,
    parse,
    replace_nodes,
)

_EAGER = {"list": "[{}]", "tuple": "tuple([{}])"}
# Calls whose first argument may be a list or a tuple alike (a tuple there is a list).
_JOINS = frozenset({"stack", "concat", "add_n", "concatenate"})


def _plain_lambda(fn: ast.expr, iterables: int) -> ast.Lambda | None:
    if not isinstance(fn, ast.Lambda):
        return None
    a = fn.args
    if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or a.defaults \
            or len(a.args) != iterables:
        return None
    if any(isinstance(n, ast.NamedExpr) for n in ast.walk(fn.body)):
        return None  # (in a comprehension ``:=`` binds in the function: another program)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fn.body)):
        return None  # (a lambda that yields is a generator; in a comprehension: no program)
    params = {p.arg for p in a.args}
    if any(isinstance(n, (ast.Lambda, ast.GeneratorExp)) and names_in(n) & params
           for n in ast.walk(fn.body)):
        # (each call binds its own parameter, a closure keeps it; a comprehension's one
        # variable is read late by its closures: all the last element's)
        return None
    return fn


def _comprehension(text: str, call: ast.Call, lam: ast.Lambda) -> str:
    params = [p.arg for p in lam.args.args]
    its = [text_of(text, x) for x in call.args[1:]]
    target, source = (params[0], its[0]) if len(its) == 1 else \
        (", ".join(params), f"zip({', '.join(its)})")
    return f"({text_of(text, lam.body)}) for {target} in {source}"


def maps_as_comprehensions(text: str, name: str) -> str:
    """The module with each eager ``map`` of a lambda in function ``name`` written as the
    comprehension it is (see the module's docstring); raises ``SourceEditError`` where there
    is none."""
    tree = parse(text)
    fn = find_function(tree, name)
    bound = bound_names(tree)
    if "map" in bound or "list" in bound or "tuple" in bound or "zip" in bound:
        raise SourceEditError("the module binds map, list, tuple or zip: not the builtins")
    edits: list[tuple[ast.AST, str]] = []
    joined = {id(c.args[0]) for c in ast.walk(fn) if isinstance(c, ast.Call) and c.args
              and isinstance(c.func, ast.Attribute) and c.func.attr in _JOINS}
    for outer in ast.walk(fn):
        if not (isinstance(outer, ast.Call) and isinstance(outer.func, ast.Name)
                and outer.func.id in _EAGER and len(outer.args) == 1 and not outer.keywords):
            continue
        inner = outer.args[0]
        if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name)
                and inner.func.id == "map" and len(inner.args) >= 2 and not inner.keywords
                and not any(isinstance(x, ast.Starred) for x in inner.args)):
            continue
        lam = _plain_lambda(inner.args[0], len(inner.args) - 1)
        if lam is None:
            continue
        form = "list" if id(outer) in joined else outer.func.id
        edits.append((outer, _EAGER[form].format(_comprehension(text, inner, lam))))
    if not edits:
        raise SourceEditError("no list(map(lambda ...)) or tuple(map(lambda ...)) in the function")
    # A map nested in another's lambda is the outer edit's text already: keep the outermost.
    spans = [(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset)  # type: ignore[attr-defined]
             for n, _ in edits]
    kept = [e for e, s in zip(edits, spans, strict=True)
            if not any(o != s and o[:2] <= s[:2] and s[2:] <= o[2:] for o in spans)]
    out = replace_nodes(text, kept)
    try:  # a map left inside a lambda that was rewritten: read it on the next pass
        return maps_as_comprehensions(out, name)
    except SourceEditError:
        return out
