"""``reduce_retracing=True`` on a module-level tf.function the baseline's run saw retrace
(observed with :func:`tfperf.profile.watch`, which also says why it retraced)."""

from __future__ import annotations

from tfperf.tune.lever import Lever, LeverContext
from tfperf.tune.source import set_tf_function


class ReduceRetracing(Lever):
    slot, stage = "retrace", 50
    description = "tf.function(reduce_retracing=True): shapes generalised after a retrace"
    rejections = ("still retraces (Python values, not shapes, change)",
                  "disagrees with the baseline")

    def __init__(self, function: str | None, cause: str = "") -> None:
        self.function, self.cause = function, cause
        self.name = f"reduce_retracing({function})" if function else "reduce_retracing"

    def applies(self, ctx: LeverContext) -> str | None:
        if self.function is None:
            return "no retrace observed in the baseline's calls"
        return None

    def build(self, text: str, ctx: LeverContext) -> str:
        assert self.function is not None
        return set_tf_function(text, self.function, {"reduce_retracing": True})


def levers(ctx: LeverContext) -> list[Lever]:
    if not ctx.retraced:
        return [ReduceRetracing(None)]
    return [ReduceRetracing(name, cause) for name, cause in sorted(ctx.retraced.items())]
