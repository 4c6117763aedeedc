"""Counters, read once per step, that name the known causes of memory growth across steps.

Each counter counts objects TensorFlow keeps, exactly (no noise), so a counter that climbs
step after step is the cause of the memory that climbs with it:

* ``traces``: per ``tf.function`` (by the Python function it wraps), the concrete functions its
  cache holds (``experimental_get_tracing_count()`` of the live objects): it climbs when the
  function retraces.
* ``functions_alive`` / ``functions_created``: ``tf.function`` objects per Python function
  (``Function.__init__`` is wrapped; live ones are held weakly, so counting keeps none alive).
* ``iterators_alive`` / ``iterators_created``: ``tf.data`` iterators (``OwnedIterator``), with
  the user line that created them.
* ``py_funcs``: ``tf.py_function`` / ``numpy_function`` callables TensorFlow keeps; run eagerly,
  each call registers its callable on the global default graph, which keeps it (and what it
  captures) for the life of the process.
* ``context_functions``: functions registered in the eager context's library.

Containers of tensors are found by a garbage-collector scan (``container_snapshot``), taken at
two points only: it costs tens of milliseconds.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfperf.profile.attribution import caller_site, is_user_file

FUNCTION_CLASS = ("tensorflow.python.eager.polymorphic_function.polymorphic_function",
                  "Function")
ITERATOR_CLASS = ("tensorflow.python.data.ops.iterator_ops", "OwnedIterator")
SCRIPT_OPS = "tensorflow.python.ops.script_ops"

CodeKey = tuple[str, str, int]  # (qualified name, file, first line) of a wrapped function


@dataclass
class FunctionKind:
    name: str
    path: str
    line: int

    @property
    def user(self) -> bool:
        return bool(self.path) and is_user_file(self.path)

    @property
    def keras(self) -> bool:
        return "keras" in self.path.replace("\\", "/").split("/site-packages/")[-1][:12]


@dataclass
class Snapshot:
    """The counters after one step."""

    counts: dict[str, int] = field(default_factory=dict)


def unwrap(fn: Any) -> Any:
    """The user's callable under TF's decorators, AutoGraph's wrapper and partials."""
    import functools

    for _ in range(16):
        if isinstance(fn, functools.partial):
            fn = fn.func
            continue
        inner = (getattr(fn, "__original_wrapped__", None) or getattr(fn, "__wrapped__", None)
                 or getattr(fn, "_func", None))
        if inner is None or inner is fn:
            return fn
        fn = inner
    return fn


def _code_key(fn: Any) -> CodeKey:
    py = getattr(fn, "_python_function", None) or getattr(fn, "python_function", None)
    inner = unwrap(py)
    code = getattr(inner, "__code__", None)
    name = getattr(inner, "__qualname__", None) or getattr(fn, "_name", None) or "?"
    if code is None:
        return (str(name), "", 0)
    return (str(name), code.co_filename, code.co_firstlineno)


