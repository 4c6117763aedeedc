"""Verdicts of ``tfperf doctor --devices``: pure functions of the raw stage results.

The raw results (``Facts.devices``) come from :mod:`tfperf.doctor.collectives` run in the
devices child; the link facts (PCIe generation and width, active NVLinks) from NVML
(``Facts.gpus``). Bandwidths are reported as nccl-tests defines them for all-reduce:

* algorithm bandwidth ``algbw = bytes / time``;
* bus bandwidth ``busbw = algbw × 2(n−1)/n`` for n ranks: what each link must carry in a ring,
  so that it compares with the link's peak whatever n is.
"""

from __future__ import annotations

import statistics
from typing import Any

from tfperf.core.findings import Finding, Status

# Per direction, GB/s. PCIe: per lane after encoding (gen 3+ 128b/130b; gen 6 FLIT).
PCIE_GBPS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
# NVLink per link, per direction: 1 (P100) 20, 2 (V100) 25, 3 (A100) 25, 4 (H100) 25, 5 (B200) 50.
NVLINK_GBPS_PER_LINK = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 50.0}
BELOW_PEAK = 0.5  # best busbw under half the link's peak: the link is not doing its job
NOT_BEST = 0.8  # the default choice under 80 % of the best: worth switching
STRAGGLER = 1.5  # a device this much slower than the median of its peers
SLOW_WORKER_SHARE = 0.5  # a worker's view of the ring under half the others': named

FIX_HANG = ("a collective that never completes is usually a device or link that stopped "
            "answering, or two strategies in one process sharing collective keys: run "
            "`nvidia-smi` (a GPU in a bad state, an Xid error in `dmesg`), set NCCL_DEBUG=INFO "
            "to see where NCCL waits, and create one tf.distribute strategy per process")


def _f(code: str, status: Status, message: str, fix: str = "", **data: Any) -> Finding:
    return Finding(code=code, status=status, message=message, hint=fix, data=data)


def bus_factor(ranks: int) -> float:
    """nccl-tests' all-reduce bus-bandwidth factor 2(n−1)/n."""
    return 2.0 * (ranks - 1) / ranks if ranks > 0 else 0.0


def bandwidths(points: list[dict[str, Any]], ranks: int) -> list[dict[str, Any]]:
    """Each sweep point with ``algbw_gbps`` and ``busbw_gbps`` (GB/s, 1e9 bytes)."""
    out = []
    for p in points:
        seconds = p.get("seconds") or 0.0
        alg = p["bytes"] / seconds / 1e9 if seconds > 0 else None
        out.append({**p, "algbw_gbps": alg,
                    "busbw_gbps": alg * bus_factor(ranks) if alg is not None else None})
    return out


def link_peak(gpus: list[dict[str, Any]]) -> tuple[float | None, str]:
    """The slowest GPU's link peak (GB/s per direction) and what it is, from NVML facts."""
    peaks = []
    for gpu in gpus:
        links, version = gpu.get("nvlinks") or 0, gpu.get("nvlink_version")
        if links and version in NVLINK_GBPS_PER_LINK:
            peaks.append((links * NVLINK_GBPS_PER_LINK[version],
                          f"NVLink {version} ×{links}"))
        elif gpu.get("pcie_gen") in PCIE_GBPS_PER_LANE and gpu.get("pcie_width"):
            gen, width = gpu["pcie_gen"], gpu["pcie_width"]
            peaks.append((PCIE_GBPS_PER_LANE[gen] * width, f"PCIe {gen}.0 x{width}"))
        else:
            return None, "link of GPU {} not known".format(gpu.get("index", "?"))
    if not peaks:
        return None, "no link facts (NVML did not report the GPUs)"
    gbps, what = min(peaks)
    return gbps, what


def _stage(devices: dict[str, Any], name: str) -> Any:
    return devices.get("stages", {}).get(name)


def _error(result: Any) -> str | None:
    return result.get("error") if isinstance(result, dict) else None


