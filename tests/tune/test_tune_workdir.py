"""A tune run leaves nothing in the temp folder once its process ends. The search's folder
holds the module copies and, for a child process, the user's inputs (`inputs.npz`: arrays of
any size); the pick's copy must stay while the process runs (tracing reads its source), and
the folder was left behind after every run that picked something: one per run.

The run is a real process (the folder goes at its exit) with the planted lever of
test_tune_apply.py (a loop of 40 no-op multiplies dropped): the pick is certain on a loaded
machine."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.tf

import tfperf  # noqa: E402

HERE = Path(__file__).parent
SRC = Path(tfperf.__file__).parents[1]  # the tfperf under test, in the child too
DRIVER = textwrap.dedent('''\
    import sys, tempfile
    from pathlib import Path
    from planted import Planted
    from tfperf.cli import main
    from tfperf.tune import search

    LOOP = "    for _ in range(40):\\n        y = y * 1.0\\n"
    search.discover = lambda ctx: [Planted("planted: drop the loop", LOOP, "")]
    rc = main(["tune", sys.argv[1] + ":f", "--budget", "3"])
    # while the process runs, the pick's copy is there (tracing may read it)
    kept = list(Path(tempfile.gettempdir()).glob("tfperf_tune_*/*.py"))
    print("KEPT", len(kept), "RC", rc)
    ''')


def test_the_search_folder_goes_with_the_process(tmp_path: Path):
    from test_tune_apply import SOURCE  # the planted lever's function

    user = tmp_path / "g.py"
    user.write_text(SOURCE)
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "TF_CPP_MIN_LOG_LEVEL": "2",
           "PYTHONPATH": os.pathsep.join([str(SRC), str(HERE)])}
    done = subprocess.run([sys.executable, "-c", DRIVER, str(user)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "KEPT 1 RC 0" in done.stdout, done.stdout + done.stderr[-2000:]
    assert list(temp.glob("tfperf_tune_*")) == []
    assert user.read_text() == SOURCE
