"""The doctor's knowledge base: packaged tables, their cleaning and the loaders' answers."""

from __future__ import annotations

import csv
import filecmp
from importlib import resources
from pathlib import Path

import pytest

from tfperf.doctor import knowledge as K
from tfperf.doctor import versions as V
from tfperf.doctor.knowledge import build_data
from tfperf.doctor.knowledge.tables import read_table

DATA_FILES = ["tf_gpu_build_configs.csv", "tf_cpu_build_configs.csv", "tf_wheel_build_info.csv",
              "cuda_driver_min.csv", "gpu_compute_capability.csv", "tf_and_cuda_pins.csv",
              "error_patterns.csv", "cuda_sonames.csv", "cuda_errors.csv"]
SHARED = Path(__file__).resolve().parents[3] / "shared" / "knowledge"


@pytest.mark.parametrize("name", DATA_FILES)
def test_every_row_keeps_a_source(name):
    rows = read_table(name)
    assert rows, name
    assert all(r["source"].strip() for r in rows), name


def test_versions_parse_and_compare():
    assert V.parse("tensorflow_gpu-1.15.0") == (1, 15, 0)
    assert V.parse("2.15.0.post1") == (2, 15, 0)
    assert V.parse("550.144.03") == (550, 144, 3)
    assert V.compare("470.57", "470.57.02") < 0  # missing parts count as zero
    assert V.at_least("550.144.03", "460.27.03")
    assert V.same_prefix("11.2.1", "11.2") and not V.same_prefix("11.8", "11.2")
    with pytest.raises(ValueError):
        V.parse("latest")


# --- cleaning (runs everywhere) and reproducibility (where the raw tables are present) ------


def test_cleaning_of_odd_raw_formats():
    assert build_data.clean_python("2.7, 3.3-3.6") == "2.7 3.3-3.6"
    assert build_data._windows_number("64_112", "cuda_version")[0] == "11.2"
    assert build_data._windows_number("64_8", "cudnn_version")[0] == "8"
    assert build_data._cuda_label("CUDA 12.5 Update 1") == ("12.5.1", "toolkit")
    assert build_data._cuda_label("CUDA 11.2.0 GA") == ("11.2.0", "toolkit")
    assert build_data._cuda_label("CUDA 9.2 (9.2.148 Update 1)") == ("9.2.148", "toolkit")
    assert build_data._cuda_label("CUDA 13.4 (branch)") == ("13.4", "branch")
    assert build_data._cuda_label("12.x (minor-version compatibility minimum)") == (
        "12", "minor_compat")
    assert build_data._cuda_label("CUDA 11.0.1 RC") is None
    assert build_data._driver_cell("R615 (615.xx)") == "615"
    assert build_data._driver_cell("N/A") == ""
    with pytest.raises(ValueError):
        build_data.clean_python("3.x")


@pytest.mark.skipif(not SHARED.is_dir(), reason="raw tables (../shared/knowledge) not here")
def test_packaged_tables_rebuild_identically(tmp_path):
    assert build_data.main([str(SHARED), str(tmp_path)]) == 0
    data = resources.files("tfperf.doctor.knowledge").joinpath("data")
    for f in tmp_path.iterdir():
        assert filecmp.cmp(f, Path(str(data.joinpath(f.name))), shallow=False), f.name


def test_additions_are_appended_and_a_raw_row_wins(tmp_path, monkeypatch):
    # Rows the raw compilation lacks come from additions/ (their own source); a name the raw
    # table has keeps the raw row, and a column mismatch is an error, not a silent drop.
    src, adds, out = tmp_path / "src", tmp_path / "adds", tmp_path / "out"
    for d in (src, adds, out):
        d.mkdir()
    (src / "t.csv").write_text("gpu,cc,source\nA,1.0,raw\n")
    (adds / "t.csv").write_text("gpu,cc,source\nA,9.9,added\nB,2.0,added\n")
    monkeypatch.setattr(build_data, "ADDITIONS", adds)
    monkeypatch.setattr(build_data, "OUT", out)
    build_data.copy_as_is(src, "t.csv")
    assert (out / "t.csv").read_text().splitlines() == [
        "gpu,cc,source", "A,1.0,raw", "B,2.0,added"]
    (adds / "t.csv").write_text("gpu,source\nC,added\n")
    with pytest.raises(ValueError, match="columns"):
        build_data.copy_as_is(src, "t.csv")


def test_every_packaged_gpu_row_comes_from_raw_or_additions():
    # The stop-39 rows were first written into data/ by hand, so a rebuild dropped them (CI).
    import csv

    data = resources.files("tfperf.doctor.knowledge").joinpath("data")
    packaged = {r["gpu"] for r in csv.DictReader(
        data.joinpath("gpu_compute_capability.csv").open(encoding="utf-8"))}
    added = {r["gpu"] for r in csv.DictReader(
        (build_data.ADDITIONS / "gpu_compute_capability.csv").open(encoding="utf-8"))}
    assert "GeForce RTX 3070" in added and added <= packaged


