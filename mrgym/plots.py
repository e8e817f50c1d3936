"""The comparison's figures: :func:`plot` writes ``jct_cdf.png``, ``jct.png``,
``locality.png`` and ``throughput_fairness.png`` from the harness's rows, one colour and
line style per policy throughout (:func:`policy_colors`).  matplotlib without pyplot: no
global backend or figure state."""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mrgym import registry
from mrgym.metrics import METRIC
from mrgym.summary import SMALL_N, format_seeds, summarize

DPI = 160  # print quality; at 9 inches wide a figure is 1 440 pixels
#: Locality levels, best first, coloured green (local) to red (another rack).
LOCALITY_COLORS = {"node": "#1a9850", "server": "#91cf60", "rack": "#fc8d59", "off_rack": "#d73027"}
LINESTYLES = ["-", "--", "-.", ":"]


def _palette(name: str, order: Iterable[int]) -> list[tuple[float, ...]]:
    import matplotlib as mpl

    colors = mpl.colormaps[name].colors
    return [tuple(colors[i]) for i in order]


def palettes() -> tuple[list, list]:
    """(baselines' colours, models' colours): 34 distinct colours.  The registered
    schedulers take tab20, its 10 dark shades first (tab10's colours: the first ten
    schedulers look as they always did), then its 10 light ones, then four of other
    palettes (Dark2's teal and mustard, Accent's magenta, black: none close to the others);
    models and other names take tab20b's two darker shades of its five hues (its lighter
    ones come too close to tab20's light shades)."""
    import matplotlib as mpl

    base = _palette("tab20", [*range(0, 20, 2), *range(1, 20, 2)])
    base += [mpl.colors.to_rgb(c) for c in ("#1b9e77", "#f0027f", "#e6ab02", "#000000", "#a6761d")]
    extra = _palette("tab20b", [i + shade for shade in range(2) for i in range(0, 20, 4)])
    return base, extra


def policy_colors(policies: Iterable[str]) -> dict[str, tuple[Any, str]]:
    """(colour, line style) per policy, the same in every plot and every run: registered
    baselines by their registry position (each its own colour: 25 schedulers, 25 colours),
    other policies (models) by a hash of their name into a second palette: a model keeps
    its colour from plot to plot, except when another name in the same plot hashes to it
    (then the name first in sorted order keeps it, the other takes the next free one).
    The line style also tells policies apart in a grey-scale print."""
    base, extra = palettes()
    known = registry.available()
    out: dict[str, tuple[Any, str]] = {}
    others = []
    for pol in dict.fromkeys(policies):
        if pol in known and known.index(pol) < len(base):
            i = known.index(pol)
            out[pol] = (base[i], LINESTYLES[i % len(LINESTYLES)])
        else:
            others.append(pol)
    taken: set[int] = set()
    for pol in sorted(others):  # sorted: the same set gets the same colours in any order
        h = zlib.crc32(pol.encode())  # stable across runs and processes (unlike hash())
        slot = next(
            ((h + k) % len(extra) for k in range(len(extra)) if (h + k) % len(extra) not in taken),
            h % len(extra),  # more models than colours: the line style still differs
        )
        taken.add(slot)
        out[pol] = (extra[slot], LINESTYLES[(h >> 8) % len(LINESTYLES)])
    return out


def wrap_label(text: str, width: int = 18) -> str:
    """Break a long policy name (``maskable_ppo:ila72-jct-deficit-...``) over lines,
    after ``:``, ``/``, ``_``, ``-``, ``.`` or spaces, so that it cannot squash the axes."""
    lines: list[str] = []
    cur = ""
    for piece in re.split(r"(?<=[:/_\-. ])", text):
        while len(piece) > width:  # one unbroken run longer than a line: cut it
            if cur:
                lines.append(cur)
                cur = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if cur and len(cur) + len(piece) > width:
            lines.append(cur)
            cur = piece
        else:
            cur += piece
    if cur:
        lines.append(cur)
    return "\n".join(ln.rstrip() for ln in lines)


def _caption(fig, text: str) -> None:
    """A note under the figure (``bbox_inches="tight"`` at save time keeps it in)."""
    fig.text(0.01, -0.01, text, ha="left", va="top", fontsize=8, color="0.25", wrap=True)


