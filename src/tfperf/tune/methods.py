"""Methods as tune's targets: ``tfperf.tune(obj.method, ...)``, a Keras layer, an object with
``__call__``.

Tune's levers edit a module-level function. A method is tuned as one: its ``def`` is lifted to
the top level without its first parameter, and that parameter's name (``self``) is bound, in
the candidates' namespace, to the very instance (or class) the method is bound to, so that
every candidate reads the same weights and constants. The winning edit is put back into the
class: the first parameter returned to the ``def``, the ``def`` indented to the method's
column and written over the method's lines; statements the levers added at the top level go
above the class. So the patch is a diff of the user's file, and ``--apply`` writes it.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from tfperf.tune.source import SourceEditError, ensure_tf, find_function, parse, tf_alias
from tfperf.tune.target import Inputs, Target, TuneError

#: Packages whose ``__call__`` wraps the user's ``call`` (Keras layers and models).
_WRAPPING_CALLS = ("keras", "tf_keras", "tensorflow")


@dataclass(frozen=True)
class MethodHome:
    """Where a lifted method lives in its file, to put the edited ``def`` back."""

    file_text: str  # the user's file as measured
    first: int  # first line of the method (its first decorator), 1-based
    last: int  # its last line
    indent: str  # the method's column, as text
    self_name: str  # the first parameter (``self``, ``cls``); "" for a staticmethod
    top: int  # first line of the top-level statement that holds the class
    # ``@classmethod``/``@staticmethod`` rows taken off the lifted ``def`` (the lifted
    # function is called plain), put back above it in the class
    binding: str = ""

    def to_file(self, lifted_text: str, lifted_original: str, name: str) -> str:
        """The user's file with the method replaced by the edited lifted ``def``."""
        tree = parse(lifted_text)
        fn = find_function(tree, name)
        lines = lifted_text.splitlines(keepends=True)
        body = _with_first_param(lifted_text, fn, self.self_name) if self.self_name else \
            _def_text(lifted_text, fn)
        method = textwrap.indent(self.binding + body, self.indent,
                                 lambda row: bool(row.strip()))
        before = {ast.dump(n) for n in parse(lifted_original).body}
        added = [n for n in tree.body if n is not fn and ast.dump(n) not in before]
        extra = "".join("".join(lines[n.lineno - 1:n.end_lineno]) + "\n"
                        for n in added if not _is_tf_import(n))
        out = self.file_text.splitlines(keepends=True)
        text = "".join(out[:self.first - 1]) + method + "".join(out[self.last:])
        if extra:
            rows = text.splitlines(keepends=True)
            text = "".join(rows[:self.top - 1]) + extra + "\n" + "".join(rows[self.top - 1:])
        if tf_alias(tree) and not tf_alias(parse(self.file_text)):
            text, _ = ensure_tf(text)
        parse(text)
        return text


def _is_tf_import(node: ast.stmt) -> bool:
    return isinstance(node, ast.Import) and any(a.name == "tensorflow" for a in node.names)


def _def_text(text: str, fn: ast.FunctionDef) -> str:
    """The ``def`` (with its decorators) of ``text``, dedented."""
    lines = text.splitlines(keepends=True)
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    chunk = "".join(lines[start - 1:fn.end_lineno])
    return textwrap.dedent(chunk if chunk.endswith("\n") else chunk + "\n")


def _with_first_param(text: str, fn: ast.FunctionDef, first: str) -> str:
    """The ``def`` (with its decorators) of ``text`` with ``first`` as its first parameter."""
    lines = text.splitlines(keepends=True)
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    chunk = "".join(lines[start - 1:fn.end_lineno])
    head = chunk.find(f"def {fn.name}")
    paren = chunk.find("(", head)
    rest = chunk[paren + 1:]
    sep = "" if rest.lstrip().startswith(")") else ", "
    chunk = chunk[:paren + 1] + first + sep + rest
    return textwrap.dedent(chunk if chunk.endswith("\n") else chunk + "\n")


def target_of(fn: Any, args: tuple[Any, ...] = (), kwargs: Mapping[str, Any] | None = None,
              inputs: Inputs | None = None) -> Target:
    """The :class:`Target` for whatever the user handed tune: a function, a bound method,
    a Keras layer, an object with ``__call__``."""
    if isinstance(fn, functools.partial):
        return _partial_target(fn, tuple(args), kwargs, inputs)
    fn = unwrap_callable(fn)
    if inspect.ismethod(fn):
        return method_target(fn, tuple(args), kwargs, inputs)
    if _static_owner(fn) is not None:
        return method_target(fn, tuple(args), kwargs, inputs)
    return Target.from_function(fn, tuple(args), kwargs, inputs)


