"""The semantic model rules query through ``ctx``: what names refer to, and where code runs.

Built once per module by one indexing walk that records each node's parent (in a dict: no
reference cycles in the tree) and every node by type, in ``ast.walk`` order. The rest is
built lazily, only for what rules ask: name bindings one name at a time (imports,
assignments, parameters, loop targets, ``def``/``class``, per scope), the calls grouped by
callee name, the functions handed to ``tf.function`` and to ``Dataset.map``-like calls.

Heuristics are deliberately conservative: a rule that fires on correct code teaches users to
ignore tfperf, so "don't know" answers ``None``/``False``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tfperf.core.findings import Edit, Location

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPE_NODES = (*FUNCTION_NODES, ast.ClassDef, *COMPREHENSION_NODES, ast.Module)
LOOP_NODES = (ast.For, ast.AsyncFor, ast.While, *COMPREHENSION_NODES)

TF_FUNCTION_NAMES = frozenset({"tensorflow.function", "tensorflow.compat.v1.function"})
# Keras methods that Keras traces into a graph (unless the model runs eagerly).
KERAS_TRACED_METHODS = frozenset({"call", "train_step", "test_step", "predict_step"})
DATASET_FN_METHODS = frozenset({"map", "interleave", "filter", "flat_map"})
DATASET_FN_KEYWORDS = frozenset({"map_func", "predicate"})
DATASET_METHODS = frozenset({
    "map", "batch", "shuffle", "prefetch", "cache", "repeat", "filter", "interleave",
    "flat_map", "take", "skip", "unbatch", "padded_batch", "apply", "with_options", "shard",
    "concatenate", "enumerate", "window", "rebatch", "ragged_batch", "take_while",
    "bucket_by_sequence_length", "group_by_window", "scan", "unique", "sample_from_datasets",
})
DATASET_SOURCES = frozenset({
    "tensorflow.data.Dataset.from_tensor_slices", "tensorflow.data.Dataset.from_tensors",
    "tensorflow.data.Dataset.range", "tensorflow.data.Dataset.zip",
    "tensorflow.data.Dataset.list_files", "tensorflow.data.Dataset.from_generator",
    "tensorflow.data.Dataset.sample_from_datasets", "tensorflow.data.Dataset.choose_from_datasets",
    "tensorflow.data.Dataset.load", "tensorflow.data.TFRecordDataset",
    "tensorflow.data.TextLineDataset", "tensorflow.data.FixedLengthRecordDataset",
    "tensorflow.data.experimental.make_csv_dataset", "tensorflow.data.experimental.load",
    "keras.utils.image_dataset_from_directory", "keras.utils.text_dataset_from_directory",
    "keras.utils.timeseries_dataset_from_array", "keras.utils.audio_dataset_from_directory",
    "keras.preprocessing.image_dataset_from_directory",
    "keras.preprocessing.text_dataset_from_directory",
    "keras.preprocessing.timeseries_dataset_from_array",
})
DATASET_ANNOTATIONS = frozenset({"tensorflow.data.Dataset"})
TENSOR_ANNOTATIONS = frozenset({
    "tensorflow.Tensor", "tensorflow.Variable", "tensorflow.RaggedTensor",
    "tensorflow.SparseTensor", "tensorflow.compat.v1.Tensor", "tensorflow.compat.v1.Variable",
    "tensorflow.types.experimental.TensorLike",
})
# A variable whose name says it holds a dataset; used only where nothing better is known.
_DATASET_NAME = re.compile(r"(?:^|_)(?:ds|dataset|data_set)s?(?:_|$)", re.IGNORECASE)

# tf.* callables that do not return a tensor (namespaces anywhere in the path, or last parts).
_NON_TENSOR_NAMESPACES = frozenset({
    "keras", "data", "config", "distribute", "saved_model", "summary", "gfile", "test",
    "debugging", "autograph", "sysconfig", "train", "lite", "estimator", "feature_column",
    "errors", "dtypes", "types", "nest", "tpu", "profiler", "experimental", "queue", "version",
    "mixed_precision", "checkpoint", "initializers", "optimizers", "losses", "metrics",
})
_NON_TENSOR_FUNCTIONS = frozenset({
    "function", "print", "device", "name_scope", "executing_eagerly", "is_tensor",
    "get_static_value", "get_logger", "as_dtype", "control_dependencies", "init_scope",
    "numpy_function", "py_func", "Session", "InteractiveSession", "Graph", "get_default_graph",
    "global_variables_initializer", "variable_scope", "enable_eager_execution",
    "disable_eager_execution", "disable_v2_behavior", "set_random_seed", "assert_equal",
    "Assert", "no_op", "group", "make_ndarray", "make_tensor_proto", "ensure_shape",
})
_TENSOR_CLASSES = frozenset({"Variable", "RaggedTensor", "SparseTensor", "IndexedSlices"})


def canonical(qualname: str) -> str:
    """One spelling per API: ``tensorflow.compat.v2.X`` is ``tensorflow.X``; ``tf.keras``,
    ``tensorflow.keras`` and ``tf_keras`` are all ``keras`` (same public API names)."""
    if qualname.startswith("tensorflow."):
        if qualname == "tensorflow.compat.v2" or qualname.startswith("tensorflow.compat.v2."):
            return "tensorflow" + qualname[len("tensorflow.compat.v2"):]
        if qualname == "tensorflow.keras" or qualname.startswith("tensorflow.keras."):
            return "keras" + qualname[len("tensorflow.keras"):]
        if qualname.startswith("tensorflow.python.keras"):
            return "keras" + qualname[len("tensorflow.python.keras"):]
    elif qualname == "tf_keras" or qualname.startswith("tf_keras."):
        return "keras" + qualname[len("tf_keras"):]
    return qualname


def returns_tensor(qualname: str) -> bool:
    """Whether calling the API ``qualname`` (canonical) returns a tensor."""
    if qualname.startswith("keras.ops."):
        return True
    if not qualname.startswith("tensorflow."):
        return False
    parts = qualname.split(".")
    last = parts[-1]
    if not last or last in _NON_TENSOR_FUNCTIONS:
        return False
    if last[0].isupper() and last not in _TENSOR_CLASSES:
        return False
    return not any(p in _NON_TENSOR_NAMESPACES for p in parts[1:-1])


@dataclass(frozen=True, slots=True)
class Binding:
    """One binding of a name in a scope. ``kind``: import, assign, augassign, param, for,
    with, def, class, other. ``value``: the bound expression (assign), the statement
    (augassign/for/def/class), the ``ast.arg`` (param), the ``withitem`` expression (with)."""

    name: str
    kind: str
    pos: tuple[int, int]
    qualname: str | None = None
    value: Any = None


def _alias_binds(node: ast.AST, alias: ast.alias) -> str:
    """The name an import binds: ``import a.b`` binds ``a``; ``from m import b`` and
    ``import a.b as c`` bind ``b`` and ``c``."""
    if alias.asname:
        return alias.asname
    return alias.name.split(".", 1)[0] if type(node) is ast.Import else alias.name


def _binding_pos(b: Binding) -> tuple[int, int]:
    return b.pos


def _pos(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def split_lines(source: str) -> list[str]:
    """Lines as ``ast`` numbers them (``\\n``, ``\\r\\n``, ``\\r``), endings kept."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)


