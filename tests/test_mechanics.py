"""HDFS placement, monitoring, speculation, control hooks, interactive SLAs, metrics."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import cluster, scenario

import mrgym
from mrgym.metrics import episode_metrics, task_log
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.hdfs import LEVELS, NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.params import ALL_OFF
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    Pause,
    Resume,
    Scheduler,
    Throttle,
    launch_map,
    speculate,
)


def _placed(sim):
    """The simulation with every job's input blocks placed (a job's are placed when it
    arrives: Simulation.materialize)."""
    for job in sim.jobs:
        sim.materialize(job)
    assert sim.hdfs.blocks
    return sim


def test_hadoop_default_placement_rules():
    sim = _placed(build_simulation("ila72", "fifo", 0))
    for b in sim.hdfs.blocks:
        r = b.replicas
        assert len(r) == 3 and len({v.id for v in r}) == 3
        assert r[1].host.rack is not r[0].host.rack  # second replica on another rack
        assert r[2].host.rack is r[1].host.rack  # third on the second's rack


def test_random_placement_puts_each_blocks_replicas_on_distinct_nodes():
    # uniformity is a chi-square test in test_hdfs_placement.py
    sim = _placed(build_simulation("lsap-snapshot", "fifo", 0))
    blocks = [b for b in sim.hdfs.blocks]
    assert all(len({v.id for v in b.replicas}) == 5 for b in blocks)
    counts = np.bincount([v.id for b in blocks for v in b.replicas], minlength=100)
    assert counts.sum() == 5 * len(blocks)


def test_split_architecture_gives_server_not_node_locality():
    sim = build_simulation("hybrid48", "dl-sched", 0)
    sim.run()
    assert all(not v.datanode for v in sim.topo.workers)
    levels = {a.locality for a in sim.attempts if a.task.kind == "map" and a.locality is not None}
    assert NODE not in levels and SERVER in levels


def test_dataless_pools_hold_no_blocks():
    sim = _placed(build_simulation("lee-cloud", "fifo", 0))
    pools = {v.host.pool for b in sim.hdfs.blocks for v in b.replicas}
    assert pools == {"core"}


def test_monitoring_reports_cpu_and_io():
    seen = {}

    class Probe(Scheduler):
        name = "probe"
        control_period_s = 20.0

        def decide(self, ctx):
            for job in ctx.jobs:
                if ctx.slot_kind == MAP and ctx.can_launch(job, MAP):
                    return launch_map(job.id)
            return DECLINE

        def control(self, view):
            if "host" not in seen:
                host = view.topology.hosts[0]
                seen["host"] = view.host_metrics(host)
                seen["vms"] = [view.vm_metrics(v) for v in host.vms]
            return []

    jobs = [
        {"profile": "piest", "maps": 4, "reduces": 0, "input_mb": 4 * 5000},
        {"profile": "grep", "maps": 2, "reduces": 0, "input_mb": 2 * 20000},
    ]
    # issue 34's mechanisms off: Dom0's own cores and memory-bandwidth contention change
    # the numbers this test derives by hand (one core per map, 0.1 Dom0 core per stream)
    sc = scenario(
        cluster([{"count": 1, "type": "xen-12core", "vms_per_host": 4}]), jobs, params=ALL_OFF
    )
    run_sim(sc, Probe(), 0)
    host = seen["host"]
    assert host.vm_cpu_cores == pytest.approx(4.0, rel=0.05)  # four CPU-bound maps, one core each
    assert host.disk_streams == 2 and 0 < host.disk_util <= 1
    assert host.dom0_cpu_cores == pytest.approx(2 * 0.1)
    assert sum(v.read_mbps for v in seen["vms"]) == pytest.approx(host.io_mbps)


class Speculator(Scheduler):
    """Launches maps; once none are pending, backs up the slowest running one."""

    name = "speculator"
    speculates = True

    def decide(self, ctx):
        for job in ctx.jobs:
            if ctx.slot_kind == MAP and ctx.can_launch(job, MAP):
                return launch_map(job.id)
        for job in ctx.jobs:
            if ctx.slot_kind == MAP and ctx.view.speculation_target(job, MAP, ctx.vm) is not None:
                return speculate(job.id)
        return DECLINE


def test_speculative_copy_first_finisher_wins():
    slow = {"slow": {"cores": 4, "core_speed": 0.25, "disk_mbps": 100, "nic_gbps": 1.0}}
    hosts = [
        {"count": 1, "type": "slow", "native": True, "vm": {"map_slots": 1, "reduce_slots": 0}},
        {
            "count": 3,
            "type": "generic-4core",
            "native": True,
            "vm": {"map_slots": 1, "reduce_slots": 0},
        },
    ]
    sc = scenario(
        cluster(hosts, catalog=slow),
        [{"profile": "kmeans", "maps": 4, "reduces": 0}],
        replication=2,
    )
    sim = build_simulation(sc, Speculator(), 0)
    sim.run()
    spec = [a for a in sim.attempts if a.speculative]
    assert spec, "no backup copy was launched"
    for t in sim.jobs[0].maps:
        assert sum(a.outcome == "success" for a in t.attempts) == 1
    backed = {a.task for a in spec}
    for t in backed:
        outcomes = sorted(a.outcome for a in t.attempts)
        assert outcomes == ["killed", "success"]
    # the straggler on the slow host lost to its copy
    assert any(a.outcome == "killed" and a.vm.host.type.name == "slow" for a in sim.attempts)
    baseline = run_sim(sc, "fifo", 0).metrics["mean_jct_s"]
    assert sim.jobs[0].finish_s < baseline


class PauseFirstVm(Scheduler):
    name = "pauser"
    control_period_s = 10.0

    def __init__(self, action):
        self.action = action
        self.calls = 0

    def decide(self, ctx):
        for job in ctx.jobs:
            if ctx.slot_kind == MAP and ctx.can_launch(job, MAP):
                return launch_map(job.id)
        return DECLINE

    def control(self, view):
        self.calls += 1
        if self.calls == 1:
            return [self.action(0)]
        if self.calls == 4 and self.action is Pause:
            return [Resume(0)]
        return []


@pytest.mark.parametrize("action,extra", [(Pause, 30.0), (lambda vm: Throttle(vm, 0.5), None)])
def test_control_pause_and_throttle_slow_the_vm(action, extra):
    sc = scenario(
        cluster(
            [
                {
                    "count": 1,
                    "type": "generic-4core",
                    "native": True,
                    "vm": {"map_slots": 1, "reduce_slots": 0},
                }
            ]
        ),
        [{"profile": "piest", "maps": 1, "reduces": 0, "input_mb": 300}],
    )
    base = run_sim(sc, PauseFirstVm(lambda vm: Resume(vm)), 0).task_log[0]
    r = run_sim(sc, PauseFirstVm(action), 0).task_log[0]
    d0, d1 = base.end - base.start, r.end - r.start
    if extra is not None:  # paused from t=10 to t=40
        assert d1 == pytest.approx(d0 + extra, abs=0.5)
    else:  # half a core from t=10 on
        assert d1 == pytest.approx(10 + 2 * (d0 - 10), rel=0.02)


def test_interactive_sla_violated_only_under_batch_load():
    quiet = mrgym.load_scenario(
        "hybrid48",
        {
            "workload.n_jobs": 1,
            "workload.maps_median": 1,
            "workload.maps_sigma": 0,
            "cluster.hosts.1.interactive.period_s": 300,
        },
    )
    busy = mrgym.load_scenario(
        "hybrid48",
        {
            "workload.profiles": {"piest": 1},
            "workload.maps_median": 150,
            "workload.maps_sigma": 0,
            "workload.mean_interarrival_s": 5,
            "cluster.hosts.1.interactive.period_s": 300,
        },
    )
    assert run_sim(quiet, "fifo", 0).metrics["sla_violation_s"] == 0
    assert run_sim(busy, "fifo", 0).metrics["sla_violation_s"] > 0


def test_metrics_are_consistent():
    r = run_sim("ila72", "dl-sched", 0)
    m = r.metrics
    assert 0 < m["fairness_jain"] <= 1
    assert sum(m["map_locality"].values()) == pytest.approx(1.0)
    assert m["median_jct_s"] <= m["p95_jct_s"]
    ok = [a for a in r.task_log if a.outcome == "success"]
    assert m["tasks_completed"] == len(ok)
    # cost: 12 servers at $0.68/h over the episode
    assert m["cost_usd"] == pytest.approx(12 * 0.68 * m["sim_time_s"] / 3600, rel=1e-6)
    # energy between all-idle and all-busy power
    hours = m["sim_time_s"] / 3600
    assert 12 * 0.150 * hours < m["energy_kwh"] < 12 * 0.300 * hours
    assert 0 < m["slot_utilization"] <= 1 and 0 < m["cpu_utilization"] <= 1


@pytest.mark.parametrize("level", [NODE, SERVER, RACK, OFF_RACK])
def test_a_map_runs_at_the_locality_of_its_vm_to_its_block(level):
    """One map, one replica, 4 hosts x 2 VMs on 2 racks: launched on the VM that holds the
    replica, on the other VM of its host, on another host of its rack or on the other
    rack, the attempt, the task log and the metrics all report that level."""
    sc = scenario(
        cluster([{"count": 4, "type": "generic-4core", "vms_per_host": 2}], racks=2),
        [{"profile": "grep", "maps": 1, "reduces": 0}],
    )
    sim = build_simulation(sc, "fifo", 0)
    sim.materialize(sim.jobs[0])  # its block is placed when it arrives: place it now
    task = sim.jobs[0].maps[0]
    (replica,) = task.block.replicas
    at = {
        NODE: lambda v: v is replica,
        SERVER: lambda v: v is not replica and v.host is replica.host,
        RACK: lambda v: v.host is not replica.host and v.host.rack is replica.host.rack,
        OFF_RACK: lambda v: v.host.rack is not replica.host.rack,
    }[level]
    target = next(v for v in sim.view.topology.workers if at(v))
    assert sim.view.locality(task, target) == level
    launched = None
    while launched is None:  # decline every slot but the target's map slot
        vm = sim.advance()
        assert vm is not None
        beat = sim.open_heartbeat(vm)
        while (kind := beat.next_slot()) is not None:
            if vm is target and kind == MAP:
                launched = beat.answer(launch_map(0, task.index))
                break
            beat.answer(DECLINE)
    sim.run()  # to the end: nothing else to launch
    (a,) = sim.attempts
    assert a is launched and a.vm is target and a.locality == level
    (rec,) = task_log(sim)
    assert rec.outcome == "success" and rec.locality == LEVELS[level]
    assert episode_metrics(sim)["map_locality"][LEVELS[level]] == 1.0


def test_migrate_moves_a_running_vm():
    from mrgym.sim.scheduler import Migrate

    class Mover(PauseFirstVm):
        def control(self, view):
            self.calls += 1
            if self.calls != 1:
                return []
            vm = next(v for v in view.topology.workers if v.running)
            self.moved = (vm.id, 1 - vm.host.id)
            return [Migrate(vm.id, 1 - vm.host.id, downtime_s=2.0)]

    hosts = [
        {
            "count": 2,
            "type": "generic-4core",
            "vms_per_host": 1,
            "vm": {"vcpus": 2, "map_slots": 1, "reduce_slots": 0},
        }
    ]
    sc = scenario(cluster(hosts), [{"profile": "piest", "maps": 1, "reduces": 0, "input_mb": 300}])
    base = run_sim(sc, PauseFirstVm(lambda vm: Resume(vm)), 0).task_log[0]
    mover = Mover(Pause)
    sim = build_simulation(sc, mover, 0)
    sim.run()
    vm_id, host_id = mover.moved
    vm = sim.topo.vms[vm_id]
    assert vm.host is sim.topo.hosts[host_id] and vm in sim.topo.hosts[host_id].vms
    (a,) = sim.attempts
    assert a.outcome == "success"
    assert (a.end_s - a.start_s) == pytest.approx(base.end - base.start + 2.0, abs=0.5)


def test_slowdown_against_isolated_runs():
    from mrgym.metrics import slowdowns
    from mrgym.runner import isolated_jct

    # lee-gpu's Hadoop 0.18.3 heartbeats (3 s grid, no out-of-band beats), as every scenario
    # runs them: slowdowns 1.01 (Crypto) and 1.32 (Sort) at seed 0.  Out-of-band beats on
    # give Crypto 0.91 here, even with issue 34's mechanisms off (0.79): alone, its maps meet
    # the beats in another phase, which is no effect of sharing
    sc = mrgym.load_scenario("lee-gpu")
    alone = isolated_jct(sc, "fifo", 0)
    sim = build_simulation(sc, "fifo", 0)
    sim.run()
    sd = slowdowns(sim, alone)
    assert set(sd) == {0, 1}
    # two jobs sharing two nodes: neither is faster than alone, at least one is slower
    assert all(v >= 0.99 for v in sd.values()) and max(sd.values()) > 1.1
