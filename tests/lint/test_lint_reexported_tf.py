"""TensorFlow re-exported by a package (``from deepmd.env import tf``, the package picking
``tensorflow.compat.v1`` or ``tensorflow``) is TensorFlow to every rule, whether the module
is linted alone or with its package; a name ``tf`` from TensorFlow itself is unchanged, and
one from nowhere (a star import aside) stays unknown."""

from __future__ import annotations

from project_files import found, write_project

from tfperf.lint.session import LintRequest, run

ENV = """\
try:
    import tensorflow.compat.v1 as tf
    tf.disable_v2_behavior()
except ImportError:
    import tensorflow as tf
"""

FIT = """\
from deepmd.env import tf

def build(inputs, ntypes):
    outs = None
    for t in range(ntypes):
        layer = tf.matmul(inputs, inputs)
        outs = layer if outs is None else tf.concat([outs, layer], axis=1)
    return outs

def total(x):
    acc = tf.zeros([4])
    for i in range(x.shape[0]):
        acc += x[i]
    return acc
"""


def _codes(outcome, root) -> list[tuple[str, str, int | None]]:
    return [(c, p, line) for c, p, line, _ in found(outcome, root)]


def test_tf_from_a_package_is_tensorflow_alone_and_in_its_package(tmp_path):
    write_project(tmp_path, {"deepmd/__init__.py": "", "deepmd/env.py": ENV,
                             "deepmd/fit.py": FIT})
    want = [("TFP102", "deepmd/fit.py", 13), ("TFP104", "deepmd/fit.py", 7)]
    tree = run(LintRequest(paths=[str(tmp_path)], cache=False, select=["TFP102", "TFP104"]))
    assert _codes(tree, tmp_path) == want
    alone = run(LintRequest(paths=[str(tmp_path / "deepmd" / "fit.py")], cache=False,
                            select=["TFP102", "TFP104"]))
    assert _codes(alone, tmp_path) == want


def test_other_names_from_a_package_stay_unknown(tmp_path):
    write_project(tmp_path, {"fit.py": FIT.replace("from deepmd.env import tf",
                                                   "from deepmd.env import tensorflow_ops as tf")})
    outcome = run(LintRequest(paths=[str(tmp_path)], cache=False, select=["TFP102", "TFP104"]))
    assert _codes(outcome, tmp_path) == []
