"""The module index: the one walk over a module's tree, and what it records.

Every node's parent (in a dict: no reference cycles in the tree, so each tree is freed by
reference counting as soon as its module is done), every node by type in ``ast.walk`` order,
the calls, and the nodes that bind names (for :mod:`.names`). Also the one per-module cache,
:meth:`ModuleIndex.cached`, that every layer above and every rule helper uses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from tfperf.lint.semantic.tf_api import relative_module

T = TypeVar("T")

# Nodes that bind names (a ``Name`` binds when stored): collected by the walk for ``names``.
BINDER_TYPES = frozenset({ast.Import, ast.ImportFrom, ast.arg, ast.Global, ast.Nonlocal,
                          ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
# Nodes without child nodes (their fields hold names and values only): nothing to walk.
_LEAF_TYPES = frozenset({ast.Constant, ast.alias, ast.Pass, ast.Break, ast.Continue,
                         ast.Global, ast.Nonlocal})
# Fields never worth walking: expression contexts and operators are shared singletons, and
# the rest hold only strings and numbers (identifiers, import levels, flags) in every node
# type: each one skipped is a getattr saved per node of every module.
_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind", "id", "attr", "name",
                          "arg", "module", "level", "conversion", "is_async", "simple",
                          "rest", "kwd_attrs"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# Statements after which nothing in the same block runs.
_TERMINATORS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
# Nodes holding statement lists, and those lists' fields.
_BLOCK_TYPES = frozenset({ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                          ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith,
                          ast.Try, ast.ExceptHandler, *([ast.TryStar] if hasattr(ast, "TryStar")
                                                          else [])})
_STATEMENT_FIELDS = frozenset({"body", "orelse", "finalbody"})


def live_statements(node: ast.AST, field: str, block: list[Any]) -> list[Any]:
    """The statements of ``block`` (``node``'s ``field``) that can run: none after a
    ``return``/``raise``/``continue``/``break`` of the same block, none in the body of
    ``if False:`` / ``if 0:``. Unreachable code is analysed by no rule. A module's own
    body is never cut: a notebook is linted as one module of joined cells, and a cell that
    raises (``raise SystemExit('stop')``) leaves the later cells runnable by hand."""
    if type(node) is ast.Module:
        return block
    if field == "body" and type(node) is ast.If and type(node.test) is ast.Constant \
            and not node.test.value and node.test.value is not None:
        return []
    for i, stmt in enumerate(block[:-1]):
        if isinstance(stmt, _TERMINATORS):
            return block[:i + 1]
    return block


def _child_fields(typ: type) -> tuple[str, ...]:
    fields = tuple(f for f in typ._fields if f not in _SKIP_FIELDS)
    _CHILD_FIELDS[typ] = fields
    return fields


# Line breaks of ``str.splitlines`` that are not line breaks to ``ast``.
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def split_lines(source: str) -> list[str]:
    """Lines as ``ast`` numbers them (``\\n``, ``\\r\\n``, ``\\r``), endings kept."""
    if not any(c in source for c in _OTHER_BREAKS):
        return source.splitlines(keepends=True)  # the same lines, about twice as fast
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", source)


class ModuleIndex:
    """One module's tree, source and path, indexed by one walk.

    Attributes: ``path``, ``source``, ``tree``, ``lines`` (with line endings).
    """

    def __init__(self, tree: ast.Module, source: str, path: str = "<string>") -> None:
        self.path = path
        self.source = source
        self.tree = tree
        self._lines: list[str] | None = None
        self._cache: dict[str, Any] = {}
        self._index()

    def cached(self, key: str, compute: Callable[[], T]) -> T:
        """A fact about the module, computed by ``compute()`` on first use and kept for the
        module's life. Rules are stateless (one instance serves every module, in worker
        processes too): whatever they or their helpers cache per module lives here. Keys are
        plain strings; a helper owns its key (name it after the helper)."""
        cache = self._cache
        if key in cache:
            return cache[key]
        value = cache[key] = compute()
        return value

    @property
    def lines(self) -> list[str]:
        """Source lines with their endings (split on first use: most modules need none)."""
        if self._lines is None:
            self._lines = split_lines(self.source)
        return self._lines

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
        binders, leaves = BINDER_TYPES, _LEAF_TYPES
        blocks, statement_fields = _BLOCK_TYPES, _STATEMENT_FIELDS
        dead: list[Any] = []  # unreachable statements: not indexed, their lines recorded
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
            block = typ in blocks
            for f in fields:
                value = getattr(node, f, None)
                if value is None:
                    continue
                if type(value) is list:
                    if block and f in statement_fields:
                        live = live_statements(node, f, value)
                        if live is not value:
                            dead.extend(value[len(live):] if live else value)
                            value = live
                    for item in value:
                        if isinstance(item, AST):
                            parents[item] = node
                            push(item)
                elif isinstance(value, AST):
                    parents[value] = node
                    push(value)
        self._by_type = by_type
        self._parents = parents
        self.dead_lines: frozenset[int] = frozenset(
            line for stmt in dead
            for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
        self._raw_bindings = raw
        self._raw_calls = cast("list[ast.Call]", by_type.get(ast.Call, []))

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
        (cache the answer with :meth:`cached`), never ``ast.walk`` the module per node."""
        return self._raw_calls

    def name_loads(self, name: str) -> list[ast.Name]:
        """Every read of the bare name ``name`` in the module (``Name`` nodes in ``Load``
        context, walk order), grouped once per module: "where is ``f`` used?" without a walk."""
        def group() -> dict[str, list[ast.Name]]:
            out: dict[str, list[ast.Name]] = {}
            for n in cast("list[ast.Name]", self._by_type.get(ast.Name, [])):
                if type(n.ctx) is ast.Load:
                    out.setdefault(n.id, []).append(n)
            return out
        return self.cached("name_loads", group).get(name, [])

    def call_groups(self) -> tuple[dict[str, list[ast.Call]], dict[str, list[ast.Call]]]:
        """The module's calls by the callee's spelled last name: ``(attribute calls by
        attribute, bare-name calls by name)``, each list in walk order (built once)."""
        return self.cached("call_groups", self._group_calls)

    def _group_calls(self) -> tuple[dict[str, list[ast.Call]], dict[str, list[ast.Call]]]:
        by_attr: dict[str, list[ast.Call]] = {}
        by_name: dict[str, list[ast.Call]] = {}
        Attribute, Name = ast.Attribute, ast.Name
        for c in self._raw_calls:
            f = c.func
            t = type(f)
            if t is Attribute:
                key, table = f.attr, by_attr
            elif t is Name:
                key, table = f.id, by_name
            else:
                continue
            lst = table.get(key)
            if lst is None:
                table[key] = [c]
            else:
                lst.append(c)
        return by_attr, by_name

    @property
    def imported_roots(self) -> frozenset[str]:
        """Top-level packages the module imports from, anywhere (``import a.b`` → "a";
        relative imports only inside a Keras source tree, see ``tf_api.relative_module``:
        elsewhere they cannot resolve to an installed package)."""
        return self.cached("imported_roots", self._find_imported_roots)

    def _find_imported_roots(self) -> frozenset[str]:
        roots: set[str] = set()
        for node in self.nodes_of(ast.Import, ast.ImportFrom):
            if type(node) is ast.Import:
                roots.update(a.name.split(".", 1)[0] for a in node.names)
            elif not node.level and node.module:
                roots.add(node.module.split(".", 1)[0])
            elif node.level:
                resolved = relative_module(self.path, node.level, node.module,
                                           [a.name for a in node.names])
                if resolved:
                    roots.add(resolved.split(".", 1)[0])
        return frozenset(roots)

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
