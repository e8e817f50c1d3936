"""The ``mrgym`` command.

mrgym simulate --config ila72 --scheduler dl-sched --seed 0 [--json] [--log tasks.csv]
mrgym compare --config ila72 --seeds 0-4 [--schedulers NAMES] [--models M.zip] [--out DIR]
              [--workers N] [--backend process|ray] [--address ADDR]
mrgym bench --config ila72 [--skip-sim]    # env steps/s and run_sim tasks/s
mrgym train --config configs/train/maskable_ppo_ila72.yaml [--steps N] [--resume RUN]
mrgym evaluate --model runs/RUN [--seeds 2000-2019] [--csv FILE]
mrgym reproduce --paper all [--seeds 3] [--update | --out DIR] [--claims K,..] [--quick] [--list]
mrgym tune --config configs/train/ppo_ila72.yaml --samples 8   # Ray Tune + Optuna + ASHA
mrgym predict --config lee-gpu --job 1 [--samples K] [--history-seeds 0-9]  # Lee ch. 5
mrgym calibrate [--stage A,B,C] [--quick] [--update | --out FILE]  # docs/calibration.md
mrgym benchmark --scenario ila72 [--policies NAMES] [--models NAME=PATH ..] [--split test]
                [--with-best-baseline] [--samples K] [--out FILE] [--resume] [--workers N]
mrgym leaderboard [--scenario S] [--write | --check] [--results FOLDER] [--out PAGE]
mrgym scenarios            # bundled scenarios, one line each
mrgym schedulers           # every scheduler name, with what it does
mrgym --version

``train``, ``evaluate``, ``tune``, ``compare --models`` and ``compare --tensorboard`` need
the ``rl`` extras (``pip install -e ".[rl]"`` in the mrgym checkout; ``tune`` also Ray
Tune and Optuna); without them they stop with one line saying so.

Long commands show progress on stderr: a tqdm bar on a terminal, plain log lines when
stderr is a file or a pipe (CI logs, ``nohup``).  Ctrl-C stops with one line and exit
status 130 (``compare`` first saves the runs that finished).
"""

from __future__ import annotations

import argparse
import os
import sys
import time  # noqa: F401 - ``mrgym.cli.time``, as before the commands moved out

# the commands live in mrgym.cli.commands; they are names of this module too, so that
# ``build_parser`` finds them here (a test replaces one) and ``from mrgym.cli import
# parse_seeds`` keeps working
from mrgym import version  # noqa: F401 - ``mrgym.cli.version``, as before
from mrgym.cli.commands import (  # noqa: F401
    MAX_SEEDS,
    METRIC_LABELS,
    cmd_bench,
    cmd_evaluate,
    cmd_reproduce,
    cmd_scenarios,
    cmd_schedulers,
    cmd_simulate,
    cmd_train,
    metrics_table,
    parse_overrides,
    parse_seeds,
)
from mrgym.cli.compare import (  # noqa: F401
    COMPARE_FILES,
    cmd_compare,
    fresh_out_dir,
    write_tensorboard,
)
from mrgym.extras import hint_for


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``(default: X)`` after each option's help, except where there is nothing to show
    (no default, or a flag's False)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def add_max_decisions(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-decisions",
        type=int,
        metavar="N",
        help="cut a model's episode after N decisions, flagged in the table (default: the "
        "model's eval.max_steps; 0: never): a model that holds slots back would run on "
        "to the time cap",
    )


def add_sweep_options(p: argparse.ArgumentParser, unit: str) -> None:
    """``--workers``, ``--backend``, ``--address`` (:mod:`mrgym.sweep`)."""
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help=f"parallel workers, one {unit} each; 1 runs in this process (default: all "
        "cores; with --address: no cap on the cluster's tasks in flight)",
    )
    p.add_argument(
        "--backend",
        default="process",
        choices=["process", "ray"],
        help=f"process: a local process pool; ray: one Ray task per {unit}",
    )
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="with --backend ray: join this Ray cluster (HOST:6379 or ray://HOST:10001; "
        "RAY_ADDRESS too) instead of starting a local one; its token comes from "
        "RAY_AUTH_TOKEN or ~/.ray/auth_token",
    )


