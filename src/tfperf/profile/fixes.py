"""The automatic fixes ``--try-fixes`` applies to a copy of a script: edits of its source.

* ``@tf.function`` on the training step: a step function gets the decorator; a step written
  inline in its loop is moved into a function (defined once, before the outermost loop around
  it) and called from the loop. What the step reads that changes from one iteration to the
  next becomes a parameter (a value read from a global at trace time would be frozen into the
  graph); what it binds that the code reads afterwards is returned.
* lint's safe fixes on the script (``tfperf lint --fix``'s, selected rules only).

Each returns a :class:`Patch` (the new source, or ``None`` with the reason no patch is made).
Nothing here writes a file or runs the code. A step that does host work (``.numpy()``,
``float(t)``, ``print``, NumPy calls, ``model.predict``) is not compiled: under
``tf.function`` these fail or run once, at trace time.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Sequence
from dataclasses import dataclass

from tfperf.lint.semantic import Context
from tfperf.profile.step_shape import read_shape
from tfperf.profile.training_step import TrainingStep

_HOST_ATTRS = frozenset({"numpy", "predict", "predict_on_batch", "evaluate", "fit", "item"})
_HOST_BUILTINS = frozenset({"float", "int", "bool", "print", "input", "open", "len"})
_STEP_NAMES = ("train_step", "tfperf_train_step")
_CONVERT_NAMES = ("tfperf_host_input", "tfperf_host_input_")


@dataclass(frozen=True)
class Patch:
    """One automatic fix: ``source`` is the patched script, or None with ``reason``."""

    name: str  # "tf.function on the training step"
    description: str  # what the edit does, in a line
    source: str | None
    reason: str = ""  # why no patch, when source is None
    function: str | None = None  # the compiled step function's name

    def diff(self, original: str, path: str) -> str:
        if self.source is None:
            return ""
        return "".join(difflib.unified_diff(
            original.splitlines(keepends=True), self.source.splitlines(keepends=True),
            f"a/{path}", f"b/{path} ({self.name})"))


def host_work(ctx: Context, nodes: list[ast.stmt]) -> str | None:
    """What in the step needs eager execution, named; None when nothing does."""
    for stmt in nodes:
        for n in ast.walk(stmt):
            if type(n) is not ast.Call:
                continue
            func = n.func
            if type(func) is ast.Attribute and func.attr in _HOST_ATTRS:
                return f".{func.attr}()"
            if type(func) is ast.Name and func.id in _HOST_BUILTINS and \
                    ctx.binding(func) is None:
                return f"{func.id}()"
            q = ctx.qualname(func)
            if q is not None and q.startswith("numpy."):
                return "np." + q[len("numpy."):] + "()"
    return None


def tf_function_on_step(source: str, path: str, step: TrainingStep) -> Patch:
    """``@tf.function`` on the step: decorate its function, or move the inline step into one."""
    name = "tf.function on the training step"
    tree = ast.parse(source, path)
    ctx = Context(tree, source, path)
    tf = ctx.module_alias("tensorflow")
    if tf is None:
        return Patch(name, "", None, "the script does not `import tensorflow as <name>`")
    if step.compiled:
        return Patch(name, "", None, "the step is already a tf.function")
    shape = read_shape(ctx, tree, step)
    if shape.env is not None:  # named before any NumPy call: it is what keeps it eager
        return Patch(name, "", None, f"the step runs the environment ({shape.env}), which "
                                     f"stays in Python")
    if step.kind == "function":
        return _decorate(source, path, ctx, tree, step, tf, name)
    if step.kind == "inline":
        return _extract(source, ctx, tree, step, tf, name)
    return Patch(name, "", None, "the steps are marked by the user, not found as a training step")


def _decorate(source: str, path: str, ctx: Context, tree: ast.Module, step: TrainingStep,
              tf: str, name: str) -> Patch:
    fn = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name == step.function and n.lineno <= step.last_line
               and (n.end_lineno or n.lineno) >= step.first_line), None)
    if fn is None:
        return Patch(name, "", None, f"no function {step.function} at line {step.first_line}")
    if fn.decorator_list:
        return Patch(name, "", None, f"{step.function} has decorators of its own")
    host = host_work(ctx, list(fn.body))
    if host is not None:
        return Patch(name, "", None, f"the step calls {host}, which needs eager tensors: move "
                                     f"it out of the step")
    lines = source.splitlines(keepends=True)
    indent = lines[fn.lineno - 1][:fn.col_offset]
    lines.insert(fn.lineno - 1, f"{indent}@{tf}.function\n")
    return Patch(name, f"decorate {step.function}() (line {fn.lineno}) with @{tf}.function",
                 "".join(lines), function=step.function)


# -- the inline step, moved into a function -------------------------------------------------


def _names(nodes: Sequence[ast.AST]) -> tuple[set[str], set[str]]:
    """(names loaded, names stored) by ``nodes`` in their own scope: comprehensions, lambdas
    and nested defs keep their targets to themselves."""
    loaded: set[str] = set()
    stored: set[str] = set()

    def visit(node: ast.AST, inner: frozenset[str]) -> None:
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            targets = {n.id for g in node.generators
                       for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            inner = inner | targets
        elif isinstance(node, ast.Lambda):
            inner = inner | {a.arg for a in node.args.args}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stored.add(node.name)
            return
        if type(node) is ast.Name and node.id not in inner:
            (loaded if type(node.ctx) is ast.Load else stored).add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    for stmt in nodes:
        visit(stmt, frozenset())
    return loaded, stored


def _blocking(block: list[ast.stmt]) -> str | None:
    """Statements that cannot move into a function as they are; None when none."""
    for stmt in block:
        for n in ast.walk(stmt):
            if type(n) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                continue
            if type(n) in (ast.Return, ast.Yield, ast.YieldFrom, ast.Await):
                return f"a `{type(n).__name__.lower()}` in the step"
            if type(n) in (ast.Global, ast.Nonlocal, ast.Delete):
                return f"a `{type(n).__name__.lower()}` statement in the step"
    for stmt in block:  # break/continue that leave the step loop (not an inner loop's)
        if _leaves_loop(stmt):
            return "a `break` or `continue` of the step loop inside the step"
    return None


def _leaves_loop(node: ast.AST) -> bool:
    if type(node) in (ast.Break, ast.Continue):
        return True
    if type(node) in (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef,
                      ast.ClassDef):
        return False
    return any(_leaves_loop(c) for c in ast.iter_child_nodes(node))


def _extract(source: str, ctx: Context, tree: ast.Module, step: TrainingStep, tf: str,
             name: str) -> Patch:
    loop = next((n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))
                 and n.lineno == step.loop_line and n.col_offset == step.loop_col), None)
    if loop is None:
        return Patch(name, "", None, f"no loop at line {step.loop_line}")
    block = [s for s in loop.body
             if s.lineno >= step.first_line and (s.end_lineno or s.lineno) <= step.last_line]
    if not block:
        return Patch(name, "", None, "the step's statements were not found in its loop")
    why = _blocking(block)
    if why is None:
        host = host_work(ctx, block)
        if host is not None:
            why = f"the step calls {host}, which needs eager tensors: move it out of the step"
    if why is not None:
        return Patch(name, "", None, why)
    # The outermost loop around the step loop in the same scope: the function is defined
    # once, before it (defined inside an epoch loop it would be re-created, and retraced,
    # every epoch).
    outer: ast.stmt = loop
    for parent in ctx.ancestors(loop):
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module,
                               ast.Lambda)):
            break
        if isinstance(parent, (ast.For, ast.While, ast.AsyncFor)):
            outer = parent
    scope = ctx.scope_of(loop)
    loaded, stored = _names(block)
    # What changes between iterations: every name bound inside the outer loop outside the
    # step (the loop targets included), and what the step itself updates from its old value.
    outside = [s for s in ast.walk(outer) if s is not outer and isinstance(s, ast.stmt)
               and not any(s is b or _inside(s, b) for b in block)]
    _, varying = _names([s for s in outside if _is_simple(s)])
    varying |= _targets(outer)
    for s in ast.walk(outer):
        if isinstance(s, (ast.For, ast.AsyncFor)) and not any(_inside(s, b) for b in block):
            varying |= {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
    free = _free_reads(block, set())
    carried = free & stored  # `total = total + loss`: read, then rebound, by the step
    params = sorted(free & (varying | stored))
    counters = _counters(outer) & set(params)
    if counters:
        return Patch(name, "", None, f"the step reads the loop counter {sorted(counters)[0]}: "
                                     f"a Python number per call would retrace every step")
    used_after = _loaded_outside(scope, block)
    returns = sorted((stored & used_after) | carried
                     | ({step.loss} if step.loss in stored else set()))
    taken = loaded | stored | _bound(tree)
    fname = next((n for n in _STEP_NAMES if n not in taken), None)
    if fname is None:
        return Patch(name, "", None, "no free name for the step function")
    # A step inside a function (a method called every few env steps, say) is defined once
    # at module level: defined in the function, it would be re-created and retraced per call.
    # The function's own names the step reads (``self`` included) become parameters.
    at = outer
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        top = [a for a in ctx.ancestors(scope) if not isinstance(a, ast.Module)]
        if all(isinstance(a, ast.ClassDef) for a in top):
            if "super" in loaded:
                return Patch(name, "", None, "the step calls super(), which needs its method")
            at = top[-1] if top and isinstance(top[-1], ast.stmt) else scope
            args = scope.args
            own = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
            own |= _names(scope.body)[1]
            params = sorted(set(params) | (free & own))
            if args.args and args.args[0].arg in params:  # self first, as in a method
                params.remove(args.args[0].arg)
                params.insert(0, args.args[0].arg)
    lines = source.splitlines(keepends=True)
    first, last = block[0], block[-1]
    end = last.end_lineno or last.lineno
    # NumPy arrays indexed by what the loop gives (``state_arr[batch]``) are indexed before
    # the call: a traced tensor cannot index a NumPy array.
    hoisted = _host_indexing(block, set(params), taken)
    convert = next((n for n in _CONVERT_NAMES if n not in taken), None) if hoisted else None
    if hoisted and convert is None:
        return Patch(name, "", None, "no free name for the host-input conversion")
    body = _replace(lines[first.lineno - 1:end], first.lineno, hoisted)
    args_in = {p: p for p in params}
    if hoisted:
        inside = {id(n) for node, _, _ in hoisted for n in ast.walk(node)}
        still = {n.id for b in block for n in ast.walk(b)
                 if type(n) is ast.Name and id(n) not in inside}
        args_in = {p: p for p in params if p in still}
        args_in |= {new: f"{convert}({text})" for _, new, text in hoisted}
    body_indent = lines[first.lineno - 1][:first.col_offset]
    outer_indent = lines[at.lineno - 1][:at.col_offset]
    shift = len(body_indent) - len(outer_indent) - 4
    moved = [_reindent(line, shift) for line in body]
    ret = f"{outer_indent}    return {', '.join(returns)}\n" if returns else ""
    helper = [f"{outer_indent}def {convert}(x):  # tfperf: NumPy float64 meets float32 tensors "
              f"as float32 in eager code\n",
              f"{outer_indent}    x = {tf}.convert_to_tensor(x)\n",
              f"{outer_indent}    return {tf}.cast(x, {tf}.float32) if x.dtype == "
              f"{tf}.float64 else x\n", "\n"] if convert else []
    definition = (helper + [f"{outer_indent}@{tf}.function\n",
                            f"{outer_indent}def {fname}({', '.join(args_in)}):\n"]
                  + moved + ([ret] if ret else []) + ["\n"])
    call = f"{fname}({', '.join(args_in.values())})"
    if returns:
        call = f"{', '.join(returns)} = {call}"
    new = (lines[:at.lineno - 1] + definition + lines[at.lineno - 1:first.lineno - 1]
           + [f"{body_indent}{call}\n"] + lines[end:])
    text = "".join(new)
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return Patch(name, "", None, f"the moved step does not parse ({exc.msg}): left as is")
    where = "at module level" if at is not outer else "once"
    sliced = (f"; the NumPy indexing by the loop ({', '.join(t for _, _, t in hoisted)}) is done "
              f"before the call" if hoisted else "")
    return Patch(name, (f"move the step (lines {first.lineno}–{last.end_lineno}) into "
                        f"@{tf}.function {fname}({', '.join(args_in)}), defined {where} before "
                        f"line {at.lineno}, and call it from the loop{sliced}"),
                 text, function=fname)


def _host_indexing(block: list[ast.stmt], params: set[str],
                   taken: set[str]) -> list[tuple[ast.Subscript, str, str]]:
    """``array[i]`` in the step where both are inputs and the array is not rebound by the
    step: (node, the parameter that replaces it, its text)."""
    _, stored = _names(block)
    out: list[tuple[ast.Subscript, str, str]] = []
    names: dict[str, str] = {}
    for stmt in block:
        for n in ast.walk(stmt):
            if type(n) is not ast.Subscript or type(n.ctx) is not ast.Load \
                    or type(n.value) is not ast.Name or type(n.slice) is not ast.Name \
                    or n.value.id not in params or n.slice.id not in params \
                    or n.value.id in stored or n.lineno != n.end_lineno:
                continue
            text = f"{n.value.id}[{n.slice.id}]"
            if text not in names:
                new = f"{n.value.id}_{n.slice.id}"
                while new in taken or new in names.values():
                    new += "_"
                names[text] = new
            out.append((n, names[text], text))
    return out


def _replace(body: list[str], first_line: int,
             hoisted: list[tuple[ast.Subscript, str, str]]) -> list[str]:
    """``body`` (lines from ``first_line``) with each hoisted subscript replaced by its name."""
    raw = [line.encode("utf-8") for line in body]
    for node, new, _ in sorted(hoisted, key=lambda h: (h[0].lineno, h[0].col_offset),
                               reverse=True):
        i = node.lineno - first_line
        end = node.end_col_offset or node.col_offset
        raw[i] = raw[i][:node.col_offset] + new.encode("utf-8") + raw[i][end:]
    return [line.decode("utf-8") for line in raw]


def _inside(node: ast.AST, container: ast.AST) -> bool:
    return any(n is node for n in ast.walk(container))


def _is_simple(stmt: ast.stmt) -> bool:
    """A statement whose own targets count (compound statements' bodies are walked apart)."""
    return type(stmt) in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.With, ast.Import,
                          ast.ImportFrom, ast.Expr)


