"""One picture per leaderboard scenario: every policy's mean JCT against its fairness (RMS
slowdown) and against its locality (mean locality value), each with its Pareto front."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mrgym.benchmark.results import PolicyResult
from mrgym.benchmark.stats import summarize
from mrgym.pareto import pareto_front

DPI = 110
LABEL_STEP = 9  # points: how much farther each ring of places is (the names' font is 7)

#: (y metric, axis label, maximized): the picture's two panels, x is mean JCT
PANELS = (
    ("rms_slowdown", "RMS slowdown (fairness track; log scale; lower is better)", False),
    ("locality_value", "mean locality value of the maps (higher is better)", True),
)


def _points(results: Sequence[PolicyResult], key: str, maximize: bool) -> list[tuple]:
    """(name, mean JCT, y to minimize, kind) per policy that has both values; duplicates
    (``= X``) and truncated runs (their JCT counts fewer jobs) left out."""
    out = []
    for s in summarize(results)[0]:
        x, y = s.means.get("mean_jct_s"), s.means.get(key)
        if s.same_as is None and x is not None and y is not None and not s.means.get("truncated"):
            out.append((s.name, x, -y if maximize else y, s.kind))
    return out


def plot_tracks(results: Sequence[PolicyResult], scenario: str, path: str | Path) -> Path:
    """Write the scenario's picture to ``path`` (PNG) and return it."""
    fig = tracks_figure(results, scenario)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path


def _offsets(rings: int = 14) -> list[tuple[float, float, str]]:
    """Where a name may go, nearest first: right of its point, then above or below it by
    growing steps, then the same on its left (x, y in points; the text's alignment)."""
    out = [(4.0, 3.0, "left")]
    for r in range(1, rings):
        for dx, ha in ((4.0, "left"), (-4.0, "right")):
            out += [(dx, 3.0 + LABEL_STEP * r, ha), (dx, 3.0 - LABEL_STEP * r, ha)]
    return out


def _label_front(ax, on: list[tuple], sign: float) -> None:
    """Name each front point at the nearest place (:func:`_offsets`) inside the panel that
    overlaps no name placed before it, with a thin line back to its point when moved: the
    front's points crowd near the best JCT, where their names used to print over each
    other.  A name with no free place keeps the first one."""
    from matplotlib.text import Text

    renderer = ax.figure.canvas.get_renderer()
    panel = ax.get_window_extent(renderer)
    places = [*_offsets(), (4.0, 3.0, "left")]  # the last: the first again, if none is free
    placed = []
    for name, x, y, _ in on:
        for k, (dx, dy, ha) in enumerate(places):
            last = k == len(places) - 1
            line = {"arrowstyle": "-", "lw": 0.5, "color": "0.5"} if k else None
            t = ax.annotate(
                name,
                (x, sign * y),
                fontsize=7,
                xytext=(dx, dy),
                textcoords="offset points",
                ha=ha,
                arrowprops=None if last else line,
            )
            t.set_in_layout(False)  # the layout was settled before the names went in
            # the name's own box (an annotation's would span its line too)
            t.update_positions(renderer)
            box = Text.get_window_extent(t, renderer)
            inside = panel.contains(box.x0, box.y0) and panel.contains(box.x1, box.y1)
            if last or (inside and not any(box.overlaps(other) for other in placed)):
                break
            t.remove()
        placed.append(box)


def _plain_log_ticks(axis) -> None:
    """A log axis labelled with plain numbers at 1, 1.5, 2, 3, 5 and 7 times each power of
    ten: under a decade wide, matplotlib's default labels every minor tick as 2x10^2,
    and the labels run into each other."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def tracks_figure(results: Sequence[PolicyResult], scenario: str):
    """The scenario's picture, a matplotlib ``Figure`` (two panels, fronts named)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

    fig = Figure(figsize=(12, 5.2), layout="constrained", dpi=DPI)
    FigureCanvasAgg(fig)  # a renderer, to measure the names
    fronts = []
    for ax, (key, label, maximize) in zip(fig.subplots(1, 2), PANELS, strict=True):
        pts = _points(results, key, maximize)
        sign = -1.0 if maximize else 1.0
        # the Pareto front: nothing else at least as good on both, one strictly better
        front = {pts[i][0] for i in pareto_front([(x, y) for _, x, y, _ in pts])}
        for kind, marker, color in (("baseline", "o", "tab:blue"), ("model", "^", "tab:orange")):
            mine = [p for p in pts if p[3] == kind]
            ax.scatter(
                [p[1] for p in mine],
                [sign * p[2] for p in mine],
                marker=marker,
                color=color,
                alpha=0.75,
                label=f"{kind}s",
            )
        on = sorted((p for p in pts if p[0] in front), key=lambda p: p[1])
        ax.plot([p[1] for p in on], [sign * p[2] for p in on], "k--", lw=1, label="Pareto front")
        fronts.append((ax, on, sign))
        # log axes: a FIFO at 10x the best's JCT would squash every other point
        ax.set_xscale("log")
        _plain_log_ticks(ax.xaxis)
        if not maximize:
            ax.set_yscale("log")
            _plain_log_ticks(ax.yaxis)
        ax.set_xlabel("mean JCT (s, log scale; lower is better)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"{scenario}, test seeds: every policy's mean over the seeds; the front is what "
        "nothing beats on both axes",
        fontsize=10,
    )
    # names last, on the settled layout: their places are measured in display space
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    for ax, on, sign in fronts:
        _label_front(ax, on, sign)
    return fig