class Context:
    """What a rule may ask about the module it checks. Built by :class:`tfperf.lint.engine`.

    Attributes: ``path``, ``source``, ``tree``, ``lines`` (with line endings).
    """

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>") -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self._lines: list[str] | None = None
        self._wrapped: set[str] = set()  # names passed to tf.function(...)
        self._map_fns: dict[str, list[ast.Call]] = {}  # names passed to ds.map(...) etc.
        self._tensor_cache: dict[int, bool] = {}
        self._keras_cache: dict[int, bool] = {}
        self._tf_fn_cache: dict[int, bool] = {}
        # Per node id (the tree is never mutated, and outlives the context's use).
        self._binding_cache: dict[int, Binding | None] = {}
        self._qualname_cache: dict[int, str | None] = {}
        self._resolvable: set[str] | None = None  # built with the binders, on first use
        self._scope_memo: dict[ast.AST, ast.AST] = {}
        self._index()

    @property
    def lines(self) -> list[str]:
        """Source lines with their endings (split on first use: most modules need none)."""
        if self._lines is None:
            self._lines = split_lines(self.source)
        return self._lines

    # ------------------------------------------------------------------ indexing (one walk)

    def _index(self) -> None:
        """The one walk: parents, nodes by type, and what the lazy tables are built from.

        Breadth first, so every per-type list (:meth:`nodes_of`, :attr:`calls`) is in
        exactly the order ``ast.walk`` would yield those nodes: rules that replace a
        whole-module ``ast.walk`` with these lists keep their "first match" answers."""
        raw: list[ast.AST] = []  # nodes that bind names
        by_type: dict[type, list[ast.AST]] = {}
        nodes: list[ast.AST] = [self.tree]
        # Parent links live in a dict, not on the nodes: no reference cycles, so each tree
        # is freed by reference counting as soon as its module is done.
        parents: dict[ast.AST, ast.AST | None] = {self.tree: None}
        fields_of = _CHILD_FIELDS
        # Local aliases: this loop runs once per node of every file.
        AST, Name, Store = ast.AST, ast.Name, ast.Store
        binders, leaves = _BINDER_TYPES, _LEAF_TYPES
        get_list = by_type.get
        push = nodes.append
        for node in nodes:  # the list grows while it is iterated: a queue without pops
            typ = type(node)
            lst = get_list(typ)
            if lst is None:
                by_type[typ] = [node]
            else:
                lst.append(node)
            if typ is Name:
                if type(node.ctx) is Store:
                    raw.append(node)
                continue  # a Name has no children worth visiting (ctx is a shared singleton)
            if typ in binders:
                raw.append(node)
            if typ in leaves:
                continue
            fields = fields_of.get(typ)
            if fields is None:
                fields = _child_fields(typ)
            for f in fields:
                value = getattr(node, f, None)
                if value is None:
                    continue
                if type(value) is list:
                    for item in value:
                        if isinstance(item, AST):
                            parents[item] = node
                            push(item)
                elif isinstance(value, AST):
                    parents[value] = node
                    push(value)
        self._by_type = by_type
        self._parents = parents
        self._raw_bindings = raw
        self._raw_calls = by_type.get(ast.Call, [])
        self._calls_recorded = False

    def nodes_of(self, *types: type) -> list[ast.AST]:
        """Every node of these types in the module, from the one walk (per type in
        ``ast.walk`` order; several types are concatenated type by type)."""
        if len(types) == 1:
            return self._by_type.get(types[0], [])
        out: list[ast.AST] = []
        for t in types:
            out.extend(self._by_type.get(t, ()))
        return out

    @property
    def calls(self) -> list[ast.Call]:
        """Every call in the module, from the one walk. Whole-module searches ("is ``f``
        passed to ``tf.py_function`` anywhere?") should scan this list once per module
        (cache the answer in :attr:`memo`), never ``ast.walk`` the module per node."""
        return self._raw_calls

    def call_groups(self) -> tuple[dict[str, list[ast.Call]], dict[str, list[ast.Call]]]:
        """The module's calls by the callee's spelled last name: ``(attribute calls by
        attribute, bare-name calls by name)``, each list in walk order (built once)."""
        groups = self.__dict__.get("_call_groups")
        if groups is None:
            by_attr: dict[str, list[ast.Call]] = {}
            by_name: dict[str, list[ast.Call]] = {}
            Attribute, Name = ast.Attribute, ast.Name
            for c in self._raw_calls:
                f = c.func  # type: ignore[attr-defined]
                t = type(f)
                if t is Attribute:
                    key, table = f.attr, by_attr
                elif t is Name:
                    key, table = f.id, by_name
                else:
                    continue
                lst = table.get(key)
                if lst is None:
                    table[key] = [c]  # type: ignore[list-item]
                else:
                    lst.append(c)  # type: ignore[arg-type]
            groups = self.__dict__["_call_groups"] = (by_attr, by_name)
        return groups

    @property
    def memo(self) -> dict[str, Any]:
        """Per-module scratch space for rules' caches (rules themselves are stateless)."""
        m = self.__dict__.get("_memo")
        if m is None:
            m = self.__dict__["_memo"] = {}
        return m

    @property
    def imports_tf(self) -> bool:
        """Whether the module imports TensorFlow or Keras anywhere. Cheap (no name tables):
        rules may return early on modules that do not, as nothing there resolves to TF."""
        cached = getattr(self, "_imports_tf", None)
        if cached is None:
            cached = False
            for node in self._raw_bindings:
                t = type(node)
                if t is ast.Import:
                    names = [a.name for a in node.names]  # type: ignore[attr-defined]
                elif t is ast.ImportFrom and not node.level:  # type: ignore[attr-defined]
                    names = [node.module or ""]  # type: ignore[attr-defined]
                else:
                    continue
                if any(n.split(".", 1)[0] in _TF_ROOTS for n in names):
                    cached = True
                    break
            self._imports_tf = cached
        return cached

    @property
    def imported_roots(self) -> frozenset[str]:
        """Top-level packages the module imports from, anywhere (``import a.b`` → "a";
        relative imports are not counted: they cannot resolve to an installed package)."""
        cached = self.__dict__.get("_imported_roots")
        if cached is None:
            roots: set[str] = set()
            for node in self.nodes_of(ast.Import, ast.ImportFrom):
                if type(node) is ast.Import:
                    roots.update(a.name.split(".", 1)[0] for a in node.names)  # type: ignore[attr-defined]
                elif not node.level and node.module:  # type: ignore[attr-defined]
                    roots.add(node.module.split(".", 1)[0])  # type: ignore[attr-defined]
            cached = self.__dict__["_imported_roots"] = frozenset(roots)
        return cached

    @property
    def spells_tf_function(self) -> bool:
        """Whether anything here could resolve to ``tf.function``: an attribute ``.function``
        or an import binding a name ``function``/``x.function``. Every qualname ending in
        ``function`` comes from one of these (cheap: no name tables). ``False`` means the
        module defines, wraps and decorates no ``tf.function``."""
        cached = self.__dict__.get("_spells_tf_function")
        if cached is None:
            cached = False
            if "function" in self.source:
                cached = any(a.attr == "function"  # type: ignore[attr-defined]
                             for a in self._by_type.get(ast.Attribute, ())) or any(
                    al.name == "function" or al.name.endswith(".function")
                    for node in self.nodes_of(ast.Import, ast.ImportFrom)
                    for al in node.names)  # type: ignore[attr-defined]
            self.__dict__["_spells_tf_function"] = cached
        return cached

    @property
    def may_have_tf_function(self) -> bool:
        """Whether :meth:`is_tf_function` can be true for any function here: something
        spells ``tf.function`` (:attr:`spells_tf_function`), or a ``def`` has a Keras traced
        method's name. Cheap: no name tables."""
        cached = self.__dict__.get("_may_have_tf_function")
        if cached is None:
            cached = self.spells_tf_function or any(
                d.name in KERAS_TRACED_METHODS  # type: ignore[attr-defined]
                for d in self.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef))
            self.__dict__["_may_have_tf_function"] = cached
        return cached

    @property
    def may_trace(self) -> bool:
        """Whether any code here may run traced: :attr:`may_have_tf_function`, or a call
        that hands a function to ``Dataset.map`` & co (an attribute ``.map``/``.filter``...,
        or a ``map_func=``/``predicate=`` keyword). ``False``: nothing here is traced."""
        cached = self.__dict__.get("_may_trace")
        if cached is None:
            cached = self.may_have_tf_function or any(
                a.attr in DATASET_FN_METHODS  # type: ignore[attr-defined]
                for a in self._by_type.get(ast.Attribute, ())) or any(
                k.arg in DATASET_FN_KEYWORDS  # type: ignore[attr-defined]
                for k in self._by_type.get(ast.keyword, ()))
            self.__dict__["_may_trace"] = cached
        return cached

    # Name tables are built per name, on first use: rules ask about a few names (``tf``,
    # ``np``, loop variables...) of the thousands a module binds.

    def _binders(self) -> dict[str, list[ast.AST]]:
        """The nodes binding each name, in walk order (one cheap pass, no scopes yet)."""
        by_name = self.__dict__.get("_binders_by_name")
        if by_name is not None:
            return by_name
        by_name = {}
        declared: dict[str, list[ast.AST]] = {}  # global/nonlocal statements per name
        resolvable: set[str] = set()  # names an import or an assignment binds
        Name, Import, ImportFrom, Arg = ast.Name, ast.Import, ast.ImportFrom, ast.arg
        for node in self._raw_bindings:
            t = type(node)
            if t is Name:
                bound: Any = (node.id,)  # type: ignore[attr-defined]
                resolvable.add(node.id)  # type: ignore[attr-defined]
            elif t is Import or t is ImportFrom:
                bound = [_alias_binds(node, a) for a in node.names if a.name != "*"]  # type: ignore[attr-defined]
                resolvable.update(bound)
            elif t is Arg:
                bound = (node.arg,)  # type: ignore[attr-defined]
            elif t is ast.Global or t is ast.Nonlocal:
                for n in node.names:  # type: ignore[attr-defined]
                    declared.setdefault(n, []).append(node)
                continue
            else:  # def / class
                bound = (node.name,)  # type: ignore[attr-defined]
            for n in bound:
                lst = by_name.get(n)
                if lst is None:
                    by_name[n] = [node]
                elif lst[-1] is not node:  # `import a as x, b as x`: the node once
                    lst.append(node)
        self._declared = declared
        self._resolvable = resolvable
        self._name_tables: dict[str, tuple[set[ast.AST], dict[ast.AST, list[Binding]]]] = {}
        self.__dict__["_binders_by_name"] = by_name
        return by_name

    @property
    def resolvable_names(self) -> set[str]:
        """Names that some import or assignment binds somewhere in the module: only these
        can refer to an API (:meth:`qualname` is ``None`` for every other name). Cheap: no
        scopes are resolved."""
        self._binders()
        return self._resolvable

    def _name_table(self, name: str) -> tuple[set[ast.AST], dict[ast.AST, list[Binding]]]:
        """For one name: the scopes that declare it ``global``/``nonlocal``, and its
        bindings per scope sorted by position."""
        binders = self._binders()
        table = self._name_tables.get(name)
        if table is None:
            declared = {self.scope_of(g) for g in self._declared.get(name, ())}
            by_scope: dict[ast.AST, list[Binding]] = {}
            tree = self.tree
            for node in binders.get(name, ()):
                for scope, binding in self._bindings_of(node, name):
                    if binding.kind != "param" and scope in declared:
                        scope = tree
                    lst = by_scope.get(scope)
                    if lst is None:
                        by_scope[scope] = [binding]
                    else:
                        lst.append(binding)
            for lst in by_scope.values():
                if len(lst) > 1:
                    lst.sort(key=_binding_pos)
            table = self._name_tables[name] = (declared, by_scope)
        return table

    def _bindings_of(self, node: ast.AST, name: str) -> list[tuple[ast.AST, Binding]]:
        """(scope, binding) for each binding of ``name`` that ``node`` makes."""
        t = type(node)
        if t is ast.Name:
            return [(self.scope_of(node), self._store_binding(node, name))]  # type: ignore[arg-type]
        if t is ast.Import or t is ast.ImportFrom:
            mod = getattr(node, "module", None)
            out = []
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name == "*" or _alias_binds(node, alias) != name:
                    continue
                if t is ast.Import:  # `import a.b` refers to a; `import a.b as c` to a.b
                    q: str | None = canonical(alias.name if alias.asname else name)
                else:
                    q = canonical(f"{mod}.{alias.name}") if mod and not node.level else None  # type: ignore[attr-defined]
                out.append((self.scope_of(node), Binding(name, "import", _pos(node), q, node)))
            return out
        if t is ast.arg:
            fn = self.parent(self.parent(node))  # arg → arguments → function
            return [] if fn is None else [(fn, Binding(name, "param", _pos(node), None, node))]
        kind = "class" if t is ast.ClassDef else "def"
        return [(self.scope_of(node), Binding(name, kind, _pos(node), None, node))]

    def _calls_table(self) -> None:
        """The tf.function / Dataset.map tables (:meth:`_record_calls`), built on first use."""
        if not self._calls_recorded:
            self._calls_recorded = True
            self._record_calls(self._raw_calls)

    def _store_binding(self, node: ast.Name, name: str) -> Binding:
        parent = self.parent(node)
        pos = _pos(node)
        pt = type(parent)
        if pt in (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign):
            # The new value is visible only after the statement: in `x = x + 1` the right
            # side still reads the previous binding.
            pos = (parent.end_lineno or 0, parent.end_col_offset or 0)  # type: ignore[union-attr]
        if pt is ast.Assign and node in parent.targets:  # type: ignore[union-attr]
            return Binding(name, "assign", pos, None, parent.value)  # type: ignore[union-attr]
        if pt is ast.AnnAssign or pt is ast.NamedExpr:
            return Binding(name, "assign", pos, None, parent.value)  # type: ignore[union-attr]
        if pt is ast.AugAssign:
            return Binding(name, "augassign", pos, None, parent)
        if pt in (ast.For, ast.AsyncFor, ast.comprehension):
            return Binding(name, "for", pos, None, parent)
        if pt is ast.Tuple or pt is ast.List:  # unpacking: remember the loop, if any
            outer = self.parent(parent)  # type: ignore[arg-type]
            if type(outer) in (ast.For, ast.AsyncFor, ast.comprehension):
                return Binding(name, "for", pos, None, outer)
        if pt is ast.withitem:
            return Binding(name, "with", pos, None, parent.context_expr)  # type: ignore[union-attr]
        return Binding(name, "other", pos, None, parent)

    def _record_calls(self, calls: list[ast.Call]) -> None:
        for call in calls:
            func = call.func
            if type(func) is ast.Attribute and func.attr in DATASET_FN_METHODS:
                fn_args = list(call.args[:1]) + [k.value for k in call.keywords
                                                 if k.arg in DATASET_FN_KEYWORDS]
                for a in fn_args:
                    key = _callable_key(a)
                    if key:
                        self._map_fns.setdefault(key, []).append(call)
            # `tf.function(g)`, or a bare name under any alias: `from tensorflow import
            # function as compile_fn; compile_fn(g)`, `fn = tf.function; fn(g)`.
            elif call.args and (type(func) is ast.Name or (
                    type(func) is ast.Attribute and func.attr == "function")) \
                    and self.qualname(func) in TF_FUNCTION_NAMES:
                key = _callable_key(call.args[0])
                if key:
                    self._wrapped.add(key)

    # ------------------------------------------------------------------ tree navigation

    def parent(self, node: ast.AST) -> ast.AST | None:
        """The node's parent (``None`` for the module)."""
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """Parents from the nearest up to the module."""
        parents = self._parents
        p = parents.get(node)
        while p is not None:
            yield p
            p = parents.get(p)

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function, lambda, class, comprehension or module whose namespace ``node``'s
        names live in. Decorators, defaults and a comprehension's first iterable belong to
        the enclosing scope, as in Python. Memoised: every node on the way up gets the
        answer too (siblings and descendants share most of their way)."""
        memo = self._scope_memo
        found = memo.get(node)
        if found is not None:
            return found
        parents = self._parents
        path: list[ast.AST] = []
        n = node
        while True:
            found = memo.get(n)
            if found is not None:
                break
            path.append(n)
            p = parents.get(n)
            if p is None:
                found = self.tree
                break
            tp = type(p)
            if tp in _SCOPE_SET:
                if tp not in _DEF_TYPES or (
                        n not in p.decorator_list  # type: ignore[attr-defined]
                        and n is not getattr(p, "returns", None)
                        and n not in getattr(p, "bases", ())
                        and n not in getattr(p, "keywords", ())):
                    found = p
                    break
            elif tp is ast.comprehension and n is p.iter:  # type: ignore[attr-defined]
                comp = parents.get(p)
                if comp is not None and comp.generators[0] is p:  # type: ignore[attr-defined]
                    n = comp  # the first iterable runs in the enclosing scope
                    continue
            n = p
        for x in path:
            memo[x] = found
        return found

    def _in_first_iter(self, node: ast.AST, comp: ast.AST) -> bool:
        first_iter = comp.generators[0].iter  # type: ignore[attr-defined]
        n: ast.AST | None = node
        while n is not None and n is not comp:
            if n is first_iter:
                return True
            n = self._parents.get(n)
        return False

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        """The nearest ``def``/``async def``/``lambda`` whose body contains ``node``."""
        for fn in self.enclosing_functions(node):
            return fn
        return None

    def enclosing_functions(self, node: ast.AST) -> Iterator[ast.AST]:
        """Functions and lambdas whose body contains ``node``, nearest first (a function's
        decorators and defaults run outside it, so they are not inside)."""
        child = node
        for p in self.ancestors(node):
            tp = type(p)
            if tp is ast.Lambda:
                if child is p.body:  # type: ignore[attr-defined]
                    yield p
            elif tp in (ast.FunctionDef, ast.AsyncFunctionDef) \
                    and child not in p.decorator_list and child is not p.returns \
                    and child is not p.args:  # type: ignore[attr-defined]
                yield p
            child = p

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        for p in self.ancestors(node):
            if type(p) is ast.ClassDef:
                return p  # type: ignore[return-value]
        return None

    def enclosing_loops(self, node: ast.AST) -> list[ast.AST]:
        """Loops (for, while, comprehensions) that run ``node`` once per iteration, nearest
        first, within the nearest function (a loop around a ``def`` does not run its body).
        A ``for``'s iterable and ``else`` and a comprehension's first iterable run once."""
        loops: list[ast.AST] = []
        child = node
        for p in self.ancestors(node):
            tp = type(p)
            if tp is ast.For or tp is ast.AsyncFor:
                if child is not p.iter and child not in p.orelse:  # type: ignore[attr-defined]
                    loops.append(p)
            elif tp is ast.While:
                if child not in p.orelse:  # type: ignore[attr-defined]
                    loops.append(p)
            elif tp in COMPREHENSION_NODES:
                if not (child is p.generators[0]  # type: ignore[attr-defined]
                        and self._in_first_iter(node, p)):
                    loops.append(p)
            elif tp in FUNCTION_NODES:
                break
            child = p
        return loops

    def in_loop(self, node: ast.AST) -> bool:
        return bool(self.enclosing_loops(node))

    # ------------------------------------------------------------------ names

    def binding(self, node: ast.Name) -> Binding | None:
        """The binding a loaded name refers to here: the scope chain as Python walks it
        (class bodies are skipped for names used in nested functions), and within the scope
        the last binding before this use (or the last one at all: loops, late globals)."""
        key = id(node)
        cache = self._binding_cache
        if key in cache:
            return cache[key]
        found = cache[key] = self._binding(node)
        return found

    def _binding(self, node: ast.Name) -> Binding | None:
        name = node.id
        if name not in self._binders():
            return None  # bound nowhere in the module: a builtin, or undefined
        declared, table = self._name_table(name)
        scope: ast.AST | None = self.scope_of(node)
        first = True
        pos = _pos(node)
        tree = self.tree
        while scope is not None:
            if scope in declared:
                scope = tree
            if first or type(scope) is not ast.ClassDef:
                lst = table.get(scope)
                if lst:
                    chosen = lst[-1]
                    for b in lst:
                        if b.pos < pos:
                            chosen = b
                        else:
                            break
                    return chosen
            if scope is tree:
                return None
            first = False
            scope = self.scope_of(scope)
        return None

    def qualname(self, expr: ast.AST | None) -> str | None:
        """What a Name or Attribute refers to, canonical (see :func:`canonical`):
        ``tf.transpose`` → ``"tensorflow.transpose"`` after ``import tensorflow as tf``;
        ``None`` when it is not an imported API (a local value, a rebound name)."""
        key = id(expr)
        cache = self._qualname_cache
        if key in cache:
            return cache[key]
        found = cache[key] = self._qualname(expr, 0)
        return found

    def _qualname(self, expr: ast.AST | None, depth: int) -> str | None:
        if depth > 20:
            return None
        t = type(expr)
        if t is ast.Attribute:
            base = self._qualname(expr.value, depth + 1)  # type: ignore[union-attr]
            return canonical(f"{base}.{expr.attr}") if base else None  # type: ignore[union-attr]
        if t is ast.Name:
            resolvable = self._resolvable
            if resolvable is None:
                self._binders()
                resolvable = self._resolvable
            if expr.id not in resolvable:  # type: ignore[union-attr, operator]
                return None  # no import or assignment binds it: not an API
            b = self.binding(expr)  # type: ignore[arg-type]
            if b is None:
                return None
            if b.kind == "import":
                return b.qualname
            if b.kind == "assign" and type(b.value) in (ast.Name, ast.Attribute) \
                    and b.value is not expr:
                return self._qualname(b.value, depth + 1)  # `T = tf.transpose`
        return None

    def call_qualname(self, node: ast.AST) -> str | None:
        """For a call, what its callee refers to (``tf.zeros(3)`` → ``"tensorflow.zeros"``)."""
        return self.qualname(node.func) if type(node) is ast.Call else None  # type: ignore[attr-defined]

    def is_call_to(self, node: ast.AST, *qualnames: str) -> bool:
        """Whether ``node`` is a call of one of ``qualnames`` (canonical spellings)."""
        return type(node) is ast.Call and self.qualname(node.func) in qualnames  # type: ignore[attr-defined]

    def module_alias(self, qualname: str = "tensorflow") -> str | None:
        """The module-level name bound to ``qualname`` (e.g. ``"tf"``), for fixes: the first
        (in walk order) whose module-level bindings all import exactly that."""
        tree = self.tree
        seen: set[str] = set()
        for node in self._raw_bindings:  # walk order; only module-level imports count
            t = type(node)
            if t is not ast.Import and t is not ast.ImportFrom:
                continue
            scope = self.scope_of(node)
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name == "*":
                    continue
                name = _alias_binds(node, alias)
                if name in seen:
                    continue
                declared, table = self._name_table(name)
                if scope is not tree and scope not in declared:
                    continue
                seen.add(name)
                lst = table.get(tree)
                if lst and all(b.kind == "import" and b.qualname == qualname for b in lst):
                    return name
        return None

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
            if type(p) is ast.Call and self.qualname(p.func) in TF_FUNCTION_NAMES:  # type: ignore[union-attr]
                return p  # type: ignore[return-value]
        return None

    def _wrapped_or_keras(self, fn: ast.AST) -> bool:
        name = getattr(fn, "name", None)
        if name is None:
            return False
        self._calls_table()
        if name in self._wrapped:
            return True
        if name in KERAS_TRACED_METHODS:
            cls = self.parent(fn)
            return type(cls) is ast.ClassDef and self.is_keras_class(cls)  # type: ignore[arg-type]
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
                    and p.func.attr in DATASET_FN_METHODS and self._looks_like_dataset(p):  # type: ignore[union-attr]
                return p  # type: ignore[return-value]
            if type(p) is ast.keyword and p.arg in DATASET_FN_KEYWORDS:  # type: ignore[union-attr]
                call = self.parent(p)
                if type(call) is ast.Call and self._looks_like_dataset(call):  # type: ignore[arg-type]
                    return call  # type: ignore[return-value]
            return None
        name = getattr(fn, "name", None)
        self._calls_table()
        for call in self._map_fns.get(name or "", ()):
            if self._looks_like_dataset(call):
                return call
        return None

    def _looks_like_dataset(self, call: ast.Call) -> bool:
        recv = call.func.value  # type: ignore[attr-defined]
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
                if child in p.body and any(  # type: ignore[attr-defined]
                        self.is_call_to(item.context_expr, "tensorflow.GradientTape")
                        for item in p.items):  # type: ignore[attr-defined]
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
            q = self.qualname(expr.func)  # type: ignore[attr-defined]
            return bool(q) and returns_tensor(q)  # type: ignore[arg-type]
        if t is ast.Name:
            b = self.binding(expr)  # type: ignore[arg-type]
            return b is not None and self._binding_tensor_like(b)
        if t is ast.Subscript:
            return self.is_tensor_like(expr.value)  # type: ignore[attr-defined]
        if t is ast.BinOp:
            return self.is_tensor_like(expr.left) or self.is_tensor_like(expr.right)  # type: ignore[attr-defined]
        if t is ast.UnaryOp:
            return self.is_tensor_like(expr.operand)  # type: ignore[attr-defined]
        if t is ast.IfExp:
            return self.is_tensor_like(expr.body) and self.is_tensor_like(expr.orelse)  # type: ignore[attr-defined]
        return False

    def _binding_tensor_like(self, b: Binding) -> bool:
        if b.kind == "assign":
            return self.is_tensor_like(b.value)
        if b.kind == "augassign":
            return self.is_tensor_like(b.value.value) or self.is_tensor_like(b.value.target)
        if b.kind == "for":
            it = b.value.iter
            return self.is_tensor_like(it) or self.is_dataset(it)
        if b.kind == "param":
            return self._param_tensor_like(b.value)
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
        if arg in arguments.kwonlyargs:  # type: ignore[union-attr]
            i = arguments.kwonlyargs.index(arg)  # type: ignore[union-attr]
            default = arguments.kw_defaults[i]  # type: ignore[union-attr]
        else:
            positional = arguments.posonlyargs + arguments.args  # type: ignore[union-attr]
            if arg not in positional:
                return False  # *args / **kwargs
            i = positional.index(arg) - (len(positional) - len(arguments.defaults))  # type: ignore[union-attr]
            default = arguments.defaults[i] if i >= 0 else None  # type: ignore[union-attr]
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
            func = expr.func  # type: ignore[attr-defined]
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
                return bool(_DATASET_NAME.search(b.name))
            return False
        if t is ast.Attribute:  # self.train_ds
            return bool(_DATASET_NAME.search(expr.attr))  # type: ignore[attr-defined]
        return False

    # ------------------------------------------------------------------ positions and edits

    def char_col(self, line: int, byte_col: int) -> int:
        """``ast`` columns are UTF-8 byte offsets; findings and edits use characters."""
        if line < 1 or line > len(self.lines):
            return byte_col
        text = self.lines[line - 1]
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, col, end_line, end_col) of ``node`` in characters."""
        line, end_line = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
        col = self.char_col(line, node.col_offset)  # type: ignore[attr-defined]
        end_col = self.char_col(end_line, node.end_col_offset or 0)  # type: ignore[attr-defined]
        return line, col, end_line, end_col

    def location(self, node: ast.AST) -> Location:
        line, col, end_line, end_col = self.span(node)
        return Location(path=self.path, line=line, column=col, end_line=end_line,
                        end_column=end_col)

    def source_of(self, node: ast.AST) -> str:
        """The exact source text of ``node`` (correct for non-ASCII text)."""
        line, col, end_line, end_col = self.span(node)
        if line == end_line:
            return self.lines[line - 1][col:end_col]
        parts = [self.lines[line - 1][col:]]
        parts += self.lines[line:end_line - 1]
        parts.append(self.lines[end_line - 1][:end_col])
        return "".join(parts)

    def indent_of(self, node: ast.AST) -> str:
        """The leading whitespace of the line ``node`` starts on."""
        text = self.lines[node.lineno - 1]  # type: ignore[attr-defined]
        return text[: len(text) - len(text.lstrip(" \t"))]

    def replace(self, node: ast.AST, content: str) -> Edit:
        """An edit replacing ``node``'s text with ``content``."""
        line, col, end_line, end_col = self.span(node)
        return Edit(line, col, end_line, end_col, content)

    def replace_range(self, first: ast.AST, last: ast.AST, content: str) -> Edit:
        """An edit replacing the text from the start of ``first`` to the end of ``last``."""
        line, col, _, _ = self.span(first)
        _, _, end_line, end_col = self.span(last)
        return Edit(line, col, end_line, end_col, content)

    def insert_before(self, node: ast.AST, content: str) -> Edit:
        line, col, _, _ = self.span(node)
        return Edit(line, col, line, col, content)

    def insert_after(self, node: ast.AST, content: str) -> Edit:
        _, _, end_line, end_col = self.span(node)
        return Edit(end_line, end_col, end_line, end_col, content)


