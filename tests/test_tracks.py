"""Benchmark tracks (mrgym/benchmark/tracks.py): each track's reward return is its ranking
metric, and degenerate policies (nothing launched, a job starved) rank low."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import mrgym  # noqa: F401  (registers MRCluster-v1)
from baselines.simple import OrderScheduler
from mrgym.benchmark.leaderboard import render_table
from mrgym.benchmark.protocol import METRIC_KEYS
from mrgym.benchmark.results import PolicyResult
from mrgym.benchmark.stats import summarize
from mrgym.benchmark.tracks import (
    LOCALITY_CHARGE_S,
    TRACK_KEYS,
    TRACKS,
    get_track,
    locality_value,
    track_values,
)
from mrgym.config import load_scenario
from mrgym.envs.rewards import LOCALITY_VALUE
from mrgym.reference import reference_jct
from mrgym.rows import run_row
from mrgym.sim.scheduler import DECLINE, Scheduler

# ila72's 25 jobs at 300 maps in all (the golden cases' size): seconds a run
ILA_SMALL = {"workload.scale_maps_to": 300}


def test_the_result_files_keep_every_tracks_metric():
    assert set(TRACK_KEYS) <= set(METRIC_KEYS)
    for t in TRACKS.values():
        assert t.metric in METRIC_KEYS and set(t.secondary) <= set(METRIC_KEYS)
    with pytest.raises(ValueError, match="--track 'fairnes'.*did you mean 'fairness'"):
        get_track("fairnes")


def _episode(scenario: str, weights: dict, seed: int, overrides=None):
    """First-legal-action episode: (return, its rewards' terms summed, final info, sim)."""
    env = gym.make("MRCluster-v1", config=scenario, overrides=overrides, reward_weights=weights)
    _, info = env.reset(seed=seed)
    ret = 0.0
    launched_values = 0.0
    while True:
        a = int(np.flatnonzero(info["action_mask"])[0])
        _, r, term, trunc, info = env.step(a)
        ret += r
        launched_values += info["reward_terms"]["locality"]
        if term or trunc:
            return ret, launched_values, info, env.unwrapped


@pytest.mark.parametrize("scenario,overrides", [("lee-gpu", None), ("ila72", ILA_SMALL)])
def test_each_tracks_return_is_its_metric(scenario, overrides):
    """The return of a track's reward, over one episode, is its metric: exactly for the
    jct, throughput and fairness tracks (up to the first arrival, the workload's), and for
    the locality track up to the maps counted at launch rather than at success."""
    seed = 1
    sc = load_scenario(scenario, overrides)
    rows = {}
    for name, t in TRACKS.items():
        ret, values, info, env = _episode(scenario, dict(t.reward_weights), seed, overrides)
        m = info["episode_metrics"]
        assert not m["truncated"]
        jobs = [(j.id, j.name, len(j.maps), j.arrived_s, j.finish_s) for j in env.sim.jobs]
        row = {**m, **{f"map_locality.{k}": v for k, v in m["map_locality"].items()}}
        row.update(track_values(row, jobs, reference_jct(sc, seed)))
        first = min(j[3] for j in jobs)
        n = m["jobs_completed"]
        rows[name] = (ret, values, row, n, first)
    ret, _, row, n, _ = rows["jct"]
    assert ret == pytest.approx(-row["mean_jct_s"] * n / 100, rel=1e-9)
    ret, _, row, n, first = rows["throughput"]
    assert ret == pytest.approx(-(row["makespan_s"] + first) / 100, rel=1e-9)
    ret, _, row, n, _ = rows["fairness"]
    assert ret == pytest.approx(-n * row["rms_slowdown"] ** 2, rel=1e-9)
    ret, values, row, n, _ = rows["locality"]
    # the return: -(sum JCT - c x sum of launched maps' values) / 100
    assert ret == pytest.approx(
        -(row["mean_jct_s"] * n - LOCALITY_CHARGE_S * values) / 100, rel=1e-9
    )
    assert 0.0 < row["locality_value"] <= 1.0
    assert row["jct_locality_s"] >= row["mean_jct_s"]


def test_locality_value_weights_each_level():
    row = {"map_locality.node": 0.5, "map_locality.server": 0.2}
    row |= {"map_locality.rack": 0.2, "map_locality.off_rack": 0.1}
    want = 0.5 * 1.0 + 0.2 * 0.9 + 0.2 * 0.3 + 0.1 * 0.0
    assert locality_value(row) == pytest.approx(want)
    assert LOCALITY_VALUE[0] == 1.0 and LOCALITY_VALUE[3] == 0.0
    assert locality_value({**row, "map_locality.node": 0.0}) is None  # fractions not 1


def test_an_unfinished_job_counts_with_its_age_at_the_end():
    row = {"sim_time_s": 1000.0, "mean_jct_s": 100.0}
    jobs = [(0, "a", 1, 0.0, 100.0), (1, "b", 1, 0.0, None), (2, "late", 1, None, None)]
    v = track_values(row, jobs, {0: 50.0, 1: 100.0, 2: 10.0})
    s = np.array([2.0, 10.0])  # job 1's 1000 s over its 100 s; job 2 never arrived
    assert v["rms_slowdown"] == pytest.approx(math.sqrt(np.mean(s**2)))
    assert v["jain_slowdown"] == pytest.approx(s.sum() ** 2 / (2 * (s**2).sum()))
    assert v["jct_locality_s"] is None  # no map locality in the row


class Nothing(Scheduler):
    """Launches nothing: every slot declined."""

    name = "nothing"

    def decide(self, ctx):
        return DECLINE


class StarveSmallest(OrderScheduler):
    """FIFO, but never a task of the job with the fewest maps: that job waits forever."""

    name = "starve-smallest"

    def order(self, ctx):
        small = min(ctx.view.all_jobs, key=lambda j: (len(j.maps), j.id)).id
        return [j for j in ctx.jobs if j.id != small]


def _result(name: str, scheduler, seeds, overrides) -> PolicyResult:
    sc = load_scenario("ila72", overrides)
    per_seed = {k: [] for k in METRIC_KEYS}
    for seed in seeds:
        row = run_row(scheduler, sc, seed, {}, keep_logs=True)
        row.update(track_values(row, row["_jobs"], reference_jct(sc, seed)))
        for k in METRIC_KEYS:
            v = row.get(k)
            per_seed[k].append(None if v is None or not math.isfinite(float(v)) else float(v))
    return PolicyResult(name, "baseline", False, 1, list(seeds), per_seed, name)


def test_degenerate_policies_rank_low_on_every_track():
    """A policy that launches nothing, and one that never serves one small job, are cut at
    the time cap: neither is ever the best baseline, and both rank below fair on every
    track (the starved job counts on the fairness track with its age at the cap)."""
    seeds = [0, 1]
    over = {**ILA_SMALL, "run.max_sim_time_s": 3000}
    results = [
        _result("nothing", Nothing(), seeds, over),
        _result("starve-smallest", StarveSmallest(), seeds, over),
        _result("fair", "fair", seeds, over),
    ]
    assert results[1].per_seed["truncated"] == [1.0, 1.0]
    for t in TRACKS.values():
        assert summarize(results, t.metric)[1] == "fair", t.name
        table = render_table(results, commands=False, track=t.name)
        rows = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| ")]
        assert rows[1] == "| fair", (t.name, table)
    fair, starve = results[2].per_seed, results[1].per_seed
    # the starved job: ~3000 s against a reference of tens of seconds
    assert all(x > 3 * y for x, y in zip(starve["rms_slowdown"], fair["rms_slowdown"]))
    assert all(x < y for x, y in zip(starve["jain_slowdown"], fair["jain_slowdown"]))


def test_the_reference_jct_is_each_job_alone_and_checks_its_seed():
    """lee-gpu's two jobs alone under fair; a numpy seed is a seed, a bool is not."""
    from mrgym.reference import isolated_jct

    ref = reference_jct("lee-gpu", 3)
    assert sorted(ref) == [0, 1] and all(v > 0 for v in ref.values())
    assert isolated_jct("lee-gpu", "fair", np.int64(3)) == ref
    with pytest.raises(ValueError, match="seed: expected an integer >= 0"):
        isolated_jct("lee-gpu", "fair", True)
