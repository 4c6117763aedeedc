"""The README's parallel run (``pytest -n 2 --dist loadfile``, tests/xdist_units.py): which
tests a worker runs as one unit, and a test marked ``alone`` with no other test beside it. The
turn is checked on a generated suite run by real pytest-xdist workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from xdist_units import LONG_FIRST, SESSION_UNITS, first_to_last, unit_of

HERE = Path(__file__).parent


def test_a_test_file_is_its_own_unit():
    assert unit_of("tests/tune/test_tune_cases.py::test_x[a-b]") == "tests/tune/test_tune_cases.py"
    assert unit_of("tests/test_cli.py::test_y") == "tests/test_cli.py"
    assert unit_of("tests/bench/test_bench_cli.py::test_z") == "tests/bench/test_bench_cli.py"


def test_files_sharing_a_costly_session_fixture_are_one_unit():
    assert (unit_of("tests/html/test_html_browser.py::test_a")
            == unit_of("tests/html/test_html_reports.py::Test::test_b[x]"))
    assert (unit_of("tests/profile_read/test_read_costs.py::test_a")
            == unit_of("tests/profile_read/test_read_vs_xprof.py::test_b"))
    assert (unit_of("tests/bench/test_bench_compare.py::test_a")
            == unit_of("tests/bench/test_bench_plot.py::test_b"))
    for prefix in SESSION_UNITS:  # every entry names something that is there
        assert (HERE.parent / prefix).exists(), prefix


def test_the_longest_units_are_handed_out_first_and_the_rest_keep_their_order():
    queue = ["tests/doctor/test_explain_tail.py", "tests/lint/test_lint_engine.py",
             "tests/tune/test_tune_cases.py", "tests/html/", "tests/core/test_files.py",
             "tests/memory/test_memory_leaks.py"]
    assert first_to_last(queue) == [
        "tests/memory/test_memory_leaks.py", "tests/tune/test_tune_cases.py", "tests/html/",
        "tests/doctor/test_explain_tail.py", "tests/lint/test_lint_engine.py",
        "tests/core/test_files.py"]
    for unit in LONG_FIRST:  # each is a unit of this suite
        assert unit_of(unit + ("x.py::t" if unit.endswith("/") else "::t")) == unit
        assert (HERE.parent / unit).exists(), unit


SUITE = {
    "pytest.ini": """\
        [pytest]
        markers =
            alone: loads both cores on purpose
        """,
    "conftest.py": """\
        from xdist_units import _xdist_turn, pytest_xdist_make_scheduler  # noqa: F401
        """,
    "record.py": """\
        import json, os, time

        def meet(name, other, timeout=120):
            # wait until the test named `other` runs too (a barrier of two files)
            folder = os.path.dirname(os.environ["RECORD"])
            open(os.path.join(folder, name + ".here"), "w").close()
            end = time.monotonic() + timeout
            while not os.path.exists(os.path.join(folder, other + ".here")):
                assert time.monotonic() < end, f"{other} never ran beside {name}"
                time.sleep(0.05)

        def record(name, seconds):
            start = time.monotonic()
            time.sleep(seconds)
            with open(os.environ["RECORD"], "a") as fh:
                fh.write(json.dumps([name, os.environ.get("PYTEST_XDIST_WORKER", ""),
                                     start, time.monotonic()]) + "\\n")
        """,
    "test_alone.py": """\
        import pytest
        from record import record

        @pytest.mark.alone
        def test_spins_both_cores():
            record("alone", 1.5)
        """,
    **{f"test_other{i}.py": f"""\
        import os

        import pytest
        from record import meet, record

        @pytest.mark.parametrize("n", range(6))
        def test_short(n):
            if n == 0 and os.environ.get("PYTEST_XDIST_WORKER"):  # beside the other file's
                meet("other{i}", "other{3 - i}")
            record("other{i}", 0.25)
        """ for i in (1, 2)},
}


def _run_suite(tmp_path: Path, *args: str) -> list[list]:
    pytest.importorskip("xdist")
    for name, text in SUITE.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    record = tmp_path / "record.jsonl"
    # not this run's worker variables: under the README's -n 2 the "plain" run took them for
    # its own and waited at the barrier for a file that runs after it (stop 45's second run)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env.update(RECORD=str(record),
               PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--basetemp", str(tmp_path / "basetemp"), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_under_xdist_no_test_runs_beside_an_alone_one(tmp_path):
    ran = _run_suite(tmp_path, "-n", "2", "--dist", "loadfile")
    ((_, _, start, end),) = [r for r in ran if r[0] == "alone"]
    others = [r for r in ran if r[0] != "alone"]
    assert len(others) == 12
    beside = [r for r in others if r[2] < end and r[3] > start]
    assert not beside, (start, end, beside)
    # the twin: tests not marked alone run side by side (the two files' first tests wait for
    # each other), on both workers
    assert {r[1] for r in ran} == {"gw0", "gw1"}


def test_a_plain_run_is_serial_and_takes_no_turn(tmp_path):
    ran = _run_suite(tmp_path)
    assert len(ran) == 13 and {r[1] for r in ran} == {""}
    assert not list((tmp_path / "basetemp").glob("*turn*"))
