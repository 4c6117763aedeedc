"""Versions a log names, fed to the planner's tables, so a fix names the version to install.

A log often says which TensorFlow, Python, NumPy, CUDA or cuDNN it ran with: in paths
(``python3.8/site-packages``, ``Python310\\lib``, ``tensorflow-2.16.1.dist-info``), in library
names (``cudart64_100.dll`` is CUDA 10.0, ``libcudnn.so.8`` is cuDNN 8), in pip's own lines
(``from versions: 2.2.0rc1, ...``) and in the messages themselves (``NumPy 2.1.3 as it may
crash``, ``The versions of TensorFlow you are currently using is 2.1.0``). ``read_versions``
collects them; ``install_advice`` turns them, with the tested build configurations
(``knowledge.build_configs``) and the add-on compatibility table, into one concrete line for the
causes that have one. Read only when such a cause is present: a 10,000-line log of other causes
never pays for it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

from tfperf.doctor import versions as V

_TF = [
    re.compile(r"tensorflow(?:[-_](?:gpu|cpu|macos|intel))?[-_](?P<v>\d+\.\d+\.\d+)"
               r"(?:\.dist-info|-cp\d|-py\d|\.tar|\.whl)"),
    re.compile(r"(?im)^\s*tensorflow(?:-gpu|-cpu|-macos|-intel)?\s+(?P<v>\d+\.\d+\.\d+)(?:\s|$)"),
    re.compile(r"[Tt]ensor ?[Ff]low [Vv]ersion:? v?(?P<v>\d+\.\d+\.\d+)\b"),
    re.compile(r"currently using is (?P<v>\d+\.\d+\.\d+)"),
    # not another package's ("onnx-tf version 1.10.0", review 38); the boundary is looked
    # behind after the literal: a pattern that starts with a lookbehind scans ~7x slower
    re.compile(r"(?:tf|TF)(?<![\w.-]..)(?:\.__version__|[ _]version)\)?:?[ =]*'?"
               r"(?P<v>\d+\.\d+\.\d+)"),
    re.compile(r"tf\.__version__\)?\s*\n\s*'?(?P<v>\d+\.\d+\.\d+)"),
    # pip freeze / a requirements line, pip's install summary, pip show (each starts with a
    # literal or a line start: a case-insensitive pattern costs milliseconds on a long log)
    re.compile(r"(?m)^[ \t]*tensorflow(?:-gpu|-cpu|-macos|-intel)?==(?P<v>\d+\.\d+\.\d+)\b"),
    # the same pin quoted in a sentence ("fails with `tensorflow==2.13.0`"), and a version
    # printed quoted after a colon ("Tensorflow: '2.9.0'"), round 31
    # (a backtick only: a quoted pin is most often a pip command's request, not what runs)
    re.compile(r"`tensorflow(?:-gpu|-cpu|-macos|-intel)?==(?P<v>\d+\.\d+\.\d+)\b`"),
    re.compile(r"[Tt]ensor ?[Ff]low: '(?P<v>\d+\.\d+\.\d+)'"),
    re.compile(r"Successfully installed [^\n]*?\btensorflow(?:-gpu|-cpu|-macos|-intel)?-"
               r"(?P<v>\d+\.\d+\.\d+)\b"),
    re.compile(r"Name: tensorflow(?:-gpu|-cpu|-macos|-intel)?[ \t]*\r?\nVersion: "
               r"(?P<v>\d+\.\d+\.\d+)"),
]
_PY = [  # (pattern, how its groups make "3.x")
    re.compile(r"[Pp]ython(?P<v>3\.\d{1,2})[/\\](?:site|dist)-packages"),
    re.compile(r"[Pp]ython3(?P<m>\d{1,2})[/\\]"),
    re.compile(r"-cp3(?P<m>\d{1,2})-"),
    re.compile(r"(?m)^Python (?P<v>3\.\d{1,2})\.\d+|sys\.version: (?P<w>3\.\d{1,2})"),
]
_NUMPY = re.compile(r"NumPy (?P<v>\d+\.\d+\.\d+)\w* as it may crash|"
                    r"^\s*numpy\s+(?P<w>\d+\.\d+\.\d+)", re.I | re.M)
# Keras's version (a dist-info folder, a pip list line), else the major its own modules tell:
# legacy_h5_format is Keras 3's .h5 reader, saving/(legacy/)hdf5_format.py Keras 2's (a
# case-insensitive alternation, or a lookbehind before the literal, cost 7-30 ms on a
# 200,000-character window: each is kept starting with a literal)
_KERAS_DIST = re.compile(r"keras-(?P<v>\d+\.\d+\.\d+)\.dist-info")
_KERAS_PIP = re.compile(r"^[ \t]*[Kk]eras[ \t]+(?P<w>\d+\.\d+\.\d+)\s", re.M)
_KERAS2_READER = re.compile(r"saving[/\\](?:legacy[/\\])?hdf5_format\.py")
_CUDART_DLL = re.compile(r"cudart64_(?P<d>\d+)\.dll")
_CUDART_SO = re.compile(r"libcudart\.so\.(?P<v>\d+(?:\.\d+)?)")
_CUDA_LIB = re.compile(r"lib(?:cublas|cufft|curand|cusolver|cusparse)\.so\.(?P<v>\d+(?:\.\d+)?)")
_CUDNN = re.compile(r"cudnn64_(?P<a>\d+)\.dll|libcudnn\.so\.(?P<b>\d+)|cuDNN (?P<c>\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class LogVersions:
    tensorflow: str | None = None
    python: str | None = None
    numpy: str | None = None
    os: str | None = None  # windows | macos | linux, from paths and library names
    cuda: str | None = None  # the CUDA the libraries named belong to
    cudnn: str | None = None
    keras: str | None = None  # "3" or "2" when only Keras's own modules tell
    series: str | None = None  # "1.x" when only TF 1.x's own wording tells (no version named)

    def as_dict(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v}


def _first(patterns: list[re.Pattern[str]], text: str) -> str | None:
    for rx in patterns:
        if m := rx.search(text):
            return next(v for v in m.groups() if v)
    return None


def _dll_cuda(digits: str) -> str:
    """cudart64_100.dll -> 10.0, cudart64_90.dll -> 9.0, cudart64_110.dll -> 11 (every CUDA 11.x
    runtime has that name), cudart64_12.dll -> 12."""
    if len(digits) == 3:
        return digits[:2] if int(digits[:2]) >= 11 else f"{digits[:2]}.{digits[2]}"
    if len(digits) == 2 and digits[0] in "6789":
        return f"{digits[0]}.{digits[1]}"
    return digits


def _so_cuda(version: str) -> str:
    """libcudart.so.10.1 -> 10.1; libcudart.so.11.0 -> 11: from CUDA 11 on a runtime keeps one
    file name across its major (the .0 is no minor), as cuBLAS and the others do."""
    major = version.split(".", 1)[0]
    return major if major.isdigit() and int(major) >= 11 else version


def cuda_of_library(name: str) -> str | None:
    """The CUDA version a runtime library's file name belongs to, as far as the name says (a
    major only from CUDA 11 on); None if it does not say."""
    if m := _CUDART_DLL.search(name):
        return _dll_cuda(m["d"])
    if m := _CUDART_SO.search(name) or _CUDA_LIB.search(name):
        return _so_cuda(m["v"])
    return None


def builds_loading(name: str, os: str) -> list[tuple[str, str, str]]:
    """(TensorFlow release, CUDA, cuDNN) of the GPU builds that load exactly this library file
    name (``libcudart.so.11.0``: TF 2.4.0-2.14.0, CUDA 11.0-11.8), from the tested builds and the
    SONAMEs each CUDA ships (``knowledge.needed_libraries``), oldest first."""
    return list(_builds_loading(name, os))


@functools.lru_cache(maxsize=512)
def _builds_loading(name: str, os: str) -> tuple[tuple[str, str, str], ...]:
    # read once per name: a log naming a library on many lines asked for it each time, and
    # each ask walked every build's SONAMEs (a third of the 10,000-line set log's time)
    from tfperf.doctor import knowledge as K

    out = [(c.tf_version, c.cuda, c.cudnn or "?") for c in K.build_configs(os, gpu=True)
           if c.cuda and name in K.needed_libraries(c.tf_version, os)]
    return tuple(sorted(out, key=lambda t: V.parse(t[0])))


def _python(text: str) -> str | None:
    for rx in _PY:
        if m := rx.search(text):
            g = m.groupdict()
            return g.get("v") or g.get("w") or f"3.{g['m']}"
    return None


def _os(text: str) -> str | None:
    if re.search(r"[A-Za-z]:\\|\.dll\b|\.pyd\b|\\site-packages\\", text):
        return "windows"
    if re.search(r"/Users/|\.dylib\b|darwin|macOS", text):
        return "macos"
    if re.search(r"/home/|/usr/|/opt/|\.so\b", text):
        return "linux"
    return None


_WINDOW = 100_000  # characters read from each end of a long log: start-up lines and the traceback


@functools.lru_cache(maxsize=4)
def read_versions(text: str) -> LogVersions:
    """The versions the log names. A long log is read at its start (where start-up and install
    lines are) and its end (where the traceback is), so its length costs nothing. (Cached: the
    evidence, the install lines and the readings ask for the same log's versions.)"""
    if len(text) > 2 * _WINDOW:
        text = text[:_WINDOW] + "\n" + text[-_WINDOW:]
    numpy = cuda = cudnn = None
    if m := _NUMPY.search(text):
        numpy = m["v"] or m["w"]
    if m := _CUDART_DLL.search(text):
        cuda = _dll_cuda(m["d"])
    elif m := _CUDART_SO.search(text) or _CUDA_LIB.search(text):
        cuda = _so_cuda(m["v"])
    if m := _CUDNN.search(text):
        cudnn = m["a"] or m["b"] or m["c"]
    tf = _first(_TF, text)
    series = "1.x" if not tf and _TF1_WORDING.search(text) else None
    return LogVersions(tf, _python(text), numpy, _os(text), cuda, cudnn, _keras_version(text),
                       series)


# what only TensorFlow 1.x prints: a session error's '(see above for traceback)', the node
# format '[[Node: X = Op[...' / '[[node X = Op[' of 1.x graphs
_TF1_WORDING = re.compile(r"Error \(see above for traceback\)|\[\[[Nn]ode:? [^\]\s]+[ .]*= \w+\[")
# TensorFlow's family in a pip list or a 'name: version' list (a line of its own, so the regex is
# tried at line starts only) and in dist-info folders (read from .dist-info backwards)
_FAMILY_NAMES = (r"tf[-_]nightly(?:[-_]gpu|[-_]cpu)?|tfp[-_]nightly|tb[-_]nightly|keras[-_]nightly|"
                 r"tf[-_]estimator[-_]nightly|tf[-_]keras(?:[-_]nightly)?|tensorflow(?:[-_](?:gpu|cpu|"
                 r"probability|estimator))?|tensorboard|keras")
_FAMILY_LINE = re.compile(rf"[ \t]*(?P<name>{_FAMILY_NAMES})(?:[ \t]*[:=][ \t]*|[ \t]+)"
                          r"(?P<v>\d+\.\d+[\w.]*)[ \t]*$")
_FAMILY_DIST = re.compile(rf"(?P<name>{_FAMILY_NAMES})-(?P<v>\d+\.\d+[\w.]*?)$")
_FAMILY_START = ("tf", "te", "tb", "ke", "Te", "Ke")


def family_packages(text: str) -> list[str]:
    """'tensorflow 2.1.0', 'tf-nightly 2.2.0.dev20200401'... as the log lists them (pip list,
    'name: version', dist-info folders), when at least one is a nightly; [] otherwise. Read from
    the first and last 100,000 characters, like the versions."""
    if "nightly" not in text and ".dev" not in text:
        return []
    if len(text) > 2 * _WINDOW:
        text = text[:_WINDOW] + "\n" + text[-_WINDOW:]
    found: dict[str, str] = {}
    for line in text.splitlines():  # a Python loop over lines beats a regex tried everywhere
        if len(line) < 80 and line.lstrip()[:2] in _FAMILY_START and (m := _FAMILY_LINE.match(
                line)):
            found.setdefault(m["name"].lower().replace("_", "-"), m["v"])
    at = text.find(".dist-info")
    while at >= 0:  # read each dist-info folder name backwards from its suffix
        start = max(text.rfind(c, 0, at) for c in "/\\ \n'\"") + 1
        if m := _FAMILY_DIST.match(text, start, at):
            found.setdefault(m["name"].lower().replace("_", "-"), m["v"])
        at = text.find(".dist-info", at + 1)
    if not any("nightly" in name or ".dev" in v for name, v in found.items()):
        return []
    return [f"{name} {v}" for name, v in found.items()]


def _keras_version(text: str) -> str | None:
    for m in _KERAS_DIST.finditer(text):
        before = text[m.start() - 1:m.start()]
        if not (before.isalnum() or before in ("_", "-")):  # not tf_keras-2.15.0.dist-info
            return m["v"]
    if pip := _KERAS_PIP.search(text):
        return pip["w"]
    if "legacy_h5_format" in text:
        return "3"
    if "hdf5_format.py" in text and _KERAS2_READER.search(text):
        return "2"
    return None


# ---------------------------------------------------------------------------------------------
# advice per label


def _mm(version: str) -> str:
    return V.fmt(V.major_minor(version))


def _range(versions: list[str]) -> str:
    if not versions:
        return ""
    ordered = sorted(set(versions), key=V.parse)
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]}–{ordered[-1]}"