def _targets(loop: ast.AST) -> set[str]:
    target = getattr(loop, "target", None)
    return {n.id for n in ast.walk(target) if type(n) is ast.Name} if target else set()


def _counters(outer: ast.AST) -> set[str]:
    """Loop variables that count: ``for i in range(...)``, ``for i, x in enumerate(...)``."""
    out = set()
    for n in ast.walk(outer):
        if type(n) is not ast.For or type(n.iter) is not ast.Call \
                or type(n.iter.func) is not ast.Name:
            continue
        if n.iter.func.id == "range" and type(n.target) is ast.Name:
            out.add(n.target.id)
        elif n.iter.func.id == "enumerate" and type(n.target) is ast.Tuple and n.target.elts \
                and type(n.target.elts[0]) is ast.Name:
            out.add(n.target.elts[0].id)
    return out


def _free_reads(stmts: list[ast.stmt], bound: set[str]) -> set[str]:
    """Names ``stmts`` read before binding them, in order (``bound``: bound already). A
    compound statement's header is read, then bound, then its body is walked."""
    free: set[str] = set()
    for stmt in stmts:
        bodies = [getattr(stmt, f) for f in ("body", "orelse", "finalbody")
                  if isinstance(getattr(stmt, f, None), list)]
        if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef) or not bodies:
            loaded, stored = _names([stmt])
            free |= loaded - bound
            bound |= stored
            continue
        header = [n for n in ast.iter_child_nodes(stmt)
                  if not any(n in body for body in bodies) and not isinstance(n, ast.stmt)]
        for part in header:
            loaded, stored = _names([part])
            free |= loaded - bound
            bound |= stored
        for handler in getattr(stmt, "handlers", []):
            bodies.append(handler.body)
        for body in bodies:
            free |= _free_reads(body, bound)
    return free


