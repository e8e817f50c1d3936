"""Generalization: learned agents and baselines on workloads they were not trained on.

Three workloads, each a function ``(seed, trace_dir) -> (config, overrides)`` for
``gym.make("MRCluster-v0", config=..., overrides=...)`` or ``run_sim(load_scenario(...))``:

* ``in-dist`` — ``ila72`` as trained on: ILA's 72-VM Xen cluster (ILA §5.1) with the Table
  4 job mix (ILA §5.2), the episode drawn from the seed.
* ``swim-ila72`` — the same cluster running a window of the SWIM Facebook 2009 trace
  (``FB-2009_samples_24_times_1hr_0.tsv``, one synthesized day of the 600-machine FB
  cluster; ``mrgym.workloads.swim`` says how bytes become tasks).  The seed draws the
  window: a job index uniform over the day (so busy hours, which hold more jobs, come up
  as often as a random job sees them), and the ``SWIM_JOBS`` = 40 jobs from it on, at the
  trace's own pace (``time_scale`` 1: FB-2009 averages one job per 14.7 s, ILA's mix one
  per 14 s).  Maps are capped at ``SWIM_MAX_MAPS`` = 256 a job (the trace's p99 input,
  80 GB, would be 640 blocks; 256 is ~1.8 waves of ila72's 144 map slots, so big jobs still
  queue) and shuffle/output shrink in proportion; an episode runs in under ~2 s with Fair.
* ``swim-ila216`` — the same windows on ila72's cluster x3 (``LARGER_FACTOR``): 36 servers,
  216 VMs, 6 racks.  Chosen over ``ila2400`` (ILA §5.6) because only the size changes
  (same servers, VM slots, 6 servers per rack, 1 Gbit/s uplinks) so a gap is the size's,
  and because x3 lies outside the x0.5..x2 range of ``agents.randomize``'s default spec:
  it tests extrapolation, not interpolation.  ila2400 also has 10 Gbit/s uplinks and 33x
  the VMs (minutes per episode for a model in the gym loop).

:func:`generalization_table` runs every model (``ModelPolicy.load``) and baseline
(``registry.make`` via ``run_sim``) on every workload and seed through
:func:`mrgym.evaluate.evaluate`.  A model runs under the env settings it was trained with
(job slots, queue order, speculation, work conservation: ``ModelPolicy.bind`` refuses
others) on the workload's scenario: ``evaluate`` builds its env from the model's
``env_kwargs`` with our scenario as ``config``, and we pass ``overrides=None`` and
``max_sim_time_s=None`` so that the training run's scenario overrides and time cap do not
leak into the evaluation scenario (baselines run it under its own cap too).  A baseline
with a value tuned per scenario by name (``hostcap``'s cap and ``wfair``'s exponent, alone
or as a gated composition's order) takes the value of the workload's base config
(``ila72``), through its ``tuned_for``: it transfers what was tuned on ``ila72`` as the
agents transfer what they learned there, where the window's own name would find no value
(``hostcap`` would run uncapped, ``wfair`` at its default exponent).

The comparison across workloads is relative to Fair on the same workload and seed (the
same jobs, blocks and task luck): ``jct_vs_fair`` is the mean over seeds of a policy's
mean JCT / Fair's, and ``gap_vs_in_dist`` is ``jct_vs_fair`` on the workload minus
``jct_vs_fair`` in distribution (> 0: the policy loses ground against Fair off its
training distribution).  Raw JCTs are not comparable across workloads: SWIM's jobs are
mostly tiny.
"""

from __future__ import annotations

import argparse
import copy
import functools
import inspect
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mrgym.config import load_scenario
from mrgym.evaluate import evaluate
from mrgym.summary import format_seeds, write_csv
from mrgym.workloads import read_swim

SWIM_FILE = "FB-2009_samples_24_times_1hr_0.tsv"
SWIM_JOBS = 40
SWIM_MAX_MAPS = 256
LARGER_FACTOR = 3
REFERENCE = "fair"  # every JCT is compared with this baseline's on the same episode
_WINDOW_SALT = 0x5713  # the window stream is independent of the episode's own draws

Workload = Callable[[int, "str | Path | None"], tuple[str, dict[str, Any]]]


