"""Progress-share scheduling (baselines/lee_progress.py; Lee thesis ch. 4, §4.3.1): eqs.
4.1-4.4 and Algorithm 2's launch test on the thesis' Fig. 4.5 numbers, the calibration
phase, the lee-gpu effect of §4.4.2 against the fair comparator (Algorithm 1), the
heterogeneity-unaware ablation, determinism, plain deep-copyable state, and the gym loop."""

from __future__ import annotations

import copy
import json

import gymnasium as gym
import numpy as np
import pytest

import mrgym
from baselines.lee_progress import (
    LeeFairScheduler,
    ProgressShareScheduler,
    best_score,
    may_launch,
    preference,
    progress_share,
    score,
)
from mrgym import registry
from mrgym.config import load_scenario
from mrgym.reproduce.claims.lee_progress import lee_run, ps_overrides, ps_scenario, ps_setup
from mrgym.sim.simulation import Simulation

NAMES = {
    "progress-share": "baselines.lee_progress:ProgressShareScheduler",
    "lee-fair": "baselines.lee_progress:LeeFairScheduler",
}


def test_registered():
    for name, ep in NAMES.items():
        assert registry.entry_point(name) == ep


# Fig. 4.5: two slots of N1 and four of N2; job A runs 3x faster on N1, B as fast on both
SLOTS = {"N1": 2, "N2": 4}
CR_A = {"N1": 3.0, "N2": 1.0}
CR_B = {"N1": 1.0, "N2": 1.0}


def _same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _jct(sched, seed: int, scenario="lee-gpu") -> dict[str, float]:
    r = mrgym.run_sim(scenario, sched, seed)
    return {name: fin - arr for _, name, _, arr, fin in r.jobs}


# -- eq. 4.1 ------------------------------------------------------------------------------
def test_progress_share_eq41_on_fig45():
    # Fig. 4.6: A holds three N2 slots -> 3 / (2*3 + 4*1) = 0.3, under its fair share
    assert progress_share({"N2": 3}, SLOTS, CR_A) == pytest.approx(0.3)
    # Fig. 4.7: A on both N1 slots and one N2 slot -> (6 + 1) / 10 = 0.7
    assert progress_share({"N1": 2, "N2": 1}, SLOTS, CR_A) == pytest.approx(0.7)
    # B is indifferent: its PS is its slot share, 3 of 6
    assert progress_share({"N2": 3}, SLOTS, CR_B) == pytest.approx(0.5)
    assert progress_share({"N1": 1, "N2": 2}, SLOTS, CR_B) == pytest.approx(0.5)
    # the whole cluster is progress share 1; no slot is 0
    assert progress_share(SLOTS, SLOTS, CR_A) == pytest.approx(1.0)
    assert progress_share({}, SLOTS, CR_A) == 0.0
    # Σ PS of Fig. 4.7's assignment (A: 2 N1 + 1 N2, B: 3 N2) is above 1; Fig. 4.6's is not
    assert progress_share({"N1": 2, "N2": 1}, SLOTS, CR_A) + 0.5 == pytest.approx(1.2)
    assert progress_share({"N2": 3}, SLOTS, CR_A) + 0.5 == pytest.approx(0.8)


# -- eqs. 4.2-4.4 and Algorithm 2, line 4 -----------------------------------------------------
def test_score_and_best_score_eqs42_43():
    assert score(4.0) == 0.25
    assert score(0.0) == float("inf")
    # the best replica is the fastest one: read 6 s + process 4 s vs read 0 + process 4 s
    assert best_score([10.0, 4.0]) == pytest.approx(0.25)


def test_preference_eq44_on_fig45():
    # A's block: best scores 3 on each N1 slot, 1 on each N2 slot
    groups = [(3.0, 2), (1.0, 4)]
    assert preference(3.0, groups) == pytest.approx(1.0)  # the most preferred slot
    assert preference(1.0, groups) == pytest.approx(4 / 10)  # only the N2 slots count
    # B sees no difference: every slot is the most preferred
    assert preference(1.0, [(1.0, 2), (1.0, 4)]) == 1.0
    # three tiers: the middle one sums itself and the worse one
    assert preference(2.0, [(4.0, 1), (2.0, 2), (1.0, 4)]) == pytest.approx(8 / 12)


