"""The project: module summaries joined by the import graph of the linted files.

A module is found by the dotted names its path can be imported by (``pkg/agent.py`` is
``agent`` and ``pkg.agent``; ``pkg/__init__.py`` is ``pkg``), the nearest to the importing
file first (Python's path puts the script's folder first); relative imports are resolved
against the importing file's folder. Re-exports (``from .agent import Agent`` in a
package's ``__init__``) are followed.

Questions rules ask:

- :meth:`Project.resolve`: the function a call reaches, in any module;
- :meth:`Project.calls_to`: the calls that reach a function, from any module;
- :meth:`Project.hot_call`: whether a function runs once per iteration of an eager Python
  loop somewhere (called in a loop, or from a function that is, through any chain of
  calls outside traced code), and the call that makes it so; ``env=True``: once per step
  of an environment (the loop's body calls ``env.step``).

A call on an attribute whose class is chosen at run time (``self.deep_q.predict_movement``)
reaches every project method of that name whose parameters fit the call, where the name
is not one library objects define (:func:`tfperf.analysis.summary.distinctive_method`) and
few classes define it.

Built every run from that run's summaries (cheap: no source is read), so a change in one
module shows in the findings of every module that depends on it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tfperf.analysis.summary import BY_METHOD_NAME, CallFact, FunctionFact, ModuleSummary

_DEPTH = 4  # re-exports followed
# A method name that more classes define than this is a protocol (``act``, ``learn``), not
# a link worth following by name alone.
_MAX_BY_NAME = 6


@dataclass(frozen=True)
class Site:
    """A call somewhere in the project: the module it is in and the call."""

    module: ModuleSummary
    call: CallFact


def module_names(path: str) -> list[tuple[str, ...]]:
    """The dotted names (as tuples of parts, longest last) a file may be imported by."""
    norm = os.path.normpath(os.path.abspath(path))
    stem, ext = os.path.splitext(norm)
    if ext != ".py":
        return []
    parts = [p for p in stem.split(os.sep) if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return [tuple(parts[-k:]) for k in range(1, min(len(parts), 6) + 1)]


def import_root(path: str, parts: int) -> str:
    """The folder from which ``path`` is imported by a dotted name of ``parts`` parts."""
    root = os.path.dirname(os.path.abspath(path))
    if os.path.basename(path) == "__init__.py":
        root = os.path.dirname(root)
    for _ in range(parts - 1):
        root = os.path.dirname(root)
    return root


def _fits(fact: FunctionFact, call: CallFact) -> bool:
    """The method's parameters take the call's arguments (positions and keywords)."""
    if call.star or not fact.params:  # no parameters kept: a module without TensorFlow
        return True
    params = fact.params[1:] if fact.params[:1] in (["self"], ["cls"]) else fact.params
    given = [a.slot for a in call.args]
    positional = sum(1 for s in given if s.isdigit())
    return positional <= len(params) and all(s.isdigit() or s in params for s in given)


def is_above(folder: str, here: str) -> bool:
    return here == folder or here.startswith(folder.rstrip(os.sep) + os.sep)


class Project:
    def __init__(self, summaries: Iterable[ModuleSummary]) -> None:
        self.modules: dict[str, ModuleSummary] = {}
        self._by_name: dict[tuple[str, ...], list[str]] = {}
        self._by_file: dict[str, str] = {}
        for s in summaries:
            self.modules[s.path] = s
            self._by_file[os.path.normpath(os.path.abspath(s.path))] = s.path
            for name in module_names(s.path):
                self._by_name.setdefault(name, []).append(s.path)
        self._resolved: list[tuple[Site, tuple[ModuleSummary, FunctionFact]]] | None = None
        self._callers: dict[tuple[str, str], list[Site]] | None = None
        self._hot: dict[tuple[bool, int], dict[tuple[str, str], Site]] = {}
        self._imported_by: set[str] | None = None  # modules another module calls into
        self._by_method: dict[str, list[tuple[ModuleSummary, FunctionFact]]] | None = None
        # Path arithmetic, memoised: every call site asks for its module's folder again.
        self._roots: dict[tuple[str, int], str] = {}
        self._folders: dict[str, str] = {}

    # ---------------------------------------------------------------- modules

    def imported_uses(self, code: str) -> Iterator[
            tuple[ModuleSummary, dict[str, Any], list[dict[str, Any]]]]:
        """Rule ``code``'s published uses of a name imported from another project module (a
        fact with ``use`` and ``from``), each with its module and the facts ``code`` published
        for the module it comes from."""
        for module in self.modules.values():
            for fact in module.facts.get(code, ()):
                if "use" not in fact:
                    continue
                other = self.module(module.path, fact["from"])
                if other is not None:
                    yield module, fact, other.facts.get(code, [])

    def module(self, importer: str, spec: str) -> ModuleSummary | None:
        """The module ``spec`` (``"agent"``, ``"pkg.agent"``, ``".agent"``) imported from the
        file ``importer``, when it is one of the project's files."""
        if spec.startswith("."):
            level = len(spec) - len(spec.lstrip("."))
            rest = spec[level:]
            base = os.path.dirname(os.path.abspath(importer))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            target = os.path.join(base, *rest.split(".")) if rest else base
            for candidate in (target + ".py", os.path.join(target, "__init__.py")):
                path = self._by_file.get(os.path.normpath(candidate))
                if path is not None:
                    return self.modules[path]
            return None
        parts = spec.split(".")
        candidates = self._by_name.get(tuple(parts))
        if not candidates:
            return None
        here = self._folders.get(importer)
        if here is None:
            here = self._folders[importer] = os.path.dirname(os.path.abspath(importer))
        # Python finds `a.b` under a folder on its path: the script's own folder, or one
        # above it (a project root, `sys.path.append("..")`). A file under a folder that is
        # not above the importer (another repository beside it) is not what it imports.
        roots = [(self._root_of(p, len(parts)), p) for p in candidates]
        paths = [(root, p) for root, p in roots if is_above(root, here)]
        if not paths:
            # A second package root of the same project (`layers/` beside `baseline/`, each
            # with its own setup.py, installed side by side): a root with a linted setup.py
            # inside the folder of the importer's nearest setup.py. (Asked of the linted
            # files alone, so a warm run over the same files resolves the same.)
            home = self._installed_from(here)
            paths = [(root, p) for root, p in roots if home is not None and root != home
                     and is_above(home, root) and self._installable(root)]
        if not paths:
            return None
        best = max(paths, key=lambda rp: len(rp[0]))[1]  # the first of the longest, as before
        return self.modules[best]

    def _installable(self, folder: str) -> bool:
        """``folder`` holds a ``setup.py`` among the linted files."""
        return os.path.normpath(os.path.join(folder, "setup.py")) in self._by_file

    def _installed_from(self, folder: str) -> str | None:
        """The nearest folder at or above ``folder`` whose ``setup.py`` is linted."""
        key = "setup:" + folder
        if key not in self._folders:
            here, found = folder, ""
            while True:
                if self._installable(here):
                    found = here
                    break
                up = os.path.dirname(here)
                if up == here:
                    break
                here = up
            self._folders[key] = found
        return self._folders[key] or None

    def _root_of(self, path: str, parts: int) -> str:
        root = self._roots.get((path, parts))
        if root is None:
            root = self._roots[(path, parts)] = import_root(path, parts)
        return root

    # ---------------------------------------------------------------- functions

    def resolve(self, module: ModuleSummary, callee: tuple[str, str],
                _depth: int = 0) -> tuple[ModuleSummary, FunctionFact] | None:
        """The function ``callee`` (a call's reference, made in ``module``) is, if the
        project has it."""
        spec, qualname = callee
        if _depth > _DEPTH:
            return None
        if spec == "*":  # a name star-imported from one of the module's imports
            for star, attr in list(module.imports.values()):
                hit = self.resolve(module, (star, qualname), _depth + 1) \
                    if attr == "*" else None
                if hit is not None:
                    return hit
            return None
        if spec == "":
            found = module.functions.get(qualname)
            if found is not None:
                return module, found
            inherited = self._inherited(module, qualname, _depth)
            if inherited is not None:
                return inherited
            head = qualname.split(".", 1)[0]
            imported = module.imports.get(head)
            if imported is None:
                return None
            rest = qualname[len(head):]
            return self.resolve(module, (imported[0], (imported[1] or "") + rest
                                         if imported[1] else rest.lstrip(".")), _depth + 1)
        target = self.module(module.path, spec)
        if target is not None:
            found = target.functions.get(qualname)
            if found is not None:
                return target, found
            inherited = self._inherited(target, qualname, _depth)
            if inherited is not None:
                return inherited
            head = qualname.split(".", 1)[0]
            if head in target.imports and target.path != module.path:  # a re-export
                return self.resolve(target, ("", qualname), _depth + 1)
        if "." in qualname:  # `from pkg import agent; agent.train()`
            head, rest = qualname.split(".", 1)
            sub = self.module(module.path, f"{spec}.{head}" if spec != "." * len(spec)
                              else f"{spec}{head}")
            if sub is not None:
                found = sub.functions.get(rest)
                if found is not None:
                    return sub, found
                if "." not in rest and sub.path != module.path:
                    # a package whose __init__ re-exports its modules (`from .utils import *`)
                    return self.resolve(sub, ("*", rest), _depth + 1)
        return None

    def _inherited(self, module: ModuleSummary, qualname: str,
                   depth: int) -> tuple[ModuleSummary, FunctionFact] | None:
        """``Cls.m`` that ``Cls`` (a class of ``module``) does not define: a project base
        class's ``m``, nearest base first."""
        if "." not in qualname or not module.bases:
            return None
        cls, method = qualname.rsplit(".", 1)
        for spec, base in module.bases.get(cls, ()):
            hit = self.resolve(module, (spec, f"{base}.{method}"), depth + 1)
            if hit is not None:
                return hit
        return None

    def by_method_name(self, call: CallFact) -> list[tuple[ModuleSummary, FunctionFact]]:
        """The project methods a call by method name alone may reach: each method of that
        name whose parameters take the call's arguments; none where too many classes
        define it."""
        if self._by_method is None:
            index: dict[str, list[tuple[ModuleSummary, FunctionFact]]] = {}
            for m in self.modules.values():
                for fact in m.functions.values():
                    if fact.method and "." in fact.qualname:
                        index.setdefault(fact.qualname.rsplit(".", 1)[1], []).append((m, fact))
            self._by_method = index
        found = self._by_method.get(call.callee[1], [])
        if len(found) > _MAX_BY_NAME:
            return []
        return [(m, f) for m, f in found if _fits(f, call)]

    def reachable(self, module: ModuleSummary, callee: tuple[str, str],
                  limit: int = 64) -> Iterator[tuple[ModuleSummary, FunctionFact]]:
        """The project functions a call of ``callee`` (made in ``module``) may run, through
        any chain of calls, nearest first (at most ``limit``). A class counts as a unit: an
        instance built or called (``SSDAugmentation(...)``, ``ds.map(parser)``) reaches
        every method of its class, and so does any one of its methods (``self._parse_fn``
        set to one of them at run time)."""
        seen: set[tuple[str, str]] = set()
        todo: list[tuple[ModuleSummary, tuple[str, str]]] = [(module, callee)]
        while todo and len(seen) < limit:
            m, ref = todo.pop(0)
            hits = []
            hit = self.resolve(m, ref)
            if hit is not None:
                hits.append(hit)
            for special in ("__call__", "__init__"):  # the class itself: its module
                found = self.resolve(m, (ref[0], f"{ref[1]}.{special}"))
                if found is not None:
                    hits.append(found)
                    break
            for home, fact in hits:
                cls = fact.qualname.rsplit(".", 1)[0] if fact.method else ""
                group = [f for q, f in home.functions.items()
                         if cls and q.rsplit(".", 1)[0] == cls] or [fact]
                for f in group:
                    key = (home.path, f.qualname)
                    if key in seen:
                        continue
                    seen.add(key)
                    yield home, f
                    todo.extend((home, c.callee) for c in home.calls
                                if c.caller == f.qualname and c.callee[0] != BY_METHOD_NAME)

    def function(self, path: str, qualname: str) -> FunctionFact | None:
        m = self.modules.get(path)
        return m.functions.get(qualname) if m is not None else None

    def _caller_table(self) -> dict[tuple[str, str], list[Site]]:
        if self._callers is None:
            table: dict[tuple[str, str], list[Site]] = {}
            for site, (module, fn) in self.sites():
                table.setdefault((module.path, fn.qualname), []).append(site)
            self._callers = table
        return self._callers

    def calls_to(self, path: str, qualname: str) -> list[Site]:
        """Every call in the project that reaches the function ``qualname`` of ``path``."""
        return self._caller_table().get((path, qualname), [])

    def sites(self) -> list[tuple[Site, tuple[ModuleSummary, FunctionFact]]]:
        """Every call that reaches a function of the project, with that function (each
        call resolved once per project)."""
        if self._resolved is None:
            out: list[tuple[Site, tuple[ModuleSummary, FunctionFact]]] = []
            cache: dict[tuple[str, str, str], tuple[ModuleSummary, FunctionFact] | None] = {}
            for m in self.modules.values():
                for c in m.calls:
                    if c.callee[0] == BY_METHOD_NAME:
                        out.extend((Site(m, c), hit) for hit in self.by_method_name(c))
                        continue
                    key = (m.path, *c.callee)
                    if key not in cache:
                        cache[key] = self.resolve(m, c.callee)
                    found = cache[key]
                    if found is not None:
                        out.append((Site(m, c), found))
            self._resolved = out
        return self._resolved

    # ---------------------------------------------------------------- hot functions

    def hot_call(self, path: str, qualname: str, env: bool = False,
                 few: int = 0) -> Site | None:
        """A call that makes the function run once per iteration of an eager Python loop:
        itself in such a loop, or in a function that runs so (through any chain of calls,
        none of them traced nor eager on purpose). ``None`` when no such chain exists.
        ``env``: only loops that step an environment count. ``few``: a loop that the code
        says runs the call fewer times than this per entry of its function (``range(9)``,
        a literal list) starts no chain: a trace would not pay there."""
        key = (env, few)
        if key not in self._hot:
            self._hot[key] = self._hot_functions(env, few)
        return self._hot[key].get((path, qualname))

    def _hot_functions(self, env: bool = False, few: int = 0) -> dict[tuple[str, str], Site]:
        hot: dict[tuple[str, str], Site] = {}
        callers = self._caller_table()
        by_caller: dict[tuple[str, str], list[tuple[tuple[str, str], Site]]] = {}
        todo: list[tuple[str, str]] = []

        def seeds(c: CallFact) -> bool:
            return bool(c.loop) and (c.env or not env) \
                and (c.trips is None or c.trips >= few)

        for key, sites in callers.items():
            for site in sites:
                c = site.call
                if c.traced or c.guarded:
                    continue
                by_caller.setdefault((site.module.path, c.caller), []).append((key, site))
                if seeds(c) and key not in hot:
                    hot[key] = site
                    todo.append(key)
        while todo:
            key = todo.pop()
            fact = self.function(*key)
            if fact is not None and fact.traced:
                continue  # what a traced function calls is traced with it
            for callee, site in by_caller.get(key, ()):
                if callee not in hot:
                    hot[callee] = site if seeds(site.call) else hot[key]
                    todo.append(callee)
        return hot

    def called_from_other_modules(self, path: str) -> bool:
        """Some call in another module reaches a function of ``path``: counts of how often
        its code runs that ``path`` alone gives (:func:`tfperf.lint.analysis.trips.entries`)
        leave those calls out."""
        if self._imported_by is None:
            self._imported_by = {key[0] for key, sites in self._caller_table().items()
                                 if any(site.module.path != key[0] for site in sites)}
        return path in self._imported_by

    def entered_from_outside(self, path: str, qualname: str) -> bool:
        """Every chain of the project's calls that reaches the function starts in a function
        nothing here calls (a method a framework calls: a vehicle part's ``run``, a
        sampler's likelihood), never in module-level code: how often it runs is decided
        outside the linted code. ``False`` for module-level code itself."""
        if not qualname:
            return False
        callers = self._caller_table()
        seen: set[tuple[str, str]] = set()
        todo = [(path, qualname)]
        while todo:
            key = todo.pop()
            if key in seen:
                continue
            seen.add(key)
            for site in callers.get(key, ()):
                c = site.call
                if c.traced or c.guarded or not c.caller:
                    return False  # traced, eager on purpose, or run once by a script
                todo.append((site.module.path, c.caller))
        return True

    def where(self, site: Site) -> str:
        """``path:line`` of a call, for messages (``path, cell N, line L`` in a notebook)."""
        pos = site.call.pos
        name = os.path.basename(site.module.path)
        return f"{name}:{pos[0]}" if not pos[4] else f"{name}, cell {pos[4]}, line {pos[0]}"