def _loaded_outside(scope: ast.AST, block: list[ast.stmt]) -> set[str]:
    """Names loaded anywhere in the scope outside ``block`` (after it, or in the next
    iteration before it: either may read what the step bound)."""
    inside = {id(n) for b in block for n in ast.walk(b)}
    loaded: set[str] = set()

    def visit(node: ast.AST, local: frozenset[str]) -> None:
        if id(node) in inside:
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            # a nested function reads the scope's names only where it binds none itself
            args = node.args
            params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
            body: Sequence[ast.AST] = node.body if isinstance(node.body, list) else [node.body]
            local = local | params | _names(body)[1]
        if type(node) is ast.Name and type(node.ctx) is ast.Load and node.id not in local:
            loaded.add(node.id)
        for child in ast.iter_child_nodes(node):
            visit(child, local)

    for stmt in getattr(scope, "body", []):
        visit(stmt, frozenset())
    return loaded


def _bound(tree: ast.Module) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def _reindent(line: str, shift: int) -> str:
    """Move a line ``shift`` columns left (right when negative); blank lines stay blank."""
    if not line.strip():
        return "\n"
    if shift >= 0:
        cut = min(shift, len(line) - len(line.lstrip(" ")))
        return line[cut:]
    return " " * -shift + line


def lint_safe_fixes(source: str, path: str, codes: set[str]) -> Patch:
    """lint's safe fixes for the rules ``codes`` (those that named a cause), on the script."""
    from tfperf.lint.engine import lint_source
    from tfperf.lint.fix import fix_source
    from tfperf.lint.registry import get

    name = "lint's safe fixes"
    rules = []
    for code in sorted(codes):
        try:
            rules.append(get(code))
        except KeyError:
            continue
    if not rules:
        return Patch(name, "", None, "no lint rule named the cause")
    fixed = fix_source(source, lambda text: lint_source(text, path, rules=rules), unsafe=False)
    if not fixed.changed:
        return Patch(name, "", None, "lint offers no safe fix for it")
    return Patch(name, f"{fixed.applied} safe fix(es) of {', '.join(r.code for r in rules)}",
                 fixed.source)


