"""What each ``mrgym`` command does (:mod:`mrgym.cli` parses the command line and calls
them), and the helpers they share: reading ``--set`` and ``--seeds``, the metrics table of
``simulate``, the sweep options and the streamed CSV of ``compare`` and ``reproduce``
(``compare`` itself is :mod:`mrgym.cli.compare`).  Every command returns its exit status."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any

from mrgym.metrics import SIMULATE_ROWS, Metric, metric_value
from mrgym.seeds import MAX_SEEDS, check_seed, parse_seeds  # noqa: F401 - re-exported


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.1f}"
    return str(v)


#: ``mrgym simulate``'s rows: (metric key, label), from :data:`mrgym.metrics.METRICS`.
METRIC_LABELS = [(m.key, m.label) for m in SIMULATE_ROWS]


def _show(metric: Metric, v: Any) -> str:
    if v is None:
        return "-"
    if metric.fmt == "percent":
        return f"{100 * v:.1f} %"
    if metric.scale != 1:
        v = v * metric.scale
    return _fmt(v)


def metrics_table(result) -> str:
    m = result.metrics
    rows = [(x.label, _show(x, metric_value(m, x.key))) for x in SIMULATE_ROWS]
    w = max(len(r[0]) for r in rows)
    head = f"{result.scenario} · {result.scheduler} · seed {result.seed}"
    lines = [head, "-" * max(len(head), w + 14)]
    lines += [f"{label:<{w}}  {value:>12}" for label, value in rows]
    if m["truncated"]:
        total = len(result.jobs)
        left = total - m["jobs_completed"] - m["jobs_failed"]
        lines.append(
            f"TRUNCATED at {_fmt(m['sim_time_s'])} s: {left} of {total} job(s) not finished "
            "(run.max_sim_time_s reached, or no host left)"
        )
    lines.append(
        f"{'(simulated ' + _fmt(m['sim_time_s']) + ' s in ' + _fmt(result.wall_s) + ' s wall)':>{w + 14}}"
    )
    return "\n".join(lines)


def parse_overrides(items: list[str] | None) -> dict[str, Any]:
    """``--set KEY=VALUE`` items; each VALUE is YAML (``cluster.racks=2``, ``x=[1, 2]``)."""
    from mrgym.config import ScenarioError, parse_yaml, short

    overrides: dict[str, Any] = {}
    for item in items or []:
        k, eq, v = item.partition("=")
        if not eq or not k.strip():
            raise ScenarioError(f"--set {short(item)}: expected KEY=VALUE, e.g. hdfs.replication=2")
        overrides[k.strip()] = parse_yaml(v, f"--set {short(item)}", lines=False)
    return overrides


def _check_output_file(path: str, option: str) -> None:
    """Fail before a long run, not after it, when its output file cannot be written."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{option} {path!r}: is a directory, expected a file name")
    if not p.parent.is_dir():
        raise ValueError(f"{option} {path!r}: folder {str(p.parent)!r} does not exist")


def cmd_simulate(args: argparse.Namespace) -> int:
    from mrgym.config import load_scenario
    from mrgym.runner import run_sim

    overrides = parse_overrides(args.set)
    sc = load_scenario(args.config, overrides or None)
    seed = check_seed(args.seed)
    if args.log:
        _check_output_file(args.log, "--log")
    # a bar on a terminal, log lines otherwise: stderr, so --json's stdout stays clean
    result = run_sim(sc, args.scheduler, seed, progress=True)
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


def sweep_options(args: argparse.Namespace) -> tuple[int, str, str | None]:
    """``--workers`` (default: every core; with ``--address`` no cap), ``--backend``,
    ``--address`` of ``compare`` and ``reproduce``."""
    from mrgym.sweep import default_workers

    backend = getattr(args, "backend", "process")
    address = getattr(args, "address", None)
    workers = getattr(args, "workers", None)
    if address and backend != "ray":
        raise ValueError("--address: only with --backend ray")
    if workers is None:
        workers = 1_000_000 if address else default_workers()
    if workers < 1:
        raise ValueError(f"--workers {workers}: expected at least 1")
    return workers, backend, address


class CsvStream:
    """Rows appended to ``path`` as the runs finish (finish order), so that a long sweep's
    results are on disk before it ends; ``compare`` rewrites the file in grid order at the
    end.  ``before`` runs at the first row (clearing an old run's files then, not before:
    a sweep stopped before any run finished leaves the old results alone)."""

    def __init__(self, path: Path, before=None):
        self.path, self.before = path, before
        self.fh = None
        self.writer: csv.DictWriter | None = None

    def write(self, row: dict[str, Any]) -> None:
        if self.writer is None:
            if self.before is not None:
                self.before()
            self.fh = open(self.path, "w", newline="")  # noqa: SIM115 - open across calls
            keys = [k for k in row if not k.startswith("_")]
            self.writer = csv.DictWriter(self.fh, fieldnames=keys, extrasaction="ignore")
            self.writer.writeheader()
        self.writer.writerow(row)
        self.fh.flush()

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def cmd_train(args: argparse.Namespace) -> int:
    from mrgym.extras import require

    require("mrgym train")  # before agents (torch) is imported
    from agents.config import load_train_config
    from agents.train import train

    if args.config is None and args.resume is None:
        raise ValueError("train: give --config, or --resume a checkpoint (its run's config)")
    cfg = load_train_config(args.config) if args.config else None
    if getattr(args, "seed", None) is not None:
        if cfg is None or args.resume:
            raise ValueError(
                "train: --seed starts a new run from --config (a resumed run keeps its seed)"
            )
        cfg = cfg.model_copy(update={"seed": args.seed, "name": f"{cfg.name}-s{args.seed}"})
    if getattr(args, "init_from", None) is not None:
        if cfg is None or args.resume:
            raise ValueError(
                "train: --init-from starts a new run from --config (a resumed run continues "
                "its own model)"
            )
        if cfg.pretrain is not None:  # as the config's own validator says it
            raise ValueError(
                f"train: --init-from starts from a trained model, and the config's pretrain "
                f"clones {cfg.pretrain.expert!r} into a fresh one; use a config without pretrain"
            )
        cfg = cfg.model_copy(update={"init_from": args.init_from})
    run = train(cfg, steps=args.steps, logdir=args.logdir, resume=args.resume, progress=True)
    print(
        f"model: {run / 'model.zip'}\nconfig: {run / 'config.yaml'}\n"
        f"tensorboard --logdir {run / 'tb'}"
    )
    return 0


