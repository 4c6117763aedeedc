"""The API the code calls and the TensorFlow it runs: a missing ``tf.X`` read against the table of
TensorFlow's public API by release (``knowledge.api_versions``, read from the real wheels).

``module 'tensorflow' has no attribute 'sort'`` is then "tf.sort exists from TF 1.13; this log's
TF is 1.12: upgrade", ``... 'Session'`` under TF 2 "removed in TF 2.0: tf.compat.v1.Session",
a name in every release "the 'tensorflow' imported is not the package" (a file of yours named
tensorflow.py), a name in none "never a public TF name". Only the floor's generic reading of the
error is replaced: a row that knows the message keeps its answer.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tfperf.doctor.knowledge.api_versions import ApiTable

# the explainer's Cause is typed Any here, as in explain_evidence (explainer imports this module)
Cause = Any

_MISSING = re.compile(
    r"module '(?P<mod>(?:tensorflow|keras|tensorflow_core(?=\._api\.))(?:\.[\w.]+)?)' has no "
    r"attribute '(?P<name>\w+)'|cannot import name '(?P<name2>\w+)' from "
    r"'(?P<mod2>(?:tensorflow|keras|tensorflow_core(?=\._api\.))(?:\.[\w.]+)?)'"
    r"|No module named '(?P<mod3>(?:tensorflow|keras)(?:\.[\w.]+)?)'")
# namespaces the wheels' generated modules do not hold in full: the estimator (hooked in from
# tensorflow_estimator), tf.contrib's parts (loaded lazily), tf.compat.v1.keras of TF 2.6+ (in the
# keras wheel's _v1 tree, not read): a name there is left to the floor
_NOT_HELD = ("tf.estimator", "tf.compat.v1.estimator", "tf.compat.v2.estimator", "tf.contrib.",
             "tf.compat.v1.keras", "tf.compat.v2.keras")
# a traceback frame in a file of the user's named like the package (not in site-packages): the
# file name first (literal-led: a pattern that starts at every 'File "' is slow on a long log)
_OWN_NAME = re.compile(r"""[/\\]tensorflow(?:\.py|[/\\]__init__\.py)["']""")
API_LABEL = "tf-api-not-in-this-release"
API_SOURCE = "data/tf_api_by_version.csv.gz"
_INTERNAL = ("python", "core", "compiler", "lite", "tools", "tsl", "src")


@dataclass(frozen=True)
class MissingApi:
    symbol: str  # "tf.sort", "tf.keras.layers.Rescaling"
    line: int  # 0-based line index of the message
    hint: str  # what the module's own name tells of the release ("2.x", ">= 2.16", "")
    module: bool = False  # "No module named ...": a missing module, never a shadowed package's name


def namespace(module: str) -> tuple[str | None, str]:
    """A Python module name as the public namespace it is (``tensorflow._api.v2.compat.v1`` ->
    ``tf.compat.v1``) and what the name tells of the release; None for TensorFlow's or Keras's
    internals (``tensorflow.python.keras``, ``keras.src``), which the table does not hold."""
    parts = module.split(".")
    hint = ""
    if parts[0] == "keras":
        if parts[1:3] == ["_tf_keras", "keras"]:
            parts, hint = parts[3:], ">= 2.16"
        else:
            parts = parts[1:]
        if parts and parts[0] in _INTERNAL:
            return None, hint
        return ".".join(["tf.keras", *parts]), hint
    # TF 1.15-2.1 ship the API as tensorflow_core (tensorflow_core._api.v2.random is tf.random
    # there); other tensorflow_* packages (tensorflow_io ...) are not TensorFlow's namespace
    core = parts[0] == "tensorflow_core" and parts[1:2] == ["_api"]
    if parts[0] != "tensorflow" and not core:
        return None, hint
    parts = parts[1:]
    if parts[:1] == ["_api"] and len(parts) > 1:
        hint = "1.15-2.1" if core else "1.x" if parts[1] == "v1" else "2.x"
        parts = parts[2:]
    if parts and parts[0] in _INTERNAL:
        return None, hint
    return ".".join(["tf", *parts]), hint


