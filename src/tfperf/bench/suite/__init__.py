"""The article's claims as a suite: each measured on this machine, with a verdict.

- ``claims/``: one module per claim group, discovered (``runner.discover``); each declares
  the ids it measures (``CLAIMS``) and ``run(ctx) -> list[Claim]``.
- ``context.py``: what a claim module is handed (comparisons, the verdict of a claim).
- ``verdict.py``: the five verdict words and the rule; ``result.py``: a run as data.
- ``runner.py``: discovery and ``run_suite``; rendering is ``tfperf.bench.report``.

The article's figures are quoted as its claims; the ``measured`` column is this machine.
"""
