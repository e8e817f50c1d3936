"""The comparison's figures: :func:`plot` writes ``jct_cdf.png``, ``jct.png``,
``locality.png`` and ``throughput_fairness.png`` from the harness's rows, one colour and
line style per policy throughout (:func:`policy_colors`).  matplotlib without pyplot: no
global backend or figure state."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mrgym import registry
from mrgym.metrics import METRIC
from mrgym.summary import format_seeds, summarize

DPI = 160  # print quality; at 9 inches wide a figure is 1 440 pixels
#: Locality levels, best first, coloured green (local) to red (another rack).
LOCALITY_COLORS = {"node": "#1a9850", "server": "#91cf60", "rack": "#fc8d59", "off_rack": "#d73027"}
LINESTYLES = ["-", "--", "-.", ":"]


def policy_colors(policies: Iterable[str]) -> dict[str, tuple[Any, str]]:
    """(colour, line style) per policy, the same in every plot and every run: registered
    baselines by their registry position, other policies (models) after them in the order
    given; the line style also tells policies apart in a grey-scale print."""
    import matplotlib as mpl

    palette = list(mpl.colormaps["tab10"].colors) + list(mpl.colormaps["Dark2"].colors)
    known = registry.available()
    out: dict[str, tuple[Any, str]] = {}
    nxt = len(known)
    for pol in policies:
        if pol in out:
            continue
        if pol in known:
            i = known.index(pol)
        else:
            i, nxt = nxt, nxt + 1
        out[pol] = (palette[i % len(palette)], LINESTYLES[i % len(LINESTYLES)])
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
    the metric's range [0, ``hi``]: a t-interval over few seeds can reach a negative JCT."""
    y = np.arange(len(labels))
    m = np.asarray(means, dtype=float)
    e = np.nan_to_num(np.asarray(errs, dtype=float))  # one seed: no bar
    xerr = np.vstack([np.minimum(e, m), np.minimum(e, hi - m)])
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
    from matplotlib.figure import Figure  # no pyplot: no global backend or figure state

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
    if len(seeds) > 1:
        what = (
            f"95 % confidence interval of the mean (Student t, {len(seeds) - 1} degrees of freedom)"
            if spread == "ci95"
            else "± one sample standard deviation"
        )
        bars_note = (
            f"Bars: mean over {len(seeds)} seeds. Error bars: {what}, cut at the metric's range."
        )
    else:
        bars_note = "Bars: one seed, so no error bars."
    height = 1.6 + 0.42 * len(summary)  # bars keep their thickness as policies are added
    paths = []

    if job_jcts:
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
        paths.append(_save(fig, out / "jct_cdf.png"))

    for name, title, panels in (
        (
            "jct.png",
            "Job completion time",
            [METRIC["mean_jct_s"], METRIC["p95_jct_s"]],
        ),
        (
            "throughput_fairness.png",
            "Throughput and fairness",
            [METRIC["throughput_jobs_per_h"], METRIC["fairness_jain"]],
        ),
    ):
        fig = Figure(figsize=(9, height), layout="constrained")
        axes = fig.subplots(1, len(panels), sharey=True)
        for ax, metric in zip(axes, panels):
            means = [r[metric.key][0] for r in summary]
            spreads = [r[metric.key][1] for r in summary]
            hi = 1.0 if metric.bounded else math.inf
            _hbars(ax, labels, means, spreads, colors, metric.axis_label, hi)
        if name == "throughput_fairness.png":
            axes[1].set_xlim(0, 1.05)
        fig.suptitle(f"{title}: {where}", fontsize=10)
        _caption(fig, bars_note)
        paths.append(_save(fig, out / name))

    fig = Figure(figsize=(9, height + 0.3), layout="constrained")
    ax = fig.subplots()
    left = np.zeros(len(summary))
    y = np.arange(len(summary))
    for level, color in LOCALITY_COLORS.items():
        vals = np.array(
            [
                np.mean(
                    [
                        r[f"map_locality.{level}"]
                        for r in rows
                        if r["policy"] == s["policy"] and r["scenario"] == s["scenario"]
                    ]
                )
                for s in summary
            ]
        )
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
    paths.append(_save(fig, out / "locality.png"))
    return paths


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
