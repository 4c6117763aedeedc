"""How the README's parallel run (``pytest -n 2 --dist loadfile``, pytest-xdist) splits the
suite between its two workers: the work units a worker runs whole, and the turn that lets a
test marked ``alone`` run with no other test beside it. tests/conftest.py imports both; a plain
``pytest FILE`` (no ``-n``) runs serially and neither does anything."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator

import pytest

# Under ``--dist loadfile`` a worker runs whole test files, so a module fixture is made once.
# These files share a session fixture that costs a child process or more, and run as one unit
# so that it is made once, not once per worker: tests/html (every report kind by its command),
# tests/profile_read (the real captures), the bench case study's comparison.
SESSION_UNITS = {
    "tests/html/": "tests/html/",
    "tests/profile_read/": "tests/profile_read/",
    "tests/bench/test_bench_compare.py": "bench case_result",
    "tests/bench/test_bench_plot.py": "bench case_result",
}


# The units that took longest (stop 43's by-file durations, stop 45's parallel run), handed
# out first, longest first: xdist hands out the units with the most tests first, and a unit
# of a few long tests started last ran on one worker after the other had finished (a unit
# that is not here keeps xdist's order, after these).
LONG_FIRST = (
    "tests/memory/test_memory_leaks.py",
    "tests/tune/test_tune_cases.py",
    "tests/html/",
    "tests/profile/test_profile_trial.py",
    "tests/tune/test_tune_varied_ints.py",
    "tests/bench/test_bench_cli.py",
    "tests/tune/test_tune_budget.py",
    "tests/lint/test_lint_robustness.py",
    "tests/tune/test_tune_isolate.py",
    "tests/memory/test_memory_view.py",
    "tests/core/test_tensorflow_logs.py",
    "tests/memory/test_memory_fit.py",
    "tests/memory/test_memory_bench_suite.py",
    "tests/bench/test_bench_deadline.py",
    "tests/tune/test_tune_trust.py",
    "tests/profile/test_profile_cli.py",
)


def first_to_last(units: list[str]) -> list[str]:
    """``units`` (xdist's order) in the order they are handed out: LONG_FIRST's first."""
    rank = {u: i for i, u in enumerate(LONG_FIRST)}
    return sorted(units, key=lambda u: rank.get(u, len(rank)))  # stable: the rest as they were


def unit_of(nodeid: str) -> str:
    """The work unit of a test under ``--dist loadfile``: its file, or its SESSION_UNITS entry."""
    path = nodeid.split("::", 1)[0]
    return next((u for prefix, u in SESSION_UNITS.items() if path.startswith(prefix)), path)


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # optional: a run without pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` with SESSION_UNITS, LONG_FIRST first. Not ``loadgroup`` +
    ``xdist_group`` marks: under pytest 9.2 xdist 3.8 no longer sees the marks (it renames
    node ids, which pytest now builds otherwise: pytest-xdist issue 1386) and silently
    spreads every test, module fixtures and all, over both workers."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SessionUnits(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the queue is whole by the first hand-out
                self.ordered = True
                for unit in reversed(first_to_last(list(self.workqueue))):
                    self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)

    return SessionUnits(config, log)


@pytest.fixture(autouse=True)
def _xdist_turn(request: pytest.FixtureRequest,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Under xdist, a test marked ``alone`` runs while the other worker waits, and every other
    test takes a shared turn. A test that spins two busy processes on a 2-core machine must
    not also have the other worker's test beside it (its checks hold at a known load), nor
    slow that test's timings (tune's, bench's) beyond what a busy machine does. It costs
    little: the other worker would get a third of the cores meanwhile anyway. A readers-writer
    lock made of two flock()s (a gate first, so a waiting ``alone`` test is not starved)."""
    workerinput = getattr(request.config, "workerinput", None)
    if workerinput is None:  # a plain, serial run
        yield
        return
    base = tmp_path_factory.getbasetemp().parent / "xdist-turn"  # the workers' common folder
    alone = request.node.get_closest_marker("alone") is not None
    with open(f"{base}.gate", "a") as gate, open(f"{base}.turn", "a") as turn:
        fcntl.flock(gate, fcntl.LOCK_EX)
        fcntl.flock(turn, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        if not alone:  # an alone test keeps the gate: the other worker queues behind it
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(turn, fcntl.LOCK_UN)
            fcntl.flock(gate, fcntl.LOCK_UN)