def _numpy(details: dict[str, list[str]], v: LogVersions) -> str:
    if details.get("bfloat16") and not (details.get("numpy") or details.get("api")):
        return ("pip install --upgrade numpy (TensorFlow's bfloat16 type could not register with "
                "the NumPy installed: that NumPy is older than the one the wheel was built "
                "against; stay below NumPy 2 for TensorFlow 2.17 and older: 'numpy<2')")
    if details.get("api"):
        return ("pip install --upgrade 'numpy<2' (the module was compiled against a newer NumPy "
                f"C API, {details['api'][0]}, than the NumPy installed)")
    have = (details.get("numpy") or [v.numpy or ""])[0]
    have = f" (NumPy {have} is installed)" if have else ""
    if v.tensorflow and V.compare(v.tensorflow, "2.18") < 0:
        return (f"pip install 'numpy<2'{have}: TensorFlow {v.tensorflow} was built against "
                "NumPy 1.x; 2.18 is the first release built against NumPy 2")
    if v.tensorflow:
        return (f"TensorFlow {v.tensorflow} supports NumPy 2, so the module built for NumPy 1.x "
                f"is another package in the traceback: upgrade it, or pip install 'numpy<2'{have}")
    return (f"pip install 'numpy<2'{have} (TensorFlow 2.17 and older were built against NumPy "
            "1.x), or pip install 'tensorflow>=2.18'")


