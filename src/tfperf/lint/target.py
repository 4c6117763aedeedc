"""The TensorFlow version the linted code targets (as ruff has ``target-version``).

Some advice depends on what TensorFlow does by itself: from TF 2.12 on, ``tf.data`` injects a
final ``prefetch`` and runs stateless maps in parallel unless told not to (the documented
defaults of ``inject_prefetch`` and ``map_parallelization``), so a pipeline without them is
not slow there. Rules ask ``ctx.tf_version`` and answer for that version.

Where it comes from, first found wins:
1. ``[tool.tfperf.lint] tf-version = "2.15"`` (or ``--tf-version``);
2. the project's own pin: the lowest TensorFlow version its requirements admit, read as pip
   reads them (:mod:`tfperf.lint.requirements`: ``pyproject.toml``'s dependencies and
   Poetry's, ``requirements*.txt`` with their ``-r`` includes, ``setup.cfg``'s
   ``install_requires``, ``setup.py``'s ``setup(install_requires=...)`` parsed, never run,
   ``environment.yml``, a conda package list such as ``conda list --export > mytf2env.txt``)
   in the nearest folder at or above the linted path whose requirements
   name TensorFlow — the oldest version the code must run on; an
   upper bound alone (``tensorflow<2``) stands for the newest version under it. A notebook's
   own ``!pip install tensorflow==2.4`` (or ``%pip``, or Colab's ``%tensorflow_version 1.x``)
   pins that notebook, over the project's pin (:func:`notebook_pin`);
3. the TensorFlow installed here (its ``*.dist-info`` folder: nothing is imported), unless the
   module's own APIs show it was written for TF 1.x graph mode or multi-backend Keras
   (``tf.Session``, ``K.set_session``, standalone ``keras.optimizers.Adam(lr=...)``): then TF
   1.15 (:mod:`tfperf.lint.code_target`; :meth:`FileTargets.pinned` says where 1-2 chose);
4. the newest version tfperf knows (the same exception).

A target is a range: ``version``, the oldest release the code must run on (what rules ask
first), and ``newest``, the newest release it admits (``tensorflow>=2.1`` admits every later
one; ``==2.1`` only 2.1). A rule whose advice needs a feature added later (an op that
broadcasts from 2.2) may still speak when ``newest`` has it, and say from which release.

Nothing here imports TensorFlow or executes the project's files (``setup.py`` is read as
text).
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from tfperf.lint.requirements import is_conda_list, is_requirements_txt

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
_UPPER_BOUND = re.compile(r"(<=|<)\s*(\d+)(?:\.(\d+))?")
# The last minor release of a major line, for an upper bound such as ``tensorflow<2``.
LAST_MINOR = {1: 15}
# Files in a project folder that may pin TensorFlow (with requirements*.txt).
PIN_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")


@dataclass(frozen=True)
class TargetTF:
    version: Version
    source: str  # where it came from, for `tfperf lint --show-settings`-like output and docs
    newest: Version | None = None  # the newest release admitted (None: ``version`` only)

    @property
    def upper(self) -> Version:
        """The newest release the target admits."""
        return self.newest if self.newest is not None else self.version

    def __str__(self) -> str:
        return f"TensorFlow {self.version[0]}.{self.version[1]} ({self.source})"

    @property
    def configured(self) -> bool:
        """Set by the user (``tf-version``, ``--tf-version``): no notebook pin overrides it."""
        return self.source == SETTING


class TargetError(ValueError):
    """A malformed ``tf-version`` (a usage error)."""


def parse_version(text: str) -> Version:
    """``"2.15"``, ``"2.15.1"`` → ``(2, 15)``."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.[\w.]+)?\s*", str(text))
    if m is None:
        raise TargetError(f"tf-version must look like 2.15, not {text!r}")
    return int(m.group(1)), int(m.group(2))


def parse_target(text: str) -> tuple[Version, Version]:
    """A ``tf-version`` setting → (oldest, newest) release: ``"2.15"`` is that release only;
    a requirement specifier, ``">=2.1"`` or ``">=2.1,<2.4"``, a range (its lowest version
    first; an open range reaches the newest release tfperf knows)."""
    text = str(text).strip()
    if text[:1] in "<>=~!":
        low = pinned_version("tensorflow" + text)
        if low is None:
            raise TargetError(f"tf-version must look like 2.15 or >=2.1, not {text!r}")
        return low, max(low, admitted_newest("tensorflow" + text) or NEWEST_KNOWN)
    try:
        v = parse_version(text)
    except TargetError:
        raise TargetError(f"tf-version must look like 2.15 or >=2.1, not {text!r}") from None
    return v, v


