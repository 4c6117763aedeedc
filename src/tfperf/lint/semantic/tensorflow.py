"""What TensorFlow does with the code: the TensorFlow layer of the semantic model.

Which functions TensorFlow traces into a graph (``tf.function`` however spelled, wrapped or
decorated; Keras ``call``/``train_step`` methods; functions handed to ``Dataset.map`` & co),
where a ``GradientTape`` records, and conservative guesses of which values are tensors and
which are ``tf.data`` datasets. Stands on :mod:`.names` for what names refer to and on
:mod:`.tf_api` for TensorFlow's API surface.
"""

from __future__ import annotations

import ast

from tfperf.lint.semantic.names import FUNCTION_NODES, Binding, NameModel
from tfperf.lint.semantic.tf_api import (
    DATASET_ANNOTATIONS,
    DATASET_FN_KEYWORDS,
    DATASET_FN_METHODS,
    DATASET_METHODS,
    DATASET_NAME,
    DATASET_SOURCES,
    KERAS_TRACED_METHODS,
    TENSOR_ANNOTATIONS,
    TF_FUNCTION_NAMES,
    TF_ROOTS,
    relative_module,
    returns_tensor,
    returns_tensor_list,
)

# Higher-order ops that return the structure of their initializer / elements.
_STRUCTURE_OPS = {"scan": ("initializer", 2), "foldl": ("initializer", 2),
                  "foldr": ("initializer", 2), "map_fn": ("fn_output_signature", -1)}


def _unpacked_iterable(target: ast.AST, name: str, it: ast.expr) -> ast.expr | None:
    """What loop variable ``name`` is an element of: ``it`` itself, except through
    ``enumerate(xs)`` (the index is a number, the element one of ``xs``) and ``zip(a, b)``
    (each name one of its own iterable). ``for x, y in ds`` keeps ``ds``: a dataset's tuple."""
    if type(target) is not ast.Tuple or len(target.elts) < 2 or type(it) is not ast.Call \
            or type(it.func) is not ast.Name or it.keywords:
        return it
    elts = target.elts
    if it.func.id == "enumerate" and len(it.args) == 1 and len(elts) == 2:
        if type(elts[0]) is ast.Name and elts[0].id == name:
            return None  # the counter
        return it.args[0]
    if it.func.id == "zip" and len(it.args) == len(elts):
        for elt, arg in zip(elts, it.args, strict=True):
            if any(type(n) is ast.Name and n.id == name for n in ast.walk(elt)):
                return arg
        return None
    return it


def _structure_call(call: ast.Call, qualname: str) -> bool:
    """``tf.scan(fn, elems, [0., 0.])``: a higher-order op whose initializer is a list or
    tuple literal returns a list of tensors, not one tensor; so does ``tf.unstack(x,
    axis=k)`` along any axis but the first (a few coordinates, channels or time steps)."""
    last = qualname.rsplit(".", 1)[-1]
    if last == "unstack" and qualname.startswith(("tensorflow.", "keras.ops.")):
        # Along another axis than rows: coordinates, channels or a static RNN's time steps,
        # each item a whole batch's slice, not one per row.
        axis = call.args[2] if len(call.args) > 2 else next(
            (k.value for k in call.keywords if k.arg == "axis"), None)
        if type(axis) is ast.UnaryOp and type(axis.op) is ast.USub:
            axis = axis.operand
        return type(axis) is ast.Constant and type(axis.value) is int and axis.value != 0
    spec = _STRUCTURE_OPS.get(last)
    if spec is None or not qualname.startswith("tensorflow."):
        return False
    kw, pos = spec
    init = next((k.value for k in call.keywords if k.arg in (kw, "dtype")), None)
    if init is None and 0 <= pos < len(call.args):
        init = call.args[pos]
    return type(init) in (ast.List, ast.Tuple)


def _callable_key(expr: ast.AST) -> str | None:
    """``f`` → "f"; ``self.f`` → "f" (methods are matched by name)."""
    if type(expr) is ast.Name:
        return expr.id
    if type(expr) is ast.Attribute:
        return expr.attr
    return None


