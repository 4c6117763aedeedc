"""Build ``tf_api_by_version.csv.gz``: TensorFlow's public API by release, read from the wheels.

Rerun (network only here; nothing is installed, each wheel is read as a zip and deleted)::

    python benchmarks/tf_api_table.py --wheels /work/wt/_tfwheels \
        --site /work/main/.venv/lib/python3.11/site-packages

For each release it downloads the wheel with ``pip download --no-deps --only-binary=:all:``
(``tensorflow-cpu`` where it exists, else ``tensorflow``), reads the generated API modules
(``tensorflow/__init__.py`` and ``tensorflow/_api/v1|v2/**/__init__.py``: with ``ast``, every
``from ... import X [as Y]``) and, for tf.keras, the Keras that release ships (TF <= 2.5: its own
``_api/v2/keras``; TF 2.6-2.15: the ``keras`` 2.x wheel of the same minor, ``keras/api/_v2/keras``;
TF >= 2.16: the Keras 3 wheel its METADATA asks for at least, ``keras/api``). A per-release cache
(``<wheels>/api_<version>.json``: symbols, wheel names and sha256) makes reruns cheap. TF 2.21 is
read from an installed ``site-packages`` (``--site``) instead of a wheel. Before 1.13 the API
modules were generated into the wheel differently (1.10 and 1.11 hold only the top level in
``tensorflow/__init__.py``, 553 and 560 names, so they are left out rather than read as half an
API): releases before 1.12 are "unknown" to the table.

Output (package data): ``tf_api_by_version.csv.gz`` (``symbol,versions,keras``: ``versions`` are
inclusive ranges of the table's releases, ``2.0-2.15 2.17``) and ``tf_api_sources.csv`` (one row
per release: the wheel files read and their sha256, which Keras the release ships).
"""

from __future__ import annotations

import argparse
import ast
import csv
import gzip
import hashlib
import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

RELEASES = ("1.12.0", "1.13.1", "1.14.0", "1.15.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0",
            "2.4.0", "2.5.0", "2.6.0", "2.7.0", "2.8.0", "2.9.0", "2.10.0", "2.11.0", "2.12.0",
            "2.13.0", "2.14.0", "2.15.0", "2.16.1", "2.17.0", "2.18.0", "2.19.0", "2.20.0")
OUT = Path(__file__).resolve().parents[1] / "src/tfperf/doctor/knowledge/data"

