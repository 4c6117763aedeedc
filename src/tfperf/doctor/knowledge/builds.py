"""What each TensorFlow release was built with: tested configurations, wheel build info,
the libraries it loads and the pip pins of its ``[and-cuda]`` extra."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from tfperf.doctor import versions as V
from tfperf.doctor.knowledge.tables import read_table, table_os, truthy


@dataclass(frozen=True)
class BuildConfig:
    """One row of TensorFlow's "tested build configurations" table."""

    os: str
    tf_version: str
    package: str
    python_ranges: tuple[tuple[str, str], ...]  # inclusive (lo, hi) pairs, e.g. (("3.6", "3.9"),)
    cuda: str | None
    cudnn: str | None
    compiler: str
    build_tools: str
    source: str
    gpu: bool = True

    @property
    def python_min(self) -> str:
        return min((lo for lo, _ in self.python_ranges), key=V.parse)

    @property
    def python_max(self) -> str:
        return max((hi for _, hi in self.python_ranges), key=V.parse)

    @property
    def python_text(self) -> str:
        """``"3.6–3.9"`` or ``"2.7, 3.3–3.6"``."""
        return ", ".join(lo if lo == hi else f"{lo}–{hi}" for lo, hi in self.python_ranges)

    @property
    def python_list(self) -> list[str]:
        """Every minor version the row lists: ``["3.6", "3.7", "3.8", "3.9"]``."""
        out = []
        for lo, hi in self.python_ranges:
            (maj, a), (_, b) = V.major_minor(lo), V.major_minor(hi)
            out += [f"{maj}.{m}" for m in range(a, b + 1)]
        return out

    def supports_python(self, python: str) -> bool:
        mm = V.major_minor(python)
        return any(V.major_minor(lo) <= mm <= V.major_minor(hi) for lo, hi in self.python_ranges)

    @property
    def version_tuple(self) -> V.VersionTuple:
        return V.parse(self.tf_version)


def _ranges(cell: str) -> tuple[tuple[str, str], ...]:
    out = []
    for part in cell.split():
        lo, _, hi = part.partition("-")
        out.append((lo, hi or lo))
    return tuple(out)


@functools.cache
def build_configs(os: str = "linux", gpu: bool = True) -> list[BuildConfig]:
    """Every tested configuration for ``os``, newest TensorFlow first."""
    tos = table_os(os)
    name = "tf_gpu_build_configs.csv" if gpu else "tf_cpu_build_configs.csv"
    rows = [
        BuildConfig(os=tos, tf_version=r["tf_version"], package=r["package"],
                    python_ranges=_ranges(r["python"]), cuda=r.get("cuda") or None,
                    cudnn=r.get("cudnn") or None, compiler=r["compiler"],
                    build_tools=r["build_tools"], source=r["source"], gpu=gpu)
        for r in read_table(name) if r["os"] == tos
    ]
    return sorted(rows, key=lambda b: b.version_tuple, reverse=True)


def _match_minor(version: str, candidates: list, key=lambda c: c.tf_version):
    """Row for ``version``: exact, else the same major.minor (the newest patch not above it,
    else the oldest) — a patch release never changes the CUDA a minor was built with."""
    want = V.parse(version)
    same = [c for c in candidates if V.major_minor(key(c)) == V.major_minor(want)]
    if not same:
        return None
    exact = [c for c in same if V.padded(V.parse(key(c))) == V.padded(want)]
    if exact:
        return exact[-1]
    below = [c for c in same if V.parse(key(c)) <= want]
    pool = below or same
    return max(pool, key=lambda c: V.parse(key(c))) if below else min(
        pool, key=lambda c: V.parse(key(c)))


def build_config(tf_version: str, os: str = "linux", gpu: bool = True) -> BuildConfig | None:
    """The tested configuration of ``tf_version`` (``2.5.3`` falls back to the 2.5.0 row)."""
    try:
        return _match_minor(tf_version, build_configs(os, gpu))
    except ValueError:
        return None


