"""The Python a pip log implies, read from the TensorFlow releases pip says it can install.

pip's "Could not find a version that satisfies the requirement tensorflow==2.3.0 (from versions:
2.5.0rc0, ..., 2.5.0)" lists exactly the releases that publish a wheel for the interpreter
running pip. Each release supports a range of Pythons (``data/tf_cpu_build_configs.csv``), so
the Pythons every listed release supports, less those of the older releases it does not list,
are the interpreter's: 2.5 listed and 2.4 not is Python 3.9. The requested release's own range
then says what to change.
"""

from __future__ import annotations

import re

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

_OFFERED = re.compile(
    r"Could not find a version that satisfies the requirement "
    r"(?P<req>tensorflow(?:[-_](?:gpu|cpu))?)(?:==(?P<want>\d+\.\d+)[\w.]*)?[^\n]*?"
    r"\(from versions: (?P<offered>[^)\n]+)\)")
_MINOR = re.compile(r"^(\d+)\.(\d+)")


def _minor(version: str) -> tuple[int, int] | None:
    m = _MINOR.match(version.strip())
    return (int(m[1]), int(m[2])) if m else None


def _py_key(python: str) -> tuple[int, ...]:
    return tuple(int(p) for p in python.split("."))


def offered_python(text: str) -> Reading | None:
    """(cause, fix, pip's line) when the releases pip lists pin the interpreter's Python down;
    None when the log lists none, or the listed releases do not agree on one."""
    if "(from versions:" not in text or (m := _OFFERED.search(text)) is None:
        return None
    offered = {v for part in m["offered"].split(",") if (v := _minor(part))}
    if not offered:
        return None
    from tfperf.doctor.knowledge.builds import build_configs

    pythons: dict[tuple[int, int], set[str]] = {}
    for cfg in build_configs("linux", gpu=False):
        if (mm := _minor(cfg.tf_version)) is not None:
            pythons.setdefault(mm, set()).update(cfg.python_list)
    known = [mm for mm in offered if mm in pythons]
    if not known:
        return None
    top = max(known)
    candidates = set().union(*pythons.values())
    for mm, pys in pythons.items():
        if mm in offered:
            candidates &= pys
        elif mm < top:  # an older release pip does not list has no wheel for this Python
            candidates -= pys
    if not candidates:
        return None
    ours = "/".join(sorted(candidates, key=_py_key))
    listed = ", ".join(f"{a}.{b}" for a, b in sorted(offered))
    cause = (f"pip lists only TensorFlow {listed}: the releases with a wheel for the Python "
             f"running pip. Python {ours} is the one they all support while the older releases "
             f"pip leaves out do not, so this interpreter is Python {ours}")
    fix = "Use a Python the requested release supports (a virtual or conda environment with it)"
    want = _minor(m["want"] or "")
    if want and want in pythons and not candidates & pythons[want]:
        need = sorted(pythons[want], key=_py_key)
        cause += (f"; TensorFlow {want[0]}.{want[1]} publishes wheels for Python "
                  f"{need[0]}-{need[-1]} only.")
        fix = (f"Install TensorFlow {want[0]}.{want[1]} under Python {need[0]}-{need[-1]} (a "
               f"virtual or conda environment with that Python), or require a release this "
               f"Python {ours} has ({listed}) where the code allows it.")
    else:
        cause += "."
        fix += f", or one of the releases pip lists ({listed})."
    return cause, fix, m.group(0)


# pip's list for any package pinned with ==: "requirement keras==1.13 (from versions: ...)"
_PINNED = re.compile(r"Could not find a version that satisfies the requirement "
                     r"(?P<pkg>[A-Za-z0-9][\w.-]*)(?:\[[\w,-]+\])?==(?P<want>\d+(?:\.\d+)*)"
                     r"(?![\w.*])[^\n(]*\(from versions: (?P<offered>[^)\n]*)\)")
_RELEASE = re.compile(r"^\d+(?:\.\d+)*$")  # a final release (no rc, dev, post)


