"""CPU time of ``explain_log`` in-process on logs of repeated lines: the six largest fixture logs,
each alone and repeated to 10,000 lines, and single lines repeated 1,000, 10,000 and 20,000 times
(the fastest of 3 runs after a warm-up). Work that grows faster than the distinct lines shows
here; the time should grow linearly with the lines and stay small.

    .venv/bin/python benchmarks/bench_explain_repeated.py
    PYTHONPATH=/path/to/other/checkout/src .venv/bin/python benchmarks/bench_explain_repeated.py

Asserts nothing.
"""

from __future__ import annotations

import time

from explain_logs import largest, long_log, rows, text

from tfperf.doctor.explainer import explain_log

LINES = (
    "2024-01-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator "
    "(GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824)requested "
    "by op MatMul",
    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible shapes: [32,10] "
    "vs. [16,10]",
    '  File "/home/u/train.py", line 12, in <module>',
    "Traceback (most recent call last):",
    "Epoch 1/10")


def _fastest(text: str) -> float:
    explain_log(text)
    times = []
    for _ in range(3):
        start = time.process_time()
        explain_log(text)
        times.append((time.process_time() - start) * 1000)
    return min(times)


def main() -> None:
    for log_id in largest([r["id"] for r in rows()]):
        lines = text(log_id).splitlines()
        repeated = long_log([log_id])
        print(f"{log_id[:48]:48} {len(lines):3} lines {_fastest(chr(10).join(lines)):6.1f} ms"
              f"  repeated to 10,000 lines {_fastest(repeated):6.1f} ms CPU")
    for line in LINES:
        shown = ", ".join(f"{n:,} x {_fastest(chr(10).join([line] * n)):6.1f} ms"
                          for n in (1_000, 10_000, 20_000))
        print(f"{line[:48]:48} {shown} CPU")


if __name__ == "__main__":
    main()
