"""Faults: lost blocks fail jobs as Hadoop does, evicted hosts never return, evictions
under load re-execute work, and long runs with failures and evictions on every bundled
scenario keep the simulator's invariants."""

from __future__ import annotations

from collections import defaultdict

import gymnasium as gym
import numpy as np
import pytest
from helpers import lee_cloud_small, with_dynamics

import mrgym
from mrgym.config import available_scenarios, load_scenario
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.hdfs import Hdfs
from mrgym.sim.params import ALL_OFF, ModelParams

# every host fails about every 3 minutes and is back after one, with an empty disk (the
# machine was replaced): on lee-gpu's two hosts every replica of some blocks is lost
LEE_GPU_FAILURES = {"dynamics.failures": {"mtbf_hours": 0.05, "repair_s": 60, "keeps_disk": False}}


def _record_losses(sim) -> list[tuple[float, str, object]]:
    """Wrap the simulator's loss and repair calls to log (time, event, host)."""
    log: list[tuple[float, str, object]] = []
    dyn = sim.dynamics
    lose, repair = dyn.lose_host, dyn.repair

    def lose_host(host, outcome):
        log.append((sim.env.now, f"{outcome}{'' if host.alive else '-while-down'}", host))
        lose(host, outcome)

    def _repair(host):
        log.append((sim.env.now, "repaired", host))
        repair(host)

    dyn.lose_host, dyn.repair = lose_host, _repair
    return log


def test_all_replicas_lost_fails_the_job_and_the_run_goes_on():
    sc = load_scenario("lee-gpu", LEE_GPU_FAILURES)
    sim = build_simulation(sc, "dl-sched", 4)
    sim.run()
    m = mrgym.metrics.episode_metrics(sim)
    assert m["jobs_failed"] >= 1
    assert m["jobs_completed"] + m["jobs_failed"] == m["jobs_submitted"] == 2
    assert not sim.truncated and not m["truncated"]
    max_att = ModelParams().max_task_attempts
    for job in sim.jobs:
        if job.failed_s is None:
            continue
        assert job.finish_s is None and job.failed_s <= sim.env.now
        # the job failed the moment one task failed its max_att-th attempt (Hadoop's
        # mapred.map.max.attempts = 4), because its block had no live replica: no task has
        # more failures than that, and the culprit's last failure is the job's end
        tasks = job.maps + job.reduces
        assert max(t.failures for t in tasks) == max_att
        (culprit,) = [t for t in tasks if t.failures == max_att]
        failures = [a for a in culprit.attempts if a.outcome == "missing_block"]
        assert len(failures) == max_att and failures[-1].end_s == job.failed_s
        # nothing of a failed job runs after it failed
        assert all(
            a.end_s is not None and a.end_s <= job.failed_s
            for a in sim.attempts
            if a.task.job is job
        )
    # the surviving job completed, every task exactly once
    for job in sim.jobs:
        if job.finish_s is not None:
            for t in job.maps + job.reduces:
                assert [a.outcome for a in t.attempts].count("success") == 1


def test_blocks_come_back_with_a_repaired_host_that_keeps_its_disk():
    # the example (the default: a crash and reboot keeps the disk): both hosts are
    # sometimes down together, yet their blocks return with them and both jobs complete
    over = {"dynamics.failures": {"mtbf_hours": 0.05, "repair_s": 60}}
    for seed in range(4):
        m = run_sim(load_scenario("lee-gpu", over), "dl-sched", seed).metrics
        assert m["host_failures"] > 0 and m["tasks_reexecuted"] > 0
        assert m["jobs_completed"] == 2 and m["jobs_failed"] == 0


def test_missing_block_attempt_fails_after_the_dfs_client_retries():
    sim = build_simulation(load_scenario("lee-gpu", LEE_GPU_FAILURES), "dl-sched", 4)
    sim.run()
    p = ModelParams()
    missing = [a for a in sim.attempts if a.outcome == "missing_block"]
    assert missing
    for a in missing:  # three NameNode look-ups, 3 s apart (Hadoop 1 DFSClient)
        assert a.end_s - a.start_s == pytest.approx(p.block_acquire_failures * p.block_retry_s)


def test_the_environment_survives_lost_blocks():
    env = gym.make("MRCluster-v0", config="lee-gpu", overrides=LEE_GPU_FAILURES)
    obs, info = env.reset(seed=4)
    for _ in range(100_000):
        obs, _r, terminated, truncated, info = env.step(
            env.action_space.sample(mask=info["action_mask"])
        )
        if terminated or truncated:
            break
    assert terminated and not truncated
    m = info["episode_metrics"]
    assert m["jobs_failed"] >= 1
    assert m["jobs_completed"] + m["jobs_failed"] == m["jobs_submitted"]


