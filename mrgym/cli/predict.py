"""``mrgym predict``: Lee ch. 5's prediction of one job's completion-time distribution.

The model is fitted to job N's task logs at the history seeds and a Monte-Carlo
simulation gives its JCT distribution (the ``jct-predict`` tool of
:data:`mrgym.registry.TOOLS`, reached by name: this module never imports ``baselines``);
the simulator then runs the scenario at held-out seeds for the actual JCTs, and a plot
draws the predicted CDF over their empirical CDF.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from mrgym.seeds import check_seed, parse_seeds

MAX_SAMPLES = 1_000_000  # K x workers floats per array: a typo must not fill the memory
FILES = ("predict_cdf.png", "predict.json")
QUANTS = ("p10", "p50", "p90", "p99", "mean")
_METHOD = {"moments": "moments (eq. 5.1)", "mle": "maximum likelihood"}


def add_parser(sub, formatter) -> None:
    """Declare ``predict`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "predict",
        help="predict a job's completion-time distribution (Lee ch. 5 Monte-Carlo)",
        description="Fit log-normal task-duration models to job N's task logs at the "
        "history seeds, simulate its completion time K times (Lee thesis ch. 5), print the "
        "quantiles beside the simulator's actual JCTs at held-out seeds and plot both CDFs.",
        formatter_class=formatter,
    )
    p.add_argument("--config", default="lee-gpu", help="bundled scenario name or YAML path")
    p.add_argument(
        "--job",
        type=int,
        required=True,
        help="job id (submission order, from 0); it must be the same job (profile, maps, "
        "reduces, input size) at every history and actual seed, so a drawn workload "
        "(e.g. ila72) needs a scenario with an explicit job list",
    )
    p.add_argument("--samples", type=int, default=1000, help="Monte-Carlo samples K")
    p.add_argument("--seed", type=int, default=0, help="Monte-Carlo seed")
    p.add_argument(
        "--history-seeds", default="0-9", help="seeds of the runs the model is fitted to"
    )
    p.add_argument("--actual-seeds", default="100-119", help="held-out seeds for the actual JCTs")
    p.add_argument("--scheduler", default="dl-sched", help="registered scheduler name")
    p.add_argument(
        "--method",
        default="moments",
        choices=["moments", "mle"],
        help="how each phase's log-normal is fitted: moments = the thesis' eq. 5.1 (§5.2.1, "
        "from the durations' mean and variance); mle = maximum likelihood",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="folder for predict_cdf.png and predict.json (default: runs/predict-CONFIG-jobN)",
    )
    p.set_defaults(func=cmd_predict)


def _seeds(text: str, flag: str) -> list[int]:
    try:
        return parse_seeds(text)
    except ValueError as e:  # parse_seeds names --seeds; this command's flag is another
        raise ValueError(str(e).replace("--seeds", flag, 1)) from None


class _Progress:
    """A tqdm bar on a terminal, a line per run otherwise (as ``compare``)."""

    def __init__(self, total: int, desc: str):
        from mrgym.runner import progress_mode

        self.mode, self.total, self.desc, self.i = progress_mode(True), total, desc, 0
        self.bar = None
        self.t0 = time.perf_counter()
        if self.mode == "bar":
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="run", desc=desc, leave=False)

    def __call__(self, seed: int) -> None:
        self.i += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.mode == "lines":
            took = time.perf_counter() - self.t0
            print(
                f"[{self.i}/{self.total}] {self.desc} seed {seed}: {took:.1f} s",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _check_same_job(sc, args: argparse.Namespace, seeds: list[int], build) -> None:
    """``--job`` must exist and be the same job (profile, maps, reduces, input size) at
    every seed: Lee §5.2.3 fits the model to past runs of one job, and a drawn workload
    has another job N at each seed. Builds the episodes only (no run): a few ms each."""
    first, first_seed = None, seeds[0]
    for s in seeds:
        jobs = build(sc, args.scheduler, s).view.all_jobs
        n = len(jobs)
        if not 0 <= args.job < n:
            raise ValueError(
                f"--job {args.job}: expected a job id from 0 to {n - 1} "
                f"(--config {sc.name} has {n} job{'s' if n != 1 else ''} at seed {s})"
            )
        sp = jobs[args.job].spec
        key = (sp.profile.name, sp.n_maps, sp.n_reduces, float(sp.input_mb))
        first = first or key
        if key != first:
            what = [
                f"seed {x} {k[0]} ({k[1]} maps, {k[2]} reduces, {k[3]:g} MB)"
                for x, k in ((first_seed, first), (s, key))
            ]
            raise ValueError(
                f"--job {args.job}: not the same job at every seed of --config {sc.name} "
                f"({what[0]}, {what[1]}); the model is fitted to runs of one job (Lee "
                "§5.2.3): use a --config with an explicit job list"
            )


def cmd_predict(args: argparse.Namespace) -> int:
    from mrgym import registry
    from mrgym.config import load_scenario
    from mrgym.runner import build_simulation, run_sim

    sc = load_scenario(args.config)
    if not 1 <= args.samples <= MAX_SAMPLES:
        raise ValueError(f"--samples {args.samples}: expected an integer from 1 to {MAX_SAMPLES:,}")
    seed = check_seed(args.seed)
    hist = _seeds(args.history_seeds, "--history-seeds")
    actual = _seeds(args.actual_seeds, "--actual-seeds")
    registry.make(args.scheduler)  # an unknown name fails before any run
    _check_same_job(sc, args, hist + actual, build_simulation)
    out = Path(args.out) if args.out else Path("runs") / f"predict-{sc.name}-job{args.job}"
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r}: is a file, expected a folder")
    predict_job = registry.tool("jct-predict")
    bar = _Progress(len(hist), "history")
    try:
        jp = predict_job(
            sc, args.job, hist, args.samples, seed, args.scheduler, method=args.method, on_run=bar
        )
    finally:
        bar.close()
    jcts: list[float] = []
    bar = _Progress(len(actual), "actual")
    try:
        for s in actual:
            r = run_sim(sc, args.scheduler, s)
            if args.job < len(r.jobs) and r.jobs[args.job][4] is not None:
                _, _, _, arr, fin = r.jobs[args.job]
                jcts.append(fin - arr)
            bar(s)
    finally:
        bar.close()
    pred = jp.prediction.summary()
    act = np.array(jcts)
    print(_table(jp, pred, act, hist, actual, args.samples))
    out.mkdir(parents=True, exist_ok=True)
    png = _plot(jp, act, out / FILES[0])
    data = {
        "scenario": sc.name,
        "job": args.job,
        "job_name": jp.job_name,
        "scheduler": args.scheduler,
        "samples": args.samples,
        "seed": seed,
        "method": args.method,
        "history_seeds": hist,
        "actual_seeds": actual,
        "model": jp.model.as_dict(),
        "predicted": pred,
        "history_jct": jp.history_jct,
        "actual_jct": jcts,
    }
    (out / FILES[1]).write_text(json.dumps(data, indent=2) + "\n")
    print(f"\nwrote {png.name}, {FILES[1]} to {out}/")
    return 0


def _table(jp, pred: dict, act: np.ndarray, hist, actual, k: int) -> str:
    m = jp.model
    lines = [
        f"{jp.scenario} job {jp.job} ({jp.job_name}): {m.n_maps} maps, {m.n_reduces} reduces "
        f"on {m.map_workers} map / {m.reduce_workers} reduce workers; model from "
        f"{len(hist)} history run(s) fitted by {_METHOD[jp.method]}, {k:,} Monte-Carlo samples",
        "",
        f"{'JCT (s)':<22}" + "".join(f"{q:>9}" for q in QUANTS),
        f"{'predicted':<22}" + "".join(f"{pred[q]:>9.1f}" for q in QUANTS),
    ]
    if len(act):
        qs = np.quantile(act, [0.1, 0.5, 0.9, 0.99])
        row = [*qs, act.mean()]
        lines.append(f"{f'actual ({len(act)} seeds)':<22}" + "".join(f"{v:>9.1f}" for v in row))
        inside = np.mean((act >= pred["p10"]) & (act <= pred["p90"]))
        lines.append(
            f"\nactual JCTs within the predicted p10-p90: {100 * inside:.0f} % (80 % if the "
            f"prediction is calibrated); mean error {100 * (pred['mean'] / act.mean() - 1):+.1f} %"
        )
    missing = len(actual) - len(act)
    if missing:
        lines.append(f"{missing} actual run(s) did not finish the job (not counted)")
    lines += [f"note: {n}" for n in m.notes]
    return "\n".join(lines)


def _plot(jp, act: np.ndarray, path: Path) -> Path:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.add_subplot()
    ax.grid(alpha=0.3)
    x = jp.prediction.samples
    ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=f"predicted ({len(x):,} samples)")
    if len(act):
        a = np.sort(act)
        y = np.arange(len(a) + 1) / len(a)  # from 0 at the first JCT: a full staircase
        ax.step(np.r_[a[0], a], y, where="post", label=f"actual ({len(a)} seeds)")
    h = np.sort(jp.history_jct)
    ax.plot(h, np.zeros(len(h)), "|", ms=12, color="0.4", label=f"history ({len(h)} runs)")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("CDF")
    ax.set_title(
        f"{jp.scenario}, job {jp.job} ({jp.job_name}): Lee ch. 5 prediction vs simulator",
        fontsize=9,
    )
    ax.legend(fontsize=8, loc="lower right")
    fig.savefig(path, dpi=150)
    return path
