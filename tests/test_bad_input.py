"""The bad-input matrix (issue 24): every command and magic × the bad inputs that apply to it.

Each cell asks the same of tfperf: one clear line on stderr and exit 2 (1 where lint reports
findings; 0 where the input is not bad for that command), no traceback, no file changed (bytes,
mode, owner), and, for the command line, TensorFlow never imported: a poisoned ``tensorflow``
package comes first on the path and fails any import of it.

Speed: the command-line cells run in one child process (each decided before TensorFlow would
load, they take milliseconds); the magics run in one IPython shell in this process.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from user_files import BENCH_FILE, EXPLAIN_LOG
from user_files import SLOW_LOOP as FIXABLE  # TFP102's (unsafe) fix applies here

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def make_inputs(folder: Path) -> Path:
    """One of each kind of bad input, plus good files to hang bad options on."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "good.py").write_text(BENCH_FILE)
    (folder / "funcs.py").write_text("import tensorflow as tf\n\ndef square(x):\n"
                                     "    return x * x\n")
    (folder / "empty.py").write_text("")
    (folder / "binary.py").write_bytes(b"\x7fELF\x02\x01\x00\x00garbage\x00\xff")
    (folder / "syntax.py").write_text("import tensorflow as tf\ndef f(:\n    return 1\n")
    (folder / "latin1.py").write_bytes(b"x = '\xe9t\xe9'\n")
    (folder / "loop.py").symlink_to("loop2.py")
    (folder / "loop2.py").symlink_to("loop.py")
    (folder / "folder.py").mkdir()
    (folder / "bad.ipynb").write_text('{"cells": [{"cell_type": "code", "source": ')
    (folder / "corrupt.json").write_text('{"format": "tfperf-bench-run", "version": ')
    (folder / "blocker").write_text("a file where a folder should be\n")  # blocker/x: ENOTDIR
    (folder / "empty.log").write_text("")
    (folder / "binary.log").write_bytes(b"\x00\x01\x02 core dump \x00\xff\xfe")
    readonly = folder / "readonly.py"
    readonly.write_text(FIXABLE)
    readonly.chmod(0o444)
    return folder