def _partial_target(fn: functools.partial[Any], args: tuple[Any, ...],
                    kwargs: Mapping[str, Any] | None, inputs: Inputs | None) -> Target:
    """``functools.partial(g, *bound, **kw)``: ``g`` tuned with the bound arguments put
    before the call's (a partial has no source of its own; the patch edits ``g``)."""
    func, bound, kw = fn.func, tuple(fn.args), dict(fn.keywords)
    if inputs is not None:
        made = inputs

        def merged() -> tuple[tuple[Any, ...], dict[str, Any]]:
            a, k = made()
            return bound + tuple(a), {**kw, **dict(k)}

        return target_of(func, (), None, merged)
    return target_of(func, bound + args, {**kw, **dict(kwargs or {})}, None)


def _static_owner(fn: Any) -> type | None:
    """The class that holds ``fn`` as a ``@staticmethod`` (``Class.f`` or ``obj.f`` give
    the plain function, whose qualified name is ``Class.f``), or None."""
    py = inspect.unwrap(getattr(fn, "python_function", fn))
    if not inspect.isfunction(py) or "<locals>" in py.__qualname__ \
            or "." not in py.__qualname__:
        return None
    owner: Any = sys.modules.get(py.__module__)
    for part in py.__qualname__.split(".")[:-1]:
        owner = getattr(owner, part, None)
    if not inspect.isclass(owner):
        return None
    try:
        raw = inspect.getattr_static(owner, py.__name__)
    except AttributeError:
        return None
    return owner if isinstance(raw, staticmethod) else None


def unwrap_callable(fn: Any) -> Any:
    """What to tune for ``fn``: a Keras layer or model's ``call``, an object's ``__call__``
    (bound), else ``fn`` itself."""
    if inspect.isfunction(fn) or inspect.ismethod(fn) or hasattr(fn, "python_function"):
        return fn
    if inspect.isbuiltin(fn) or inspect.isclass(fn) or not callable(fn):
        return fn
    call = type(fn).__call__
    home = getattr(call, "__module__", "") or ""
    if home.split(".")[0] in _WRAPPING_CALLS and inspect.ismethod(getattr(fn, "call", None)):
        return fn.call  # Keras's __call__ runs the user's call
    bound = fn.__call__
    return bound if inspect.ismethod(bound) else fn


def method_target(fn: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any] | None,
                  inputs: Inputs | None) -> Target:
    """A bound method (or a classmethod, bound to its class, or a staticmethod, bound to
    nothing) as a :class:`Target` whose source is its lifted ``def`` (see above)."""
    static = _static_owner(fn)
    owner: Any = static if static is not None else fn.__self__
    func = inspect.unwrap(getattr(fn, "python_function", fn) if static is not None
                          else fn.__func__)
    where = getattr(func, "__qualname__", repr(fn))
    if not inspect.isfunction(func):
        raise TuneError(f"{where}: a method without Python source (a builtin or C "
                        "function): tune needs a method defined with `def` in a .py file")
    if func.__name__ == "<lambda>":
        raise TuneError(f"{where}: a lambda; tune needs a method defined with `def`")
    if "<locals>" in func.__qualname__:
        raise TuneError(f"{where}: a method of a class defined inside a function; tune "
                        "needs the class at the top level of a .py file")
    try:
        path = Path(inspect.getsourcefile(func) or "")
    except TypeError:
        path = Path("")
    if not path.is_file() or path.suffix != ".py":
        raise TuneError(f"{where}: its source is not in a .py file; tune needs the class "
                        "in a .py file")
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:
        raise TuneError(f"{path}: does not parse") from None
    node, top = _find_method(tree, func)
    if node is None or node.end_lineno is None:
        raise TuneError(f"{where}: its def cannot be found in {path}")
    params = node.args.posonlyargs + node.args.args
    if not params and static is None:
        raise TuneError(f"{where}: takes no `self` parameter")
    self_name = "" if static is not None else params[0].arg
    why = _unliftable(node, self_name)
    if why:
        raise TuneError(f"{where}: {why}")
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    rows = text.splitlines(keepends=True)
    indent = rows[node.lineno - 1][:len(rows[node.lineno - 1])
                                   - len(rows[node.lineno - 1].lstrip())]
    # @classmethod/@staticmethod make a descriptor, which the lifted (module-level) def must
    # not be ("'classmethod' object is not callable"): taken off, and put back by the patch
    bindings = [d for d in node.decorator_list if _is_binding(d)]
    # the binding's row and the comment rows under it, up to the next decorator or the def
    # (review 42: a comment there was dropped, the def's text starting at the def)
    after = [d.lineno for d in node.decorator_list[1:]] + [node.lineno]
    binding_rows = set(range(bindings[0].lineno, after[0])) if bindings else set()
    if any(d.lineno != d.end_lineno for d in bindings):
        raise TuneError(f"{where}: its decorators are spelled in a way tune cannot lift")
    if bindings and (len(bindings) > 1 or node.decorator_list[0] is not bindings[0]):
        # a decorator above @staticmethod gets the descriptor, not the function: lifted
        # without the binding it would be measured on another object, and the patch (the
        # binding put back on top) would move it (review 42)
        raise TuneError(f"{where}: a decorator above @{bindings[0].id} (it is handed the "
                        f"{bindings[0].id} object): tune takes @{bindings[0].id} only as "
                        "the outermost decorator")
    kept = [r for i, r in enumerate(rows[first - 1:node.end_lineno], first)
            if i not in binding_rows]
    binding = "".join(textwrap.dedent(rows[i - 1]) for i in sorted(binding_rows))
    chunk = "".join(kept)
    lifted_def = textwrap.dedent(chunk) if static is not None \
        else _without_first_param(textwrap.dedent(chunk), node.name)
    imports = [ast.get_source_segment(text, n) or "" for n in tree.body
               if isinstance(n, (ast.Import, ast.ImportFrom))]
    source = "".join(f"{i}\n" for i in imports) + "\n\n" + lifted_def
    namespace = dict(func.__globals__)
    if self_name:
        namespace[self_name] = owner
    namespace[node.name] = fn
    module = sys.modules.get(func.__module__) or sys.modules["__main__"]
    if inputs is not None:
        args, kw = inputs()
        kwargs = kw
    home = MethodHome(text, first, node.end_lineno, indent, self_name, top, binding)
    return Target(fn, node.name, path, source, module, tuple(args), dict(kwargs or {}),
                  inputs, in_file=True, cell=None, namespace=namespace,
                  method_home=home, method_of=func.__qualname__)


