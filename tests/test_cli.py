import re
import subprocess
import sys
from pathlib import Path

import pytest

from tfperf import __version__
from tfperf.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_version_via_python_m():
    out = subprocess.run([sys.executable, "-m", "tfperf", "--version"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"tfperf {__version__}"


def test_unknown_subcommand_is_usage_error():
    with pytest.raises(SystemExit) as exc:
        main(["no-such-command"])
    assert exc.value.code == 2


def test_no_subcommand_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: tfperf" in capsys.readouterr().out


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"```sh\n(.+?)\n```", readme)
    assert len(commands) == 2, "the README gives exactly two set-up commands"
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()


def test_base_cli_does_not_import_tensorflow():
    code = ("import sys; from tfperf.cli import build_parser; build_parser(); "
            "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_the_subcommand_table_matches_what_the_modules_register():
    import argparse

    from tfperf import cli

    found = {}
    for mod in cli._available_modules():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        mod.register(sub)
        found.update({name: mod.__name__ for name in sub.choices})
    assert found == cli.SUBCOMMANDS
    # A run of one subcommand builds only its own module's parser.
    sub = next(a for a in cli.build_parser("lint")._actions
               if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == {"lint", "rules", "rule", "demo"}


def _poisoned_tensorflow(tmp_path: Path) -> dict[str, str]:
    """An environment where importing TensorFlow fails loudly: what runs in it proves it
    decided before TensorFlow would load."""
    import os

    poison = tmp_path / "poison" / "tensorflow"
    poison.mkdir(parents=True)
    (poison / "__init__.py").write_text("raise ImportError('TensorFlow imported')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(poison.parent),
                                                        str(ROOT / "src")])}


@pytest.mark.parametrize(("argv", "says"), [
    (["bench", "nosuch.py"], "tfperf bench: error: nosuch.py: no such file"),
    (["profile", "broken.py"], "tfperf profile: error: broken.py: syntax error at line 2"),
    (["profile", "binary.py"], "tfperf profile: error: binary.py: a binary file"),
    (["bench", "broken.py"], "tfperf bench: error: broken.py: syntax error at line 2"),
    (["tune", "step.py:step"], "tfperf tune: error: step.py: no @tfperf.inputs function; "
                               "give --inputs FILE.py:FN"),
    (["tune", "step.py:nope", "--inputs", "step.py:step"],
     "tfperf tune: error: step.py: no function 'nope' at module level (it defines step)"),
])
def test_bad_input_is_one_line_before_tensorflow_is_imported(tmp_path, argv, says):
    # Issue 24: `tfperf bench nosuch.py` imported TensorFlow (6-33 s) before saying so; a
    # script that does not parse gave `profile` an empty report, a traceback and exit 1.
    (tmp_path / "broken.py").write_text("import tensorflow as tf\nfor x in range(3)\n")
    (tmp_path / "binary.py").write_bytes(b"\x7fELF\x00\x00\x01")
    (tmp_path / "step.py").write_text("import tensorflow as tf\ndef step(x):\n"
                                      "    return x * 2\n")
    out = subprocess.run([sys.executable, "-m", "tfperf", *argv], cwd=tmp_path,
                         env=_poisoned_tensorflow(tmp_path), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.splitlines() == [out.stderr.strip()] and says in out.stderr, out.stderr
    assert out.stdout == ""


def test_the_demo_says_what_each_status_means_in_words(capsys, monkeypatch):
    # Issue 24: "(exit status 1)" after lint's step read as a failure; lint found the slow
    # example's planted patterns, which is the point of that step.
    from tfperf import examples
    from tfperf.core import tensorflow_logs

    real = examples.demo_steps
    monkeypatch.setattr(examples, "demo_steps",
                        lambda **kw: [s for s in real(**kw) if s[1][0] == "lint"])
    monkeypatch.setenv(tensorflow_logs.VARIABLE, "2")  # the user's level: no TF import here
    assert main(["demo", "--no-compute"]) == 0
    out = capsys.readouterr().out
    assert "exit status" not in out
    assert "lint found findings: expected on the slow example" in out
    assert "done: no findings" in out  # the fixed example


def test_the_demo_calls_only_real_failures_failures():
    from tfperf.examples import demo_outcome

    assert demo_outcome("lint", 1, "lint found findings: expected") == \
        (False, "lint found findings: expected")
    assert demo_outcome("doctor", 0, None) == (False, "done: no failing check")
    failed, words = demo_outcome("bench", 1, None)
    assert failed and words.startswith("FAILED: a variant failed")
    failed, words = demo_outcome("lint", 2, "lint found findings: expected")
    assert failed and words == "FAILED: the step could not run (exit status 2)"


@pytest.mark.parametrize("module", ["tfperf", "tfperf.cli"])
def test_python_m_says_bad_input_in_one_line(module, tmp_path):
    """`python -m tfperf.cli` (as benchmarks/bench_profile_read.py runs it) ran main() of a
    second copy of the module: the commands' UsageError was not the one it caught."""
    import tfperf

    env = {"PYTHONPATH": str(Path(tfperf.__file__).parents[1]), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", module, "profile", "--read", str(tmp_path),
                           "--compare", "a", "b"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == ("tfperf profile: error: give --read PATH or --compare A B, "
                                   "not both")
