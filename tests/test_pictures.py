"""mrgym.benchmark.pictures: each scenario's picture names every Pareto-front policy once,
inside its panel, with no two names over each other, and labels its log axes with plain
numbers."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from matplotlib.text import Text  # noqa: E402

from mrgym.benchmark.leaderboard import load_boards  # noqa: E402
from mrgym.benchmark.pictures import _points, tracks_figure  # noqa: E402
from mrgym.pareto import pareto_front  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "leaderboard"


@pytest.fixture(scope="module")
def ila72():
    # ila72's front crowds: five policies within 10 s of the best JCT on the fairness panel
    (board,) = [b for b in load_boards(RESULTS) if b.scenario == "ila72"]
    return board.results


def test_each_front_policy_is_named_once_inside_its_panel_and_no_names_overlap(ila72):
    fig = tracks_figure(ila72, "ila72")
    renderer = fig.canvas.get_renderer()
    for ax, (key, maximize) in zip(
        fig.axes, (("rms_slowdown", False), ("locality_value", True)), strict=True
    ):
        pts = _points(ila72, key, maximize)
        front = sorted(pts[i][0] for i in pareto_front([(x, y) for _, x, y, _ in pts]))
        names = list(ax.texts)
        assert sorted(t.get_text() for t in names) == front and len(front) >= 3, key
        panel = ax.get_window_extent(renderer)
        boxes = []
        for t in names:
            t.update_positions(renderer)
            box = Text.get_window_extent(t, renderer)
            assert panel.x0 <= box.x0 and box.x1 <= panel.x1, t.get_text()
            assert panel.y0 <= box.y0 and box.y1 <= panel.y1, t.get_text()
            boxes.append((t.get_text(), box))
        for (a, ba), (b, bb) in itertools.combinations(boxes, 2):
            assert not ba.overlaps(bb), (key, a, b)


def test_the_log_axes_read_as_plain_numbers(ila72):
    fig = tracks_figure(ila72, "ila72")
    fig.draw_without_rendering()
    fairness, locality = fig.axes
    for axis in (fairness.xaxis, fairness.yaxis, locality.xaxis):
        labels = [t.get_text() for t in axis.get_ticklabels() if t.get_text()]
        # e.g. 150, 200, 300, 500, 1000 on ila72's JCT axis; never 2x10^2
        assert len(labels) >= 2 and all(s.replace(".", "").isdigit() for s in labels), labels
    assert "150" in [t.get_text() for t in fairness.xaxis.get_ticklabels()]
