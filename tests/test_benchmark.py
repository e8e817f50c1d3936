"""``mrgym benchmark`` and the leaderboard (mrgym/benchmark/): the protocol's seeds, the
paired interval against scipy, duplicates, K samples with their policy seeds, the result
JSON, the generated page, and a baseline row reproduced bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli
from scipy import stats

import mrgym
from mrgym import registry
from mrgym.benchmark import leaderboard, protocol
from mrgym.benchmark.protocol import METRIC_KEYS, TEST_SEEDS, VALIDATION_SEEDS, policy_seed
from mrgym.benchmark.results import (
    PolicyResult,
    RunInfo,
    document,
    policy_results,
    read_json,
    write_json,
)
from mrgym.benchmark.sampling import run_sample, sample_tasks, with_policy_seed
from mrgym.benchmark.stats import paired_difference, same_as, summarize
from mrgym.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = "lee-gpu"  # two jobs: an episode takes a few hundredths of a second


# -- the protocol ---------------------------------------------------------------------------
def test_seed_ranges_are_fixed_disjoint_and_new():
    assert tuple(range(2000, 2020)) == VALIDATION_SEEDS
    assert tuple(range(3000, 3010)) == TEST_SEEDS
    assert protocol.split_seeds("test") == TEST_SEEDS
    old = set(range(100, 110)) | set(range(1000, 1010))  # the earlier test and validation
    for seeds in (VALIDATION_SEEDS, TEST_SEEDS):
        assert not set(seeds) & old and max(seeds) < 10_000  # demos: 10000 and up
    assert not set(VALIDATION_SEEDS) & set(TEST_SEEDS)
    with pytest.raises(ValueError, match="--split 'train': expected one of validation, test"):
        protocol.split_seeds("train")


# -- the paired difference ------------------------------------------------------------------
def test_paired_difference_is_scipys_paired_t_interval():
    base = [100.0, 120.0, 90.0, 110.0, 105.0]
    pol = [95.0, 118.0, 85.0, 112.0, 99.0]
    rel = 100 * (np.array(pol) / np.array(base) - 1)
    lo, hi = stats.t.interval(0.95, len(rel) - 1, loc=rel.mean(), scale=stats.sem(rel))
    d = paired_difference(pol, base)
    assert d.n == 5
    assert d.mean_pct == pytest.approx(rel.mean(), rel=1e-12)
    assert (d.low_pct, d.high_pct) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))
    assert d.low_pct < d.mean_pct < 0 < d.high_pct  # 3.1 % faster, not significant


def test_paired_difference_edge_cases():
    same = paired_difference([10.0, 20.0], [10.0, 20.0])
    assert (same.mean_pct, same.low_pct, same.high_pct) == (0.0, 0.0, 0.0)  # not NaN
    one = paired_difference([11.0], [10.0])
    assert one.mean_pct == pytest.approx(10.0) and one.low_pct is None and one.n == 1
    # a seed without a value on either side is left out, and n says so
    part = paired_difference([11.0, None, 12.0, 9.0], [10.0, 10.0, float("nan"), 10.0])
    assert part.n == 2 and part.mean_pct == pytest.approx(0.0)
    assert paired_difference([None], [1.0]).mean_pct is None
    with pytest.raises(ValueError, match="3 values against 2 reference values"):
        paired_difference([1.0, 2.0, 3.0], [1.0, 2.0])


def test_a_percentage_near_zero_keeps_its_side():
    """The tables' percentages: one decimal; float noise around zero reads +0.0, but a
    bound that is off zero keeps two decimals (ila72-jct-v2-s1's upper bound, -0.014 %,
    had read +0.0, as if its interval reached zero)."""
    from mrgym.benchmark.leaderboard import pct

    assert [pct(v) for v in (-3e-13, 3e-13, 0.004, -0.004)] == ["+0.0"] * 4
    assert [pct(v) for v in (-0.0143, 0.0143, 0.049, -0.05)] == ["-0.01", "+0.01", "+0.05", "-0.1"]
    assert [pct(v) for v in (-1.1478, 2.25, 12.0)] == ["-1.1", "+2.2", "+12.0"]
    same = paired_difference([10.0, 20.0], [10.0, 20.0])
    assert [pct(v) for v in (same.mean_pct, same.low_pct, same.high_pct)] == ["+0.0"] * 3


# -- duplicates and the best baseline -------------------------------------------------------
def _result(name: str, jct: list, kind: str = "baseline", **extra) -> PolicyResult:
    per_seed = {k: [None] * len(jct) for k in METRIC_KEYS}
    per_seed.update(mean_jct_s=list(jct), p95_jct_s=[2 * x for x in jct], **extra)
    return PolicyResult(
        name, kind, False, 1, list(range(len(jct))), per_seed, f"mrgym benchmark --policies {name}"
    )


def test_duplicates_are_marked_and_left_out_of_the_best_baseline():
    rows = [
        _result("fifo", [100.0, 90.0, 80.0]),
        _result("fair", [95.0, 95.0, 81.0]),
        _result("fifo-random", [100.0, 90.0 * (1 + 1e-12), 80.0]),  # fifo, to the last bits
        _result("agent", [50.0, 50.0, 50.0], kind="model"),  # best, but not a baseline
        _result("slow", [120.0, 110.0, 100.0]),
    ]
    assert same_as({r.name: r.per_seed["mean_jct_s"] for r in rows}) == {"fifo-random": "fifo"}
    summaries, best = summarize(rows)
    by = {s.name: s for s in summaries}
    assert best == "fifo" and by["fifo"].best and not by["fifo-random"].best
    assert by["fifo-random"].same_as == "fifo" and by["fair"].same_as is None
    assert by["agent"].diff.mean_pct < -30 and by["agent"].diff.reference == "fifo"
    # a tie that is not a duplicate goes to the policy run first
    tie = [_result("a", [1.0, 3.0]), _result("b", [3.0, 1.0])]
    assert summarize(tie)[1] == "a"
    # models only: no baseline, no difference
    only, best = summarize([rows[3]])
    assert best is None and only[0].diff is None


def test_compare_marks_a_policy_with_anothers_per_seed_metrics():
    from mrgym.cli.compare import _mark_duplicates

    def row(policy, seed, jct, util):
        r = dict.fromkeys(METRIC_KEYS, 0.0)
        return {**r, "scenario": "x", "policy": policy, "seed": seed, "wall_s": seed + 9,
                "mean_jct_s": jct, "slot_utilization": util}  # fmt: skip

    rows = [
        *(row("fair", s, 10.0 + s, 0.5) for s in (0, 1)),
        *(row("hybridmr-phase1", s, 10.0 + s, 0.5) for s in (0, 1)),  # wall time differs
        *(row("delay", s, 10.0 + s, 0.6 if s else 0.5) for s in (0, 1)),  # one metric differs
    ]
    summary = [{"scenario": "x", "policy": p} for p in ("fair", "hybridmr-phase1", "delay")]
    shown, dup = _mark_duplicates(summary, rows)
    assert dup == {("x", "hybridmr-phase1"): "fair"}
    assert [r["policy"] for r in shown] == ["fair", "hybridmr-phase1 (= fair)", "delay"]
    assert summary[1]["policy"] == "hybridmr-phase1"  # the summary itself is left alone


# -- K samples ------------------------------------------------------------------------------
def test_k_samples_get_distinct_policy_seeds_and_keep_the_episode_seed():
    tasks = sample_tasks(0, "rand-sched", SCENARIO, [3000, 3001], 3, start=7)
    assert [t.index for t in tasks] == list(range(7, 13))
    assert [(t.seed, t.sample) for t in tasks] == [(s, j) for s in (3000, 3001) for j in range(3)]
    seeds = [t.policy_seed for t in tasks]
    assert len(set(seeds)) == 6 and not set(seeds) & {3000, 3001}
    assert seeds == [policy_seed(t.seed, t.sample) for t in tasks]  # a function of (s, j)
    assert all(0 <= s < 2**63 for s in seeds)
    # a deterministic policy: once per seed, reset with the episode seed as compare does
    once = sample_tasks(0, "fair", SCENARIO, [3000, 3001], None)
    assert [(t.seed, t.policy_seed) for t in once] == [(3000, None), (3001, None)]


class _SeedProbe:
    """A FIFO that records the seeds its reset gets (it draws nothing itself)."""

    seen: list = []

    @classmethod
    def make(cls):
        from baselines.classic import FifoScheduler

        class Probe(FifoScheduler):
            name = "seed-probe"
            stochastic = True

            def reset(self, seed):
                cls.seen.append(seed)
                super().reset(seed)

        return Probe()


def test_a_sample_runs_the_episode_seeds_workload_with_its_policy_seed(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry.register("seed-probe", _SeedProbe.make)
    _SeedProbe.seen = []
    tasks = sample_tasks(0, "seed-probe", SCENARIO, [3000], 2)
    got = [run_sample(t) for t in tasks]
    assert _SeedProbe.seen == [policy_seed(3000, 0), policy_seed(3000, 1)]
    # the same jobs and luck as FIFO on episode seed 3000: the same metrics, bit for bit
    fifo = mrgym.run_sim(SCENARIO, "fifo", 3000).metrics
    assert [g.values["mean_jct_s"] for g in got] == [fifo["mean_jct_s"]] * 2
    # a scheduler object and a registered name both get the seed; the name stays its own
    s = with_policy_seed("dl-sched", 123)
    s.reset(5)
    assert s.name == "dl-sched" and s.rng.random() == np.random.default_rng(123).random()


class _Sampler:
    """A stand-in for a sampled model in the Gymnasium loop: records the seed its
    ``start_episode`` gets, launches the first legal action."""

    name = "sampler"
    env_kwargs: dict = {}
    started: list = []

    def __call__(self, env):
        return self

    def start_episode(self, seed):
        self.started.append(seed)

    def predict(self, obs, info):
        return int(np.flatnonzero(info["action_mask"])[0])


def test_a_model_sample_gets_its_policy_seed_in_the_gym_loop():
    _Sampler.started = []
    got = [run_sample(t) for t in sample_tasks(0, _Sampler(), SCENARIO, [3001], 2)]
    assert _Sampler.started == [policy_seed(3001, 0), policy_seed(3001, 1)]
    assert got[0].error is None and got[0].values == got[1].values  # same episode, same acts


def test_a_failing_episode_is_reported_not_raised(monkeypatch):
    def boom(self):
        raise RuntimeError("broken\nsimulator")

    monkeypatch.setattr(Simulation, "run", boom)
    r = run_sample(sample_tasks(0, "fair", SCENARIO, [3000], None)[0])
    assert r.values is None and r.error == "RuntimeError: broken simulator"


# -- the result file ------------------------------------------------------------------------
def _info(**kw) -> RunInfo:
    base = dict(scenario="s", split="test", seeds=[0, 1, 2], samples=5, command="mrgym x",
                mrgym_version="0.1.0", git_commit="abc", git_dirty=False)  # fmt: skip
    return RunInfo(**{**base, **kw})


def test_json_round_trip(tmp_path):
    rows = [_result("fifo", [100.0, 90.0, 80.0]), _result("fair", [95.0, 93.0, 86.5])]
    rows[1].stochastic, rows[1].samples = True, 2
    rows[1].per_sample = {k: [[v, v] for v in rows[1].per_seed[k]] for k in METRIC_KEYS}
    doc = document(_info(), rows, complete=True)
    path = tmp_path / "sub" / "r.json"
    write_json(path, doc)
    back = read_json(path)
    assert back == json.loads(json.dumps(doc)) and back["best_baseline"] == "fifo"
    assert policy_results(back) == rows
    assert document(_info(), policy_results(back), True)["summary"] == back["summary"]
    assert [p.name for p in tmp_path.joinpath("sub").iterdir()] == ["r.json"]  # no temp left
    path.write_text('{"format": 99}')
    with pytest.raises(ValueError, match="format 99; expected a benchmark result of format 1"):
        read_json(path)


# -- the leaderboard ------------------------------------------------------------------------
def test_the_committed_leaderboard_page_is_what_the_result_files_give(monkeypatch):
    page = ROOT / leaderboard.PAGE
    if not page.is_file():
        pytest.skip("docs/leaderboard.md not generated yet")
    monkeypatch.chdir(ROOT)  # the page names its folder as the defaults do, relative
    assert leaderboard.build() == page.read_text(encoding="utf-8"), "run `mrgym leaderboard`"


def _store(folder: Path, name: str, rows: list, **info) -> None:
    seeds = list(TEST_SEEDS)
    for r in rows:
        r.seeds = seeds
        r.per_seed = {k: (v * 10)[: len(seeds)] for k, v in r.per_seed.items()}
    write_json(folder / name, document(_info(seeds=seeds, **info), rows, complete=True))


def test_leaderboard_merges_baselines_and_agents_and_refuses_bad_files(tmp_path):
    results, page = tmp_path / "docs" / "leaderboard", tmp_path / "docs" / "leaderboard.md"
    results.mkdir(parents=True)
    base = [_result("fifo", [100.0, 90.0]), _result("fair", [95.0, 93.0])]
    base.append(_result("hybridmr-phase1", [95.0, 93.0]))
    _store(results, "s-baselines.json", base)
    _store(results, "s-agent.json", [_result("agent", [90.0, 88.0], kind="model")])
    text = leaderboard.build(results, page)
    table = text[text.index("## s") :]
    lines = [ln for ln in table.splitlines() if ln.startswith("| ") and "benchmark" in ln]
    assert [ln.split(" | ")[0] for ln in lines] == [  # by mean JCT
        "| agent", "| fair", "| hybridmr-phase1 (= fair)", "| fifo",
    ]  # fmt: skip
    assert "best baseline" in lines[1] and "[" in lines[0]  # the agent's paired interval
    assert "](leaderboard/s-agent.json)" in text and "3000-3009" in text
    # a policy in two files of one scenario
    _store(results, "s-again.json", [_result("fair", [1.0, 2.0])])
    with pytest.raises(
        ValueError, match="s-baselines.json: policy 'fair' on s is in s-again.json too"
    ):
        leaderboard.build(results, page)
    (results / "s-again.json").unlink()
    _store(results, "v.json", [_result("x", [1.0, 2.0])], split="validation")
    with pytest.raises(ValueError, match="split 'validation'; the leaderboard takes split 'test'"):
        leaderboard.build(results, page)


def test_the_page_says_which_result_files_ran_with_local_changes(tmp_path):
    results, page = tmp_path / "lb", tmp_path / "lb.md"
    results.mkdir()
    code = ["mrgym/sim/hdfs.py", "docs/leaderboard/x.json"]
    _store(results, "a.json", [_result("fifo", [100.0, 90.0])], git_dirty=True,
           git_dirty_files=code)  # fmt: skip
    _store(results, "b.json", [_result("fair", [95.0, 93.0])], git_dirty=True,
           git_dirty_files=["docs/leaderboard/a.json", "README.md", "tests/test_x.py"])  # fmt: skip
    _store(results, "c.json", [_result("srpt", [96.0, 93.0])], git_dirty=True)  # an old file
    _store(results, "d.json", [_result("sjf", [97.0, 93.0])])  # clean
    boards = leaderboard.load_boards(results)
    assert leaderboard.unclean_files(boards) == [
        ("a.json", "local changes to mrgym/sim/hdfs.py"),
        ("c.json", "local changes, files not recorded"),
    ]
    text = leaderboard.build(results, page)
    assert "commit `abc` **with local changes to mrgym/sim/hdfs.py**" in text
    assert "commit `abc` with changes to documentation or tests only," in text
    assert "commit `abc` **with local changes, files not recorded**" in text
    assert "[`d.json`](lb/d.json): mrgym 0.1.0, commit `abc`, " in text


def test_git_state_names_the_changed_files(tmp_path):
    from mrgym.benchmark.results import changed_files, git_state

    # `git status --porcelain -z`: a rename's old path follows its new one
    out = " M mrgym/a.py\0R  new.py\0old.py\0?? agents/extra/\0D  gone.py\0"
    assert changed_files(out) == ["mrgym/a.py", "new.py", "agents/extra/", "gone.py"]
    assert changed_files("") == []
    state = git_state(tmp_path)  # no checkout here: nothing known
    assert (state.commit, state.dirty, state.files) == (None, None, None)
    here = git_state()
    if here.commit is not None:  # a checkout: its state as git tells it
        assert here.dirty == bool(here.files)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="a result file records git's state")
def test_a_result_file_records_the_changed_files(tmp_path):
    from mrgym.benchmark.results import git_state

    doc = _bench(tmp_path, "r.json", "--policies", "fifo", "--workers", "1")
    state = git_state()
    assert doc["git_commit"] == state.commit and doc["git_dirty"] == state.dirty
    assert doc["git_dirty_files"] == state.files


def test_the_committed_result_files_were_run_from_their_commit():
    """Every file on the leaderboard ran from its commit: no local change that could
    change a result (documentation and the other result files aside)."""
    boards = leaderboard.load_boards(ROOT / leaderboard.RESULTS_DIR)
    bad = leaderboard.unclean_files(boards)
    assert not bad, f"rerun from a clean checkout: {bad}"


def test_leaderboard_prints_the_tables_and_writes_the_page_on_request(tmp_path, capsys):
    from mrgym import cli

    results, page = tmp_path / "lb", tmp_path / "lb.md"
    results.mkdir()
    _store(results, "s.json", [_result("fifo", [100.0, 90.0]), _result("fair", [95.0, 93.0])])
    assert cli.main(["leaderboard", "--results", str(results), "--out", str(page)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## s\n") and "| fair | baseline | 1 | 94.0 |" in out
    assert "command" not in out and "mrgym benchmark" not in out  # a terminal's width
    assert not page.exists()  # printing writes nothing
    argv = ["leaderboard", "--results", str(results), "--out", str(page)]
    assert cli.main([*argv, "--check"]) == 1
    assert cli.main([*argv, "--write"]) == 0 and page.read_text() == leaderboard.build(
        results, page
    )
    assert cli.main([*argv, "--check"]) == 0
    capsys.readouterr()
    assert cli.main([*argv, "--scenario", "t"]) == 2
    assert "--scenario 't': no table; the leaderboard has s" in capsys.readouterr().err


def test_leaderboard_outside_a_checkout_is_one_message(tmp_path, monkeypatch, capsys):
    from mrgym import cli

    monkeypatch.setattr(leaderboard, "CHECKOUT", tmp_path / "site-packages")  # no docs/
    monkeypatch.chdir(tmp_path)
    for argv in (["leaderboard"], ["leaderboard", "--write"]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "mrgym runs from an installed package" in err
        assert "--results FOLDER" in err
    assert not (tmp_path / "docs").exists()  # nothing written anywhere


def test_the_best_baseline_of_a_scenario_is_the_leaderboards(tmp_path):
    results = tmp_path / "lb"
    results.mkdir()
    _store(results, "s.json", [_result("fifo", [100.0, 90.0]), _result("fair", [95.0, 93.0]),
                               _result("agent", [80.0, 80.0], kind="model")])  # fmt: skip
    assert leaderboard.best_baseline("s", results) == "fair"  # models never count
    with pytest.raises(ValueError, match="has no table for scenario 'lee' \\(it has s\\)"):
        leaderboard.best_baseline("lee", results)


# -- the command ----------------------------------------------------------------------------
def _bench(tmp_path: Path, name: str, *extra: str) -> dict:
    out = tmp_path / name
    args = ["benchmark", "--scenario", SCENARIO, "--limit", "2", "--samples", "2"]
    r = run_cli(*args, "--out", str(out), *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def test_benchmark_reproduces_a_baseline_row_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setenv("MRGYM_CACHE", "off")  # the workers compute the reference JCTs too
    pols = ["--policies", "fair,dl-sched"]
    a = _bench(tmp_path, "a.json", *pols, "--workers", "1")
    b = _bench(tmp_path, "b.json", *pols, "--workers", "2")  # parallel: the same numbers
    assert a["policies"] == [
        {**p, "wall_s": q["wall_s"]} for p, q in zip(b["policies"], a["policies"])
    ]
    assert a["summary"] == b["summary"] and a["complete"] and a["seeds"] == [3000, 3001]
    fair, dl = a["policies"]
    assert (fair["samples"], dl["samples"], dl["stochastic"]) == (1, 2, True)
    # fair's row is run_sim's, seed by seed
    for i, seed in enumerate(a["seeds"]):
        m = mrgym.run_sim(SCENARIO, "fair", seed).metrics
        assert fair["per_seed"]["mean_jct_s"][i] == m["mean_jct_s"]
        assert fair["per_seed"]["p95_jct_s"][i] == m["p95_jct_s"]
        loc = m["map_locality"]
        assert fair["per_seed"]["local_frac"][i] == loc["node"] + loc["server"]
    assert a["command"].startswith("mrgym benchmark --scenario lee-gpu --limit 2")
    assert (
        fair["command"]
        == "mrgym benchmark --scenario lee-gpu --split test --limit 2 --policies fair"
    )
    assert dl["command"].endswith("--policies dl-sched --samples 2")
    assert a["mrgym_version"] == mrgym.version()


def test_with_best_baseline_runs_the_leaderboards_best_beside_a_policy(tmp_path):
    best = leaderboard.best_baseline(SCENARIO)  # docs/leaderboard/'s table for lee-gpu
    doc = _bench(tmp_path, "r.json", "--policies", "fifo", "--with-best-baseline", "--workers", "1")
    assert [p["name"] for p in doc["policies"]] == [best, "fifo"]
    assert doc["best_baseline"] in (best, "fifo")  # the better of the two on these seeds
    fifo = next(s for s in doc["summary"] if s["name"] == "fifo")
    assert fifo["diff"] is not None or fifo["best"]
    assert doc["policies"][0]["command"].startswith(
        f"mrgym benchmark --scenario {SCENARIO} --split test --limit 2 --policies {best}"
    )


def test_an_interrupted_benchmark_keeps_the_finished_policies_and_resumes(
    tmp_path, monkeypatch, capsys
):
    from mrgym import cli
    from mrgym.reference import reference_jct

    for seed in (3000, 3001):  # the seeds' reference JCTs (Simulation.run too) in memory
        reference_jct(SCENARIO, seed)
    real, calls = Simulation.run, {"n": 0}

    def run(self):
        calls["n"] += 1
        if calls["n"] == 3:  # fifo's two seeds are done, fair's first is running
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(Simulation, "run", run)
    out = tmp_path / "r.json"
    argv = ["benchmark", "--scenario", SCENARIO, "--limit", "2", "--policies", "fifo,fair"]
    argv += ["--workers", "1", "--out", str(out)]
    assert cli.main(argv) == 130
    doc = read_json(out)
    assert [p["name"] for p in doc["policies"]] == ["fifo"] and not doc["complete"]
    assert "1 of 2 policies had finished" in capsys.readouterr().err
    calls["n"] = -100  # no more interruptions
    assert cli.main([*argv, "--resume"]) == 0
    assert calls["n"] == -98  # fair's two episodes only
    done = read_json(out)
    assert done["complete"] and [p["name"] for p in done["policies"]] == ["fifo", "fair"]
    assert done["policies"][0] == doc["policies"][0]
    assert cli.main([*argv, "--resume", "--samples", "2"]) == 2  # not the same K: refused
    assert "has samples 3, this run 2" in capsys.readouterr().err


def _broken():
    from baselines.classic import FairScheduler

    class Broken(FairScheduler):
        name = "broken"

        def decide(self, ctx):
            raise RuntimeError("no decision")

    return Broken()


def test_a_failing_policy_is_recorded_and_the_others_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry.register("broken", _broken)
    out = tmp_path / "r.json"
    r = run_cli("benchmark", "--scenario", SCENARIO, "--limit", "1", "--policies",
                "broken,fifo", "--workers", "1", "--out", str(out))  # fmt: skip
    assert r.returncode == 1 and "broken failed: seed 3000 sample 0: RuntimeError" in r.stderr
    doc = read_json(out)
    assert [p["name"] for p in doc["policies"]] == ["fifo"] and not doc["complete"]
    assert doc["failed"] == {"broken": "seed 3000 sample 0: RuntimeError: no decision"}


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--limit", "0"], "--limit 0: expected 1 to 10"),
        (["--samples", "0"], "--samples 0: expected at least 1"),
        (["--policies", "nope"], "unknown scheduler 'nope'"),
        (["--policies", "none"], "--policies none and no --models: nothing to run"),
        (["--out", "x.csv"], "expected a file name ending in .json"),
    ],
)
def test_bad_input_is_one_line_naming_the_option(extra, message):
    r = run_cli("benchmark", "--scenario", SCENARIO, *extra)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr


def test_stochastic_schedulers_say_so():
    from mrgym.benchmark.run import is_stochastic

    for name in ("dl-sched", "rand-sched", "fifo-random", "lsap-sched", "pna", "coupling"):
        assert is_stochastic(name), name
    for name in ("fifo", "fair", "delay", "hybridmr"):
        assert not is_stochastic(name), name


def test_workers_get_every_seed_before_a_second_sample_and_rows_stay_in_grid_order(
    monkeypatch,
):
    """A policy's episodes are handed out sample-major (so two workers that start together
    play different seeds and each seed's reference JCTs are simulated once), and the
    results are placed by index: per seed, its own samples, whatever the run order."""
    from mrgym.benchmark import run as bench_run
    from mrgym.benchmark.sampling import SampleResult

    handed: list = []

    def fake_grid(tasks, *_sweep, fn):
        handed.extend(tasks)
        for t in reversed(tasks):  # the last handed out finishes first
            values = dict.fromkeys(METRIC_KEYS, 0.0)
            values["mean_jct_s"] = 1000.0 * t.entrant + 10.0 * (t.seed - 3000) + t.sample
            yield SampleResult(t.index, values, 1.0)

    monkeypatch.setattr(bench_run, "run_grid", fake_grid)
    entrants = [
        bench_run.Entrant(n, n, "baseline", sto, n) for n, sto in (("a", True), ("b", False))
    ]
    out = bench_run.run_benchmark(entrants, SCENARIO, [3000, 3001, 3002], samples=2)
    assert [(t.entrant, t.sample, t.seed) for t in handed] == [
        (0, 0, 3000), (0, 0, 3001), (0, 0, 3002), (0, 1, 3000), (0, 1, 3001), (0, 1, 3002),
        (1, 0, 3000), (1, 0, 3001), (1, 0, 3002),
    ]  # fmt: skip
    a, b = out
    assert a.per_sample["mean_jct_s"] == [[0.0, 1.0], [10.0, 11.0], [20.0, 21.0]]
    assert a.per_seed["mean_jct_s"] == [0.5, 10.5, 20.5]
    assert b.per_seed["mean_jct_s"] == [1000.0, 1010.0, 1020.0] and b.samples == 1