def _hbars(ax, labels, means, errs, colors, xlabel: str, hi: float = math.inf) -> None:
    """Horizontal bars, one per policy, first policy on top: long names then sit on the
    y axis, where they take width, not the height of every bar.  Error bars are cut at
    the metric's range [0, ``hi``]: a t-interval over few seeds can reach a negative JCT.
    ``errs``: one half-width per bar, or two rows (below, above the mean)."""
    y = np.arange(len(labels))
    m = np.asarray(means, dtype=float)
    e = np.nan_to_num(np.asarray(errs, dtype=float))  # one seed: no bar
    lo, up = (e, e) if e.ndim == 1 else (e[0], e[1])  # symmetric, or (below, above) the mean
    xerr = np.vstack([np.minimum(lo, m), np.minimum(up, hi - m)])
    ax.barh(y, m, xerr=xerr, color=colors, height=0.7, capsize=3, error_kw={"lw": 1})
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)  # first policy on top
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    ax.set_axisbelow(True)


def plot(
    rows: list[dict[str, Any]],
    out_dir: str | Path,
    job_jcts: dict[str, list[float]] | None = None,
    spread: str = "ci95",
) -> list[Path]:
    """Figures for a paper or a report, each naming the scenario and seeds:
    ``jct_cdf.png`` (every completed job's JCT, per policy; needs ``job_jcts``),
    ``jct.png`` (mean and p95 JCT), ``locality.png`` (map locality, stacked) and
    ``throughput_fairness.png``.  Bars are means over seeds; error bars are the same
    ``spread`` as :func:`summarize`'s (95 % Student-t interval by default), said in a
    note under each figure.  One colour per policy throughout."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(rows, spread)
    if not summary:
        return []
    scenarios = list(dict.fromkeys(r["scenario"] for r in summary))
    seeds = sorted({s for r in summary for s in r["seed_list"]})
    where = f"{', '.join(scenarios)}, {len(seeds)} seed{'s' if len(seeds) > 1 else ''} ({format_seeds(seeds)})"
    style = policy_colors(r["policy"] for r in summary)
    labels = [
        wrap_label(r["policy"] if len(scenarios) == 1 else f"{r['policy']} ({r['scenario']})", 22)
        for r in summary
    ]
    colors = [style[r["policy"]][0] for r in summary]
    paths = []
    if job_jcts:
        paths.append(_plot_cdf(job_jcts, style, where, out / "jct_cdf.png"))
    small = spread == "ci95" and 1 < len(seeds) < SMALL_N
    note = _bars_note(len(seeds), spread)
    for name, title, keys in (
        ("jct.png", "Job completion time", ["mean_jct_s", "p95_jct_s"]),
        ("throughput_fairness.png", "Throughput and fairness", _THROUGHPUT_FAIRNESS),
    ):
        fig = _bar_panels(summary, labels, colors, [METRIC[k] for k in keys], small)
        fig.suptitle(f"{title}: {where}", fontsize=10)
        _caption(fig, note)
        paths.append(_save(fig, out / name))
    paths.append(_plot_locality(rows, summary, labels, where, out / "locality.png"))
    return paths


_THROUGHPUT_FAIRNESS = ["throughput_jobs_per_h", "fairness_jain"]


def _height(n_policies: int) -> float:
    return 1.6 + 0.42 * n_policies  # bars keep their thickness as policies are added


def _bars_note(n_seeds: int, spread: str) -> str:
    if n_seeds <= 1:
        return "Bars: one seed, so no error bars."
    if spread == "ci95" and n_seeds < SMALL_N:  # a t-interval this wide would say nothing
        return (
            f"Bars: mean over {n_seeds} seeds. Error bars: the seeds' range (min to max); "
            f"below {SMALL_N} seeds a 95 % interval is too wide to tell policies apart."
        )
    what = (
        f"95 % confidence interval of the mean (Student t, {n_seeds - 1} degrees of freedom)"
        if spread == "ci95"
        else "± one sample standard deviation"
    )
    return f"Bars: mean over {n_seeds} seeds. Error bars: {what}, cut at the metric's range."


def _plot_cdf(job_jcts: dict[str, list[float]], style: dict, where: str, path: Path) -> Path:
    """``jct_cdf.png``: every completed job's JCT per policy, pooled over the seeds."""
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.subplots()
    for pol, xs in job_jcts.items():
        xs = np.sort(np.asarray(xs, dtype=float))
        color, ls = style.get(pol, ("0.3", "-"))
        ax.step(
            xs,
            np.arange(1, len(xs) + 1) / len(xs),
            where="post",
            color=color,
            linestyle=ls,
            lw=1.6,
            label=f"{wrap_label(pol, 24)} ({len(xs)})",
        )
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (s, log scale)")
    ax.set_ylabel("fraction of completed jobs")
    ax.set_ylim(0, 1.01)
    ax.set_title(f"Job completion time CDF: {where}", fontsize=10)
    _legend_outside(ax, "policy (jobs)")
    ax.grid(alpha=0.3, which="both")
    _caption(
        fig,
        "Every completed job of every seed, pooled; failed and unfinished jobs are left out.",
    )
    return _save(fig, path)


