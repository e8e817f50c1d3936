"""Training curves as a picture: held-out mean JCT against steps, one line per run.

    python -m agents.analysis.curves runs/bc_fair-s0 runs/bc_fair-s1 --baseline fair=232.3 \
        --baseline hybridmr=211.4 --out curves.png
    python -m agents.analysis.curves runs/bc_fair-s0 \
        --baselines runs/compare-ila72-20260101-120000 --baseline-names fair,hybridmr

``--baselines`` reads the baselines' values from a ``mrgym compare`` result (its folder or
its ``results.csv``: one row per policy and seed; the value is the mean over the seeds of
the column the tag is written from, ``mean_jct_s`` for ``mr_eval/mean_jct``); run the
compare on the training config's held-out seeds (``eval.seeds``) for a fair picture.
``--baseline NAME=VALUE`` adds a value by hand, or replaces the file's.

Reads each run's TensorBoard events (``mr_eval/<tag>``, written by the held-out
evaluation of ``agents.train``) and draws them with the baselines' values (measured on the
same held-out seeds) as horizontal lines, so a reader sees when, and whether, an agent
passes a baseline.  An evaluation that finished fewer jobs than the run's best
(``mr_eval/jobs_completed``: cut by ``eval.max_steps``, a policy that holds slots back) is
drawn as an x: its mean is over the jobs that finished, and it never counts as best.
"""

from __future__ import annotations

import argparse
import csv
import re
from pathlib import Path

from mrgym.metrics import TENSORBOARD_TAGS


def read_curve(run: str | Path, tag: str = "mr_eval/mean_jct") -> list[tuple[int, float]]:
    """(step, value) of ``tag`` from every event file under ``run``/tb, in step order."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    points: dict[int, float] = {}

    def natural(f: Path) -> tuple:  # run_2 before run_10 (SB3 numbers its event folders)
        return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", f.name))

    for folder in sorted((Path(run) / "tb").glob("*"), key=natural):
        acc = EventAccumulator(str(folder))
        acc.Reload()
        if tag in acc.Tags().get("scalars", []):
            points.update({int(e.step): float(e.value) for e in acc.Scalars(tag)})
    if not points:
        raise ValueError(f"{run}: no {tag} in its TensorBoard events (did it evaluate?)")
    return sorted(points.items())


def incomplete_steps(run: str | Path) -> set[int]:
    """Steps whose evaluation was cut: the evaluation's own verdict (``mr_eval/complete``
    0), or for runs from before that tag, fewer jobs than the run's most complete one."""
    try:
        return {step for step, ok in read_curve(run, "mr_eval/complete") if ok < 1}
    except ValueError:
        pass
    try:
        done = read_curve(run, "mr_eval/jobs_completed")
    except ValueError:  # runs from before the tag: nothing to mark
        return set()
    full = max(v for _, v in done)
    return {step for step, v in done if v < full}


def compare_means(path: str | Path, names: list[str] | None = None) -> dict[str, dict[str, float]]:
    """Per policy of a ``mrgym compare`` result (its folder or ``results.csv``), each
    TensorBoard tag's mean over the seeds (``{"fair": {"mean_jct": 150.2, ...}}``), in the
    file's order; ``names``: only these policies, in this order (each must be there)."""
    from agents.tensorboard import policy_means

    p = Path(path)
    csv_path = p / "results.csv" if p.is_dir() else p
    if not csv_path.is_file():
        raise ValueError(f"--baselines {path}: expected a mrgym compare folder or its results.csv")
    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or not {"policy", "mean_jct_s"} <= set(rows[0]):
        raise ValueError(f"--baselines {path}: not a mrgym compare results.csv (no policy rows)")
    # an empty cell is a metric the run did not have (no job done): left out of the mean
    means = policy_means([{k: v for k, v in r.items() if v != ""} for r in rows])
    if names is None:
        return means
    unknown = [n for n in names if n not in means]
    if unknown:
        raise ValueError(
            f"--baseline-names {','.join(unknown)}: not in {csv_path} (it has {', '.join(means)})"
        )
    return {n: means[n] for n in names}


