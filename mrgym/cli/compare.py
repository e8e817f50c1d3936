"""``mrgym compare``: schedulers and saved models on one scenario over seeds; the table,
``results.csv`` and the plots in a new ``runs/compare-CONFIG-YYYYmmdd-HHMMSS`` (or
``--out``), TensorBoard runs with ``--tensorboard``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mrgym.cli.commands import CsvStream, _cap_model, _max_decisions, sweep_options
from mrgym.seeds import parse_seeds


def fresh_out_dir(config: str, root: Path = Path("runs")) -> Path:
    """``runs/compare-CONFIG-YYYYmmdd-HHMMSS``: a new folder per run, so a second
    ``compare`` never overwrites the first one's results."""
    from mrgym.summary import fresh_run_dir

    return fresh_run_dir(root, f"compare-{Path(config).stem}")


#: What ``compare`` writes into its folder; the stale ones go when a run replaces them.
COMPARE_FILES = ("results.csv", "jct_cdf.png", "jct.png", "locality.png", "throughput_fairness.png")


def cmd_compare(args: argparse.Namespace) -> int:
    from mrgym.config import load_scenario

    # everything that can be checked is checked before a folder is made or a run started
    sc = load_scenario(args.config)
    seeds = parse_seeds(args.seeds)  # before any run: a bad list fails at once
    _require_compare_extras(args)
    workers, backend, address = sweep_options(args)
    policies: list = _scheduler_names(args.schedulers)
    policies += _model_policies(args, workers == 1 and backend == "process")
    out, made = _compare_out(args.out, sc.name)
    try:
        rows = _run_compare(policies, sc, seeds, out, (workers, backend, address))
        if rows is None:  # interrupted (said so)
            return 130
        _report_compare(args, policies, sc, seeds, rows, out)
    finally:
        _drop_if_empty(out, made)
    return 0


def _require_compare_extras(args: argparse.Namespace) -> None:
    from mrgym.extras import require

    if args.models:
        require("mrgym compare --models")
    if args.tensorboard:  # checked now, not after every run has finished
        require("mrgym compare --tensorboard")


#: The scheduler sets ``--schedulers`` and ``--policies`` take by name (``registry.names``).
SCHEDULER_SETS = ("registered", "all")


def _scheduler_names(text: str | None) -> list[str]:
    """``--schedulers``/``--policies``: None (not given: ``registry.names("default")``),
    ``none``, a set of :data:`SCHEDULER_SETS` or a comma-separated list (each name
    checked)."""
    from mrgym import registry

    if text == "none":
        return []
    if text is None:
        names = registry.names("default")
    elif text in SCHEDULER_SETS:
        names = registry.names(text)
    else:
        names = [n.strip() for n in text.split(",")]
    for n in names:
        registry.make(n)  # fail early on an unknown name
    return names


def _model_policies(args: argparse.Namespace, serial: bool) -> list:
    """``--models``, loaded here: a bad path fails now, and a model's step count is known
    to ``--tensorboard``; parallel workers load each again from its path."""
    cap = _max_decisions(args)  # a bad value fails with or without models
    if not args.models:
        return []
    from agents.model_policy import ModelSpec
    from agents.train import ModelFactory, resolve_model_path

    out: list = []
    for m in (x.strip() for x in args.models.split(",") if x.strip()):
        f = ModelFactory(m)
        n = _cap_model(f, cap)
        out.append(f if serial else ModelSpec(str(resolve_model_path(m).resolve()), f.name, n))
    return out


def _compare_out(arg: str | None, config: str) -> tuple[Path, bool]:
    """``--out`` (checked, its files to be replaced named) or a fresh folder; and whether
    this run made the folder (then a run that writes nothing removes it again)."""
    if not arg:
        return fresh_out_dir(config), True
    out = Path(arg)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r}: is a file, expected a folder")
    old = [f for f in COMPARE_FILES if (out / f).exists()]
    if old:  # said before the runs, so there is time to Ctrl-C
        print(f"mrgym: --out {out}: replacing its {', '.join(old)}", file=sys.stderr)
    return out, not out.exists()


def _drop_if_empty(folder: Path, made: bool) -> None:
    """Remove a folder this run made when nothing was written into it (a failed or
    interrupted compare): never one with content, which may be minutes of work."""
    if made and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()


def _run_compare(policies: list, sc, seeds: list[int], out: Path, sweep: tuple):
    """The runs, their rows streamed to ``out/results.csv`` as they finish; None when
    interrupted (the finished runs saved, one line said)."""
    from mrgym.evaluate import EvaluationInterrupted, evaluate, write_csv

    workers, backend, address = sweep
    stream = CsvStream(out / "results.csv", lambda: _clear(out))
    try:
        return evaluate(
            policies,
            [sc],
            seeds,
            progress=True,
            keep_logs=True,
            workers=workers,
            backend=backend,
            address=address,
            on_row=stream.write,
        )
    except EvaluationInterrupted as e:
        # the finished runs may be minutes of work: save them, say where, stop in one line
        stream.close()
        if e.rows:
            _clear(out)
            write_csv(e.rows, out / "results.csv")
            kept = f"the {len(e.rows)} finished are in {out / 'results.csv'}"
        else:
            kept = "none had finished, nothing written"
        print(f"mrgym: interrupted after {len(e.rows)} of {e.total} runs; {kept}", file=sys.stderr)
        return None
    finally:
        stream.close()