def _numpy_old(details: dict[str, list[str]], v: LogVersions) -> str:
    tf = f" for TensorFlow {v.tensorflow}" if v.tensorflow else ""
    if details.get("np_attr"):
        return (f"pip install 'numpy<1.24'{tf} (NumPy 1.24 removed np.{details['np_attr'][0]}, "
                "which this release still uses), or upgrade TensorFlow and TensorBoard")
    return f"pip install 'numpy~=1.19.2'{tf} (TensorFlow 2.4's setup.py pins numpy ~= 1.19.2)"


def _protobuf(details: dict[str, list[str]], v: LogVersions) -> str:
    gen, run = ((details.get(k) or [""])[0] for k in ("protobuf_gen", "protobuf_run"))
    if gen and run:  # protobuf 5+'s own check: the runtime must be the gencode's major, not older
        major = V.parse(gen)[0]
        return (f"pip install 'protobuf>={_mm(gen)},<{major + 1}' (the generated code is protobuf "
                f"{gen}, the runtime installed {run}: the runtime must be the same major and not "
                "older), or the release of the package whose _pb2 files failed that matches your "
                "protobuf")
    need = (details.get("protobuf_need") or [""])[0]
    if need:
        return f"pip install 'protobuf=={_mm(need)}.*' (the version the program was built for)"
    if v.tensorflow and V.compare(v.tensorflow, "2.12") >= 0:
        return (f"pip install --upgrade 'protobuf>=3.20.3,<5' (TensorFlow {v.tensorflow} needs "
                "protobuf 3.20.3 or newer)")
    tf = f"TensorFlow {v.tensorflow}" if v.tensorflow else "TensorFlow 2.9.0 and older, TF 1.x"
    return f"pip install 'protobuf==3.20.*' ({tf}: its generated modules predate protobuf 4)"


def _tf_built_with_cuda(cuda: str, os: str) -> list[str]:
    from tfperf.doctor import knowledge as K

    want = V.padded(V.parse(cuda), 2)[:2] if "." in cuda else V.parse(cuda)[:1]
    return [c.tf_version for c in K.build_configs(os, gpu=True) if c.cuda and
            V.padded(V.parse(c.cuda), 2)[:len(want)] == want]


def _span(name: str, builds: list[tuple[str, str, str]], os: str) -> str:
    """The install line for a library name several CUDA versions share."""
    groups: list[list[tuple[str, str, str]]] = []
    for b in builds:
        if groups and groups[-1][-1][1:] == b[1:]:
            groups[-1].append(b)
        else:
            groups.append([b])
    each = "; ".join(f"{_range([g[0] for g in grp])}: CUDA {grp[0][1]}, cuDNN {grp[0][2]}"
                     for grp in groups)
    cudas = _range([b[1] for b in builds])
    one = " + " not in name
    return (f"{name}: {'one file name' if one else 'file names'} for CUDA {cudas}; the "
            f"TensorFlow builds that load {'it' if one else 'them all'} are "
            f"{_range([b[0] for b in builds])} ({os} builds), each with its own CUDA and cuDNN "
            f"({each}); install the CUDA and cuDNN of your TensorFlow (pip show tensorflow; "
            "tfperf doctor --plan VERSION), or the TensorFlow built for the CUDA you have")


def _by_file_names(libs: list[str], os: str) -> str:
    """The builds that load every library named (each name narrows the releases: TF 2.4 asks for
    libcusolver.so.10, 2.5+ for libcusolver.so.11), said as one CUDA or as the span a shared
    name covers ('' when no name is a known CUDA/cuDNN library)."""
    from tfperf.doctor import knowledge as K

    spans = [(lib, b) for lib in dict.fromkeys(libs) if (b := builds_loading(lib, os))]
    if not spans:
        return ""
    keep = set.intersection(*({x[0] for x in b} for _, b in spans)) or {
        x[0] for x in spans[0][1]}
    builds = [x for x in spans[0][1] if x[0] in keep]
    names = " + ".join(lib for lib, _ in spans)
    if len({b[1] for b in builds}) > 1:
        return _span(names, builds, os)
    named = cuda_of_library(spans[0][0]) or ""  # cudart64_100.dll says 10.0 where the table has 10
    cuda, tfs = (named if "." in named else builds[0][1]), [b[0] for b in builds]
    cudnns = sorted({c.cudnn for c in K.build_configs(os, gpu=True)
                     if c.tf_version in tfs and c.cudnn}, key=V.parse)
    return (f"the build asks for CUDA {cuda}: TensorFlow {_range(tfs)} ({os} builds) were built "
            f"with CUDA {cuda} and cuDNN {' or '.join(cudnns)}; install those, or the TensorFlow "
            "built for the CUDA you have")


def _cuda(details: dict[str, list[str]], v: LogVersions) -> str:
    from tfperf.doctor import knowledge as K

    os = v.os if v.os in ("windows", "linux") else "linux"
    libs = details.get("lib", []) + details.get("lib2", [])
    if v.tensorflow and (cfg := K.build_config(v.tensorflow, os, gpu=True)) and cfg.cuda:
        # a library of another CUDA major than the build's: another TensorFlow is the one running
        # (a second install, an old environment), so say which CUDA that name belongs to
        # (cudart only: TF 2.4, a CUDA 11.0 build, asks for libcusolver.so.10 by design)
        other = next(((lib, c) for lib in libs if "cudart" in lib and (c := cuda_of_library(lib))
                      and c.split(".")[0] != cfg.cuda.split(".")[0]), None)
        also = (f"; but the log asks for {other[0]} = CUDA {other[1]}: the TensorFlow that runs "
                "is another build (pip show tensorflow tensorflow-gpu; python -c \"import "
                "tensorflow as tf; print(tf.__version__, tf.__file__)\")" if other else "")
        return (f"TensorFlow {v.tensorflow} ({os} build) needs CUDA {cfg.cuda} and cuDNN "
                f"{cfg.cudnn}: install those, or the TensorFlow built for the CUDA you have{also}")
    if not details.get("cuda") and (out := _by_file_names(libs, os)):
        return out
    cuda = (details.get("cuda") or [""])[0] or next(
        (c for lib in libs if (c := cuda_of_library(lib))), None) or v.cuda
    if not cuda:
        return ""
    tfs = _tf_built_with_cuda(cuda, os)
    if not tfs:
        return f"the build asks for CUDA {cuda}: install that CUDA, or a TensorFlow built for yours"
    cudnns = sorted({c.cudnn for c in K.build_configs(os, gpu=True)
                     if c.tf_version in tfs and c.cudnn}, key=V.parse)
    return (f"the build asks for CUDA {cuda}: TensorFlow {_range(tfs)} ({os} builds) were built "
            f"with CUDA {cuda} and cuDNN {' or '.join(cudnns)}; install those, or the TensorFlow "
            "built for the CUDA you have")