def tag_of(tag: str) -> str:
    """``mr_eval/mean_jct`` -> ``mean_jct``, checked against the tags compare can give."""
    short = tag.split("/")[-1]
    if short not in TENSORBOARD_TAGS.values():
        raise ValueError(f"--tag {tag}: no compare column gives it (one of mr_eval/mean_jct ...)")
    return short


def plot_curves(
    runs: list[str | Path],
    baselines: dict[str, float],
    out: str | Path,
    tag: str = "mr_eval/mean_jct",
    title: str = "",
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mrgym.plots import policy_colors

    fig, ax = plt.subplots(figsize=(7, 4))
    marked = False
    for run in runs:
        points = read_curve(run, tag)
        xs, ys = zip(*points, strict=True)
        (line,) = ax.plot(xs, ys, marker="o", label=Path(run).name)
        cut = incomplete_steps(run)
        bad = [(x, y) for x, y in points if x in cut]
        if bad:
            bx, by = zip(*bad, strict=True)
            ax.plot(bx, by, "x", color="black", markersize=9, zorder=3)
            marked = True
    if marked:  # one legend entry for every run's incomplete evaluations
        ax.plot([], [], "x", color="black", label="fewer jobs finished (cut)")
    styles = ("--", ":", "-.")
    colors = policy_colors(baselines)  # each baseline the colour compare's plots give it
    for i, (name, value) in enumerate(baselines.items()):
        ax.axhline(value, color=colors[name][0], linestyle=styles[i % len(styles)], label=name)
    ax.set_xlabel("training steps")
    ax.set_ylabel(tag.split("/")[-1].replace("_", " ") + " (s), held-out seeds")
    ax.set_title(title or tag)
    return save_figure(fig, ax, out)


def save_figure(fig, ax, out: str | Path) -> Path:
    """Grid, legend, layout; written to ``out`` (folders made) and closed."""
    import matplotlib.pyplot as plt

    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _baseline(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        if not sep:
            raise ValueError
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--baseline: expected NAME=VALUE, got {text!r}") from None


def runs_parser(doc: str, baseline, baseline_help: str, out: str) -> argparse.ArgumentParser:
    """The command line of a plot over training runs (shared with
    :mod:`agents.analysis.pareto`): the run folders, ``--baseline`` by hand (parsed by
    ``baseline``), ``--baselines`` and ``--baseline-names`` from a compare folder,
    ``--title`` and ``--out``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="run folders (each with tb/)")
    ap.add_argument("--baseline", action="append", type=baseline, default=[], help=baseline_help)
    ap.add_argument(
        "--baselines",
        metavar="COMPARE",
        help="read the baselines' values from a mrgym compare folder or its results.csv "
        "(the mean over its seeds); --baseline values are added to them or replace them",
    )
    ap.add_argument(
        "--baseline-names",
        metavar="NAMES",
        help="with --baselines: only these comma-separated policies (default: all of the file's)",
    )
    ap.add_argument("--title", default="")
    ap.add_argument("--out", default=out)
    return ap


def file_names(args: argparse.Namespace) -> list[str] | None:
    if args.baseline_names and not args.baselines:
        raise ValueError("--baseline-names: only with --baselines")
    if not args.baseline_names:
        return None
    return [n.strip() for n in args.baseline_names.split(",") if n.strip()]


def main(argv: list[str] | None = None) -> None:
    ap = runs_parser(__doc__, _baseline, "NAME=VALUE, by hand", "learning_curves.png")
    ap.add_argument("--tag", default="mr_eval/mean_jct")
    args = ap.parse_args(argv)
    try:  # a bad file or run: one line naming it, not a traceback
        names = file_names(args)
        baselines: dict[str, float] = {}
        if args.baselines:
            tag = tag_of(args.tag)
            means = compare_means(args.baselines, names)
            baselines = {n: m[tag] for n, m in means.items() if tag in m}
        baselines.update(dict(args.baseline))
        path = plot_curves(args.runs, baselines, args.out, args.tag, args.title)
    except ValueError as e:
        ap.error(str(e))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
