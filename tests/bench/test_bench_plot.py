"""The plot: a real PNG, with every variant that has a time, on a log axis when spread is wide."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.tf

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_plot_is_a_png_with_the_variants_in_it(case_result, tmp_path):
    pytest.importorskip("matplotlib")
    from tfperf.bench.plot import build_figure, save_figure

    fig = build_figure(case_result)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["loop", "vectorised", "einsum", "axis_bug", "slow"]  # failed ones left out
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "NOT EQUIV." in texts and "×" in texts and "(ran once)" in texts
    assert ax.get_yscale() == "log"  # 0.8 s next to tens of µs
    path = save_figure(fig, tmp_path / "sub" / "bench.png")
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 5000


def test_plot_to_an_unwritable_place_is_a_clear_error(case_result, tmp_path):
    pytest.importorskip("matplotlib")
    from tfperf.bench.plot import PlotError

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PlotError, match="cannot write"):
        case_result.plot(blocker / "out.png")
