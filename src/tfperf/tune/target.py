"""The function being tuned: where its source is, how to call it, what its inputs look like."""

from __future__ import annotations

import ast
import hashlib
import inspect
import linecache
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

Inputs = Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]


class TuneError(Exception):
    """tune cannot start on this function or these inputs; the message says why."""


@dataclass
class Target:
    """A module-level function in a ``.py`` file (or a notebook cell), and its inputs.

    ``inputs``: a factory of fresh ``(args, kwargs)``; given for stateful functions (a train
    step updates its model), so that every candidate starts from the same state. Without
    it, every candidate shares ``args``/``kwargs``.

    A function without a ``.py`` file (typed in an IPython cell, or compiled from a string
    that ``linecache`` holds) is tuned from that text: ``source`` is the cell, ``in_file`` is
    False, ``cell`` its execution count when IPython knows it, and the patch is the cell's
    diff (nothing can be written back).
    """

    fn: Callable[..., Any]
    name: str
    path: Path
    source: str
    module: ModuleType
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    inputs: Inputs | None = None
    in_file: bool = True
    cell: int | None = None
    namespace: dict[str, Any] | None = None  # the function's globals (the module's, a cell's)
    raw_source: str | None = None  # a cell as typed (``%magic`` lines), when IPython has it
    enclosed_in: str | None = None  # a factory's inner function: its qualified name
    method_home: Any = None  # a method's place in its class (tfperf.tune.methods.MethodHome)
    method_of: str | None = None  # a method: its qualified name (``Class.method``)

    @property
    def file_source(self) -> str:
        """The user's file as measured (a method's source is its lifted ``def``)."""
        return self.method_home.file_text if self.method_home is not None else self.source

    def to_file(self, text: str) -> str:
        """``text`` (an edit of ``source``) as the user's file: a method put back."""
        if self.method_home is None:
            return text
        return str(self.method_home.to_file(text, self.source, self.name))

    @property
    def label(self) -> str:
        """How the patch names the source: the file's name, or ``cell N``."""
        if self.in_file:
            return self.path.name
        if self.enclosed_in is not None:
            return f"{self.path.name} ({self.enclosed_in}, lifted to the top level)"
        return f"cell {self.cell}" if self.cell is not None else str(self.path)

    @property
    def patch_path(self) -> str:
        """How the patch's header names the file: its path from the working directory
        (``git apply``, ``patch -p1`` from there), absolute outside it; the bare name made
        ``tune pkg/utils.py:f --diff | git apply`` miss, or patch a ./utils.py instead."""
        if not self.in_file:
            return self.label
        path = self.path.resolve()
        try:
            return path.relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            return str(path)

    @property
    def globals(self) -> dict[str, Any]:
        return self.namespace if self.namespace is not None else vars(self.module)

    @classmethod
    def from_function(cls, fn: Callable[..., Any], args: tuple[Any, ...] = (),
                      kwargs: Mapping[str, Any] | None = None,
                      inputs: Inputs | None = None) -> Target:
        py = inspect.unwrap(getattr(fn, "python_function", fn))
        name = getattr(py, "__name__", None)
        if not callable(fn) or name is None or not inspect.isfunction(py):
            raise TuneError(f"{fn!r} is not a Python function: tune needs a function "
                            "defined with `def` in a .py file")
        if name == "<lambda>":
            code = py.__code__
            raise TuneError(f"a lambda ({Path(code.co_filename).name}:{code.co_firstlineno}): "
                            "tune edits a function's source and a lambda has no name to "
                            "patch; write it as `def name(...): return ...` and tune that")
        if py.__qualname__ != name and _is_closure(py):
            return _lifted(fn, py, tuple(args), kwargs, inputs)
        if py.__qualname__ != name:
            raise TuneError(f"{py.__qualname__}: tune needs a module-level function, a "
                            "bound method (obj.method), or the inner function of a factory "
                            "(not a lambda, nor a method taken from its class)")
        module = sys.modules.get(py.__module__)
        try:
            path = Path(inspect.getsourcefile(py) or "")
        except TypeError:
            path = Path("")
        # A kernel's cell has a .py name (/tmp/ipykernel_…/….py), written out or not: a cell.
        in_file = module is not None and path.is_file() and path.suffix == ".py" \
            and _cell_number(str(path)) is None
        source, cell = "", None
        if in_file:
            source = path.read_text(encoding="utf-8")
        else:
            source, cell = _memory_source(py)
            path = Path(py.__code__.co_filename)
        namespace = py.__globals__
        if namespace.get(name) is not fn and namespace.get(name) is not py:
            where = module.__name__ if in_file and module is not None else (
                f"cell {cell}" if cell is not None else "its namespace")
            raise TuneError(f"{name}: {where} binds that name to something else (defined "
                            "again since?)")
        if inputs is not None:
            args, kw = inputs()
            kwargs = kw
        return cls(fn, name, path, source, module or sys.modules["__main__"], tuple(args),
                   dict(kwargs or {}), inputs, in_file, cell, namespace,
                   None if in_file or cell is None else _typed_cell(cell))

    def fresh_inputs(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Inputs for one more candidate: new ones from the factory, else the shared ones."""
        if self.inputs is None:
            return self.args, self.kwargs
        args, kwargs = self.inputs()
        return tuple(args), dict(kwargs)

    @property
    def float_params(self) -> list[str]:
        """Parameters bound to float32 tensors (precision casts them)."""
        tf = sys.modules.get("tensorflow")
        if tf is None:
            return []
        py = inspect.unwrap(getattr(self.fn, "python_function", self.fn))
        try:
            bound = inspect.signature(py).bind(*self.args, **self.kwargs)
        except TypeError:
            return []
        return [k for k, v in bound.arguments.items()
                if isinstance(v, tf.Tensor) and v.dtype == tf.float32]

    def input_signature(self) -> list[str]:
        """Each input leaf as ``dtype[shape]`` (or its type): part of the cache key."""
        return [describe(v) for v in _leaves((self.args, self.kwargs))]

    def diff(self, text: str) -> str:
        """The patch: ``text`` (the edited source) as a unified diff against the user's file,
        or against the cell as typed (lines the levers did not touch keep their ``%magic``
        form, which the Python that IPython ran has as ``get_ipython()`` calls)."""
        from tfperf.lint.result import unified_diff

        old, new = self.file_source, self.to_file(text)
        raw = self.raw_source
        if raw is not None and old.endswith("\n") and not raw.endswith("\n"):
            raw += "\n"  # IPython's history keeps a cell without its last newline
        if raw is not None and len(raw.splitlines()) == len(old.splitlines()):
            old, new = raw, _keep_typed_lines(self.source, raw, text)
        return unified_diff(self.patch_path, old, new)

    @property
    def qualname(self) -> str:
        """The function's qualified name (a module-level function's is its name)."""
        py = inspect.unwrap(getattr(self.fn, "python_function", self.fn))
        return str(getattr(py, "__qualname__", self.name))

    def source_hash(self) -> str:
        return hashlib.sha256(f"{self.name}\n{self.source}".encode()).hexdigest()


def _is_closure(py: Any) -> bool:
    """A ``def`` nested in a function (a loss factory's inner function), not a lambda."""
    parts = py.__qualname__.split(".")
    return len(parts) >= 3 and parts[-2] == "<locals>" and py.__name__ != "<lambda>"


def _lifted(fn: Callable[..., Any], py: Any, args: tuple[Any, ...],
            kwargs: Mapping[str, Any] | None, inputs: Inputs | None) -> Target:
    """The inner function of a factory (``def trace_loss(r): def loss(y, p): ...; return
    loss``), tuned as if it were defined at the top level: its ``def`` dedented after the
    file's imports, its free variables bound as the constants the factory captured. No file
    holds that text, so the patch is shown, never applied (the user pastes it into the
    inner ``def``)."""
    import textwrap

    where = py.__qualname__
    if py.__code__.co_filename and Path(py.__code__.co_filename).is_file():
        text = Path(py.__code__.co_filename).read_text(encoding="utf-8")
    else:
        text = "".join(linecache.getlines(py.__code__.co_filename))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        raise TuneError(f"{where}: the text it was defined from does not parse") from None
    first = py.__code__.co_firstlineno
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and n.name == py.__name__
                 and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == first), None)
    if node is None or node.end_lineno is None:
        raise TuneError(f"{where}: its source cannot be found; tune needs the text it was "
                        "defined from, in a .py file or a notebook cell")
    if any(isinstance(n, ast.Nonlocal) for n in ast.walk(node)):
        raise TuneError(f"{where}: it assigns its factory's variables (nonlocal): tune "
                        "needs them as constants")
    lines = text.splitlines(keepends=True)
    body = textwrap.dedent("".join(lines[first - 1:node.end_lineno]))
    imports = [ast.get_source_segment(text, n) or "" for n in tree.body
               if isinstance(n, (ast.Import, ast.ImportFrom))]
    source = "".join(f"{i}\n" for i in imports) + "\n\n" + body
    namespace = dict(py.__globals__)
    for var, cell in zip(py.__code__.co_freevars, py.__closure__ or (), strict=False):
        try:
            namespace[var] = cell.cell_contents
        except ValueError:  # a variable the factory has not bound yet
            raise TuneError(f"{where}: its free variable {var!r} is not bound") from None
    namespace[py.__name__] = fn
    module = sys.modules.get(py.__module__) or sys.modules["__main__"]
    if inputs is not None:
        args, kwargs = inputs()
    return Target(fn, py.__name__, Path(py.__code__.co_filename), source, module,
                  tuple(args), dict(kwargs or {}), inputs, in_file=False, cell=None,
                  namespace=namespace, enclosed_in=py.__qualname__)


