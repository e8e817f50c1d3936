"""The CLI as a person meets it: Ctrl-C, progress without a terminal, where results go,
plots that say what they show, --version and defaults in --help."""

from __future__ import annotations

import csv
import importlib
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli

import mrgym
import mrgym.runner as runner
from mrgym import cli
from mrgym.sim.simulation import Simulation

# the module, not the function `mrgym.evaluate` that shadows its name on the package
ev = importlib.import_module("mrgym.evaluate")

# --workers 1: these tests check the serial path (in-process monkeypatches, line order)
COMPARE = ["compare", "--config", "lee-gpu", "--schedulers", "fifo,fair", "--workers", "1"]


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _interrupt_after(monkeypatch, n: int) -> None:
    """The (n+1)-th simulation raises KeyboardInterrupt, as Ctrl-C in the middle of it
    would."""
    real = Simulation.run
    calls = {"n": 0}

    def run(self):
        if calls["n"] == n:
            raise KeyboardInterrupt
        calls["n"] += 1
        return real(self)

    monkeypatch.setattr(Simulation, "run", run)


# -- Ctrl-C ------------------------------------------------------------------------------
def test_ctrl_c_in_compare_saves_the_finished_runs(tmp_path, monkeypatch, capsys):
    _interrupt_after(monkeypatch, 2)
    out = tmp_path / "cmp"
    assert cli.main([*COMPARE, "--seeds", "0-2", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # the progress lines of the 2 finished runs, then one line
    assert err.strip().splitlines()[2:] == [
        f"mrgym: interrupted after 2 of 6 runs; the 2 finished are in {out / 'results.csv'}"
    ]
    rows = _read_csv(out / "results.csv")
    assert [(r["policy"], r["seed"]) for r in rows] == [("fifo", "0"), ("fifo", "1")]
    assert float(rows[0]["mean_jct_s"]) > 0
    assert not (out / "jct.png").exists()  # no plots of a partial run


def test_ctrl_c_before_any_run_finished_writes_nothing(tmp_path, monkeypatch, capsys):
    _interrupt_after(monkeypatch, 0)
    out = tmp_path / "cmp"
    assert cli.main([*COMPARE, "--seeds", "0", "--out", str(out)]) == 130
    assert "none had finished" in capsys.readouterr().err
    assert not (out / "results.csv").exists()


def test_ctrl_c_elsewhere_is_one_line_and_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_simulate", interrupted)
    assert cli.main(["simulate"]) == 130
    assert capsys.readouterr().err.strip() == "mrgym: interrupted"


def test_evaluate_interrupted_is_a_keyboard_interrupt_with_the_rows(monkeypatch):
    _interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt) as e:
        mrgym.evaluate(["fifo"], ["lee-gpu"], [0, 1])
    assert isinstance(e.value, ev.EvaluationInterrupted)
    assert len(e.value.rows) == 1 and e.value.total == 2


# -- progress without a terminal -----------------------------------------------------------
def test_compare_logs_one_line_per_run_when_stderr_is_a_pipe(tmp_path):
    r = run_cli(*COMPARE, "--seeds", "0-1", "--out", str(tmp_path))  # stderr: a pipe
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 4, r.stderr
    # each line: the run's time, the time elapsed and the time left at the pace so far
    assert re.fullmatch(
        r"\[1/4\] fifo lee-gpu seed 0: \d+\.\d s \(\d+ s elapsed, ~\d+ s left\)", lines[0]
    ), lines
    assert re.fullmatch(r"\[4/4\] fair lee-gpu seed 1: \d+\.\d s \(\d+ s elapsed\)", lines[3]), (
        lines
    )
    assert "\r" not in r.stderr  # no tqdm bar in a log


def test_the_pace_says_elapsed_and_left():
    from mrgym.sweep import pace

    assert pace(1, 4, 10.0) == "10 s elapsed, ~30 s left"
    assert pace(3, 4, 300.0) == "5.0 min elapsed, ~100 s left"
    assert pace(4, 4, 9000.0) == "2.5 h elapsed"  # done: nothing left to estimate
    assert pace(0, 4, 1.0) == "1 s elapsed"


def test_benchmark_lines_say_elapsed_and_left(tmp_path):
    argv = ["benchmark", "--scenario", "lee-gpu", "--limit", "2", "--policies", "fifo"]
    r = run_cli(*argv, "--workers", "1", "--out", str(tmp_path / "r.json"))
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("[")]
    assert re.fullmatch(
        r"\[1/2\] fifo seed 3000: \d+\.\d s \(\d+ s elapsed, ~\d+ s left\)", lines[0]
    )
    assert re.fullmatch(r"\[2/2\] fifo seed 3001: \d+\.\d s \(\d+ s elapsed\)", lines[1])