def _strategy_finding(devices: dict[str, Any]) -> tuple[Finding, bool]:
    """Whether the child got far enough to judge the rest."""
    code = "devices.strategy"
    status = devices.get("status") or "not run"
    if devices.get("not_installed"):
        return _f(code, Status.SKIP, f"{devices['not_installed']}: collectives not checked",
                  outcome=status), False
    setup = _stage(devices, "setup")
    if "timed out" in status:
        stage = devices.get("hung_stage", "?")
        what = "TensorFlow's import" if stage == "import" else f"stage {stage}"
        return _f(code, Status.FAIL, f"{what} hung: {status} (the process was killed)",
                  FIX_HANG if stage != "import" else "rerun with a longer --timeout",
                  outcome=status, hung_stage=stage), setup is not None
    if setup is None or _error(setup):
        why = _error(setup) or status
        return _f(code, Status.FAIL, f"could not set up the devices: {why}",
                  "see `tfperf doctor` without --devices for why TensorFlow does not run",
                  outcome=status, stderr_tail=devices.get("stderr_tail")), False
    devs = setup.get("devices", [])
    if len(devs) < 2:
        return _f(code, Status.SKIP, f"one {setup.get('device_type')} device only: nothing to "
                  "reduce across", devices=devs), False
    replicas = _stage(devices, "replicas") or {}
    default = replicas.get("default_ops", "?") if isinstance(replicas, dict) else "?"
    kind = setup.get("device_type")
    note = " (logical devices of one CPU)" if kind == "CPU" else ""
    if status != "ok":
        return _f(code, Status.FAIL, f"MirroredStrategy over {len(devs)} {kind} devices"
                  f"{note}: the check process {status}", FIX_HANG, outcome=status,
                  stderr_tail=devices.get("stderr_tail")), True
    return _f(code, Status.PASS, f"MirroredStrategy over {len(devs)} {kind} devices{note}, "
              f"default cross_device_ops {default}", devices=devs, default_ops=default,
              seconds=devices.get("seconds")), True


def _replicas_finding(result: Any) -> Finding:
    code = "devices.replicas"
    if result is None or _error(result):
        return _f(code, Status.FAIL, f"replicas did not run: {_error(result) or 'no result'}",
                  FIX_HANG)
    wrong = [r for r in result["replicas"]
             if r["seen"] != r["expected"] or r["replica_id"] != r["replica"]]
    if wrong:
        names = "; ".join(f"replica {r['replica']} ran on {r['seen']}, not {r['expected']}"
                          for r in wrong)
        return _f(code, Status.FAIL, names, "a device TF lists but cannot place work on: "
                  "check CUDA_VISIBLE_DEVICES and the devices' health (nvidia-smi)",
                  replicas=result["replicas"])
    return _f(code, Status.PASS, f"each of {len(result['replicas'])} replicas ran on its own "
              "device", replicas=result["replicas"])


def _allreduce_finding(name: str, result: Any) -> Finding:
    code = f"devices.allreduce.{name}"
    if result is None:
        return _f(code, Status.FAIL, f"all-reduce through {name} did not finish", FIX_HANG)
    error = _error(result)
    if error:
        return _f(code, Status.FAIL, f"all-reduce through {name} raised: "
                  f"{error.splitlines()[0][:300]}",
                  "use another cross_device_ops (MirroredStrategy(cross_device_ops=...)); "
                  "this one does not work here", error=error)
    expected = result["expected"]
    wrong = [r for r in result["replicas"] if r["value"] != expected]
    if wrong:
        names = "; ".join(f"replica {r['replica']} got {r['value']}" for r in wrong)
        return _f(code, Status.FAIL, f"all-reduce (SUM) through {name} is WRONG: expected "
                  f"{expected} on every replica; {names}",
                  "wrong sums silently corrupt training: check the device's health "
                  "(nvidia-smi -q -d ECC), the driver, and NCCL_ALGO/NCCL_PROTO overrides; "
                  "until then use another cross_device_ops", expected=expected,
                  wrong_replicas=[r["replica"] for r in wrong], replicas=result["replicas"])
    return _f(code, Status.PASS, f"all-reduce (SUM) through {name}: exact sum on all "
              f"{len(result['replicas'])} replicas", expected=expected)


