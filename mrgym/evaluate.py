"""One harness for every policy: policies x scenarios x seeds -> a tidy table, plots.

``evaluate(["fifo", "delay"], ["ila72"], range(5))`` returns one row (a flat dict) per
policy x scenario x seed with every metric of :func:`mrgym.metrics.episode_metrics`.
Baselines run through ``run_sim`` (the fast path; identical metrics to the Gymnasium loop
for the policies the action space expresses, see the README); a policy given as a
callable ``make_policy(env) -> object with predict(obs, info)`` runs through
``run_episode``.
"""

from __future__ import annotations

import csv
import math
import re
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mrgym import registry
from mrgym.metrics import COMPARE_COLUMNS, COMPARE_KEYS, METRIC
from mrgym.runner import Progress, progress_mode, run_episode, run_sim

#: The comparison's columns: (metric key, column header), from
#: :data:`mrgym.metrics.COMPARE_COLUMNS`.
SUMMARY = [(m.key, m.column) for m in COMPARE_COLUMNS]


def flatten(metrics: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for k, v in metrics.items():
        if isinstance(v, dict):
            for kk, vv in v.items():
                row[f"{k}.{kk}"] = vv
        else:
            row[k] = v
    loc = metrics["map_locality"]
    row["local_frac"] = loc["node"] + loc["server"]
    row["small_jct_s"] = metrics["mean_jct_by_class_s"].get("small")
    return row


class EvaluationInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`evaluate`.  Still a ``KeyboardInterrupt`` (a caller that does
    not know it stops as before), carrying the rows of the runs that finished so that
    minutes of finished work are not thrown away."""

    def __init__(self, rows: list[dict[str, Any]], total: int):
        super().__init__(f"interrupted after {len(rows)} of {total} runs")
        self.rows = rows
        self.total = total


def evaluate(
    policies: Iterable,
    scenarios: Iterable,
    seeds: Iterable[int],
    progress: Progress = False,
    env_kwargs: dict | None = None,
    keep_logs: bool = False,
) -> list[dict[str, Any]]:
    """Run every policy on every scenario and seed; one flat row per run.

    ``progress``: ``True`` shows a bar on a terminal and one stderr line per finished run
    otherwise (``[3/14] fair ila72 seed 2: 1.2 s``); ``"bar"``/``"lines"`` force one.
    Ctrl-C raises :class:`EvaluationInterrupted` with the finished rows."""
    policies, scenarios, seeds = list(policies), list(scenarios), list(seeds)
    runs = [(p, s, seed) for s in scenarios for p in policies for seed in seeds]
    mode = progress_mode(progress)
    bar = None
    if mode == "bar":
        from tqdm import tqdm

        bar = tqdm(total=len(runs), unit="run", desc="evaluate")
    rows: list[dict[str, Any]] = []
    try:
        for i, (pol, sc, seed) in enumerate(runs, 1):
            t0 = time.perf_counter()
            name, metrics, wall, log = _run_one(pol, sc, seed, env_kwargs or {})
            sc_name = sc if isinstance(sc, str) else getattr(sc, "name", "scenario")
            row = {"policy": name, "scenario": sc_name, "seed": seed, "wall_s": wall}
            row.update(flatten(metrics))
            if keep_logs:
                row["_jobs"] = log
            rows.append(row)
            if bar is not None:
                bar.set_postfix_str(f"{name} {sc_name} seed {seed}")
                bar.update(1)
            elif mode == "lines":
                took = time.perf_counter() - t0
                print(
                    f"[{i}/{len(runs)}] {name} {sc_name} seed {seed}: {took:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
    except KeyboardInterrupt:
        raise EvaluationInterrupted(rows, len(runs)) from None
    finally:
        if bar is not None:
            bar.close()
    return rows


def _run_one(pol, sc, seed: int, env_kwargs: dict):
    # a factory ``make_policy(env)`` or a policy object (``ModelPolicy.load(run)``) runs in
    # the gym loop; a scheduler (name or object) runs directly
    factory = callable(pol) and not hasattr(pol, "decide") and not isinstance(pol, str)
    if factory or (hasattr(pol, "predict") and not hasattr(pol, "decide")):
        import gymnasium as gym

        from mrgym.policy import BINDING_SETTINGS

        # a saved model brings its training settings; the caller's env_kwargs may change
        # the others (reward weights, time cap) but not the ones its actions depend on
        own = getattr(pol, "env_kwargs", None) or {}
        for key in BINDING_SETTINGS:
            if key in own and key in env_kwargs and env_kwargs[key] != own[key]:
                name = getattr(pol, "name", "model")
                raise ValueError(
                    f"env_kwargs {key}={env_kwargs[key]!r}: {name} was trained with "
                    f"{key}={own[key]!r}"
                )
        kw = {**own, **env_kwargs}
        env = gym.make("MRCluster-v0", config=sc, **kw)
        policy = pol(env) if factory else pol
        r = run_episode(env, policy, seed)
        jobs = [
            (j.id, j.name, len(j.maps), j.arrived_s, j.finish_s) for j in env.unwrapped.sim.jobs
        ]
        env.close()
        return getattr(policy, "name", "model"), r.metrics, r.wall_s, jobs
    r = run_sim(sc, pol, seed)
    return r.scheduler, r.metrics, r.wall_s, r.jobs


#: The spread the summary table and the plots' error bars show (one choice for both).
SPREADS = {
    "ci95": "half-width of the 95 % confidence interval of the mean (Student t)",
    "std": "sample standard deviation",
}


def _spread(vals: np.ndarray, spread: str) -> float:
    """``vals``' spread; NaN for one value (no interval from one seed: say so, not 0)."""
    if len(vals) < 2:
        return math.nan
    sd = float(vals.std(ddof=1))
    if spread == "std":
        return sd
    from scipy import stats

    return float(stats.t.ppf(0.975, len(vals) - 1)) * sd / math.sqrt(len(vals))


def summarize(rows: list[dict[str, Any]], spread: str = "ci95") -> list[dict[str, Any]]:
    """Mean and spread across seeds, one row per policy x scenario (first-seen order).

    Each metric is ``(mean, spread)``; ``spread`` is ``"ci95"`` (half-width of the 95 %
    Student-t confidence interval of the mean: what the plots' error bars show) or
    ``"std"`` (sample standard deviation); one seed gives NaN."""
    if spread not in SPREADS:
        raise ValueError(f"spread: expected one of {list(SPREADS)}, got {spread!r}")
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["scenario"], r["policy"]), []).append(r)
    out = []
    for (sc, pol), rs in groups.items():
        row: dict[str, Any] = {
            "scenario": sc,
            "policy": pol,
            "seeds": len(rs),
            "seed_list": [r["seed"] for r in rs],
            "spread": spread,
        }
        for key in COMPARE_KEYS:
            vals = np.array(
                [r[key] for r in rs if r.get(key) is not None and not _nan(r[key])], dtype=float
            )
            row[key] = (float(vals.mean()), _spread(vals, spread)) if len(vals) else (math.nan,) * 2
        out.append(row)
    return out


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def format_seeds(seeds: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``: the seeds as a reader can check them."""
    xs = sorted(set(seeds))
    parts: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ", ".join(parts)


def spread_note(summary: list[dict[str, Any]]) -> str:
    """What the numbers and ``±`` (or the error bars) are, in one sentence."""
    if not summary:
        return ""
    seeds = sorted({s for row in summary for s in row["seed_list"]})
    n = len(seeds)
    if n < 2:
        return f"mean of 1 seed ({format_seeds(seeds)}); one seed gives no spread"
    return f"mean ± {SPREADS[summary[0]['spread']]} over {n} seeds ({format_seeds(seeds)})"


def markdown_table(summary: list[dict[str, Any]]) -> str:
    """The summary as a markdown table, then a line saying what ``±`` is."""
    head = ["policy"] + [m.column for m in COMPARE_COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in summary:
        cells = [row["policy"]]
        for metric in COMPARE_COLUMNS:
            m, s = row[metric.key]
            small = metric.bounded  # a 0..1 value: three decimals
            if math.isnan(m):
                cells.append("-")
            elif math.isnan(s):  # one seed: no interval
                cells.append(f"{m:.3f}" if small else f"{m:,.1f}")
            elif small:
                cells.append(f"{m:.3f} ± {s:.3f}")
            else:
                cells.append(f"{m:,.1f} ± {s:,.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    note = spread_note(summary)
    return "\n".join(lines) + (f"\n\n{note[0].upper()}{note[1:]}." if note else "")


def write_csv(rows: list[dict[str, Any]], path: str | Path) -> None:
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys and not k.startswith("_"):
                keys.append(k)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


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


def job_jcts(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Per policy, every completed job's JCT across seeds (rows from ``keep_logs=True``)."""
    out: dict[str, list[float]] = {}
    for r in rows:
        for _, _, _, arrived, finish in r.get("_jobs") or ():
            if arrived is not None and finish is not None:
                out.setdefault(r["policy"], []).append(finish - arrived)
    return out