def missing_api(lines: list[str], only: set[int] | None = None) -> list[MissingApi]:
    """The missing public names the lines report (``only``: these line indices)."""
    out = []
    for i in sorted(only) if only is not None else range(len(lines)):
        line = lines[i] if i < len(lines) else ""
        if "tensorflow" not in line and "keras" not in line:
            continue
        m = _MISSING.search(line)
        if m is None:
            continue
        if m["mod3"]:
            if "." not in m["mod3"]:  # the top package itself (keras): not installed, the floor's
                continue
            ns, hint = namespace(m["mod3"])
            symbol = ns
        else:
            ns, hint = namespace(m["mod"] or m["mod2"])
            symbol = f"{ns}.{m['name'] or m['name2']}" if ns else None
        if symbol and symbol != "tf" and not symbol.startswith(_NOT_HELD):
            out.append(MissingApi(symbol, i, hint, module=bool(m["mod3"])))
    return out


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _own_file(text: str) -> str:
    for m in _OWN_NAME.finditer(text):
        start = text.rfind("\n", 0, m.start()) + 1
        head = text[start:m.end()]
        at = max(head.rfind('File "'), head.rfind("from '"))
        if at < 0:
            continue
        path = head[at + 6:-1]
        if "site-packages" not in path and "dist-packages" not in path:
            return path
    return ""


def _close(table: ApiTable, symbol: str) -> list[str]:
    """Spellings of the same namespace close to the missing name."""
    ns, _, name = symbol.rpartition(".")
    near = difflib.get_close_matches(name, table.names_in(ns), n=3, cutoff=0.75)
    return [f"{ns}.{n}" for n in near]


def _moved(table: ApiTable, symbol: str, release: str) -> list[str]:
    """Where the same last name is public in ``release`` (a name that moved namespace)."""
    root = "tf.keras" if symbol.startswith("tf.keras.") else "tf"
    name = symbol.rpartition(".")[2]
    # the shortest public spelling first: tf.data.experimental.X before tf.compat.v2.data...
    return sorted((s for s in table.ending_with(name, release)
                   if s != symbol and s.startswith(root + ".") and ".compat.v1." not in s),
                  key=lambda s: (".compat." in s, len(s), s))[:3]


