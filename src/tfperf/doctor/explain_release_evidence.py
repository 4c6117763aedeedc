"""Two readings of which release is behind, read with str.find first (a regex with a 4,000-
character gap tried at every position of a long log cost 4-5 ms each, round 31's first rows).

- pip finding no ``tensorflow`` for another package's requirement ("the requirement tensorflow
  (from magenta)") while the log names TensorFlow installed under another distribution name
  (tensorflow-macos, -cpu, -aarch64, intel-tensorflow, tf-nightly): pip does not count that as
  ``tensorflow``; install the package with --no-deps.
- a third-party library's own import reaching ``from tensorflow.python... import`` (an IPython
  arrow line under the arrow that imports the library, or the line under a site-packages frame
  of it): that library imports TensorFlow's internals of another release, not two installs mixed.
"""

from __future__ import annotations

import re

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

_NEEDLE = "requirement tensorflow"
_REQUIREMENT = re.compile(r"requirement tensorflow(?:[=<>!~]=?[\w.*,]+)? \(from "
                          r"(?!versions:)(?P<pkg>[\w.-]+)")
_VARIANT = re.compile(r"\b(?P<v>tensorflow-(?:macos|cpu|aarch64|intel)|intel-tensorflow|"
                      r"tf-nightly)\b")
_NEAR = 4000  # characters either side of the requirement where the installed variant is named


def dependency_on_tensorflow_name(text: str) -> Reading | None:
    if len(text) > 2 * _WINDOW:
        text = text[:_WINDOW] + "\n" + text[-_WINDOW:]
    at = text.find(_NEEDLE)
    while at >= 0:
        m = _REQUIREMENT.match(text, at)
        if m and (v := _VARIANT.search(text, max(0, at - _NEAR), at + _NEAR)):
            pkg, variant = m["pkg"], v["v"]
            return (f"{pkg} requires the distribution named 'tensorflow', while this environment "
                    f"has TensorFlow as another distribution ({variant}): pip does not count that "
                    "as 'tensorflow', so it looked for a 'tensorflow' wheel for this platform and "
                    "Python, found none, and stopped.",
                    f"Keep {variant}: install {pkg}'s other requirements yourself, then pip "
                    f"install {pkg} --no-deps; or use a platform and Python for which the "
                    "'tensorflow' distribution itself has wheels.",
                    m.group(0).rstrip())
        at = text.find(_NEEDLE, at + len(_NEEDLE))
    return None


_INTERNAL_LINE = re.compile(r"^(?P<arrow>[ \t]*-+>[ \t]*\d+[ \t]+)?[ \t]*from "
                            r"(?P<mod>tensorflow(?:_core)?\.python\.[\w.]+) import (?P<name>\w+)",
                            re.M)
_ARROW_IMPORT = re.compile(r"^[ \t]*-+>[ \t]*\d+[ \t]+(?:import|from) (?P<lib>[A-Za-z_]\w*)")
_LIB_FRAME = re.compile(r"[/\\](?:site|dist)-packages[/\\](?P<lib>[A-Za-z_]\w*)[/\\]")
_TF_FAMILY = re.compile(r"tensorflow\w*|keras|tf_keras|tensorboard")
_BACK = 9  # lines between the arrow importing the library and the one importing TF internals
_WINDOW = 100_000  # a long log is read at its start and end, as the evidence table's rows are


def library_imports_tf_internals(text: str) -> Reading | None:
    if "from tensorflow" not in text:
        return None
    if len(text) > 2 * _WINDOW:
        text = text[:_WINDOW] + "\n" + text[-_WINDOW:]
    for m in _INTERNAL_LINE.finditer(text):
        lib = _importing_library(_lines_above(text, m.start()), bool(m["arrow"]))
        if lib:
            return (f"The import of {lib} reached 'from {m['mod']} import {m['name']}': {lib} "
                    "imports TensorFlow's internals (tensorflow.python, no public API), which "
                    "change between releases, and the installed TensorFlow's no longer have that "
                    f"name: the {lib} release was written for another TensorFlow (often a TF 1.x "
                    "library after the environment's TensorFlow became 2.x, as Colab's default "
                    "did), not two TensorFlow installs mixed.",
                    f"Install the TensorFlow {lib}'s release was written for (its requirements; "
                    "on Colab, select or pip install that TensorFlow before importing it), or a "
                    f"{lib} release made for the installed TensorFlow.",
                    m.group(0).strip())
    return None


def _lines_above(text: str, at: int) -> list[str]:
    """Up to ``_BACK`` lines before the line starting at ``at``, nearest first."""
    out: list[str] = []
    end = at - 1
    while end >= 0 and len(out) < _BACK:
        start = text.rfind("\n", 0, end) + 1
        out.append(text[start:end])
        end = start - 1
    return out


def _importing_library(above: list[str], arrow: bool) -> str:
    """The third-party library whose import runs the line below ``above`` (nearest first): the
    nearest IPython arrow line importing it (with no other import between), or the
    site-packages frame just above."""
    if not arrow:
        m = _LIB_FRAME.search(above[0]) if above else None
        return m["lib"] if m and not _TF_FAMILY.fullmatch(m["lib"]) else ""
    for line in above:
        if m := _ARROW_IMPORT.match(line):
            return "" if _TF_FAMILY.fullmatch(m["lib"]) else m["lib"]
        if re.search(r"\bimport\b", line):
            return ""
    return ""