def _key(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:  # 2.3 == 2.3.0
        parts.pop()
    return tuple(parts)


def _no_such_release(pkg: str, want: tuple[int, ...]) -> bool:
    """Whether what tfperf knows says ``pkg`` has no release ``want`` at all: a TensorFlow
    major.minor the build tables do not list, a standalone Keras 1.x past 1.2 (Keras 1 ended
    at 1.2.2; 2.0 followed). Else unknown: pip's missing version may be a missing wheel."""
    name = pkg.lower().replace("_", "-")
    if name == "keras":
        return want[0] == 1 and want[:2] > (1, 2)
    if name in ("tensorflow", "tensorflow-cpu", "tensorflow-gpu") and len(want) >= 2:
        from tfperf.doctor.knowledge.builds import build_configs

        minors = {_minor(c.tf_version) for c in build_configs("linux", gpu=False)}
        return (want[0], want[1]) not in minors and (want[0], want[1]) < max(
            m for m in minors if m is not None)
    return False


def pin_not_released(text: str) -> Reading | None:
    """(cause, fix, pip's line) when the pinned version is not a release at all: pip lists
    releases of the package both older and newer than it (so this Python is offered that
    stretch of releases) and not the pinned one. A version that was never published: the fix
    names the releases around it, not another Python. Keras before 2.6 was not numbered like
    TensorFlow: a keras==1.x pin copied from TensorFlow's version names no Keras."""
    if "(from versions:" not in text or (m := _PINNED.search(text)) is None:
        return None
    want = _key(m["want"])
    listed = [v.strip() for v in m["offered"].split(",") if _RELEASE.match(v.strip())]
    if not listed or any(_key(v) == want for v in listed):
        return None
    older = [v for v in listed if _key(v) < want]
    newer = [v for v in listed if _key(v) > want]
    if not older or not newer:
        return None  # the pin is past either end: a Python or platform question, not this
    below = max(older, key=_key)
    above = min(newer, key=_key)
    pkg = m["pkg"]
    if _no_such_release(pkg, want):
        cause = (f"{pkg} {m['want']} was never released: pip lists the releases of {pkg} it "
                 f"can install here, older ones ({below}) and newer ones ({above}) among them, "
                 f"and no {m['want']}; the pin names a version that does not exist, not a "
                 "missing wheel.")
        fix = (f"Pin a release that exists: the nearest are {below} and {above} (pip index "
               f"versions {pkg} lists them all).")
    else:  # pip lists only the releases with a wheel for this interpreter and platform
        cause = (f"pip offers no {pkg} {m['want']} here, though it lists releases around it "
                 f"({below} and {above}): it lists only the releases with a wheel for this "
                 f"Python and platform, so {m['want']} has no wheel for this Python/platform "
                 "(or was never published).")
        fix = (f"Pin a release pip lists here: the nearest are {below} and {above} (pip index "
               f"versions {pkg} lists them all); for {m['want']} itself, use a Python and "
               "platform it publishes wheels for.")
    if pkg.lower() == "keras" and want < (2, 6):
        cause += (" Standalone Keras was not numbered like TensorFlow before 2.6: a TensorFlow "
                  "version is not a Keras version.")
        fix = ("Install the Keras of that TensorFlow: keras==2.2.5 for TF 1.12 and older, "
               "keras==2.3.1 for TF 1.13 to 2.1, keras==2.4.3 for TF 2.2 to 2.5, and keras of "
               "TensorFlow's own major.minor from TF 2.6 on (or use tf.keras).")
    return cause, fix, m.group(0)


_GPU_PACKAGE_LAST = (2, 11)  # tensorflow-gpu's last release (pypi.org/project/tensorflow-gpu)
_NONE = re.compile(r"Could not find a version that satisfies the requirement "
                   r"(?P<req>tensorflow(?:[-_](?:gpu|cpu))?)(?![\w-])(?:==(?P<want>\d+\.\d+)[\w.]*)?"
                   r"[^\n]*?\(from versions: none\)")


def no_wheel_at_all(text: str) -> Reading | None:
    """(cause, fix, pip's line) when pip offers no TensorFlow release at all ("from versions:
    none") and the log names the Python: a Python no release of the package asked for supports
    (newer than every Python the table lists for it: for tensorflow-gpu, whose last release is
    2.11, the tensorflow package with its CUDA extra; older than the oldest), else a Python that
    releases do support, so the interpreter's build or platform has no wheels (32-bit, an OS or
    CPU without wheels, a pip too old for the wheels' tags)."""
    if "(from versions: none)" not in text or (m := _NONE.search(text)) is None:
        return None
    from tfperf.doctor.explain_versions import read_versions
    from tfperf.doctor.knowledge.builds import build_configs

    v = read_versions(text)
    py = v.python
    if not py:
        return None
    pkg = m["req"].lower().replace("_", "-")
    # the package pip was asked for: tensorflow-gpu's releases end with 2.11
    last_minor = _GPU_PACKAGE_LAST if pkg == "tensorflow-gpu" else (99, 99)
    releases: dict[tuple[int, int], list[str]] = {}
    for cfg in build_configs(v.os if v.os in ("windows", "macos") else "linux", gpu=False):
        if (mm := _minor(cfg.tf_version)) is not None and mm <= last_minor:
            releases.setdefault(mm, []).extend(cfg.python_list)
    if not releases:
        return None
    having = sorted(mm for mm, pys in releases.items() if py in pys)
    newest = max(releases)
    span = sorted(set(releases[newest]), key=_py_key)
    if not having and pkg == "tensorflow-gpu" and _py_key(py) > _py_key(span[-1]):
        return (f"pip offers no tensorflow-gpu at all: this interpreter is Python {py}, newer "
                f"than every Python tensorflow-gpu published wheels for (its last release, "
                f"{newest[0]}.{newest[1]}, supports Python {span[0]}-{span[-1]}): the GPU "
                "package ended there; TensorFlow ships its GPU support in the tensorflow "
                "package since.",
                "Install the tensorflow package with its CUDA libraries: pip install "
                "'tensorflow[and-cuda]' (Linux or WSL2, TF 2.14+; native Windows has no GPU "
                f"after TF 2.10), or keep tensorflow-gpu in an environment with Python "
                f"{span[-1]} or older.",
                m.group(0))
    if not having:
        side = ("newer than" if _py_key(py) > max(_py_key(p) for p in span) else "older than")
        return (f"pip offers no TensorFlow at all: this interpreter is Python {py}, {side} every "
                f"Python TensorFlow publishes wheels for (the newest release, "
                f"{newest[0]}.{newest[1]}, supports Python {span[0]}-{span[-1]}).",
                f"Create an environment with a Python TensorFlow supports (Python {span[0]}-"
                f"{span[-1]} for TensorFlow {newest[0]}.{newest[1]}; tfperf doctor --plan VERSION "
                "names each release's Pythons) and install TensorFlow there.",
                m.group(0))
    first, last = having[0], having[-1]
    return (f"pip offers no TensorFlow at all although releases {first[0]}.{first[1]} to "
            f"{last[0]}.{last[1]} publish wheels for Python {py}: this interpreter or platform "
            "has none: a 32-bit Python, an operating system or CPU without wheels (Windows on "
            "ARM, 32-bit ARM Linux, macOS on Apple silicon before TF 2.13), or a pip too old to "
            "accept the wheels' tags.",
            "Check the interpreter: python -c 'import struct, platform; "
            "print(struct.calcsize(\"P\") * 8, platform.machine())' must say 64 and "
            "x86_64/AMD64 (or arm64/aarch64 for the "
            "releases that have them); install a 64-bit Python, upgrade pip (python -m pip install "
            "--upgrade pip), then install TensorFlow again.",
            m.group(0))


_PRE = re.compile(r"\d(?:a|b|rc)\d*$")


def pip_too_old(text: str) -> Reading | None:
    """(cause, fix, pip's line) when pip's list of TensorFlow releases stops just before the
    first manylinux2010 wheels: 1.14 the newest final and nothing later than 2.0's alphas and
    betas (manylinux1). TensorFlow 1.15, 2.0 and later publish manylinux2010 wheels, which pip
    before 19.0 does not see, on any Python; the interpreter is not what is wrong."""
    if "(from versions:" not in text or (m := _OFFERED.search(text)) is None:
        return None
    parts = [p.strip() for p in m["offered"].split(",") if p.strip()]
    finals = [mm for p in parts if not _PRE.search(p) and (mm := _minor(p))]
    later = [p for p in parts if (mm := _minor(p)) and mm >= (1, 15)]
    if not finals or max(finals) != (1, 14) or not later or any(not _PRE.search(p) for p in later):
        return None
    cause = ("pip lists TensorFlow only up to 1.14 (and 2.0's pre-releases): from 1.15 and 2.0 "
             "on, TensorFlow's Linux wheels are manylinux2010 (later manylinux2014) wheels, "
             "which a pip older than 19.0 cannot see, so it offers none of them whatever the "
             "Python")
    fix = ("Upgrade pip in the environment that installs (python -m pip install --upgrade pip; "
           "19.0 or later, 19.3+ for the manylinux2014 wheels of newer releases), then install "
           "TensorFlow again.")
    return cause, fix, m.group(0)
