"""``mrgym benchmark``: every policy on a split's seeds under the fixed protocol
(:mod:`mrgym.benchmark.protocol`), one JSON result per run; ``mrgym leaderboard``:
``docs/leaderboard.md`` from the result files in ``docs/leaderboard/``."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

RESULTS_ROOT = Path("runs/benchmark")


def add_parser(sub, formatter) -> None:
    """Declare ``benchmark`` and ``leaderboard`` on the subcommand parsers ``sub``."""
    from mrgym.benchmark.protocol import DEFAULT_SAMPLES, SPLITS, TEST_SEEDS, VALIDATION_SEEDS
    from mrgym.cli import add_max_decisions, add_sweep_options
    from mrgym.summary import format_seeds

    b = sub.add_parser(
        "benchmark",
        help="policies on a split's seeds under the benchmark protocol: one JSON result",
        description="Run baselines and saved models on one scenario over the validation "
        f"seeds ({format_seeds(VALIDATION_SEEDS)}: every development decision) or the test "
        f"seeds ({format_seeds(TEST_SEEDS)}: final numbers only), K samples per seed for a "
        "stochastic policy; print each policy's mean JCT, p95 JCT, locality and paired "
        "difference to the best baseline (95 % interval), and write them with the "
        "per-seed values to one JSON file, rewritten as each policy finishes.",
        formatter_class=formatter,
    )
    b.add_argument("--scenario", required=True, help="bundled scenario name or YAML path")
    b.add_argument(
        "--policies",
        metavar="NAMES",
        help="comma-separated scheduler names, none (models only), registered or all, as "
        "compare's --schedulers (default: the registered schedulers and the compositions "
        "that are a scenario's best baseline on the leaderboard)",
    )
    b.add_argument(
        "--with-best-baseline",
        action="store_true",
        help="run the scenario's best baseline on the leaderboard (docs/leaderboard/) beside "
        "--policies and --models, so that a model benchmarked alone gets its paired "
        "difference; its row is on the leaderboard already, so keep such a file out of "
        "docs/leaderboard/",
    )
    b.add_argument(
        "--models",
        nargs="+",
        action="extend",
        metavar="NAME=PATH",
        help="saved models (a run folder, its model.zip, a checkpoint, or NAME of a model "
        "shipped in the checkout's models/NAME/), each named NAME (PATH alone: the model's "
        "own name, or a shipped model's short name)",
    )
    b.add_argument("--split", default="test", choices=list(SPLITS), help="which seeds")
    _add_track(
        b,
        "the table's ranking, its best baseline and paired difference (the file "
        "keeps every track's metrics)",
    )
    b.add_argument(
        "--samples",
        type=int,
        default=DEFAULT_SAMPLES,
        metavar="K",
        help="samples per seed of a stochastic policy (deterministic ones run once)",
    )
    b.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="only the split's first N seeds: a smoke run, which the leaderboard refuses",
    )
    b.add_argument(
        "--out",
        metavar="FILE",
        help=f"the result JSON (default: {RESULTS_ROOT}/SCENARIO-SPLIT.json; replaced)",
    )
    b.add_argument(
        "--resume",
        action="store_true",
        help="keep the policies --out already holds from the same scenario, split, seeds "
        "and K, and run the others",
    )
    add_max_decisions(b)
    add_sweep_options(b, "episode")
    b.set_defaults(func=cmd_benchmark)
    _add_leaderboard(sub, formatter)


def _add_leaderboard(sub, formatter) -> None:
    lb = sub.add_parser(
        "leaderboard",
        help="print the leaderboard's tables (--write: rewrite docs/leaderboard.md)",
        description="Print each scenario's leaderboard table from the `mrgym benchmark` "
        "result files (test split, every test seed, finished runs), or with --write "
        "generate the page docs/leaderboard.md from them.  A result file recorded with "
        "local changes that could change a result is named on stderr: rerun it from a "
        "clean checkout.",
        formatter_class=formatter,
    )
    lb.add_argument(
        "--results",
        metavar="FOLDER",
        help="folder of result JSON files (default: docs/leaderboard/ of the checkout)",
    )
    lb.add_argument("--scenario", help="print only this scenario's table")
    _add_track(lb, "which track's tables to print (--write: the page has every track)")
    lb.add_argument(
        "--write",
        action="store_true",
        help="write the page instead of printing the tables",
    )
    lb.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit status 1 when the page is not what the files give",
    )
    lb.add_argument(
        "--out",
        metavar="PAGE",
        help="the page --write and --check read (default: docs/leaderboard.md of the checkout)",
    )
    lb.set_defaults(func=cmd_leaderboard)


def _add_track(parser, what: str) -> None:
    from mrgym.benchmark.tracks import DEFAULT_TRACK, TRACKS

    parser.add_argument(
        "--track",
        default=DEFAULT_TRACK,
        choices=list(TRACKS),
        help=f"the track ({', '.join(f'{t.name}: {t.title}' for t in TRACKS.values())}): " + what,
    )


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from mrgym.benchmark.leaderboard import (
        PAGE,
        RESULTS_DIR,
        in_checkout,
        load_boards,
        render_page,
        render_tables,
        unclean_files,
    )

    if args.write and args.check:
        raise ValueError("leaderboard: --write and --check: give one")
    folder = Path(args.results) if args.results else _near(in_checkout(RESULTS_DIR))
    if not folder.is_dir():
        raise ValueError(f"--results {args.results or folder}: no such folder")
    boards = load_boards(folder)
    flagged = unclean_files(boards)
    if flagged:  # one line: the page names each file's changes
        n = sum(len(b.sources) for b in boards)
        name, why = flagged[0]
        more = f" and {len(flagged) - 1} more" if len(flagged) > 1 else ""
        print(
            f"mrgym: warning: {len(flagged)} of {n} result files were recorded with local "
            f"changes that could change a result ({name}: {why}{more}); rerun them from a "
            "clean checkout",
            file=sys.stderr,
        )
    if not (args.write or args.check):
        if args.scenario is not None:
            known = [b.scenario for b in boards]
            if args.scenario not in known:
                from mrgym.suggest import did_you_mean

                raise ValueError(
                    f"--scenario {args.scenario!r}{did_you_mean(args.scenario, known)}: no "
                    f"table; the leaderboard has {', '.join(known) or 'none'}"
                )
            boards = [b for b in boards if b.scenario == args.scenario]
        if not boards:
            print(f"no results yet: {folder} holds no result file")
            return 0
        print(render_tables(boards, args.track), end="")
        return 0
    if args.scenario is not None:
        raise ValueError("--scenario: only when printing (the page holds every scenario)")
    page = Path(args.out) if args.out else _near(in_checkout(PAGE))
    if args.write:  # the pictures first: the page links the ones that exist
        from mrgym.benchmark.leaderboard import has_track, picture_name
        from mrgym.benchmark.pictures import plot_tracks

        for b in boards:
            if has_track(b.results, "fairness"):
                print(
                    f"wrote {plot_tracks(b.results, b.scenario, folder / picture_name(b.scenario))}"
                )
    text = render_page(boards, folder, page)
    old = page.read_text(encoding="utf-8") if page.is_file() else None
    if args.check:
        if old != text:
            print(f"mrgym: {page} is stale: run `mrgym leaderboard --write`", file=sys.stderr)
            return 1
        print(f"{page} is up to date")
        return 0
    page.write_text(text, encoding="utf-8")
    print(f"wrote {page}" + (" (unchanged)" if old == text else ""))
    return 0


def _near(path: Path) -> Path:
    """``path`` relative to the current folder when it lies below it (as messages show it)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def cmd_benchmark(args: argparse.Namespace) -> int:
    from mrgym.benchmark.run import run_benchmark
    from mrgym.cli.commands import sweep_options
    from mrgym.config import load_scenario

    # everything that can be checked is checked before the first episode
    sc = load_scenario(args.scenario)
    seeds = _seeds(args)
    if args.samples < 1:
        raise ValueError(f"--samples {args.samples}: expected at least 1")
    entrants = _entrants(args, sc.name)
    sweep = sweep_options(args)
    out = _out_path(args, sc.name)
    kept = _resumed(args, out, sc.name, seeds, entrants)
    todo = [e for e in entrants if e.name not in kept]
    save = _Saver(out, _run_info(args, sc.name, seeds), [e.name for e in entrants], kept)
    if kept:
        print(f"mrgym: --resume: keeping {', '.join(kept)} from {out}", file=sys.stderr)
    try:
        run_benchmark(todo, sc, seeds, args.samples, save.policy, progress=True, sweep=sweep)
    except KeyboardInterrupt:
        done = len(save.results) - len(kept)
        where = f"they are in {out}" if done else "nothing new written"
        print(
            f"mrgym: interrupted; {done} of {len(todo)} policies had finished, {where} "
            "(--resume runs the rest)",
            file=sys.stderr,
        )
        return 130
    save.write()
    _report(save, out, args.track)
    return 1 if save.failed else 0


