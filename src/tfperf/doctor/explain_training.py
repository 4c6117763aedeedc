"""A loss the log shows finite before it turns NaN: the training diverged.

A loss that is NaN from its first report points at the data or the loss function (NaN in the
inputs, log(0)); one the run printed as numbers for several reports before NaN (its own logger's
``train loss:1.2`` ... ``train loss:nan``, Keras's ``loss: 0.53`` ... ``loss: nan``) most often
grew until it overflowed: the learning rate is too high or the gradients explode
(sequence_tagging#47: lr 0.01 and 0.1 went NaN after a few epochs, 0.001 trained).
"""

from __future__ import annotations

import re

from tfperf.doctor.explain_search import finditer_lines

Reading = tuple[str, str, str]  # (cause, fix, the log's words that show it)

# 'loss' as its own word (not val_loss), then the separators loggers print, then a value
_LOSS = re.compile(r"\bloss(?::|: | = |=)(?P<v>nan|[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\b")
_WINDOW = 100_000  # characters read at each end of a long log


def loss_diverged(text: str) -> Reading | None:
    """(cause, fix, the last finite report and the first NaN) when the log reports the loss as a
    number before it reports it as NaN; None when the first report is already NaN, or none is."""
    if len(text) > 2 * _WINDOW:
        text = text[:_WINDOW] + "\n" + text[-_WINDOW:]
    last_finite = ""
    finite = 0
    for m in finditer_lines(_LOSS, text, ("loss",)):
        if m["v"] != "nan":
            finite += 1
            last_finite = m.group(0)
            continue
        if not finite:
            return None
        cause = (f"The loss was reported as a number {finite} time(s) ('{last_finite}') before "
                 f"it became NaN ('{m.group(0)}'): the training diverged. The loss grew until "
                 "it overflowed, most often because the learning rate is too high or the "
                 "gradients explode; NaN in the data or log(0) in the loss would show from the "
                 "first steps.")
        fix = ("Lower the learning rate (by 10x, e.g. 0.01 to 0.001) and clip the gradients "
               "(clipnorm=1.0, tf.clip_by_global_norm); a learning-rate warm-up helps large "
               "models. If it turns NaN at the same step each run, check that batch's data.")
        return cause, fix, f"{last_finite} ... {m.group(0)}"
    return None
