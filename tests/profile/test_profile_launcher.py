"""tfperf's own console script is not the user's code (stop 45): pip writes
``<venv>/bin/tfperf`` outside site-packages, so its ``sys.exit(main())`` was taken for the
user's line, and ``tfperf profile mymod:step`` reported "compiled step called at tfperf:8"
with a compute-bound fix, where ``python -m tfperf`` (what the tests ran) found no cause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

from tfperf.profile.attribution import is_user_file

SRC = Path(__file__).resolve().parents[2] / "src"


def test_the_console_script_is_tfperfs_and_a_script_beside_it_the_users():
    scripts = sysconfig.get_paths()["scripts"]
    assert not is_user_file(os.path.join(scripts, "tfperf"))
    assert is_user_file(os.path.join(scripts, "train.py"))  # the twin: a user's own file


# What pip writes for `[project.scripts] tfperf = "tfperf.cli:main"`.
LAUNCHER = textwrap.dedent("""\
    import re
    import sys
    from tfperf.cli import main
    if __name__ == "__main__":
        sys.argv[0] = re.sub(r"(-script\\.pyw|\\.exe)?$", "", sys.argv[0])
        sys.exit(main())
""")

STEP = textwrap.dedent("""\
    import tensorflow as tf

    W = tf.Variable(tf.random.normal([32, 32]))

    def make_inputs():
        return (tf.random.normal([8, 32]),)

    @tf.function
    def step(x):
        return tf.reduce_sum(tf.nn.relu(x @ W))
""")


def test_profile_of_a_function_started_by_the_console_script_blames_no_launcher_line(
        tf, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tfperf").write_text(LAUNCHER)
    (tmp_path / "mymod.py").write_text(STEP)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(tmp_path)])}
    proc = subprocess.run([sys.executable, str(bin_dir / "tfperf"), "profile", "mymod:step",
                           "--inputs", "mymod:make_inputs", "--steps", "2", "--no-capture",
                           "--json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    shown = json.dumps(report)
    assert str(bin_dir / "tfperf") not in shown, report["causes"]
    assert report["functions"][0]["path"] is None, report["functions"]
