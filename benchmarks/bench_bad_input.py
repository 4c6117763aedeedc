"""How fast bad input is answered, against what importing TensorFlow costs, in one run.

    .venv/bin/python benchmarks/bench_bad_input.py [ROUNDS]

For each bad input (a missing file, a script that does not parse, a function that is not
there, a call without its inputs), ``python -m tfperf ...`` is run ROUNDS times (default 5),
interleaved with ``python -c "import tensorflow"``, so machine load hits both. Prints each
case's median wall seconds, its exit status, and the ratio of TensorFlow's import to it: how
much of a user's wait the check before TensorFlow saves (issue 24: 6-33 s before). Asserts
nothing.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "bench missing.py": ["bench", "missing.py"],
    "profile syntax.py": ["profile", "syntax.py"],
    "tune funcs.py:nope": ["tune", "funcs.py:nope"],
    "tune funcs.py:square (no inputs)": ["tune", "funcs.py:square"],
    "profile funcs.py:square (no inputs)": ["profile", "funcs.py:square"],
}


def _wall(argv: list[str], cwd: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True)
    return time.perf_counter() - start, proc.returncode


def main(rounds: int = 5) -> None:
    with tempfile.TemporaryDirectory(prefix="tfperf-bad-input-") as tmp:
        folder = Path(tmp)
        (folder / "syntax.py").write_text("import tensorflow as tf\nfor x in range(3)\n")
        (folder / "funcs.py").write_text("import tensorflow as tf\ndef square(x):\n"
                                         "    return x * x\n")
        times: dict[str, list[float]] = {name: [] for name in [*CASES, "import tensorflow"]}
        status: dict[str, int] = {}
        for _ in range(rounds):
            for name, args in CASES.items():
                seconds, status[name] = _wall([sys.executable, "-m", "tfperf", *args], folder)
                times[name].append(seconds)
            seconds, _ = _wall([sys.executable, "-c", "import tensorflow"], folder)
            times["import tensorflow"].append(seconds)
    tf_import = statistics.median(times["import tensorflow"])
    print(f"{'case':<38} {'median':>8} {'exit':>5} {'TF import / it':>15}")
    for name in CASES:
        median = statistics.median(times[name])
        print(f"{name:<38} {median:>7.2f}s {status[name]:>5} {tf_import / median:>14.0f}x")
    label = 'python -c "import tensorflow"'
    print(f"{label:<38} {tf_import:>7.2f}s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