@functools.cache
def _addon_table() -> tuple[tuple[str, str, str], ...]:
    from tfperf.doctor.knowledge.tables import read_table

    return tuple((r["addon"], r["addon_version"], r["tf_minor"])
                 for r in read_table("tf_addon_compat.csv"))


def _addon_name(details: dict[str, list[str]]) -> str:
    plugin = (details.get("dml") or details.get("plugin") or [""])[0]  # in tensorflow-plugins/
    if details.get("metal") or plugin.startswith("libmetal_plugin"):
        return "tensorflow-metal"
    if "tfdml_plugin" in plugin:
        return "tensorflow-directml-plugin"
    if plugin:
        return f"plugin {plugin}"
    if details.get("lib"):
        return "tensorflow-io"
    if details.get("addons_min") or details.get("tf_have"):
        return "tensorflow-addons"
    if named := (details.get("addon_name") or [""])[0]:
        return {"TensorFlow Probability": "tensorflow-probability",
                "TF-Agents": "tf-agents"}.get(named, named)
    name = (details.get("addon") or details.get("addon2") or [""])[0]
    return name.replace("_", "-").replace("tf-sentencepiece", "tf_sentencepiece")


def metal_pairing(tf: str) -> str:
    """The tensorflow-metal release to install for TensorFlow ``tf`` (major.minor or full), from
    Apple's table: where none exists for it (newer than the last plugin release, or unknown),
    the newest TensorFlow a release supports, so the fix names releases that exist."""
    pairs = [(ver, tfm) for name, ver, tfm in _addon_table() if name == "tensorflow-metal"]
    mm = _mm(tf) if tf else ""
    if fits := [ver for ver, tfm in pairs if tfm == mm]:
        return (f"pip install 'tensorflow-metal=={fits[-1]}' (the release made for TensorFlow "
                f"{mm}, Apple's table)")
    last, newest = max(pairs, key=lambda p: (V.parse(p[0]), V.parse(p[1])))
    tfs = sorted({tfm for ver, tfm in pairs if ver == last}, key=V.parse)
    if mm and V.parse(mm) > V.parse(newest):
        head = f"no tensorflow-metal is made for TensorFlow {mm}: the last, {last}, "
    elif mm:
        head = f"Apple's table lists no tensorflow-metal for TensorFlow {mm}; the last, {last}, "
    else:  # the TensorFlow is not known: the table's newest pairs, so a pair that exists is named
        recent = sorted(pairs, key=lambda p: (V.parse(p[0]), V.parse(p[1])))[-4:]
        table = ", ".join(f"{ver} for {tfm}" for ver, tfm in recent)
        return (f"install the tensorflow-metal release made for your TensorFlow (Apple's table: "
                f"{table}; none after TensorFlow {newest}), or the TensorFlow the installed "
                "plugin was made for (the one it was installed with: a newer add-on's "
                "requirement may have replaced it), or pip install "
                f"'tensorflow=={newest}.*' 'tensorflow-metal=={last}', or pip uninstall "
                "tensorflow-metal to run on the CPU")
    return (f"{head}supports TensorFlow {' and '.join(tfs)}: use that pair (pip install "
            f"'tensorflow=={newest}.*' 'tensorflow-metal=={last}'), or pip uninstall "
            "tensorflow-metal to run on the CPU")


# the log names no TensorFlow version: say where the reader finds it, never a bare placeholder
_INSTALLED_MM = "as installed (its major.minor: pip show tensorflow)"


def _addon(details: dict[str, list[str]], v: LogVersions) -> str:
    if details.get("pin_req") or details.get("pin_req2"):
        return _pinned(details, v)
    addon = _addon_name(details)
    tf = (details.get("tf_have") or [v.tensorflow or ""])[0]
    mm = _mm(tf) if tf else ""
    if addon == "tensorflow-addons" and details.get("addons_min"):
        lo, hi = details["addons_min"][0], details["addons_max"][0]
        head = (f"the installed tensorflow-addons supports TensorFlow >= {lo} and < {hi}"
                + (f", not {tf}" if tf else ""))
        fits = [ver for name, ver, tfm in _addon_table() if name == addon and mm and tfm == mm]
        if fits:  # the release built for the TensorFlow the warning names
            return (f"{head}: pip install 'tensorflow-addons=={fits[0]}' (built for TensorFlow "
                    f"{mm}), or pip install 'tensorflow>={lo},<{hi}'")
        return (f"{head}: pip install 'tensorflow>={lo},<{hi}', or the tensorflow-addons "
                "release whose range covers your TensorFlow")
    if addon == "tensorflow-text":
        if mm:
            return f"pip install 'tensorflow-text=={mm}.*' (the release built for TensorFlow {mm})"
        return ("pip install 'tensorflow-text==<TensorFlow major.minor>.*' (they are released "
                "in step)")
    if addon == "tensorflow-io":
        fits = [ver for name, ver, tfm in _addon_table() if name == addon and tfm == mm]
        if fits:
            return f"pip install 'tensorflow-io=={fits[0]}' (built for TensorFlow {mm})"
        return ("install the tensorflow-io release built for TensorFlow "
                f"{mm or _INSTALLED_MM} (the compatibility table in tensorflow/io's README)")
    if addon == "tensorflow-directml-plugin":
        ver, built_for = next((ver, tfm) for name, ver, tfm in _addon_table() if name == addon)
        return (f"pip install 'tensorflow-cpu=={built_for}.*' (tensorflow-directml-plugin "
                f"{ver}, its last release, is built for TensorFlow {built_for} and needs "
                "tensorflow-cpu; uninstall tensorflow first if both are installed)")
    if addon == "tensorflow-metal":
        return metal_pairing(tf)
    if addon.startswith("plugin "):
        return (f"install the release of the package that ships tensorflow-plugins/"
                f"{addon[len('plugin '):]} built for TensorFlow {mm or _INSTALLED_MM}, or the "
                "TensorFlow it was built for")
    if addon == "tensorflow-probability" or details.get("tf_need"):
        return _requires_tf(addon, details, v)
    if addon in _KNOWN_ADDONS:
        fits = [ver for name, ver, tfm in _addon_table() if name == addon and mm and tfm == mm]
        if fits:
            return (f"pip install '{addon}=={fits[0]}' (its compiled ops are built against "
                    f"TensorFlow {mm}, the one installed)")
        if mm:
            return f"install the {addon} release built for TensorFlow {mm}"
        return (f"install the {addon} release built for TensorFlow {_INSTALLED_MM}; a TensorFlow "
                f"built from source (or a distribution's own build) exports other symbols than "
                f"the pip wheels {addon} is built against (another compiler or C++ ABI): install "
                f"the pip TensorFlow of that release, or build {addon} from source against the "
                f"TensorFlow installed")
    if addon:  # a library read from the traceback: its own release notes pair it with a TF
        tf = f"TensorFlow {mm}" if mm else "the TensorFlow installed"
        return (f"pip show {addon} tensorflow: install the {addon} release made for {tf}, or the "
                "TensorFlow its release requires (its setup.py, requirements or README), in one "
                "environment")
    return ""


