"""Per-row host values gathered into Python lists as one batched transfer (issue 26; held-out
round 5's c07: ``for i in range(n): lst.append(int(tf.argmax(p[i]).numpy()))``, one host
round trip per row and per list).

:func:`host_lists` rewrites such a loop so that the loop model reads it: each list's values
stay tensors in the loop (``.numpy()``, ``int()``, ``float()``, ``bool()``, ``.item()``,
``.tolist()`` left out), are stacked after it and copied to the host once
(``lst = tf.stack(rows).numpy().astype(int).tolist()``: the same Python values as the
per-row conversions). A loop filling several lists becomes one loop per list, each with only
the statements its list needs, so that each is a loop whose values leave it one per
iteration, which the loop levers batch (``tf.argmax(p, axis=-1)`` once).
"""

from __future__ import annotations

import ast
import copy

from tfperf.tune.source import (
    SourceEditError,
    block_of,
    find_function,
    names_in,
    parse,
    replace_nodes,
)

ROWS = "_tfperf_rows_"
#: Python conversions of one host value and the conversion of the whole list that gives
#: the same Python values ("" = the NumPy rows themselves).
CASTS = {"int": "int", "float": "float", "bool": "bool"}
#: The names NumPy is imported as (``np.array(t)`` of a tensor is its host copy).
NUMPY = frozenset({"np", "numpy"})


def _method(node: ast.AST, attr: str) -> ast.expr | None:
    """``x`` of ``x.attr()`` (no arguments)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == attr and not node.args and not node.keywords:
        return node.func.value
    return None


def _unhosted(node: ast.expr) -> tuple[ast.expr, str] | None:
    """(the tensor, how the list of its values is converted) of a host conversion of one
    value: ``int(t)``, ``float(t.numpy())``, ``t.numpy()``, ``np.array(t)``,
    ``t.numpy().item()``…; None when ``node`` is no host conversion."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in CASTS and len(node.args) == 1 and not node.keywords:
        inner = _unhosted(node.args[0])
        return (inner[0] if inner else node.args[0]), CASTS[node.func.id]
    for attr in ("item", "tolist"):
        got = _method(node, attr)
        if got is not None:
            inner = _unhosted(got)
            return (inner[0] if inner else got), "tolist"
    got = _method(node, "numpy")
    if got is not None:
        return got, ""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "round" \
            and len(node.args) == 2 and not node.keywords \
            and isinstance(node.args[1], ast.Constant) and type(node.args[1].value) is int:
        inner = _unhosted(node.args[0])  # round(v, 3) of each host scalar, as it was
        cast = inner[1] if inner and inner[1] in CASTS else ""
        return (inner[0] if inner else node.args[0]), f"round:{node.args[1].value}:{cast}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in ("array", "asarray") and isinstance(node.func.value, ast.Name) \
            and node.func.value.id in NUMPY and len(node.args) == 1 and not node.keywords:
        return node.args[0], ""  # np.array(t): the host copy .numpy() makes
    return None


def _list_of(rows: str, how: str, tf: str) -> str:
    """The Python list the per-row conversions ``how`` build, from the stacked ``rows``."""
    host = f"{tf}.stack({rows}).numpy()"
    if how == "tolist":
        return f"{host}.tolist()"
    if how.startswith("round:"):
        _, digits, cast = how.split(":")
        one = f"{cast}(v)" if cast else "v"
        return f"list(map(lambda v: round({one}, {digits}), {host}))"  # no comprehension
    if how:  # int(), float(), bool() of each row as NumPy's astype of all: the same values
        return f"{host}.astype({how}).tolist()"
    return f"list({host})"


def _split(text: str, fn: ast.FunctionDef, loop: ast.For, tf: str) -> list[tuple[ast.AST, str]]:
    """The edits that turn ``loop`` into one loop per host list (none if it is not such a
    loop)."""
    block = block_of(fn, loop)
    if block is None or loop.orelse:
        return []
    appends: list[tuple[str, ast.stmt, ast.expr, str]] = []  # (list, stmt, tensor, how)
    assigns: list[ast.Assign] = []
    for s in loop.body:
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) \
                and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "append" \
                and isinstance(s.value.func.value, ast.Name) and len(s.value.args) == 1 \
                and not s.value.keywords:
            got = _unhosted(s.value.args[0])
            if got is None:
                return []
            appends.append((s.value.func.value.id, s, got[0], got[1]))
        elif isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets):
            assigns.append(s)
        else:
            return []
    lists = [a[0] for a in appends]
    if not appends or len(set(lists)) != len(lists):
        return []
    stored = {t.id for s in assigns for t in s.targets if isinstance(t, ast.Name)}
    if stored & set(lists) or any(set(lists) & names_in(s.value) for s in assigns) \
            or any(set(lists) & names_in(a[2]) for a in appends):
        return []
    pos = block.index(loop)
    after = [n for s in block[pos + 1:] for n in ast.walk(s) if isinstance(n, ast.Name)]
    loop_names = names_in(loop.target) | stored
    if loop_names & {n.id for n in after}:
        return []  # the body's names are read after the loop: splitting would change them
    inits: dict[str, ast.Assign] = {}
    for name in lists:
        init = next((s for s in reversed(block[:pos]) if isinstance(s, ast.Assign)
                     and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                     and s.targets[0].id == name), None)
        if init is None or not (isinstance(init.value, ast.List) and not init.value.elts):
            return []
        if any(name in names_in(s) for s in block[block.index(init) + 1:pos]):
            return []
        inits[name] = init
    pad = " " * loop.col_offset
    head = f"for {ast.get_source_segment(text, loop.target)} in " \
           f"{ast.get_source_segment(text, loop.iter)}:"
    out: list[str] = []
    for name, stmt, tensor, how in appends:
        need = set(names_in(tensor))
        body: list[str] = []
        for s in reversed(loop.body[:loop.body.index(stmt)]):
            if isinstance(s, ast.Assign) and need & {t.id for t in s.targets
                                                      if isinstance(t, ast.Name)}:
                body.insert(0, _unhosted_assign(text, s))
                need |= names_in(s.value)
        body.append(f"{ROWS}{name}.append({ast.get_source_segment(text, tensor)})")
        lines = [head] + ["    " + r for b in body for r in b.splitlines()]
        lines.append(f"{name} = {_list_of(ROWS + name, how, tf)}")
        out.append(("\n" + pad).join(lines))
    edits: list[tuple[ast.AST, str]] = [(inits[n], f"{ROWS}{n} = []") for n in lists]
    edits.append((loop, ("\n" + pad).join(out)))
    return edits