class TensorFlowModel(NameModel):
    """Names and scopes plus what TensorFlow does with the code: which functions it traces
    (``tf.function``, Keras ``call``/``train_step``, ``Dataset.map`` functions), which
    ``with`` block records gradients, which values are tensors or datasets."""

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>") -> None:
        super().__init__(tree, source, path)
        # Per node id (the tree is never mutated, and outlives the context's use).
        self._tensor_cache: dict[int, bool] = {}
        self._keras_cache: dict[int, bool] = {}
        self._tf_fn_cache: dict[int, bool] = {}
        self._imports_tf: bool | None = None

    # ------------------------------------------------------------------ cheap module gates

    @property
    def imports_tf(self) -> bool:
        """Whether the module imports TensorFlow or Keras anywhere. Cheap (no name tables):
        rules may return early on modules that do not, as nothing there resolves to TF.
        Kept in an attribute, not :meth:`cached`: rules ask it for every node they see."""
        found = self._imports_tf
        if found is None:
            found = self._imports_tf = self._find_tf_import()
        return found

    def _find_tf_import(self) -> bool:
        if self.path.endswith(".ipynb") and "tf." in self.source and self.guesses_tf:
            return True  # `tf` from the kernel (NameModel._binders)
        for node in self._raw_bindings:
            t = type(node)
            if t is ast.Import:
                names = [a.name for a in node.names]
            elif t is ast.ImportFrom and not node.level:
                names = [node.module or ""]
            elif t is ast.ImportFrom:  # relative: resolved only inside a Keras source tree
                names = [relative_module(self.path, node.level, node.module,
                                         [a.name for a in node.names]) or ""]
            else:
                names = []
            if t is ast.ImportFrom and any(a.name == "*" for a in node.names) \
                    and "tf." in self.source:
                return True  # `tf` may come from the star import (NameModel._binders)
            if not names:
                continue
            if any(n.split(".", 1)[0] in TF_ROOTS for n in names):
                return True
        return False

    @property
    def spells_tf_function(self) -> bool:
        """Whether anything here could resolve to ``tf.function``: an attribute ``.function``
        or an import binding a name ``function``/``x.function``. Every qualname ending in
        ``function`` comes from one of these (cheap: no name tables). ``False`` means the
        module defines, wraps and decorates no ``tf.function``."""
        return self.cached("spells_tf_function", self._find_tf_function_spelling)

    def _find_tf_function_spelling(self) -> bool:
        if "function" not in self.source:
            return False
        return any(a.attr == "function"
                   for a in self._by_type.get(ast.Attribute, ())) or any(
            al.name == "function" or al.name.endswith(".function")
            for node in self.nodes_of(ast.Import, ast.ImportFrom)
            for al in node.names)

    @property
    def may_have_tf_function(self) -> bool:
        """Whether :meth:`is_tf_function` can be true for any function here: something
        spells ``tf.function`` (:attr:`spells_tf_function`), or a ``def`` has a Keras traced
        method's name. Cheap: no name tables."""
        return self.cached("may_have_tf_function", lambda: self.spells_tf_function or any(
            d.name in KERAS_TRACED_METHODS
            for d in self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef)))

    @property
    def may_trace(self) -> bool:
        """Whether any code here may run traced: :attr:`may_have_tf_function`, or a call
        that hands a function to ``Dataset.map`` & co (an attribute ``.map``/``.filter``...,
        or a ``map_func=``/``predicate=`` keyword). ``False``: nothing here is traced."""
        return self.cached("may_trace", lambda: self.may_have_tf_function or any(
            a.attr in DATASET_FN_METHODS
            for a in self._by_type.get(ast.Attribute, ())) or any(
            k.arg in DATASET_FN_KEYWORDS
            for k in self._by_type.get(ast.keyword, ())))

    # ------------------------------------------------------------------ functions handed over

    def _handed_over(self) -> tuple[set[str], dict[str, list[ast.Call]]]:
        """Names of functions passed to ``tf.function(...)``, and to ``ds.map(...)`` & co
        with those calls (methods are matched by name). Built on first use."""
        return self.cached("handed_over", self._find_handed_over)

    def _find_handed_over(self) -> tuple[set[str], dict[str, list[ast.Call]]]:
        wrapped: set[str] = set()
        map_fns: dict[str, list[ast.Call]] = {}
        for call in self._raw_calls:
            func = call.func
            if type(func) is ast.Attribute and func.attr in DATASET_FN_METHODS:
                fn_args = list(call.args[:1]) + [k.value for k in call.keywords
                                                 if k.arg in DATASET_FN_KEYWORDS]
                for a in fn_args:
                    key = _callable_key(a)
                    if key:
                        map_fns.setdefault(key, []).append(call)
            # `tf.function(g)`, or a bare name under any alias: `from tensorflow import
            # function as compile_fn; compile_fn(g)`, `fn = tf.function; fn(g)`.
            elif call.args and (type(func) is ast.Name or (
                    type(func) is ast.Attribute and func.attr == "function")) \
                    and self.qualname(func) in TF_FUNCTION_NAMES:
                key = _callable_key(call.args[0])
                if key:
                    wrapped.add(key)
        return wrapped, map_fns

    # ------------------------------------------------------------------ execution context

    def is_tf_function(self, fn: ast.AST) -> bool:
        """Whether this function/lambda is compiled by TensorFlow: decorated with
        ``tf.function`` (with or without arguments), wrapped anywhere in the module as
        ``tf.function(fn)`` (or ``tf.function(self.fn)``), or a Keras ``call``/``train_step``/
        ``test_step``/``predict_step`` method of a class derived from a Keras class."""
        key = id(fn)
        cache = self._tf_fn_cache
        if key not in cache:
            cache[key] = self.tf_function_decorator(fn) is not None or self._wrapped_or_keras(fn)
        return cache[key]

    def tf_function_decorator(self, fn: ast.AST) -> ast.expr | None:
        """The ``@tf.function``/``@tf.function(...)`` decorator of ``fn``, if it has one."""
        for d in getattr(fn, "decorator_list", ()):
            target = d.func if type(d) is ast.Call else d
            if self.qualname(target) in TF_FUNCTION_NAMES:
                return d
        if type(fn) is ast.Lambda:
            p = self.parent(fn)
            if type(p) is ast.Call and self.qualname(p.func) in TF_FUNCTION_NAMES:
                return p
        return None

    def _wrapped_or_keras(self, fn: ast.AST) -> bool:
        name = getattr(fn, "name", None)
        if name is None:
            return False
        if name in self._handed_over()[0]:
            return True
        if name in KERAS_TRACED_METHODS:
            cls = self.parent(fn)
            return type(cls) is ast.ClassDef and self.is_keras_class(cls)
        return False

    def is_keras_class(self, cls: ast.ClassDef, _depth: int = 0) -> bool:
        """Whether a class derives (directly, or through classes in this module) from a
        Keras class (``keras.layers.Layer``, ``tf.keras.Model``, ...)."""
        key = id(cls)
        if key in self._keras_cache:
            return self._keras_cache[key]
        self._keras_cache[key] = False  # cycles
        result = False
        for base in cls.bases:
            q = self.qualname(base)
            if q and q.startswith("keras."):
                result = True
                break
            if type(base) is ast.Name and _depth < 10:
                b = self.binding(base)
                if b is not None and b.kind == "class" and \
                        self.is_keras_class(b.value, _depth + 1):
                    result = True
                    break
        self._keras_cache[key] = result
        return result

    def tf_function_of(self, node: ast.AST) -> ast.AST | None:
        """The innermost enclosing function that TensorFlow compiles, if any."""
        for fn in self.enclosing_functions(node):
            if self.is_tf_function(fn):
                return fn
        return None

    def in_tf_function(self, node: ast.AST) -> bool:
        """Whether ``node`` is traced by ``tf.function`` (see :meth:`is_tf_function`); a
        function nested in a traced one is traced too when called there."""
        return self.tf_function_of(node) is not None

    def dataset_map_call(self, fn: ast.AST) -> ast.Call | None:
        """The ``ds.map(fn)``/``interleave``/``filter``/``flat_map`` call ``fn`` (a function
        or lambda) is handed to, where the receiver looks like a dataset."""
        if type(fn) is ast.Lambda:
            p = self.parent(fn)
            if type(p) is ast.Call and type(p.func) is ast.Attribute \
                    and p.func.attr in DATASET_FN_METHODS and self._looks_like_dataset(p):
                return p
            if type(p) is ast.keyword and p.arg in DATASET_FN_KEYWORDS:
                call = self.parent(p)
                if type(call) is ast.Call and self._looks_like_dataset(call):
                    return call
            return None
        name = getattr(fn, "name", None)
        for call in self._handed_over()[1].get(name or "", ()):
            if self._looks_like_dataset(call):
                return call
        return None

    def _looks_like_dataset(self, call: ast.Call) -> bool:
        recv = call.func.value
        return self.is_dataset(recv) or any(
            k.arg in ("num_parallel_calls", "deterministic", "cycle_length")
            for k in call.keywords)

    def in_dataset_map_fn(self, node: ast.AST) -> bool:
        """Whether ``node`` runs inside a function given to ``Dataset.map``/``interleave``/
        ``filter``/``flat_map`` (including lambdas): tf.data traces it into a graph."""
        return any(self.dataset_map_call(fn) is not None
                   for fn in self.enclosing_functions(node))

    def in_graph(self, node: ast.AST) -> bool:
        """Traced by TensorFlow: in a ``tf.function`` or in a ``tf.data`` map function."""
        return self.in_tf_function(node) or self.in_dataset_map_fn(node)

    def gradient_tape_of(self, node: ast.AST) -> ast.With | None:
        """The innermost ``with tf.GradientTape(...)`` block whose body holds ``node``,
        within the nearest function."""
        child = node
        for p in self.ancestors(node):
            tp = type(p)
            if tp is ast.With or tp is ast.AsyncWith:
                if child in p.body and any(
                        self.is_call_to(item.context_expr, "tensorflow.GradientTape")
                        for item in p.items):
                    return p  # type: ignore[return-value]
            elif tp in FUNCTION_NODES:
                return None
            child = p
        return None

    def under_gradient_tape(self, node: ast.AST) -> bool:
        return self.gradient_tape_of(node) is not None

    # ------------------------------------------------------------------ value heuristics

    def is_tensor_like(self, expr: ast.AST | None) -> bool:
        """Conservative guess that ``expr`` evaluates to a tensor (or variable):

        - a call of a TensorFlow API that returns tensors (``tf.zeros``, ``tf.matmul``,
          ``tf.Variable``; not ``tf.function``, ``tf.data``, ``tf.keras``, ``tf.config``...)
          or of ``keras.ops``;
        - a name whose binding in effect is such a value, including loop variables over a
          tensor or a dataset, and ``x += t``;
        - a parameter annotated ``tf.Tensor``/``tf.Variable``, or a parameter (without a
          literal default, not ``self``/``cls``) of a function TensorFlow compiles;
        - subscripts, arithmetic and unary ops involving any of the above.
        Attributes (``self.w``, ``x.shape``) and method results (``t.numpy()``) are not.
        """
        if expr is None or not self.imports_tf:
            return False
        key = id(expr)
        cached = self._tensor_cache.get(key)
        if cached is not None:
            return cached
        self._tensor_cache[key] = False  # breaks cycles such as `acc = acc + x`
        result = self._tensor_like(expr)
        self._tensor_cache[key] = result
        return result

    def _tensor_like(self, expr: ast.AST) -> bool:
        t = type(expr)
        if t is ast.Call:
            q = self.qualname(expr.func)
            return bool(q) and returns_tensor(q) and not _structure_call(expr, q)  # type: ignore[arg-type]
        if t is ast.Name:
            b = self.binding(expr)  # type: ignore[arg-type]
            return b is not None and self._binding_tensor_like(b)
        if t is ast.Subscript:  # a tensor's slice, or one tensor of a list of them
            return self.is_tensor_like(expr.value) or self.is_tensor_list(expr.value)
        if t is ast.BinOp:
            return self.is_tensor_like(expr.left) or self.is_tensor_like(expr.right)
        if t is ast.UnaryOp:
            return self.is_tensor_like(expr.operand)
        if t is ast.IfExp:
            return self.is_tensor_like(expr.body) and self.is_tensor_like(expr.orelse)
        return False

    def _binding_tensor_like(self, b: Binding) -> bool:
        if b.kind == "assign":
            return self.is_tensor_like(b.value)
        if b.kind == "augassign":
            return self.is_tensor_like(b.value.value) or self.is_tensor_like(b.value.target)
        if b.kind == "for":
            it = _unpacked_iterable(b.value.target, b.name, b.value.iter)
            return it is not None and (self.is_tensor_like(it) or self.is_dataset(it)
                                       or self.is_tensor_list(it))
        if b.kind == "param":
            return self._param_tensor_like(b.value)
        if b.kind == "other" and type(b.value) in (ast.Tuple, ast.List):
            # `a, b = tf.split(x, 2)`: each name is one tensor of the list
            stmt = self.parent(b.value)
            return type(stmt) is ast.Assign and self.is_tensor_list(stmt.value)
        return False

    def is_tensor_list(self, expr: ast.AST | None, _depth: int = 0) -> bool:
        """Whether ``expr`` is a Python list (or tuple) of tensors as a TensorFlow API
        returns one (``tf.split``, ``tf.unstack``, ``tf.gradients``,
        ``tf.trainable_variables``...), or a name bound to one: iterating it visits a few
        Python objects, each a tensor, not a tensor's elements."""
        if expr is None or _depth > 10 or not self.imports_tf:
            return False
        t = type(expr)
        if t is ast.Call:
            q = self.qualname(expr.func)
            if q is not None:
                return returns_tensor_list(q) or _structure_call(expr, q)  # type: ignore[arg-type]
            func = expr.func
            # `list(tf.split(...))`, `reversed(grads)`, `zip(...)` of one
            if type(func) is ast.Name and func.id in ("list", "tuple", "reversed", "sorted") \
                    and len(expr.args) == 1:
                return self.is_tensor_list(expr.args[0], _depth + 1)
            return False
        if t is ast.Name:
            b = self.binding(expr)  # type: ignore[arg-type]
            return b is not None and b.kind == "assign" \
                and self.is_tensor_list(b.value, _depth + 1)
        return False

    def _param_tensor_like(self, arg: ast.arg) -> bool:
        if arg.annotation is not None:
            return self.qualname(arg.annotation) in TENSOR_ANNOTATIONS
        if arg.arg in ("self", "cls"):
            return False
        arguments = self.parent(arg)
        fn = self.parent(arguments) if arguments is not None else None
        if fn is None or not self.is_tf_function(fn):
            return False
        if arg in arguments.kwonlyargs:
            i = arguments.kwonlyargs.index(arg)
            default = arguments.kw_defaults[i]
        else:
            positional = arguments.posonlyargs + arguments.args
            if arg not in positional:
                return False  # *args / **kwargs
            i = positional.index(arg) - (len(positional) - len(arguments.defaults))
            default = arguments.defaults[i] if i >= 0 else None
        # `training=False`, `n=3`: Python values, not tensors.
        return default is None or not isinstance(default, ast.Constant)

    def is_dataset(self, expr: ast.AST | None, _depth: int = 0) -> bool:
        """Conservative guess that ``expr`` is a ``tf.data.Dataset``: a dataset source
        (``tf.data.Dataset.from_tensor_slices``, ``TFRecordDataset``,
        ``keras.utils.image_dataset_from_directory``...), a dataset method applied to one
        (``.map``, ``.batch``...), a name bound to one, a parameter annotated
        ``tf.data.Dataset``, or, as a last resort, a parameter named like one (``ds``,
        ``train_ds``, ``dataset``)."""
        if expr is None or _depth > 30 or not self.imports_tf:
            return False
        t = type(expr)
        if t is ast.Call:
            func = expr.func
            q = self.qualname(func)
            if q is not None:
                return q in DATASET_SOURCES
            if type(func) is ast.Attribute and func.attr in DATASET_METHODS:
                return self.is_dataset(func.value, _depth + 1)
            return False
        if t is ast.Name:
            b = self.binding(expr)  # type: ignore[arg-type]
            if b is None:
                return False
            if b.kind == "assign":
                return self.is_dataset(b.value, _depth + 1)
            if b.kind == "param":
                ann = b.value.annotation
                if ann is not None:
                    return self.qualname(ann) in DATASET_ANNOTATIONS
                return bool(DATASET_NAME.search(b.name))
            return False
        if t is ast.Attribute:  # self.train_ds
            return bool(DATASET_NAME.search(expr.attr))
        return False