def nearest_versions(tf_version: str, os: str = "linux", gpu: bool = True,
                     n: int = 3) -> list[str]:
    """Known versions closest to an unknown one, for the error message."""
    known = build_configs(os, gpu)
    try:
        want = V.padded(V.parse(tf_version), 3)
    except ValueError:
        return [b.tf_version for b in known[:n]]

    def distance(b: BuildConfig) -> tuple[int, ...]:
        have = V.padded(b.version_tuple, 3)
        return tuple(abs(x - y) for x, y in zip(have, want, strict=False))

    return [b.tf_version for b in sorted(known, key=distance)[:n]]


# ---------------------------------------------------------------------------------------------
# wheel build info: what tf.sysconfig.get_build_info() really says


@dataclass(frozen=True)
class WheelBuildInfo:
    os: str
    tf_version: str
    package: str
    cuda: str | None
    cudnn: str | None  # major only, as build_info gives it
    archs: tuple[str, ...]  # sm_XX (native code) and compute_XX (PTX for the driver's JIT)
    is_tensorrt_build: bool
    other_keys: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    source: str = ""
    derived: bool = False

    @property
    def native(self) -> tuple[str, ...]:
        return tuple(a for a in self.archs if a.startswith("sm_"))

    @property
    def ptx(self) -> tuple[str, ...]:
        return tuple(a for a in self.archs if a.startswith("compute_"))


def _other_keys(cell: str) -> dict[str, str]:
    out = {}
    for part in filter(None, cell.split(";")):
        k, _, v = part.partition("=")
        out[k.strip()] = v.strip()
    return out


@functools.cache
def wheel_build_infos(os: str = "linux") -> list[WheelBuildInfo]:
    """Measured rows for the GPU (``tensorflow``) wheels of ``os``, oldest first."""
    tos = table_os(os)
    rows = [
        WheelBuildInfo(os=tos, tf_version=r["tf_version"], package=r["package"],
                       cuda=r["cuda"] or None, cudnn=r["cudnn"] or None,
                       archs=tuple(r["archs"].split()),
                       is_tensorrt_build=truthy(r["is_tensorrt_build"]),
                       other_keys=_other_keys(r["other_keys"]), source=r["source"])
        for r in read_table("tf_wheel_build_info.csv")
        if r["os"] == tos and truthy(r["is_cuda_build"])
    ]
    return sorted(rows, key=lambda w: V.parse(w.tf_version))


def wheel_build_info(tf_version: str, os: str = "linux") -> WheelBuildInfo | None:
    """Build info of the ``tf_version`` GPU wheel, or a row derived from its neighbours.

    A derived row (``derived=True``) is given only when it is sound: the nearest known wheels
    below and above have the same architecture list, CUDA major and cuDNN major, and the
    tested configuration of ``tf_version`` agrees on both majors. (TF 2.11 sits between 2.10
    and 2.12, which ship identical lists.) Otherwise None: unknown stays unknown.
    """
    try:
        want = V.parse(tf_version)
    except ValueError:
        return None
    rows = wheel_build_infos(os)
    hit = _match_minor(tf_version, rows)
    if hit is not None:
        return hit
    below = [w for w in rows if V.parse(w.tf_version) < want]
    above = [w for w in rows if V.parse(w.tf_version) > want]
    cfg = build_config(tf_version, os)
    if not below or not above or cfg is None or not cfg.cuda or not cfg.cudnn:
        return None
    lo, hi = below[-1], above[0]
    if not (lo.archs == hi.archs and lo.cuda and hi.cuda and lo.cudnn == hi.cudnn
            and V.major(lo.cuda) == V.major(hi.cuda) == V.major(cfg.cuda)
            and lo.cudnn and V.major(lo.cudnn) == V.major(cfg.cudnn)):
        return None
    return WheelBuildInfo(
        os=lo.os, tf_version=cfg.tf_version, package=lo.package, cuda=cfg.cuda,
        cudnn=str(V.major(cfg.cudnn)), archs=lo.archs,
        is_tensorrt_build=lo.is_tensorrt_build and hi.is_tensorrt_build,
        source=(f"derived: no wheel row for {cfg.tf_version}; the {lo.tf_version} and "
                f"{hi.tf_version} wheels around it have identical architecture lists and "
                f"CUDA/cuDNN majors; CUDA {cfg.cuda} from the tested build configuration"),
        derived=True)