# --- build configurations ----------------------------------------------------------------------


def test_build_config_matches_by_minor_with_patch_fallback():
    b = K.build_config("2.5.3")
    assert (b.tf_version, b.cuda, b.cudnn) == ("2.5.0", "11.2", "8.1")
    assert (b.python_min, b.python_max, b.python_text) == ("3.6", "3.9", "3.6–3.9")
    assert K.build_config("2.16.0").tf_version == "2.16.1"
    assert K.build_config("1.13.2").tf_version == "1.13.1"
    assert K.build_config("2.99.0") is None
    assert K.build_config("2.12", os="windows") is None  # native Windows GPU ends at 2.10
    assert K.build_config("2.12", os="wsl").cuda == "11.8"


def test_python_ranges_with_python2():
    b = K.build_config("1.15.0")
    assert b.python_text == "2.7, 3.3–3.7"
    assert b.supports_python("2.7") and b.supports_python("3.5")
    assert not b.supports_python("3.0") and not b.supports_python("3.8")


def test_cpu_configs_are_separate():
    assert K.build_config("2.21", gpu=False).cuda is None
    assert K.build_config("2.16.1", os="macos", gpu=False).python_text == "3.9–3.12"


# --- wheel build info -------------------------------------------------------------------------


def test_wheel_build_info_measured_and_cleaned():
    w = K.wheel_build_info("2.15.0")
    assert (w.cuda, w.cudnn, w.derived) == ("12.2", "8", False)
    assert w.native == ("sm_50", "sm_60", "sm_70", "sm_75") and w.ptx == ("compute_80",)
    win = K.wheel_build_info("2.10.0", os="windows")
    assert (win.cuda, win.cudnn) == ("11.2", "8")  # raw "64_112" / "64_8"
    assert win.other_keys["cudnn_dll_name"] == "cudnn64_8.dll"
    assert K.wheel_build_info("2.16.2").tf_version == "2.16.1"


def test_wheel_build_info_derived_only_when_sound():
    w = K.wheel_build_info("2.11.0")
    assert w.derived and w.cuda == "11.2" and w.archs == K.wheel_build_info("2.10.0").archs
    assert "derived" in w.source
    assert K.wheel_build_info("2.5.0") is None  # nothing known below it: no guess
    assert K.wheel_build_info("2.11.0", os="windows") is None


# --- drivers -------------------------------------------------------------------------------------


def test_min_driver_exact_and_compat():
    r = K.min_driver("11.2")
    assert (r.toolkit_min, r.toolkit_release, r.compat_min) == ("460.27.03", "11.2.0", "450.80.02")
    assert r.verdict("550.144.03") == "full"
    assert r.verdict("455.0") == "compat" and r.verdict("440.33") == "insufficient"
    r = K.min_driver("12.5.1")
    assert (r.toolkit_min, r.compat_min) == ("555.42.06", "525.60.13")
    assert r.verdict("535.104.05") == "compat"
    assert K.min_driver("12.2", "windows").toolkit_min == "536.25"
    assert K.min_driver("12.2", "wsl").compat_min == "528.33"
    assert K.min_driver("13.1").compat_min == "580"
    assert K.min_driver("10.1").compat_min is None  # no minor-version compatibility before 11


def test_branch_only_and_unknown_cuda():
    r = K.min_driver("13.4")
    assert r.branch_only and r.toolkit_min == "615"
    assert r.verdict("615.10") == "full" and r.verdict("600.1") == "compat"
    assert K.min_driver("8.0").verdict("500") == "unknown"


@pytest.mark.parametrize(("driver", "cuda"), [
    ("550.144.03", "12.4"), ("470.57", "11.4"), ("535.104.05", "12.2"), ("580.65.06", "13.0"),
    ("616.20", "13.4"), ("455.32", "11.1"), ("300.1", None)])
def test_newest_cuda_for_driver(driver, cuda):
    assert K.newest_cuda_for_driver(driver) == cuda


# --- GPUs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "cc"), [
    ("NVIDIA H100 80GB HBM3", "9.0"), ("Tesla V100-SXM2-16GB", "7.0"), ("GeForce RTX 4090", "8.9"),
    ("NVIDIA GeForce RTX 4090", "8.9"), ("NVIDIA A100-SXM4-40GB", "8.0"), ("NVIDIA A10", "8.6"),
    ("NVIDIA L40S", "8.9"), ("NVIDIA RTX 6000 Ada Generation", "8.9"),
    ("Quadro RTX 6000", "7.5"), ("Tesla T4", "7.5"), ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"),
    ("NVIDIA B200", "10.0"), ("NVIDIA GeForce RTX 5090", "12.0"),
    ("NVIDIA TITAN X (Pascal)", "6.1"), ("GeForce GTX TITAN X", "5.2"),
    ("NVIDIA A10G", None), ("Radeon RX 7900", None), ("", None)])