def keras_compiled(source: str, path: str) -> Patch:
    """Keras's steps compiled again: ``run_eagerly=True`` (a ``compile`` keyword, or
    ``model.run_eagerly = True``) and ``tf.config.run_functions_eagerly(True)`` set to False."""
    name = "Keras steps compiled (run_eagerly off)"
    tree = ast.parse(source, path)
    spots: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            spots += [k.value for k in node.keywords if k.arg == "run_eagerly"
                      and isinstance(k.value, ast.Constant) and k.value.value is True]
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "run_functions_eagerly" \
                    and node.args and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value is True:
                spots.append(node.args[0])
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and node.value.value is True and any(
                    isinstance(t, ast.Attribute) and t.attr == "run_eagerly"
                    for t in node.targets):
            spots.append(node.value)
    if not spots:
        return Patch(name, "", None, "no run_eagerly=True or run_functions_eagerly(True) in "
                                     "the script")
    lines = source.splitlines(keepends=True)
    for spot in sorted(spots, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        line = lines[spot.lineno - 1]
        lines[spot.lineno - 1] = (line[:spot.col_offset] + "False"
                                  + line[spot.end_col_offset or spot.col_offset + 4:])
    return Patch(name, f"True → False at line(s) {', '.join(str(n.lineno) for n in spots)}",
                 "".join(lines))
