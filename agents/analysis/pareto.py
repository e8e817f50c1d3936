"""Mean JCT against p95 JCT over every held-out evaluation of some runs, with the Pareto front.

    python -m agents.analysis.pareto runs/js_sec-s0 runs/js_fair-s0 --baseline fair=163.7:486.6 \
        --baseline hybridmr=147.3:513.2 --out docs/pareto.png
    python -m agents.analysis.pareto runs/js_sec-s0 --baselines runs/compare-ila72-20260101-120000

``--baselines`` reads each policy's mean and p95 JCT (means over the seeds of the
``mean_jct_s`` and ``p95_jct_s`` columns) from a ``mrgym compare`` result, its folder or
``results.csv`` (``--baseline-names`` picks some); ``--baseline`` adds or replaces one by
hand.

The JCT reward trades the tail (p95) for the mean, and a single reward may not reach both
targets; then the front is what to report: the checkpoints and baselines that nothing beats
on both.  A cut evaluation (``agents.analysis.curves.incomplete_steps``) is an x, never on
the front.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agents.analysis.curves import (
    compare_means,
    file_names,
    incomplete_steps,
    read_curve,
    runs_parser,
    save_figure,
)
from mrgym.pareto import pareto_front


@dataclass(frozen=True)
class EvalPoint:
    run: str
    step: int
    mean_jct: float
    p95_jct: float
    complete: bool


def evaluation_points(run: str | Path) -> list[EvalPoint]:
    """One point per step that has both the mean and the p95 JCT, in step order."""
    mean = dict(read_curve(run, "mr_eval/mean_jct"))
    p95 = dict(read_curve(run, "mr_eval/p95_jct"))
    cut = incomplete_steps(run)
    name = Path(run).name
    return [EvalPoint(name, s, mean[s], p95[s], s not in cut) for s in sorted(mean.keys() & p95)]


Runs = Sequence[str | Path]
Baselines = dict[str, tuple[float, float]]  # name -> (mean JCT, p95 JCT) on the held-out seeds
# a candidate for the front: (label, mean, p95, the run's point or None for a baseline)
Candidate = tuple[str, float, float, EvalPoint | None]


def _candidates(runs: Runs, baselines: Baselines) -> tuple[list[EvalPoint], list[Candidate]]:
    """Every run's points, and the front over the complete ones and the baselines."""
    points = [p for run in runs for p in evaluation_points(run)]
    # a cut evaluation's JCTs are over the jobs that finished: not comparable, never best
    cands: list[Candidate] = [
        (f"{p.run}@{p.step}", p.mean_jct, p.p95_jct, p) for p in points if p.complete
    ]
    cands += [(name, m, q, None) for name, (m, q) in baselines.items()]
    return points, [cands[i] for i in pareto_front([(c[1], c[2]) for c in cands])]


OFFSET = {"textcoords": "offset points"}
MARKERS = "*DPXsv^<>"


def _xy(points: list[EvalPoint]) -> tuple[list[float], list[float]]:
    return [p.mean_jct for p in points], [p.p95_jct for p in points]


def plot_pareto(runs: Runs, baselines: Baselines, out: str | Path, title: str = "") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mrgym.plots import policy_colors

    points, front = _candidates(runs, baselines)
    fig, ax = plt.subplots(figsize=(7, 5))
    for run in dict.fromkeys(p.run for p in points):  # one colour per run, in the given order
        mine = [p for p in points if p.run == run and p.complete]
        ax.scatter(*_xy(mine), s=20, label=run)
    cut = [p for p in points if not p.complete]
    if cut:
        ax.scatter(*_xy(cut), marker="x", color="black", s=50, label="fewer jobs finished (cut)")
    colors = policy_colors(baselines)  # the colours of compare's plots
    for i, (name, (m, q)) in enumerate(baselines.items()):
        marker = MARKERS[i % len(MARKERS)]  # cycled: a compare file may bring 20
        ax.scatter(
            [m],
            [q],
            marker=marker,
            s=160,
            color=colors[name][0],
            edgecolors="black",
            zorder=4,
            label=name,
        )
        ax.annotate(name, (m, q), xytext=(6, 6), fontsize=8, **OFFSET)
    # a staircase: what the front attains is everything above and to the right of it
    fx, fy = [c[1] for c in front], [c[2] for c in front]
    ax.step(fx, fy, where="post", color="black", lw=1.2, zorder=2, label="Pareto front")
    for _, m, q, p in front:
        if p is not None:  # baselines already carry their name
            ax.annotate(f"{p.step / 1000:.0f}k", (m, q), xytext=(4, -10), fontsize=7, **OFFSET)
    ax.set_xlabel("mean JCT (s), held-out seeds")
    ax.set_ylabel("p95 JCT (s), held-out seeds")
    ax.set_title(title or "mean against p95 JCT (lower is better)")
    return save_figure(fig, ax, out)


def front_table(runs: Runs, baselines: Baselines) -> str:
    """The front as a markdown table, by mean JCT: runs' points as RUN@STEP, baselines by name."""
    rows = ["| point | mean JCT (s) | p95 JCT (s) |", "|---|---:|---:|"]
    front = _candidates(runs, baselines)[1]
    rows += [f"| {label} | {m:.1f} | {q:.1f} |" for label, m, q, _ in front]
    return "\n".join(rows)


def _baseline(text: str) -> tuple[str, tuple[float, float]]:
    name, sep, values = text.partition("=")
    mean, colon, p95 = values.partition(":")
    try:
        m, q = float(mean), float(p95)
        if not (name and sep and colon and math.isfinite(m) and math.isfinite(q)):
            raise ValueError
        return name, (m, q)
    except ValueError:
        msg = f"--baseline: expected NAME=MEAN:P95, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None


def file_baselines(path: str, names: list[str] | None) -> Baselines:
    """(mean JCT, p95 JCT) per policy of a ``mrgym compare`` result; a policy without
    both (no job finished at any seed) is left out."""
    means = compare_means(path, names)
    return {
        n: (m["mean_jct"], m["p95_jct"])
        for n, m in means.items()
        if {"mean_jct", "p95_jct"} <= m.keys()
    }


def main(argv: list[str] | None = None) -> None:
    ap = runs_parser(__doc__, _baseline, "NAME=MEAN:P95, by hand", "pareto.png")
    args = ap.parse_args(argv)
    try:  # a bad file, a run without the evaluation tags: one line naming it
        names = file_names(args)
        baselines = file_baselines(args.baselines, names) if args.baselines else {}
        baselines.update(dict(args.baseline))
        path = plot_pareto(args.runs, baselines, args.out, args.title)
        print(front_table(args.runs, baselines))
    except ValueError as e:
        ap.error(str(e))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
