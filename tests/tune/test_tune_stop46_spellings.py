"""Stop 46's generated spellings (``nearest_row``: a running minimum kept by a branch, the
position and the sum, written after the running-extremes fold but not read while writing
it): each equals the hand in type and value; the array-writes lever reads the ones whose
body the grid takes and its batched rows agree (a distance summed by an inner loop into a
name: only that inner fold, the outer loop stays). Not read: ``np.dot`` of a per-iteration
value (the write model does not take it as a reduction)."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import agrees, same
from spellings import NEAREST_ROW

HEAD = "import numpy as np\n\n\n"
#: every spelling (dot_product too since wave 2: np.dot of per-iteration rows is lifted)
READ = set(NEAREST_ROW.spellings)


def _load(text: str, name: str = "f"):
    ns: dict = {}
    exec(compile(text, "<stop46>", "exec"), ns)
    return ns[name]


def _args(n: int = 90, d: int = 8):
    r = np.random.default_rng(46)
    x = r.normal(size=(n, d)).astype(np.float32)
    x[70] = x[30]  # the nearest row twice: the first is kept
    return x, x[30] + np.float32(0.01)


@pytest.mark.parametrize("spelling", sorted(NEAREST_ROW.spellings))
def test_each_spelling_computes_what_the_hand_computes(spelling):
    args = _args()
    got = _load(HEAD + NEAREST_ROW.spellings[spelling])(*args)
    want = _load(HEAD + NEAREST_ROW.hands["hand_numpy"], "hand_numpy")(*args)
    assert got[0] == want[0] == 30 and type(got[0]) is int
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


@pytest.mark.parametrize("spelling", sorted(READ))
def test_the_array_writes_lever_reads_the_spelling_and_agrees(spelling):
    agrees(NEAREST_ROW.spellings[spelling], *_args())


def test_a_float64_query_keeps_the_loops_dtype():
    x, q = _args()
    text = NEAREST_ROW.spellings["index_loop"]
    new = agrees(text, x, q.astype(np.float64))
    same(_load(new)(x, q.astype(np.float64)), _load(HEAD + text)(x, q.astype(np.float64)))