_KNOWN_ADDONS = {"tensorflow-text", "tensorflow-io", "tensorflow-addons",
                 "tensorflow-recommenders", "tensorflow-decision-forests", "tensorflow-quantum",
                 "tensorflow-io-gcs-filesystem", "tensorflow-serving", "tensorflow-transform",
                 "tf_sentencepiece", "tensorflow-hub"}


def _requires_tf(addon: str, details: dict[str, list[str]], v: LogVersions) -> str:
    """An add-on that checks the TensorFlow it runs with (TensorFlow Probability's
    _ensure_tf_install): its release for the TensorFlow installed, or the TensorFlow it needs."""
    need = (details.get("tf_need") or [""])[0]
    have = (details.get("tf_have2") or [v.tensorflow or ""])[0]
    mm = _mm(have) if have and have[0].isdigit() else ""
    if not addon:  # a library's own check that does not name the library: the traceback does
        return (f"upgrade TensorFlow to {need or 'the release it names'} or newer (what the "
                f"package that checks it needs), or install a release of that package made for "
                f"TensorFlow {mm or _INSTALLED_MM}: the traceback's frames name the package")
    fits = [ver for name, ver, tfm in _addon_table() if name == addon and tfm == mm]
    pin = (f"pip install '{addon}=={_mm(fits[0])}.*' (the release made for TensorFlow {mm}, the "
           "one installed)") if fits else (
        f"install the {addon} release made for TensorFlow {mm or 'the installed one'}")
    up = f", or upgrade TensorFlow to {need} or newer (this {addon} needs it)" if need else ""
    return f"{pin}{up}; keep the two in step (each {addon} release pairs with one TensorFlow)"


def _pinned(details: dict[str, list[str]], v: LogVersions) -> str:
    """A package whose requirement pins another TensorFlow ('csbdeep only supports tensorflow <
    2', pip's 'X requires tensorflow<2.3,>=2.2, but you have tensorflow 2.3.0'): the TensorFlow it
    asks for, or a release of it made for the TensorFlow installed."""
    from tfperf.doctor import knowledge as K

    pkg = (details.get("pin_pkg") or details.get("pin_pkg2") or [""])[0]
    req = re.sub(r"\s+", "", (details.get("pin_req") or details.get("pin_req2") or [""])[0])
    have = (details.get("tf_have3") or details.get("tf_have4") or [v.tensorflow or ""])[0]
    tf1 = ""
    if re.fullmatch(r"<2(?:\.0)*", req):  # TF 1.x only: its last release and its Pythons
        cfg = K.build_config("1.15.0", "linux", gpu=False)
        pythons = f", Python {cfg.python_text}" if cfg else ""
        tf1 = f" (the last is 1.15{pythons}; tensorflow-gpu==1.15.* for the GPU)"
    fits = [ver for name, ver, tfm in _addon_table() if name == pkg and have and tfm == _mm(have)]
    newer = (f"pip install '{pkg}=={fits[0]}' (made for TensorFlow {_mm(have)})" if fits else
             f"a release of {pkg} (or of the package that installed it) made for TensorFlow "
             f"{have or 'the one installed'}: pip install -U {pkg}")
    return (f"pip install 'tensorflow{req}'{tf1}, the TensorFlow {pkg} asks for, or {newer}; keep "
            "both in one environment")


def _mixed(details: dict[str, list[str]], v: LogVersions) -> str:
    """Stable and nightly packages side by side: which to remove."""
    found = details.get("family", [])
    names = [f.split(" ", 1)[0] for f in found]
    if not names:
        return ("pip list | grep -iE 'tensorflow|nightly|keras|tfp': uninstall every TensorFlow, "
                "Keras and add-on package listed (stable and nightly), then install one release "
                "of each, all stable or all nightly")
    nightly = [n for n in names if "nightly" in n]
    keep = "the stable ones" if len(nightly) < len(names) else "one nightly set"
    return (f"pip uninstall -y {' '.join(names)}; then install {keep} again, all of one release "
            "(e.g. tensorflow with tensorflow-probability, or tf-nightly with tfp-nightly)")


def old_cuda_build(v: LogVersions) -> str:
    """'TensorFlow 1.15.0' / 'this TensorFlow (1.x, by its wording)' when the log shows a build
    made with CUDA 10 or older (TensorFlow 2.3 and older), '' otherwise."""
    if v.tensorflow and V.compare(v.tensorflow, "2.4") < 0:
        return f"TensorFlow {v.tensorflow}"
    return "this TensorFlow (1.x, by its wording)" if v.series == "1.x" else ""


# TensorFlow's family packages whose wheels follow another rule than the tensorflow release of
# their own number: what they are, and the Pythons their wheels cover
_FAMILY = {
    # microsoft/tensorflow-directml README (a fork of TF 1.15); its maintainers and
    # microsoft/tensorflow-directml#407: Python 3.5-3.7 only
    "tensorflow-directml": ("a fork of TensorFlow 1.15", "3.5–3.7"),
}
_SAME_AS_TF = {"tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow-intel",
               "tensorflow-aarch64", "tf-nightly"}


def _family_wheel(package: str, v: LogVersions) -> str:
    """The install line for a TensorFlow family package other than tensorflow itself."""
    py = f"; this Python is {v.python}" if v.python else ""
    if package in _FAMILY:
        what, pythons = _FAMILY[package]
        newest = pythons.rsplit("–", 1)[-1]
        return (f"{package} is {what}, with wheels for Python {pythons} only{py}: create an "
                f"environment with one of those (conda create -n tf python={newest})")
    if package == "tensorflow-text":
        return ("tensorflow-text releases follow TensorFlow's major.minor and have Windows wheels "
                "only for 2.4–2.10 (later ones: Linux x86_64 and Intel macOS); on Windows use WSL2 "
                f"or TensorFlow 2.10 with tensorflow-text 2.10, with a Python it supports{py}")
    return (f"{package} publishes wheels for some Pythons and platforms only: use the Python and "
            f"platform of the TensorFlow release it pairs with{py} (pip download {package} "
            "--no-deps -v lists the files pip skipped and why)")