def test_a_repaired_datanode_brings_its_blocks_back():
    sc = load_scenario("lee-gpu")
    sim = build_simulation(sc, "dl-sched", 0)
    for job in sim.jobs:  # input blocks are placed when a job arrives: place them all now
        sim.materialize(job)
    hdfs: Hdfs = sim.hdfs
    a, b = sim.topo.datanodes
    rng = np.random.default_rng(0)
    block = hdfs.blocks[0]
    assert set(block.replicas) == {a, b}
    for vm in (a, b):  # both fail: the block is missing
        vm.alive = False
        hdfs.invalidate()
        hdfs.rereplicate(vm, rng, durable=True)
    assert block.replicas == [] and hdfs.nearest_replica(block, a) is None
    a.alive = True  # a's disk survived the failure: its replica returns
    hdfs.invalidate()
    back = hdfs.restore(a, rng)
    assert (block, a) in back and block.replicas == [a]
    b.alive = True
    hdfs.invalidate()
    hdfs.restore(b, rng)  # under-replicated: b's copy is taken back too
    assert block.replicas == [a, b] and block.offline == []
    # an evicted node's disk is gone: its replicas never return
    block2 = hdfs.blocks[1]
    for vm in (a, b):
        vm.alive = False
        hdfs.invalidate()
        hdfs.rereplicate(vm, rng, durable=vm is a)
    hdfs.forget(a)
    assert block2.replicas == [] and block2.offline == []


def test_an_evicted_spot_host_never_comes_back():
    over = {
        **lee_cloud_small(),
        "dynamics.spot.hazard_per_hour": 1,
        "dynamics.failures": {"mtbf_hours": 2, "repair_s": 300},
    }
    found = False
    for seed in (4, 0, 1, 2, 3, 5, 6, 7):
        sim = build_simulation(load_scenario("lee-cloud", over), "dl-sched", seed)
        log = _record_losses(sim)
        sim.run()
        now = sim.env.now
        gone = [h for h in sim.topo.hosts if h.gone]
        # lost hosts counted once; billed up-time never exceeds the simulated time
        assert (
            sim.dynamics.hosts_evicted
            == len(gone)
            == len({h.id for _, e, h in log if e.startswith("evicted")})
        )
        assert sim.dynamics.host_failures == sum(1 for _, e, _h in log if e == "failed")
        for h in sim.topo.hosts:
            assert h.up_seconds <= now + 1e-6, h.name
        for h in gone:
            t = sim.dynamics.evict_at[h.id]
            assert not h.alive and all(not v.alive for v in h.vms)
            # nothing ran on it after its eviction
            assert all(a.start_s < t and a.end_s <= t for a in sim.attempts if a.vm.host is h)
        # no attempt starts on a host while it is down
        down: dict[int, float | None] = {}
        for t, e, h in log:
            if e == "failed":
                down[h.id] = t
            elif e == "repaired" and down.get(h.id) is not None:
                start, down[h.id] = down[h.id], None
                assert not any(start < a.start_s < t for a in sim.attempts if a.vm.host is h)
        if any(e == "evicted-while-down" for _, e, _h in log):
            found = True
            break
    assert found, "no seed evicted a host while it was down for repair"


def test_spot_evictions_under_load_reexecute_work():
    # production rounds every 5 minutes keep the spot pool busy; evictions come with a
    # 30 s notice and catch the running attempts and the map outputs on disk.  The test is
    # about eviction's mechanics, not task lengths: with issue 34's mechanisms off and the
    # default two-minute notice no attempt outlives the notice (0 evicted on seeds 0-2),
    # with 30 s 2-4 do on each of them
    over = {**lee_cloud_small(), "dynamics.spot.hazard_per_hour": 3}
    over["dynamics.spot.notice_s"] = 30
    over.update({f"execution.{k}": v for k, v in ALL_OFF.items()})
    for j in range(5):
        over[f"workload.jobs.{j}.every_s"] = 300
        over[f"workload.jobs.{j}.repeat"] = 6
    r = run_sim(load_scenario("lee-cloud", over), "dl-sched", 0)
    m = r.metrics
    evicted = [a for a in r.task_log if a.outcome == "evicted"]
    assert m["hosts_evicted"] >= 1 and evicted
    assert m["map_outputs_lost"] > 0
    assert m["tasks_reexecuted"] >= len(evicted) + 1
    assert m["jobs_completed"] == m["jobs_submitted"] == 30 and m["jobs_failed"] == 0
    for a in evicted:  # the same task later succeeded elsewhere
        assert any(
            b.outcome == "success" and (b.job, b.task, b.kind) == (a.job, a.task, a.kind)
            for b in r.task_log
        )