_FROM = re.compile(r"^from ([\w.]+) import (\w+)(?: as (\w+))?", re.M)
# names the top module binds lazily (tf.contrib in 1.x, tf.keras/tf.losses ... in 2.16+)
_LAZY = re.compile(r"^(\w+) = _?LazyLoader\(|^setattr\(_current_module, [\"'](\w+)[\"']", re.M)
_PLATFORMS = ("manylinux2010_x86_64", "manylinux2014_x86_64", "manylinux_2_17_x86_64",
              "manylinux1_x86_64")


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def vkey(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def _names(text: str) -> set[str]:
    """Public names one generated API module binds (``from M import X [as Y]``, any layout: Keras
    3 splits a long import over lines, ``from M import (\n    X as X,\n)``, which a line regex
    misses: review 39b item 1)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:  # not Python 3 source: the line reading, as before
        return {m.group(3) or m.group(2) for m in _FROM.finditer(text)
                if not (m.group(3) or m.group(2)).startswith("_") and m.group(1) != "__future__"}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            out |= {a.asname or a.name for a in node.names
                    if a.name != "*" and not (a.asname or a.name).startswith("_")}
    return out


def _namespace(rel: str, api_dir: str) -> str | None:
    """``tensorflow/_api/v2/compat/v1/nn/__init__.py`` -> ``tf.compat.v1.nn``."""
    if rel == "tensorflow/__init__.py":
        return "tf"
    for root in (f"tensorflow/_api/{api_dir}/",):
        if rel.startswith(root) and rel.endswith("/__init__.py"):
            inner = rel[len(root):-len("/__init__.py")]
            return "tf." + inner.replace("/", ".") if inner else "tf"
    return None


def _files(zf: zipfile.ZipFile) -> dict[str, str]:
    """Zip member -> path inside site-packages (wheels of 1.x put it under ``*.data/purelib``)."""
    out = {}
    core = {}  # TF 1.15-2.1 ship the API in tensorflow_core/ (tensorflow/ is a forwarding shim)
    for name in zf.namelist():
        rel = re.sub(r"^[^/]+\.data/(?:purelib|platlib)/", "", name)
        if rel.startswith("tensorflow_core/"):
            core["tensorflow/" + rel[len("tensorflow_core/"):]] = name
        else:
            out[rel] = name
    return {**out, **core} if core else out


def tf_symbols(read: dict[str, str], api_dir: str, keras_inside: bool) -> set[str]:
    symbols: set[str] = set()
    for rel, text in read.items():
        ns = _namespace(rel, api_dir)
        if ns is None or (ns.startswith("tf.keras") and not keras_inside):
            continue
        symbols |= {f"{ns}.{n}" for n in _names(text)}
        if ns == "tf":
            symbols |= {f"tf.{a or b}" for a, b in _LAZY.findall(text) if (a or b)[0] != "_"}
        if ns != "tf":
            parent, _, last = ns.rpartition(".")
            symbols.add(f"{parent}.{last}")
    if "tf.keras.layers" in "".join(symbols) or not keras_inside:
        symbols.add("tf.keras")
    return symbols


def keras_symbols(read: dict[str, str], root: str) -> set[str]:
    """tf.keras.* from a keras wheel's generated API (``root``: ``keras/api/_v2/keras`` or
    ``keras/api``)."""
    symbols: set[str] = set()
    for rel, text in read.items():
        if not (rel.startswith(root + "/") or rel == root + "/__init__.py"):
            continue
        if not rel.endswith("/__init__.py"):
            continue
        inner = rel[len(root):-len("/__init__.py")].strip("/")
        if inner.startswith(("_tf_keras", "_v1", "_v2")) or "/_v1/" in inner:
            continue
        ns = "tf.keras" + ("." + inner.replace("/", ".") if inner else "")
        symbols |= {f"{ns}.{n}" for n in _names(text)}
        if inner:
            symbols.add(ns)
    return symbols


def _pip_download(spec: str, dest: Path, version_glob: str = "") -> Path | None:
    for python in ("3.7", "3.6", "3.10"):
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
               "--python-version", python, "-d", str(dest), spec]
        for plat in _PLATFORMS:
            cmd += ["--platform", plat]
        if subprocess.run(cmd, capture_output=True).returncode == 0:
            name, version = re.split(r"[=~]=", spec)
            hit = sorted(dest.glob(f"{name.replace('-', '_')}-{version_glob or version}-*.whl"))
            return hit[0] if hit else None
    return None


def _wheel(dest: Path, release: str) -> Path | None:
    for pkg in ("tensorflow_cpu", "tensorflow"):
        have = sorted(dest.glob(f"{pkg}-{release}-*.whl"))
        if have:
            return have[0]
    for pkg in ("tensorflow-cpu", "tensorflow"):
        got = _pip_download(f"{pkg}=={release}", dest)
        if got:
            return got
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_zip(path: Path, want: re.Pattern[str]) -> tuple[dict[str, str], str]:
    read: dict[str, str] = {}
    meta = ""
    with zipfile.ZipFile(path) as zf:
        for rel, member in _files(zf).items():
            if want.match(rel):
                read[rel] = zf.read(member).decode("utf-8", "replace")
            elif rel.endswith(".dist-info/METADATA"):
                meta = zf.read(member).decode("utf-8", "replace")
    return read, meta


_TF_FILES = re.compile(r"tensorflow/(?:__init__\.py|_api/v[12]/.*__init__\.py|"
                       r"python/keras/api/_v[12]/keras/.*__init__\.py)$")
_KERAS_FILES = re.compile(r"keras/(?:api/|_tf_keras/).*__init__\.py$")
# where tf.keras lives in a keras wheel, first found wins: Keras 3's tf.keras view, Keras 2's
_KERAS_ROOTS = ("keras/api/_tf_keras/keras", "keras/_tf_keras/keras", "keras/api/_v2/keras",
                "keras/api")


def _keras_for(release: str, meta: str, dest: Path) -> tuple[set[str], str, list[str]]:
    """tf.keras symbols of a TF >= 2.6 release, which Keras, and the wheel read."""
    if vkey(release) >= (2, 16):
        m = re.search(r"Requires-Dist: keras\s*\(?>=\s*([\d.]+)", meta)
        spec = f"keras=={m.group(1)}" if m else "keras==3.0.0"
        if spec.count(".") == 1:
            spec += ".0"
    else:  # the newest patch of the same minor (keras 2.13.0 was never released: 2.13.1)
        spec = f"keras~={minor(release)}.0"
    path = _pip_download(spec, dest, f"{minor(release)}.*" if "~=" in spec else "")
    if path is None:
        return set(), f"{spec} (not found)", []
    read, _ = _read_zip(path, _KERAS_FILES)
    root = next(r for r in _KERAS_ROOTS if r == "keras/api" or f"{r}/__init__.py" in read)
    symbols = keras_symbols(read, root) | {"tf.keras"}
    info = [f"{path.name} sha256={_sha256(path)}"]
    path.unlink()
    return symbols, "keras " + path.name.split("-")[1], info


def read_release(release: str, dest: Path) -> dict[str, object] | None:
    cache = dest / f"api_{release}.json"
    if cache.exists():
        record: dict[str, object] = json.loads(cache.read_text())
        if record.get("parser") != "ast" and not str(record["keras"]).startswith("tf"):
            # a cache read with the line regex: its tf.keras part again, from the Keras wheel
            # (TF's own generated modules hold one-line imports only, so that part stands)
            k_symbols, keras, k_src = _keras_for(release, f"Requires-Dist: {record['keras']}"
                                                 .replace("keras ", "keras>="), dest)
            if not k_symbols:
                raise SystemExit(f"{release}: {keras}")
            record["symbols"] = sorted(set(record["symbols"]) | k_symbols)  # type: ignore[call-overload]
            record["parser"] = "ast"
            cache.write_text(json.dumps(record))
            print(f"{release}: {len(record['symbols'])} symbols after the ast reading",  # type: ignore[arg-type]
                  file=sys.stderr)
        return record
    path = _wheel(dest, release)
    if path is not None and f"-{release}-" not in path.name:  # never another release's file
        raise SystemExit(f"{release}: got {path.name}")
    if path is None:
        print(f"{release}: no wheel found", file=sys.stderr)
        return None
    read, meta = _read_zip(path, _TF_FILES)
    api_dir = "v1" if release.startswith("1.") else "v2"
    keras_inside = vkey(release) < (2, 6)
    symbols = tf_symbols(read, api_dir, keras_inside)
    # TF 1.14-2.5 generate tf.keras apart, in tensorflow/python/keras/api/_v1|_v2/keras
    inner_keras = f"tensorflow/python/keras/api/_{api_dir}/keras"
    if keras_inside and f"{inner_keras}/__init__.py" in read:
        symbols |= keras_symbols(read, inner_keras) | {"tf.keras"}
    sources = [f"{path.name} sha256={_sha256(path)}"]
    keras = "tf (in the wheel)" if keras_inside else ""
    if not keras_inside:
        k_symbols, keras, k_src = _keras_for(release, meta, dest)
        symbols |= k_symbols
        sources += k_src
    path.unlink()
    record = {"release": release, "symbols": sorted(symbols), "sources": sources, "keras": keras,
              "parser": "ast"}
    cache.write_text(json.dumps(record))
    print(f"{release}: {len(symbols)} symbols, keras {keras}", file=sys.stderr)
    return record


def read_site(site: Path) -> dict[str, object]:
    """The installed release (2.21 here): the same files, from site-packages."""
    import importlib.metadata as md

    release = ""
    for dist in ("tensorflow", "tensorflow-cpu"):
        try:
            release = md.version(dist)
            break
        except md.PackageNotFoundError:
            continue
    read = {str(p.relative_to(site)).replace("\\", "/"): p.read_text("utf-8", "replace")
            for p in (site / "tensorflow").rglob("__init__.py")
            if _TF_FILES.match(str(p.relative_to(site)).replace("\\", "/"))}
    symbols = tf_symbols(read, "v2", keras_inside=False)
    kread = {str(p.relative_to(site)).replace("\\", "/"): p.read_text("utf-8", "replace")
             for p in (site / "keras").rglob("__init__.py")
             if _KERAS_FILES.search(str(p.relative_to(site)))}
    root = next(r for r in _KERAS_ROOTS if r == "keras/api" or f"{r}/__init__.py" in kread)
    symbols |= keras_symbols(kread, root) | {"tf.keras"}
    keras = f"keras {md.version('keras')}"
    return {"release": minor(release) + "." + release.split(".")[2].split("rc")[0],
            # no wheel, no sha256: the installed venv; its Keras is the one installed there, not
            # the minimum METADATA asks for (the rule of the 2.16-2.20 rows): review 39b item 8
            "symbols": sorted(symbols),
            "sources": [f"site-packages tensorflow {release} (installed venv; no wheel sha256)",
                        f"site-packages {keras} (the installed Keras; 2.16-2.20 rows: the "
                        "minimum keras in the wheel's METADATA)"],
            "keras": keras}


def ranges(present: list[int], names: list[str]) -> str:
    """Indices into ``names`` -> ``"2.0-2.15 2.17"`` (consecutive releases joined)."""
    out, start, prev = [], None, None
    for i in [*present, None]:  # type: ignore[list-item]
        if start is not None and (i is None or i != prev + 1):  # type: ignore[operator]
            out.append(names[start] if start == prev else f"{names[start]}-{names[prev]}")  # type: ignore[index]
            start = None
        if i is not None and start is None:
            start = i
        prev = i
    return " ".join(out)


def write(records: list[dict[str, object]], out: Path) -> None:
    names = [minor(str(r["release"])) for r in records]
    where: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        for s in r["symbols"]:  # type: ignore[attr-defined]
            if any(part.startswith("_") for part in s.split(".")):
                continue  # __internal__ and friends: not the public API
            where.setdefault(s, []).append(i)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["symbol", "versions"])
    for s in sorted(where):
        w.writerow([s, ranges(where[s], names)])
    with gzip.GzipFile(out / "tf_api_by_version.csv.gz", "wb", mtime=0) as gz:
        gz.write(buf.getvalue().encode())
    with (out / "tf_api_sources.csv").open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["release", "keras", "symbols", "source"])
        for r in records:
            w.writerow([r["release"], r["keras"], len(r["symbols"]),  # type: ignore[arg-type]
                        " ; ".join(r["sources"])])  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wheels", type=Path, required=True, help="download folder (outside git)")
    ap.add_argument("--site", type=Path, help="site-packages of an installed TensorFlow")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--releases", nargs="*", default=list(RELEASES))
    args = ap.parse_args(argv)
    args.wheels.mkdir(parents=True, exist_ok=True)
    records = [r for r in (read_release(v, args.wheels) for v in args.releases) if r]
    if args.site:
        records.append(read_site(args.site))
    write(records, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
