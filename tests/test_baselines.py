"""Classic baselines: registry, fidelity details, run_sim == run_episode, sanity numbers."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest

import baselines
import mrgym
from mrgym.runner import build_simulation

EXACT = ["fifo", "fair", "delay", "capacity"]  # expressible by the action space
INEXACT = ["dl-sched", "rand-sched", "late"]  # random or LATE-ranked task picks (README)


def test_registry():
    assert baselines.available() == [
        "fifo",
        "fair",
        "delay",
        "capacity",
        "late",
        "dl-sched",
        "rand-sched",
    ]
    assert baselines.make("delay", node_wait_s=1.0).node_wait_s == 1.0
    with pytest.raises(ValueError, match="unknown scheduler 'nope'; expected one of"):
        baselines.make("nope")
    with pytest.raises(ValueError, match=r"rand-sched.randomness: must be in \[0, 1\], got 2"):
        baselines.make("rand-sched", randomness=2)


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("scenario", ["ila72", "hybrid48"])
def test_run_sim_and_run_episode_agree(name, scenario):
    a = mrgym.run_sim(scenario, name, 0).metrics
    # an exact replay: the baseline's declines (delay's locality waits) must stay legal
    env = gym.make(
        "MRCluster-v0",
        config=scenario,
        job_slots=32,
        speculation=baselines.make(name).speculates,
        work_conserving=False,
    )
    policy = mrgym.EnvPolicy(name)
    b = mrgym.run_episode(env, policy, 0)
    assert policy.inexact == 0
    assert json.dumps(a, sort_keys=True, default=str) == json.dumps(
        b.metrics, sort_keys=True, default=str
    )


@pytest.mark.parametrize("name", INEXACT)
def test_inexact_baselines_are_flagged(name):
    env = gym.make(
        "MRCluster-v0", config="ila72", job_slots=32, speculation=baselines.make(name).speculates
    )
    policy = mrgym.EnvPolicy(name)
    r = mrgym.run_episode(env, policy, 0)
    assert policy.inexact > 0
    assert r.metrics["jobs_completed"] == r.metrics["jobs_submitted"]


def _mean(name, key, seeds=range(3), scenario="ila72", over=None):
    sc = mrgym.load_scenario(scenario, over)
    vals = [mrgym.run_sim(sc, name, s).metrics for s in seeds]
    return float(np.mean([key(m) for m in vals]))


def test_delay_is_more_local_than_fair_on_ila72():
    local = lambda m: m["map_locality"]["node"] + m["map_locality"]["server"]  # noqa: E731
    assert _mean("delay", local) > _mean("fair", local) + 0.03


def test_fifo_blocks_small_jobs_behind_large_ones():
    small = lambda m: m["mean_jct_by_class_s"]["small"]  # noqa: E731
    assert _mean("fifo", small) > 2 * _mean("fair", small)


SLOW = {
    "cluster.catalog": {
        "xen-slow": {"cores": 10, "core_speed": 0.2, "disk_mbps": 100, "nic_gbps": 1.0}
    },
    "cluster.hosts": [
        {
            "count": 9,
            "type": "xen-12core",
            "vms_per_host": 4,
            "vm": {"vcpus": 2, "map_slots": 2, "reduce_slots": 1},
        },
        {
            "count": 3,
            "type": "xen-slow",
            "vms_per_host": 4,
            "vm": {"vcpus": 2, "map_slots": 2, "reduce_slots": 1},
        },
    ],
    "workload": {
        "kind": "synthetic",
        "n_jobs": 40,
        "mean_interarrival_s": 20.0,
        "profiles": {"kmeans": 1, "wordcount": 1},
        "maps_median": 30,
        "maps_sigma": 0.7,
        "max_maps": 200,
    },
}


def _p95_map_time(name, seed):
    r = mrgym.run_sim(mrgym.load_scenario("ila72", SLOW), name, seed)
    first, end = {}, {}
    for t in r.task_log:
        if t.kind != "map":
            continue
        k = (t.job, t.task)
        first[k] = min(first.get(k, np.inf), t.start)
        if t.outcome == "success":
            end[k] = t.end
    return float(np.percentile([end[k] - first[k] for k in end], 95)), r.metrics["mean_jct_s"]


def test_late_rescues_stragglers_on_slow_hosts():
    """A quarter of the hosts run at a fifth of the speed: LATE's backups cut the p95 map
    time and the mean JCT below Fair's."""
    fair = np.array([_p95_map_time("fair", s) for s in range(3)])
    late = np.array([_p95_map_time("late", s) for s in range(3)])
    assert late[:, 0].mean() < fair[:, 0].mean()
    assert late[:, 1].mean() < 0.9 * fair[:, 1].mean()


def test_delay_waits_then_relaxes_locality():
    d = baselines.make("delay")
    sim = build_simulation("ila72", d, 0)
    job = sim.jobs[0]
    waits = (4.5, 4.5)
    d._since[job.id] = 10.0
    assert d.allowed(job, 10.0, waits) == 0
    assert d.allowed(job, 14.6, waits) == 1  # after the node wait: rack-local allowed
    assert d.allowed(job, 19.1, waits) == 2  # after node + rack waits: any
    assert d._waits(sim.ctx) == (4.5, 4.5)  # Hadoop 1's automatic min(15 s, 1.5 x 3 s)


def test_rand_sched_randomness_bounds():
    zero = mrgym.run_sim("ila72", baselines.make("rand-sched", randomness=0.0), 0).metrics
    dl = mrgym.run_sim("ila72", "dl-sched", 0).metrics
    assert zero == dl  # 0 % degenerates to dl-sched (lsap §IV.D)
    full = mrgym.run_sim("ila72", baselines.make("rand-sched", randomness=1.0), 0).metrics
    assert full["map_locality"]["node"] < 0.5 * dl["map_locality"]["node"]


def test_capacity_serves_the_emptiest_queue_first():
    sc = mrgym.load_scenario("ila72", {"workload.users": 2})
    m = mrgym.run_sim(
        sc, baselines.make("capacity", capacities={"user0": 0.9, "user1": 0.1}), 0
    ).metrics
    m_eq = mrgym.run_sim(sc, "capacity", 0).metrics
    assert m != m_eq