def add_reproduce(sub) -> None:
    """``mrgym reproduce``: where the report goes (a new runs/ folder, ``--update``,
    ``--out``), which claims, at which sizes."""
    r = sub.add_parser(
        "reproduce",
        help="run the papers' claims on the simulator and write a report with a verdict each",
        description="Run each claim's experiment (the paper's number vs ours, mean ± 95 % CI "
        "over seeds) and write report.md (one table, a section per claim), a PNG per claim "
        "and results.json into a new folder runs/reproduce-YYYYmmdd-HHMMSS/, or into "
        "docs/reproduction/ (the committed report) with --update, or DIR with --out. Exit "
        "status 1 if an experiment failed (its row says why).",
        formatter_class=HelpFormatter,
    )
    r.add_argument(
        "--paper",
        default="all",
        choices=["ila", "pna", "lsap", "hybridmr", "lee", "all"],
        help="whose claims to run",
    )
    r.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="seeds 0..N-1 for every claim (default: each claim's own, ~10 min of CPU in all)",
    )
    r.add_argument(
        "--out",
        metavar="DIR",
        help="folder for report.md, the PNGs and results.json (an earlier report's files "
        "there are replaced; default: a new runs/reproduce-YYYYmmdd-HHMMSS/)",
    )
    r.add_argument(
        "--update",
        action="store_true",
        help="write the committed report, docs/reproduction/ of this checkout: every claim "
        "at full size (so not with --out, --paper, --claims or --quick)",
    )
    r.add_argument(
        "--claims",
        metavar="KEY,..",
        help="only these claims (keys as --list prints them)",
    )
    r.add_argument(
        "--quick",
        action="store_true",
        help="the heaviest claims at smaller sizes: a smoke run whose verdicts are not the "
        "full-size ones",
    )
    r.add_argument("--list", action="store_true", help="print the claims, one a line, and exit")
    add_sweep_options(r, "claim group")
    r.set_defaults(func=cmd_reproduce)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mrgym",
        description="Simulate and schedule virtualized Hadoop MapReduce clusters.",
        formatter_class=HelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = p.add_subparsers(dest="command", required=True)
    for add in (_add_simulate, _add_compare, _add_bench, _add_train, _add_evaluate):
        add(sub)
    add_reproduce(sub)
    from mrgym.cli.tune import add_parser as add_tune

    add_tune(sub, HelpFormatter)
    from mrgym.cli.predict import add_parser as add_predict

    add_predict(sub, HelpFormatter)
    from mrgym.cli.calibrate import add_parser as add_calibrate

    add_calibrate(sub, HelpFormatter)
    from mrgym.cli.benchmark import add_parser as add_benchmark

    add_benchmark(sub, HelpFormatter)
    sub.add_parser(
        "scenarios", help="list the bundled scenarios", formatter_class=HelpFormatter
    ).set_defaults(func=cmd_scenarios)
    sub.add_parser(
        "schedulers",
        help="list the registered schedulers and the <gater>-gate+<order> compositions, "
        "one a line with what it does",
        formatter_class=HelpFormatter,
    ).set_defaults(func=cmd_schedulers)
    return p


def _add_simulate(sub) -> None:
    s = sub.add_parser(
        "simulate",
        help="run one episode of a scenario under a scheduler and print its metrics",
        formatter_class=HelpFormatter,
    )
    s.add_argument("--config", default="ila72", help="bundled scenario name or YAML path")
    s.add_argument(
        "--scheduler", default="dl-sched", help="registered scheduler name (see `mrgym schedulers`)"
    )
    s.add_argument("--seed", type=int, default=0, help="episode seed")
    s.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override a scenario key, e.g. hdfs.replication=2 (repeatable)",
    )
    s.add_argument("--json", action="store_true", help="print the metrics object as JSON")
    s.add_argument(
        "--log", metavar="CSV", help="write the task log (one row per attempt) to this file"
    )
    s.set_defaults(func=cmd_simulate)


def _add_compare(sub) -> None:
    c = sub.add_parser(
        "compare",
        help="compare schedulers on a scenario over seeds: table, CSV, plots",
        formatter_class=HelpFormatter,
    )
    c.add_argument("--config", default="ila72", help="bundled scenario name or YAML path")
    c.add_argument("--seeds", default="0-4", help="seed range or list, e.g. 0-4 or 1,3,9")
    c.add_argument(
        "--schedulers",
        metavar="NAMES",
        help="comma-separated names (`mrgym schedulers`), none, registered (the registered "
        "schedulers) or all (every composition too) (default: the registered schedulers and "
        "the compositions that are a scenario's best baseline on the leaderboard)",
    )
    c.add_argument(
        "--out",
        metavar="DIR",
        help="folder for results.csv and the PNG plots; replaced files are named on stderr "
        "(default: a new runs/compare-CONFIG-YYYYmmdd-HHMMSS)",
    )
    c.add_argument(
        "--models",
        help="comma-separated saved models (model.zip, config.yaml beside) or shipped models' short "
        "names (models/NAME)",
    )
    add_max_decisions(c)
    c.add_argument(
        "--tensorboard",
        metavar="DIR",
        help="also write every policy's mr/ tags as TensorBoard runs, under a new "
        "DIR/compare-CONFIG-YYYYmmdd-HHMMSS/POLICY (beside the agents' runs in DIR)",
    )
    add_sweep_options(c, "run")
    c.set_defaults(func=cmd_compare)