def test_long_simulate_logs_a_line_per_tenth_of_the_jobs(monkeypatch, capsys):
    monkeypatch.setattr(runner, "LINE_QUIET_S", 0.0)  # as if the run were long
    runner.run_sim("ila72", "fifo", 0, progress=True)  # capsys' stderr is no terminal
    lines = capsys.readouterr().err.strip().splitlines()
    assert 8 <= len(lines) <= 11, lines
    assert re.fullmatch(r"ila72 fifo seed 0: 25/25 jobs \(100 %\), \d+\.\d s", lines[-1])


def test_short_simulate_stays_quiet_and_every_s_still_reports(capsys):
    runner.run_sim("lee-gpu", "fifo", 0, progress=True)
    assert capsys.readouterr().err == ""
    log = runner.LineProgress(1000, "x", every_s=0.0, quiet_s=1e9)
    log(1)  # not a tenth, but every_s has passed
    assert capsys.readouterr().err.startswith("x: 1/1000 jobs (0 %)")


def test_progress_mode():
    assert runner.progress_mode(False) is None
    assert runner.progress_mode("lines") == "lines"
    with pytest.raises(ValueError, match="progress"):
        runner.progress_mode("fancy")


# -- where results go ------------------------------------------------------------------
def test_compare_without_out_never_overwrites(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    argv = [*COMPARE, "--seeds", "0"]
    assert cli.main(argv) == 0
    first = capsys.readouterr().out
    assert cli.main(argv) == 0  # within the same second: a -2 suffix
    second = capsys.readouterr().out
    dirs = sorted((tmp_path / "runs").iterdir())
    assert len(dirs) == 2
    for d in dirs:
        assert re.fullmatch(r"compare-lee-gpu-\d{8}-\d{6}(-2)?", d.name), d.name
        assert len(_read_csv(d / "results.csv")) == 2
    assert f"to {Path('runs') / dirs[0].name}/" in first + second
    assert f"to {Path('runs') / dirs[1].name}/" in first + second


def test_default_out_folders_are_claimed_when_chosen(tmp_path, monkeypatch):
    # two compares started in the same second (two processes) each claim a folder at once,
    # not when they finish: the second never writes into the first one's
    monkeypatch.setattr(cli.time, "strftime", lambda fmt: "20260101-000000")
    a = cli.fresh_out_dir("lee-gpu", tmp_path)
    b = cli.fresh_out_dir("lee-gpu", tmp_path)
    assert a.is_dir() and b.is_dir() and a != b
    assert (a.name, b.name) == (
        "compare-lee-gpu-20260101-000000",
        "compare-lee-gpu-20260101-000000-2",
    )


def test_compare_with_out_says_it_replaces(tmp_path, capsys):
    argv = [*COMPARE, "--seeds", "0", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    assert "replacing" not in capsys.readouterr().err
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert f"mrgym: --out {tmp_path}: replacing its results.csv, jct_cdf.png" in err


# -- plots and the summary ---------------------------------------------------------------
def test_summary_is_mean_and_95_ci_and_the_table_says_so():
    rows = [
        {"scenario": "s", "policy": "p", "seed": i, "mean_jct_s": v}
        for i, v in enumerate([10.0, 12.0, 17.0])
    ]
    from scipy import stats

    (row,) = ev.summarize(rows)
    m, half = row["mean_jct_s"]
    lo, hi = stats.t.interval(0.95, 2, loc=13.0, scale=stats.sem([10.0, 12.0, 17.0]))
    assert m == pytest.approx(13.0) and half == pytest.approx((hi - lo) / 2)
    assert ev.summarize(rows, "std")[0]["mean_jct_s"][1] == pytest.approx(
        np.std([10, 12, 17], ddof=1)
    )
    table = ev.markdown_table([row])  # 3 seeds: the range, as the interval says little
    assert "| p | 13.0 [10.0, 17.0] |" in table
    assert "Mean [min, max] over n = 3 seeds (0-2)" in table and "±4.3 standard errors" in table
    five = [{"scenario": "s", "policy": "p", "seed": i, "mean_jct_s": 10.0 + i} for i in range(5)]
    table = ev.markdown_table(ev.summarize(five))
    assert "| p | 12.0 ± 2.0 |" in table  # t(4) = 2.776 x sd 1.581 / sqrt(5)
    assert table.endswith("95 % confidence interval of the mean (Student t) over 5 seeds (0-4).")
    (one,) = ev.summarize(rows[:1])
    assert math.isnan(one["mean_jct_s"][1])
    assert "| p | 10.0 |" in ev.markdown_table([one])  # no "± nan" for one seed


def test_sla_violations_are_a_column_only_where_some_policy_has_them():
    from mrgym.summary import across_training_seeds, table_columns

    def rows(sla: float) -> list[dict]:
        return [
            {"scenario": "s", "policy": p, "seed": i, "mean_jct_s": 10.0, "sla_violation_s": v}
            for p, v in (("a", 0.0), ("b", sla))
            for i in range(2)
        ]

    quiet = ev.summarize(rows(0.0))
    assert "SLA violation" not in ev.markdown_table(quiet)  # no interactive VMs: no column
    loud = ev.summarize(rows(30.0))
    head = ev.markdown_table(loud).splitlines()[0]
    assert head.endswith("| re-executed | SLA violation (s) |")
    assert "| a | 10.0 [10.0, 10.0] |" in ev.markdown_table(loud)
    assert ev.markdown_table(loud).splitlines()[3].endswith("| 30.0 [30.0, 30.0] |")  # policy b
    # the training-seed table of a's seeds (0 s) keeps the column the main table has
    grouped = across_training_seeds(loud, {"a": "g"})
    assert "SLA violation" not in ev.markdown_table(grouped)
    assert "SLA violation" in ev.markdown_table(grouped, table_columns(loud))


def test_seed_ranges_label_wrapping_and_stable_policy_colours():
    assert ev.format_seeds([4, 0, 1, 2, 7, 8]) == "0-2, 4, 7-8"
    label = "maskable_ppo:ila72-jct-fewest-remaining-workconserving-a-very-long-name"
    wrapped = ev.wrap_label(label, 18)
    assert all(len(line) <= 18 for line in wrapped.split("\n"))
    assert wrapped.replace("\n", "") == label
    # a policy keeps its colour whatever else is plotted beside it
    a = ev.policy_colors(["fair", "my-model"])
    b = ev.policy_colors(["late", "fifo", "fair"])
    assert a["fair"] == b["fair"] and a["my-model"] != a["fair"]


def test_plots_are_written_at_print_resolution(tmp_path):
    from PIL import Image

    rows = mrgym.evaluate(["fifo", "fair"], ["lee-gpu"], [0, 1], keep_logs=True)
    paths = ev.plot(rows, tmp_path, ev.job_jcts(rows))
    assert [p.name for p in paths] == [
        "jct_cdf.png",
        "jct.png",
        "throughput_fairness.png",
        "locality.png",
    ]
    for p in paths:
        with Image.open(p) as im:
            assert round(im.info["dpi"][0]) >= 150
            assert im.width >= 1000


# -- small things --------------------------------------------------------------------------
def test_version():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"mrgym {mrgym.__version__}"


def test_help_shows_the_defaults():
    assert "(default: dl-sched)" in " ".join(run_cli("simulate", "--help").stdout.split())
    text = " ".join(run_cli("compare", "--help").stdout.split())
    assert "(default: 0-4)" in text
    assert "(default: the registered schedulers and the compositions that are" in text
    assert "runs/compare-CONFIG-YYYYmmdd-HHMMSS" in text
    assert "(default: ila2400)" in " ".join(run_cli("bench", "--help").stdout.split())


def test_no_option_states_its_default_twice():
    """The formatter adds ``(default: X)``; an option whose own help says it as well
    printed it twice (``evaluate --seeds``)."""
    import argparse

    sub = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    twice = [
        f"{name} {a.option_strings[0]}"
        for name, parser in sub.choices.items()
        for a in parser._actions
        if a.help and "(default" in a.help and a.default not in (None, False, argparse.SUPPRESS)
    ]
    assert twice == []
    text = " ".join(run_cli("evaluate", "--help").stdout.split())
    assert text.count("default") == text.count("(default:") + 1  # "the default is ..." once


def test_reproduce_list_keeps_its_columns_apart():
    from mrgym.reproduce.report import load_claims, select

    claims = select(load_claims(), "all")
    lines = run_cli("reproduce", "--list").stdout.splitlines()
    assert len(lines) == len(claims)
    where_at = lines[0].index(claims[0].where)
    for c, line in zip(claims, lines):
        # the key, then two spaces at least; each "where" starts in one column and is
        # followed by two spaces at least (the longest ran into the claim beside it)
        assert line.startswith(c.key + "  ") and line.index(c.where) == where_at, line
        assert line[where_at + len(c.where) :].startswith("  "), line


def test_the_ci_runs_the_readmes_test_command():
    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    block = readme.split("Run the test suite", 1)[1].split("```bash\n", 1)[1].split("\n```")[0]
    ci = (root / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == block.strip()
    # the CPU build of torch before the extras: a plain install pulls the CUDA one
    assert block.startswith("pip install torch==2.13.0 --index-url https://download.pytorch")
    install = readme.split("## Install", 1)[1].split("## ", 1)[0]
    assert install.index("--index-url") < install.index('".[rl]"') < install.index('".[dev]"')


def test_reversed_seed_range_is_named():
    with pytest.raises(ValueError, match="the range 5-2 runs backwards; write 2-5"):
        cli.parse_seeds("5-2")


# -- missing extras --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "what", "gone"),
    [
        (["train", "--config", "configs/train/ppo_ila72.yaml"], "mrgym train", "torch"),
        (["evaluate", "--model", "runs/none"], "mrgym evaluate", "stable_baselines3"),
        (["tune", "--config", "configs/train/ppo_ila72.yaml"], "mrgym tune", "sb3_contrib"),
        ([*COMPARE, "--models", "m.zip"], "mrgym compare --models", "torch"),
        ([*COMPARE, "--tensorboard", "tb"], "mrgym compare --tensorboard", "tensorboard"),
    ],
)
def test_a_missing_rl_extra_is_one_line_naming_the_extra(
    argv, what, gone, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, gone, None)  # `import gone` now fails, as uninstalled
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f'mrgym: error: {what} needs the RL extras: pip install -e ".[rl]" in the mrgym checkout\n'
    )
    assert not (tmp_path / "runs").exists()  # compare stopped before making a folder


def test_tune_without_ray_names_ray_tune_and_optuna(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "optuna", None)
    assert cli.main(["tune", "--config", "configs/train/ppo_ila72.yaml"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mrgym: error: mrgym tune needs Ray Tune and Optuna: pip install")
    assert "\n" not in err


def test_an_extra_imported_deep_inside_a_command_is_the_same_one_line(monkeypatch, capsys):
    # a partial install that the command's own check did not catch
    def deep(args):
        raise ModuleNotFoundError("No module named 'sb3_contrib'", name="sb3_contrib")

    monkeypatch.setattr(cli, "cmd_simulate", deep)
    assert cli.main(["simulate"]) == 2
    assert capsys.readouterr().err == (
        'mrgym: error: mrgym simulate needs the RL extras: pip install -e ".[rl]" in the mrgym checkout\n'
    )

    def other(args):  # any other missing module is a bug: its traceback stays
        raise ModuleNotFoundError("No module named 'nope'", name="nope")

    monkeypatch.setattr(cli, "cmd_simulate", other)
    with pytest.raises(ModuleNotFoundError):
        cli.main(["simulate"])


# -- a failed compare leaves nothing behind ----------------------------------------------
def test_a_failed_compare_removes_the_folder_it_made(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    def broken(self):
        raise ValueError("broken run")

    monkeypatch.setattr(Simulation, "run", broken)
    assert cli.main([*COMPARE, "--seeds", "0"]) == 2
    assert "broken run" in capsys.readouterr().err
    assert list((tmp_path / "runs").iterdir()) == []  # no empty compare-* folder
    out = tmp_path / "mine"
    assert cli.main([*COMPARE, "--seeds", "0", "--out", str(out)]) == 2
    assert not out.exists()
    # an unknown scheduler fails before any folder is made
    assert cli.main([*COMPARE[:4], "fifo,nosuch", "--seeds", "0"]) == 2
    assert list((tmp_path / "runs").iterdir()) == []


def test_an_interrupted_compare_keeps_a_folder_only_with_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _interrupt_after(monkeypatch, 0)  # nothing finished: nothing to keep
    assert cli.main([*COMPARE, "--seeds", "0-1"]) == 130
    assert list((tmp_path / "runs").iterdir()) == []
    monkeypatch.undo()  # the real Simulation.run again
    monkeypatch.chdir(tmp_path)
    _interrupt_after(monkeypatch, 1)  # one run finished: its folder and row stay
    assert cli.main([*COMPARE, "--seeds", "0-1"]) == 130
    (kept,) = (tmp_path / "runs").iterdir()
    assert len(_read_csv(kept / "results.csv")) == 1


def test_a_user_folder_that_existed_is_never_removed(tmp_path, monkeypatch):
    def broken(self):
        raise ValueError("broken run")

    monkeypatch.setattr(Simulation, "run", broken)
    assert cli.main([*COMPARE, "--seeds", "0", "--out", str(tmp_path)]) == 2
    assert tmp_path.is_dir()


# -- colours -----------------------------------------------------------------------------
def test_every_registered_scheduler_has_its_own_colour_in_every_plot():
    from mrgym import registry

    names = registry.available()
    assert len(names) == 25
    style = ev.policy_colors(names)
    assert len({style[n][0] for n in names}) == 25
    # models: colours of their own, none a baseline's, stable whatever else is plotted
    models = ["ppo:ila72", "maskable_ppo:ila72-s1", "bc_fair-s1"]  # hashed to 3 colours
    both = ev.policy_colors([*names, *models])
    assert len({c for c, _ in both.values()}) == 28
    for m in models:  # the same colour in a plot of its own and beside the others
        assert ev.policy_colors(["fair", m])[m] == both[m]
    assert ev.policy_colors(reversed(models)) == ev.policy_colors(models)
    # two names hashed to one colour in one plot: the first in sorted order keeps it
    clash = ev.policy_colors(["maskable_ppo:ila72-s1", "bc_fair-s0"])
    assert clash["bc_fair-s0"] == ev.policy_colors(["bc_fair-s0"])["bc_fair-s0"]
    assert clash["maskable_ppo:ila72-s1"][0] != clash["bc_fair-s0"][0]
    # distinct to the eye as well: any two of the 27 differ by >= 0.07 in some channel
    rgb = np.array([c[:3] for c, _ in both.values()])
    far = np.abs(rgb[:, None] - rgb[None]).max(axis=2) + np.eye(len(rgb))
    assert far.min() >= 0.07


def test_error_bars_below_five_seeds_are_the_seeds_range(tmp_path, monkeypatch):
    """As the tables do: over 3 seeds the bars run from the smallest to the largest seed's
    value, not a t-interval (±4.3 standard errors); at 5 seeds the interval comes back."""
    from mrgym import plots

    drawn = []
    monkeypatch.setattr(plots, "_hbars", lambda ax, labels, m, errs, *a: drawn.append(errs))

    def rows(n: int) -> list[dict]:
        return [
            {"scenario": "s", "policy": "p", "seed": i, "mean_jct_s": 10.0 + 3 * i}
            for i in range(n)
        ]

    plots._bar_panels(ev.summarize(rows(3)), ["p"], ["k"], [plots.METRIC["mean_jct_s"]] * 2, True)
    assert drawn[0] == [[3.0], [3.0]]  # mean 13, seeds 10..16
    assert "the seeds' range (min to max)" in plots._bars_note(3, "ci95")
    drawn.clear()
    plots._bar_panels(ev.summarize(rows(5)), ["p"], ["k"], [plots.METRIC["mean_jct_s"]] * 2)
    assert drawn[0] == [pytest.approx(3 * 2.776 * 1.5811 / 5**0.5, rel=1e-3)]
    assert "Student t, 4 degrees of freedom" in plots._bars_note(5, "ci95")
