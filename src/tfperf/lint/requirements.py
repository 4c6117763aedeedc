"""A project's requirements, read as pip (or conda) reads them: only what would be installed.

Each reader returns requirement strings (``"tensorflow>=2.6"``) from one kind of file, never
from text that is not a requirement (a help string in ``setup.py`` that mentions
``tensorflow==2.3`` pins nothing):

- ``requirements*.txt``: one requirement a line, comments and options dropped, ``-r``/``-c``
  files followed (relative to the file, as pip does), continuation lines joined;
- ``pyproject.toml``: ``[project] dependencies`` and ``optional-dependencies``, Poetry's
  ``[tool.poetry.dependencies]`` (and its groups), its ``^``/``~`` specifiers turned into
  ranges;
- ``setup.cfg``: ``[options] install_requires`` and ``[options.extras_require]``;
- ``setup.py``: the ``install_requires``, ``extras_require`` and ``requires`` keywords of its
  ``setup(...)`` call, parsed (never run): literals, names assigned literals at module level,
  ``+`` of those, and ``requirements.txt`` files named in them (``open("requirements.txt")``);
- ``environment.yml``: conda's ``dependencies`` (``tensorflow=2.4`` is 2.4.*) and their
  ``pip:`` list;
- a conda package list (``conda list --export > mytf2env.txt``, read back by ``conda create
  --file``): a ``.txt`` file named like an environment (``env``, ``conda``, ``spec``) whose
  first line is conda's own header, one ``name=version=build`` a line.

A notebook's ``%pip``/``!pip install`` lines are :func:`tfperf.lint.target.notebook_pin`'s.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Any

# Files that may list requirements (requirements*.txt are found by pattern).
REQUIREMENT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml",
                     "environment.yaml")
_SETUP_KEYWORDS = frozenset({"install_requires", "extras_require", "requires"})
_DEPTH = 4


def is_requirements_txt(name: str) -> bool:
    """A pip requirements file by its name: ``requirements*.txt`` in any case
    (``REQUIREMENTS.txt``, ``Requirements-gpu.txt``; pip reads any name given to ``-r``)."""
    lower = name.lower()
    return lower.startswith("requirements") and lower.endswith(".txt")


# `conda list --export` writes this first line; `conda create --file` reads the list back.
_CONDA_LIST_HEADER = "# This file may be used to create an environment using:"
_CONDA_LIST_NAME = re.compile(r"env|conda|spec", re.IGNORECASE)


def is_conda_list(path: Path) -> bool:
    """``path`` is a conda package list by its name (``*env*.txt``, ``*conda*.txt``,
    ``spec-file.txt``: no text file of a data folder is opened) and its first line."""
    name = path.name
    if not name.lower().endswith(".txt") or not _CONDA_LIST_NAME.search(name) \
            or is_requirements_txt(name):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline().strip() == _CONDA_LIST_HEADER
    except OSError:
        return False


def conda_list(path: Path) -> list[str]:
    """The packages of a conda list: ``tensorflow=2.1.0=pypi_0`` → ``tensorflow==2.1.0``."""
    out = []
    for line in _text(path).splitlines():
        m = re.fullmatch(r"\s*([A-Za-z0-9_.-]+)=([\d.*]+)(?:=\S*)?\s*", line)
        if m is not None:
            out.append(f"{m.group(1)}=={m.group(2)}")
    return out


def _conda_lists(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if p.is_file() and is_conda_list(p))
    except OSError:
        return []


def _requirements_txts(root: Path) -> list[Path]:
    try:
        return sorted(p for p in root.iterdir() if is_requirements_txt(p.name) and p.is_file())
    except OSError:
        return []


def read(root: Path) -> list[tuple[str, str]]:
    """(file name, requirement) for every requirement of the project folder ``root``."""
    out: list[tuple[str, str]] = []
    out += [("pyproject.toml", r) for r in pyproject(root / "pyproject.toml")]
    for req in _requirements_txts(root):
        out += [(req.name, r) for r in requirements_txt(req)]
    out += [("setup.cfg", r) for r in setup_cfg(root / "setup.cfg")]
    out += [("setup.py", r) for r in setup_py(root / "setup.py")]
    for name in ("environment.yml", "environment.yaml"):
        out += [(name, r) for r in environment_yml(root / name)]
    for listing in _conda_lists(root):
        out += [(listing.name, r) for r in conda_list(listing)]
    return out


def _text(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace") if os.path.isfile(path) else ""
    except OSError:
        return ""


def requirements_txt(path: Path, _depth: int = 0) -> list[str]:
    """The requirements of a pip requirements file (and the files it includes)."""
    text = _text(path)
    if not text or _depth > _DEPTH:
        return []
    out: list[str] = []
    for line in re.sub(r"\\\r?\n", " ", text).splitlines():
        line = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].strip()
        if not line:
            continue
        m = re.match(r"(?:-r|--requirement|-c|--constraint)(?:\s+|=)(\S+)", line)
        if m is not None:
            out += requirements_txt(path.parent / m.group(1), _depth + 1)
            continue
        if line.startswith("-"):
            continue  # -e, --index-url, -f...: not a requirement of a named version
        out.append(line)
    return out


def _toml(text: str) -> dict[str, Any] | None:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            return None
    try:
        return tomllib.loads(text)
    except (ValueError, TypeError):
        return None


def pyproject(path: Path) -> list[str]:
    """``[project]`` dependencies (and extras), Poetry's dependencies (and groups)."""
    text = _text(path)
    if not text:
        return []
    data = _toml(text)
    if data is None:  # no TOML reader here, or not valid TOML: the dependency arrays' strings
        block = re.findall(r"(?ms)^\s*(?:dependencies|[\w-]+)\s*=\s*\[(.*?)\]", text)
        return [s for b in block for s in re.findall(r"[\"']([^\"'\n]+)[\"']", b)]
    out: list[str] = []
    project = data.get("project", {})
    if isinstance(project, dict):
        out += [d for d in project.get("dependencies", []) if isinstance(d, str)]
        for extra in (project.get("optional-dependencies") or {}).values():
            out += [d for d in extra if isinstance(d, str)] if isinstance(extra, list) else []
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    tables = [poetry.get("dependencies", {})] if isinstance(poetry, dict) else []
    groups = poetry.get("group", {}) if isinstance(poetry, dict) else {}
    tables += [g.get("dependencies", {}) for g in groups.values() if isinstance(g, dict)] \
        if isinstance(groups, dict) else []
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            if isinstance(spec, dict):
                spec = spec.get("version", "")
            if isinstance(spec, str):
                out.append(name + poetry_spec(spec))
    return out