def _seeds(args: argparse.Namespace) -> list[int]:
    from mrgym.benchmark.protocol import split_seeds

    seeds = list(split_seeds(args.split))
    if args.limit is not None:
        if not 1 <= args.limit <= len(seeds):
            raise ValueError(f"--limit {args.limit}: expected 1 to {len(seeds)}")
        seeds = seeds[: args.limit]
    return seeds


def _base_command(args: argparse.Namespace) -> list[str]:
    """The part every row's command shares: scenario, split, seeds."""
    cmd = ["mrgym", "benchmark", "--scenario", args.scenario, "--split", args.split]
    if args.limit is not None:
        cmd += ["--limit", str(args.limit)]
    return cmd


def _entrants(args: argparse.Namespace, scenario: str) -> list:
    """The baselines (the leaderboard's best first with ``--with-best-baseline``), then
    the models; a name used twice is an error."""
    from mrgym.benchmark.run import Entrant, is_stochastic
    from mrgym.cli.compare import _scheduler_names

    base = _base_command(args)
    names = _scheduler_names(args.policies)
    if getattr(args, "with_best_baseline", False):
        from mrgym.benchmark.leaderboard import best_baseline

        track = getattr(args, "track", "jct")
        best = best_baseline(scenario, track=track)
        print(
            f"mrgym: --with-best-baseline: {best}, the best baseline of the leaderboard's "
            f"{scenario} table on the {track} track",
            file=sys.stderr,
        )
        names = [best, *(n for n in names if n != best)]
    out = []
    for name in names:
        stochastic = is_stochastic(name)
        cmd = [*base, "--policies", name] + (["--samples", str(args.samples)] if stochastic else [])
        out.append(Entrant(name, name, "baseline", stochastic, shlex.join(cmd)))
    out += _model_entrants(args, base)
    seen: set[str] = set()
    for e in out:
        if e.name in seen:
            raise ValueError(
                f"policy {e.name!r}: named twice; give models distinct NAME=PATH names"
            )
        seen.add(e.name)
    if not out:
        raise ValueError("--policies none and no --models: nothing to run")
    return out


