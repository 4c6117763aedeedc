"""TFP704's update search as a worklist (stop 40): an update reached through a chain of ops
written in reverse order is found however long the chain, so a G step after a D step stays
ordered (not merged); the same chain with no update at its end is merged."""

from __future__ import annotations

import pytest

from tfperf.lint import registry
from tfperf.lint.engine import lint_source


def _module(links: int, update: bool) -> str:
    end = "opt.minimize(g_loss, var_list=g_vars)" if update else "tf.reduce_sum(g_loss)"
    lines = ["import tensorflow as tf", "sess = tf.compat.v1.Session()",
             "opt = tf.compat.v1.train.AdamOptimizer()",
             "d_train = opt.minimize(d_loss, var_list=d_vars)"]
    # g_0 holds g_1 holds ... g_n: each written before the one it holds
    lines += [f"g_{i} = tf.group(g_{i + 1})" for i in range(links)]
    lines += [f"g_{links} = {end}",
              "for step in range(1000):",
              "    sess.run(d_train, feed_dict={x: batch})",
              "    sess.run(g_0, feed_dict={x: batch})"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("links", [1, 3, 400])
def test_an_update_at_the_end_of_a_reversed_chain_keeps_the_runs_ordered(links):
    rule = registry.get("TFP704")
    found = lint_source(_module(links, update=True), "gan.py", rules=[rule], tf_version=(1, 15))
    assert [f.code for f in found] == []
    merged = lint_source(_module(links, update=False), "gan.py", rules=[rule],
                         tf_version=(1, 15))
    assert [f.code for f in merged] == ["TFP704"]