def _size(nbytes: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes:g} B"


def _bandwidth_finding(devices: dict[str, Any], gpus: list[dict[str, Any]],
                       ranks: int, kind: str, default_ops: str,
                       broken: frozenset[str] = frozenset()) -> Finding | None:
    """``broken``: choices whose all-reduce was wrong, never the advice however fast."""
    code = "devices.bandwidth"
    sweeps = {k.split(".", 1)[1]: v for k, v in devices.get("stages", {}).items()
              if k.startswith("bandwidth.") and k.split(".", 1)[1] not in broken}
    if not sweeps:
        return None
    table = {}
    for name, points in sweeps.items():
        if isinstance(points, list) and points:
            table[name] = bandwidths(points, ranks)
    if not table:
        errors = "; ".join(f"{k}: {_error(v)}" for k, v in sweeps.items())
        return _f(code, Status.WARN, f"no all-reduce could be timed ({errors})", FIX_HANG)
    largest = {name: pts[-1] for name, pts in table.items()}
    best = max(largest, key=lambda n: largest[n]["busbw_gbps"] or 0.0)
    top = largest[best]
    parts = [f"{name}{f' ({default_ops})' if name == 'default' else ''} "
             f"{(p['busbw_gbps'] or 0):.3g} GB/s" for name, p in
             sorted(largest.items(), key=lambda kv: -(kv[1]['busbw_gbps'] or 0))]
    msg = (f"all-reduce bus bandwidth at {_size(top['bytes'])} over {ranks} {kind} devices: "
           + ", ".join(parts) + f"; best: {best}")
    data: dict[str, Any] = {"ranks": ranks, "best": best, "sweeps": table,
                            "left_out_wrong": sorted(broken),
                            "failed": {k: _error(v) for k, v in sweeps.items() if _error(v)}}
    status, fix = Status.PASS, ""
    if kind == "GPU":
        peak, what = link_peak(gpus)
        data.update(link_peak_gbps=peak, link=what)
        if peak:
            share = (top["busbw_gbps"] or 0.0) / peak
            data["share_of_peak"] = share
            msg += f" = {share:.0%} of the {what} peak ({peak:g} GB/s)"
            if share < BELOW_PEAK:
                status = Status.WARN
                fix = ("the link runs below half its peak: check `nvidia-smi topo -m` (GPUs "
                       "behind different PCIe switches or CPU sockets), `nvidia-smi nvlink -s` "
                       "(links down), and that the GPUs are not shared")
        else:
            msg += f"; link peak unknown ({what})"
    else:
        msg += " (logical devices share one memory: this checks the machinery, not a link)"
    default_bw = largest.get("default", {}).get("busbw_gbps")
    if kind == "GPU" and best != "default" and default_bw is not None and \
            default_bw < NOT_BEST * (top["busbw_gbps"] or 0.0):
        status = Status.WARN
        choice = (f"tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.{best}())")
        fix = (fix + "; " if fix else "") + f"for large gradients here use {choice}: " \
            f"{(top['busbw_gbps'] or 0) / default_bw:.1f}× the default's bus bandwidth"
    return _f(code, status, msg, fix, **data)


def _straggler_finding(rows: Any) -> Finding | None:
    code = "devices.straggler"
    if rows is None:
        return None
    if _error(rows):
        return _f(code, Status.WARN, f"per-device timing did not finish: {_error(rows)}")
    slow = []
    for key, label in (("matmul_s", "matmul"), ("copy_s", "copy from device 0")):
        times = {r["device"]: r[key] for r in rows if r.get(key)}
        for dev, t in times.items():
            others = [v for d, v in times.items() if d != dev]
            if others and t > STRAGGLER * statistics.median(others):
                slow.append(f"{dev} ({label} {t / statistics.median(others):.1f}× slower than "
                            "its peers)")
    if slow:
        return _f(code, Status.WARN, "straggler: " + "; ".join(slow),
                  "every step waits for the slowest device: check its clocks and temperature "
                  "(nvidia-smi -q -d PERFORMANCE,TEMPERATURE), another process on it, and its "
                  "link (nvidia-smi topo -m)", devices=rows)
    return _f(code, Status.PASS, f"no straggler: {len(rows)} devices within "
              f"{STRAGGLER:g}× of each other", devices=rows)