def _max_decisions(args: argparse.Namespace) -> int | None:
    cap = getattr(args, "max_decisions", None)
    if cap is not None and cap < 0:
        raise ValueError(f"--max-decisions: expected a count >= 0 (0: no cap), got {cap}")
    return cap


def _cap_model(factory, cap: int | None) -> int | None:
    """Set a loaded model's decision cap: ``cap`` (0: none), by default its config's
    eval.max_steps.  Returns the cap set (None: none)."""
    n = factory.policy.eval_max_steps if cap is None else cap
    factory.policy.max_decisions = n or None
    return n or None


def cmd_evaluate(args: argparse.Namespace) -> int:
    from mrgym.extras import require

    require("mrgym evaluate")
    from agents.train import ModelFactory
    from mrgym.config import load_scenario
    from mrgym.evaluate import evaluate, markdown_table, summarize, write_csv

    factory = ModelFactory(args.model)
    _cap_model(factory, _max_decisions(args))
    # the scenario defaults to the model's training scenario; the env settings always come
    # from the model (mrgym.evaluate builds the env from them)
    if not (args.config or factory.scenario):
        raise ValueError(
            f"--model {args.model}: saved without a training config.yaml, so it names no "
            "scenario; pass --config SCENARIO"
        )
    sc = load_scenario(args.config or factory.scenario)
    rows = evaluate([factory], [sc], parse_seeds(args.seeds), progress=True)
    print(markdown_table(summarize(rows)))
    if args.csv:
        write_csv(rows, args.csv)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from mrgym.bench import bench_env, bench_sim, env_report

    # flushed: in a pipe or a log, the env half shows while the run_sim half (~20 s) runs
    env = bench_env(args.config, args.steps, ceiling=not args.skip_sim)
    print(env_report(env, args.config), flush=True)
    if not args.skip_sim:
        sim = bench_sim(args.sim_config)
        print(
            f"run_sim on {args.sim_config} (dl-sched): {sim['tasks_per_cpu_s']:,.0f} tasks per "
            f"CPU-s ({sim['tasks']} tasks, {sim['cpu_s']:.1f} CPU-s; budget >= 5 000)"
        )
    return 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    from mrgym.config import available_scenarios, load_scenario

    for name in available_scenarios():
        sc = load_scenario(name)
        print(f"{name:<14} {' '.join(sc.description.split())}")
    return 0


def cmd_schedulers(args: argparse.Namespace) -> int:
    from mrgym import registry

    # the registered names, then the compositions make() builds: one a line, the name
    # first (a valid --scheduler), then what it does
    names = registry.names("all")
    width = max(map(len, names))
    for name in names:
        print(f"{name:<{width}}  {registry.describe(name)}")
    return 0


def _list_claims(paper: str) -> int:
    from mrgym.reproduce.report import load_claims, select

    claims = select(load_claims(), paper)
    # columns as wide as their longest entry, two spaces apart: a long "where" (up to ~55
    # characters) must not run into the claim beside it
    kw = max((len(c.key) for c in claims), default=0)
    ww = max((len(c.where) for c in claims), default=0)
    for c in claims:
        print(f"{c.key:<{kw}}  {c.where:<{ww}}  {c.what}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from mrgym.reproduce.report import (
        REPORT,
        RESULTS,
        check_target,
        counts_text,
        reproduce,
        table,
    )

    if args.list:
        return _list_claims(args.paper)
    keys = [k.strip() for k in (args.claims or "").split(",") if k.strip()]
    # errors before the runs
    out = check_target(args.out, args.update, args.quick, args.paper, keys)
    if out is not None and (out / REPORT).exists():  # said now, so there is time to Ctrl-C
        print(
            f"mrgym: {out}: its {REPORT}, {RESULTS} and figures will be replaced once every "
            "claim has run",
            file=sys.stderr,
        )
    workers, backend, address = sweep_options(args)
    path, outcomes = reproduce(
        args.paper,
        args.seeds,
        args.out,
        progress=True,
        workers=workers,
        backend=backend,
        address=address,
        update=args.update,
        keys=keys,
        quick=args.quick,
    )
    print(table(outcomes))
    print("\n" + counts_text(outcomes))
    plots = sum(o.result.plot is not None for o in outcomes)
    print(f"\nwrote {path}, {plots} plot(s) and {RESULTS} in {path.parent}/")
    failed = [o.claim.key for o in outcomes if o.failed]
    if failed:  # the rows say why; the status lets a script notice
        print(f"mrgym: experiment failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
