"""``[tool.tfperf.lint]`` in ``pyproject.toml``, found by walking up from the linted paths.

```toml
[tool.tfperf.lint]
select = ["TFP1", "TFP2"]        # default: the rules of the default group
ignore = ["TFP104"]
extend-select = ["TFP7"]         # add the TF1-migration group
preview = false                  # true: run the rules still in preview too
tf-version = "2.15"              # the TensorFlow the code targets (default: the project's
                                 # pin, else the installed TensorFlow, else the newest)
project-context = true           # false: a file named alone is modelled alone (see
                                 # lint/context.py)
exclude = ["legacy/**", "*_pb2.py"]
[tool.tfperf.lint.per-file-ignores]
"tests/**" = ["TFP101"]
"notebooks/scratch_*.ipynb" = ["ALL"]
```
Command-line ``--select`` replaces ``select``; ``--ignore``/``--extend-select`` add.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

KEYS = {"select", "ignore", "extend-select", "exclude", "per-file-ignores", "preview",
        "tf-version", "project-context"}


class ConfigError(ValueError):
    """The configuration is malformed (a usage error, exit status 2)."""


@dataclass
class LintConfig:
    root: Path                                   # the directory holding pyproject.toml
    path: Path | None = None                     # the pyproject.toml read, if any
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    preview: bool = False                        # run the rules of the "preview" group too
    tf_version: str | None = None                # the TensorFlow the code targets ("2.15")
    project_context: bool = True                 # model named files with their project

    def _rel(self, path: Path) -> str | None:
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def excluded(self, path: Path) -> bool:
        if not self.exclude:
            return False
        rel = self._rel(path)
        return rel is not None and _spec(tuple(self.exclude)).match_file(rel)

    def ignored_codes(self, path: Path) -> list[str]:
        """Codes (prefixes, or ALL) that ``per-file-ignores`` switches off for ``path``."""
        if not self.per_file_ignores:
            return []  # the common case: no path resolution per file
        rel = self._rel(path)
        if rel is None:
            return []
        out: list[str] = []
        for pattern, codes in self.per_file_ignores.items():
            if _spec((pattern,)).match_file(rel):
                out.extend(codes)
        return out


_SPECS: dict[tuple[str, ...], object] = {}


def _spec(patterns: tuple[str, ...]):
    spec = _SPECS.get(patterns)
    if spec is None:
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(patterns)
        _SPECS[patterns] = spec
    return spec


def _strings(value: object, key: str, where: Path) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: [tool.tfperf.lint] {key} must be a list of strings")
    return list(value)


# A ``[tool.tfperf]`` table, or one of its sub-tables, in TOML's header syntax.
_TFPERF_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*tfperf\s*[.\]]", re.MULTILINE)


def _toml_loads(text: str, where: Path) -> dict:
    """Parse TOML with the standard library's ``tomllib`` (Python 3.11+) or ``tomli``
    (its backport, a dependency on 3.10)."""
    try:
        import tomllib
    except ImportError:
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise ConfigError(f"{where}: reading it needs the 'tomli' package on Python < 3.11 "
                              "(pip install tomli)") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from exc


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.tfperf]``
    table (a file that merely mentions tfperf, in a dependency list say, does not count);
    stops at a repository root. A folder that cannot be searched holds none (the walk says
    it cannot list it); a ``pyproject.toml`` that cannot be read is a :class:`ConfigError`."""
    start = Path(os.path.realpath(start))  # Path.resolve raises RuntimeError on a loop
    directory = start if os.path.isdir(start) else start.parent
    for d in (directory, *directory.parents):
        candidate = d / "pyproject.toml"
        if os.path.isfile(candidate) and _TFPERF_TABLE.search(_read(candidate)):
            return candidate
        if os.path.lexists(d / ".git"):
            break
    return None


def load_config(paths: list[str]) -> LintConfig:
    """The configuration for a run over ``paths`` (from the first path's project)."""
    start = Path(paths[0]) if paths else Path.cwd()
    if not start.exists():
        start = Path.cwd()
    pyproject = find_pyproject(start)
    if pyproject is None:
        return LintConfig(root=Path.cwd())
    try:
        data = _toml_loads(pyproject.read_text("utf-8"), pyproject)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{pyproject}: not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{pyproject}: cannot read: {exc.strerror or exc}") from None
    section = data.get("tool", {}).get("tfperf", {}).get("lint")
    cfg = LintConfig(root=pyproject.parent, path=pyproject)
    if section is None:
        return cfg
    if not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: [tool.tfperf.lint] must be a table")
    unknown = set(section) - KEYS
    if unknown:
        raise ConfigError(f"{pyproject}: unknown key(s) in [tool.tfperf.lint]: "
                          f"{', '.join(sorted(unknown))} (known: {', '.join(sorted(KEYS))})")
    if "select" in section:
        cfg.select = _strings(section["select"], "select", pyproject)
    cfg.ignore = _strings(section.get("ignore", []), "ignore", pyproject)
    cfg.extend_select = _strings(section.get("extend-select", []), "extend-select", pyproject)
    cfg.exclude = _strings(section.get("exclude", []), "exclude", pyproject)
    pfi = section.get("per-file-ignores", {})
    if not isinstance(pfi, dict):
        raise ConfigError(f"{pyproject}: per-file-ignores must be a table of pattern = [codes]")
    cfg.per_file_ignores = {k: _strings(v, f"per-file-ignores.{k}", pyproject)
                            for k, v in pfi.items()}
    preview = section.get("preview", False)
    if not isinstance(preview, bool):
        raise ConfigError(f"{pyproject}: [tool.tfperf.lint] preview must be true or false")
    cfg.preview = preview
    context = section.get("project-context", True)
    if not isinstance(context, bool):
        raise ConfigError(f"{pyproject}: [tool.tfperf.lint] project-context must be true or "
                          "false")
    cfg.project_context = context
    tf_version = section.get("tf-version")
    if tf_version is not None:
        from tfperf.lint.target import TargetError, parse_target

        try:
            parse_target(str(tf_version))
        except TargetError as exc:
            raise ConfigError(f"{pyproject}: [tool.tfperf.lint] {exc}") from None
        cfg.tf_version = str(tf_version)
    return cfg
