"""CPU thread pools: TensorFlow's ``intra_op`` (threads inside one op) and ``inter_op``
(ops run side by side) sizes, tried in isolated processes only.

TensorFlow fixes both when it starts (setting them later raises ``RuntimeError``), so a size
can only be tried in a fresh process: the lever applies with ``--isolate`` and ``--threads``,
and the child sets the sizes before TensorFlow runs anything. The patch is what the child
ran: the two ``tf.config.threading`` calls right after ``import tensorflow``. They take
effect only where they run before the program's first TensorFlow op (docs/tune.md says
so, and names the ``TF_NUM_INTRAOP_THREADS``/``TF_NUM_INTEROP_THREADS`` alternative).
"""

from __future__ import annotations

import ast
import os

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import TF_MODULE, SourceEditError, ensure_tf, parse

COMMENT = ("# tfperf tune: TensorFlow fixes its thread pools when it starts; these must run "
           "before its first op")


def cores() -> int:
    """CPUs this process may run on (the affinity mask, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def settings(n: int) -> list[tuple[int, int]]:
    """A few sizes worth trying on ``n`` cores: one thread, half the cores with two ops side
    by side, every core for one op at a time (TensorFlow's default is every core for both)."""
    out: list[tuple[int, int]] = []
    for pair in ((1, 1), (max(1, n // 2), 2), (n, 1)):
        if pair not in out:
            out.append(pair)
    return out


class Threads(Lever):
    slot, stage = "threads", 60
    rejections = ("not applicable without --isolate",
                  "the module runs TensorFlow before the lines (RuntimeError at load)")

    def __init__(self, intra: int, inter: int) -> None:
        self.threads = (intra, inter)
        self.name = f"threads: intra_op {intra}, inter_op {inter}"
        self.description = (f"tf.config.threading: {intra} thread(s) per op, {inter} op(s) "
                            "side by side")

    def applies(self, ctx: LeverContext) -> str | None:
        if not ctx.isolate:
            return ("needs --isolate: TensorFlow fixes its thread pools when it starts, so "
                    "only a fresh process can try another size")
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        text, tf = ensure_tf(text)
        node = next((n for n in parse(text).body if isinstance(n, ast.Import)
                     and any(a.name == TF_MODULE for a in n.names)), None)
        if node is None:
            raise SourceEditError("no module-level `import tensorflow`")
        intra, inter = self.threads
        lines = text.splitlines(keepends=True)
        at = node.end_lineno or node.lineno
        lines.insert(at, f"{COMMENT}\n"
                         f"{tf}.config.threading.set_intra_op_parallelism_threads({intra})\n"
                         f"{tf}.config.threading.set_inter_op_parallelism_threads({inter})\n")
        return "".join(lines)


def levers(ctx: LeverContext) -> list[Lever]:
    if not ctx.threads:  # asked for with --threads only: each size is a process start
        return []
    return [Threads(intra, inter) for intra, inter in settings(cores())]