def _report_compare(args, policies: list, sc, seeds: list[int], rows: list, out: Path) -> None:
    """results.csv in grid order, the plots, the table; TensorBoard runs if asked."""
    from mrgym.evaluate import format_seeds, job_jcts, markdown_table, plot, summarize, write_csv
    from mrgym.summary import table_columns

    _clear(out)
    write_csv(rows, out / "results.csv")  # in grid order: the file a serial run writes
    paths = plot(rows, out, job_jcts(rows))
    n = len(seeds)
    print(f"{sc.name}, {n} seed{'s' if n != 1 else ''} ({format_seeds(seeds)})\n")
    summary = summarize(rows)
    columns = table_columns(summary)  # the training-seed table shows the same columns
    shown, dup = _mark_duplicates(summary, rows)
    print(markdown_table(shown, columns))
    if dup:
        print(
            "\n(= X): the same per-seed metrics as X on every seed (to 1e-9): the same schedule "
            "on this scenario (e.g. Fair's and HybridMR phase I's where there is one pool)."
        )
    if args.models:
        _print_training_seed_table(policies, summary, columns)
    print(f"\nwrote results.csv, {', '.join(p.name for p in paths)} to {out}/")
    if args.tensorboard:
        tb = write_tensorboard(rows, args.tensorboard, sc.name, out)
        print(f"wrote TensorBoard runs to {tb}/; see them: tensorboard --logdir {args.tensorboard}")


def _mark_duplicates(summary: list, rows: list) -> tuple[list, dict[tuple, str]]:
    """The summary with each policy whose per-seed metrics equal an earlier policy's on
    the same scenario named ``B (= A)`` (every metric the benchmark keeps, to the
    tolerance of ``mrgym.benchmark.stats.same_as``), and those pairs
    ``{(scenario, B): A}``."""
    from mrgym.benchmark.protocol import METRIC_KEYS
    from mrgym.benchmark.stats import same_as

    runs: dict[tuple, list] = {}
    for r in rows:
        values = tuple(None if r.get(k) is None else float(r[k]) for k in METRIC_KEYS)
        runs.setdefault((r["scenario"], r["policy"]), []).append((r["seed"], values))
    dup: dict[tuple, str] = {}
    for sc in dict.fromkeys(k[0] for k in runs):
        found = same_as({p: v for (s, p), v in runs.items() if s == sc})
        dup |= {(sc, p): first for p, first in found.items()}
    shown = []
    for row in summary:
        first = dup.get((row.get("scenario"), row["policy"]))
        shown.append(row if first is None else {**row, "policy": f"{row['policy']} (= {first})"})
    return shown, dup


def _print_training_seed_table(policies: list, summary: list, columns: list) -> None:
    """Models trained alike from several seeds also get one row per group, with the spread
    across training seeds (the Learning issue's "mean ± std across seeds")."""
    from agents.config import seed_groups
    from agents.train import find_config, read_saved_config, resolve_model_path
    from mrgym.summary import across_training_seeds, markdown_table

    configs = {}
    for p in policies:
        path = getattr(p, "path", None)  # ModelFactory / ModelSpec; baselines are names
        if path is None:
            continue
        try:
            cfg_file = find_config(resolve_model_path(path))
        except FileNotFoundError:  # a model saved by one's own script: no training config
            continue
        configs[p.name] = read_saved_config(cfg_file)
    grouped = across_training_seeds(summary, seed_groups(configs))
    if grouped:
        print("\nAcross training seeds:\n")
        print(markdown_table(grouped, columns))


def _clear(out: Path) -> None:
    """Create ``out``, without the files of an earlier ``compare`` in it (a partial run
    must not sit beside the plots of another)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in COMPARE_FILES:
        (out / name).unlink(missing_ok=True)


def write_tensorboard(rows, logdir: str | Path, config: str, out: Path | None = None) -> Path:
    """Every compared policy's ``mr/`` and ``mr_eval/`` means as TensorBoard runs, one
    per policy, in one folder of ``logdir`` (so that comparisons do not scatter over
    ``logdir`` beside the agents' runs): baselines as constant lines over the agents' step
    range under ``logdir``, so that agent and baselines share one chart per tag.

    The folder takes the name of the compare's own folder ``out`` (``--tensorboard runs``
    with the default ``runs/compare-...`` is that very folder, beside results.csv and the
    plots), else a new ``logdir/compare-CONFIG-YYYYmmdd-HHMMSS/``.  Returns it."""
    from agents.tensorboard import write_tensorboard as write

    folder, made = _tensorboard_folder(Path(logdir), config, out)
    try:
        write(rows, logdir, out=folder)
    finally:
        _drop_if_empty(folder, made)
    return folder


def _tensorboard_folder(logdir: Path, config: str, out: Path | None) -> tuple[Path, bool]:
    """Where :func:`write_tensorboard` writes, and whether it made that folder."""
    if out is not None:
        same = logdir / out.name
        if same.resolve() == out.resolve():
            return same, False  # the compare's folder itself
        if not same.exists():
            same.mkdir(parents=True)
            return same, True
    return fresh_out_dir(config, logdir), True
