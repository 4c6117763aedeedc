"""What the module imports and mentions: cheap text and import tests, made once per module,
that let rules skip modules where nothing can match before resolving any name."""

from __future__ import annotations

import ast

from tfperf.lint.semantic import Context


def source_mentions(ctx: Context, *words: str) -> bool:
    """Whether the module's text contains any of ``words``: a cheap filter before any name
    resolution (memoised per module and word set)."""
    return ctx.cached("text:" + "|".join(words), lambda: any(w in ctx.source for w in words))


def top_level_imports(ctx: Context, module: str) -> dict[str, str]:
    """Module-level names bound by importing from ``module`` (``import numpy as np`` →
    ``{"np": "numpy"}``, ``from numpy import mean as m`` → ``{"m": "numpy.mean"}``), from the
    module's top-level statements only (cheap: no tree walk)."""
    def compute() -> dict[str, str]:
        out: dict[str, str] = {}
        for stmt in ctx.tree.body:
            if type(stmt) is ast.Import:
                for a in stmt.names:
                    if a.name == module or a.name.startswith(module + "."):
                        out[a.asname or a.name.split(".", 1)[0]] = a.name if a.asname \
                            else a.name.split(".", 1)[0]
            elif type(stmt) is ast.ImportFrom and not stmt.level and stmt.module \
                    and (stmt.module == module or stmt.module.startswith(module + ".")):
                for a in stmt.names:
                    out[a.asname or a.name] = f"{stmt.module}.{a.name}"
        return out
    return ctx.cached("imports:" + module, compute)


def from_imports_tf(ctx: Context) -> bool:
    """The module has a ``from tensorflow... import`` (cheap text test, cached): only then
    can a bare name be a TensorFlow API under another name."""
    return ctx.cached("from_imports_tf", lambda: "from tensorflow" in ctx.source)


# Frameworks whose tensors also have ``.numpy()``: there, an unknown receiver may be theirs.
_OTHER_FRAMEWORKS = frozenset({"torch", "jax", "paddle", "mxnet", "cupy", "oneflow"})


def other_framework_imported(ctx: Context) -> bool:
    """The module imports a framework (PyTorch, JAX...) whose tensors also have ``.numpy()``."""
    def compute() -> bool:
        if not any(w in ctx.source for w in _OTHER_FRAMEWORKS):
            return False
        for stmt in ctx.nodes_of(ast.Import, ast.ImportFrom):
            if type(stmt) is ast.Import:
                if any(a.name.split(".", 1)[0] in _OTHER_FRAMEWORKS for a in stmt.names):
                    return True
            elif type(stmt) is ast.ImportFrom and not stmt.level and stmt.module \
                    and stmt.module.split(".", 1)[0] in _OTHER_FRAMEWORKS:
                return True
        return False
    return ctx.cached("other_framework", compute)


def imported_from(ctx: Context, name: ast.AST) -> tuple[str, str] | None:
    """(module, attribute) a name read here was imported as: ``from data import TABLE`` →
    ("data", "TABLE"), ``from ._model import make`` → ("._model", "make"); None for
    anything else (``import x`` binds a module, not one of its names)."""
    if type(name) is not ast.Name:
        return None
    b = ctx.binding(name)
    if b is None or b.kind != "import":
        return None
    node = b.value
    if type(node) is ast.ImportFrom:
        spec = "." * (node.level or 0) + (node.module or "")
        for alias in node.names:
            if (alias.asname or alias.name) == name.id and alias.name != "*":
                return (spec, alias.name) if spec else None
        return None
    if b.qualname and "." in b.qualname:
        spec, attr = b.qualname.rsplit(".", 1)
        return spec, attr
    return None
