"""While tune measures, a batched rewrite that cannot answer raises (the candidate is rejected
with the reason, as before stop 45) instead of running the user's loop in its fall-back
handler: a candidate that runs the loop is no rewrite, and timing it spends the budget.

Each search sets its own token; a rewrite made during it compares the variable with that
token, so only that search's candidates are strict: the user's applied code (made by an
earlier search, or the baseline of a later one) runs the loop."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

#: Read by the handler the array-writes rewrite puts around its batched rows.
VARIABLE = "TFPERF_TUNE_STRICT"


def token() -> str | None:
    """The running search's token (None outside a search)."""
    return os.environ.get(VARIABLE)


@contextmanager
def strict() -> Iterator[None]:
    before = os.environ.get(VARIABLE)
    os.environ[VARIABLE] = uuid.uuid4().hex
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before
