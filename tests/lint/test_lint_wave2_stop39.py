"""Stop 39, wave 2: a crash found on real TF1 GAN code, and round 9's false classes."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfperf.lint.session import LintRequest, run


def _lint(tmp_path: Path, source: str, select: str, preview: bool = False) -> list:
    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    out = run(LintRequest(paths=[str(tmp_path)], select=[select], preview=preview, cache=False))
    return out.findings


def test_tfp116_loss_by_keyword_does_not_crash(tmp_path):
    # Two updates of one optimizer spelling on one var_list, the loss passed as loss=: the
    # rule re-read the term by position and got None (TFP001 AttributeError before).
    found = _lint(tmp_path, """
        import tensorflow.compat.v1 as tf
        def build(a_loss, b_loss, ws, sharp):
            first = tf.train.GradientDescentOptimizer(0.1).minimize(loss=a_loss, var_list=ws)
            if sharp:
                second = tf.train.GradientDescentOptimizer(0.1).minimize(loss=b_loss,
                                                                          var_list=ws)
            return first
    """, "TFP116", preview=True)
    assert [f.code for f in found if f.code == "TFP001"] == []


def test_tfp116_terms_by_keyword_still_found(tmp_path):
    found = _lint(tmp_path, """
        import tensorflow.compat.v1 as tf
        ga = tf.gradients(ys=la, xs=ws)
        gb = tf.gradients(xs=ws, ys=lb)
        op = opt.apply_gradients(zip([a + b for a, b in zip(ga, gb)], ws))
    """, "TFP116", preview=True)
    assert [(f.code, f.location.line) for f in found] == [("TFP116", 3)]