def _spec_of(requirement: str) -> str | None:
    """The version specifier of a requirement line naming TensorFlow (``""`` when it has
    none), or ``None`` when the line names another package."""
    m = _REQUIREMENT.match(requirement.split("#", 1)[0].split(";", 1)[0])
    if m is None:
        return None
    rest = requirement[m.end("name"):]
    if rest[:1].isalnum() or (rest[:1] and rest[:1] in "-_"):  # `tensorflow-datasets`
        return None
    return m.group("spec") or ""


def admitted_newest(requirement: str) -> Version | None:
    """The newest TensorFlow release a requirement line admits (``None`` if it names no
    TensorFlow, or no bound): ``tensorflow==2.1.0`` → (2, 1); ``~=2.1.0`` → (2, 1);
    ``>=2.1,<2.4`` → (2, 3); ``>=2.1`` or ``~=2.1`` → the newest tfperf knows (of 2.x)."""
    spec = _spec_of(requirement)
    return _newest_of(spec) if spec else None


# Standalone Keras (not keras-preprocessing, keras-tuner...): up to 2.2 it is multi-backend
# Keras on a TensorFlow 1.x graph (2.3 added TF 2 support, 2.4 on is tf.keras's front end).
_KERAS = re.compile(r"^\s*[\"']?keras(?![\w.-])(?:\[[^\]]*\])?\s*(?P<spec>[^;#]*)",
                    re.IGNORECASE)
MULTI_BACKEND_KERAS = (2, 2)


def multi_backend_keras(requirement: str) -> bool | None:
    """Whether a requirement line naming standalone Keras admits only Keras 2.2 or older
    (``Keras==2.2.4``, ``keras<2.3``); ``None`` where the line names no Keras."""
    m = _KERAS.match(requirement)
    if m is None:
        return None
    newest = _newest_of(m.group("spec")) if m.group("spec").strip() else None
    return newest is not None and newest <= MULTI_BACKEND_KERAS


def _newest_of(spec: str) -> Version | None:
    """The newest release a version specifier admits (see :func:`admitted_newest`)."""
    bounds: list[Version] = []
    for op, text in re.findall(r"(===|==|~=|<=|>=|<|>|!=)\s*([\w.*]+)", spec):
        parts = text.split(".")
        if not parts[0].isdigit():
            continue
        major = int(parts[0])
        if op in ("<", "<="):
            b = _below(op, major, int(parts[1]) if len(parts) > 1 and parts[1].isdigit()
                       else None)
            if b is not None:
                bounds.append(b)
            continue
        if not (len(parts) > 1 and parts[1].isdigit()):
            continue
        minor = int(parts[1])
        if op in ("==", "==="):
            bounds.append((major, minor))
        elif op == "~=":  # ~=2.1.0: 2.1.*; ~=2.1: 2.*
            line_end = NEWEST_KNOWN if major == NEWEST_KNOWN[0] else (
                major, LAST_MINOR.get(major, minor))
            bounds.append((major, minor) if len(parts) > 2 else line_end)
    if bounds:
        return min(bounds)
    return NEWEST_KNOWN if re.search(r">=?\s*\d", spec) else None


def pinned_version(requirement: str) -> Version | None:
    """The lowest TensorFlow version a requirement line admits, if it names one:
    ``tensorflow>=2.12,<2.16`` → (2, 12); ``tensorflow==2.15.1`` → (2, 15); a bare
    ``tensorflow`` or an upper bound alone → ``None``."""
    spec = _spec_of(requirement)
    if spec is None:
        return None
    bounds = [(int(a), int(b)) for _, a, b in _LOWER_BOUND.findall(spec)]
    if bounds:
        return min(bounds)
    uppers = [_below(op, int(a), int(b) if b else None) for op, a, b in _UPPER_BOUND.findall(spec)]
    known = [u for u in uppers if u is not None]
    return min(known) if known else None


def _below(op: str, major: int, minor: int | None) -> Version | None:
    """The newest version an upper bound admits: ``<2.16`` → 2.15, ``<=2.15`` → 2.15,
    ``<2`` / ``<2.0`` → 1.15; ``None`` where the line before is not known."""
    if op == "<=":
        return (major, minor if minor is not None else LAST_MINOR.get(major, 0))
    if minor:
        return (major, minor - 1)
    last = LAST_MINOR.get(major - 1)
    return (major - 1, last) if last is not None else None