def swim_trace(trace_dir: str | Path | None) -> Path:
    """The FB-2009 trace file in ``trace_dir``; a missing one is a one-line error."""
    p = Path(trace_dir or ".") / SWIM_FILE
    if trace_dir is None or not p.is_file():
        raise FileNotFoundError(
            f"SWIM trace {SWIM_FILE} not found"
            f"{f' in {trace_dir}' if trace_dir is not None else ''} (pass --trace-dir, or set "
            "MRGYM_TRACES to the folder that holds swim_fb/; docs/traces.md says where to get it)"
        )
    return p.resolve()


@functools.lru_cache(maxsize=4)
def _submit_times(path: Path) -> tuple[float, ...]:
    return tuple(r.submit_s for r in read_swim(path))


def swim_window(seed: int, trace_dir: str | Path | None, n_jobs: int = SWIM_JOBS) -> float:
    """The ``start_s`` of seed's window: the submit time of a job index drawn uniformly so
    that ``n_jobs`` jobs follow it (the trace is sorted by submit time)."""
    times = _submit_times(swim_trace(trace_dir))
    rng = np.random.default_rng([int(seed), _WINDOW_SALT])
    return float(times[int(rng.integers(0, len(times) - n_jobs + 1))])


def larger_cluster(factor: int = LARGER_FACTOR) -> dict[str, Any]:
    """Overrides that make ila72's cluster ``factor`` times as large (hosts and racks)."""
    base = load_scenario("ila72").cluster
    return {
        "cluster.hosts.0.count": base.hosts[0].count * factor,
        "cluster.racks": base.racks * factor,
    }


def in_distribution(seed: int, trace_dir: str | Path | None = None) -> tuple[str, dict]:
    """ila72 as the agents train on it (the seed draws the episode)."""
    return "ila72", {}


def swim_on_ila72(seed: int, trace_dir: str | Path | None) -> tuple[str, dict]:
    """Seed's SWIM FB-2009 window on the ila72 cluster (module docstring)."""
    path = swim_trace(trace_dir)
    return "ila72", {
        "name": f"swim-ila72-w{seed}",
        "workload": {
            "kind": "swim",
            "path": str(path),
            "start_s": swim_window(seed, trace_dir),
            "max_jobs": SWIM_JOBS,
            "max_maps": SWIM_MAX_MAPS,
            "time_scale": 1.0,
        },
    }


def swim_on_larger(seed: int, trace_dir: str | Path | None) -> tuple[str, dict]:
    """Seed's SWIM window (the same as :func:`swim_on_ila72`'s) on ila72 x ``LARGER_FACTOR``."""
    config, over = swim_on_ila72(seed, trace_dir)
    return config, {**over, "name": f"swim-ila216-w{seed}", **larger_cluster()}


WORKLOADS: dict[str, Workload] = {
    "in-dist": in_distribution,
    "swim-ila72": swim_on_ila72,
    "swim-ila216": swim_on_larger,
}


def load_models(models: dict[str, Any]) -> list[Any]:
    """``ModelPolicy`` objects for ``{name: run folder, model.zip or ModelPolicy}``.  Their
    env settings keep only MRClusterEnv's arguments: a training run's extra env keys (a
    domain-randomization spec) describe its training distribution, not an env argument."""
    import mrgym
    from mrgym.envs.mr_cluster import MRClusterEnv

    allowed = set(inspect.signature(MRClusterEnv.__init__).parameters) - {"self", "config"}
    out = []
    for name, src in models.items():
        # a copy: the caller's policy keeps its own name and settings
        pol = copy.copy(src) if hasattr(src, "predict") else mrgym.ModelPolicy.load(src)
        pol.name = name
        pol.env_kwargs = {k: v for k, v in pol.env_kwargs.items() if k in allowed}
        out.append(pol)
    return out


def baseline(name: str, config: str) -> Any:
    """Registry scheduler ``name`` that takes the values tuned for ``config`` (module
    docstring): its own ``tuned_for`` or, in a gated composition, its order's."""
    from mrgym import registry

    sched = registry.make(name)
    for part in (sched, getattr(sched, "order", None)):
        if part is not None and hasattr(part, "tuned_for"):
            part.tuned_for = config
    return sched


