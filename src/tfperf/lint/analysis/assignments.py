"""Where a value comes from: the value a name was last assigned (when that assignment surely
ran before the read), statement order within a block, and the reads an assignment feeds."""

from __future__ import annotations

import ast

from tfperf.lint.semantic import Context


def assigned_value(ctx: Context, expr: ast.AST) -> ast.expr | None:
    """The value a plain name was last assigned (``y = <value>``), or ``None``."""
    if type(expr) is not ast.Name:
        return None
    b = ctx.binding(expr)
    if b is None or b.kind != "assign":
        return None
    parent = ctx.parent(b.value)
    # Only `y = value` with one plain target; not tuple unpacking or chained targets.
    if type(parent) is ast.Assign and (len(parent.targets) != 1
                                       or type(parent.targets[0]) is not ast.Name):
        return None
    if isinstance(parent, ast.stmt) and not precedes(ctx, parent, expr):
        return None
    return b.value


def precedes(ctx: Context, stmt: ast.stmt, use: ast.AST) -> bool:
    """``stmt`` surely ran before ``use``: it comes earlier in the same block as one of
    ``use``'s enclosing statements. An assignment in a sibling ``if``/``elif`` branch, or
    later in a loop body (a previous iteration), does not count."""
    holder = ctx.parent(stmt)
    block = next((getattr(holder, f) for f in ("body", "orelse", "finalbody", "handlers")
                  if stmt in (getattr(holder, f, None) or ())), None)
    if block is None:
        return False
    index = block.index(stmt)
    for a in ctx.ancestors(use):
        if ctx.parent(a) is holder and a in block:
            return block.index(a) > index
    return False


def loads_bound_by(ctx: Context, scope: ast.AST, name: str, value: ast.AST) -> list[ast.Name]:
    """Every read of ``name`` in ``scope`` that refers to the assignment of ``value``."""
    out = []
    for n in ast.walk(scope):
        if type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load:
            b = ctx.binding(n)
            if b is not None and b.kind == "assign" and b.value is value:
                out.append(n)
    return out


_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_EXITS = (ast.Return, ast.Raise)


def _block_of(holder: ast.AST, node: ast.AST) -> tuple[str, list[ast.stmt]] | None:
    """The block (field name, statements) of ``holder`` that holds ``node`` directly."""
    for f in _BLOCK_FIELDS:
        block = getattr(holder, f, None)
        if type(block) is list and node in block:
            return f, block
    return None


def block_holding(ctx: Context, stmt: ast.stmt) -> list[ast.stmt] | None:
    """The statement list (a ``body``, ``orelse`` or ``finalbody``) that holds ``stmt``."""
    found = _block_of(ctx.parent(stmt), stmt)  # type: ignore[arg-type]
    return found[1] if found is not None else None


def leaves_after(ctx: Context, stmt: ast.stmt) -> bool:
    """A ``return``/``break``/``raise`` follows ``stmt`` in its block: what ``stmt`` sets
    does not reach another iteration of an enclosing loop."""
    block = block_holding(ctx, stmt)
    return block is not None and any(type(s) in (ast.Return, ast.Break, ast.Raise)
                                     for s in block[block.index(stmt) + 1:])


def may_reach(ctx: Context, stmt: ast.stmt, use: ast.AST) -> bool:
    """Whether one run can execute ``stmt`` and then reach ``use``: ``False`` when they sit
    in mutually exclusive branches (``if``/``else``, two ``except`` handlers, a handler and
    the ``try``'s ``else``), or when every path from ``stmt`` leaves by ``return``/``raise``
    before it gets out of the block where ``use`` is not. Conservative (``True``) otherwise:
    a loop may run ``stmt`` in an earlier iteration."""
    use_chain = [use, *ctx.ancestors(use)]
    on_use_side = {id(n) for n in use_chain}
    child: ast.AST = stmt
    for holder in ctx.ancestors(stmt):
        if id(holder) in on_use_side:
            # `holder` is the nearest common ancestor: compare the two branches there.
            use_child = use_chain[use_chain.index(holder) - 1] if holder is not use else use
            mine = _block_of(holder, child)
            theirs = _block_of(holder, use_child)
            th = type(holder)
            if th is ast.If and mine and theirs and mine[0] != theirs[0]:
                return False
            if th in (ast.Try, getattr(ast, "TryStar", ast.Try)):
                handlers = holder.handlers
                if child in handlers and (use_child in handlers or (
                        theirs is not None and theirs[0] == "orelse")):
                    return child is use_child
            return True
        found = _block_of(holder, child)
        if found is not None:
            block = found[1]
            if any(type(s) in _EXITS for s in block[block.index(child) + 1:]):  # type: ignore[arg-type]
                return False  # this block always leaves the function before `use`
        child = holder
    return True