class Evidence:
    """Installs the hooks (``with evidence:``) and takes :meth:`snapshot` s."""

    def __init__(self) -> None:
        self.functions: dict[CodeKey, weakref.WeakSet[Any]] = defaultdict(weakref.WeakSet)
        self.created: Counter[CodeKey] = Counter()
        self.kinds: dict[CodeKey, FunctionKind] = {}
        self.iterators: weakref.WeakSet[Any] = weakref.WeakSet()
        self.iterators_created = 0
        self.iterator_sites: Counter[tuple[str, int]] = Counter()
        self.unavailable: dict[str, str] = {}
        self._undo: list[Callable[[], None]] = []

    # -- hooks ----------------------------------------------------------------------------

    def __enter__(self) -> Evidence:
        for name, install in (("functions", self._hook_functions),
                              ("iterators", self._hook_iterators)):
            try:
                install()
            except Exception as exc:  # a TensorFlow without the class: say so, count the rest
                self.unavailable[name] = f"{type(exc).__name__}: {exc}"
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def _wrap_init(self, where: tuple[str, str], after: Callable[[Any], None]) -> None:
        cls = getattr(importlib.import_module(where[0]), where[1])
        original = cls.__init__

        def init(obj: Any, *args: Any, **kwargs: Any) -> None:
            original(obj, *args, **kwargs)
            with contextlib.suppress(Exception):  # counting must never break the user's code
                after(obj)

        cls.__init__ = init
        self._undo.append(lambda: setattr(cls, "__init__", original))

    def _hook_functions(self) -> None:
        def seen(fn: Any) -> None:
            key = _code_key(fn)
            self.functions[key].add(fn)
            self.created[key] += 1
            if key not in self.kinds:
                self.kinds[key] = FunctionKind(*key)

        self._wrap_init(FUNCTION_CLASS, seen)

    def _hook_iterators(self) -> None:
        def seen(it: Any) -> None:
            self.iterators.add(it)
            self.iterators_created += 1
            site = caller_site(3)
            if site is not None:
                self.iterator_sites[site] += 1

        self._wrap_init(ITERATOR_CLASS, seen)

    def adopt(self, functions: list[Any] | None = None) -> None:
        """tf.function objects created before the hooks: ``functions``, or every live one
        (one garbage-collector scan)."""
        if functions is None:
            try:
                cls = getattr(importlib.import_module(FUNCTION_CLASS[0]), FUNCTION_CLASS[1])
            except (ImportError, AttributeError):
                return
            is_function = _instances((cls,))
            functions = [o for o in gc.get_objects() if is_function(o)]
        for fn in functions:
            key = _code_key(fn)
            self.functions[key].add(fn)
            self.kinds.setdefault(key, FunctionKind(*key))

    # -- counters -------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        counts: dict[str, int] = {}
        for key, live in list(self.functions.items()):
            members = list(live)
            tag = _tag(key)
            traces = 0
            for fn in members:
                with contextlib.suppress(Exception):
                    traces += int(fn.experimental_get_tracing_count())
            counts[f"traces:{tag}"] = traces
            counts[f"functions_alive:{tag}"] = len(members)
            counts[f"functions_created:{tag}"] = self.created[key]
        counts["iterators_alive"] = len(self.iterators)
        counts["iterators_created"] = self.iterators_created
        registry = py_func_registry()
        if registry is not None:
            counts["py_funcs"] = registry.size()
        try:
            from tensorflow.python.eager import context

            counts["context_functions"] = len(context.context().list_function_names())
        except Exception:
            pass
        return Snapshot(counts)

    def kind_of(self, tag: str) -> FunctionKind | None:
        for key, kind in self.kinds.items():
            if _tag(key) == tag:
                return kind
        return None


def _tag(key: CodeKey) -> str:
    name, path, line = key
    return f"{name}@{path}:{line}"


def py_func_registry() -> Any:
    try:
        return importlib.import_module(SCRIPT_OPS)._py_funcs  # private: guarded
    except (ImportError, AttributeError):
        return None


def py_func_sites() -> Counter[tuple[str, int, str]]:
    """(file, line, name) of the callables the py_function registry keeps."""
    registry = py_func_registry()
    out: Counter[tuple[str, int, str]] = Counter()
    if registry is None:
        return out
    try:
        items = list(registry._funcs.items())  # private: guarded
    except Exception:
        return out
    for _token, func in items:
        inner = unwrap(func)
        code = getattr(inner, "__code__", None)
        if code is None:
            code = getattr(type(inner).__call__, "__code__", None) if callable(inner) else None
        name = getattr(inner, "__qualname__", type(inner).__name__)
        if code is not None:
            out[(code.co_filename, code.co_firstlineno, str(name))] += 1
    return out


# -- containers of tensors --------------------------------------------------------------------


@dataclass
class ContainerInfo:
    kind: str  # list, dict, deque, set
    tensors: int
    tensor_bytes: int
    name: str  # where it is held: "train.py: history" (a module global), "Trainer.cache"


