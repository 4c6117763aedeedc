"""Loading the extension: the magics appear and go; ``import tfperf`` stays light."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAGICS = ("tftimeit", "tfcompare", "tfprofile", "tflint", "tftune", "tfdoctor")


def test_import_tfperf_loads_neither_ipython_nor_tensorflow():
    code = ("import sys, tfperf; f = tfperf.load_ipython_extension; "
            "assert callable(f) and callable(tfperf.unload_ipython_extension); "
            "print(sorted(m for m in ('IPython', 'tensorflow') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_load_registers_every_magic_and_unload_removes_them(shell, run):
    lines, cells = shell.magics_manager.magics["line"], shell.magics_manager.magics["cell"]
    assert all(name in lines for name in MAGICS)
    assert {"tftimeit", "tfcompare", "tfprofile", "tflint"} <= set(cells)
    assert run("%unload_ext tfperf").error is None
    assert not any(name in lines for name in MAGICS)
    assert "tfprofile" not in cells
    ran = run("%tftimeit 1 + 1")
    assert ran.error is not None  # the magic is gone
    assert run("%load_ext tfperf").error is None
    assert all(name in lines for name in MAGICS)


def test_the_extension_also_loads_from_the_config_list(tmp_path):
    # c.InteractiveShellApp.extensions = ["tfperf"] makes IPython call load_extension("tfperf")
    code = ("from IPython.core.interactiveshell import InteractiveShell\n"
            "sh = InteractiveShell.instance()\n"
            "print(sh.extension_manager.load_extension('tfperf'))\n"
            "print('tftimeit' in sh.magics_manager.magics['line'])\n")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["None", "True"]