SCHEDS = ("dl-sched", "late")


def _fault_cases() -> list[tuple[str, str]]:
    """One scheduler per scenario, alternating over the sorted names: dl-sched (its own
    task choice) and LATE (speculative attempts that the faults also catch) meet five and
    four of them.  ila2400 runs dl-sched, as LATE's speculation is slow at its size."""
    names = [n for n in available_scenarios() if n != "ila2400"]
    return [("ila2400", "dl-sched")] + [(n, SCHEDS[i % 2]) for i, n in enumerate(names)]


def test_the_fault_cases_cover_both_schedulers_every_scenario_and_both_disk_modes():
    cases = _fault_cases()
    assert {n for n, _ in cases} == set(available_scenarios())
    for sched in SCHEDS:
        mine = [n for n, s in cases if s == sched]
        assert len(mine) >= 3, sched
        # a repaired host that keeps its disk, and one that comes back empty (blocks lost)
        keeps = {with_dynamics(n)["dynamics"]["failures"]["keeps_disk"] for n in mine}
        assert keeps == {True, False}, sched


# the two slowest cases smaller (the invariants hold at any size): tara80's Sort at an
# eighth (its 800 hosts' failures still number dozens), lee-cloud with its small jobs
FAULT_SIZES = {
    "tara80": {"workload.jobs.0.maps": 160, "workload.jobs.0.reduces": 10},
    "lee-cloud": lee_cloud_small(),
}


@pytest.mark.parametrize(("name", "sched"), _fault_cases())
def test_invariants_with_failures_and_evictions(name, sched):
    sc = load_scenario(with_dynamics(name), FAULT_SIZES.get(name))
    sim = build_simulation(sc, sched, 1)
    log = _record_losses(sim)
    sim.run()
    now = sim.env.now
    assert not sim.truncated, f"{name}/{sched} hit the time cap"
    assert sim.dynamics.host_failures + sim.dynamics.hosts_evicted > 0
    for job in sim.jobs:
        assert (job.finish_s is None) != (job.failed_s is None), job.name  # one or other
        for t in job.maps + job.reduces:
            n_ok = [a.outcome for a in t.attempts].count("success")
            # each task of a completed job succeeded exactly once
            assert n_ok == 1 if job.finish_s is not None else n_ok <= 1, (t.id, name)
    # no slot is ever over-committed
    events = defaultdict(list)
    for a in sim.attempts:
        assert a.end_s is not None
        events[(a.vm.id, a.task.kind)] += [(a.start_s, 1), (a.end_s, -1)]
    vms = {v.id: v for v in sim.topo.vms}
    for (vid, kind), evs in events.items():
        cap = vms[vid].map_slots if kind == "map" else vms[vid].reduce_slots
        level = 0
        for _, d in sorted(evs):
            level += d
            assert 0 <= level <= cap, (name, vms[vid].name, kind)
    # billed up-time within the simulated time; evicted hosts counted once
    assert all(h.up_seconds <= now + 1e-6 for h in sim.topo.hosts)
    gone = {h.id for h in sim.topo.hosts if h.gone}
    assert sim.dynamics.hosts_evicted == len(gone)
    assert not any(
        e == "repaired" and h.id in gone and t > sim.dynamics.evict_at[h.id] for t, e, h in log
    )
    m = mrgym.metrics.episode_metrics(sim)
    assert m["jobs_completed"] + m["jobs_failed"] == m["jobs_submitted"] == len(sim.jobs)


def test_a_cluster_whose_every_host_is_evicted_ends_truncated_at_once():
    # every host is a spot host: once all are evicted nothing can ever run again, so the
    # run ends there (truncated) instead of idling to a distant time cap
    over = {
        "cluster.hosts.0.pool": "spot",
        "cluster.hosts.1.pool": "spot",
        "cluster.hosts.1.datanode": True,
        "dynamics.spot.hazard_per_hour": 20,
        "run.max_sim_time_s": 1e7,
    }
    sim = build_simulation(load_scenario("lee-cloud", over), "fifo", 0)
    sim.run()
    assert all(h.gone for h in sim.topo.hosts)
    assert sim.truncated and sim.env.now == pytest.approx(max(sim.dynamics.evict_at.values()))
    m = mrgym.metrics.episode_metrics(sim)
    assert m["truncated"] and m["jobs_completed"] < m["jobs_submitted"]