def poetry_spec(spec: str) -> str:
    """Poetry's version constraint as a PEP 440 specifier: ``^2.4`` → ``>=2.4,<3``,
    ``~2.4`` → ``>=2.4,<2.5``, ``2.4`` → ``==2.4``, ``*`` → no bound."""
    spec = spec.strip()
    m = re.fullmatch(r"\^\s*(\d+)(?:\.(\d+))?(?:\.\d+)?", spec)
    if m:
        major, minor = int(m.group(1)), m.group(2) or "0"
        upper = f"<{major + 1}" if major else f"<0.{int(minor) + 1}"
        return f">={major}.{minor},{upper}"
    m = re.fullmatch(r"~\s*(\d+)\.(\d+)(?:\.\d+)?", spec)
    if m:
        return f">={m.group(1)}.{m.group(2)},<{m.group(1)}.{int(m.group(2)) + 1}"
    if re.fullmatch(r"\d+(?:\.\d+)*(?:\.\*)?", spec):
        return "==" + spec
    return "" if spec in ("*", "") else spec


def setup_cfg(path: Path) -> list[str]:
    text = _text(path)
    if not text:
        return []
    import configparser  # only a project with a setup.cfg pays for it

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    out: list[str] = []
    if parser.has_option("options", "install_requires"):
        out += _cfg_list(parser.get("options", "install_requires"))
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            out += _cfg_list(value)
    return out


def _cfg_list(value: str) -> list[str]:
    return [p.strip() for line in value.splitlines() for p in line.split(";", 1)[:1]
            if p.strip() and not p.strip().startswith("#")]


def setup_py(path: Path) -> list[str]:
    """The requirements ``setup(...)`` is given, the file parsed as Python, never run."""
    text = _text(path)
    if not text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []  # (a Python 2 setup.py): nothing read rather than its strings guessed
    assigned: dict[str, list[ast.expr]] = {}
    node: Any
    for node in tree.body:
        if type(node) is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name:
                    assigned.setdefault(target.id, []).append(node.value)
    out: list[str] = []
    for node in ast.walk(tree):
        if type(node) is not ast.Call:
            continue
        func: Any = node.func
        name = func.id if type(func) is ast.Name else getattr(func, "attr", "")
        if name != "setup":
            continue
        for k in node.keywords:
            if k.arg in _SETUP_KEYWORDS:
                out += _strings(k.value, assigned, path.parent, 0)
    return out


def _strings(node: Any, assigned: dict[str, list[ast.expr]], folder: Path,
             depth: int) -> list[str]:
    """The requirement strings an expression of ``setup.py`` stands for."""
    if depth > _DEPTH:
        return []
    t = type(node)
    if t is ast.Constant and isinstance(node.value, str):
        if node.value.endswith(".txt"):
            return requirements_txt(folder / node.value)
        return [node.value]
    if t in (ast.List, ast.Tuple, ast.Set):
        return [s for e in node.elts for s in _strings(e, assigned, folder, depth + 1)]
    if t is ast.Dict:
        return [s for v in node.values for s in _strings(v, assigned, folder, depth + 1)]
    if t is ast.BinOp and type(node.op) is ast.Add:
        return _strings(node.left, assigned, folder, depth + 1) \
            + _strings(node.right, assigned, folder, depth + 1)
    if t is ast.Name:
        return [s for v in assigned.get(node.id, ())
                for s in _strings(v, assigned, folder, depth + 1)]
    if t is ast.Call:  # read_requirements("requirements.txt"), open(...).read().splitlines()
        files = [n.value for n in ast.walk(node) if type(n) is ast.Constant
                 and isinstance(n.value, str) and n.value.endswith(".txt")]
        return [r for f in files for r in requirements_txt(folder / f)]
    return []


def environment_yml(path: Path) -> list[str]:
    """conda's ``dependencies:`` (``name=2.4`` is 2.4.*; ``name=2.4.1=build``) and the
    ``pip:`` requirements under it, read line by line (no YAML library needed)."""
    text = _text(path)
    if not text:
        return []
    out: list[str] = []
    in_deps = False
    deps_indent = -1
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if re.match(r"^dependencies\s*:", line.strip()) and indent == 0:
            in_deps, deps_indent = True, indent
            continue
        if in_deps and indent <= deps_indent and not line.lstrip().startswith("-"):
            in_deps = False
        if not in_deps:
            continue
        m = re.match(r"^\s*-\s*([^\s:]+)\s*$", line)
        if m is None:
            continue  # `- pip:` opens the pip list: its items are read like the others
        item = m.group(1).strip("\"'")
        conda = re.fullmatch(r"([A-Za-z0-9_.-]+)=([\d.*]+)(?:=\S+)?", item)
        out.append(f"{conda.group(1)}=={conda.group(2)}" if conda else item)
    return out
