"""Small questions about syntax alone, no name resolution: a call's keyword, the root name
of an attribute chain, the nodes a function body runs, whether a call is a method call."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from tfperf.lint.semantic import FUNCTION_NODES


def root_name(expr: ast.AST) -> str | None:
    """``np.linalg.norm`` → "np"; ``mean`` → "mean"; anything else → ``None``."""
    while type(expr) is ast.Attribute:
        expr = expr.value
    return expr.id if type(expr) is ast.Name else None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def keywords_of(call: ast.AST) -> dict[str, ast.expr]:
    if type(call) is not ast.Call:
        return {}
    return {k.arg: k.value for k in call.keywords if k.arg}


def method_call(call: ast.AST, *names: str) -> bool:
    return type(call) is ast.Call and type(call.func) is ast.Attribute \
        and call.func.attr in names


def body_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Every node run when ``fn`` is called (its body, not its defaults or decorators)."""
    if type(fn) is ast.Lambda:
        yield from ast.walk(fn.body)
    else:
        for stmt in fn.body:
            yield from ast.walk(stmt)


def own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of a function's body, not descending into nested functions or classes."""
    stack = list(getattr(fn, "body", ()))
    while stack:
        n = stack.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if type(c) not in (*FUNCTION_NODES, ast.ClassDef):
                stack.append(c)


def is_test_file(path: str) -> bool:
    """``test_*.py``, ``*_test.py`` or ``conftest.py``: code that runs once under a test
    runner, where a debug switch or a repeated call is the point (TFP312, TFP117)."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.startswith("test_") or name == "conftest.py" or name.endswith("_test.py")