def _model_entrants(args: argparse.Namespace, base: list[str]) -> list:
    """``--models``, loaded here (a bad path fails now); the workers load each again from
    its path (``ModelSpec``), as ``compare`` does."""
    from mrgym.cli.commands import _cap_model, _max_decisions

    cap = _max_decisions(args)  # a bad value fails with or without models
    if not args.models:
        return []
    from mrgym.extras import require

    require("mrgym benchmark --models")
    from agents.model_policy import ModelSpec
    from agents.train import ModelFactory, resolve_model_path
    from mrgym.benchmark.run import Entrant

    out = []
    for item in args.models:
        name, path = _name_path(item)
        f = ModelFactory(path, name=name)
        n = _cap_model(f, cap)
        stochastic = f.policy.decode == "sample"
        shown = path if f.name == path else f"{f.name}={path}"  # a short name alone
        cmd = [*base, "--policies", "none", "--models", shown]
        if cap is not None:
            cmd += ["--max-decisions", str(cap)]
        if stochastic:
            cmd += ["--samples", str(args.samples)]
        spec = ModelSpec(str(resolve_model_path(path).resolve()), f.name, n)
        out.append(Entrant(f.name, spec, "model", stochastic, shlex.join(cmd), path))
    return out


def _name_path(item: str) -> tuple[str | None, str]:
    name, eq, path = item.partition("=")
    if not eq:
        return None, item
    if not name.strip() or not path.strip():
        raise ValueError(f"--models {item!r}: expected NAME=PATH or PATH")
    return name.strip(), path.strip()


