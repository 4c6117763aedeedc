"""Editing a module's source text the way tune's levers need: find a top-level function, set
its ``tf.function`` decorator, make sure TensorFlow is imported, replace a statement.

Every edit works on the whole module text and finds its place again by parsing it, so that
levers compose in any order: one lever's edit moves lines, the next one looks again.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

TF_MODULE = "tensorflow"


class SourceEditError(Exception):
    """The edit does not fit this source (the message says why, for the table)."""


def parse(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as exc:
        raise SourceEditError(f"the edited source does not parse: {exc.msg} "
                              f"(line {exc.lineno})") from None


def find_function(tree: ast.Module, name: str) -> ast.FunctionDef:
    """The module-level ``def name``; the last one wins, as at import."""
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not found:
        raise SourceEditError(f"no module-level function {name!r}")
    return found[-1]


def tf_alias(tree: ast.Module) -> str | None:
    """The name TensorFlow is bound to at module level (``tf``), if it is imported."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == TF_MODULE:
                    return a.asname or a.name
    return None


def ensure_tf(text: str) -> tuple[str, str]:
    """(text, alias): ``import tensorflow as tf`` added after the docstring and ``__future__``
    imports when the module does not import TensorFlow by name."""
    tree = parse(text)
    alias = tf_alias(tree)
    if alias:
        return text, alias
    line = 0
    for node in tree.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if (docstring and line == 0) or future:
            line = node.end_lineno or node.lineno
            continue
        break
    lines = text.splitlines(keepends=True)
    lines.insert(line, "import tensorflow as tf\n")
    return "".join(lines), "tf"


def is_tf_function_decorator(node: ast.expr, alias: str | None) -> bool:
    """``@tf.function`` or ``@tf.function(...)``."""
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Attribute) and target.attr == "function"
            and isinstance(target.value, ast.Name) and target.value.id in
            {alias or "tf", TF_MODULE})


def replace_lines(text: str, first: int, last: int, new: str) -> str:
    """Lines ``first..last`` (1-based, inclusive) replaced by ``new`` (whole lines)."""
    lines = text.splitlines(keepends=True)
    if new and not new.endswith("\n"):
        new += "\n"
    return "".join(lines[:first - 1]) + new + "".join(lines[last:])


def indent_of(text: str, line: int) -> str:
    row = text.splitlines()[line - 1]
    return row[:len(row) - len(row.lstrip())]


def set_tf_function(text: str, name: str, options: Mapping[str, bool | int | str]) -> str:
    """Make ``name`` a ``tf.function`` with ``options`` (keyword → Python value) set; an
    existing ``@tf.function`` decorator keeps its other arguments."""
    text, alias = ensure_tf(text)
    tree = parse(text)
    fn = find_function(tree, name)
    for dec in fn.decorator_list:
        if is_tf_function_decorator(dec, alias):
            call = dec if isinstance(dec, ast.Call) else ast.Call(func=dec, args=[],
                                                                   keywords=[])
            kept = [k for k in call.keywords if k.arg not in options]
            call.keywords = kept + [ast.keyword(arg=k, value=ast.Constant(v))
                                    for k, v in options.items()]
            new = "@" + ast.unparse(call if call.keywords or call.args else call.func)
            pad = indent_of(text, dec.lineno)
            return replace_lines(text, dec.lineno, dec.end_lineno or dec.lineno, pad + new)
    args = ", ".join(f"{k}={v!r}" for k, v in options.items())
    decorator = f"@{alias}.function" + (f"({args})" if args else "")
    # Innermost, right above `def`: other decorators (a registry like @tfperf.variant, a
    # logging wrapper) then see the tf.function, as they would if the user had written it.
    pad = indent_of(text, fn.lineno)
    lines = text.splitlines(keepends=True)
    lines.insert(fn.lineno - 1, pad + decorator + "\n")
    return "".join(lines)


