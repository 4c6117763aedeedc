"""Names and scopes: what a name refers to at a given place, as Python resolves it.

Bindings (imports, assignments, parameters, loop targets, ``with ... as``, ``def``/``class``)
are gathered per name on first use (rules ask about a few names of the thousands a module
binds), per scope, in position order; a loaded name resolves through the scope chain the way
Python does. On top of that: the scope, function, class and loops a node runs in, and the
canonical qualified name of an imported API (``tf.transpose`` → ``tensorflow.transpose``).
Nothing here knows TensorFlow beyond the spelling rules of :func:`.tf_api.canonical`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tfperf.lint.semantic.index import ModuleIndex
from tfperf.lint.semantic.tf_api import canonical, relative_module

FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
SCOPE_NODES = (*FUNCTION_NODES, ast.ClassDef, *COMPREHENSION_NODES, ast.Module)
LOOP_NODES = (ast.For, ast.AsyncFor, ast.While, *COMPREHENSION_NODES)


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


def _binding_pos(b: Binding) -> tuple[int, int]:
    return b.pos


def _pos(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))

_DEF_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_SCOPE_TYPES = frozenset(SCOPE_NODES)


def alias_binds(node: ast.AST, alias: ast.alias) -> str:
    """The name an import binds: ``import a.b`` binds ``a``; ``from m import b`` and
    ``import a.b as c`` bind ``b`` and ``c``."""
    if alias.asname:
        return alias.asname
    return alias.name.split(".", 1)[0] if type(node) is ast.Import else alias.name


def names_loaded(node: ast.AST) -> set[str]:
    """Every name read anywhere under ``node``."""
    return {n.id for n in ast.walk(node) if type(n) is ast.Name and type(n.ctx) is ast.Load}


#: The one name a star import is taken to bind when nothing else in the module does.
STAR_TF = "tf"


class NameModel(ModuleIndex):
    """The module index plus name resolution and the scopes and loops code runs in."""

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>") -> None:
        super().__init__(tree, source, path)
        # Per node id (the tree is never mutated, and outlives the context's use).
        self._binding_cache: dict[int, Binding | None] = {}
        self._qualname_cache: dict[int, str | None] = {}
        self._scope_memo: dict[ast.AST, ast.AST] = {}
        # Built together by :meth:`_binders`, on first use.
        self._binders_by_name: dict[str, list[ast.AST]] | None = None
        self._resolvable: set[str] | None = None
        self._star_tf = False  # `tf` comes from a star import or the kernel (see _binders)
        self._declared: dict[str, list[ast.AST]] = {}
        self._name_tables: dict[str, tuple[set[ast.AST], dict[ast.AST, list[Binding]]]] = {}

    # Name tables are built per name, on first use: rules ask about a few names (``tf``,
    # ``np``, loop variables...) of the thousands a module binds.

    def _binders(self) -> dict[str, list[ast.AST]]:
        """The nodes binding each name, in walk order (one cheap pass, no scopes yet)."""
        by_name = self._binders_by_name
        if by_name is not None:
            return by_name
        by_name = {}
        star = False
        declared: dict[str, list[ast.AST]] = {}  # global/nonlocal statements per name
        resolvable: set[str] = set()  # names an import or an assignment binds
        Name, Import, ImportFrom, Arg = ast.Name, ast.Import, ast.ImportFrom, ast.arg
        for node in self._raw_bindings:
            t = type(node)
            if t is Name:
                bound: Any = (node.id,)
                resolvable.add(node.id)
            elif t is Import or t is ImportFrom:
                bound = [alias_binds(node, a) for a in node.names if a.name != "*"]
                resolvable.update(bound)
                if t is ImportFrom and len(bound) < len(node.names):
                    star = True
            elif t is Arg:
                bound = (node.arg,)
            elif t is ast.Global or t is ast.Nonlocal:
                for n in node.names:
                    declared.setdefault(n, []).append(node)
                continue
            else:  # def / class
                bound = (node.name,)
            for n in bound:
                lst = by_name.get(n)
                if lst is None:
                    by_name[n] = [node]
                elif lst[-1] is not node:  # `import a as x, b as x`: the node once
                    lst.append(node)
        # `from train import *` where train.py does `import tensorflow as tf`: research code
        # does this, and a `tf` that nothing in the module binds can only come from there.
        # A notebook's cells run in a kernel that may hold names no saved cell binds (a cell
        # deleted or that does not parse, `%run setup.py`, a Colab runtime): a `tf` there
        # comes from the kernel. Read as TensorFlow in both; the name is conventional enough
        # for the guess to be safe. A plain module's unbound `tf` is left alone.
        self._star_tf = (star or self.path.endswith(".ipynb")) and STAR_TF not in by_name
        if self._star_tf:
            resolvable.add(STAR_TF)
        self._declared = declared
        self._resolvable = resolvable
        self._binders_by_name = by_name
        return by_name

    def _find_imported_roots(self) -> frozenset[str]:
        roots = super()._find_imported_roots()
        if "tensorflow" not in roots and "tf." in self.source and self.guesses_tf:
            return roots | {"tensorflow"}  # the guessed `tf` is TensorFlow's
        return roots

    @property
    def guesses_tf(self) -> bool:
        """Whether a ``tf`` that nothing here binds is read as TensorFlow (a star import,
        or a notebook's kernel: see :meth:`_binders`)."""
        self._binders()
        return self._star_tf

    @property
    def resolvable_names(self) -> set[str]:
        """Names that some import or assignment binds somewhere in the module: only these
        can refer to an API (:meth:`qualname` is ``None`` for every other name). Cheap: no
        scopes are resolved."""
        self._binders()
        return self._resolvable  # type: ignore[return-value]

    def _name_table(self, name: str) -> tuple[set[ast.AST], dict[ast.AST, list[Binding]]]:
        """For one name: the scopes that declare it ``global``/``nonlocal``, and its
        bindings per scope sorted by position."""
        table = self._name_tables.get(name)
        if table is None:
            binders = self._binders()
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
            for alias in node.names:
                if alias.name == "*" or alias_binds(node, alias) != name:
                    continue
                if t is ast.Import:  # `import a.b` refers to a; `import a.b as c` to a.b
                    q: str | None = canonical(alias.name if alias.asname else name)
                else:
                    if node.level:
                        mod = relative_module(self.path, node.level, mod,
                                              [a.name for a in node.names])
                    q = canonical(f"{mod}.{alias.name}") if mod else None
                out.append((self.scope_of(node), Binding(name, "import", _pos(node), q, node)))
            return out
        if t is ast.arg:
            args = self.parent(node)  # arg → arguments → function
            fn = self.parent(args) if args is not None else None
            return [] if fn is None else [(fn, Binding(name, "param", _pos(node), None, node))]
        kind = "class" if t is ast.ClassDef else "def"
        return [(self.scope_of(node), Binding(name, kind, _pos(node), None, node))]


    def _store_binding(self, node: ast.Name, name: str) -> Binding:
        parent = self.parent(node)
        pos = _pos(node)
        pt = type(parent)
        if pt in (ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign):
            # The new value is visible only after the statement: in `x = x + 1` the right
            # side still reads the previous binding.
            pos = (parent.end_lineno or 0, parent.end_col_offset or 0)
        if pt is ast.Assign and node in parent.targets:
            return Binding(name, "assign", pos, None, parent.value)
        if pt is ast.AnnAssign or pt is ast.NamedExpr:
            return Binding(name, "assign", pos, None, parent.value)
        if pt is ast.AugAssign:
            return Binding(name, "augassign", pos, None, parent)
        if pt in (ast.For, ast.AsyncFor, ast.comprehension):
            return Binding(name, "for", pos, None, parent)
        if pt is ast.Tuple or pt is ast.List:  # unpacking: remember the loop, if any
            outer = self.parent(parent)  # type: ignore[arg-type]
            if type(outer) in (ast.For, ast.AsyncFor, ast.comprehension):
                return Binding(name, "for", pos, None, outer)
        if pt is ast.withitem:
            return Binding(name, "with", pos, None, parent.context_expr)
        return Binding(name, "other", pos, None, parent)


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
            if tp in _SCOPE_TYPES:
                if tp not in _DEF_TYPES or (
                        n not in p.decorator_list
                        and n is not getattr(p, "returns", None)
                        and n not in getattr(p, "bases", ())
                        and n not in getattr(p, "keywords", ())):
                    found = p
                    break
            elif tp is ast.comprehension and n is p.iter:
                comp = parents.get(p)
                if comp is not None and comp.generators[0] is p:
                    n = comp  # the first iterable runs in the enclosing scope
                    continue
            n = p
        for x in path:
            memo[x] = found
        return found

    def _in_first_iter(self, node: ast.AST, comp: ast.AST) -> bool:
        first_iter = comp.generators[0].iter
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
                if child is p.body:
                    yield p
            elif tp in (ast.FunctionDef, ast.AsyncFunctionDef) \
                    and child not in p.decorator_list and child is not p.returns \
                    and child is not p.args:
                yield p
            child = p

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        for p in self.ancestors(node):
            if type(p) is ast.ClassDef:
                return p
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
                if child is not p.iter and child not in p.orelse:
                    loops.append(p)
            elif tp is ast.While:
                if child not in p.orelse:
                    loops.append(p)
            elif tp in COMPREHENSION_NODES:
                if not (child is p.generators[0]
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
        if name not in (self._binders_by_name or self._binders()):
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

    def scope_bindings(self, node: ast.Name) -> list[Binding]:
        """Every binding of ``node``'s name in the scope its use resolves to, in order: the
        assignments in each branch of an ``if``/``else`` that reach the use."""
        b = self.binding(node)
        if b is None:
            return []
        _declared, table = self._name_table(node.id)
        for lst in table.values():
            if b in lst:
                return list(lst)
        return [b]

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
            base = self._qualname(expr.value, depth + 1)
            return canonical(f"{base}.{expr.attr}") if base else None
        if t is ast.Name:
            resolvable = self._resolvable
            if resolvable is None:
                self._binders()
                resolvable = self._resolvable
            if expr.id not in resolvable:  # type: ignore[operator]
                return None  # no import or assignment binds it: not an API
            if self._star_tf and expr.id == STAR_TF:
                return "tensorflow"
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
        return self.qualname(node.func) if type(node) is ast.Call else None

    def is_call_to(self, node: ast.AST, *qualnames: str) -> bool:
        """Whether ``node`` is a call of one of ``qualnames`` (canonical spellings)."""
        return type(node) is ast.Call and self.qualname(node.func) in qualnames

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
            for alias in node.names:
                if alias.name == "*":
                    continue
                name = alias_binds(node, alias)
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


    def is_builtin(self, expr: ast.AST, *names: str) -> bool:
        """``expr`` is a bare name among ``names`` that nothing in the module binds where it
        is read: Python's builtin of that name (``range``, ``len``, ``float``...)."""
        return type(expr) is ast.Name and expr.id in names \
            and self.binding(expr) is None

    def is_builtin_call(self, node: ast.AST, *names: str) -> bool:
        """``node`` calls one of the builtins ``names`` (see :meth:`is_builtin`)."""
        return type(node) is ast.Call and self.is_builtin(node.func, *names)