def _requirement_lines(root: Path) -> list[tuple[str, str]]:
    """(file name, requirement) from the project's files, read as pip reads them
    (:mod:`tfperf.lint.requirements`; a file that cannot be read pins nothing)."""
    from tfperf.lint import requirements

    return requirements.read(root)


def _text(path: Path) -> str:
    """The file's text; empty when there is no such file or it cannot be read."""
    try:
        return path.read_text("utf-8", errors="replace") if os.path.isfile(path) else ""
    except OSError:
        return ""


def pin_folder(start: Path | None) -> Path | None:
    """The nearest folder at or above ``start`` holding a file that may pin TensorFlow
    (``pyproject.toml``, ``setup.cfg``, ``setup.py``, ``requirements*.txt``); the search stops
    at a repository root (``.git``)."""
    if start is None:
        return None
    try:
        start = Path(start).resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, on Python < 3.13
        return None
    directory = start if start.is_dir() else start.parent
    for d in (directory, *directory.parents):
        kind = folder_kind(str(d))
        if kind == "pin" and _names_tensorflow(d):
            return d
        if kind == "pin" and (d / ".git").exists():
            return None  # a repository root whose files pin no TensorFlow
        if kind == "repo":
            return None
    return None


def _names_tensorflow(folder: Path) -> bool:
    """Some requirement of the folder's files names TensorFlow (pinned or not): else its
    files are another package's (an example's own ``requirements.txt`` of plotting tools),
    and the project's pin is further up."""
    return any(pinned_version(line) is not None or _spec_of(line) is not None
               for _, line in _requirement_lines(folder))


