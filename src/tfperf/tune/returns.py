"""The user's return types, kept: a function that returns a Python ``float`` (``int``), a
NumPy scalar or NumPy arrays (alone or in a list, tuple or dict) still does so after a rewrite
or a ``tf.function`` that makes it return tensors. The candidate's function is renamed and a
function of the user's name and signature converts its result (``float(...)``,
``np.float64(...)``, ``np.asarray(...)``, ``tf.nest.map_structure(np.asarray, ...)`` for a
container) outside any graph, so the patch keeps the function's contract instead of being
rejected for changing it (held-out round 7's c06: a list of tensors for a list of arrays)."""

from __future__ import annotations

import ast
from collections.abc import Sequence

from tfperf.tune.kinds import Kinds
from tfperf.tune.source import find_function, parse, tf_alias

#: A leaf kind (tune/kinds.py) → the conversion written around the candidate ("np." is
#: NumPy's alias in the module).
_CONVERSIONS = {"Python float": "float", "Python int": "int", "NumPy array": "np.asarray"}


def return_conversion(kinds: Sequence[Kinds] | None) -> str | None:
    """The conversion every baseline call's result needs, spelled with ``np.``/``tf.`` (None:
    the calls disagree, the leaves are of several kinds, or tensors need none)."""
    if not kinds or any(k != kinds[0] for k in kinds) or not kinds[0]:
        return None
    leaves = {kind for _, kind in kinds[0]}
    if len(leaves) != 1:
        return None
    kind = leaves.pop()
    conversion = _CONVERSIONS.get(kind)
    if conversion is None and kind.startswith("NumPy "):  # a NumPy scalar: np.float32(...)
        conversion = "np." + kind.split(" ", 1)[1]
    if conversion is None:
        return None
    if kinds[0] == [("output", kind)]:
        return conversion
    return f"tf.nest.map_structure({conversion}, " + "{})"


def keep_return_types(text: str, name: str, conversion: str) -> str:
    """``text`` with ``name`` converting what it returns by ``conversion`` (from
    :func:`return_conversion`; unchanged when it cannot be spelled: NumPy or TensorFlow not
    imported)."""
    tree = parse(text)
    fn = find_function(tree, name)
    for module, alias in (("np.", _numpy_alias(tree)), ("tf.", tf_alias(tree))):
        if module in conversion:
            if alias is None:
                return text
            conversion = conversion.replace(module, alias + ".")
    if "{}" not in conversion:
        conversion += "({})"
    inner = f"_{name}_value"
    while any(isinstance(n, ast.FunctionDef) and n.name == inner for n in tree.body):
        inner = f"_{inner}"
    lines = text.splitlines(keepends=True)
    head = lines[fn.lineno - 1]
    lines[fn.lineno - 1] = head.replace(f"def {name}(", f"def {inner}(", 1)
    a = fn.args
    call = [p.arg for p in a.posonlyargs + a.args]
    call += [f"*{a.vararg.arg}"] if a.vararg else []
    call += [f"{p.arg}={p.arg}" for p in a.kwonlyargs]
    call += [f"**{a.kwarg.arg}"] if a.kwarg else []
    result = f"{inner}({', '.join(call)})"
    wrapper = (f"\n\ndef {name}({ast.unparse(a)}):\n"
               f"    # the user's return types, kept (the rewrite returns tensors)\n"
               f"    return {conversion.format(result)}\n")
    end = fn.end_lineno or fn.lineno
    if not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines.insert(end, wrapper)
    return "".join(lines)


def _numpy_alias(tree: ast.Module) -> str | None:
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numpy":
                    return alias.asname or "numpy"
    return None
