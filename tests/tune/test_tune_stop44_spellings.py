"""The spellings added in stop 44 (tests/tune/spellings.py: gray_levels, NumPy loops writing
each pixel into a preallocated uint8 array) compute what the hand computes at the small size,
bit for bit, and the array-writes lever reads the ones it should into the same uint8 NumPy
array with no loop left, all eight (``enumerate_rows``: each item inlined as its array
indexed, ``px[0]`` → ``img[i, j, 0]``; ``while_counters``: ``i = 0; while i < n: …; i += 1``
is the axis of ``range(0, n)``)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from no_fallback import no_fallback
from spellings import GRAY_LEVELS
from test_tune_numpy_writes import _loops_left

from tfperf.tune.levers.numpy_writes import rewrite

HEAD = "import numpy as np\n\n\n"
READ = {"double_range_tuple", "chained_subscripts", "temporaries", "weights_vector_sum",
        "columns_outer", "uint8_cast_per_pixel", "enumerate_rows", "while_counters"}


def _args() -> tuple:
    ns = {"SIZE": dict(GRAY_LEVELS.small), "np": np}
    exec("def make():\n" + "\n".join("    " + r for r in GRAY_LEVELS.inputs.splitlines()), ns)
    return ns["make"]()


def _load(text: str, name: str = "f"):
    ns: dict = {}
    exec(compile(text, "<spelling>", "exec"), ns)
    return ns[name]


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert type(a) is type(b) and a.dtype == b.dtype == np.uint8 and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("spelling", sorted(GRAY_LEVELS.spellings))
def test_each_spelling_computes_what_the_hand_computes(spelling):
    args = _args()
    got = _load(HEAD + GRAY_LEVELS.spellings[spelling])(*args)
    _same(got, _load(HEAD + GRAY_LEVELS.hands["hand_numpy"], "hand_numpy")(*args))


@pytest.mark.parametrize("spelling", sorted(READ))
def test_the_array_writes_lever_reads_the_spelling_and_agrees(spelling):
    args = _args()
    text = HEAD + GRAY_LEVELS.spellings[spelling]
    new = rewrite(text, "f")
    assert not _loops_left(new), new
    _same(_load(text)(*args), _load(no_fallback(new))(*args))


def test_loops_in_another_order_than_the_subscripts_still_slice():
    # a map's grid takes the subscripts' order (for j: for i: out[i, j]): views, no gather
    new = rewrite(HEAD + GRAY_LEVELS.spellings["columns_outer"], "f")
    grid = [r for r in new.splitlines() if "= _tfperf_axis(" in r]
    assert len(grid) == 2 and all(r.endswith(", True)") for r in grid), new


def test_every_spelling_is_read():
    assert set(GRAY_LEVELS.spellings) == READ
