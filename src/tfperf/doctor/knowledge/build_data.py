"""Rebuild the packaged tables in ``data/`` from the raw compilation in ``shared/knowledge``.

Run it when the raw tables change::

    python -m tfperf.doctor.knowledge.build_data ../shared/knowledge

It only reshapes and cleans; it adds no facts. Every row keeps its ``source``. What it cleans:

* build configurations: ``tensorflow_gpu-1.15.0`` → package ``tensorflow_gpu`` + version
  ``1.15.0``; Python ``"2.7, 3.3-3.6"`` → ``"2.7 3.3-3.6"`` (space-separated inclusive ranges);
  one file per kind (GPU, CPU) with an ``os`` column.
* wheel build info: the Windows wheel's ``cuda_version`` ``64_112`` is how the build writes
  CUDA 11.2 (``64_8`` is cuDNN 8); both are turned into plain versions, the raw value noted in
  the source.
* CUDA → driver: ``"CUDA 11.2.2 Update 2"`` → ``11.2.2``; ``"CUDA 12.5 Update 1"`` → ``12.5.1``;
  branch-only rows (``R615 (615.xx)``) become ``kind=branch`` with the branch number as the
  minimum, so a caller can tell an exact minimum from a branch; minor-version-compatibility
  floors become ``kind=minor_compat``; Windows ``N/A`` becomes empty; the 11.0.1 RC row is
  dropped (a release candidate is no release anyone installs TensorFlow against).

Rows the raw compilation lacks but a reading needs (the RTX 30 models a poster names, stop 39)
live in ``additions/<table>.csv``, each with its own source: they are appended after the raw rows
(a name the raw table already has keeps the raw row), so a rebuild keeps them.

The error-pattern table (``data/error_patterns.csv``) is curated by hand (ids, severities and
more patterns than the raw table): this script leaves it alone. After editing it, refresh the
needles derived from its patterns (``data/error_needles.csv``; the tests check it is fresh)::

    python -m tfperf.doctor.knowledge.build_data --needles
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
OUT = DATA  # main() may point this elsewhere (the tests rebuild into a temporary folder)


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _write(path: Path, fields: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path.name}: {len(rows)} rows")


def split_package(tf_version: str) -> tuple[str, str]:
    pkg, _, ver = tf_version.rpartition("-")
    return pkg or "tensorflow", ver


def clean_python(text: str) -> str:
    parts = [p.strip() for p in text.split(",") if p.strip()]
    for p in parts:
        if not re.fullmatch(r"\d+\.\d+(-\d+\.\d+)?", p):
            raise ValueError(f"unexpected python column {text!r}")
    return " ".join(parts)


def build_configs(src: Path) -> None:
    gpu_fields = ["os", "tf_version", "package", "python", "cuda", "cudnn", "compiler",
                  "build_tools", "source"]
    rows = []
    for os_name, fname in (("linux", "tf_gpu_build_configs.csv"),
                           ("windows", "tf_gpu_build_configs_windows.csv"),
                           ("macos", "tf_gpu_build_configs_macos.csv")):
        for r in _read(src / fname):
            pkg, ver = split_package(r["tf_version"])
            rows.append({"os": os_name, "tf_version": ver, "package": pkg,
                         "python": clean_python(r["python"]), "cuda": r["cuda"].strip(),
                         "cudnn": r["cudnn"].strip(), "compiler": r["compiler"],
                         "build_tools": r["build_tools"], "source": r["source"]})
    _write(OUT / "tf_gpu_build_configs.csv", gpu_fields, rows)

    cpu_fields = ["os", "tf_version", "package", "python", "compiler", "build_tools", "source"]
    rows = []
    for os_name in ("linux", "windows", "macos"):
        for r in _read(src / f"tf_cpu_build_configs_{os_name}.csv"):
            pkg, ver = split_package(r["tf_version"])
            rows.append({"os": os_name, "tf_version": ver, "package": pkg,
                         "python": clean_python(r["python"]), "compiler": r["compiler"],
                         "build_tools": r["build_tools"], "source": r["source"]})
    _write(OUT / "tf_cpu_build_configs.csv", cpu_fields, rows)


def _windows_number(raw: str, name: str) -> tuple[str, str]:
    """``64_112`` → ``11.2``, ``64_8`` → ``8``; returns (clean, note)."""
    m = re.fullmatch(r"64_(\d+)", raw)
    if not m:
        return raw, ""
    digits = m.group(1)
    clean = digits if len(digits) == 1 else f"{digits[:-1]}.{digits[-1]}"
    return clean, f"{name} written '{raw}' by the Windows build = {clean}"


def wheel_build_info(src: Path) -> None:
    fields = ["os", "tf_version", "package", "cuda", "cudnn", "archs", "is_cuda_build",
              "is_tensorrt_build", "cpu_compiler", "other_keys", "source"]
    rows = []
    for r in _read(src / "tf_wheel_build_info.csv"):
        m = re.fullmatch(r"(\w+) \S+ \(([\w-]+)\)", r["wheel"].strip())
        if not m:
            raise ValueError(f"unexpected wheel column {r['wheel']!r}")
        os_name, pkg = m.group(1), m.group(2)
        cuda, note1 = _windows_number(r["cuda_version"].strip(), "cuda_version")
        cudnn, note2 = _windows_number(r["cudnn_version"].strip(), "cudnn_version")
        notes = "; ".join(n for n in (note1, note2) if n)
        rows.append({"os": os_name, "tf_version": r["tf_version"], "package": pkg,
                     "cuda": cuda, "cudnn": cudnn, "archs": r["cuda_compute_capabilities"],
                     "is_cuda_build": r["is_cuda_build"],
                     "is_tensorrt_build": r["is_tensorrt_build"],
                     "cpu_compiler": r["cpu_compiler"], "other_keys": r["other_keys"],
                     "source": r["source"] + (f" ({notes})" if notes else "")})
    _write(OUT / "tf_wheel_build_info.csv", fields, rows)


def _cuda_label(label: str) -> tuple[str, str] | None:
    """The raw ``cuda_version`` cell → (version, kind); None for rows to drop."""
    s = label.strip()
    if " RC" in s:
        return None
    m = re.fullmatch(r"(\d+)\.x \(minor-version compatibility minimum\)", s)
    if m:
        return m.group(1), "minor_compat"
    m = re.fullmatch(r"CUDA (\d+\.\d+) \(branch\)", s)
    if m:
        return m.group(1), "branch"
    inner = re.search(r"\((\d+\.\d+\.\d+)", s)  # "CUDA 9.2 (9.2.148 Update 1)"
    if inner:
        return inner.group(1), "toolkit"
    m = re.fullmatch(r"CUDA (\d+\.\d+(?:\.\d+)?)\s*(GA|Update (\d+))?", s)
    if m:
        ver = m.group(1)
        if ver.count(".") == 1:
            ver += f".{m.group(3) or 0}"  # "12.5 Update 1" is 12.5.1; "12.5 GA" is 12.5.0
        return ver, "toolkit"
    m = re.fullmatch(r"CUDA (\d+\.\d+\.\d+)(?: \w+)*", s)
    if m:
        return m.group(1), "toolkit"
    raise ValueError(f"unexpected CUDA label {label!r}")


def _driver_cell(raw: str) -> str:
    s = raw.strip()
    if s.upper() == "N/A" or not s:
        return ""
    m = re.match(r"R(\d+)", s)  # "R615 (615.xx)", "R610": branch only
    if m:
        return m.group(1)
    m = re.match(r"\d+(?:\.\d+)*", s)
    if not m:
        raise ValueError(f"unexpected driver cell {raw!r}")
    return m.group(0)


def cuda_driver_min(src: Path) -> None:
    fields = ["cuda", "kind", "label", "linux_min", "windows_min", "source"]
    rows = []
    for r in _read(src / "cuda_driver_min.csv"):
        parsed = _cuda_label(r["cuda_version"])
        if parsed is None:
            continue
        ver, kind = parsed
        rows.append({"cuda": ver, "kind": kind, "label": r["cuda_version"].strip(),
                     "linux_min": _driver_cell(r["linux_min_driver"]),
                     "windows_min": _driver_cell(r["windows_min_driver"]),
                     "source": r["source"]})
    _write(OUT / "cuda_driver_min.csv", fields, rows)


ADDITIONS = Path(__file__).parent / "additions"


def copy_as_is(src: Path, name: str) -> None:
    rows = _read(src / name)
    fields = list(rows[0].keys())
    added = ADDITIONS / name
    if added.is_file():
        key = fields[0]
        known = {r[key] for r in rows}
        for row in _read(added):
            if list(row.keys()) != fields:
                raise ValueError(f"{added}: columns {list(row.keys())} differ from {fields}")
            if row[key] not in known:
                rows.append(row)
                known.add(row[key])
    _write(OUT / name, fields, rows)


def main(argv: list[str]) -> int:
    global OUT
    if argv == ["--needles"]:
        from tfperf.doctor.knowledge.errors import derived_needle_rows

        _write(DATA / "error_needles.csv", ["id", "pattern_crc", "needles"],
               derived_needle_rows())
        return 0
    if len(argv) not in (1, 2) or not Path(argv[0]).is_dir():
        print("usage: python -m tfperf.doctor.knowledge.build_data SHARED_KNOWLEDGE_DIR "
              "[OUT_DIR]\n       python -m tfperf.doctor.knowledge.build_data --needles",
              file=sys.stderr)
        return 2
    src = Path(argv[0])
    OUT = Path(argv[1]) if len(argv) == 2 else DATA
    build_configs(src)
    wheel_build_info(src)
    cuda_driver_min(src)
    copy_as_is(src, "gpu_compute_capability.csv")
    copy_as_is(src, "tf_and_cuda_pins.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