def _is_binding(decorator: ast.expr) -> TypeGuard[ast.Name]:
    return isinstance(decorator, ast.Name) and decorator.id in ("classmethod", "staticmethod")


def _find_method(tree: ast.Module, func: Any) -> tuple[ast.FunctionDef | None, int]:
    """The ``def`` of ``func`` (by its class path and first line) and the first line of the
    top-level statement that holds it."""
    parts = func.__qualname__.split(".")
    for stmt in tree.body:
        scope: list[ast.stmt] = [stmt]
        for name in parts[:-1]:
            cls = next((s for s in scope if isinstance(s, ast.ClassDef) and s.name == name),
                       None)
            if cls is None:
                scope = []
                break
            scope = cls.body
        for s in scope:
            if isinstance(s, ast.FunctionDef) and s.name == parts[-1]:
                top = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list",
                                                                       []))])
                return s, top
    return None, 0


def _unliftable(node: ast.FunctionDef, self_name: str) -> str | None:
    """Why the method's body cannot run outside its class, or None."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "super" \
                and not n.args:
            return "it calls super() without arguments, which needs its class; tune needs " \
                   "`super(Class, self)` there"
        if isinstance(n, ast.Name) and n.id == "__class__":
            return "it reads __class__, which needs its class"
        if isinstance(n, ast.Attribute) and n.attr.startswith("__") \
                and not n.attr.endswith("__"):
            return f"it reads a private attribute ({n.attr}), whose name depends on its class"
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            return "it declares global or nonlocal names"
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(node)):
        return "a generator or coroutine"
    return None


def _without_first_param(chunk: str, name: str) -> str:
    """``chunk`` (a dedented ``def``) without its first parameter."""
    tree = parse(chunk)
    fn = find_function(tree, name)
    params = fn.args.posonlyargs + fn.args.args
    first = params[0]
    lines = chunk.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + len(lines[line - 1].encode()[:col].decode(errors="ignore"))

    s = offset(first.lineno, first.col_offset)
    rest = (params[1:] + ([fn.args.vararg] if fn.args.vararg else [])
            + fn.args.kwonlyargs + ([fn.args.kwarg] if fn.args.kwarg else []))
    if rest:
        nxt = min(rest, key=lambda a: (a.lineno, a.col_offset))
        e = offset(nxt.lineno, nxt.col_offset)
        if "*" in chunk[s:e]:  # `self, *args` or `self, *, key`: keep the star
            e = chunk.index("*", s)
    else:
        e = offset(first.end_lineno or first.lineno, first.end_col_offset or 0)
        # a trailing comma or `, /` after the lone parameter
        tail = chunk[e:]
        close = tail.index(")")
        e += close
    out = chunk[:s] + chunk[e:]
    try:
        parse(out)
    except SourceEditError:
        raise TuneError(f"{name}: its parameters are spelled in a way tune cannot lift") \
            from None
    return out