def _bar_panels(summary: list, labels: list[str], colors: list, panels: list, small: bool = False):
    """One horizontal-bar panel per metric, the policies sharing the y axis (``small``:
    error bars from the seeds' min to max instead of the spread)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, _height(len(summary))), layout="constrained")
    axes = fig.subplots(1, len(panels), sharey=True)
    for ax, metric in zip(axes, panels):
        means = [r[metric.key][0] for r in summary]
        spreads = [r[metric.key][1] for r in summary]
        if small:  # the seeds' range, as the tables show it below SMALL_N seeds
            spreads = [
                [m - r["ranges"][metric.key][0] for m, r in zip(means, summary)],
                [r["ranges"][metric.key][1] - m for m, r in zip(means, summary)],
            ]
        hi = 1.0 if metric.bounded else math.inf
        _hbars(ax, labels, means, spreads, colors, metric.axis_label, hi)
    if [m.key for m in panels] == _THROUGHPUT_FAIRNESS:
        axes[1].set_xlim(0, 1.05)
    return fig


def _plot_locality(rows: list, summary: list, labels: list[str], where: str, path: Path) -> Path:
    """``locality.png``: each policy's map tasks by where their input was read, stacked."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, _height(len(summary)) + 0.3), layout="constrained")
    ax = fig.subplots()
    left = np.zeros(len(summary))
    y = np.arange(len(summary))
    for level, color in LOCALITY_COLORS.items():
        vals = np.array([_mean_of(rows, s, f"map_locality.{level}") for s in summary])
        ax.barh(y, vals, left=left, color=color, height=0.7, label=level.replace("_", "-"))
        for yi, (x0, v) in enumerate(zip(left, vals)):
            if v >= 0.06:  # a label only where it fits inside its segment
                ax.text(x0 + v / 2, yi, f"{100 * v:.0f} %", ha="center", va="center", fontsize=7)
        left += vals
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_ylim(len(summary) - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.set_xlabel("fraction of map tasks (mean over seeds)")
    _legend_outside(ax, "map input read from")
    ax.set_title(f"Map locality: {where}", fontsize=10)
    _caption(
        fig,
        "node: the VM's own disk; server: another VM on the same physical host; "
        "rack: another host of the rack; off-rack: another rack.",
    )
    return _save(fig, path)


def _mean_of(rows: list, s: dict, key: str) -> float:
    """The mean of ``key`` over the seeds of summary row ``s``'s policy and scenario."""
    mine = [r[key] for r in rows if r["policy"] == s["policy"] and r["scenario"] == s["scenario"]]
    return float(np.mean(mine))


def _legend_outside(ax, title: str) -> None:
    """The legend right of the axes, where it cannot cover a bar or a line."""
    ax.legend(
        title=title,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0,
        frameon=False,
        fontsize=8,
        title_fontsize=8,
    )


def _save(fig, path: Path) -> Path:
    # bbox_inches="tight" takes in the legends beside the axes and the caption below
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    return path