def test_launch_test_of_algorithm2():
    # (1 - Pref) <= delay / max_delay: A on an N2 slot (Pref 0.4) waits 6 of 10 s
    assert not may_launch(0.4, 5.9, 10.0)
    assert may_launch(0.4, 6.0, 10.0)
    assert may_launch(1.0, 0.0, 10.0)  # the best slot launches at once
    assert not may_launch(0.0, 9.9, 10.0) and may_launch(0.0, 10.0, 10.0)
    assert may_launch(0.1, 0.0, 0.0)  # no delay at all: greedy


def test_scheduler_pref_on_lee_gpu_slots():
    """The scheduler's eq. 4.4 on lee-gpu (2 + 2 slots, every block on both nodes): with
    Crypto's CR 3x on the GPU node, a cc1 slot is worth 2 / (2 + 6) = 0.25."""
    sched = ProgressShareScheduler()
    sim = Simulation(load_scenario("lee-gpu"), sched, 0)
    view = sim.view
    cc1, cg1 = sim.topo.workers
    assert (cc1.host.type.name, cg1.host.type.name) == ("cc1.4xlarge", "cg1.4xlarge")
    crypto = view.all_jobs[0]
    task = crypto.maps[0]
    cr = {"cc1.4xlarge": 1.0, "cg1.4xlarge": 3.0}
    assert sched.pref(view, crypto, task, cc1, cr) == pytest.approx(0.25)
    assert sched.pref(view, crypto, task, cg1, cr) == pytest.approx(1.0)
    even = {"cc1.4xlarge": 2.0, "cg1.4xlarge": 2.0}
    assert sched.pref(view, crypto, task, cc1, even) == 1.0


# -- calibration and the §4.4.2 effect ---------------------------------------------------
def test_calibration_measures_the_gpu_affinity():
    """Each job's CR per host type comes from its finished maps (§4.3.1.4): Crypto's GPU
    node measures ~2-3x its cc1 node, Sort's two nodes within 15 % of each other."""
    sched = ProgressShareScheduler()
    mrgym.run_sim("lee-gpu", sched, 0)
    assert sched.n_calibration >= 2  # a first map of each job on each type
    crypto, sort = sched.calibrated_rates(0), sched.calibrated_rates(1)
    assert set(crypto) == set(sort) == {"cc1.4xlarge", "cg1.4xlarge"}
    assert 1.5 < crypto["cg1.4xlarge"] / crypto["cc1.4xlarge"] < 3.5
    assert 0.85 < sort["cg1.4xlarge"] / sort["cc1.4xlarge"] < 1.15


@pytest.mark.xfail(
    strict=True,
    reason="validation not reproduced on the calibrated model (claim lee-ps-jct): Crypto's "
    "gain is -0.11 over seeds 0-2 (0.00, 0.06, -0.39; -0.14 over 10 seeds), the thesis ~0.30; "
    "the seeds split on which node Sort's one-map calibration measures faster",
)
def test_progress_share_speeds_the_accelerable_job_on_lee_gpu():
    """§4.4.2 (Fig. 4.11, third bars): Crypto ~30 % faster than under the fair scheduler,
    on the claims' scenario (lee-gpu, Sort with Hadoop's 3 reduces). Sort is measured 23 %
    slower over seeds 0-2 (the thesis: not slower; the reason is in
    mrgym/reproduce/claims/lee_progress.py): the stated tolerance is 20 % on seeds 0-2."""
    seeds = range(3)
    sc = ps_scenario()
    ps = [_jct(ProgressShareScheduler(), s, sc) for s in seeds]
    fair = [_jct(LeeFairScheduler(), s, sc) for s in seeds]
    gain = np.mean([1 - p["crypto"] / f["crypto"] for p, f in zip(ps, fair)])
    sort = np.mean([p["sort"] / f["sort"] - 1 for p, f in zip(ps, fair)])
    assert 0.2 <= gain <= 0.45  # the thesis: ~0.30
    assert sort <= 0.20  # 0.23 measured
    # the heterogeneity-unaware ablation (CR equal on every type) gains nothing
    blind = [_jct(ProgressShareScheduler(aware=False), s, sc) for s in seeds]
    assert np.mean([b["crypto"] / f["crypto"] for b, f in zip(blind, fair)]) > 0.95