def _plain_store(s: ast.stmt) -> bool:
    """``name = value`` or ``name += value`` (a counter's step)."""
    if isinstance(s, ast.Assign):
        return all(isinstance(t, ast.Name) for t in s.targets)
    return isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name)


def _one_list(text: str, fn: ast.FunctionDef, loop: ast.While, tf: str) -> str | None:
    """A counter-driven ``while`` loop appending host values to one list, its values kept
    tensors and copied to the host once after it (None if it is not such a loop)."""
    block = block_of(fn, loop)
    if block is None or loop.orelse:
        return None
    appends = [s for s in loop.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
               and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "append"
               and isinstance(s.value.func.value, ast.Name) and len(s.value.args) == 1
               and not s.value.keywords]
    if len(appends) != 1 or not all(s in appends or _plain_store(s) for s in loop.body):
        return None
    call = appends[0].value
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
        and isinstance(call.func.value, ast.Name)
    name, got = call.func.value.id, _unhosted(call.args[0])
    if got is None or any(name in names_in(s) for s in loop.body if s is not appends[0]) \
            or name in names_in(loop.test):
        return None
    pos = block.index(loop)
    init = next((s for s in reversed(block[:pos]) if isinstance(s, ast.Assign)
                 and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                 and s.targets[0].id == name), None)
    if init is None or not (isinstance(init.value, ast.List) and not init.value.elts) \
            or any(name in names_in(s) for s in block[block.index(init) + 1:pos]):
        return None
    edits: list[tuple[ast.AST, str]] = [(init, f"{ROWS}{name} = []"), (
        appends[0], f"{ROWS}{name}.append({ast.get_source_segment(text, got[0])})")]
    edits += [(s, _unhosted_assign(text, s)) for s in loop.body
              if isinstance(s, ast.Assign) and _unhosted(s.value) is not None]
    rows = text.splitlines(keepends=True)
    rows.insert(loop.end_lineno or loop.lineno,
                f"{' ' * loop.col_offset}{name} = {_list_of(ROWS + name, got[1], tf)}\n")
    return replace_nodes("".join(rows), edits)


def _unhosted_assign(text: str, s: ast.Assign) -> str:
    """The assignment with its host conversion left out (``v = t.numpy()`` → ``v = t``)."""
    got = _unhosted(s.value)
    targets = " = ".join(ast.get_source_segment(text, t) or "" for t in s.targets)
    value = got[0] if got else s.value
    seg = ast.get_source_segment(text, value) or ast.unparse(value)
    return f"{targets} = {seg}"


def _comprehension(text: str, comp: ast.ListComp, tf: str) -> list[tuple[ast.AST, str]]:
    """``[int(f(r)) for r in xs]`` as ``tf.stack([f(r) for r in xs]).numpy().astype(int)...``."""
    got = _unhosted(comp.elt)
    if got is None:
        return []
    tensor, how = got
    rows = copy.deepcopy(comp)
    rows.elt = tensor
    return [(comp, _list_of(ast.unparse(rows), how, tf))]


def host_lists(text: str, name: str, tf: str) -> str:
    """Every ``for`` loop and list comprehension of ``name`` that gathers host values of
    tensors into Python lists, rewritten as one loop per list of tensors stacked and copied
    to the host once."""
    try:
        fn = find_function(parse(text), name)
    except SourceEditError:
        return text
    for node in ast.walk(fn):
        if isinstance(node, ast.For):
            edits = _split(text, fn, node, tf)
        elif isinstance(node, ast.ListComp) and len(node.generators) == 1:
            edits = _comprehension(text, node, tf)
        elif isinstance(node, ast.While):
            new = _one_list(text, fn, node, tf)
            if new is not None:
                return host_lists(new, name, tf)
            continue
        else:
            continue
        if edits:
            return host_lists(replace_nodes(text, edits), name, tf)
    return text