def reading(symbol: str, log_tf: str | None, hint: str, own_file: str,
            table: ApiTable, module: bool = False) -> tuple[str, str, str] | None:
    """(cause, fix, detail) for a public name the running TensorFlow lacks; None where the table
    cannot say (the floor's reading stands): a missing module public in the log's release (a
    missing module is no evidence of a shadowed package)."""
    releases = table.releases
    first_known, latest = releases[0], releases[-1]
    span = f"TF {first_known}-{latest}, read from the wheels; before {first_known}: unknown"
    have = table.versions(symbol)
    key = _key
    tf = _minor(log_tf) if log_tf else ""
    where = (f"this log's TF is {log_tf}" if log_tf else
             f"this log's TF is {hint} (from the module's name)" if hint else
             "the log does not say which TF runs")
    newer = False
    if tf and key(tf) > key(latest):  # a release after the table's: read as its newest row
        where += f", newer than the table (read as TF {latest}, the table's newest)"
        tf, newer = latest, True
    older = bool(tf) and key(tf) < key(first_known)
    keras_internal = not have and module and bool(_KERAS_MODULE.fullmatch(symbol))
    keras_fix = ("Import the public name instead (from tensorflow.keras.layers import ..., "
                 "keras.layers.X), or upgrade the library whose code imports the internal path; "
                 "for code you cannot change, pin the release it was written for (pip install "
                 "'tensorflow<2.13' 'keras<2.13')")
    if keras_internal and tf and _key(tf) >= _key("2.13"):
        cause = (f"{symbol[3:]} is a module of Keras's internals, not its public API: Keras 2.13 "
                 "(TensorFlow 2.13) moved its implementation under keras.src, so imports of "
                 "internal paths (keras.engine, keras.layers.normalization, "
                 f"keras.legacy_tf_layers) fail from 2.13 on ({where})")
        return cause, keras_fix, f"{symbol}: Keras's internal module; {where}"
    if not have and (private := _PRIVATE.match(symbol)):
        part = private[1]
        cause = (f"{symbol} reaches into tensorflow.{part}, TensorFlow's own implementation "
                 f"package, not its public API: no release documents it as tf.{part}, and "
                 "whether the tensorflow module happens to expose it as an attribute changes "
                 f"between releases ({where}); code (often a library's) written against one "
                 "release's internals breaks on another")
        fix = (f"Use the public name (tf.X, tf.keras.X) the code wants instead of tf.{part}.X; "
               "when a library's code does it, upgrade the library to a release that uses "
               "TensorFlow's public API (or an add-on that now provides the feature), or install "
               "the TensorFlow release the library was written for")
        return cause, fix, f"{symbol}: TensorFlow's internals, not public in any release; {where}"
    if not have:
        moved = _moved(table, symbol, latest)
        close = _close(table, symbol)
        cause = (f"{symbol} is not a public TensorFlow name in any release ({span}): a name "
                 f"that moved or was removed before TF {first_known} (code written for an older "
                 "TF), a misspelling, a module of TensorFlow's or Keras's internals, or a name of "
                 "a third-party package" + (f"; the name is public as {', '.join(moved)} in TF "
                                            f"{latest}" if moved else ""))
        fix = ("Use the TensorFlow version the code was written for, or the name's current "
               "spelling" + (f" (close: {', '.join(close)})" if close else "")
               + "; import it from where it is public" + (f" ({moved[0]})" if moved else "")
               + ", or from the package that defines it")
        if keras_internal and not tf:  # which release runs decides: both readings, in order
            cause += ("; a lower-case module under keras is Keras's internals, which Keras 2.13 "
                      "(TensorFlow 2.13) moved under keras.src: such imports fail from 2.13 on")
            fix = f"{keras_fix}; or: {fix[0].lower()}{fix[1:]}"
        return cause, fix, f"{symbol}: no TF release has it; {where}"
    first, last = have[0], have[-1]
    in_log = tf in have if tf and tf in releases else None
    if in_log or (in_log is None and first == first_known and last == latest and not older):
        if module:
            return None
        whose = "the table's newest; this log's is newer" if newer else "this log's"
        cause = (f"{symbol} is public in " + (f"TF {tf} ({whose})" if in_log else
                                              f"every TF {first}-{last}")
                 + ", so the 'tensorflow' Python imported is not the installed package: "
                 + (f"your own {own_file} shadows it" if own_file else
                    "a file or folder of yours named tensorflow (tensorflow.py, tensorflow/) found "
                    "first on the path, or a broken install (two TensorFlow packages in one "
                    "environment, an interrupted pip)")
                 + ("" if in_log else f" (a TF older than {first_known} is unknown to the table)"))
        fix = ("Run python -c 'import tensorflow as tf; print(tf.__version__, tf.__file__)': "
               "a path outside site-packages is your file to rename (delete its __pycache__), "
               + ("" if in_log else f"a version before {first_known} is a TF to upgrade, ")
               + "else pip uninstall every tensorflow package and reinstall one")
        return cause, fix, f"{symbol}: TF {first}-{last}; {where}"
    removed = (tf and key(tf) > key(last)) or (not tf and last != latest and (
        first == first_known or hint in ("2.x", ">= 2.16", "1.15-2.1")))
    if removed and last != latest:
        after = releases[releases.index(last) + 1]
        alt = ""
        rest = symbol[3:]
        if symbol.startswith("tf.") and not rest.startswith("compat."):
            v1 = f"tf.compat.v1.{rest}"
            if table.versions(v1) and (not tf or tf in table.versions(v1)):
                alt = v1
        keras3 = symbol.startswith("tf.keras") and table.keras.get(after, "").startswith("keras 3")
        moved = _moved(table, symbol, tf if tf in releases else latest)
        cause = (f"{symbol} was removed in TF {after} (the last release with it: {last}); {where}"
                 + (": TF 2.16+ ships Keras 3 as tf.keras, which dropped it" if keras3 else ""))
        fixes = []
        if alt:
            fixes.append(f"use {alt}")
        if moved:
            fixes.append(f"use {moved[0]} (the name's place now)")
        if keras3:
            fixes.append(f"keep Keras 2: pip install 'tf-keras~={tf or after}.0' and set "
                         "TF_USE_LEGACY_KERAS=1 before importing TensorFlow, or port to Keras 3")
        fixes.append(f"{'or ' if fixes else ''}pin tensorflow<={last}.* "
                     f"(pip install 'tensorflow<{after}')")
        fix = "; ".join(fixes)
        return cause, fix[0].upper() + fix[1:], f"{symbol}: TF {first}-{last}; {where}"
    if older and first == first_known:  # the table's floor is not when the name came
        cause = (f"{symbol} is public in TF {first_known}" + (f"-{last}" if last != first else "")
                 + f"; {where}, before the table's first release: whether it has the name, the "
                 "table does not know (it may be older than the name, or not the installed "
                 "package)")
        fix = ("Run python -c 'import tensorflow as tf; print(tf.__version__, tf.__file__)': a "
               "path outside site-packages is your file to rename; else check the name in the "
               f"API docs of TF {log_tf}, or use a TF whose API has it")
        return cause, fix, f"{symbol}: TF {first}-{last} (before {first_known}: unknown); {where}"
    cause = (f"{symbol} exists from TF {first}" + (f" to {last}" if last != latest else "")
             + f"; {where}" + (": older" if tf else ", so it is older"))
    fix = f"Upgrade TensorFlow to {first} or newer: pip install 'tensorflow>={first}'"
    if last != latest:
        fix += f" (and <= {last}: later releases dropped it)"
    if tf in releases and (here := _moved(table, symbol, tf)):  # the name's place in this TF
        fix += f"; or, on TF {tf}, use {here[0]}"
    return cause, fix, f"{symbol}: TF {first}-{last}; {where}"