def _instances(classes: tuple[type, ...]) -> Callable[[Any], bool]:
    """A fast ``isinstance(x, classes)`` for scanning every object: TF's tensor and function
    classes are ABCs, whose checks cost microseconds; the answer is cached per type."""
    known: dict[type, bool] = {}

    def check(obj: Any) -> bool:
        t = type(obj)
        verdict = known.get(t)
        if verdict is None:
            verdict = known[t] = issubclass(t, classes)
        return verdict

    return check


Containers = dict[int, tuple[str, int, int, Any]]


def container_snapshot(min_tensors: int = 1, keep: bool = False) -> Containers:
    """id → (type, tensor count, tensor bytes, the container if ``keep``) of every list,
    dict, deque and set holding tensors or variables."""
    import tensorflow as tf

    from tfperf.memory.holders import tensor_bytes

    deque_type = importlib.import_module("collections").deque
    kinds = {list: "list", dict: "dict", set: "set", deque_type: "deque"}
    is_tensor = _instances((tf.Tensor, tf.Variable))
    out: Containers = {}
    for obj in gc.get_objects():
        kind = kinds.get(type(obj))
        if kind is None:
            continue
        try:
            # gc.get_referents, not iteration: gc can hand back a list another thread is
            # still building, whose empty slots crash an iterator (seen once in the suite);
            # tp_traverse skips them. A dict's referents are its keys and values.
            n = nbytes = 0
            for v in gc.get_referents(obj):
                if is_tensor(v):
                    n += 1
                    nbytes += tensor_bytes(v)
        except Exception:  # changed while read
            continue
        if n >= min_tensors:
            out[id(obj)] = (kind, n, nbytes, obj if keep else None)
    return out


def grown_containers(before: Containers, after: Containers, at_least: int
                     ) -> list[ContainerInfo]:
    """Containers present in both snapshots whose tensor count grew by ``at_least`` (a new
    container full of tensors is a new object, not a growing one: the objects created per
    step that hold it are the cause, if any). ``after`` must have been taken with ``keep``."""
    grown = []
    for key, (kind, n, nbytes, obj) in after.items():
        old = before.get(key)
        if old is None or old[0] != kind:
            continue
        if n - old[1] >= at_least:
            grown.append(ContainerInfo(kind, n - old[1], nbytes - old[2],
                                       name_of(obj) if obj is not None else kind))
    return sorted(grown, key=lambda c: -c.tensor_bytes)


def name_of(obj: Any) -> str:
    """Where a container is held: a module global, an attribute, a closure, or its type."""
    import types

    for ref in gc.get_referrers(obj):
        if isinstance(ref, types.CellType):  # a variable a nested function closes over
            for fn in gc.get_referrers(ref):
                if isinstance(fn, tuple):
                    fn = next((f for f in gc.get_referrers(fn)
                               if getattr(f, "__closure__", None) is fn), None)
                if isinstance(fn, types.FunctionType):
                    names = fn.__code__.co_freevars
                    cells = fn.__closure__ or ()
                    free = next((n for n, c in zip(names, cells, strict=False) if c is ref), "?")
                    return (f"{fn.__code__.co_filename}: {free} (closed over by "
                            f"{fn.__qualname__})")
            continue
        if not isinstance(ref, dict):
            continue
        name = next((k for k, v in ref.items() if v is obj and isinstance(k, str)), None)
        if name is None:
            continue
        module = ref.get("__name__") if "__builtins__" in ref or "__file__" in ref else None
        if module is not None:
            path = ref.get("__file__") or module
            return f"{path}: {name}"
        owner = next((o for o in gc.get_referrers(ref) if getattr(o, "__dict__", None) is ref),
                     None)
        if owner is not None:
            return f"{type(owner).__name__}.{name}"
        return name
    return type(obj).__name__


__all__ = ["ContainerInfo", "Evidence", "FunctionKind", "Snapshot", "container_snapshot",
           "grown_containers", "name_of", "py_func_registry", "py_func_sites"]
