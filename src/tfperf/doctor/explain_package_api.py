"""A module of another package than TensorFlow's family missing an attribute: that package's API
changed between its own releases (keras_tuner.oracles.BayesianOptimization became
BayesianOptimizationOracle), so the fix is that package's release, not TensorFlow's."""

from __future__ import annotations

import re

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

_MISSING = re.compile(r"AttributeError: module '(?P<mod>(?P<top>[A-Za-z_]\w*)(?:\.\w+)*)' has no "
                      r"attribute '(?P<attr>\w+)'")
# TensorFlow's family and the packages its wheel requires (NumPy, ml_dtypes, protobuf, h5py ...):
# their own rows, the error-class clauses and the API table read these
_OWN = re.compile(r"tensorflow\w*|tf|tf_keras|keras|tensorboard|tflite\w*|numpy|np|ml_dtypes|"
                  r"jax|jaxlib|absl|google|h5py|gast|wrapt|flatbuffers|opt_einsum|six|termcolor|"
                  r"astunparse|typing_extensions|grpc|libclang")
# import names whose pip name is not the import name with '_' for '-'
_PIP_NAMES = {"cv2": "opencv-python", "sklearn": "scikit-learn", "PIL": "Pillow",
              "yaml": "PyYAML", "skimage": "scikit-image", "bs4": "beautifulsoup4"}


# the names a project's own modules usually have (its utils.py is no installed release)
_PROJECT_NAMES = frozenset({"utils", "util", "model", "models", "config", "data", "dataset",
                            "datasets", "helpers", "helper", "common", "train", "main", "app",
                            "src", "lib", "core", "layers", "modules", "tools", "settings"})
# pip's own words (and a user's) for its resolver walking back through a package's releases
_BACKTRACK = re.compile(r"(?i)backtrack|pip is looking at multiple versions of")


def is_third_party_missing(message: str) -> bool:
    """``module 'X' has no attribute 'Y'`` for a package outside TensorFlow's family and the
    standard library: a site the floor reads even when no TensorFlow frame shows (round 31)."""
    import sys

    m = _MISSING.search(f"AttributeError: {message.strip()}")
    if m is None:
        return False
    return not _OWN.fullmatch(m["top"]) and not m["mod"].startswith("__") and (
        m["top"] not in sys.stdlib_module_names) and m["top"].lower() not in _PROJECT_NAMES


def third_party_attribute(text: str) -> Reading | None:
    """``module 'keras_tuner.oracles' has no attribute 'BayesianOptimization'``: a package other
    than TensorFlow's changed its API; pin the release the code was written for."""
    if "has no attribute" not in text or (m := _MISSING.search(text)) is None:
        return None
    top = m["top"]
    if _OWN.fullmatch(top) or m["mod"].startswith("__"):
        return None
    pip = _PIP_NAMES.get(top, top.replace("_", "-"))
    if _BACKTRACK.search(text):  # the log says pip walked back to an old release
        return (f"The installed {top} has no {m['mod']}.{m['attr']} because pip installed an old "
                f"{top} release: its resolver backtracked through {top}'s releases to one whose "
                "requirements it could install, because the newer ones require a package with "
                "no release for this Python or platform (often a TensorFlow pin such as "
                "tensorflow<2, which has no wheels for newer Pythons).",
                f"pip install '{pip}>=<the release you want>' to make pip name the requirement "
                f"that blocks it; then install {pip} with --no-deps (and its other requirements "
                "yourself) when that requirement is only needed for a part you do not use, or "
                "use a Python the pinned package supports.",
                m.group(0))
    return (f"The installed {top} has no {m['mod']}.{m['attr']}: {top}'s own API changed "
            "between its releases (a name renamed, moved or removed), and the code was written "
            f"for another {top} release than the one installed. It is {top}'s version, not "
            "TensorFlow's.",
            f"Install the {pip} release the code (or tutorial) was written for: pip install "
            f"'{pip}==<that version>' (pip index versions {pip} lists them); or keep the new "
            f"release and use its name for it (dir({m['mod']}), {pip}'s changelog).",
            m.group(0))