def _out_path(args: argparse.Namespace, scenario: str) -> Path:
    out = Path(args.out) if args.out else RESULTS_ROOT / f"{Path(scenario).stem}-{args.split}.json"
    if out.is_dir():
        raise ValueError(f"--out {str(out)!r}: is a folder, expected a .json file name")
    if out.suffix != ".json":
        raise ValueError(f"--out {str(out)!r}: expected a file name ending in .json")
    if out.exists() and not args.resume:  # said before the runs: time to Ctrl-C
        print(f"mrgym: --out {out}: will be replaced as policies finish", file=sys.stderr)
    return out


def _resumed(
    args: argparse.Namespace, out: Path, scenario: str, seeds: list[int], entrants: list
) -> dict:
    """``--resume``: the finished policies of ``out`` that this run asks for, by name (an
    empty dict without it), when ``out`` was made with the same scenario, split, seeds and
    K, and each kept policy is the same one (kind, model path)."""
    from mrgym.benchmark.results import policy_results, read_json

    if not args.resume or not out.exists():
        return {}
    doc = read_json(out)
    want = {"scenario": scenario, "split": args.split, "seeds": seeds, "samples": args.samples}
    for key, value in want.items():
        if doc[key] != value:
            raise ValueError(
                f"--resume: {out} has {key} {doc[key]!r}, this run {value!r}; expected the "
                "same (or drop --resume to start over)"
            )
    from mrgym.benchmark.results import git_state

    commit = git_state().commit
    if doc.get("git_commit") != commit:  # said and recorded, not refused
        args.resumed_from_commit = doc.get("git_commit") or "unknown"
        print(
            f"mrgym: --resume: {out} was made at commit {args.resumed_from_commit}, this run "
            f"is at {commit}; the file records both",
            file=sys.stderr,
        )
    asked = {e.name: e for e in entrants}
    kept = {r.name: r for r in policy_results(doc, str(out)) if r.name in asked}
    for name, r in kept.items():
        e = asked[name]
        theirs, mine = (r.kind, r.source, r.stochastic), (e.kind, e.source, e.stochastic)
        if theirs != mine:
            raise ValueError(
                f"--resume: {out} holds {name!r} as (kind, model path, stochastic) "
                f"{theirs}, this run as {mine}; expected the same policy"
            )
    return kept


def _run_info(args: argparse.Namespace, scenario: str, seeds: list[int]):
    from mrgym import version
    from mrgym.benchmark.results import RunInfo, git_state

    argv = getattr(args, "argv", None) or sys.argv[1:]
    git = git_state()
    command = shlex.join(["mrgym", *argv])
    info = RunInfo(
        scenario, args.split, seeds, args.samples, command, version(), git.commit, git.dirty,
        git.files,
    )  # fmt: skip
    info.resumed_from_commit = getattr(args, "resumed_from_commit", None)
    return info


class _Saver:
    """Keeps the finished policies and rewrites the result file on each one."""

    def __init__(self, out: Path, info, order: list[str], kept: dict[str, Any]):
        self.out, self.info, self.order = out, info, order
        self.results: dict[str, Any] = dict(kept)
        self.failed: dict[str, str] = {}

    def policy(self, result, entrant, error: str | None) -> None:
        if error is not None:
            self.failed[entrant.name] = error
            print(f"mrgym: {entrant.name} failed: {error}", file=sys.stderr)
        else:
            self.results[result.name] = result
        self.write()

    def write(self) -> None:
        from mrgym.benchmark.results import document, write_json

        ordered = [self.results[n] for n in self.order if n in self.results]
        complete = len(ordered) == len(self.order)
        write_json(self.out, document(self.info, ordered, complete, self.failed))


def _report(save: _Saver, out: Path, track: str) -> None:
    from mrgym.benchmark.leaderboard import render_table
    from mrgym.summary import format_seeds

    info = save.info
    results = [save.results[n] for n in save.order if n in save.results]
    print(f"{info.scenario}, {info.split} seeds {format_seeds(info.seeds)}\n")
    if results:
        print(render_table(results, track=track))
    print(f"\nwrote {out}")
    if save.failed:
        print(f"mrgym: failed: {', '.join(save.failed)} (rerun with --resume)", file=sys.stderr)