_TF_ROOTS = frozenset({"tensorflow", "keras", "tf_keras"})
_DEF_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_SCOPE_SET = frozenset(SCOPE_NODES)
_BINDER_TYPES = frozenset({ast.Import, ast.ImportFrom, ast.arg, ast.Global, ast.Nonlocal,
                           *_DEF_TYPES})
# Nodes without child nodes (their fields hold names and values only): nothing to walk.
_LEAF_TYPES = frozenset({ast.Constant, ast.alias, ast.Pass, ast.Break, ast.Continue,
                         ast.Global, ast.Nonlocal})
# Fields never worth walking: expression contexts and operators are shared singletons.
_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(typ: type) -> tuple[str, ...]:
    fields = tuple(f for f in typ._fields if f not in _SKIP_FIELDS)  # type: ignore[attr-defined]
    _CHILD_FIELDS[typ] = fields
    return fields


def _callable_key(expr: ast.AST) -> str | None:
    """``f`` → "f"; ``self.f`` → "f" (methods are matched by name)."""
    if type(expr) is ast.Name:
        return expr.id  # type: ignore[attr-defined]
    if type(expr) is ast.Attribute:
        return expr.attr  # type: ignore[attr-defined]
    return None


def names_loaded(node: ast.AST) -> set[str]:
    """Every name read anywhere under ``node``."""
    return {n.id for n in ast.walk(node) if type(n) is ast.Name and type(n.ctx) is ast.Load}