def device_findings(devices: dict[str, Any], gpus: list[dict[str, Any]]) -> list[Finding]:
    """Every verdict of ``--devices`` from the raw results and the GPUs' link facts."""
    first, go_on = _strategy_finding(devices)
    out = [first]
    if not go_on:
        return out
    setup = _stage(devices, "setup")
    stages = devices.get("stages", {})
    replicas = _stage(devices, "replicas")
    out.append(_replicas_finding(replicas))
    names = [k.split(".", 1)[1] for k in stages if k.startswith("strategy.")]
    broken = set()
    for name in names:
        result = stages.get(f"allreduce.{name}")
        if result is None and _error(stages.get(f"strategy.{name}")):
            result = stages[f"strategy.{name}"]  # the strategy itself could not be built
        verdict = _allreduce_finding(name, result)
        if verdict.failed:
            broken.add(name)
        out.append(verdict)
    default_ops = replicas.get("default_ops", "?") if isinstance(replicas, dict) else "?"
    bandwidth = _bandwidth_finding(devices, gpus, len(setup["devices"]),
                                   setup["device_type"], default_ops, frozenset(broken))
    straggler = _straggler_finding(stages.get("per_device"))
    out += [f for f in (bandwidth, straggler) if f is not None]
    return out


# ---------------------------------------------------------------------------------------------
# --workers: this worker's view of a MultiWorkerMirroredStrategy cluster


def _worker_name(workers: list[str], i: int) -> str:
    return f"worker {i} ({workers[i]})" if 0 <= i < len(workers) else f"worker {i}"


def worker_spread(compare: dict[str, Any], workers: list[str], ranks: int) -> Finding:
    """Every worker's view of the ring at the largest message, side by side; a worker whose
    busbw is under ``SLOW_WORKER_SHARE`` of the others' median is named.

    In a ring every worker waits for the slowest hop, so the views agree on a healthy ring;
    one far below measured more time for the same calls: it waited on its own side (a slow
    NIC or host path, CPU load) or kept waiting for workers that arrived late.
    """
    size = compare["bytes"][-1]
    views = []
    for row in compare["seconds"]:
        seconds = row[-1] if row else 0.0
        views.append(size / seconds / 1e9 * bus_factor(ranks) if seconds > 0 else 0.0)
    slow = min(range(len(views)), key=lambda i: views[i])
    others = [v for i, v in enumerate(views) if i != slow]
    typical = statistics.median(others) if others else 0.0
    share = views[slow] / typical if typical > 0 else None
    data = {"busbw_gbps": views, "bytes": size, "slowest": slow, "share": share,
            "threshold": f"busbw < {SLOW_WORKER_SHARE:.0%} of the others' median"}
    row = ", ".join(f"{_worker_name(workers, i)} {v:.3g}" for i, v in enumerate(views))
    if share is not None and share < SLOW_WORKER_SHARE:
        return _f("workers.bandwidth_spread", Status.WARN,
                  f"{_worker_name(workers, slow)} measured the ring at {views[slow]:.3g} GB/s "
                  f"busbw ({_size(size)}), {share:.0%} of the others' {typical:.3g} GB/s "
                  f"(GB/s by worker: {row})",
                  "check that worker's network path (`ethtool`/`ip -s link` for its NIC's "
                  "speed and errors, the interface the worker binds) and its load while the "
                  "job runs; run `tfperf doctor --devices` on it", **data)
    return _f("workers.bandwidth_spread", Status.PASS,
              f"every worker measured the ring alike at {_size(size)} (busbw GB/s by worker: "
              f"{row})", **data)


