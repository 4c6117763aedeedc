"""The input share is one figure: `--read`'s step-time breakdown, its input-bound verdict and
tfperf's own reading of the capture (`profile/xplane.py`) say the same.

An eager loop (`for batch in ds:` then the step) fetches each batch before the step's marker
opens: the wait lies between the markers. It is the step's input all the same, and part of its
time; the breakdown used to show "input 0.0 %" beside a verdict that divided every wait of the
capture by the steps' time alone."""

from __future__ import annotations

import pytest

from tfperf.profile import xplane
from tfperf.profile.read.report import as_capture_summary, read, summary_text
from tfperf.profile.read.summary import HOST_PREFIX
from tfperf.profile.xplane import waits_before_steps

pytestmark = pytest.mark.tf


def test_a_wait_counts_for_the_step_it_fed():
    windows = [(10, 20), (30, 40), (50, 60)]
    waits = [(5, 1),    # before the first step: its batch
             (12, 2),   # inside step 0: not a wait before any step
             (25, 4),   # between steps 0 and 1: step 1's batch
             (30, 8),   # at step 1's start: inside it
             (45, 5),   # step 2's batch (it ends as the step opens)
             (65, 32)]  # after the last step (the fetch that ends the loop): fed nothing
    assert waits_before_steps(windows, waits) == [1, 4, 5]
    assert waits_before_steps([], waits) == []


def test_only_the_fetch_that_fed_the_step_counts():
    """A gap may hold waits that fed no step: an unmarked validation loop between epochs, a
    peek at the dataset before the loop, another thread's wait that runs into the step. Only
    the last wait that ended by the step's start is its batch (a real capture of a prefetched
    train loop with a slow validation loop read "69 % input-bound" from the validation's
    waits added to the next epoch's first step)."""
    windows = [(100, 110), (200, 210)]
    val = [(120, 15), (140, 15), (160, 15), (180, 15)]  # the validation loop's batches
    assert waits_before_steps(windows, [*val, (196, 2)]) == [0, 2]
    peek = [(0, 40), (95, 3)]  # next(iter(ds)) long before, then step 0's own batch
    assert waits_before_steps(windows, peek) == [3, 0]
    into = [(150, 55)]  # runs into step 1: not a fetch that finished before it
    assert waits_before_steps(windows, into) == [0, 0]


def test_overlapping_windows_leave_no_gap():
    assert waits_before_steps([(0, 50), (40, 60)], [(45, 3)]) == [0, 0]


def _host_share(summary) -> float:
    rows = [r for b in summary.breakdowns if b.where.startswith(HOST_PREFIX) for r in b.steps]
    return sum(r.input_s for r in rows) / sum(r.duration_s for r in rows)


def test_eager_loop_breakdown_verdict_and_live_reading_agree(capture_of):
    path = capture_of("eager_input")
    report = read(path)
    (summary,) = report.summaries
    table = _host_share(summary)
    # every step waited for its batch (10 ms of Python per element; the first has no prefetch)
    assert table > 0
    assert sum(r.input_before_s for b in summary.breakdowns for r in b.steps) > 0
    assert as_capture_summary(summary).input_share == pytest.approx(table, rel=1e-9)
    verdict = [f for f in report.verdicts if f.code == "profile.input_bound"]
    if verdict:  # whether it fires depends on the machine's load; its figure does not differ
        assert verdict[0].data["value"] == pytest.approx(table, rel=1e-9)
    # tfperf's own reading on the same basis: a wait before a step by its whole duration
    # (the map a fetch runs on the caller's thread is nested in it; by self time alone the
    # table read 1 % where the live reading read 10 % of a real capture)
    live = xplane.summarise(path)
    assert live.input_share == pytest.approx(table, rel=0.01)
    assert f"{100 * table:.1f} %" in summary_text(summary)
    assert "includes the input wait before it" in summary_text(summary)


def test_steps_that_fetch_inside_their_marker_are_unchanged(capture_of):
    (summary,) = read(capture_of("input")).summaries
    assert sum(r.input_before_s for b in summary.breakdowns for r in b.steps) == 0
    assert "includes the input wait before it" not in summary_text(summary)


