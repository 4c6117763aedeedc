"""Stop 45's generated spellings (``shrink_levels``: a per-element if/elif chain, written
before the branch model read them): each equals the hand; the array-writes lever reads every
one and its batched rows agree (write_in_branch after its own change: a write as each
branch's last statement, no else: the element as it was). Twin: two buffers written."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import no_fallback
from spellings import SHRINK_LEVELS

from tfperf.tune.levers.numpy_writes import rewrite
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"
READ = set(SHRINK_LEVELS.spellings)


def _load(text: str, name: str = "f"):
    ns: dict = {}
    exec(compile(text, "<stop45>", "exec"), ns)
    return ns[name]


def _args():
    r = np.random.default_rng(47)
    x = r.normal(size=300).astype(np.float32)
    x[:3] = [0.5, -0.5, 0.0]  # on the threshold: the else branch
    return x, 0.5


def _same(a, b) -> None:
    assert type(a) is type(b) and a.dtype == b.dtype == np.float32 and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("spelling", sorted(SHRINK_LEVELS.spellings))
def test_each_spelling_computes_what_the_hand_computes(spelling):
    args = _args()
    got = _load(HEAD + SHRINK_LEVELS.spellings[spelling])(*args)
    _same(got, _load(HEAD + SHRINK_LEVELS.hands["hand_numpy"], "hand_numpy")(*args))


@pytest.mark.parametrize("spelling", sorted(READ))
def test_the_array_writes_lever_reads_the_spelling_and_agrees(spelling):
    args = _args()
    text = HEAD + SHRINK_LEVELS.spellings[spelling]
    new = rewrite(text, "f")
    _same(_load(no_fallback(new))(*args), _load(text)(*args))


def test_branches_that_write_two_buffers_are_left_alone():
    text = SHRINK_LEVELS.spellings["write_in_branch"].replace(
        "out[i] = x[i] + t", "x[i] = x[i] + t")
    with pytest.raises(SourceEditError, match="not a write into an array"):
        rewrite(HEAD + text, "f")
