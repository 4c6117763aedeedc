"""Which helpers take a batch in front of their first argument's axes (TFP106's question to
the project model, held-out round 14 F001), and a package re-exporting its modules with
``from .utils import *`` resolved by the project model."""

from __future__ import annotations

import ast
import textwrap

import pytest

from tfperf.analysis.project import Project
from tfperf.lint.analysis.leading_axes import batches_first_argument
from tfperf.lint.engine import module_summary
from tfperf.lint.rules.tfp106_map_fn_per_example import MapFnPerExample
from tfperf.lint.semantic import Context


def _batches(body: str) -> bool:
    source = "import tensorflow as tf\n" + textwrap.dedent(body)
    ctx = Context(ast.parse(source), source, "h.py")
    fn = next(n for n in ctx.tree.body if type(n) is ast.FunctionDef)
    return batches_first_argument(ctx, fn)


@pytest.mark.parametrize("body", [
    # read from the back, matmul, a reshape keeping tf.shape(x)'s leading part
    """
    def shift(m, shape):
        m = tf.cast(m, tf.float32)
        out = m[..., :-1] @ tf.ones((3, 8)) + m[..., -1:]
        size = tf.concat((tf.shape(m)[:-2], (8, 3)), axis=0)
        return tf.reshape(tf.linalg.matrix_transpose(out), size)
    """,
    """
    def inverse(mat):
        '''Any batch in front.'''
        if mat.shape[-1] != 4:
            raise ValueError("4x4")
        return tf.linalg.inv(mat[..., :3, :3])
    """,
])
def test_helpers_read_from_the_back_take_a_batch(body: str) -> None:
    assert _batches(body)


@pytest.mark.parametrize("body", [
    "def f(m):\n    return tf.linalg.inv(m[:3, :3])\n",                 # the first axis
    "def f(m):\n    return tf.reshape(m[..., :3], (3, 3))\n",           # a fixed rank
    "def f(m):\n    return m[..., :len(m)] @ m[..., :1]\n",             # len of the batch
    "def f(m):\n    for row in m:\n        pass\n    return m[..., 0]\n",  # a loop over it
    "def f(m):\n    return tf.math.sigmoid(m) + 1\n",                   # no sign it batches
    "def f(m):\n    x = m[..., 0]\n    return helper(x)\n",             # an unknown call
    "def f(self, m):\n    return m[..., 0] @ m[..., 1]\n",               # a method
])
def test_helpers_that_read_leading_axes_or_show_nothing_do_not(body: str) -> None:
    assert not _batches(body)


def test_a_name_star_exported_by_a_package_init_resolves(tmp_path) -> None:
    files = {
        "pkg/__init__.py": "from . import utils\n",
        "pkg/utils/__init__.py": "from .core import *\n",
        "pkg/utils/core.py": "import tensorflow as tf\ndef inverse(mat):\n"
                             "    return tf.linalg.inv(mat[..., :3, :3])\n",
        "pkg/layers.py": "import tensorflow as tf\nfrom . import utils\n"
                         "def call(m):\n    return tf.map_fn(utils.inverse, m)\n",
    }
    summaries = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        ctx = Context(ast.parse(text), text, str(path))
        summaries.append(module_summary(ctx, [MapFnPerExample()]))
    project = Project(summaries)
    layers = project.modules[str(tmp_path / "pkg/layers.py")]
    hit = project.resolve(layers, (".", "utils.inverse"))
    assert hit is not None and hit[1].qualname == "inverse"
    found = list(MapFnPerExample().check_project(project))
    assert [f.location.line for f in found] == [4]