def folder_kind(folder: str) -> str:
    """``"pin"`` if the folder holds a file that may pin TensorFlow, ``"repo"`` if it is a
    repository root without one (the search stops there), else ``""`` (one listing, not a
    stat per candidate name)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return ""
    for name in names:
        candidate = name in PIN_FILES or is_requirements_txt(name)
        if candidate and os.path.isfile(os.path.join(folder, name)):
            return "pin"
        if name.endswith(".txt") and is_conda_list(Path(folder, name)):
            return "pin"
    return "repo" if ".git" in names else ""


def project_pin(root: Path | None) -> TargetTF | None:
    """The pin of the project around ``root`` (a folder or a file in it)."""
    root = pin_folder(root)
    if root is None:
        return None
    found = [(v, name) for name, line in _requirement_lines(root)
             if (v := pinned_version(line)) is not None]
    if not found:
        return None
    version, name = min(found)
    # The tightest upper bound any pinning line states (a lock file's `==` wins over setup.py).
    uppers = [u for _, line in _requirement_lines(root) if pinned_version(line) is not None
              and (u := admitted_newest(line)) is not None]
    newest = max(version, min(uppers)) if uppers else version
    return TargetTF(version, f"lowest version pinned in {name}", newest)


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
                return TargetTF(parse_version(m.group("version")),
                                f"installed {dist} {m.group('version')}")
            except TargetError:
                continue
    return None


# `!pip install -q tensorflow-gpu==2.0.0-beta1`, `%pip install "tensorflow>=2.4"`: a shell or
# magic line of a notebook cell that installs packages.
_PIP_LINE = re.compile(r"^\s*[!%]\s*(?:python3?\s+-m\s+)?pip3?\s+install\s+(?P<args>.*)$")
_COLAB_VERSION = re.compile(r"^\s*%tensorflow_version\s+(?P<major>\d+)\.x\b")


def notebook_pin(sources: list[str]) -> TargetTF | None:
    """The TensorFlow a notebook installs for itself, from its code cells' text (as saved,
    magics included): the lowest version its ``pip install`` lines pin, else Colab's
    ``%tensorflow_version 1.x`` (TF 1.15). ``%tensorflow_version 2.x`` names no release."""
    pins: list[Version] = []
    uppers: list[Version] = []
    colab: Version | None = None
    for text in sources:
        if "pip" not in text and "%tensorflow_version" not in text:
            continue  # neither pattern can match a line of this cell (most cells)
        for line in text.splitlines():
            m = _PIP_LINE.match(line)
            if m is not None:
                for token in m.group("args").split():
                    v = pinned_version(token.strip("\"'"))
                    if v is not None:
                        pins.append(v)
                        uppers.append(admitted_newest(token.strip("\"'")) or v)
                continue
            c = _COLAB_VERSION.match(line)
            if c is not None and c.group("major") == "1":
                colab = (1, LAST_MINOR[1])
    if pins:
        return TargetTF(min(pins), "pinned by the notebook's pip install",
                        max(min(pins), min(uppers)))
    if colab is not None:
        return TargetTF(colab, "%tensorflow_version 1.x in the notebook")
    return None


SETTING = "tf-version setting"


def resolve(configured: str | None, start: Path | None) -> TargetTF:
    """The target version for a run on ``start`` (a linted path, or its project folder; see
    the module docstring for the order)."""
    if configured:
        low, high = parse_target(configured)
        return TargetTF(low, SETTING, high)
    return (project_pin(start) or installed_version()
            or TargetTF(NEWEST_KNOWN, "newest known to tfperf"))


class FileTargets:
    """The targeted version per linted file, for one run: the setting when the user gave one,
    else the pin of the file's own project (one run may cover several projects: a folder of
    checkouts, a monorepo), else the installed TensorFlow, else the newest known. Pins are
    looked up once per folder for the run (a notebook's own pin applies on top:
    :func:`notebook_pin`)."""

    def __init__(self, run: TargetTF) -> None:
        self.run = run
        self.fallback = None if run.configured else (installed_version() or TargetTF(
            NEWEST_KNOWN, "newest known to tfperf")).version
        self._by_folder: dict[str, tuple[Version, Version, bool]] = {}
        self._by_real: dict[str, tuple[Version, Version, bool]] = {}
        self._keras: dict[str, bool] = {}

    def keras_graph(self, path: str) -> bool:
        """No setting or TensorFlow pin chose ``path``'s version, and the nearest
        requirements naming standalone Keras admit only multi-backend Keras (2.2 or older):
        a module importing ``keras`` there runs on a TensorFlow 1.x graph
        (:mod:`tfperf.lint.code_target`)."""
        if self.pinned(path):
            return False
        return self._keras_of(os.path.realpath(os.path.dirname(os.path.abspath(path))))

    def _keras_of(self, folder: str) -> bool:
        found = self._keras.get(folder)
        if found is not None:
            return found
        kind = folder_kind(folder)
        parent = os.path.dirname(folder)
        lines = _requirement_lines(Path(folder)) if kind == "pin" else []
        says = [k for _, line in lines if (k := multi_backend_keras(line)) is not None]
        if says:
            found = all(says)
        elif kind == "repo" or parent == folder or (
                kind == "pin" and os.path.isdir(os.path.join(folder, ".git"))):
            found = False
        else:
            found = self._keras_of(parent)
        self._keras[folder] = found
        return found

    def version(self, path: str) -> Version:
        """The oldest release ``path``'s code must run on."""
        return self.range(path)[0]

    def range(self, path: str) -> tuple[Version, Version]:
        """The oldest and the newest release ``path``'s project admits."""
        if self.fallback is None:
            return self.run.version, self.run.upper
        low, high, _ = self._of_folder(path)
        return low, high

    def pinned(self, path: str) -> bool:
        """The setting or ``path``'s project pin chose its version (not the installed TF or
        the newest known: there the module's own APIs may say older, see
        :mod:`tfperf.lint.code_target`)."""
        return self.fallback is None or self._of_folder(path)[2]

    def _of_folder(self, path: str) -> tuple[Version, Version, bool]:
        folder = os.path.dirname(os.path.abspath(path))
        found = self._by_folder.get(folder)
        if found is None:
            found = self._by_folder[folder] = self._of_real_folder(os.path.realpath(folder))
        return found

    def _of_real_folder(self, folder: str) -> tuple[Version, Version, bool]:
        # Memoised folder by folder on the way up: the files of one project share all the
        # folders above theirs, so each folder is listed once per run.
        found = self._by_real.get(folder)
        if found is not None:
            return found
        fallback = self.fallback or NEWEST_KNOWN  # set: no tf-version setting in this run
        kind = folder_kind(folder)
        parent = os.path.dirname(folder)
        if kind == "pin" and _names_tensorflow(Path(folder)):
            pin = project_pin(Path(folder))
            found = (pin.version, pin.upper, True) if pin else (fallback, fallback, False)
        elif kind == "repo" or parent == folder or (
                kind == "pin" and os.path.isdir(os.path.join(folder, ".git"))):
            found = (fallback, fallback, False)
        else:
            found = self._of_real_folder(parent)
        self._by_real[folder] = found
        return found
