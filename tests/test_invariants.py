"""Invariants of the simulator under both reference schedulers, several seeds and
scenarios, with failures and spot evictions."""

from __future__ import annotations

from collections import defaultdict

import pytest
from helpers import ILA72_SMALL

import mrgym
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.hdfs import Hdfs

# ila72 at 300 maps (ILA72_SMALL): the invariants hold at any size
CASES = [
    ("ila72", dict(ILA72_SMALL)),
    ("hybrid48", {}),
    ("lsap-snapshot", {}),
    ("lee-gpu", {}),
    # node failures: every host fails about twice an hour and is repaired in 5 minutes
    ("ila72", {**ILA72_SMALL, "dynamics.failures": {"mtbf_hours": 0.5, "repair_s": 300}}),
    # spot hosts evicted at 20 per hour (3-minute mean life) without notice
    (
        "lee-cloud",
        {
            "dynamics.spot.hazard_per_hour": 20.0,
            "dynamics.spot.notice_s": 0,
            "workload.jobs.0.repeat": 1,
            "workload.jobs.1.repeat": 1,
            "workload.jobs.2.repeat": 1,
            "workload.jobs.3.repeat": 1,
        },
    ),
]


def _disk_mb(sim, task) -> float:
    """The MB a map's block holds on disk: its records / the profile's ratio with
    compressed input on (lee-cloud's gridmix2 SequenceFiles, ~4x), the records otherwise."""
    if sim.params.compressed_input:
        return task.block.size_mb / task.job.profile.input_compression
    return task.block.size_mb


def _by_kind_mismatches(sim) -> list:
    """Active jobs whose per-kind running tasks (``job.running_of``, what the speculation
    checks scan) are not their running tasks of that kind in launch order."""
    return [
        (sim.env.now, job.id, kind)
        for job in sim.tracker.active_list
        for kind, running in job.running_of.items()
        if list(running) != [t for t in job.running_set if t.kind == kind]
    ]


def _run(name, over, sched, seed):
    sc = mrgym.load_scenario(name, over)
    sim = build_simulation(sc, sched, seed)
    times = []
    bad: list = []
    step = sim.env.step

    def recording_step():
        step()
        times.append(sim.env.now)
        if len(times) % 25 == 0:
            bad.extend(_by_kind_mismatches(sim))

    sim.env.step = recording_step
    sim.run()
    return sim, times, bad


def _case_id(name: str, over: dict) -> str:
    return name + ("-dyn" if any(k.startswith("dynamics") for k in over) else "")


@pytest.mark.parametrize("name,over", CASES, ids=[_case_id(*c) for c in CASES])
@pytest.mark.parametrize("sched", ["fifo", "dl-sched"])
@pytest.mark.parametrize("seed", [0, 1])
def test_invariants(name, over, sched, seed):
    sim, times, by_kind_bad = _run(name, over, sched, seed)
    # time never goes back
    assert all(b >= a for a, b in zip(times, times[1:]))
    # the per-kind running sets follow the running set (failures and evictions included)
    assert not by_kind_bad, by_kind_bad[:5]
    # no job is lost: every submitted job completes
    assert all(j.finish_s is not None for j in sim.jobs), [
        j.name for j in sim.jobs if j.finish_s is None
    ]
    for job in sim.jobs:
        for t in job.maps + job.reduces:
            ok = [a for a in t.attempts if a.outcome == "success"]
            # every task completes exactly once; re-executions are extra attempts
            assert len(ok) == 1, (t.id, [a.outcome for a in t.attempts])
            for a in t.attempts:
                assert a.end_s is not None and job.arrived_s <= a.start_s <= a.end_s <= job.finish_s
            if t.kind == "map" and t.block is not None:
                a = ok[0]
                # every byte read was a replica of the block, at the level recorded
                assert a.src is not None and a.src.datanode
                assert a.read_mb == pytest.approx(_disk_mb(sim, t))
                assert Hdfs.locality(type(t.block)(0, 0, 0, [a.src]), a.vm) >= a.locality
    # no slot is ever over-committed
    events = defaultdict(list)
    for a in sim.attempts:
        events[(a.vm.id, a.task.kind)].append((a.start_s, 1))
        events[(a.vm.id, a.task.kind)].append((a.end_s, -1))
    vms = {v.id: v for v in sim.topo.vms}
    for (vm_id, kind), evs in events.items():
        cap = vms[vm_id].map_slots if kind == "map" else vms[vm_id].reduce_slots
        level = 0
        for _, d in sorted(evs, key=lambda e: (e[0], e[1])):
            level += d
            assert 0 <= level <= cap, (vms[vm_id].name, kind)
    if over.get("dynamics.failures") or over.get("dynamics.spot.hazard_per_hour"):
        assert sim.dynamics.host_failures + sim.dynamics.hosts_evicted > 0
        assert sim.tracker.n_reexecuted > 0


def test_evicted_spot_host_tasks_rerun_and_job_completes():
    # no notice, so evictions catch running tasks
    sc = mrgym.load_scenario(
        "lee-cloud", {"dynamics.spot.hazard_per_hour": 20.0, "dynamics.spot.notice_s": 0}
    )
    r = run_sim(sc, "dl-sched", 0)
    evicted = [a for a in r.task_log if a.outcome == "evicted"]
    assert evicted, "no task was running on an evicted spot host"
    assert r.metrics["tasks_reexecuted"] >= len(evicted)
    assert r.metrics["jobs_completed"] == r.metrics["jobs_submitted"]
    for a in evicted:  # the same task later succeeded elsewhere
        assert any(
            b.outcome == "success"
            and b.job == a.job
            and b.task == a.task
            and b.kind == a.kind
            and b.start >= a.end
            for b in r.task_log
        )


def test_spot_notice_stops_new_tasks():
    sc = mrgym.load_scenario("lee-cloud", {"dynamics.spot.hazard_per_hour": 6.0})
    sim = build_simulation(sc, "dl-sched", 3)
    sim.run()
    notice = sc.dynamics.spot.notice_s
    for hid, t in sim.dynamics.evict_at.items():
        host = sim.topo.hosts[hid]
        if t >= sim.env.now:
            continue
        late = [a for a in sim.attempts if a.vm.host is host and t - notice < a.start_s <= t]
        assert not late, f"{host.name} got tasks after its eviction notice"
