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
