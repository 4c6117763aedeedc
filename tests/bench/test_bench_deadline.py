"""The time limit stops a runaway call, and raises only where the code could have raised itself.

Raised at a random bytecode inside TensorFlow's Python layer, the timeout left the runtime
half-updated and the process crashed later with a segmentation fault (the suite under load);
these tests plant the outcomes: where the timeout lands, that TensorFlow still works after it.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import signal
import statistics
import subprocess
import sys
import sysconfig
import textwrap
import traceback
import warnings

import pytest

from tfperf.bench import deadline
from tfperf.bench.deadline import CallTimeout, safe_to_raise, time_limit

pytestmark = pytest.mark.skipif(not deadline.limits_supported(), reason="no SIGALRM here")


def _spin_forever() -> None:
    while True:
        pass


def test_a_pure_python_runaway_is_stopped():
    with pytest.raises(CallTimeout), time_limit(0.05):
        _spin_forever()


def test_a_call_that_returns_in_time_is_left_alone_and_the_handler_restored():
    before = signal.getsignal(signal.SIGALRM)
    with time_limit(30):
        total = sum(range(1000))
    assert total == 499500
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_no_limit_means_no_alarm():
    with time_limit(None):
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_library_and_finaliser_frames_are_not_safe_user_frames_are():
    import json.decoder

    frame = inspect.currentframe()
    assert safe_to_raise(frame)  # this test file: the user's code
    lib = deadline._file_is_safe
    assert not lib(json.decoder.__file__)  # the standard library
    assert not lib(pytest.__file__)  # site-packages
    assert not lib(deadline.__file__)  # the limit's own bookkeeping
    assert not lib("<frozen importlib._bootstrap>")
    assert lib("<tfperf candidate>")  # exec'd source

    class Finalised:
        def __del__(self):
            seen.append(safe_to_raise(inspect.currentframe()))

    seen: list[bool] = []
    Finalised()
    assert seen == [False]


@dataclasses.dataclass
class _Made:
    frame: object = None

    def __post_init__(self) -> None:
        self.frame = inspect.currentframe().f_back  # the generated __init__ ("<string>")


def test_code_generated_from_a_string_is_as_safe_as_its_caller():
    # A dataclass's __init__ is compiled from a string: called by the user it is the user's
    # code, called by the standard library it is the library's work half done.
    mine = _Made()
    assert mine.frame.f_code.co_filename == "<string>"
    assert safe_to_raise(mine.frame)
    theirs = dataclasses.replace(mine)  # dataclasses.replace (stdlib) calls the __init__
    assert theirs.frame.f_code.co_filename == "<string>"
    assert not safe_to_raise(theirs.frame)


def test_a_timeout_never_skips_the_exit_of_a_with_whose_enter_ran():
    # catch_warnings swaps the module's filters in __enter__ and puts them back in __exit__.
    # Raised as its __enter__ returns, the `with` never called __exit__ and the swap stayed
    # (TensorFlow's name scopes, tapes and stack-trace mappers are the same shape).
    filters, show = warnings.filters, warnings.showwarning
    cut = 0
    for _ in range(30):
        try:
            with time_limit(0.002):
                while True:
                    with warnings.catch_warnings():
                        pass
        except CallTimeout:
            cut += 1
        assert warnings.filters is filters and warnings.showwarning is show
    assert cut == 30


def _library_depth(exc: BaseException) -> int:
    """How many library frames (site-packages, the standard library) sit below the innermost
    frame of other code in the traceback: where the timeout was raised."""
    stdlib = sysconfig.get_paths()["stdlib"]
    entries = traceback.extract_tb(exc.__traceback__)
    depth = 0
    for entry in reversed(entries):
        if entry.filename == deadline.__file__:
            continue  # the alarm's own handler, which raises
        name = entry.filename
        if "site-packages" in name or name.startswith(stdlib) or name.startswith("<frozen"):
            depth += 1
        else:
            return depth
    return depth


def test_an_alarm_landing_in_library_code_is_raised_where_the_users_code_resumes():
    # statistics.pstdev is pure Python of the standard library (generators included): nearly
    # every alarm lands inside it. The timeout must come out at most one library call deep
    # (the call returning into this file), never in the middle of the library's work.
    data = [float(i % 97) for i in range(20000)]

    def spin_on_library():
        while True:
            statistics.pstdev(data)

    for _ in range(5):
        with pytest.raises(CallTimeout) as caught, time_limit(0.01):
            spin_on_library()
        assert _library_depth(caught.value) <= 1, traceback.format_tb(caught.value.__traceback__)
    assert sys.getprofile() is None  # the hook is gone once the timeout was raised


@pytest.mark.tf
def test_interrupted_tensorflow_work_stays_usable_and_timeouts_land_in_user_code(tmp_path):
    # In a child: many eager map_fn / vectorized_map / traced calls cut by short limits. Every
    # timeout must surface in the child's own file, and TensorFlow must still compute after.
    pytest.importorskip("tensorflow")
    script = tmp_path / "cut.py"
    script.write_text(textwrap.dedent("""
        import json, random, sys, sysconfig, traceback
        import tensorflow as tf
        from tfperf.bench import deadline
        from tfperf.bench.deadline import CallTimeout, time_limit
        deadline_file = deadline.__file__
        random.seed(7)
        x = tf.random.normal([48, 8])
        def body(r):
            return tf.reduce_sum(tf.sin(r) * tf.cos(r)) + tf.norm(r)
        def work(k):
            if k % 3 == 0:
                return tf.map_fn(body, x)
            if k % 3 == 1:
                return tf.vectorized_map(body, x)
            return tf.function(lambda a: tf.stack([body(a[i]) for i in range(48)]))(x)
        stdlib = sysconfig.get_paths()["stdlib"]
        def depth(e):
            d = 0
            for entry in reversed(traceback.extract_tb(e.__traceback__)):
                n = entry.filename
                if n == deadline_file:
                    continue
                if "site-packages" in n or n.startswith(stdlib) or n.startswith("<frozen"):
                    d += 1
                else:
                    break
            return d
        where = {}
        for k in range(int(sys.argv[1])):
            try:
                with time_limit(random.uniform(0.001, 0.05)):
                    work(k)
            except CallTimeout as e:
                where[depth(e)] = where.get(depth(e), 0) + 1
        ok = float(tf.reduce_sum(tf.map_fn(body, x)) - tf.reduce_sum(tf.vectorized_map(body, x)))
        print(json.dumps({"where": where, "diff": ok}))
    """))
    out = subprocess.run([sys.executable, str(script), "60"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert sum(result["where"].values()) > 0, "no call was cut: the test would prove nothing"
    assert set(result["where"]) <= {"0", "1"}, result["where"]  # library frames below the cut
    assert abs(result["diff"]) < 1e-3
