"""Every subcommand's --help says what its exit status means (stop 45: explain, rules, rule
and demo said nothing, while docs/explain.md and the README promise 0/1/2 and "non-zero only
when a step really failed")."""

from __future__ import annotations

import argparse

import pytest

from tfperf.cli import build_parser


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:  # argparse has no public accessor for subcommands
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_help_states_the_exit_status(command):
    text = " ".join(_subparsers()[command].format_help().split())
    assert "Exit status" in text, text
