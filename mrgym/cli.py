"""The ``mrgym`` command.

mrgym simulate --config ila72 --scheduler dl-sched --seed 0 [--json] [--log tasks.csv]
mrgym scenarios            # bundled scenarios, one line each
mrgym schedulers           # registered scheduler names
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.1f}"
    return str(v)


METRIC_LABELS = [
    ("jobs_completed", "jobs completed"),
    ("jobs_submitted", "jobs submitted"),
    ("tasks_completed", "tasks completed"),
    ("tasks_reexecuted", "tasks re-executed"),
    ("mean_jct_s", "mean JCT (s)"),
    ("median_jct_s", "median JCT (s)"),
    ("p95_jct_s", "p95 JCT (s)"),
    ("makespan_s", "makespan (s)"),
    ("throughput_jobs_per_h", "throughput (jobs/h)"),
    ("fairness_jain", "fairness (Jain)"),
    ("slot_utilization", "slot utilization"),
    ("cpu_utilization", "CPU utilization"),
    ("shuffle_cross_rack_bytes", "cross-rack shuffle (GB)"),
    ("cost_usd", "cost ($)"),
    ("energy_kwh", "energy (kWh)"),
    ("sla_violation_s", "SLA violation (s)"),
]


def metrics_table(result) -> str:
    m = result.metrics
    rows = []
    for key, label in METRIC_LABELS:
        v = m[key]
        if key == "shuffle_cross_rack_bytes":
            v = v / 1024**3
        rows.append((label, _fmt(v)))
    for level, frac in m["map_locality"].items():
        rows.append((f"map locality: {level.replace('_', '-')}", f"{100 * frac:.1f} %"))
    for cls, v in m["mean_jct_by_class_s"].items():
        rows.append((f"mean JCT, {cls} jobs (s)", _fmt(v) if v is not None else "-"))
    w = max(len(r[0]) for r in rows)
    head = f"{result.scenario} · {result.scheduler} · seed {result.seed}"
    lines = [head, "-" * max(len(head), w + 14)]
    lines += [f"{label:<{w}}  {value:>12}" for label, value in rows]
    lines.append(
        f"{'(simulated ' + _fmt(m['sim_time_s']) + ' s in ' + _fmt(result.wall_s) + ' s wall)':>{w + 14}}"
    )
    return "\n".join(lines)


def cmd_simulate(args: argparse.Namespace) -> int:
    from mrgym.config import ScenarioError, load_scenario
    from mrgym.runner import run_sim

    overrides = {}
    for item in args.set or []:
        if "=" not in item:
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE, e.g. hdfs.replication=2")
        k, v = item.split("=", 1)
        import yaml

        overrides[k] = yaml.safe_load(v)
    sc = load_scenario(args.config, overrides or None)
    result = run_sim(sc, args.scheduler, args.seed, progress=not args.json and sys.stderr.isatty())
    if args.log:
        with open(args.log, "w", newline="") as fh:
            rows = [r.to_dict() for r in result.task_log]
            w = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["job"])
            w.writeheader()
            w.writerows(rows)
    if args.json:
        print(json.dumps(result.metrics, indent=2, default=float))
    else:
        print(metrics_table(result))
    return 0


def parse_seeds(text: str) -> list[int]:
    """``0-4`` -> [0..4]; ``1,3,9`` -> [1, 3, 9]; ``7`` -> [7]."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                seeds.extend(range(int(a), int(b) + 1))
            elif part:
                seeds.append(int(part))
        except ValueError:
            raise ValueError(
                f"--seeds {text!r}: expected a range like 0-4 or a list like 1,3,9"
            ) from None
    if not seeds:
        raise ValueError(f"--seeds {text!r}: no seed given")
    return seeds


