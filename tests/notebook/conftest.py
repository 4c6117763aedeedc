"""A real IPython ``InteractiveShell`` with ``%load_ext tfperf``, and a helper that runs a cell
as a front end would and keeps what it showed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

IPython = pytest.importorskip("IPython")


@dataclass
class Ran:
    """One cell's run: IPython's result, what went to stdout/stderr, what was displayed."""

    result: Any
    stdout: str
    stderr: str
    outputs: list[dict[str, Any]] = field(default_factory=list)  # mimebundles, in order

    @property
    def error(self) -> BaseException | None:
        return self.result.error_in_exec or self.result.error_before_exec

    def shown(self, mime: str = "text/plain") -> str:
        return "\n".join(o[mime] for o in self.outputs if mime in o)

    @property
    def everything(self) -> str:
        return self.stdout + self.stderr + self.shown()


@pytest.fixture(scope="session")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.run_cell("%load_ext tfperf", store_history=True)
    return sh


@pytest.fixture(scope="session")
def run(shell):
    from IPython.utils.capture import capture_output

    def run_cell(source: str) -> Ran:
        with capture_output() as cap:
            result = shell.run_cell(source, store_history=True)
        return Ran(result, cap.stdout, cap.stderr, [dict(o.data) for o in cap.outputs])

    return run_cell


@pytest.fixture(scope="session")
def tf_cells(run):
    """TensorFlow and the article's case-study functions, defined in a cell (as a user would);
    returns that cell's number."""
    pytest.importorskip("tensorflow")
    ran = run("""\
import tensorflow as tf
samples = tf.random.stateless_normal([16, 40, 8], seed=[1, 2])
weights = tf.random.stateless_normal([40], seed=[3, 4])
def slow(s, w):
    out = []
    for i in range(s.shape[0]):
        out.append(tf.reduce_sum(s[i] * tf.reshape(w, [-1, 1]), axis=0))
    return tf.stack(out)
def vec(s, w):
    return tf.reduce_sum(s * tf.reshape(w, [-1, 1]), axis=1)
xla = tf.function(vec, jit_compile=True)
""")
    assert ran.error is None, ran.everything
    return ran.result.execution_count
