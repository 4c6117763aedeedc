"""While tune measures, a batched rewrite that cannot answer raises (the candidate is rejected
with the reason, as before stop 45) instead of running the user's loop in its fall-back
handler: a candidate that runs the loop is no rewrite, and timing it spends the budget. In
the user's applied code the variable is unset and the handler runs the loop."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

#: Read by the handler the array-writes rewrite puts around its batched rows.
VARIABLE = "TFPERF_TUNE_STRICT"


@contextmanager
def strict() -> Iterator[None]:
    before = os.environ.get(VARIABLE)
    os.environ[VARIABLE] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before
