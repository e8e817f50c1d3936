"""``mrgym tune``: hyper-parameter search for a training config (:mod:`agents.tune`:
Ray Tune trials, Optuna search, ASHA early stopping on the held-out mean JCT)."""

from __future__ import annotations

import argparse


def add_parser(sub, formatter) -> None:
    t = sub.add_parser(
        "tune",
        help="tune an SB3 agent's hyper-parameters (Ray Tune, Optuna, ASHA)",
        description="Run --samples training trials of a configs/train/*.yaml config, one CPU "
        "each, with hyper-parameters proposed by Optuna; ASHA stops the worse trials at "
        "each rung on the held-out mean JCT (the config's eval.seeds). Writes "
        "OUT/tune-NAME/: trials/ (one folder per trial, its TensorBoard under tb/), "
        "trials.csv and best.yaml (the config with the best hyper-parameters, for "
        "`mrgym train --config`).",
        formatter_class=formatter,
    )
    t.add_argument(
        "--config", required=True, help="training config, e.g. configs/train/ppo_ila72.yaml"
    )
    t.add_argument("--samples", type=int, default=8, help="number of trials")
    t.add_argument(
        "--steps", type=int, help="environment steps per trial (default: the config's total_steps)"
    )
    t.add_argument(
        "--rungs", type=int, default=4, help="held-out evaluations per trial (ASHA's rungs)"
    )
    t.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="trials at a time (default: every CPU of the Ray cluster)",
    )
    t.add_argument(
        "--backend",
        default="ray",
        choices=["ray"],
        help="trials run on Ray Tune (a local Ray, or the cluster at --address)",
    )
    t.add_argument(
        "--address",
        metavar="ADDR",
        help="join this Ray cluster (HOST:6379 or ray://HOST:10001) instead of a local Ray; "
        "mrgym must be installed on every node",
    )
    t.add_argument("--out", default="runs", metavar="DIR", help="folder for tune-NAME/")
    t.set_defaults(func=cmd_tune)


def cmd_tune(args: argparse.Namespace) -> int:
    from mrgym.extras import TUNE_HINT, TUNE_MODULES, require

    require("mrgym tune")  # before agents (torch) is imported
    require("mrgym tune", TUNE_MODULES, TUNE_HINT)
    from agents.config import load_train_config
    from agents.tune import tune_agent

    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers {args.workers}: expected at least 1")
    cfg = load_train_config(args.config)
    r = tune_agent(
        cfg,
        args.samples,
        steps=args.steps,
        rungs=args.rungs,
        workers=args.workers,
        address=args.address,
        out=args.out,
    )
    best = ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.best.items()
    )
    print(f"{r.trials} trials; best held-out mean JCT {r.best_jct:.1f} s with {best}")
    print(f"best config: {r.best_yaml}\ntrials: {r.folder / 'trials.csv'}")
    print(f"tensorboard --logdir {r.folder / 'trials'}")
    return 0