def test_compute_capability_matching_is_safe(name, cc):
    info = K.compute_capability(name)
    assert (info.compute_capability if info else None) == cc


def _wheel(*archs: str) -> K.WheelBuildInfo:
    return K.WheelBuildInfo(os="linux", tf_version="0", package="t", cuda="12", cudnn="9",
                            archs=archs, is_tensorrt_build=False)


def test_arch_support_follows_cuda_binary_compatibility():
    w215, w216, w217, w221 = (K.wheel_build_info(v) for v in ("2.15", "2.16", "2.17", "2.21"))
    assert K.arch_match("9.0", w215) == ("ptx", "compute_80")  # H100 on TF <= 2.15
    assert K.arch_support("8.0", w215) == "native"  # TF's compute_80 embeds sm_80 too
    assert K.arch_support("9.0", w216) == "native"
    assert K.arch_match("8.9", w216) == ("native", "sm_80")
    assert K.arch_support("5.2", w217) == "unsupported"  # Maxwell dropped in 2.17
    assert K.arch_support("10.0", w221) == "ptx" and K.arch_support("12.0", w221) == "ptx"
    assert K.arch_support("7.5", _wheel("sm_70")) == "native"  # same major, higher minor
    assert K.arch_support("8.0", _wheel("sm_86")) == "unsupported"  # lower minor: no
    assert K.arch_support("9.0", _wheel("sm_90a")) == "native"
    assert K.arch_support("10.0", _wheel("sm_90a", "compute_90a")) == "unsupported"
    assert K.arch_support("10.3", _wheel("compute_100f")) == "native"
    assert K.arch_support("12.0", _wheel("compute_100f")) == "unsupported"
    with pytest.raises(ValueError):
        K.parse_cc("nine")


# --- libraries and pins ----------------------------------------------------------------------


def test_needed_libraries_follow_cuda_and_cudnn_majors():
    libs = K.needed_libraries("2.5.0")
    assert "libcudnn.so.8" in libs and "libcudart.so.11.0" in libs and "libcufft.so.10" in libs
    for v in ("2.18.0", "2.19.0", "2.20.0", "2.21.0"):
        assert "libcudnn.so.9" in K.needed_libraries(v)
    assert "libcudnn.so.8" in K.needed_libraries("2.17.0")
    assert "libcusolver.so.10" in K.needed_libraries("2.4.0")  # CUDA 11.0 shipped cuSOLVER 10
    assert "libcudart.so.10.1" in K.needed_libraries("2.3.0")
    assert "cudnn64_8.dll" in K.needed_libraries("2.10.0", "windows")
    assert K.needed_libraries("9.9.9") == []


def test_and_cuda_pins():
    assert K.and_cuda_pins("2.13.0") == []
    pins = {p.package: p.specifier for p in K.and_cuda_pins("2.14.0")}
    assert pins["nvidia-cudnn-cu11"] == "==8.7.0.84"
    assert "tensorrt" in {p.package for p in K.and_cuda_pins("2.15.0")}
    post = K.and_cuda_pins("2.15.1")
    assert post[0].tf_version == "2.15.0.post1" and "tensorrt" not in {p.package for p in post}
    assert {p.package: p.specifier for p in K.and_cuda_pins("2.21")}["nvidia-cudnn-cu12"] == \
        "<10.0,>=9.3.0.75"


def test_error_patterns_are_well_formed():
    pats = K.error_patterns()
    ids = [p.id for p in pats]
    assert len(ids) == len(set(ids))
    assert all(p.source for p in pats)
    assert {p.severity for p in pats} <= set(K.SEVERITY_ORDER)
    heads = K.label_rows()
    assert {p.label for p in pats} == set(heads)  # every label has a row that describes it
    for label, head in heads.items():
        assert head.cause and head.source, label
        if head.severity != "info":
            assert head.fix and head.see, label  # a problem says how to fix it and where next
    for p in pats:
        assert set(p.explained_by) <= set(heads), p.id
        assert not p.escalate or p.severity == "notice", p.id


def test_cuda_error_table():
    assert K.cuda_error(303).name == "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED"
    assert K.cuda_error("CUDA_ERROR_NO_DEVICE").code == 100
    assert K.cuda_error(12345) is None


def test_raw_linux_gpu_table_is_fully_packaged():
    with resources.files("tfperf.doctor.knowledge").joinpath(
            "data", "tf_gpu_build_configs.csv").open(encoding="utf-8") as fh:
        linux = [r for r in csv.DictReader(fh) if r["os"] == "linux"]
    assert len(linux) == 38 and linux[0]["tf_version"] == "2.21.0"
