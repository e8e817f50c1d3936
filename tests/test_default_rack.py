"""Hadoop without a topology script (``cluster.rack_aware: false``, the default of every
Hadoop version): every node is in /default-rack, so HDFS places replicas and the
JobTracker picks tasks as if the cluster were one rack, while the simulator still measures
locality on the real racks (ILA Table 1's off-rack maps need it)."""

from __future__ import annotations

import numpy as np

import mrgym
from mrgym.reproduce import probes
from mrgym.runner import build_simulation
from mrgym.sim.hdfs import OFF_RACK, RACK
from mrgym.sim.scheduler import DECLINE, MAP, Decision, DecisionContext, Scheduler, launch_map


def _sc(rack_aware: bool) -> dict:
    host = [{"count": 6, "type": "xen-12core", "vms_per_host": 4}]
    jobs = [{"profile": "terasort", "maps": 600, "reduces": 0}]
    c = probes.cluster(host, racks=2, rack_uplink_mbps=1000, rack_aware=rack_aware)
    return probes.scenario(c, jobs, replication=3)


def _racks_per_block(rack_aware: bool) -> np.ndarray:
    sim = build_simulation(_sc(rack_aware), "fifo", 0)
    (job,) = sim.view.all_jobs
    sim.materialize(job)
    return np.array([len({r.host.rack.id for r in t.block.replicas}) for t in job.maps])


def test_rack_aware_placement_spans_two_racks_and_default_rack_does_not_care():
    aware, blind = _racks_per_block(True), _racks_per_block(False)
    assert np.all(aware == 2)  # second replica on the other rack, third beside it
    # three random nodes of 24, 12 a rack: all in one rack with chance 2 C(12,3)/C(24,3)
    one_rack = np.mean(blind == 1)
    assert 0.12 < one_rack < 0.32


class _Recorder(Scheduler):
    """Launches each job's best map and records the level the task choice reported."""

    def __init__(self):
        self.levels = []

    def decide(self, ctx: DecisionContext) -> Decision:
        for job in ctx.jobs:
            if ctx.slot_kind == MAP and ctx.can_launch(job, MAP):
                task, level = ctx.best_map(job)
                self.levels.append(level)
                return launch_map(job.id, task.index)
        return DECLINE


def test_task_choice_sees_no_off_rack_but_metrics_do():
    # seed 1: 0.5 % of its maps read off-rack without a topology script (seed 0: none)
    for aware in (True, False):
        rec = _Recorder()
        r = mrgym.run_sim(_sc(aware), rec, 1)
        off = r.metrics["map_locality"]["off_rack"]
        if aware:  # a replica on each rack: never off-rack
            assert OFF_RACK not in rec.levels and off == 0.0
        else:  # off-rack reads happen, but Hadoop calls them rack-local
            assert OFF_RACK not in rec.levels and RACK in rec.levels
            assert off > 0.0


def test_a_reader_takes_the_first_remote_replica_not_the_nearest():
    """Without a topology script every remote replica is "rack-local" to Hadoop, so a
    reader with none on its own server takes the block's first one (pseudoSortByDistance
    keeps the order); with racks, the nearest (same rack before the other)."""
    seen = {True: 0, False: 0}
    for aware in (True, False):
        sim = build_simulation(_sc(aware), "fifo", 0)
        (job,) = sim.view.all_jobs
        sim.materialize(job)
        for t in job.maps:
            reps = t.block.replicas
            for vm in sim.topo.vms:
                if any(r.host is vm.host for r in reps):
                    continue
                got = sim.hdfs.nearest_replica(t.block, vm)
                near = [r for r in reps if r.host.rack is vm.host.rack]
                if aware:
                    assert got in near or not near
                else:
                    assert got is reps[0]
                seen[aware] += bool(near) and reps[0] not in near
    assert seen[False] > 100  # cases where the first replica is on the other rack
