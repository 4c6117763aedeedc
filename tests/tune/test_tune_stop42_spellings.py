"""The spellings added in stop 42 (tests/tune/spellings.py: channel_convs, masked_means,
running_totals, pair_features) compute what their hands compute, each one at the small size,
so a figure of benchmarks/bench_tune.py on them compares like with like; and the levers built
for them rewrite the spellings they read into the same values."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

sys.path.insert(0, str(Path(__file__).parent))
from rewrites import lever_context  # noqa: E402
from spellings import CHANNEL_CONVS, MASKED_MEANS, PAIR_FEATURES, RUNNING_TOTALS  # noqa: E402

from tfperf.bench.equivalence import compare_outputs, snapshot  # noqa: E402
from tfperf.tune.levers.channel_convs import ChannelConvsToDepthwise  # noqa: E402
from tfperf.tune.levers.numpy_round_trip import rewrite  # noqa: E402
from tfperf.tune.levers.segments import GroupsToSegments  # noqa: E402

COMPS = {c.name: c for c in (CHANNEL_CONVS, MASKED_MEANS, RUNNING_TOTALS, PAIR_FEATURES)}
HEAD = "import numpy as np\nimport tensorflow as tf\n\n"
CASES = [(c, s) for c in COMPS for s in COMPS[c].spellings]


def _setup(comp):
    ns = {"SIZE": dict(comp.small), "tf": tf, "np": np}
    exec("def make():\n" + "\n".join("    " + r for r in comp.inputs.splitlines()), ns)
    return ns["make"](), HEAD + f"SIZE = {comp.small!r}\n\n\n"


def _load(text, name="f"):
    ns: dict = {}
    exec(compile(text, "<spelling>", "exec"), ns)
    return ns[name]


def _same(a, b):
    eq = compare_outputs(snapshot(a), snapshot(b))
    assert eq.equivalent is True, eq.reason


@pytest.mark.parametrize("comp,spelling", CASES)
def test_each_spelling_computes_what_the_hands_compute(comp, spelling):
    c = COMPS[comp]
    args, head = _setup(c)
    got = _load(head + c.spellings[spelling])(*args)
    for name, text in c.hands.items():
        _same(got, _load(head + text, name)(*args))


# Which spellings each new lever reads (the others are misses the figures show).
READ = {
    ("channel_convs", ChannelConvsToDepthwise): {"append_concat", "comprehension_stack_last",
                                                 "map_fn_transposed", "named_slices_axis3",
                                                 "while_counter"},
    ("masked_means", GroupsToSegments): {"min_id_column_mask", "literal_range_boolean_mask",
                                         "shifted_ids_expand_dims", "while_sum_over_count",
                                         "offset_in_compare"},
}


@pytest.mark.parametrize("comp,lever", sorted(READ, key=lambda k: k[0]))
def test_the_new_levers_read_their_spellings_and_agree(comp, lever):
    c = COMPS[comp]
    args, head = _setup(c)
    for spelling in READ[(comp, lever)]:
        text = head + c.spellings[spelling]
        ctx = lever_context(text, args, "spelling.py")
        assert lever().applies(ctx) is None, spelling
        new = lever().build(text, ctx)
        _same(_load(text)(*args), _load(new)(*args))


def test_the_pair_features_round_trips_become_tensorflow_ops():
    c = COMPS["pair_features"]
    args, head = _setup(c)
    for spelling, body in c.spellings.items():
        text = head + body
        new = rewrite(text, "f")
        for call in ("np.tile(", "np.repeat(", "np.insert("):
            assert call not in new.split("\ndef _tfperf_")[0], (spelling, new)
        _same(_load(text)(*args), _load(new)(*args))
