"""tfperf's pytest plugin (entry point ``pytest11``): counters asserted in tests, and the
regression gate over benchmarks timed inside a test suite.

- ``@pytest.mark.tfperf(max_traces=1, max_host_syncs=0)``: the test body runs watched
  (:mod:`tfperf.profile.watcher`) and fails with the counter, its value, the limit and the
  lines behind it when a counter exceeds its limit. No timing. Limits: ``max_traces``,
  ``max_host_syncs``, ``max_eager_ops``, ``max_graph_ops``, ``max_xla_compilations``.
- ``tfperf_bench(fn, *args, name=None, **kwargs)``: times ``fn`` with the measurement core
  (``tfperf.bench.compare``, counters on) and returns its
  :class:`~tfperf.bench.result.VariantResult`; the session keeps every result. A function
  that raises (or times out) fails the test with its error.
- ``--tfperf-save PATH``: the session's results as one saved run (the same JSON as
  ``tfperf bench --save``); ``--tfperf-store DIR``: as the next run in DIR/<machine>/;
  ``--tfperf-compare PATH``: judged against a saved run with the same rules as
  ``tfperf bench --compare-to`` (``--tfperf-fail-over``), the report in the terminal summary,
  and the session fails (exit status 1) on a regression; a time whose noise control says the
  machine changed since the saved run is inconclusive, not a failure, unless
  ``--tfperf-strict``.
- Under pytest-xdist (``-n N``) each worker sends its results to the controller, which saves
  and judges the whole session once (each worker used to save its own share over the same
  file, and the controller, holding none, passed a regression as "nothing saved").

This module is loaded by every pytest run in an environment where tfperf is installed, so
it imports only pytest and the standard library at load; TensorFlow and NumPy load only
when a marked test or the fixture runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

LIMITS = {"max_traces": "traces", "max_host_syncs": "host_syncs",
          "max_eager_ops": "eager_ops", "max_graph_ops": "graph_ops",
          "max_xla_compilations": "xla_compilations"}

_RESULTS = pytest.StashKey[list]()
_GATE = pytest.StashKey[Any]()
_WORKER_RECORDS = pytest.StashKey[list]()  # the controller's: one record per xdist worker
_WORKER_OUTPUT = "tfperf_record"  # the key of a worker's record in xdist's workeroutput


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tfperf", "tfperf: TensorFlow performance counters and gate")
    group.addoption("--tfperf-save", metavar="PATH",
                    help="save the tfperf_bench results of this session as a run (JSON)")
    group.addoption("--tfperf-store", metavar="DIR",
                    help="save them as the next numbered run in DIR/<machine>/")
    group.addoption("--tfperf-compare", metavar="PATH",
                    help="judge them against a saved run; a regression fails the session")
    group.addoption("--tfperf-fail-over", metavar="PCT", default=None,
                    help="a slowdown fails only beyond this and significant (default 10%%)")
    group.addoption("--tfperf-strict", action="store_true",
                    help="judge times even when the noise control says the machine changed "
                         "since the saved run (otherwise: inconclusive, not a failure)")
    group.addoption("--tfperf-budget", metavar="SECONDS", type=float, default=1.0,
                    help="seconds of timing rounds per tfperf_bench call (default 1)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "tfperf(max_traces=None, max_host_syncs=None, max_eager_ops=None, "
                   "max_graph_ops=None, max_xla_compilations=None): fail the test when the "
                   "TensorFlow counters of its body exceed these limits (tfperf)")
    config.stash[_RESULTS] = []
    _check_gate_options(config)


def _check_gate_options(config: pytest.Config) -> None:
    """The gate's paths and threshold, checked before any test runs (a bad one would
    otherwise fail the session after the whole suite, or write over a user's file)."""
    save, store, against = (config.getoption("tfperf_save"), config.getoption("tfperf_store"),
                            config.getoption("tfperf_compare"))
    if not against and (config.getoption("tfperf_fail_over") is not None
                        or config.getoption("tfperf_strict")):
        # a gate that judges nothing passes: say so before the suite runs
        raise pytest.UsageError("tfperf: error: --tfperf-fail-over and --tfperf-strict judge "
                                "a comparison: give --tfperf-compare PATH")
    if not (save or store or against):
        return
    from tfperf.bench.gate_command import parse_fail_over
    from tfperf.bench.record import RecordError, load_record
    from tfperf.cli import UsageError
    from tfperf.core.usercode import UserCodeError, check_output_path

    try:
        for option, out in (("--tfperf-save", save), ("--tfperf-store", store)):
            if out:
                check_output_path(out, option, folder=option == "--tfperf-store")
        if against:
            parse_fail_over(config.getoption("tfperf_fail_over"))
            load_record(against)
    except (UserCodeError, RecordError, UsageError) as exc:
        raise pytest.UsageError(f"tfperf: error: {exc}") from None