def _memory_source(py: Any) -> tuple[str, int | None]:
    """The text a function without a ``.py`` file was compiled from, as ``linecache`` holds
    it (IPython caches every cell there, as the Python it ran), and its cell number."""
    filename = py.__code__.co_filename
    lines = linecache.getlines(filename)
    text = "".join(lines)
    if not text.strip():
        raise TuneError(f"{py.__name__}: its source cannot be found (no .py file, and "
                        f"{filename} is not in linecache); tune needs the text it was "
                        "defined from, in a .py file or a notebook cell")
    try:
        defined = any(isinstance(n, ast.FunctionDef) and n.name == py.__name__
                      for n in ast.parse(text).body)
    except SyntaxError as exc:
        raise TuneError(f"{py.__name__}: the text it was defined from ({filename}) does not "
                        f"parse as Python: {exc.msg}") from None
    if not defined:
        raise TuneError(f"{py.__name__}: {filename} does not define it at its top level")
    return text, _cell_number(filename)


def _cell_number(filename: str) -> int | None:
    """The execution count of the IPython cell compiled under ``filename``, if any."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    from tfperf.notebook.statement import cell_number

    return cell_number(ipython.get_ipython(), filename)


def _typed_cell(number: int) -> str | None:
    """Cell ``number`` as the user typed it (IPython's raw input history)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if isinstance(history, list) and 0 < number < len(history):
        text = history[number]
        return text if isinstance(text, str) else None
    return None


def _keep_typed_lines(ran: str, typed: str, edited: str) -> str:
    """``edited`` (an edit of ``ran``) with each line it kept from ``ran`` in its typed form."""
    import difflib

    ran_lines, typed_lines = ran.splitlines(keepends=True), typed.splitlines(keepends=True)
    new_lines = edited.splitlines(keepends=True)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=ran_lines, b=new_lines, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        out += typed_lines[a0:a1] if op == "equal" else new_lines[b0:b1]
    return "".join(out)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [x for k in sorted(value, key=str) for x in _leaves(value[k])]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _leaves(v)]
    return [value]


def describe(value: Any) -> str:
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        name = getattr(dtype, "name", str(dtype))
        return f"{name}{list(shape) if not hasattr(shape, 'as_list') else shape.as_list()}"
    if isinstance(value, (bool, int, float, str)):
        return f"{type(value).__name__}={value!r}"
    return type(value).__name__