def test_compare_and_the_header_time_a_step_as_the_breakdown_does(capture_of):
    """--compare's step rows (and its speed-up) on the breakdown's basis: adding prefetch to
    an eager loop shortens the wait before each marker, which marker-only step times never
    show ("same median step time" beside a smaller input row)."""
    import statistics

    from tfperf.profile.read.compare import compare

    path = str(capture_of("eager_input"))
    (summary,) = read(path).summaries
    fed = summary.fed_step_times
    assert fed and statistics.median(fed) > summary.step_s
    rows = {n: a for n, a, _ in compare(path, path).rows}
    assert rows["step (median)"] == pytest.approx(statistics.median(fed))
    assert rows["step (mean)"] == pytest.approx(statistics.fmean(fed))
    assert "input wait before its marker" in compare(path, path).text()
    assert "with the input wait before each step: median" in summary_text(summary)
    (inside,) = read(capture_of("input")).summaries  # fetched inside the markers: unchanged
    assert inside.fed_step_times is None
    assert "with the input wait before each step" not in summary_text(inside)


def test_a_validation_loop_between_epochs_feeds_no_training_step(capture_of, monkeypatch):
    """A real eager loop: a prefetched train pipeline, then an unmarked validation loop whose
    map sleeps 50 ms an element. Its waits fed no training step: the next epoch's first step
    takes only its own fetch, by that fetch's whole duration (the pipeline work it ran on the
    caller's thread included), so the table and tfperf's own reading still agree."""
    from tfperf.profile.read import summary as summary_module

    seen: list[list[tuple[int, int]]] = []

    def spy(windows, waits):
        seen.append(sorted(waits))
        return waits_before_steps(windows, seen[-1])

    monkeypatch.setattr(summary_module, "waits_before_steps", spy)
    path = capture_of("eager_val")
    (summary,) = read(path).summaries
    (host,) = [b for b in summary.breakdowns if b.where.startswith(HOST_PREFIX)]
    assert len(host.steps) == 6 and len(seen) == 1
    gap = (summary.step_windows[2][1], summary.step_windows[3][0])  # between the epochs
    waits = [d for s, d in seen[0] if gap[0] <= s < gap[1]]
    assert len(waits) >= 4  # the validation loop's three batches, its end, the train fetch
    before = host.steps[3].input_before_s * 1e12
    assert before == pytest.approx(waits[-1], abs=1)  # only the fetch that fed the step
    assert before < sum(waits[:-1])  # the validation waits (3 x 50 ms of sleep) are not
    assert report_json_step(path, 3)["input_before_s"] == host.steps[3].input_before_s
    live = xplane.summarise(path)
    assert live.input_share == pytest.approx(_host_share(summary), rel=0.01)


def report_json_step(path, index: int) -> dict:
    """Step ``index`` of the first host's breakdown in `--read --json`: a step's time there
    includes the wait before it, so the JSON says how much."""
    import json

    doc = json.loads(read(path).to_json())
    (host,) = [v for k, v in doc["captures"][0]["per_step"].items() if k.startswith(HOST_PREFIX)]
    return host[index]


@pytest.mark.parametrize("name", ["input", "eager_val", "xla"])
def test_own_capture_and_read_give_one_op_table_and_eager_share(capture_of, name):
    """`tfperf profile SCRIPT` and `tfperf profile --read <its logdir>` read one capture: the
    same eager share and the same top ops. The live reading skipped tf.data's `Iterator::…`
    events and the CPU's XLA ops (`hlo_op`), so a real eager loop over a dataset read "eager
    share 100 %" with IteratorGetNext on top there, and 90 % with Iterator::Root::Prefetch on top
    under `--read` (here: 48 % vs 11 % on "input"; the XLA steps' ops were one
    `__inference_…` row)."""
    path = capture_of(name)
    (summary,) = read(path).summaries
    read_view, live = as_capture_summary(summary), xplane.summarise(path)
    assert live.eager_share == pytest.approx(read_view.eager_share, abs=1e-9)
    assert live.host_op_s == pytest.approx(read_view.host_op_s, rel=1e-9)
    top = [(o.name, o.type, o.eager, o.count) for o in read_view.ops[:8]]
    assert [(o.name, o.type, o.eager, o.count) for o in live.ops[:8]] == top
    assert [o.self_s for o in live.ops[:8]] == pytest.approx([o.self_s for o in read_view.ops[:8]])
    if name != "xla":  # the iterators are op time of their own, as XProf lists them
        assert any(o.type == "Dataset" for o in live.ops[:8])
    else:
        assert any(o.type == "dot" or o.name.startswith("MatMul") for o in live.ops[:2])