def _wheel(details: dict[str, list[str]], v: LogVersions) -> str:
    from tfperf.doctor import knowledge as K

    configs = K.build_configs("linux", gpu=False)
    req = (details.get("requirement") or details.get("requirement2") or [""])[0]
    package = re.split(r"[=<>!~]", req, maxsplit=1)[0].strip().lower().replace("_", "-")
    if package and package not in _SAME_AS_TF:
        return _family_wheel(package, v)
    if m := re.search(r"==\s*(\d+\.\d+(?:\.\d+)?)", req):
        cfg = K.build_config(m[1], "linux", gpu=False)
        if cfg:
            py = f"; this Python is {v.python}" if v.python else ""
            return (f"TensorFlow {m[1]} has wheels for 64-bit Python {cfg.python_text}{py}: use "
                    "one of those, or a TensorFlow release that supports your Python")
    if v.python:
        fits = [c.tf_version for c in configs if c.supports_python(v.python)]
        if fits:
            newest = max(fits, key=V.parse)
            return (f"Python {v.python}: TensorFlow {_range(fits)} have wheels for it: pip "
                    f"install 'tensorflow=={newest}' with a 64-bit Python {v.python}")
        latest = configs[0]
        return (f"no TensorFlow release has wheels for Python {v.python}: the newest, "
                f"{latest.tf_version}, supports Python {latest.python_text}; install one of those")
    latest = configs[0]
    return (f"the newest TensorFlow, {latest.tf_version}, has wheels for 64-bit Python "
            f"{latest.python_text}; older releases need older Pythons (tfperf doctor --plan "
            "VERSION says which)")


def _glibc(details: dict[str, list[str]], v: LogVersions) -> str:
    # the highest version the log needs: a newer glibc side-loaded for the first one still
    # lacks the next (tensorflow#13347: GLIBC_2.14, then GLIBC_2.17 from the 2.14 install)
    needs = [g.split("_", 1)[1] for g in details.get("glibc") or [] if "_" in g]
    if needs:
        need = max(needs, key=V.parse)
        return (f"a system with glibc {need} or newer (ldd --version shows this one's), e.g. a "
                "current tensorflow/tensorflow container")
    cxx = (details.get("glibcxx") or [""])[0]
    return f"a libstdc++ that provides {cxx} (conda install -c conda-forge libstdcxx-ng)" if cxx \
        else ""


def _keras(details: dict[str, list[str]], v: LogVersions) -> str:
    if flavour := (details.get("tf_keras") or [""])[0]:
        # tf_keras itself failed on TensorFlow's internals: tf-keras is released with each
        # TensorFlow minor and reads its private API, so only the same minor works (tf-keras#676)
        mm = _mm(v.tensorflow) if v.tensorflow else "<your TensorFlow's major.minor>"
        if flavour == "nightly" or (v.tensorflow and ".dev" in v.tensorflow):
            return ("pip install tf-keras-nightly (a tf-nightly needs the nightly tf-keras: the "
                    "released tf-keras does not match it)")
        return (f"pip install 'tf-keras=={mm}.*' (tf-keras must be the release of the same "
                "minor as TensorFlow; with tf-nightly install tf-keras-nightly)")
    k3_named = any(details.get(k) for k in ("k3_layer", "k3_api", "k3_api2", "k3_cls"))
    if not v.tensorflow and (k3_named or (v.keras or "").startswith("3")):
        return ("pip install tf-keras (the release of your TensorFlow's major.minor) and set "
                "TF_USE_LEGACY_KERAS=1 before importing TensorFlow, so code written for Keras 2 "
                "runs on Keras 2 (or pin TensorFlow 2.15, the last release with Keras 2); in your "
                "own model, start the Sequential with keras.Input(shape=...) or call it on a "
                "batch before reading .input/.output")
    if not v.tensorflow and (need := (details.get("k_tf_min") or [""])[0]):
        # Keras 2.4+ refuses a TensorFlow older than it needs, so the one installed is older: a
        # TF 1.x has no Keras numbered like it (no keras==1.13.*), its Keras is 2.3.1 or 2.2.5
        return (f"pip install 'keras==2.3.1' (the last standalone Keras for a TensorFlow older "
                f"than {need}: TF 1.13 to 2.1; keras==2.2.5 for TF 1.12 and older), or pip "
                f"install 'tensorflow>={need}' (then use tf.keras)")
    if not v.tensorflow:
        return ""
    mm = _mm(v.tensorflow)
    if details.get("k_tfutils") and V.compare(v.tensorflow, "1.13") < 0:
        # the Keras 2.2 such a TensorFlow ran with (yapic#9: tensorflow-gpu 1.8, pip freeze);
        # Keras 2.3 wants TensorFlow 1.13 and newer
        return (f"pip install 'keras==2.2.4' (a Keras 2.2 for TensorFlow {mm}: the newer "
                "Keras imports tf_utils, which it lacks), or pip install 'tensorflow>=1.13' "
                "for the Keras installed")
    # standalone Keras before it followed TensorFlow's minor (2.6): 2.3.1 was the last for TF 1.x
    # and TF 2.0-2.1, 2.4.3 the one for TF 2.2-2.5 (tensorflow#38589, 4AI/AGN#3); Keras 2.3.0
    # supports TF 1.13 and newer, 2.2.5 was the last for TF 1.x only (keras#14149, bert4keras#369)
    if V.compare(v.tensorflow, "1.13") < 0:
        return (f"pip install 'keras==2.2.5' (the last Keras 2.2, for TensorFlow 1.x such as "
                f"{mm}; there is no keras=={mm}.*), or use tf.keras")
    if V.compare(v.tensorflow, "2.2") < 0:
        return (f"pip install 'keras==2.3.1' (the last standalone Keras for TensorFlow "
                f"{mm}), or use tf.keras")
    if V.compare(v.tensorflow, "2.6") < 0:
        return (f"pip install 'keras==2.4.3' (the standalone Keras for TensorFlow {mm}), or use "
                "tf.keras")
    if V.compare(v.tensorflow, "2.16") >= 0:
        return (f"pip install 'tf-keras=={mm}.*' and set TF_USE_LEGACY_KERAS=1 before importing "
                "TensorFlow (Keras 2 code), or port the code to Keras 3")
    return f"pip install 'keras=={mm}.*' (the Keras released with TensorFlow {mm})"


def _tf_keras(details: dict[str, list[str]], v: LogVersions) -> str:
    """tf-keras at TensorFlow's own major.minor: the message names TensorFlow's version."""
    tf = (details.get("tfver") or [v.tensorflow or ""])[0]
    if not tf or V.compare(tf, "2.16") < 0:
        return ""
    mm = _mm(tf)
    return (f"pip install 'tf-keras=={mm}.*' (the tf-keras of TensorFlow {mm}), or "
            "pip install 'tensorflow<2.16' (the last releases whose tf.keras is Keras 2)")


def _protobuf_reinstall(details: dict[str, list[str]], v: LogVersions) -> str:
    pin = f"=={v.tensorflow}" if v.tensorflow else ""
    return (f"pip uninstall -y tensorflow protobuf && pip install 'tensorflow{pin}' (in a clean "
            "virtual environment if it persists)")


