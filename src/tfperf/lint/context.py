"""Project context for a run over single files: the modules of the file's project that the
project model needs to see what only callers (or callees) show.

`tfperf lint train.py` used to model ``train.py`` alone: the step it calls in ``steps.py``,
the map function in ``aug.py``, the loop in another file that calls its step were unseen.
Here, for each file named on the command line (or matched by a glob), the project root is
the nearest folder at or above it holding ``pyproject.toml``, ``setup.py``, ``setup.cfg``
or ``.git``; its Python modules (walked as discovery walks a folder: hidden, virtual
environment and git-ignored folders skipped, ``exclude`` applied) are scanned for their
import lines (text only: nothing is parsed, let alone run), and the context is the modules
the import graph links to the given files: those they import, those that import them, and
so on either way (a caller's other modules too: an object one module builds may be stepped
in another), nearest first, within the bounds below. The context is summarised (and
cached) like any linted file; only the given files' findings are reported.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tfperf.analysis.project import import_root, is_above, module_names

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
MAX_SCANNED_FILES = 2000     # modules of the root read for their import lines
MAX_CONTEXT_FILES = 64       # modules added as context, nearest in the import graph first
MAX_CONTEXT_BYTES = 2_000_000
MAX_SCANNED_BYTES = 400_000  # a module larger than this is not context (generated code)

# An import statement at the start of a line: `from X import names` (names possibly in
# parentheses over several lines) or `import a.b as c, d`.
_IMPORT = re.compile(
    r"[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)"
    r"|import[ \t]+([^\n#;]+))")
_NAME = re.compile(r"[A-Za-z_][\w.]*")


@dataclass
class Context:
    """The context chosen for a run: its roots, the modules added, and why fewer were."""

    roots: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    truncated: bool = False  # the bounds left linked modules out

    def describe(self) -> str:
        if not self.files:
            where = f" under {', '.join(self.roots)}" if self.roots else \
                " (no pyproject.toml, setup.py, setup.cfg or .git above the files)"
            return f"project context: none{where}"
        more = f"; bounded at {MAX_CONTEXT_FILES} files / {MAX_CONTEXT_BYTES // 1000} kB" \
            if self.truncated else ""
        return (f"project context: {len(self.files)} module{'s' * (len(self.files) != 1)} "
                f"of {', '.join(self.roots)}{more}: {', '.join(map(self._short, self.files))}")

    def _short(self, path: str) -> str:
        root = next((r for r in self.roots if is_above(r, os.path.dirname(path))), None)
        return os.path.relpath(path, root) if root else path


def project_root(path: str) -> str | None:
    """The nearest folder at or above ``path``'s folder with a project marker (spelled as
    the path is: through a symlinked folder, the context is spelled through it too, so
    that imports resolve among the same spellings as the given file's)."""
    here = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.lexists(os.path.join(here, m)) for m in ROOT_MARKERS):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _import_statements(text: str) -> Iterator[re.Match[str]]:
    """The import statements of ``text``: the word found first (a plain substring search),
    then the statement matched from the start of its line (a line-anchored pattern tried
    at every position costs several times more over a project's modules)."""
    done = -1
    pos = text.find("import")
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        if start != done:
            done = start
            m = _IMPORT.match(text, start)
            if m is not None:
                yield m
        pos = text.find("import", pos + 6)


def _import_specs(text: str) -> list[str]:
    """Dotted module names this text may import: ``a.b`` for ``import a.b``; ``a.b`` and
    ``a.b.x`` for ``from a.b import x`` (``x`` may be a submodule); relative ones keep
    their dots."""
    specs: list[str] = []
    for m in _import_statements(text):
        base, names, plain = m.group(1), m.group(2), m.group(3)
        if plain is not None:
            specs += [n.split(" as ")[0].strip() for n in plain.split(",")]
            continue
        specs.append(base)
        for part in (names or "").strip().strip("()").split(","):
            n = _NAME.match(part.strip())
            if n and "." not in n.group():
                specs.append(base + n.group() if base.endswith(".") else f"{base}.{n.group()}")
    return [s for s in specs if s]


def _notebook_code(text: str, path: str) -> str:
    """The code cells of a notebook's text, joined; "" where it is not a Python notebook."""
    # Notebooks are rare among a project's imports: their reader (and its fix machinery)
    # is not imported by every run.
    from tfperf.lint.notebook import cell_text, read_notebook

    _, cells, _, _ = read_notebook(text, path)
    return "\n".join(cell_text(c) for c in cells
                     if isinstance(c, dict) and c.get("cell_type") == "code")


def _read_text(path: str, limit: int | None = MAX_SCANNED_BYTES) -> str | None:
    try:
        if limit is not None and os.path.getsize(path) > limit:
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    return _notebook_code(text, path) if path.endswith(".ipynb") else text