def stmt_text(text: str, stmt: ast.stmt) -> str:
    """The statement's lines, dedented to its own column."""
    rows = text.splitlines()[stmt.lineno - 1:stmt.end_lineno]
    col = stmt.col_offset
    return "\n".join(r[col:] if r[:col].strip() == "" else r.lstrip() for r in rows)


def function_source(text: str, name: str) -> str:
    """The text of ``def name`` with its decorators."""
    tree = parse(text)
    fn = find_function(tree, name)
    first = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
    return "".join(text.splitlines(keepends=True)[first - 1:fn.end_lineno])


def _char_col(text_line: str, byte_col: int) -> int:
    """``ast`` columns count UTF-8 bytes; strings count characters."""
    return len(text_line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def replace_nodes(text: str, edits: list[tuple[ast.AST, str]]) -> str:
    """Each node's exact text replaced by the given text (nodes must not overlap)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = []
    for node, new in edits:
        a, b = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        s = starts[a - 1] + _char_col(lines[a - 1], node.col_offset)  # type: ignore[attr-defined]
        e = starts[b - 1] + _char_col(lines[b - 1], node.end_col_offset or 0)  # type: ignore[attr-defined]
        spans.append((s, e, new))
    for s, e, new in sorted(spans, reverse=True):
        text = text[:s] + new + text[e:]
    return text


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def is_within(node: ast.AST, outer: ast.AST) -> bool:
    """``node`` is ``outer`` or one of its descendants (both from one parse): an edit inside
    another edit's span would be overwritten by it."""
    return any(n is node for n in ast.walk(outer))


def bound_names(node: ast.AST) -> set[str]:
    """Every name ``node`` binds or unbinds, by any statement: an assignment target, ``del``,
    a parameter, a def or class, an import, ``except ... as``, ``global``/``nonlocal``, a
    match pattern's capture."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, ast.alias):
            out.add((n.asname or n.name).split(".")[0])
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
    return out


def uses_name(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def block_of(fn: ast.AST, node: ast.AST) -> list[ast.stmt] | None:
    """The statement list (a body, else or finally block) under ``fn`` that holds ``node``."""
    for n in ast.walk(fn):
        for f in ("body", "orelse", "finalbody"):
            block = getattr(n, f, None)
            if isinstance(block, list) and node in block:
                return block
    return None


def sum_of(s: ast.stmt) -> tuple[str, ast.expr] | None:
    """(total, term) of ``total = total + term`` or ``total += term``."""
    if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add) \
            and isinstance(s.target, ast.Name):
        return s.target.id, s.value
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
            and isinstance(s.value, ast.BinOp) and isinstance(s.value.op, ast.Add) \
            and isinstance(s.value.left, ast.Name) and s.value.left.id == s.targets[0].id:
        return s.targets[0].id, s.value.right
    return None


def index_uses(node: ast.AST, index: str) -> tuple[list[ast.Subscript], bool]:
    """(``X[index]`` subscripts of plain names in ``node``, whether ``index`` is also used
    any other way)."""
    subs = [n for n in ast.walk(node) if isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name) and isinstance(n.slice, ast.Name)
            and n.slice.id == index]
    inside = {id(s.slice) for s in subs}
    other = any(isinstance(n, ast.Name) and n.id == index and id(n) not in inside
                for n in ast.walk(node))
    return subs, other


def range_stop(loop: ast.For) -> ast.expr | None:
    """``STOP`` of ``for _ in range(STOP)``; None for any other iterable."""
    it = loop.iter
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
            and len(it.args) == 1 and not it.keywords:
        return it.args[0]
    return None


def whole_axis(stop: ast.expr, name: str) -> bool:
    """``STOP`` is the length of axis 0 of ``name``: ``len(x)``, ``x.shape[0]``."""
    text = ast.unparse(stop).replace(" ", "")
    return text in {f"len({name})", f"{name}.shape[0]"}


def sliced(name: str, stop: ast.expr) -> str:
    """``name`` cut to the loop's range (``name`` itself when the range is its length)."""
    return name if whole_axis(stop, name) else f"{name}[:{ast.unparse(stop)}]"
