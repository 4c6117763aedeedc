"""Stop 45: loops whose body picks a value with ``if``/``elif``/``else`` (rounds 13-15: a hue
per pixel, a threshold per element, a conditional re-argmax), batched as one choice per
element over the grid: every condition and every branch computed, the first true condition's
value taken. The run falls back to the original loop where a path leaves a name unbound on
some element, where branches give values of other dtypes, or where a condition is not one
truth value per element. Twins: branches that write, print or break are left alone."""

from __future__ import annotations

import numpy as np
import pytest
from no_fallback import agrees, no_fallback

from tfperf.tune.levers import numpy_writes
from tfperf.tune.source import SourceEditError

HEAD = "import numpy as np\n\n\n"


def _load(text: str):
    ns: dict = {}
    exec(compile(text, "<branches>", "exec"), ns)
    return ns["f"]


SECTORS = '''
def f(pix):
    rows, cols, _ = pix.shape
    res = np.empty((rows, cols, 3))
    for u in range(rows):
        for v in range(cols):
            [c0, c1, c2] = pix[u][v] / 255.0
            hi, lo = max(c0, c1, c2), min(c0, c1, c2)
            span = hi - lo
            if hi == lo:
                ang = 0
            elif hi == c0:
                ang = 30 * ((c1 - c2) / span)
            elif hi == c1:
                ang = 30 * ((c2 - c0) / span) + 60
            elif hi == c2:
                ang = 30 * ((c0 - c1) / span) + 120
            if ang < 0:
                ang = ang + 180
            if hi != 0:
                sat = span / hi
            else:
                sat = 0
            res[u][v] = [ang, sat * 100, hi * 100]
    return res
'''


def _image(shape, seed=0, dtype=np.uint8):
    img = np.random.default_rng(seed).integers(0, 256, shape).astype(dtype)
    img[:2, :2] = 77  # grey: mx == mn
    img[-1, -1] = 0  # black: mx == 0
    return img


@pytest.mark.parametrize("shape", [(6, 9, 3), (1, 4, 3), (5, 1, 3)])
def test_an_elif_chain_of_temporaries_is_one_choice_per_pixel(shape):
    # the shape of round 15's c01 (written here, not copied): unpacking, max of three, an
    # elif chain with no else (every pixel takes a branch), a list written per pixel
    agrees(SECTORS, _image(shape))


def test_a_chain_with_an_unbound_path_taken_runs_the_loop():
    # a NaN pixel matches no branch: the loop keeps ang from the pixel before it; no one
    # array holds that, so the original loop runs
    img = _image((4, 5, 3)).astype(np.float64)
    img[1, 3, 0] = np.nan  # c0: max(c0, c1, c2) is NaN, no branch matches
    new = agrees(SECTORS, img, batched=None)
    with pytest.raises(AssertionError, match="fell back"):
        _load(no_fallback(new))(img)


SIGN = '''
def f(x, t):
    out = np.zeros(len(x), x.dtype)
    for i in range(len(x)):
        v = x[i]
        if v > t:
            v = v - t
        elif v < -t:
            v = v + t
        else:
            v = 0
        out[i] = v * 2
    return out
'''


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8])
@pytest.mark.filterwarnings("ignore:overflow encountered")  # the loop's own int8 wrap
def test_a_soft_threshold_keeps_the_dtype_and_the_store_cast(dtype):
    x = np.random.default_rng(1).integers(-60, 60, 40).astype(dtype)
    agrees(SIGN, x, 20)
    agrees(SIGN.replace("out = np.zeros(len(x), x.dtype)", "out = np.zeros(len(x), np.uint8)"),
            x, 20)  # negative values wrap in uint8 as the loop's store does


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the loop's own int8 wrap
def test_branches_of_other_dtypes_run_the_loop():
    # int32 in one branch, a float64 array in the other: the loop keeps each iteration's
    # own dtype (v * 2 wraps in int8 on one path only); one array cannot
    text = SIGN.replace("v = v + t", "v = x[i] * 0.5").replace("out = np.zeros(len(x), x.dtype)",
                                                               "out = np.zeros(len(x))")
    x = np.array([100, -100, 3], np.int8)
    new = agrees(text, x, 20, batched=None)
    with pytest.raises(AssertionError, match="fell back"):
        _load(no_fallback(new))(x, 20)


def test_a_branch_on_a_per_pixel_vector_runs_the_loop_which_raises():
    text = '''
def f(img):
    out = np.zeros(img.shape[:2])
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            px = img[i, j]
            if px > 3:
                s = 1.0
            else:
                s = 2.0
            out[i, j] = s
    return out
'''
    new = numpy_writes.rewrite(HEAD + text, "f")
    with pytest.raises(ValueError, match="ambiguous"):  # the loop's own error
        _load(new)(np.ones((2, 2, 3)))


@pytest.mark.parametrize("body, why", [
    ("if x[i] > 0:\n            out[i] = 1.0\n        out[i] = x[i]", "does more than bind"),
    ("if x[i] > 0:\n            print(x[i])\n        out[i] = x[i]", "does more than bind"),
    ("v = 0.0\n        if x[i] > 0:\n            v = x[i]\n            break\n        out[i] = v",
     "does more than bind"),
    ("if i > 2:\n            v = 1.0\n        else:\n            v = 0.0\n        out[i] = v",
     "loop index 'i' in arithmetic"),
])
def test_branches_that_do_more_than_bind_are_left_alone(body, why):
    text = f'''
def f(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        {body}
    return out
'''
    with pytest.raises(SourceEditError, match=why):
        numpy_writes.rewrite(HEAD + text, "f")


def test_tuple_assignment_takes_the_values_first():
    text = '''
def f(x, y):
    out = np.zeros(len(x))
    for i in range(len(x)):
        a, b = x[i], y[i]
        a, b = b, a - b
        out[i] = max(a, b) - min(b, a, 0.5)
    return out
'''
    r = np.random.default_rng(2)
    agrees(text, r.normal(size=30), r.normal(size=30))
    x = np.array([np.nan, 1.0, 2.0])  # NaN: max keeps its first argument, as the builtin
    agrees(text, x, np.array([1.0, np.nan, 2.0]))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_writes_in_branches_keep_the_element_where_no_branch_writes(dtype):
    # round 13's c10 thresholds an image into a copy; an element no branch writes keeps the
    # value it had (here the input's), and the store casts as the loop's
    text = '''
def f(img, lo, hi):
    out = img.copy()
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            if img[i, j] < lo:
                out[i, j] = 0
            elif img[i, j] > hi:
                v = img[i, j] * 1.5
                out[i, j] = v
    return out
'''
    img = np.random.default_rng(4).integers(0, 256, (7, 9)).astype(dtype)
    agrees(text, img, 60, 200)
