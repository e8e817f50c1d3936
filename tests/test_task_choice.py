"""Which pending map a slot gets once the job is chosen (execution.task_choice, issue 9)."""

from __future__ import annotations

import mrgym
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.jobs import PENDING


def _sim(choice: str, found):
    """ila72 under Fair, serving heartbeats until ``found(sim)`` gives something, stopped
    at the next heartbeat; (sim, what found gave). Hadoop's heartbeat defaults (3 s, no
    out-of-band beats) serve ila72's first job, a one-map KMeans, alone for 14 s, so the
    cases below come some heartbeats in."""
    sc = mrgym.load_scenario("ila72", {"execution.task_choice": choice})
    sim = build_simulation(sc, "fair", 0)
    for _ in range(5000):
        vm = sim.advance()
        assert vm is not None
        hit = found(sim)
        if hit is not None:
            return sim, hit
        sim.beats.serve(vm, sim.scheduler.decide)
    raise AssertionError(f"no such case on ila72 seed 0 under {choice}")


def _case(sim):
    """A (job, VM) where the job has no node-local map but a server-local one that is not
    the first pending map of the rack list; None when there is none."""
    for job in sim.view.jobs:
        if not job.n_pending_maps:
            continue
        for vm in sim.topo.workers:
            pend = [t for t in job.maps if t.state == PENDING and t.block is not None]
            levels = [sim.hdfs.locality(t.block, vm) for t in pend]
            if NODE in levels or SERVER not in levels:
                continue
            first = job.pending_by_rack[vm.host.rack.id][-1]
            if sim.hdfs.locality(first.block, vm) == RACK:
                return job, vm
    return None


def _node_local(sim):
    """A (job, VM) where the job has a pending map with a replica on the VM; None if none."""
    for job in sim.view.jobs:
        if not job.n_pending_maps:
            continue
        vm = next((v for v in sim.topo.workers if job.pending_by_vm.get(v.id)), None)
        if vm is not None:
            return job, vm
    return None


def test_hadoop_takes_the_first_rack_local_map_and_nodegroup_the_co_hosted_one():
    sim, (job, vm) = _sim("hadoop", _case)
    task, level = sim.view.best_map(job, vm)
    assert level == RACK and task is job.pending_by_rack[vm.host.rack.id][-1]
    assert sim.view.best_map(job, vm, pick=False)[1] == RACK  # the observation sees that level

    sim, (job, vm) = _sim("nodegroup", _case)
    task, level = sim.view.best_map(job, vm)
    assert level == SERVER and any(r.host is vm.host for r in task.block.replicas)


def test_a_node_local_map_comes_first_under_every_choice():
    for choice in ("hadoop", "nodegroup", "lookahead"):
        sim, (job, vm) = _sim(choice, _node_local)
        task, level = sim.view.best_map(job, vm)
        assert level == NODE and vm in task.block.replicas, choice


def test_server_awareness_raises_server_locality_on_ila72():
    loc = {
        c: run_sim(mrgym.load_scenario("ila72", {"execution.task_choice": c}), "fair", 0).metrics[
            "map_locality"
        ]
        for c in ("hadoop", "nodegroup")
    }
    assert loc["nodegroup"]["server"] > loc["hadoop"]["server"] + 0.02
    for c in loc:
        assert 0.0 <= loc[c]["off_rack"] < 1.0 and abs(sum(loc[c].values()) - 1.0) < 1e-9
    assert OFF_RACK == 3