# -- the claims' scenario and measurement (mrgym/reproduce/claims/lee_progress.py) ----------
def test_claim_scenario_is_lee_gpu_with_hadoops_sort_reduces():
    """Sort's reduces: Hadoop 0.20.2's Sort example, (int) (0.9 x 4 reduce slots) = 3; the
    rest is lee-gpu. The setup lists every job size with its source."""
    base, sc = load_scenario("lee-gpu"), ps_scenario()
    assert ps_overrides() == {"workload.jobs.1.reduces": 3}
    assert [j.name for j in sc.workload.jobs] == ["crypto", "sort"]
    assert sc.workload.jobs[1].reduces == 3
    assert sc.model_dump(exclude={"workload"}) == base.model_dump(exclude={"workload"})
    assert sc.workload.jobs[0] == base.workload.jobs[0]
    setup = {s.what: s for s in ps_setup()}
    assert "jobs" not in setup  # lee-gpu's unsourced summary, replaced
    assert setup["workload.jobs.1.reduces"].value == "3"
    assert setup["workload.jobs.1.reduces"].source.kind == "Hadoop default"
    assert setup["workload.jobs.1.maps"].value == "64"
    assert "2 GB/node" in setup["workload.jobs.1.maps"].source.ref
    assert setup["workload.jobs.0.maps"].source.ref.startswith("UNSOURCED")


def test_claim_shares_span_both_jobs_pending_maps():
    """PS is averaged until the first job launches its last map (Fig. 4.6: 'drawn only to
    the point at which there are enough tasks to schedule'), not over its reduce phase."""
    r = lee_run("lee-fair", 0)
    assert r.span == min(r.last.values()) < min(r.jct.values())
    assert all(sum(n.values()) == 64 for n in r.maps.values())
    assert all(0.0 < v < 1.0 for v in r.ps.values())
    assert sum(r.ps.values()) <= 1.0 + 1e-9
    assert all(0.0 < v <= 4 for v in r.slots.values())


def test_lee_fair_is_algorithm1_with_the_thesis_waits():
    s = registry.make("lee-fair")
    assert isinstance(s, LeeFairScheduler) and (s.node_wait_s, s.rack_wait_s) == (5.0, 5.0)
    over = {"workload.scale_maps_to": 300}
    a = mrgym.run_sim(load_scenario("ila72", over), s, 0).metrics
    b = mrgym.run_sim(load_scenario("ila72", over), "fair", 0).metrics  # no waiting
    assert a["jobs_completed"] == a["jobs_submitted"]
    # "if t is good enough": waiting for node-local slots (0.97 vs PureFair's 0.26)
    assert a["map_locality"]["node"] > 0.9 > 0.5 > b["map_locality"]["node"]


def test_bad_parameter():
    with pytest.raises(ValueError, match="progress-share.max_delay_s: must be >= 0, got -1"):
        registry.make("progress-share", max_delay_s=-1)


# -- determinism, state, gym loop ---------------------------------------------------------
def test_same_seed_same_metrics_and_plain_state():
    s1, s2 = ProgressShareScheduler(), ProgressShareScheduler()
    a = mrgym.run_sim("lee-gpu", s1, 4).metrics
    b = mrgym.run_sim("lee-gpu", s2, 4).metrics
    assert _same(a, b)
    assert s1._cr == s2._cr and s1.n_skipped == s2.n_skipped > 0
    # the state is ids and numbers only (environment snapshots deep-copy it)
    twin = copy.deepcopy(s1)
    assert twin._cr == s1._cr and twin._since == s1._since
    for jid, cr in s1._cr.items():
        assert isinstance(jid, int) and all(isinstance(v, float) for v in cr.values())


@pytest.mark.parametrize(
    "scenario,over", [("lee-gpu", None), ("ila72", {"workload.scale_maps_to": 300})]
)
def test_gym_loop_matches_run_sim(scenario, over):
    """Launches name the job only (the task is Hadoop's pick, eq. 4.3's argmax) and
    declines stay legal with work_conserving=False: the gym loop replays run_sim exactly,
    on lee-gpu (CR-driven preferences) and on two-rack ila72 (locality-driven ones)."""
    a = mrgym.run_sim(load_scenario(scenario, over), "progress-share", 0).metrics
    env = gym.make(
        "MRCluster-v0", config=scenario, overrides=over, job_slots=32, work_conserving=False
    )
    policy = mrgym.EnvPolicy("progress-share")
    b = mrgym.run_episode(env, policy, 0)
    assert policy.inexact == b.inexact == 0 and b.invalid_actions == 0
    assert _same(a, b.metrics)
