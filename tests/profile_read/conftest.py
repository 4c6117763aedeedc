"""Real captures made once per session by make_captures.py (a TF profiler session each), and
the corpus of broken or odd captures made from them."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def tf():
    return pytest.importorskip("tensorflow")


@pytest.fixture(scope="session")
def pb2(tf):
    """TensorFlow's own generated XSpace module: the oracle for the hand-written reader."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    return xplane_pb2


@pytest.fixture(scope="session")
def captures(tf, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("captures")
    done = subprocess.run([sys.executable, str(HERE / "make_captures.py"), str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def capture_file(captures: Path, name: str) -> Path:
    (found,) = (captures / name).glob("plugins/profile/*/*.xplane.pb")
    return found


def write_space(pb2, path: Path, build) -> Path:
    space = pb2.XSpace()
    build(space)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(space.SerializeToString())
    return path


def profile_path(root: Path, run: str = "2026_01_01_00_00_00", host: str = "vm") -> Path:
    return root / "plugins" / "profile" / run / f"{host}.xplane.pb"


@pytest.fixture(scope="session")
def corpus(captures, pb2, tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """Broken or odd captures, each with the cause `--read` must name first."""
    root = tmp_path_factory.mktemp("corpus")
    good = capture_file(captures, "graph")
    data = good.read_bytes()
    out: dict[str, tuple[Path, str]] = {}

    def put(name: str, cause: str, path: Path) -> None:
        out[name] = (path, cause)

    p = profile_path(root / "empty")
    p.parent.mkdir(parents=True)
    p.write_bytes(b"")
    put("empty file", "empty_file", root / "empty")

    p = profile_path(root / "truncated")
    p.parent.mkdir(parents=True)
    p.write_bytes(data[: len(data) * 2 // 3])
    put("truncated copy", "truncated", root / "truncated")

    p = profile_path(root / "not_xspace")
    p.parent.mkdir(parents=True)
    p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    put("not an XSpace", "not_xspace", root / "not_xspace")

    p = root / "old" / "plugins" / "profile" / "run" / "local.trace"
    p.parent.mkdir(parents=True)
    p.write_bytes(b"\x0a\x05local")
    put("TF <= 2.1 trace (version mismatch)", "old_format", root / "old")

    p = root / "gz" / "plugins" / "profile" / "run" / "vm.xplane.pb.gz"
    p.parent.mkdir(parents=True)
    p.write_bytes(gzip.compress(data))
    put("gzip-compressed", "compressed", root / "gz")

    flat = root / "flat"
    flat.mkdir()
    shutil.copy(good, flat / "vm.xplane.pb")
    put("capture not under plugins/profile/<run>", "layout", flat)

    put("TensorBoard logs, no profile", "no_capture", captures / "tensorboard")

    put("no planes", "no_planes", write_space(
        pb2, profile_path(root / "noplanes"), lambda s: s.hostnames.append("vm")).parents[3])

    put("nothing ran between start and stop", "no_events", captures / "idle")

    def cupti_error(s):
        s.errors.append("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: profiling is restricted")
        s.ParseFromString(s.SerializeToString() + data)
    put("CUPTI error recorded", "tracer_error",
        write_space(pb2, profile_path(root / "cupti"), cupti_error).parents[3])

    def gpu_without_device(s):
        s.ParseFromString(data)
        s.planes.add(id=9, name="/host:CUPTI")
    put("GPU run with no device plane", "no_device",
        write_space(pb2, profile_path(root / "nodevice"), gpu_without_device).parents[3])

    put("no steps (eager ops only)", "no_steps", captures / "eager")
    return out


@pytest.fixture(scope="session")
def capture_of(captures):
    """``capture_of("graph")`` → the .xplane.pb that make_captures.py wrote for it."""
    return lambda name: capture_file(captures, name)
