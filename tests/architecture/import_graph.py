"""The import graph of ``src/tfperf``, read from the sources (nothing is imported)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class ImportedName:
    importer: str  # module doing the import
    module: str    # module imported from
    name: str      # name taken from it ("" for ``import module``)
    line: int


def module_name(path: Path, root: Path = SRC) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = SRC, package: str = "tfperf") -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}


def _absolute(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imported_names(root: Path = SRC, package: str = "tfperf") -> list[ImportedName]:
    """Every import statement in the package, at any depth (inside functions and
    ``TYPE_CHECKING`` blocks too: a deferred import is still a dependency)."""
    mods = modules(root, package)
    out = []
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out += [ImportedName(name, a.name, "", node.lineno) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                target = _absolute(name, is_package, node)
                out += [ImportedName(name, target, a.name, node.lineno) for a in node.names]
    return out


def graph(root: Path = SRC, package: str = "tfperf") -> dict[str, set[str]]:
    """Module → the package modules it imports. ``from pkg import sub`` counts as an import
    of ``pkg.sub`` when that is a module, else of ``pkg``."""
    mods = modules(root, package)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for imp in imported_names(root, package):
        target = imp.module
        if imp.name and f"{target}.{imp.name}" in mods:
            target = f"{target}.{imp.name}"
        if target in mods and target != imp.importer:
            edges[imp.importer].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)