def snapshot(folder: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``folder`` (links not followed): type, mode, owner, content hash."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            digest = None
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(path)
            out[os.path.relpath(path, folder)] = (st.st_mode, st.st_uid, st.st_gid, digest)
    return out


# --------------------------------------------------------------------------------------------
# the command line: (id, argv, exit status, what the one line on stderr says)

CLI_CELLS: list[Any] = [
    # bench FILE.py
    ("bench-missing", ["bench", "missing.py"], 2, "missing.py: no such file"),
    ("bench-empty", ["bench", "empty.py"], 2, "empty.py: the file is empty"),
    ("bench-binary", ["bench", "binary.py"], 2, "binary.py: a binary file"),
    ("bench-syntax", ["bench", "syntax.py"], 2, "syntax.py: syntax error at line 2"),
    ("bench-not-utf8", ["bench", "latin1.py"], 2, "latin1.py: not UTF-8 text"),
    ("bench-symlink-loop", ["bench", "loop.py"], 2, "loop.py: a symlink loop"),
    ("bench-folder", ["bench", "folder.py"], 2, "folder.py: a folder"),
    ("bench-compare-to-corrupt", ["bench", "good.py", "--compare-to", "corrupt.json"], 2,
     "corrupt.json: not JSON"),
    ("bench-compare-to-missing", ["bench", "good.py", "--compare-to", "nothere.json"], 2,
     "nothere.json: no such file"),
    ("bench-compare-to-loop", ["bench", "good.py", "--compare-to", "loop.py"], 2, "loop.py"),
    ("bench-save-unwritable", ["bench", "good.py", "--save", "blocker/run.json"], 2,
     "--save blocker/run.json"),
    ("bench-store-unwritable", ["bench", "good.py", "--store", "blocker/runs"], 2,
     "--store blocker/runs"),
    ("bench-plot-unwritable", ["bench", "good.py", "--plot", "blocker/p.png"], 2,
     "--plot blocker/p.png"),
    ("bench-html-folder", ["bench", "good.py", "--html", "folder.py"], 2,
     "--html folder.py: is a folder; give a file name"),
    ("bench-html-over-source", ["bench", "good.py", "--html", "good.py"], 2,
     "--html good.py: an existing Python source or notebook"),
    ("bench-save-over-source", ["bench", "good.py", "--save", "funcs.py"], 2,
     "--save funcs.py: an existing Python source or notebook"),
    ("bench-interleave-syntax", ["bench", "good.py", "--interleave-with", "syntax.py"], 2,
     "syntax.py: syntax error"),
    # tune FILE.py:FUNC
    ("tune-missing", ["tune", "missing.py:f"], 2, "missing.py: no such file"),
    ("tune-empty", ["tune", "empty.py:f"], 2, "empty.py: the file is empty"),
    ("tune-binary", ["tune", "binary.py:f"], 2, "binary.py: a binary file"),
    ("tune-syntax", ["tune", "syntax.py:f"], 2, "syntax.py: syntax error at line 2"),
    ("tune-symlink-loop", ["tune", "loop.py:f"], 2, "loop.py: a symlink loop"),
    ("tune-folder", ["tune", "folder.py:f"], 2, "folder.py: a folder"),
    ("tune-unknown-function", ["tune", "funcs.py:nope"], 2,
     "funcs.py: no function 'nope' at module level (it defines square)"),
    ("tune-no-inputs", ["tune", "funcs.py:square"], 2, "no @tfperf.inputs function"),
    ("tune-inputs-unknown", ["tune", "funcs.py:square", "--inputs", "good.py:nope"], 2,
     "good.py: no function 'nope'"),
    ("tune-inputs-missing", ["tune", "funcs.py:square", "--inputs", "missing.py:make"], 2,
     "missing.py: no such file"),
    ("tune-no-function-no-variant", ["tune", "funcs.py"], 2, "name the function to tune"),
    ("tune-plot-unwritable", ["tune", "good.py:plain", "--plot", "blocker/p.png"], 2,
     "--plot blocker/p.png"),
    ("tune-html-over-source", ["tune", "good.py:plain", "--html", "funcs.py"], 2,
     "--html funcs.py: an existing Python source or notebook"),
    ("tune-plot-folder", ["tune", "good.py:plain", "--plot", "folder.py"], 2,
     "--plot folder.py: is a folder"),
    ("tune-calls-zero", ["tune", "good.py:plain", "--calls", "0"], 2,
     "--calls must be at least 1, not 0"),
    # profile SCRIPT.py / FILE.py:FUNC / MODULE:FUNC
    ("profile-missing", ["profile", "missing.py"], 2, "missing.py: no such file"),
    ("profile-empty", ["profile", "empty.py"], 2, "empty.py: the file is empty"),
    ("profile-binary", ["profile", "binary.py"], 2, "binary.py: a binary file"),
    ("profile-syntax", ["profile", "syntax.py"], 2, "syntax.py: syntax error at line 2"),
    ("profile-not-utf8", ["profile", "latin1.py"], 2, "latin1.py: not UTF-8 text"),
    ("profile-symlink-loop", ["profile", "loop.py"], 2, "loop.py: a symlink loop"),
    ("profile-folder", ["profile", "folder.py"], 2, "folder.py: a folder"),
    ("profile-function-syntax", ["profile", "syntax.py:f"], 2, "syntax error at line 2"),
    ("profile-unknown-function", ["profile", "funcs.py:nope"], 2,
     "funcs.py: no function 'nope'"),
    ("profile-needs-inputs", ["profile", "funcs.py:square"], 2, "square() takes x"),
    ("profile-unknown-module", ["profile", "no_such_module_xyz:f"], 2,
     "no module named 'no_such_module_xyz'"),
    ("profile-inputs-unknown", ["profile", "funcs.py:square", "--inputs", "funcs.py:nope"],
     2, "funcs.py: no function 'nope'"),
    ("profile-logdir-unwritable", ["profile", "good.py:plain", "--logdir", "blocker/cap"], 2,
     "--logdir blocker/cap"),
    ("profile-plot-unwritable", ["profile", "good.py:plain", "--plot", "blocker/p.png"], 2,
     "--plot blocker/p.png"),
    ("profile-html-over-script", ["profile", "funcs.py", "--html", "funcs.py"], 2,
     "--html funcs.py: an existing Python source or notebook"),
    ("profile-html-folder", ["profile", "funcs.py", "--html", "folder.py"], 2,
     "--html folder.py: is a folder"),
    # profile --read: a capture that cannot be read is a diagnosis (exit 1), a path that is
    # not there is bad input
    ("profile-read-missing", ["profile", "--read", "missing.xplane.pb"], 2,
     "missing.xplane.pb: no such file or folder"),
    ("profile-read-symlink-loop", ["profile", "--read", "loop.py"], 2,
     "loop.py: a symlink that leads to no file"),
    ("profile-read-binary", ["profile", "--read", "binary.py"], 1, ""),
    ("profile-read-empty", ["profile", "--read", "empty.py"], 1, ""),
    ("profile-read-html-over-source", ["profile", "--read", "binary.py", "--html",
                                       "funcs.py"], 2,
     "--html funcs.py: an existing Python source or notebook"),
    ("profile-compare-missing", ["profile", "--compare", "binary.py", "missing.xplane.pb"], 2,
     "missing.xplane.pb: no such file or folder"),
    # lint: a file that does not parse is a finding (TFP000, exit 1), not an error
    ("lint-missing", ["lint", "missing.py"], 2, "missing.py: no such file"),
    ("lint-empty", ["lint", "empty.py"], 0, ""),
    ("lint-binary", ["lint", "binary.py"], 1, ""),
    ("lint-syntax", ["lint", "syntax.py"], 1, ""),
    ("lint-not-utf8", ["lint", "latin1.py"], 1, ""),
    ("lint-bad-notebook", ["lint", "bad.ipynb"], 1, ""),
    ("lint-symlink-loop", ["lint", "loop.py"], 2, "loop.py: symlink loop"),
    ("lint-fix-binary", ["lint", "--fix", "binary.py"], 1, ""),
    ("lint-fix-syntax", ["lint", "--fix", "syntax.py"], 1, ""),
    ("lint-fix-bad-notebook", ["lint", "--fix", "bad.ipynb"], 1, ""),
    ("lint-fix-symlink-loop", ["lint", "--fix", "loop.py"], 2, "loop.py: symlink loop"),
    pytest.param("lint-fix-read-only", ["lint", "--unsafe-fixes", "readonly.py"], 2,
                 "readonly.py", id="lint-fix-read-only"),
    # doctor --plan takes no file: its bad input is a version
    ("doctor-plan-bad-version", ["doctor", "--plan", "two.five"], 2,
     "not a TensorFlow version"),
    ("doctor-html-over-source", ["doctor", "--html", "funcs.py"], 2,
     "--html funcs.py: an existing Python source or notebook"),
    ("doctor-workers-env-unset", ["doctor", "--workers", "env"], 2,
     "error: --workers: TF_CONFIG is not set; give HOST:PORT,HOST:PORT or set TF_CONFIG"),
    # a file for --workers must hold a TF_CONFIG: a binary one raised UnicodeDecodeError
    ("doctor-workers-binary-file", ["doctor", "--workers", "binary.py"], 2,
     "error: --workers: binary.py: not a TF_CONFIG file (not UTF-8 text)"),
    ("doctor-workers-python-file", ["doctor", "--workers", "funcs.py"], 2,
     "error: --workers: funcs.py: not a TF_CONFIG file"),
    ("doctor-workers-missing-file", ["doctor", "--workers", "conf/tf_config.json"], 2,
     "error: --workers: conf/tf_config.json: no such file"),
    ("doctor-plan-bad-driver", ["doctor", "--plan", "2.15.0", "--driver", "new"], 2,
     "not a driver version"),
    # explain --file: an empty log has its own verdict ("the log is empty", exit 0), and a
    # binary one is searched as it is (a core dump may hold the OOM line): by design
    ("explain-missing", ["explain", "--file", "missing.log"], 2, "no such file"),
    ("explain-folder", ["explain", "--file", "folder.py"], 2, "is a directory"),
    # a folder named as TEXT is a path too: it said "nothing wrong" about the word (stop 45)
    ("explain-folder-as-text", ["explain", "folder.py"], 2, "is a directory"),
    ("explain-symlink-loop", ["explain", "--file", "loop.py"], 2, "loop.py"),
    ("explain-empty", ["explain", "--file", "empty.log"], 0, ""),
    ("explain-binary", ["explain", "--file", "binary.log"], 0, ""),
]


def _cell_id(cell: Any) -> str:
    return cell.id if hasattr(cell, "id") and cell.id else cell[0]


def _cell_values(cell: Any) -> tuple[str, list[str], int, str]:
    return tuple(cell.values) if hasattr(cell, "values") else cell  # type: ignore[return-value]


# Runs every cell through tfperf.cli.main in one process; per cell: status, output, what
# raised out of main, whether TensorFlow got imported, the entries that changed.
DRIVER = textwrap.dedent("""\
    import contextlib, io, json, sys, traceback
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from test_bad_input import snapshot
    from tfperf.cli import main
    folder = Path(sys.argv[2])
    results = {}
    for key, argv in json.loads(Path(sys.argv[1]).read_text()):
        before = snapshot(folder)
        out, err, raised, rc = io.StringIO(), io.StringIO(), None, None
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                raised = traceback.format_exc()
        after = snapshot(folder)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        results[key] = {"rc": rc, "out": out.getvalue(), "err": err.getvalue(),
                        "raised": raised, "tensorflow": "tensorflow" in sys.modules,
                        "changed": changed}
    print(json.dumps(results))
""")
POISON = ('raise ImportError("tfperf imported TensorFlow before it checked the input "'
          '"(the bad-input matrix poisons it)")\n')


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.mktemp("bad-input")
    folder = make_inputs(base / "user")
    poison = base / "poison" / "tensorflow"
    poison.mkdir(parents=True)
    (poison / "__init__.py").write_text(POISON)
    cells = base / "cells.json"
    cells.write_text(json.dumps([(_cell_id(c), _cell_values(c)[1]) for c in CLI_CELLS]))
    driver = base / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(poison.parent), str(SRC)]),
           "XDG_CACHE_HOME": str(base / "cache"), "COLUMNS": "200"}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    env.pop("TF_CONFIG", None)  # `doctor --workers env` without it is a cell
    proc = subprocess.run([sys.executable, str(driver), str(cells), str(folder),
                           str(Path(__file__).parent)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(("key", "argv", "status", "says"),
                         [pytest.param(*_cell_values(c), id=_cell_id(c),
                                       marks=getattr(c, "marks", ())) for c in CLI_CELLS])
def test_command_line_cell(cli_results, key, argv, status, says):
    r = cli_results[key]
    shown = r["out"] + r["err"] + (r["raised"] or "")
    assert r["raised"] is None, f"tfperf {' '.join(argv)} raised:\n{r['raised']}"
    assert "Traceback" not in shown, shown
    assert r["changed"] == [], f"changed: {r['changed']}"
    assert not r["tensorflow"], "TensorFlow was imported"
    assert r["rc"] == status, shown
    lines = r["err"].strip().splitlines()
    if status == 2:
        assert len(lines) == 1, r["err"]
        assert lines[0].startswith(f"tfperf {argv[0]}: error: ") and says in lines[0], lines
    else:
        assert len(lines) <= 1, r["err"]  # at most lint's summary line


def test_explain_reads_a_pipe_without_dash(tmp_path):
    with open(EXPLAIN_LOG, "rb") as log:
        proc = subprocess.run([sys.executable, "-m", "tfperf", "explain"], stdin=log,
                              capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == 1 and "cuda-library-missing" in proc.stdout, proc.stderr


# --------------------------------------------------------------------------------------------
# the magics, in one IPython shell

MAGIC_CELLS = [
    ("tftimeit-empty", "%tftimeit", "no statement given"),
    ("tftimeit-syntax", "%tftimeit def f(:", "syntax error in the statement"),
    ("tftimeit-bad-option", "%tftimeit -n many double(x)", "-n wants a whole number"),
    ("tftimeit-unknown-function", "%tftimeit no_such_fn(x)", "NameError"),
    ("tfcompare-empty-variant", "%tfcompare double(x);; triple(x)", "an empty statement"),
    ("tfcompare-leading-separator", "%tfcompare ; double(x) triple(x)", "an empty statement"),
    ("tfcompare-one-variant", "%tfcompare double(x);", "at least two statements"),
    ("tfcompare-syntax", "%tfcompare double(x) triple(:", "syntax error in the statement"),
    ("tfcompare-name-without-statement", "%tfcompare fast= double(x) triple(x)",
     "names a variant but gives no statement"),
    ("tfprofile-syntax", "%%tfprofile\ndef f(:\n    pass\n", "syntax error"),
    ("tfprofile-no-statement", "%tfprofile", "no statement given"),
    ("tfprofile-logdir-unwritable", "%%tfprofile --capture --logdir {folder}/blocker/cap\n"
                                    "y = double(x)\n", "--logdir"),
    ("tflint-unknown-rule", "%tflint NOSUCH", "no rule matches NOSUCH"),
    ("tftune-unknown-function", "%tftune no_such_fn(x)", "NameError"),
    ("tftune-syntax", "%tftune double(", "syntax error"),
    ("tftune-empty", "%tftune", "give one call"),
    ("tfdoctor-extra-words", "%tfdoctor please", "unexpected 'please'"),
    ("tfdoctor-bad-timeout", "%tfdoctor --timeout -1", "must be positive"),
]


@pytest.fixture(scope="module")
def magic_shell(tmp_path_factory):
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    folder = make_inputs(tmp_path_factory.mktemp("bad-input-magics") / "user")
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext tfperf", store_history=True)
    shell.run_cell("def double(v):\n    return v * 2\ndef triple(v):\n    return v * 3\n"
                   "x = 3\n", store_history=True)
    return shell, folder


def _run(shell: Any, source: str) -> tuple[Any, str]:
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        result = shell.run_cell(source, store_history=True)
    shown = "\n".join(o.data.get("text/plain", "") for o in cap.outputs)
    return result, cap.stdout + cap.stderr + shown


@pytest.mark.parametrize(("key", "source", "says"), MAGIC_CELLS, ids=[c[0] for c in MAGIC_CELLS])
def test_magic_cell(magic_shell, key, source, says):
    from tfperf.notebook.errors import MagicError

    shell, folder = magic_shell
    before = snapshot(folder)
    result, shown = _run(shell, source.format(folder=folder))
    error = result.error_in_exec or result.error_before_exec
    assert isinstance(error, MagicError), (error, shown)
    assert says in str(error) and "\n" not in str(error), str(error)
    assert "Traceback" not in shown, shown
    assert snapshot(folder) == before


def test_a_cell_that_does_not_parse_is_a_lint_finding_not_an_error(magic_shell):
    shell, _ = magic_shell
    result, shown = _run(shell, "%%tflint\ndef f(:\n    pass\n")
    assert result.error_in_exec is None and result.error_before_exec is None
    assert "TFP000" in shown and "Traceback" not in shown