class _Graph:
    """The root's modules and their import edges, resolved as the project model resolves
    them (nearest import root above the importer; else, inside the project, a name few
    modules have)."""

    def __init__(self, modules: list[str], known: dict[str, list] | None = None) -> None:
        self.modules = modules
        # path → [mtime_ns, size, import specs]: the scan of an unchanged module, kept by
        # the lint cache between runs (a warm run reads no module's text again).
        self.known: dict[str, list] = known if known is not None else {}
        self.changed = False
        self.used: set[str] = set()  # the modules this run asked about
        self.by_name: dict[tuple[str, ...], list[str]] = {}
        self.by_file = {os.path.normpath(m): m for m in modules}
        for m in modules:
            for name in module_names(m):
                self.by_name.setdefault(name, []).append(m)
        self.imported_by: dict[str, list[str]] | None = None  # built when first asked
        self.roots: dict[tuple[str, int], str] = {}
        # (importer's folder, name) → modules: a folder's modules import alike
        self.resolved: dict[tuple[str, str], list[str]] = {}

    def _root(self, path: str, parts: int) -> str:
        root = self.roots.get((path, parts))
        if root is None:
            root = self.roots[(path, parts)] = import_root(path, parts)
        return root

    def specs_of(self, path: str, limit: int | None = MAX_SCANNED_BYTES) -> list[str]:
        """The module names ``path`` imports (none for a module over ``limit`` bytes)."""
        try:
            st = os.stat(path)
        except OSError:
            return []
        self.used.add(path)
        entry = self.known.get(path)
        if isinstance(entry, list) and len(entry) == 3 and entry[:2] == [st.st_mtime_ns,
                                                                         st.st_size] \
                and isinstance(entry[2], list) and all(isinstance(x, str) for x in entry[2]):
            return entry[2]
        text = _read_text(path, limit)
        specs = _import_specs(text) if text else []
        self.known[path] = [st.st_mtime_ns, st.st_size, specs]
        self.changed = True
        return specs

    def read_given(self, path: str) -> None:
        """A file asked about is read whatever its size (a notebook with its images)."""
        self.specs_of(path, limit=None)

    def imports_of(self, path: str) -> list[str]:
        return [t for s in self.specs_of(path) for t in self.resolve(path, s)]

    def importers_of(self, path: str) -> list[str]:
        if self.imported_by is None:
            self.imported_by = {}
            for m in self.modules:
                for t in self.imports_of(m):
                    self.imported_by.setdefault(t, []).append(m)
        return self.imported_by.get(path, [])

    def resolve(self, importer: str, spec: str) -> list[str]:
        if spec.startswith("."):
            level = len(spec) - len(spec.lstrip("."))
            base = os.path.dirname(os.path.abspath(importer))
            for _ in range(level - 1):
                base = os.path.dirname(base)
            rest = spec[level:]
            target = os.path.join(base, *rest.split(".")) if rest else base
            hits = [self.by_file.get(os.path.normpath(c))
                    for c in (target + ".py", os.path.join(target, "__init__.py"))]
            return [h for h in hits if h]
        parts = tuple(spec.split("."))
        candidates = self.by_name.get(parts)
        if not candidates:
            return []  # a library module: the common case, answered first
        here = os.path.dirname(importer)  # paths here are already absolute
        memo = self.resolved.get((here, spec))
        if memo is not None:
            return memo
        roots = [(self._root(c, len(parts)), c) for c in candidates]
        above = [(r, c) for r, c in roots if is_above(r, here)]
        if above:
            found = [max(above, key=lambda rc: len(rc[0]))[1]]
        else:
            found = candidates if len(candidates) <= 2 else []
        self.resolved[(here, spec)] = found
        return found


def _root_modules(root: str, excluded: Callable[[Path], bool] | None) -> list[str]:
    from tfperf.lint.discovery import walk

    out: list[str] = []
    for spelled, _ in walk(Path(root), excluded):
        path = str(spelled)
        if path.endswith(".py"):
            out.append(path)
            if len(out) >= MAX_SCANNED_FILES:
                break
    return out


def find_context(given: Sequence[str], linted: Iterable[str],
                 excluded: Callable[[Path], bool] | None = None,
                 scan_cache: Path | None = None) -> Context:
    """The context modules for the files named on the command line (``given``), leaving out
    what the run lints anyway (``linted``); ``scan_cache``: a file keeping each module's
    import lines by its size and time, between runs."""
    context = Context()
    known = _load_scan(scan_cache)
    used: set[str] = set()
    changed = False
    seeds_by_root: dict[str, list[str]] = {}
    for g in given:
        root = project_root(g)
        if root is not None:
            seeds_by_root.setdefault(root, []).append(os.path.abspath(g))
    skip = {os.path.realpath(p) for p in linted}
    budget_files, budget_bytes = MAX_CONTEXT_FILES, MAX_CONTEXT_BYTES
    for root, seeds in seeds_by_root.items():
        context.roots.append(root)
        modules = _root_modules(root, excluded)
        graph = _Graph(modules, known)
        for s in seeds:
            graph.read_given(s)

        # Breadth first from the seeds over import links either way: a callee's callee, a
        # caller's caller, and a caller's other modules (an object built in `runner.py` from
        # the given `agent.py` is stepped in `explorer.py`, which imports neither).
        frontier = list(seeds)
        seen = set(seeds)
        while frontier and budget_files > 0:
            step: list[str] = []
            for path in frontier:
                for n in [*graph.imports_of(path), *graph.importers_of(path)]:
                    if n in seen:
                        continue
                    seen.add(n)
                    step.append(n)
                    if os.path.realpath(n) in skip:
                        continue
                    try:
                        size = os.path.getsize(n)
                    except OSError:
                        continue
                    if size > MAX_SCANNED_BYTES:
                        continue  # generated code, not context
                    if budget_files <= 0 or size > budget_bytes:
                        context.truncated = True  # the nearest kept, the rest left out
                        continue
                    budget_files -= 1
                    budget_bytes -= size
                    context.files.append(n)
            frontier = step
        if frontier:  # the count bound stopped the walk with links still to follow
            context.truncated = True
        changed = changed or graph.changed or len(graph.used) < len(known)
        used |= graph.used
    if changed and scan_cache is not None:
        _store_scan(scan_cache, {p: known[p] for p in used if p in known})
    return context


def _load_scan(path: Path | None) -> dict[str, list]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or damaged: scanned again
    return data if isinstance(data, dict) else {}


def _store_scan(path: Path, known: dict[str, list]) -> None:
    """Best effort, as the lint cache is: a run that cannot write it scans again next time."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".context-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(known, fh, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError:
        return
