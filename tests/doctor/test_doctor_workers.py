"""`tfperf doctor --workers`: two real worker processes on localhost join a
MultiWorkerMirroredStrategy, compare fingerprints, all-reduce exactly; a worker that never
joins ends in the timeout with a verdict naming it; mismatches from injected results."""

from __future__ import annotations

import json
import threading

import pytest

from tfperf.core.findings import Status
from tfperf.doctor.collective_checks import worker_findings
from tfperf.doctor.probes.workers import WorkersSpecError, parse_workers, probe_workers
from tfperf.examples.multi_worker_job import free_port

pytest.importorskip("tensorflow")


def by_code(findings):
    return {f.code: f for f in findings}


def test_two_workers_join_agree_and_reduce_exactly():
    workers = [f"localhost:{free_port()}", f"localhost:{free_port()}"]
    results = {}

    def run(i):
        results[i] = probe_workers(workers, i, timeout=60, import_timeout=180, max_bytes=512)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        assert results[i]["status"] == "ok", results[i]
        found = by_code(worker_findings(results[i]))
        assert found["workers.join"].status is Status.PASS
        assert f"this is worker {i}" in found["workers.join"].message
        assert found["workers.fingerprint"].status is Status.PASS
        assert found["workers.allreduce"].status is Status.PASS
        assert found["workers.allreduce"].data["value"] == [3.0, 6.0, 9.0, 12.0]
        assert [p["bytes"] for p in found["workers.bandwidth"].data["sweep"]] == [8, 64, 512]
        # every worker sees both workers' views of the ring (all-gathered)
        spread = found["workers.bandwidth_spread"]
        assert len(spread.data["busbw_gbps"]) == 2 and all(
            v > 0 for v in spread.data["busbw_gbps"])
        assert spread.data["bytes"] == 512
    # the same figures on both sides: each report compares the same views
    assert (results[0]["stages"]["compare"]["seconds"]
            == results[1]["stages"]["compare"]["seconds"])


def test_a_worker_that_never_joins_ends_in_the_timeout_naming_it():
    workers = [f"localhost:{free_port()}", f"localhost:{free_port()}"]
    raw = probe_workers(workers, 0, timeout=8, import_timeout=180, max_bytes=0)
    assert raw["status"] == "timed out after 8s in join"
    assert raw["silent_workers"] == [1]
    (join,) = worker_findings(raw)
    assert join.status is Status.FAIL
    assert f"worker 1 ({workers[1]}) never joined" in join.message


def test_a_mismatched_worker_is_named_by_field():
    raw = {"status": "ok", "workers": ["a:1", "b:2"], "index": 0,
           "stages": {"setup": {}, "join": "ok",
                      "fingerprint": {"fields": ["tf_version", "python"],
                                      "mine": {"tf_version": "2.21.0", "python": "3.11.9"},
                                      "my_hashes": [1, 2], "workers": [[1, 2], [7, 2]]},
                      "allreduce": {"expected": [3.0], "value": [4.0], "worker": 0}}}
    found = by_code(worker_findings(raw))
    fp = found["workers.fingerprint"]
    assert fp.status is Status.FAIL
    assert fp.message == "worker 1 (b:2) differs in tf_version (this worker's: 2.21.0)"
    assert found["workers.allreduce"].status is Status.FAIL
    assert "WRONG" in found["workers.allreduce"].message


def test_workers_spec_forms(monkeypatch, tmp_path):
    config = {"cluster": {"worker": ["h0:1", "h1:2", "h2:3"]},
              "task": {"type": "worker", "index": 2}}
    assert parse_workers(json.dumps(config)) == (["h0:1", "h1:2", "h2:3"], 2)
    path = tmp_path / "tf_config.json"
    path.write_text(json.dumps(config))
    assert parse_workers(str(path)) == (["h0:1", "h1:2", "h2:3"], 2)
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    assert parse_workers("env") == (["h0:1", "h1:2", "h2:3"], 2)
    assert parse_workers("a:1,b:2", 1) == (["a:1", "b:2"], 1)
    for bad, index in (("a:1", None), ("a:1,b:2", 2), ("{not json", None), ("ab,cd", None)):
        with pytest.raises(WorkersSpecError):
            parse_workers(bad, index)


def test_bad_workers_spec_is_a_usage_error(capsys):
    from tfperf.cli import main

    assert main(["doctor", "--workers", "onlyone:1"]) == 2
    assert "at least two workers" in capsys.readouterr().err


def _compare(seconds_at_largest):
    return {"status": "ok", "workers": ["h0:1", "h1:2", "h2:3", "h3:4"], "index": 0,
            "stages": {"setup": {}, "join": "ok",
                       "compare": {"bytes": [8, 1048576],
                                   "seconds": [[1e-5, s] for s in seconds_at_largest]}}}


def test_a_worker_far_below_the_others_is_named():
    # 1 MiB in 1 ms is 1.05 GB/s algbw, busbw ×1.5 over 4 workers; worker 2 takes 4 ms
    found = by_code(worker_findings(_compare([1e-3, 1.1e-3, 4e-3, 0.9e-3])))
    spread = found["workers.bandwidth_spread"]
    assert spread.status is Status.WARN
    assert spread.data["slowest"] == 2 and spread.data["share"] == pytest.approx(0.25)
    assert spread.message.startswith("worker 2 (h2:3) measured the ring at 0.393 GB/s busbw")
    assert "25 % of the others" in spread.message.replace("25%", "25 %")
    assert spread.hint


def test_workers_alike_pass_and_name_each_view():
    found = by_code(worker_findings(_compare([1e-3, 1.2e-3, 1.1e-3, 0.95e-3])))
    spread = found["workers.bandwidth_spread"]
    assert spread.status is Status.PASS
    assert "worker 3 (h3:4) 1.66" in spread.message