def _add_bench(sub) -> None:
    b = sub.add_parser(
        "bench",
        help="environment and simulator speed (docs/model.md §8 budgets)",
        formatter_class=HelpFormatter,
    )
    b.add_argument("--config", default="ila72", help="scenario for the env step rate")
    b.add_argument("--steps", type=int, default=20000, help="env steps to time")
    b.add_argument("--sim-config", default="ila2400", help="scenario for run_sim tasks/s")
    b.add_argument(
        "--skip-sim",
        action="store_true",
        help="skip the run_sim measurements (the ila2400 run and the ceiling)",
    )
    b.set_defaults(func=cmd_bench)


def _add_train(sub) -> None:
    t = sub.add_parser(
        "train", help="train an SB3 agent from a YAML config", formatter_class=HelpFormatter
    )
    t.add_argument(
        "--config",
        help="e.g. configs/train/maskable_ppo_ila72.yaml (with --resume: default the run's own)",
    )
    t.add_argument(
        "--steps",
        type=int,
        help="total environment steps of the run, resumed steps included (default: the config's)",
    )
    t.add_argument("--logdir", default="runs", help="folder for run folders")
    t.add_argument(
        "--seed",
        type=int,
        help="the training seed (default: the config's); the run is named NAME-sSEED, so "
        "several seeds of one config sit side by side and compare groups them",
    )
    t.add_argument(
        "--init-from",
        metavar="MODEL",
        help="fine-tune: start from this trained model's weights (a .zip such as a run's "
        "best_model.zip, a run folder for its latest model.zip, or a shipped short name; {seed} "
        "becomes the seed), replacing the config's init_from",
    )
    t.add_argument(
        "--resume",
        metavar="ZIP_OR_RUN",
        help="continue a run from a checkpoint .zip, its model.zip or the run folder: the step "
        "count carries on, output goes to that run's folder, --steps must exceed the model's",
    )
    t.set_defaults(func=cmd_train)


def _add_evaluate(sub) -> None:
    e = sub.add_parser(
        "evaluate",
        help="evaluate a saved model through the comparison harness",
        formatter_class=HelpFormatter,
    )
    e.add_argument(
        "--model",
        required=True,
        help="a run folder, its model.zip or a checkpoint (config.yaml beside or one up); the "
        "environment is built with the model's training settings",
    )
    e.add_argument("--config", help="scenario (default: the model's training scenario)")
    e.add_argument(
        "--seeds",
        default="2000-2019",
        help="seed range or list, e.g. 1,3,9; the default is the benchmark's validation split",
    )
    e.add_argument("--csv", help="also write the per-seed rows to this CSV")
    add_max_decisions(e)
    e.set_defaults(func=cmd_evaluate)


def _error_line(e: BaseException) -> str:
    """One line for a user error: no traceback, no multi-line YAML or OS messages."""
    if isinstance(e, KeyError) and e.args:
        text = str(e.args[0])
    elif isinstance(e, OSError) and e.strerror:
        name = e.filename if e.filename is not None else ""
        text = f"{name}: {e.strerror}" if name else e.strerror
    else:
        text = str(e) or type(e).__name__
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        # Ctrl-C is the user's choice, not a bug: one line, no traceback, and 130 (128 +
        # SIGINT) as shells report it, so `mrgym ... && next` stops too
        nl = "\n" if sys.stderr.isatty() else ""  # off the terminal's "^C"
        print(f"{nl}mrgym: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    # the command line as typed: `mrgym benchmark` records it in its result
    args.argv = list(sys.argv[1:] if argv is None else argv)
    import yaml

    from mrgym.config import ScenarioError

    try:
        return args.func(args)
    except BrokenPipeError:
        # the reader went away (`mrgym simulate | head`): stop quietly, as Unix tools do;
        # stdout is pointed at /dev/null so that the interpreter's final flush cannot fail
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    # the errors a user's input can cause (a scenario, a path, a value); anything else is
    # a bug and keeps its traceback
    except ModuleNotFoundError as e:
        # a lazily imported extra that the command's own check did not name (a partial
        # install): the same one line as that check gives
        hint = hint_for(e.name)
        if hint is None:
            raise
        print(f"mrgym: error: mrgym {args.command} needs {hint}", file=sys.stderr)
        return 2
    except (ScenarioError, ValueError, KeyError, OSError, yaml.YAMLError) as e:
        print(f"mrgym: error: {_error_line(e)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
