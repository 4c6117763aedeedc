"""The TensorFlow version the linted code targets (as ruff has ``target-version``).

Some advice depends on what TensorFlow does by itself: from TF 2.12 on, ``tf.data`` injects a
final ``prefetch`` and runs stateless maps in parallel unless told not to (the documented
defaults of ``inject_prefetch`` and ``map_parallelization``), so a pipeline without them is
not slow there. Rules ask ``ctx.tf_version`` and answer for that version.

Where it comes from, first found wins:
1. ``[tool.tfperf.lint] tf-version = "2.15"`` (or ``--tf-version``);
2. the project's own pin: the lowest TensorFlow version its requirements admit, from
   ``pyproject.toml`` (``[project] dependencies``), ``requirements*.txt`` or ``setup.cfg``
   (``install_requires``) in the project root — the oldest version the code must run on;
3. the TensorFlow installed here (its ``*.dist-info`` folder: nothing is imported);
4. the newest version tfperf knows.

Nothing here imports TensorFlow or parses TOML beyond the project file.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

Version = tuple[int, int]
# The newest TensorFlow release tfperf knows (its doctor's knowledge tables go this far; a
# test keeps the two in step).
NEWEST_KNOWN: Version = (2, 21)
# Distributions that install the ``tensorflow`` module.
TF_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel",
                    "tensorflow-macos", "tensorflow-aarch64", "tensorflow-cpu-aws",
                    "intel-tensorflow", "tf-nightly", "tf-nightly-cpu")
_REQUIREMENT = re.compile(
    r"^\s*[\"']?(?P<name>" + "|".join(re.escape(d) for d in sorted(TF_DISTRIBUTIONS, key=len,
                                                                     reverse=True)) + r")"
    r"(?:\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~]=?\s*[\w.*]+\s*,?\s*)*)", re.IGNORECASE)
_LOWER_BOUND = re.compile(r"(==|~=|>=|>)\s*(\d+)\.(\d+)")


@dataclass(frozen=True)
class TargetTF:
    version: Version
    source: str  # where it came from, for `tfperf lint --show-settings`-like output and docs

    def __str__(self) -> str:
        return f"TensorFlow {self.version[0]}.{self.version[1]} ({self.source})"


class TargetError(ValueError):
    """A malformed ``tf-version`` (a usage error)."""


def parse_version(text: str) -> Version:
    """``"2.15"``, ``"2.15.1"`` → ``(2, 15)``."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.[\w.]+)?\s*", str(text))
    if m is None:
        raise TargetError(f"tf-version must look like 2.15, not {text!r}")
    return int(m.group(1)), int(m.group(2))


def pinned_version(requirement: str) -> Version | None:
    """The lowest TensorFlow version a requirement line admits, if it names one:
    ``tensorflow>=2.12,<2.16`` → (2, 12); ``tensorflow==2.15.1`` → (2, 15); a bare
    ``tensorflow`` or an upper bound alone → ``None``."""
    m = _REQUIREMENT.match(requirement.split("#", 1)[0].split(";", 1)[0])
    if m is None:
        return None
    rest = requirement[m.end("name"):]
    if rest[:1].isalnum() or rest[:1] in "-_":  # `tensorflow-datasets`: another package
        return None
    bounds = [(int(a), int(b)) for _, a, b in _LOWER_BOUND.findall(m.group("spec") or "")]
    return min(bounds) if bounds else None


def _requirement_lines(root: Path) -> list[tuple[str, str]]:
    """(file name, requirement text) from the project's usual places."""
    out: list[tuple[str, str]] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        text = pyproject.read_text("utf-8", errors="replace")
        # The quoted strings of the file: dependency lists are lists of quoted requirements.
        out += [("pyproject.toml", s) for s in re.findall(r"[\"']([^\"'\n]+)[\"']", text)]
    for req in sorted(root.glob("requirements*.txt")):
        out += [(req.name, line) for line in req.read_text("utf-8", errors="replace")
                .splitlines()]
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        out += [("setup.cfg", line) for line in setup_cfg.read_text("utf-8", errors="replace")
                .splitlines()]
    return out


def project_pin(root: Path | None) -> TargetTF | None:
    if root is None:
        return None
    found = [(v, name) for name, line in _requirement_lines(root)
             if (v := pinned_version(line)) is not None]
    if not found:
        return None
    version, name = min(found)
    return TargetTF(version, f"lowest version pinned in {name}")


_DIST_INFO = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)-(?P<version>\d[^-]*)\.dist-info$")
_NORMALISED = {d.replace("-", "_").lower(): d for d in TF_DISTRIBUTIONS}


def installed_version(paths: list[str] | None = None) -> TargetTF | None:
    """The installed TensorFlow, from the ``*.dist-info`` folders on ``sys.path`` (a listing
    of each folder: cheaper than ``importlib.metadata``, which a one-file lint cannot
    afford at start-up)."""
    for folder in sys.path if paths is None else paths:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue
        for entry in names:
            if not entry.endswith(".dist-info"):
                continue
            m = _DIST_INFO.match(entry)
            dist = _NORMALISED.get(m.group("name").replace("-", "_").lower()) if m else None
            if dist is None:
                continue
            try:
                return TargetTF(parse_version(m.group("version")),  # type: ignore[union-attr]
                                f"installed {dist} {m.group('version')}")  # type: ignore[union-attr]
            except TargetError:
                continue
    return None


def resolve(configured: str | None, project_root: Path | None) -> TargetTF:
    """The target version for a run (see the module docstring for the order)."""
    if configured:
        return TargetTF(parse_version(configured), "tf-version setting")
    return (project_pin(project_root) or installed_version()
            or TargetTF(NEWEST_KNOWN, "newest known to tfperf"))
