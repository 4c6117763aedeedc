"""The spellings added in stop 43 (tests/tune/spellings.py: column_powers, a loop over a
later axis) compute what their hands compute at the small size, and the batched lever reads
the ones it should (a map of a lambda, ``x[..., j]``, an unstack along axis 1) into the same
values with no loop left."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from rewrites import lever_context, loops_left  # noqa: E402
from spellings import CHANNEL_CONVS, COLUMN_POWERS  # noqa: E402

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.channel_convs import ChannelConvsToDepthwise  # noqa: E402
from tfperf.tune.levers.loop_model import LoopsBatched  # noqa: E402

HEAD = "import numpy as np\nimport tensorflow as tf\n\n"
# The spellings the batched lever reads (the others are misses the figures show).
READ = {"map_lambda_transposed", "comprehension_stack_axis1", "append_ellipsis_stack_last",
        "enumerate_unstack_axis1", "while_counter", "cast_exponent_map",
        "slice_columns_concat"}  # (review 43: the index lined up for the concat join)


def _setup(c=COLUMN_POWERS) -> tuple[tuple, str]:
    ns = {"SIZE": dict(c.small), "tf": tf, "np": np}
    exec("def make():\n" + "\n".join("    " + r for r in c.inputs.splitlines()), ns)
    return ns["make"](), HEAD + f"SIZE = {c.small!r}\n\n\n"


def _load(text: str, name: str = "f"):
    ns: dict = {}
    exec(compile(text, "<spelling>", "exec"), ns)
    return ns[name]


def _same(a, b) -> None:
    eq = compare_outputs(snapshot(a), snapshot(b))
    assert eq.equivalent is True, eq.reason


@pytest.mark.parametrize("spelling", sorted(COLUMN_POWERS.spellings))
def test_each_spelling_computes_what_the_hands_compute(spelling):
    args, head = _setup()
    got = _load(head + COLUMN_POWERS.spellings[spelling])(*args)
    for name, text in COLUMN_POWERS.hands.items():
        _same(got, _load(head + text, name)(*args))


@pytest.mark.parametrize("spelling", sorted(READ))
def test_the_batched_lever_reads_the_later_axis_and_agrees(spelling):
    args, head = _setup()
    text = head + COLUMN_POWERS.spellings[spelling]
    ctx = lever_context(text, args, "column_powers.py")
    lever = LoopsBatched(True)
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert loops_left(new) == 0, new
    _same(_load(text)(*args), _load(new)(*args))


def test_the_depthwise_lever_now_reads_a_zip_of_channel_unstacks():
    """Stop 42's channel_convs/zip_unstack (``zip(tf.unstack(img, axis=-1), tf.unstack(ker,
    axis=-1))``, 0.08 of the hand: not read) is one index over the channels now."""
    args, head = _setup(CHANNEL_CONVS)
    text = head + CHANNEL_CONVS.spellings["zip_unstack"]
    ctx = lever_context(text, args, "channel_convs.py")
    lever = ChannelConvsToDepthwise()
    assert lever.applies(ctx) is None
    new = lever.build(text, ctx)
    assert "_tfperf_channel_convs(" in new.split("def f", 1)[1], new
    _same(_load(text)(*args), _load(new)(*args))