def run_rows(
    models: dict[str, Any],
    baselines: Iterable[str],
    seeds: Iterable[int],
    trace_dir: str | Path | None,
    workloads: Iterable[str] | None = None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """One flat row (``mrgym.evaluate``'s) per policy x workload x seed, tagged
    ``workload``; Fair is added to the baselines when missing (the reference)."""
    names = list(baselines)
    if REFERENCE not in names:
        names.insert(0, REFERENCE)
    agents = load_models(models)
    rows = []
    for wl in workloads or WORKLOADS:
        if wl not in WORKLOADS:
            raise ValueError(f"workload {wl!r}: expected one of {list(WORKLOADS)}")
        for seed in seeds:
            config, over = WORKLOADS[wl](seed, trace_dir)
            sc = load_scenario(config, over)
            policies = [baseline(n, config) for n in names] + agents
            kw = {"overrides": None, "max_sim_time_s": None}  # module docstring
            for row in evaluate(policies, [sc], [seed], progress=progress, env_kwargs=kw):
                vms = sum(g.count * g.vms_per_host for g in sc.cluster.hosts)
                rows.append({"workload": wl, "vms": vms, **row})
    return rows


def _mean(xs: list[float]) -> float:
    return float(np.mean(xs)) if xs else math.nan


def summarize_gap(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per policy x workload: means over seeds, ``jct_vs_fair`` (mean over seeds
    of JCT / Fair's JCT on that episode, with its standard deviation) and the gap to the
    policy's in-distribution ``jct_vs_fair``."""
    ref = {(r["workload"], r["seed"]): r["mean_jct_s"] for r in rows if r["policy"] == REFERENCE}
    out: list[dict[str, Any]] = []
    keys = list(dict.fromkeys((r["policy"], r["workload"]) for r in rows))
    for pol, wl in keys:
        rs = [r for r in rows if r["policy"] == pol and r["workload"] == wl]
        # a truncated episode's mean JCT covers its finished jobs only: it could make a
        # stalled policy look fast, so it gives no ratio (the truncated column counts it)
        ratios = [
            r["mean_jct_s"] / ref[(wl, r["seed"])]
            for r in rs
            if (wl, r["seed"]) in ref and not r["truncated"]
        ]
        out.append(
            {
                "policy": pol,
                "workload": wl,
                "vms": rs[0]["vms"],
                "seeds": format_seeds(r["seed"] for r in rs),
                "jobs": _mean([r["jobs_submitted"] for r in rs]),
                "tasks": _mean([r["tasks_completed"] for r in rs]),
                "mean_jct_s": _mean([r["mean_jct_s"] for r in rs]),
                "p95_jct_s": _mean([r["p95_jct_s"] for r in rs]),
                "local_frac": _mean([r["local_frac"] for r in rs]),
                "jct_vs_fair": _mean(ratios),
                "jct_vs_fair_sd": float(np.std(ratios, ddof=1)) if len(ratios) > 1 else math.nan,
                "truncated": sum(bool(r["truncated"]) for r in rs),
            }
        )
    base = {r["policy"]: r["jct_vs_fair"] for r in out if r["workload"] == "in-dist"}
    for r in out:
        ind = base.get(r["policy"])
        r["gap_vs_in_dist"] = r["jct_vs_fair"] - ind if ind is not None else math.nan
    return out


def generalization_table(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """Models (``{name: run folder or model.zip}``) and registered baselines on every
    workload of :data:`WORKLOADS` (or ``workloads``) and seed, with :func:`run_rows`'s
    arguments: :func:`summarize_gap`'s rows."""
    return summarize_gap(run_rows(*args, **kwargs))


def markdown(table: list[dict[str, Any]]) -> str:
    """The table as markdown, with the criterion under it."""
    cols = [
        ("policy", "policy", "{}"),
        ("workload", "workload", "{}"),
        ("vms", "VMs", "{}"),
        ("seeds", "seeds", "{}"),
        ("jobs", "jobs", "{:.0f}"),
        ("tasks", "tasks", "{:.0f}"),
        ("mean_jct_s", "mean JCT (s)", "{:.1f}"),
        ("p95_jct_s", "p95 JCT (s)", "{:.1f}"),
        ("local_frac", "node+server locality", "{:.2f}"),
        ("jct_vs_fair", "JCT / Fair", "{:.3f}"),
        ("jct_vs_fair_sd", "sd", "{:.3f}"),
        ("gap_vs_in_dist", "gap vs in-dist", "{:+.3f}"),
        ("truncated", "truncated", "{}"),
    ]
    lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "---|" * len(cols)]
    for r in table:
        cells = ["—" if _isnan(r[k]) else f.format(r[k]) for k, _, f in cols]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(
        "\nJCT / Fair: mean over seeds of the policy's mean JCT over Fair's on the same "
        "episode (< 1 beats Fair).  gap vs in-dist: JCT / Fair on the workload minus "
        "JCT / Fair on ila72 (> 0: the policy loses ground against Fair off distribution)."
    )
    return "\n".join(lines) + "\n"


def _isnan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def plot_gap(table: list[dict[str, Any]], path: str | Path) -> Path:
    """Grouped bars of JCT / Fair per workload (one colour per policy, sd as error bars)."""
    from matplotlib.figure import Figure

    from mrgym.plots import DPI, policy_colors

    wls = list(dict.fromkeys(r["workload"] for r in table))
    pols = list(dict.fromkeys(r["policy"] for r in table))
    colors = policy_colors(pols)
    fig = Figure(figsize=(max(5.0, 1.2 + 0.5 * len(wls) * len(pols)), 3.6))
    ax = fig.add_subplot()
    width = 0.8 / len(pols)
    for i, pol in enumerate(pols):
        got = {r["workload"]: r for r in table if r["policy"] == pol}
        xs = [k + (i - (len(pols) - 1) / 2) * width for k in range(len(wls))]
        ys = [got[w]["jct_vs_fair"] if w in got else math.nan for w in wls]
        es = [got[w]["jct_vs_fair_sd"] if w in got else 0.0 for w in wls]
        ax.bar(xs, ys, width, yerr=es, label=pol, color=colors[pol][0], capsize=2)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xticks(range(len(wls)), wls)
    ax.set_ylabel("mean JCT / Fair's (same episode)")
    ax.set_title("Generalization: JCT relative to Fair, per workload")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    return Path(path)


def write_outputs(rows: list[dict], table: list[dict], out: str | Path) -> list[Path]:
    """``runs.csv`` (per seed), ``generalization.csv``, ``.md`` and ``.png`` in ``out``."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    write_csv(rows, d / "runs.csv")
    write_csv(table, d / "generalization.csv")
    (d / "generalization.md").write_text(markdown(table))
    plot_gap(table, d / "generalization.png")
    return [d / n for n in ("runs.csv", "generalization.csv", "generalization.md")] + [
        d / "generalization.png"
    ]


def main(argv: list[str] | None = None) -> int:
    from mrgym.seeds import parse_seeds

    ap = argparse.ArgumentParser(
        prog="python -m agents.analysis.generalize",
        description="Models and baselines on ila72 and on SWIM FB-2009 windows (ila72, x3).",
    )
    ap.add_argument("--models", nargs="*", default=[], metavar="NAME=PATH")
    ap.add_argument("--baselines", default="fair,delay", help="comma-separated registry names")
    ap.add_argument("--seeds", default="0-2", help="e.g. 0-4 or 1,3,9")
    # the trace is not shipped (docs/traces.md): MRGYM_TRACES names the folder that holds it
    traces = os.environ.get("MRGYM_TRACES")
    ap.add_argument("--trace-dir", default=str(Path(traces) / "swim_fb") if traces else None)
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated")
    ap.add_argument("--out", default="runs/generalize")
    a = ap.parse_args(argv)
    models = {}
    for item in a.models:
        name, eq, path = item.partition("=")
        if not eq or not name or not path:
            ap.error(f"--models {item!r}: expected NAME=PATH")
        models[name] = path
    try:
        seeds = parse_seeds(a.seeds)
        base = [b for b in a.baselines.split(",") if b]
        wls = [w for w in a.workloads.split(",") if w]
        rows = run_rows(models, base, seeds, a.trace_dir, wls, progress=True)
    except (ValueError, FileNotFoundError) as e:
        ap.exit(2, f"generalize: {e}\n")
    table = summarize_gap(rows)
    paths = write_outputs(rows, table, a.out)
    print(markdown(table))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