def worker_findings(raw: dict[str, Any]) -> list[Finding]:
    """Verdicts of ``--workers`` from this worker's raw stages."""
    workers, me = raw.get("workers", []), raw.get("index", 0)
    stages = raw.get("stages", {})
    status = raw.get("status") or "not run"
    n = len(workers)
    if raw.get("not_installed"):
        return [_f("workers.join", Status.SKIP, f"{raw['not_installed']}: the workers' "
                   "collectives not checked", outcome=status, workers=workers)]
    if "timed out" in status and raw.get("hung_stage") == "join":
        silent = raw.get("silent_workers", [])
        names = ", ".join(_worker_name(workers, i) for i in silent) or "a worker"
        return [_f("workers.join", Status.FAIL, f"{names} never joined: {status} (this is "
                   f"{_worker_name(workers, me)})",
                   "start `tfperf doctor --workers` on every worker with the same cluster and "
                   "its own index; check that each HOST:PORT is reachable from the others "
                   "(firewall, the address the worker binds)", outcome=status,
                   silent_workers=silent, workers=workers)]
    if "join" not in stages:
        return [_f("workers.join", Status.FAIL, f"the worker check did not get to join: "
                   f"{status}", FIX_HANG, outcome=status, stderr_tail=raw.get("stderr_tail"))]
    out = [_f("workers.join", Status.PASS, f"all {n} workers joined (this is "
              f"{_worker_name(workers, me)})", workers=workers)]
    fp = stages.get("fingerprint")
    if isinstance(fp, dict) and "workers" in fp:
        diffs = []
        for i, row in enumerate(fp["workers"]):
            for field, theirs, mine in zip(fp["fields"], row, fp["my_hashes"], strict=False):
                if theirs != mine:
                    diffs.append(f"{_worker_name(workers, i)} differs in {field} (this "
                                 f"worker's: {fp['mine'][field]})")
        out.append(_f("workers.fingerprint", Status.FAIL if diffs else Status.PASS,
                      "; ".join(diffs) if diffs else
                      "same TensorFlow, CUDA, cuDNN, Python and CPU architecture on every "
                      "worker", "install the same TensorFlow build on every worker (pip "
                      "freeze on each, compare)" if diffs else "", fingerprint=fp["mine"]))
    elif "fingerprint" in stages or raw.get("hung_stage") == "fingerprint":
        out.append(_f("workers.fingerprint", Status.FAIL,
                      f"fingerprints not exchanged: {_error(fp) or status}", FIX_HANG))
    red = stages.get("allreduce")
    if isinstance(red, dict) and "value" in red:
        exact = red["value"] == red["expected"]
        out.append(_f("workers.allreduce", Status.PASS if exact else Status.FAIL,
                      f"all-reduce (SUM) over {n} workers: " + (
                          "exact sum" if exact else f"WRONG: got {red['value']}, expected "
                          f"{red['expected']}"),
                      "" if exact else "wrong sums corrupt training: check each worker's "
                      "devices (`tfperf doctor --devices`) and NCCL/gRPC settings", **red))
    elif "allreduce" in stages or raw.get("hung_stage") == "allreduce":
        out.append(_f("workers.allreduce", Status.FAIL,
                      f"all-reduce over {n} workers did not finish: {_error(red) or status}",
                      FIX_HANG))
    sweep = stages.get("bandwidth")
    if isinstance(sweep, list) and sweep:
        pts = bandwidths(sweep, n)
        top = pts[-1]
        out.append(_f("workers.bandwidth", Status.PASS,
                      f"ring all-reduce over {n} workers at {_size(top['bytes'])}: busbw "
                      f"{(top['busbw_gbps'] or 0):.3g} GB/s, algbw "
                      f"{(top['algbw_gbps'] or 0):.3g} GB/s", sweep=pts))
    compare = stages.get("compare")
    if isinstance(compare, dict) and compare.get("seconds"):
        out.append(worker_spread(compare, workers, n))
    if status != "ok" and len(out) == 1 + bool(fp):
        out.append(_f("workers.status", Status.FAIL, f"the worker check {status}", FIX_HANG,
                      stderr_tail=raw.get("stderr_tail")))
    return out