def cmd_compare(args: argparse.Namespace) -> int:
    import baselines
    from mrgym.config import load_scenario
    from mrgym.evaluate import evaluate, job_jcts, markdown_table, plot, summarize, write_csv

    sc = load_scenario(args.config)
    names = (
        baselines.available()
        if args.schedulers == "all"
        else [n.strip() for n in args.schedulers.split(",")]
    )
    for n in names:
        baselines.make(n)  # fail early on an unknown name
    seeds = parse_seeds(args.seeds)
    rows = evaluate(names, [sc], seeds, progress=sys.stderr.isatty(), keep_logs=True)
    out = Path(args.out or f"runs/compare-{sc.name}")
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "results.csv")
    paths = plot(rows, out, job_jcts(rows))
    print(f"{sc.name}, seeds {args.seeds} (mean ± std over {len(seeds)} seeds)\n")
    print(markdown_table(summarize(rows)))
    print(f"\nwrote {out / 'results.csv'} and {', '.join(p.name for p in paths)} to {out}/")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from mrgym.bench import bench_env, bench_sim

    env = bench_env(args.config, args.steps)
    print(
        f"MRCluster-v0 on {args.config}: {env['env_steps_per_s']:,.0f} steps/s (random legal actions)"
    )
    print(f"CartPole-v1 raw:        {env['cartpole_steps_per_s']:,.0f} steps/s")
    print(f"ratio:                  {env['ratio']:.3f}  (budget >= 0.15)")
    if not args.skip_sim:
        sim = bench_sim(args.sim_config)
        print(
            f"run_sim on {args.sim_config} (dl-sched): {sim['tasks_per_s']:,.0f} tasks/s "
            f"({sim['tasks']} tasks in {sim['wall_s']:.1f} s; budget >= 20 000)"
        )
    return 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    from mrgym.config import available_scenarios, load_scenario

    for name in available_scenarios():
        sc = load_scenario(name)
        print(f"{name:<14} {' '.join(sc.description.split())}")
    return 0


def cmd_schedulers(args: argparse.Namespace) -> int:
    import baselines

    print("\n".join(baselines.available()))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mrgym", description="Simulate and schedule virtualized Hadoop MapReduce clusters."
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser(
        "simulate", help="run one episode of a scenario under a scheduler and print its metrics"
    )
    s.add_argument(
        "--config", default="ila72", help="bundled scenario name or YAML path (default ila72)"
    )
    s.add_argument(
        "--scheduler", default="dl-sched", help="registered scheduler name (see `mrgym schedulers`)"
    )
    s.add_argument("--seed", type=int, default=0, help="episode seed (default 0)")
    s.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a scenario key, e.g. hdfs.replication=2",
    )
    s.add_argument("--json", action="store_true", help="print the metrics object as JSON")
    s.add_argument(
        "--log", metavar="CSV", help="write the task log (one row per attempt) to this file"
    )
    s.set_defaults(func=cmd_simulate)
    c = sub.add_parser(
        "compare", help="compare schedulers on a scenario over seeds: table, CSV, plots"
    )
    c.add_argument("--config", default="ila72", help="bundled scenario name or YAML path")
    c.add_argument(
        "--seeds", default="0-4", help="seed range or list, e.g. 0-4 or 1,3,9 (default 0-4)"
    )
    c.add_argument("--schedulers", default="all", help="comma-separated registered names, or all")
    c.add_argument(
        "--out",
        help="output folder for results.csv and the PNG plots (default runs/compare-CONFIG)",
    )
    c.set_defaults(func=cmd_compare)
    b = sub.add_parser("bench", help="environment and simulator speed (DESIGN §8 budgets)")
    b.add_argument("--config", default="ila72", help="scenario for the env step rate")
    b.add_argument("--steps", type=int, default=20000, help="env steps to time")
    b.add_argument("--sim-config", default="ila2400", help="scenario for run_sim tasks/s")
    b.add_argument("--skip-sim", action="store_true", help="skip the run_sim measurement")
    b.set_defaults(func=cmd_bench)
    sub.add_parser("scenarios", help="list the bundled scenarios").set_defaults(func=cmd_scenarios)
    sub.add_parser("schedulers", help="list the registered schedulers").set_defaults(
        func=cmd_schedulers
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from mrgym.config import ScenarioError

    try:
        return args.func(args)
    except (ScenarioError, ValueError, KeyError, FileNotFoundError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"mrgym: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
