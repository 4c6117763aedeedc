"""A loop over ``tf.unstack(x, axis=a)`` with ``a`` not 0 read as the index loop it is:
``for c in tf.unstack(x, axis=-1)`` is ``for k in range(x.shape[-1])`` with ``c`` read as
``x[..., k]``.

The loop model reads an unstack along axis 0 as a loop over a tensor's rows; along a later
axis (a per-channel or per-column loop) its pieces were no loop to the batched lever, which
knows ``x[:, k]`` and ``x[..., k]`` (issue 26, stop 43, item 1); a ``zip`` of such unstacks
is one index up to the shortest (``min`` of their lengths, as ``zip`` stops). Only where
the two are the same program: ``x`` a name the body does not bind again, ``a`` a literal
int, each item a name the body only reads, one generator and no condition in a
comprehension.
"""

from __future__ import annotations

import ast

from tfperf.tune.source import (
    SourceEditError,
    bound_names,
    find_function,
    names_in,
    parse,
    replace_nodes,
)

_UNSTACK = {"unstack", "unpack"}


def _unstack_axis(node: ast.expr) -> tuple[str, int] | None:
    """(the tensor's name, the axis) of ``tf.unstack(x, axis=a)`` with ``a`` a literal int
    other than 0; None otherwise."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _UNSTACK and node.args and isinstance(node.args[0], ast.Name)):
        return None
    axis = node.args[2] if len(node.args) > 2 else \
        next((k.value for k in node.keywords if k.arg == "axis"), None)
    if any(k.arg not in ("axis", "num") for k in node.keywords) or len(node.args) > 3:
        return None
    try:
        value = ast.literal_eval(axis) if axis is not None else 0
    except ValueError:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value == 0:
        return None
    return node.args[0].id, value


def _piece(x: str, axis: int, k: str) -> str:
    if axis > 0:
        return f"{x}[{':, ' * axis}{k}]"
    return f"{x}[..., {k}{', :' * (-axis - 1)}]"


def _header(target: ast.expr, it: ast.expr, fresh: str,
            ) -> tuple[str, list[tuple[str, str, int]]] | None:
    """(the loop's new target, each item's (name, tensor, axis)), or None."""
    index = None
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" \
            and len(it.args) == 1 and not it.keywords and isinstance(target, ast.Tuple) \
            and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name):
        index, target, it = target.elts[0].id, target.elts[1], it.args[0]
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip" \
            and not it.keywords and isinstance(target, ast.Tuple) \
            and len(target.elts) == len(it.args) >= 2:
        pairs = list(zip(target.elts, it.args, strict=True))
    else:
        pairs = [(target, it)]
    items = []
    for t, piece in pairs:
        found = _unstack_axis(piece)
        if found is None or not isinstance(t, ast.Name):
            return None
        items.append((t.id, found[0], found[1]))
    return index or fresh, items


def _reads_only(body: list[ast.AST], names: set[str]) -> bool:
    """No statement of ``body`` binds one of ``names`` (an assignment, a parameter, ``except
    ... as``, a def, an import, ``global``: each makes later reads another value)."""
    return not any(bound_names(b) & names for b in body)


def _read_outside(fn: ast.AST, loop: ast.For, names: set[str]) -> bool:
    inside = {id(n) for n in ast.walk(loop)}
    return any(isinstance(n, ast.Name) and n.id in names and id(n) not in inside
               for n in ast.walk(fn))


def unstacks_as_indexes(text: str, name: str) -> str:
    """The module with each loop of function ``name`` over a later axis's unstack written
    as an index loop (see the module's docstring); raises ``SourceEditError`` where
    there is none."""
    tree = parse(text)
    fn = find_function(tree, name)
    taken = names_in(fn) | {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    fresh = next(f"_tfperf_k{k}" for k in range(1, 100) if f"_tfperf_k{k}" not in taken)
    for node in ast.walk(fn):
        if isinstance(node, ast.For) and not node.orelse:
            head = _header(node.target, node.iter, fresh)
            body: list[ast.AST] = list(node.body)
        elif isinstance(node, (ast.ListComp, ast.GeneratorExp)) and len(node.generators) == 1 \
                and not node.generators[0].ifs and not node.generators[0].is_async:
            gen = node.generators[0]
            head = _header(gen.target, gen.iter, fresh)
            body = [node.elt]
        else:
            continue
        if head is None:
            continue
        index, items = head
        names = {index} | {n for item in items for n in item[:2]}
        if len({item[0] for item in items}) != len(items) or not _reads_only(body, names):
            continue  # (a name bound again inside: its reads are not all the item's)
        if isinstance(node, ast.For) and _read_outside(fn, node, {item[0] for item in items}):
            continue  # (a for statement leaves its item bound after it: the index loop not)
        pieces = {item: _piece(x, axis, index) for item, x, axis in items}
        edits: list[tuple[ast.AST, str]] = [
            (n, pieces[n.id]) for b in body for n in ast.walk(b)
            if isinstance(n, ast.Name) and n.id in pieces]
        sizes = [f"{x}.shape[{axis}]" for _, x, axis in items]
        # zip stops at the shortest: so does the index.
        stop = sizes[0] if len(sizes) == 1 else f"min({', '.join(sizes)})"
        target, it = (node.target, node.iter) if isinstance(node, ast.For) \
            else (node.generators[0].target, node.generators[0].iter)
        edits += [(target, index), (it, f"range({stop})")]
        out = replace_nodes(text, edits)
        try:  # the next such loop, read in the edited module
            return unstacks_as_indexes(out, name)
        except SourceEditError:
            return out
    raise SourceEditError("no loop over tf.unstack along an axis other than 0")