def _limits(item: pytest.Item) -> dict[str, int]:
    limits: dict[str, int] = {}
    for mark in item.iter_markers("tfperf"):
        if mark.args:
            pytest.fail(f"@pytest.mark.tfperf takes keyword limits only: {', '.join(LIMITS)}",
                        pytrace=False)
        for key, value in mark.kwargs.items():
            if key not in LIMITS:
                pytest.fail(f"@pytest.mark.tfperf: unknown limit {key!r}; known: "
                            f"{', '.join(LIMITS)}", pytrace=False)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                pytest.fail(f"@pytest.mark.tfperf: {key} must be a non-negative int, not "
                            f"{value!r}", pytrace=False)
            limits.setdefault(key, value)  # the closest marker wins
    return limits


def counter_failure(limits: dict[str, int], counters: Any) -> str | None:
    """The failure message when ``counters`` exceed ``limits``; None when within them."""
    lines = []
    for key, limit in limits.items():
        name = LIMITS[key]
        value = counters[name]
        if value is None:
            why = counters.unavailable.get(name, "not visible in this TensorFlow")
            lines.append(f"{name}: cannot check {key}={limit}: {why}")
            continue
        if value <= limit:
            continue
        lines.append(f"{name} = {value}, over {key}={limit}")
        for row in (counters.sites.get(name) or [])[:5]:
            where = f"{row.get('path')}:{row.get('line')}" if row.get("path") else "?"
            what = ""
            if name == "traces":
                causes = "; ".join(
                    f"argument `{c['argument']}` changed ({c['kind'].replace('_', ' ')}: "
                    f"{', '.join(map(str, c.get('examples', [])[:3]))})"
                    for c in row.get("causes", [])[:2])
                what = f"tf.function {row.get('function')} traced {row['count']}×" + (
                    f": {causes}" if causes else "")
            else:
                kinds = ", ".join(f"{k} ×{n}" for k, n in (row.get("kinds") or {}).items())
                what = f"{row['count']}" + (f" ({kinds})" if kinds else "")
            lines.append(f"    {where}: {what}")
    if not lines:
        return None
    return "tfperf counters over their limits:\n  " + "\n  ".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    limits = _limits(item)
    if not limits:
        return (yield)
    from tfperf.bench.counters import from_watch
    from tfperf.profile.watcher import watch

    watcher = watch()
    with watcher:
        result = yield
    message = counter_failure(limits, from_watch(watcher.obs))
    if message:
        pytest.fail(message, pytrace=False)
    return result