# a lower-case module path under Keras (its package structure, not a class or function name)
_KERAS_MODULE = re.compile(r"tf\.keras(?:\.[a-z_][a-z0-9_]*)+")
# TensorFlow's implementation packages, reached as attributes of the tensorflow module
_PRIVATE = re.compile(r"tf\.(python|core|compiler|tsl)(?:\.|$)")


def _key(version: str) -> tuple[int, ...]:
    from tfperf.doctor.knowledge.api_versions import version_key

    return version_key(version)


# rows whose reading of a missing public name is a guess the table can settle: a name the log's
# release lacks is no mix of installs (tf-installs-mixed) when the table says which release has it
_GUESSING_ROWS = frozenset({"tf-installs-mixed", "keras-name-moved"})
_SETTLED = ("exists from", "was removed in")


# the floor's class causes the table settles: the generic ones for these classes (a specific one,
# TF Probability's tf.compat.v2 or another library's frames, keeps its reading)
_GENERIC_WHEN = {"AttributeError": ("", "module '(?:tensorflow|keras)"),
                 "ImportError": ("", "cannot import name"),
                 "ModuleNotFoundError": ("", "tensorflow\\.|keras\\.")}


@functools.cache
def _generic_causes() -> frozenset[str]:
    from tfperf.doctor.knowledge.tables import read_table

    return frozenset(r["cause"] for r in read_table("error_class_causes.csv")
                     if r["when"] in _GENERIC_WHEN.get(r["class"], ()))