def _tf1(details: dict[str, list[str]], v: LogVersions) -> str:
    from tfperf.doctor import knowledge as K

    cfg = K.build_config("1.15.0", "linux", gpu=False)
    py = f" (it has wheels for Python {cfg.python_text})" if cfg else ""
    return f"pip install 'tensorflow==1.15.*'{py} to run it unchanged, or port it to TF 2"


def _driver_for_ptxas(details: dict[str, list[str]], v: LogVersions) -> str:
    from tfperf.doctor import knowledge as K

    ptxas = (details.get("ptxas") or [""])[0]
    if not ptxas:
        return ""
    cuda = _mm(ptxas)
    os = v.os if v.os in ("windows", "linux") else "linux"
    need = K.min_driver(cuda, os)
    if need.toolkit_min is None:
        return ""
    have = (details.get("driver_cuda") or [""])[0]
    have = f" (this driver supports CUDA {have})" if have else ""
    return (f"an NVIDIA driver >= {need.toolkit_min} ({os}), the minimum for CUDA {cuda}, the "
            f"CUDA of the ptxas XLA uses{have}")


def _cudnn(details: dict[str, list[str]], v: LogVersions) -> str:
    """The cuDNN this build's check accepts, the TensorFlow releases tested with the cuDNN
    loaded, and a hint when the build's cuDNN is older than every release in the tested-build
    table (another, older TensorFlow is running). The table gives the tested cuDNN, which can
    differ from the one a wheel was compiled with (TF 1.15: tested 7.4, compiled 7.6), so it is
    not compared with the compiled version otherwise."""
    from tfperf.doctor import knowledge as K
    from tfperf.doctor.explain_readings import cudnn_reading

    reading = cudnn_reading(details)
    if reading is None:
        return ""
    os = v.os if v.os in ("windows", "linux") else "linux"
    configs = K.build_configs(os, gpu=True)

    def built_with(ver: tuple[int, int, int]) -> list[str]:
        """Releases tested with this major.minor (the table's "7" read as 7.0)."""
        names = {f"{ver[0]}.{ver[1]}"} | ({str(ver[0])} if ver[1] == 0 else set())
        return [c.tf_version for c in configs if c.cudnn in names]

    loaded = f"{reading.loaded[0]}.{reading.loaded[1]}"
    out = f"{reading.install}, or a TensorFlow built for the cuDNN loaded, {loaded}"
    if tfs := built_with(reading.loaded):
        out += (f" (TensorFlow {_range(tfs)} {'was' if len(set(tfs)) == 1 else 'were'} tested "
                f"with it, {os} builds)")
    known = [V.parse(c.cudnn) for c in configs if c.cudnn]
    if known and V.parse(f"{reading.compiled[0]}.{reading.compiled[1]}") < min(known):
        oldest = min(configs, key=lambda c: c.version_tuple)
        out += (f"; no release in the tested-build table (TensorFlow {oldest.tf_version} and "
                f"later) was tested with cuDNN {reading.compiled[0]}.{reading.compiled[1]}, so the "
                "TensorFlow running is older: if you installed a newer one, Python is importing "
                "another TensorFlow (check python -c \"import tensorflow as tf; "
                "print(tf.__version__, tf.__file__)\", activate the environment you installed it "
                "in)")
    return out


def _cpu(details: dict[str, list[str]], v: LogVersions) -> str:
    """On a Mac (zsh's or macOS's SIGILL wording, macOS paths): Apple silicon's x86 wheel."""
    mac = v.os == "macos" or details.get("zsh") or details.get("signal_number") == ["4"]
    if not mac and (details.get("win_init") or details.get("win_code")):
        # Windows says only that the DLL's start-up hit an instruction the CPU lacks: which set
        # depends on the wheel (community Windows wheels are often AVX2 builds: fo40225's)
        return ("the CPU lacks an instruction set this wheel was built for: official wheels "
                "(TensorFlow 1.6+) need AVX, many community Windows wheels (fo40225's) AVX2 too; "
                "check the CPU's flags (Microsoft's Coreinfo, or its spec page) and install a "
                "wheel built for what it has (TensorFlow 1.5 or a community build without AVX, "
                "an AVX-only build for a CPU without AVX2), or build from source")
    if not mac:
        return ""
    return ("on a Mac with Apple silicon (M1, M2...) the x86_64 TensorFlow runs under Rosetta 2, "
            "which has no AVX: use a native arm64 Python (python -c \"import platform; "
            "print(platform.machine())\" must say arm64; not a terminal set to Open using "
            "Rosetta) and pip install tensorflow (2.13+ publish macOS arm64 wheels) or Apple's "
            "tensorflow-macos for 2.5–2.12; an Intel Mac without AVX (made before 2011) needs "
            "TF 1.5 or a source build")


# a TensorFlow wheel file the log names (pip's download line, a URL, a path): a community
# build (fo40225's Windows wheels, lakshayg's) or an old official one
_WHEEL_FILE = re.compile(r"(?P<w>tensorflow(?:[-_](?:gpu|cpu))?-\d+\.\d+\.\d+[\w.]*?-[\w.-]+?"
                         r"\.whl)\b")


def wheel_file(text: str) -> str | None:
    """The TensorFlow wheel file a log names (``tensorflow-0.12.1-cp27-none-linux_x86_64.whl``)."""
    if len(text) > 2 * _WINDOW:  # install lines are at a long log's start
        text = text[:_WINDOW] + "\n" + text[-_WINDOW:]
    if ".whl" not in text:
        return None
    m = _WHEEL_FILE.search(text)
    return m["w"] if m else None


def _avx2(details: dict[str, list[str]], v: LogVersions) -> str:
    """A wheel built for AVX2 (or FMA, AVX-512) the log names: that file is the build to replace,
    so 'the official wheel' is no answer when it is the one installed."""
    wheel, isa = (details.get("wheel") or [""])[0], (details.get("isa") or ["AVX2"])[0]
    if not wheel:
        return ""
    return (f"the wheel installed, {wheel}, was compiled for {isa}, which this CPU lacks: install "
            f"a wheel built without {isa} (for this CPU's instruction set), or build TensorFlow "
            "from source on this machine (bazel build --config=opt uses the CPU's own flags)")


def _op(details: dict[str, list[str]], v: LogVersions) -> str:
    """An add-on's op: the add-on to install and import; a newer core op: a newer binary."""
    from tfperf.doctor.explain_readings import op_kind, tpu_node_worker

    kind, package = op_kind(details)
    mm = _mm(v.tensorflow) if v.tensorflow else "<TensorFlow major.minor>"
    if kind == "addon" and details.get("serving"):  # TF Serving cannot import a Python package
        return (f"TF Serving's model server holds only the {package} ops it was built with (2.0.0 "
                "added some tensorflow-text tokenizers): serve with a TF Serving build that links "
                f"{package}'s ops (TF Serving's custom-op build, or an image that includes them), "
                "or keep that preprocessing outside the served graph")
    if kind == "addon" and tpu_node_worker(details):
        return (f"a Cloud TPU node runs the input pipeline on its TPU host, which cannot load "
                f"{package}'s ops: use a TPU VM (your Python runs on the TPU host, so pip install "
                f"{package} there works), or do that step with core TensorFlow ops (e.g. "
                "tf.audio.decode_wav, tf.io.decode_image) or before training (preprocess to "
                "TFRecords)")
    if kind == "addon":
        module = package.replace("-", "_")
        pin = f"=={mm}.*" if package == "tensorflow-text" else ""
        return (f"pip install '{package}{pin}' (the release built for this TensorFlow) and import "
                f"{module} before loading the model")
    if kind in ("core", "serving"):
        server = "TF Serving" if details.get("serving") else "TensorFlow"
        return (f"a {server} at least as new as the TensorFlow that exported the model (or export "
                f"it again with the TensorFlow the {server} binary was built from)")
    return ""


