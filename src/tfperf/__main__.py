"""``python -m tfperf`` is the ``tfperf`` command."""

import sys

from tfperf.cli import main

sys.exit(main())
