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
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mrgym.runner import run_episode, run_sim

SUMMARY = [
    ("mean_jct_s", "mean JCT (s)"),
    ("p95_jct_s", "p95 JCT (s)"),
    ("small_jct_s", "small-job JCT (s)"),
    ("makespan_s", "makespan (s)"),
    ("throughput_jobs_per_h", "jobs/h"),
    ("local_frac", "node+server local"),
    ("fairness_jain", "Jain"),
    ("slot_utilization", "slot util."),
    ("tasks_reexecuted", "re-executed"),
]


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


def evaluate(
    policies: Iterable,
    scenarios: Iterable,
    seeds: Iterable[int],
    progress: bool = False,
    env_kwargs: dict | None = None,
    keep_logs: bool = False,
) -> list[dict[str, Any]]:
    """Run every policy on every scenario and seed; one flat row per run."""
    policies, scenarios, seeds = list(policies), list(scenarios), list(seeds)
    runs = [(p, s, seed) for s in scenarios for p in policies for seed in seeds]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(runs), unit="run", desc="evaluate")
    rows = []
    for pol, sc, seed in runs:
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
    if bar is not None:
        bar.close()
    return rows


def _run_one(pol, sc, seed: int, env_kwargs: dict):
    if callable(pol) and not hasattr(pol, "decide") and not isinstance(pol, str):
        import gymnasium as gym

        kw = dict(env_kwargs)
        kw.update(getattr(pol, "env_kwargs", {}))  # a saved model brings its own settings
        env = gym.make("MRCluster-v0", config=sc, **kw)
        policy = pol(env)
        r = run_episode(env, policy, seed)
        jobs = [
            (j.id, j.name, len(j.maps), j.arrived_s, j.finish_s) for j in env.unwrapped.sim.jobs
        ]
        env.close()
        return getattr(policy, "name", "model"), r.metrics, r.wall_s, jobs
    r = run_sim(sc, pol, seed)
    return r.scheduler, r.metrics, r.wall_s, r.jobs


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and std across seeds, one row per policy x scenario (first-seen order)."""
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["scenario"], r["policy"]), []).append(r)
    out = []
    for (sc, pol), rs in groups.items():
        row = {"scenario": sc, "policy": pol, "seeds": len(rs)}
        for key, _ in SUMMARY:
            vals = np.array(
                [r[key] for r in rs if r.get(key) is not None and not _nan(r[key])], dtype=float
            )
            row[key] = (
                (float(vals.mean()), float(vals.std())) if len(vals) else (math.nan, math.nan)
            )
        out.append(row)
    return out


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def markdown_table(summary: list[dict[str, Any]]) -> str:
    head = ["policy"] + [label for _, label in SUMMARY]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in summary:
        cells = [row["policy"]]
        for key, _ in SUMMARY:
            m, s = row[key]
            if math.isnan(m):
                cells.append("-")
            elif key in ("local_frac", "fairness_jain", "slot_utilization"):
                cells.append(f"{m:.3f} ± {s:.3f}")
            else:
                cells.append(f"{m:,.1f} ± {s:,.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


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


def plot(
    rows: list[dict[str, Any]], out_dir: str | Path, job_jcts: dict[str, list[float]] | None = None
) -> list[Path]:
    """JCT CDF per policy, map-locality stacked bars, throughput and fairness bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarize(rows)
    policies = [r["policy"] for r in summary]
    paths = []

    if job_jcts:
        fig, ax = plt.subplots(figsize=(6, 4))
        for pol, xs in job_jcts.items():
            xs = np.sort(np.asarray(xs))
            ax.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", label=pol)
        ax.set_xscale("log")
        ax.set_xlabel("job completion time (s)")
        ax.set_ylabel("fraction of jobs")
        ax.set_title("JCT CDF (all seeds)")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        paths.append(_save(fig, out / "jct_cdf.png"))

    fig, ax = plt.subplots(figsize=(6, 4))
    bottom = np.zeros(len(policies))
    for level in ("node", "server", "rack", "off_rack"):
        vals = np.array(
            [
                np.mean([r[f"map_locality.{level}"] for r in rows if r["policy"] == p])
                for p in policies
            ]
        )
        ax.bar(policies, vals, bottom=bottom, label=level.replace("_", "-"))
        bottom += vals
    ax.set_ylabel("fraction of maps")
    ax.set_title("map locality")
    ax.legend(fontsize=8)
    ax.tick_params(axis="x", rotation=30)
    paths.append(_save(fig, out / "locality.png"))

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, key, label in (
        (axes[0], "throughput_jobs_per_h", "throughput (jobs/h)"),
        (axes[1], "fairness_jain", "fairness (Jain's index)"),
    ):
        means = [r[key][0] for r in summary]
        stds = [r[key][1] for r in summary]
        ax.bar(policies, means, yerr=stds, capsize=3, color="tab:blue")
        ax.set_title(label)
        ax.tick_params(axis="x", rotation=30)
    paths.append(_save(fig, out / "throughput_fairness.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def job_jcts(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Per policy, every completed job's JCT across seeds (rows from ``keep_logs=True``)."""
    out: dict[str, list[float]] = {}
    for r in rows:
        for _, _, _, arrived, finish in r.get("_jobs") or ():
            if arrived is not None and finish is not None:
                out.setdefault(r["policy"], []).append(finish - arrived)
    return out
