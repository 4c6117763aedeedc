"""Live compute checks: the article's S8 self-check done right, plus XLA and reduced precision.

Two halves, kept apart like everywhere in the doctor:

* **workloads** (``run_*``) run inside the TensorFlow subprocess (``probes/tf_child.py``),
  receive the imported ``tf`` module and return plain dicts. Timing goes through the one
  timer, :func:`tfperf.core.measure.measure`, which forces completion on asynchronous devices.
* **judging** (:func:`live_findings`) turns those dicts into :class:`Finding` verdicts and is
  a pure function, so tests feed it results of machines they do not have.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tfperf.core.findings import Finding, Status

MATMUL_SIZE = 4096  # the article's S8 size
# Without a GPU to compare against, the CPU's throughput is the figure: a CPU reaches its
# matmul GFLOP/s at 1024 already (64x less work than 4096), which keeps the doctor quick.
CPU_ONLY_MATMUL_SIZE = 1024
MATMUL_BUDGET_S = 0.4  # measure()'s budget for the timed blocks of one matmul (doctor stays quick)
XLA_SIZE = 256
# Relative (Frobenius) error of a float32 GPU product against the CPU one. Plain fp32 sums of
# 4096 terms land near 1e-6; TF32 (on by default on Ampere and newer) near 1e-3.
FP32_AGREEMENT = 1e-4
TF32_AGREEMENT = 1e-2

# ---------------------------------------------------------------------------------------------
# workloads: run in the TensorFlow subprocess


def _inputs(tf: Any, n: int, dtype: Any = None) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(8)  # same inputs on every device: results can be compared
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    ta, tb = tf.constant(a), tf.constant(b)
    if dtype is not None:
        ta, tb = tf.cast(ta, dtype), tf.cast(tb, dtype)
    return ta, tb


def _timed_matmul(tf: Any, device: str, n: int, dtype: Any = None) -> tuple[dict[str, Any], Any]:
    from tfperf.core.measure import measure

    with tf.device(device):
        a, b = _inputs(tf, n, dtype)
        m = measure(tf.matmul, args=(a, b), warmup=0.0, min_runs=3,
                    max_time=MATMUL_BUDGET_S, label=f"matmul {device}")
        product = tf.matmul(a, b)
    flops = 2.0 * n**3
    result = {"device": device, "n": n, "dtype": (dtype.name if dtype is not None else "float32"),
              "median_s": m.median, "tflops": flops / m.median / 1e12 if m.median else None,
              "measurement": m.to_dict()}
    return result, product


def _rel_error(tf: Any, x: Any, ref: Any) -> float:
    x64, r64 = tf.cast(x, tf.float64), tf.cast(ref, tf.float64)
    den = float(tf.norm(r64))
    return float(tf.norm(x64 - r64)) / den if den else math.inf


def run_matmul(tf: Any, gpus: list[str], size: int | None = None) -> list[dict[str, Any]]:
    """S8: a float32 n×n matmul on every GPU and on the CPU, synced, with agreement."""
    cpu_n = size or (MATMUL_SIZE if gpus else CPU_ONLY_MATMUL_SIZE)
    cpu, cpu_product = _timed_matmul(tf, "/CPU:0", cpu_n)
    cpu["id"] = "live.matmul.cpu"
    out = [cpu]
    for i, _ in enumerate(gpus):
        gpu, product = _timed_matmul(tf, f"/GPU:{i}", cpu_n)
        gpu["id"] = f"live.matmul.gpu{i}"
        gpu["rel_error_vs_cpu"] = _rel_error(tf, product, cpu_product)
        gpu["speedup_vs_cpu"] = cpu["median_s"] / gpu["median_s"] if gpu["median_s"] else None
        gpu["tf32_enabled"] = bool(tf.config.experimental.tensor_float_32_execution_enabled())
        out.append(gpu)
    return out


def run_xla(tf: Any) -> dict[str, Any]:
    """Compile a small fused function with ``jit_compile=True`` and check it against eager."""
    from tfperf.core.measure import measure

    def body(x: Any, y: Any) -> Any:
        return tf.reduce_sum(tf.nn.relu(tf.matmul(x, y)) * 2.0 + 1.0, axis=1)

    x, y = _inputs(tf, XLA_SIZE)
    compiled = tf.function(body, jit_compile=True)
    m = measure(compiled, args=(x, y), warmup=0.0, min_runs=3, max_time=0.2, label="xla")
    err = _rel_error(tf, compiled(x, y), body(x, y))
    return {"id": "live.xla", "compile_s": m.first_call_s, "median_s": m.median,
            "rel_error_vs_eager": err, "measurement": m.to_dict()}


def run_reduced_precision(tf: Any, gpus: list[str], size: int | None = None,
                          fp32: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """float16 / bfloat16 matmul on the first GPU, with speed relative to float32."""
    n = size or MATMUL_SIZE
    out = []
    for dtype in (tf.float16, tf.bfloat16):
        rid = f"live.{dtype.name}"
        try:
            res, _ = _timed_matmul(tf, "/GPU:0", n, dtype)
        except Exception as exc:  # an unsupported dtype is the answer, not a crash
            out.append({"id": rid, "supported": False, "error": f"{type(exc).__name__}: {exc}"})
            continue
        res.update(id=rid, supported=True, gpu=gpus[0])
        if fp32 and fp32.get("median_s") and res["median_s"]:
            res["speedup_vs_float32"] = fp32["median_s"] / res["median_s"]
        out.append(res)
    return out


def workloads(tf: Any, gpus: list[str], size: int | None) -> list[tuple[str, Callable[[], Any]]]:
    """The live checks in the order they run; each returns a dict or a list of dicts."""
    state: dict[str, Any] = {}

    def matmul() -> list[dict[str, Any]]:
        state["matmul"] = run_matmul(tf, gpus, size)
        return state["matmul"]

    def reduced() -> list[dict[str, Any]]:
        fp32 = next((r for r in state.get("matmul", []) if r["id"] == "live.matmul.gpu0"), None)
        return run_reduced_precision(tf, gpus, size, fp32)

    steps: list[tuple[str, Callable[[], Any]]] = [("live.matmul", matmul),
                                                  ("live.xla", lambda: run_xla(tf))]
    if gpus:
        steps.append(("live.reduced_precision", reduced))
    return steps


# ---------------------------------------------------------------------------------------------
# judging: pure functions of the raw results


def _fmt_time(seconds: float | None) -> str:
    from tfperf.core.measure import format_seconds

    return format_seconds(seconds, 3)


def _matmul_line(r: dict[str, Any]) -> str:
    n = r.get("n")
    tflops = r.get("tflops")
    rate = (f"{tflops * 1000:.1f} GFLOP/s" if tflops is not None and tflops < 1
            else f"{tflops:.1f} TFLOP/s" if tflops is not None else "? FLOP/s")
    noise = r.get("measurement", {}).get("warning")
    return (f"{n}×{n} {r.get('dtype', 'float32')} matmul on {r.get('device')}: "
            f"{_fmt_time(r.get('median_s'))} per call, {rate}"
            + (f" ({noise})" if noise else ""))


def _matmul_findings(results: Any, gpus_expected: bool) -> list[Finding]:
    if isinstance(results, dict) and "error" in results:
        return [Finding("live.matmul", f"matmul check did not finish: {results['error']}",
                        Status.FAIL, hint="rerun with a longer --timeout, or --no-compute")]
    out = []
    gpu_results = [r for r in results if r["id"] != "live.matmul.cpu"]
    for r in results:
        data = {k: v for k, v in r.items() if k != "id"}
        if r["id"] == "live.matmul.cpu":
            size_note = "" if gpu_results or r.get("n") == MATMUL_SIZE else \
                f" (size {r.get('n')}, not the article's {MATMUL_SIZE}: no GPU to compare with)"
            out.append(Finding("live.matmul.cpu", _matmul_line(r) + size_note, Status.PASS,
                               data=data))
            continue
        err = r.get("rel_error_vs_cpu")
        tf32 = r.get("tf32_enabled")
        limit = TF32_AGREEMENT if tf32 else FP32_AGREEMENT
        speed = r.get("speedup_vs_cpu")
        msg = _matmul_line(r) + (f", {speed:.0f}× the CPU" if speed else "")
        if err is None or not math.isfinite(err):
            out.append(Finding(r["id"], msg + "; agreement with the CPU unknown", Status.WARN,
                               data=data))
        elif err <= limit:
            note = " (TF32 on: float32 matmuls round inputs to 10 mantissa bits)" \
                if tf32 and err > FP32_AGREEMENT else ""
            out.append(Finding(r["id"], f"{msg}; agrees with the CPU (relative error "
                                        f"{err:.1e}){note}", Status.PASS, data=data))
        else:
            out.append(Finding(r["id"], f"{msg}; DISAGREES with the CPU (relative error "
                                        f"{err:.1e} > {limit:.0e})", Status.FAIL,
                               hint="wrong results on the GPU: check the driver and the GPU's "
                                    "health (nvidia-smi -q -d ECC), and retry with "
                                    "TF32 off (tf.config.experimental."
                                    "enable_tensor_float_32_execution(False))", data=data))
        if speed is not None and speed < 1:
            out.append(Finding(f"{r['id']}.speed", f"the GPU matmul is slower than the CPU "
                                                   f"({speed:.2f}×)", Status.WARN,
                               hint="check that the GPU is not throttled or shared "
                                    "(nvidia-smi -q -d PERFORMANCE)", data=data))
    if not gpu_results:
        out.append(Finding("live.matmul.gpu", "GPU matmul skipped: TensorFlow sees no GPU"
                           if gpus_expected else "GPU matmul skipped: no GPU on this machine",
                           Status.SKIP, hint="see doctor.tf_sees_gpu" if gpus_expected else ""))
    return out


def _xla_finding(r: dict[str, Any]) -> Finding:
    if "error" in r:
        return Finding("live.xla", f"XLA jit_compile failed: {r['error']}", Status.FAIL,
                       hint="XLA needs libdevice/ptxas on GPU (see `tfperf explain`); set "
                            "XLA_FLAGS=--xla_gpu_cuda_data_dir=<CUDA dir> if they are missing")
    err = r.get("rel_error_vs_eager")
    data = {k: v for k, v in r.items() if k != "id"}
    msg = (f"XLA jit_compile works: compiled in {_fmt_time(r.get('compile_s'))}, then "
           f"{_fmt_time(r.get('median_s'))} per call")
    if err is not None and err > FP32_AGREEMENT:
        return Finding("live.xla", f"{msg}, but differs from eager (relative error {err:.1e})",
                       Status.WARN, data=data)
    return Finding("live.xla", f"{msg}; same result as eager", Status.PASS, data=data)


def _reduced_findings(results: Any) -> list[Finding]:
    if isinstance(results, dict) and "error" in results:
        return [Finding("live.reduced_precision", f"float16/bfloat16 check did not finish: "
                        f"{results['error']}", Status.WARN)]
    out = []
    for r in results:
        data = {k: v for k, v in r.items() if k != "id"}
        if not r.get("supported"):
            out.append(Finding(r["id"], f"{r['id'].split('.')[-1]} matmul not supported on the "
                                        f"GPU: {r.get('error')}", Status.WARN, data=data))
            continue
        speed = r.get("speedup_vs_float32")
        msg = _matmul_line(r) + (f", {speed:.1f}× float32" if speed else "")
        status = Status.WARN if speed is not None and speed < 1.2 else Status.PASS
        hint = ("reduced precision brings no speed here: the GPU may lack tensor cores for "
                "this type" if status is Status.WARN else "")
        out.append(Finding(r["id"], msg, status, hint=hint, data=data))
    return out


def live_findings(live: dict[str, Any], *, compute: bool, gpus_expected: bool,
                  tf_ran: bool) -> list[Finding]:
    """Verdicts from the raw live results (``Facts.live``)."""
    if not compute:
        return [Finding("live", "live compute checks skipped (--no-compute)", Status.SKIP)]
    if not tf_ran:
        return [Finding("live", "live compute checks skipped: TensorFlow did not run",
                        Status.SKIP)]
    out: list[Finding] = []
    if "live.matmul" in live:
        out += _matmul_findings(live["live.matmul"], gpus_expected)
    else:
        out.append(Finding("live.matmul", "matmul check did not run", Status.WARN))
    if "live.xla" in live:
        out.append(_xla_finding(live["live.xla"]))
    if "live.reduced_precision" in live:
        out += _reduced_findings(live["live.reduced_precision"])
    else:
        out.append(Finding("live.reduced_precision", "float16/bfloat16 matmul speed skipped: "
                           "no GPU visible to TensorFlow (reduced precision on a CPU says "
                           "nothing about tensor cores)", Status.SKIP))
    return out