def _checkpoint(details: dict[str, list[str]], v: LogVersions) -> str:
    """Keras's 'Layer count mismatch' (Keras 2.x and 3): a Keras 2 .h5 read by Keras 3."""
    if not any(details.get(f) for f in ("model_layers2", "saved_layers2", "model_layers3")):
        return ""
    if (v.keras or "").startswith("2"):
        return ""  # Keras 2 read it: the file belongs to another model (the row's fix)
    keras3 = (v.keras or "").startswith("3") or bool(
        v.tensorflow and V.compare(v.tensorflow, "2.16") >= 0)
    lead = "" if keras3 else "if this is TensorFlow 2.16+ (Keras 3) and the .h5 was saved by " \
                             "Keras 2: "
    return (f"{lead}pip install 'tf-keras==<TF major.minor>.*' and set TF_USE_LEGACY_KERAS=1 to "
            "read the Keras 2 file as it was written, or load it with code updated for Keras 3 "
            "(build the model, call it on one batch, then load_weights; load_model with "
            "custom_objects and compile=False); otherwise the file belongs to another model")


def _ptx(details: dict[str, list[str]], v: LogVersions) -> str:
    """A TensorFlow without native kernels for this GPU: the build variable that adds them."""
    cc = (details.get("cc") or [""])[0].rstrip(".")
    if not cc:
        return ""
    return (f"kernels for compute capability {cc}: a source build (TensorFlow, or a project that "
            f"builds it such as torch_xla) sets TF_CUDA_COMPUTE_CAPABILITIES to include {cc} (e.g. "
            f"\"{cc}\" with the others you need) before building; a pip wheel: a release whose "
            f"wheels include {cc} (tfperf doctor --plan VERSION --gpu NAME)")


# Keras classes that TensorFlow.js learned after Keras began to save them: Functional, the
# class TF 2.3+ saves a functional model (or a nested one) as, loads from tfjs 2.4 (tfjs#3863)
_TFJS_KNOWS_FROM = {"functional": ("Functional", "2.4")}


_SUFFIXED = re.compile(r"(?P<base>[A-Z]\w*?[a-z])V[12]")


def _suffixed_builtin(name: str) -> str:
    """The public Keras layer ``name`` is a version-suffixed spelling of (BatchNormalizationV1 ->
    BatchNormalization), per TensorFlow's public API table, or ''."""
    from tfperf.doctor.knowledge.api_versions import api_table

    m = _SUFFIXED.fullmatch(name)
    if not m or api_table().versions(f"tf.keras.layers.{name}"):
        return ""  # (a public name of its own is no spelling of another)
    return m["base"] if api_table().versions(f"tf.keras.layers.{m['base']}") else ""


def _unknown_object(details: dict[str, list[str]], v: LogVersions) -> str:
    """A TensorFlow.js model: its custom layers must exist in JavaScript; a built-in Keras class
    that an older TensorFlow.js does not know needs a newer TensorFlow.js instead."""
    name = (details.get("name") or details.get("name2") or ["the layer"])[0]
    if renamed := _suffixed_builtin(name):
        return (f"{name} is the internal, version-suffixed class name of Keras's built-in "
                f"{renamed} (what some releases' tf.keras, 1.13 and the 2.0 previews, wrote into "
                f"saved models), not a custom layer: rename \"{name}\" to \"{renamed}\" in the "
                f"saved config (model.json's class_name for TensorFlow.js), or save the model "
                f"again with a TensorFlow release that records {renamed}")
    if not details.get("tfjs"):
        return ""
    if name.lower() in _TFJS_KNOWS_FROM:
        cls, since = _TFJS_KNOWS_FROM[name.lower()]
        return (f"TensorFlow.js: {cls} is a built-in Keras class (TF 2.3 and newer save "
                f"functional models as {cls}), not a custom layer; TensorFlow.js loads it from "
                f"tfjs {since} on: load the model with @tensorflow/tfjs {since} or newer (the "
                "script tag's or package.json's version), or save the Keras model with TF 2.2 "
                "or older before converting it")
    return (f"TensorFlow.js: implement {name} in JavaScript (a class extending tf.layers.Layer "
            "with a static className) and register it with tf.serialization.registerClass before "
            "tf.loadLayersModel; or convert the model as a graph model (tensorflowjs_converter "
            "--output_format=tfjs_graph_model), which needs no Keras layer classes")


def _conflict(details: dict[str, list[str]], v: LogVersions) -> str:
    """pip's resolver named the range a TensorFlow package needs: install that range."""
    req, spec = (details.get("dep_req") or [""])[0], (details.get("dep_spec") or [""])[0]
    if not req or not spec:
        return ""
    who = " ".join(x[0] for x in (details.get("dep_pkg"), details.get("dep_pkgver")) if x)
    return f"pip install '{req}{spec}' (what {who} declares), then pip check"


_ADVICE: dict[str, Callable[[dict[str, list[str]], LogVersions], str]] = {
    "numpy-abi-mismatch": _numpy, "numpy-too-new-for-tf": _numpy_old,
    "protobuf-incompatible": _protobuf, "cuda-library-missing": _cuda,
    "tf-addon-version-mismatch": _addon, "no-tensorflow-wheel": _wheel,
    "glibc-too-old": _glibc, "keras-tf-version-mismatch": _keras, "tf1-api-on-tf2": _tf1,
    "xla-driver-older-than-ptxas": _driver_for_ptxas, "cudnn-version-mismatch": _cudnn,
    "cpu-missing-instructions": _cpu, "cpu-missing-avx2": _avx2, "op-not-registered": _op,
    "checkpoint-mismatch": _checkpoint, "tf-installs-mixed": _mixed,
    "ptx-jit-compile": _ptx, "keras-unknown-object": _unknown_object,
    "tf-dependency-conflict": _conflict, "tf-keras-missing": _tf_keras,
    "protobuf-descriptor-clash": _protobuf_reinstall,
}


def has_advice(label: str) -> bool:
    return label in _ADVICE


def install_advice(label: str, details: dict[str, list[str]], v: LogVersions) -> str:
    """One line naming what to install for this cause, from the versions the log shows ('' if
    the log says too little)."""
    fn = _ADVICE.get(label)
    if fn is None:
        return ""
    try:
        return fn(details, v)
    except ValueError:  # a version string the tables cannot parse: no advice beats a wrong one
        return ""
