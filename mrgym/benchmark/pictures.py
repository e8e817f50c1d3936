"""One picture per leaderboard scenario: every policy's mean JCT against its fairness (RMS
slowdown) and against its locality (mean locality value), each with its Pareto front."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mrgym.benchmark.results import PolicyResult
from mrgym.benchmark.stats import summarize
from mrgym.pareto import pareto_front

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
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

    fig = Figure(figsize=(12, 5.2), layout="constrained")
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
        for name, x, y, _ in on:
            ax.annotate(name, (x, sign * y), fontsize=7, xytext=(4, 3), textcoords="offset points")
        # log axes: a FIFO at 10x the best's JCT would squash every other point
        ax.set_xscale("log")
        if not maximize:
            ax.set_yscale("log")
        ax.set_xlabel("mean JCT (s, log scale; lower is better)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        f"{scenario}, test seeds: every policy's mean over the seeds; the front is what "
        "nothing beats on both axes",
        fontsize=10,
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path