class BenchFixture:
    """``tfperf_bench(fn, *args, name=None, **kwargs)``: see the module docstring."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.calls = 0

    def __call__(self, fn: Callable[..., Any], *args: Any, name: str | None = None,
                 **kwargs: Any) -> Any:
        from tfperf.bench import compare

        config = self.request.config
        self.calls += 1
        label = name or self.request.node.nodeid + (f"[{self.calls}]" if self.calls > 1 else "")
        gated = bool(config.getoption("tfperf_compare") or config.getoption("tfperf_save")
                     or config.getoption("tfperf_store"))
        yardstick = None
        if gated:
            from tfperf.bench.yardstick import make_yardstick

            yardstick = make_yardstick()
        report = compare({label: fn}, args, kwargs, budget=config.getoption("tfperf_budget"),
                         counters=True, check_equivalence=False, yardstick=yardstick,
                         target_rel_iqr=0.0 if gated else 0.03)
        config.stash[_RESULTS].append(report)
        result = report[label]
        if result.error:  # compare() keeps going past a raising variant; a test must not
            pytest.fail(f"tfperf_bench: {label}: {result.error}", pytrace=False)
        return result


@pytest.fixture
def tfperf_bench(request: pytest.FixtureRequest) -> BenchFixture:
    return BenchFixture(request)


def _session_record(config: pytest.Config) -> dict[str, Any] | None:
    reports = config.stash.get(_RESULTS, [])
    if not reports:
        return None
    from tfperf.bench.record import run_record
    from tfperf.bench.result import CompareResult

    variants = [v for r in reports for v in r.variants]
    merged = CompareResult(reports[0].machine, variants[0].name, variants,
                           dict(reports[0].settings))
    record = run_record(merged, file=str(config.rootpath), label="pytest")
    # each fixture call timed its own yardstick in its own rounds: kept per variant
    for saved, report in zip(record["variants"], (r for r in reports for _ in r.variants),
                             strict=True):
        saved["yardstick_s"] = report.yardstick_s
    return record


def _merged(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """One run from the records of a session's processes (xdist workers): every variant, and
    the machine figures of the busiest process (its load is what the noise control reads)."""
    records = [r for r in records if r]
    if not records:
        return None

    def load(r: dict[str, Any]) -> float:
        value = (r.get("machine") or {}).get("load_average_1min")
        return float(value) if isinstance(value, (int, float)) else -1.0

    busiest: dict[str, Any] = max(records, key=load)
    out = dict(busiest)
    out["variants"] = [v for r in records for v in r["variants"]]
    return out


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist, on the controller: a worker finished; keep the results it sent."""
    text = (getattr(node, "workeroutput", None) or {}).get(_WORKER_OUTPUT)
    if text:
        import json

        node.config.stash.setdefault(_WORKER_RECORDS, []).append(json.loads(text))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    save, store, against = (config.getoption("tfperf_save"), config.getoption("tfperf_store"),
                            config.getoption("tfperf_compare"))
    if not (save or store or against):
        return
    record = _session_record(config)
    if hasattr(config, "workerinput"):  # an xdist worker: the controller saves and judges
        if record is not None:
            from tfperf.core import render

            output: dict[str, Any] = config.workeroutput  # type: ignore[attr-defined]
            output[_WORKER_OUTPUT] = render.to_json(record, indent=None)
        return
    record = _merged([r for r in (record, *config.stash.get(_WORKER_RECORDS, [])) if r])
    if record is None:
        config.stash[_GATE] = "tfperf: no tfperf_bench results in this session: nothing saved"
        return
    from tfperf.bench.gate import compare_runs
    from tfperf.bench.gate_command import parse_fail_over
    from tfperf.bench.record import load_record, save_record
    from tfperf.bench.storage import store_run

    notes = []
    try:
        if save:
            notes.append(f"tfperf: run saved to {save_record(record, save)}")
        if store:
            notes.append(f"tfperf: run stored as {store_run(record, store)}")
        if against:
            baseline = load_record(against)
            gate = compare_runs(baseline, record, baseline_source=against,
                                fail_over=parse_fail_over(config.getoption("tfperf_fail_over")),
                                strict=bool(config.getoption("tfperf_strict")))
            config.stash[_GATE] = (gate, notes)
            if gate.exit_status and session.exitstatus == 0:
                session.exitstatus = pytest.ExitCode.TESTS_FAILED
            return
    except Exception as exc:  # a bad baseline or path: the report says it, never a traceback
        notes.append(f"tfperf: error: {exc}")
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    config.stash[_GATE] = (None, notes)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_GATE, None)
    if state is None:
        return
    terminalreporter.section("tfperf regression gate")
    if isinstance(state, str):
        terminalreporter.write_line(state)
        return
    gate, notes = state
    for note in notes:
        terminalreporter.write_line(note)
    if gate is not None:
        from tfperf.bench.gate_report import to_text

        terminalreporter.write_line(to_text(gate))
