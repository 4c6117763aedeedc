"""An error in a TensorFlow add-on's API as the user's code calls it: the add-on and the rest do
not match.

A TypeError about a call's arguments ("__init__() got an unexpected keyword argument 'values'",
"takes 2 positional arguments but 4 were given"), a missing attribute ("'BruteForce' object has
no attribute 'index_from_dataset'", "module 'tensorflow_probability' has no attribute 'X'") or a
name an import cannot find, raised where the code calls an add-on (TensorFlow Probability's
``tfd.Normal``, ``tfa.``, ``tfrs.``, ``hub.KerasLayer``), is that add-on's release not matching the
code written for another release, or the TensorFlow it runs on (its constructors call TensorFlow
with arguments that TensorFlow's release does not take). Such an error names no TensorFlow
frame, so the floor lists it as "not TensorFlow's"; round 31 (issue 31) showed these logs then
got no answer at all. The add-on is read from the code line just above the error (its
conventional alias), the traceback's frames, or the message; the fix pairs the add-on with the
TensorFlow the log names (``tf_addon_compat.csv`` through the install advice).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the add-ons' module names and the aliases their own documentation imports them as -> pip name
_ALIASES: dict[str, str] = {
    "tensorflow_probability": "tensorflow-probability", "tfp": "tensorflow-probability",
    "tfd": "tensorflow-probability", "tfb": "tensorflow-probability",
    "tensorflow_addons": "tensorflow-addons", "tfa": "tensorflow-addons",
    "tensorflow_io": "tensorflow-io", "tfio": "tensorflow-io",
    "tensorflow_recommenders": "tensorflow-recommenders", "tfrs": "tensorflow-recommenders",
    "tensorflow_text": "tensorflow-text", "tf_text": "tensorflow-text",
    "tensorflow_transform": "tensorflow-transform", "tft": "tensorflow-transform",
    "tensorflow_decision_forests": "tensorflow-decision-forests",
    "tfdf": "tensorflow-decision-forests",
    "tensorflow_model_optimization": "tensorflow-model-optimization",
    "tfmot": "tensorflow-model-optimization",
    "tensorflow_hub": "tensorflow-hub", "tf_agents": "tf-agents",
}
# a call of an alias's attribute (``tfd.Normal(``, ``tfrs.layers``); ``hub.`` only with the
# library's own entry points (a 'hub' variable is common)
_NAMES = "|".join(sorted(_ALIASES, key=len, reverse=True))
_CALL = re.compile(r"(?<!\w)(?P<alias>" + _NAMES + r")\.\w|(?<![\w.])hub\.(?:KerasLayer|load|"
                   r"Module|resolve)\b|'(?P<quoted>" + _NAMES + r")(?:\.[\w.]*)?'")
# the error classes that say the API called is not the one installed
_API_SHAPE = re.compile(r"unexpected keyword argument|takes (?:from )?\d+ (?:to \d+ )?positional "
                        r"arguments? but \d+|missing \d+ required (?:positional|keyword-only)|"
                        r"has no attribute|cannot import name")
_API_CLASSES = frozenset({"TypeError", "AttributeError", "ImportError"})
_LOOK_BACK = 4  # the code line quoted with the error sits just above it (a notebook cell, a REPL)


@dataclass(frozen=True)
class AddonCall:
    addon: str  # pip name
    shown: str  # what in the log names it


def addon_of(text: str) -> AddonCall | None:
    """The add-on ``text`` (code lines, frames, a message) calls or names, or None."""
    found = None
    for m in _CALL.finditer(text):
        found = m  # the last: the innermost call
    if found is None:
        return None
    if alias := found["alias"] or found["quoted"]:
        return AddonCall(_ALIASES[alias], alias)
    return AddonCall("tensorflow-hub", found.group(0))


def is_api_shape(cls: str, message: str) -> bool:
    """An error that says the API called does not exist in this form (signature, attribute,
    importable name)."""
    return cls in _API_CLASSES and bool(_API_SHAPE.search(message))


def addon_called(lines: list[str], at: int, frames: str, message: str) -> AddonCall | None:
    """The add-on whose API the error at line ``at`` concerns: named in its message, its
    traceback's frames, or the code line quoted just above it."""
    above = "\n".join(lines[max(0, at - _LOOK_BACK):at])
    for where in (message, frames, above):
        if got := addon_of(where.replace("/", ".").replace("\\", ".")):
            return got
    return None


# keyword arguments libraries renamed in their newer releases (blacklist -> denylist, whitelist
# -> allowlist: gin-config's @configurable among them), which code written for the older release
# still passes
_RENAMED_KW = re.compile(r"(?P<func>[\w.]+)\(\) got an unexpected keyword argument "
                         r"'(?P<kw>(?:black|white)_?list)'")
_NEW_NAME = {"black": "denylist", "white": "allowlist"}


def renamed_keyword(message: str) -> tuple[str, str, str] | None:
    """(function, the keyword passed, its new name) for a call that passes a keyword the called
    library has since renamed; None otherwise."""
    m = _RENAMED_KW.search(message)
    if m is None:
        return None
    return m["func"], m["kw"], _NEW_NAME[m["kw"][:5]]