# ---------------------------------------------------------------------------------------------
# libraries the build loads


def _soname_rows(os: str) -> list[dict[str, str]]:
    return [r for r in read_table("cuda_sonames.csv") if r["os"] == os]


def needed_libraries(tf_version: str, os: str = "linux") -> list[str]:
    """File names of the CUDA/cuDNN libraries the ``tf_version`` GPU build loads.

    Derived from the CUDA and cuDNN versions of its tested configuration: each CUDA library
    keeps one SONAME across a CUDA major (``libcudart.so.11.0`` for all of 11.x, cuFFT 10 in
    CUDA 11 / cuFFT 11 in CUDA 12, ...), read from ``data/cuda_sonames.csv`` with the most
    specific CUDA prefix winning (11.0 had cuSOLVER 10); cuDNN is ``libcudnn.so.<major>``
    (``cudnn64_<major>.dll`` on Windows). Empty when the build is unknown or CPU-only.
    """
    return list(_needed_libraries(tf_version, os))


@functools.lru_cache(maxsize=1024)
def _needed_libraries(tf_version: str, os: str) -> tuple[str, ...]:
    # a function of the packaged tables only: read once per release (explain asks it for every
    # build, for each library name a log holds)
    tos = table_os(os)
    cfg = build_config(tf_version, os)
    if cfg is None or not cfg.cuda:
        return ()
    cuda = V.parse(cfg.cuda)
    best: dict[str, tuple[int, str]] = {}
    for r in _soname_rows(tos):
        prefix = V.parse(r["cuda"])
        if V.same_prefix(cuda, prefix) and len(prefix) > best.get(r["library"], (-1, ""))[0]:
            best[r["library"]] = (len(prefix), r["soname"])
    libs = [soname for _, soname in best.values()]
    if cfg.cudnn:
        cudnn_major = V.major(cfg.cudnn)
        libs.append(f"cudnn64_{cudnn_major}.dll" if tos == "windows"
                    else f"libcudnn.so.{cudnn_major}")
    return tuple(libs)


# ---------------------------------------------------------------------------------------------
# pip pins of tensorflow[and-cuda]


@dataclass(frozen=True)
class Pin:
    tf_version: str  # the row the pin comes from (2.15.1 reads the 2.15.0.post1 row)
    package: str
    specifier: str
    source: str


def pin_versions() -> list[str]:
    """TensorFlow versions with a row in the pins table (``2.15.0.post1`` included)."""
    return list(dict.fromkeys(r["tf_version"] for r in read_table("tf_and_cuda_pins.csv")))


def and_cuda_pins(tf_version: str) -> list[Pin]:
    """What ``pip install 'tensorflow[and-cuda]==tf_version'`` pins (empty before TF 2.14).

    Exact version rows first (``2.15.0`` and ``2.15.0.post1`` differ: the post release dropped
    the uninstallable TensorRT pins); otherwise the newest row of the same minor.
    """
    rows = read_table("tf_and_cuda_pins.csv")
    versions = pin_versions()
    if tf_version in versions:
        chosen = tf_version
    else:
        try:
            want = V.parse(tf_version)
        except ValueError:
            return []
        same = [v for v in versions if V.major_minor(v) == V.major_minor(want)]
        if not same:
            return []
        # ".post1" sorts after its base release; parse() alone would call them equal
        chosen = max(same, key=lambda v: (V.parse(v), v))
    return [Pin(r["tf_version"], r["package"], r["specifier"], r["source"])
            for r in rows if r["tf_version"] == chosen and not r["package"].startswith("(")]
