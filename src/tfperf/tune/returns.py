"""The user's scalar return type, kept: a function that returns a Python ``float`` (``int``)
or a NumPy ``float64`` still does so after a rewrite or a ``tf.function`` that makes it return
a 0-d tensor. The candidate's function is renamed and a function of the user's name and
signature converts its result (``float(...)``, ``np.float64(...)``) outside any graph, so
the patch keeps the function's contract instead of being rejected for changing it."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfperf.tune.source import find_function, parse

#: The baseline's leaf type → the conversion written around the candidate (None: numpy's).
_CONVERSIONS: dict[type, str | None] = {float: "float", int: "int", np.float64: None}


def scalar_type(returns: Sequence[Any] | None) -> type | None:
    """The type every baseline call returned, when it is a convertible scalar."""
    kinds = {type(r) for r in returns or ()}
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    return kind if kind in _CONVERSIONS else None


def keep_scalar_return(text: str, name: str, kind: type) -> str:
    """``text`` with ``name`` converting what it returns to ``kind`` (unchanged when the
    conversion cannot be spelled: NumPy not imported)."""
    tree = parse(text)
    fn = find_function(tree, name)
    conversion = _CONVERSIONS[kind]
    if conversion is None:
        alias = _numpy_alias(tree)
        if alias is None:
            return text
        conversion = f"{alias}.{kind.__name__}"
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
    wrapper = (f"\n\ndef {name}({ast.unparse(a)}):\n"
               f"    # the user's return type, kept (the rewrite returns a 0-d tensor)\n"
               f"    return {conversion}({inner}({', '.join(call)}))\n")
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
