"""tfperf inside IPython and Jupyter: ``%load_ext tfperf``.

The magics (``%tftimeit``, ``%tfcompare``, ``%%tfprofile``, ``%tflint``, ``%tftune``,
``%tfdoctor``) are thin: each parses its options, turns the cell's text into callables in
the user's namespace (:mod:`tfperf.notebook.statement`), hands them to the capability that
already exists (the measurement core, ``bench.compare``, ``profile.watch``, the linter, the
doctor) and shows the result through IPython's display system
(:mod:`tfperf.notebook.display`). IPython is imported only here, never by ``import tfperf``.
"""

from __future__ import annotations
