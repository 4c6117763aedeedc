"""core/files.write_cache_file: a cache file shared by processes that run at once (two tunes,
two benches, the test suite's two workers) is read whole or not at all; tune's results and
bench's measured peaks are written through it."""

from __future__ import annotations

import json
import threading

import pytest

from tfperf.core.files import write_cache_file

# Two texts of 1 MiB each (many write() calls' worth), told apart by every byte.
TEXTS = [json.dumps({"writer": w, "pad": str(w) * (1 << 20)}) for w in (1, 2)]


def test_readers_see_one_whole_text_while_two_writers_replace_it(tmp_path):
    path = tmp_path / "k.json"
    write_cache_file(path, TEXTS[0])
    stop = threading.Event()

    def writer(text: str) -> None:
        while not stop.is_set():
            write_cache_file(path, text)

    threads = [threading.Thread(target=writer, args=(t,)) for t in TEXTS]
    for t in threads:
        t.start()
    seen = set()
    try:
        for _ in range(300):
            text = path.read_text(encoding="utf-8")
            assert text in TEXTS, f"a part of a text: {len(text)} characters"
            seen.add(text)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert seen  # read while both wrote
    assert [p.name for p in tmp_path.iterdir()] == ["k.json"]  # no temporary file left


def test_the_text_is_written_as_given(tmp_path):
    path = tmp_path / "peaks.json"
    write_cache_file(path, '{"a": 1}')
    write_cache_file(path, '{"a": 2}')
    assert path.read_text(encoding="utf-8") == '{"a": 2}'


def test_a_failed_write_raises_and_leaves_no_temporary_file(tmp_path):
    with pytest.raises(OSError):
        write_cache_file(tmp_path / "no such folder" / "k.json", "{}")
    (tmp_path / "k.json").mkdir()  # the rename over a folder fails
    with pytest.raises(OSError):
        write_cache_file(tmp_path / "k.json", "{}")
    assert [p.name for p in tmp_path.iterdir()] == ["k.json"]


def test_tunes_cache_is_written_through_it(tmp_path, monkeypatch):
    from tfperf.tune import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    written = []
    monkeypatch.setattr(cache, "write_cache_file", lambda p, t: written.append((p, t)))

    class Result:
        patched_source = "def f(x):\n    return x\n"

        def to_dict(self) -> dict:
            return {"function": "f"}

    cache.save("k1", Result())  # type: ignore[arg-type]
    ((path, text),) = written
    assert path == tmp_path / "tfperf" / "tune" / "k1.json"
    assert json.loads(text)["patched_source"] == Result.patched_source


def test_bench_peaks_are_saved_beside_another_writers_temporary_file(tmp_path, monkeypatch):
    # Another process's temporary file under the name every process once used ("peaks.tmp",
    # here a folder so that writing into it fails for certain): the peaks are still saved.
    pytest.importorskip("tensorflow")
    from tfperf.bench import roofline

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    planted = roofline.Peaks("/CPU:0", bandwidth_gbs=10.0, matmul_gflops=100.0, measured_at=1.0)
    monkeypatch.setattr(roofline, "_measure_peaks", lambda tf: planted)
    folder = tmp_path / "tfperf" / "roofline"
    (folder / "peaks.tmp").mkdir(parents=True)
    assert roofline.machine_peaks(refresh=True) == planted
    (entry,) = json.loads((folder / "peaks.json").read_text(encoding="utf-8")).values()
    assert entry["matmul_gflops"] == 100.0
    assert sorted(p.name for p in folder.iterdir()) == ["peaks.json", "peaks.tmp"]
    assert roofline.machine_peaks().cached