def _settles(cause: Cause) -> bool:
    """The floor's reading is its class's generic one (no specific class cause leads)."""
    return not cause.likely or cause.likely[0][0] in _generic_causes()


def apply_api_versions(causes: list[Cause], lines: list[str], text: str) -> None:
    """Replace the floor's generic reading of a missing TensorFlow name with the table's, and a
    guessing row's where the table says which releases have the name."""
    floor = [c for c in causes if c.lines and (
        c.confidence == "low" or all(ln.row in _GUESSING_ROWS for ln in c.lines))]
    if not floor:
        return
    found = missing_api(lines, {ln.number - 1 for c in floor for ln in c.lines})
    if not found:
        return
    from tfperf.doctor.explain_versions import read_versions
    from tfperf.doctor.knowledge.api_versions import api_table

    table = api_table()
    log_tf = read_versions(text).tensorflow
    own = _own_file(text)
    for cause in floor:
        numbers = {ln.number - 1 for ln in cause.lines}
        hit = next((f for f in found if f.line in numbers), None)
        if hit is None:
            continue
        said = reading(hit.symbol, log_tf, hit.hint, own, table, hit.module)
        if said is None:
            continue  # the table cannot say: the floor's reading stands
        if cause.confidence == "low" and not _settles(cause):
            cause.detail = "; ".join(filter(None, [said[2], cause.detail]))
            _library_too_new_for_tf(cause, hit.symbol, log_tf, table)
            continue  # a specific class cause leads; the table's fact goes with it
        if cause.confidence != "low" and not any(w in said[0] for w in _SETTLED):
            continue  # the row's reading stands where the table settles nothing
        if cause.confidence != "low":  # a guessing row's label said another cause
            cause.label = API_LABEL
        cause.cause, cause.fix, fact = said
        cause.detail = "; ".join(filter(None, [fact, cause.detail]))
        cause.confidence = "high"
        cause.likely = []
        cause.source = (f"{API_SOURCE} (TensorFlow's public API by release, "
                        "read from the wheels: data/tf_api_sources.csv)")


def _library_too_new_for_tf(cause: Cause, symbol: str, log_tf: str | None,
                            table: ApiTable) -> None:
    """A library's own frame missing a TensorFlow name that every release from the table's
    first to its newest has: the installed TensorFlow is older than the library (it cannot be
    too new, the newest still has the name), so upgrading TensorFlow leads the fix, not the
    library (round 31: DeepChem 2.1 on TF 1.5, tf.executing_eagerly)."""
    lib = (cause.details.get("addon") or [""])[0]
    have = table.versions(symbol)
    first_known, latest = table.releases[0], table.releases[-1]
    if not lib or not have or have[-1] != latest or "partially initialized" in cause.cause:
        return  # (a circular import's half-made module is no release's)
    if log_tf and _key(_minor(log_tf)) >= _key(have[0]):
        return  # the log's release has the name: not a matter of its age
    since = (f"{have[0]} or earlier: the table starts at {first_known}"
             if have[0] == first_known else have[0])
    who = f"TensorFlow {log_tf}" if log_tf else "the installed TensorFlow"
    older = f"{who} is older than the first release with it ({since})"
    up = (f"Upgrade TensorFlow to the release {lib} was written for (its requirements; "
          f"{symbol} is in every TensorFlow from {have[0]} to the newest, {latest}): {older}; "
          f"the newest TensorFlow still has the name, so it is the TensorFlow that is behind "
          f"(pip install 'tensorflow>={have[0]}'); were the version printed by python -c "
          f"'import tensorflow as tf; print(tf.__version__, tf.__file__)' one that has it, a "
          f"file of yours named tensorflow shadows the package.")
    cause.fix = f"{up} {cause.fix}"
    cause.likely = [(f"{lib} needs a newer TensorFlow: {older}.", up), *cause.likely][:3]

