"""Control actions at their edges: a live migration whose host dies mid-way, a Commission
that calls off a drain, and bad host indices (mrgym/sim/migration.py, dynamics.py)."""

from __future__ import annotations

import pytest
from helpers import Script, cluster, scenario

from mrgym.runner import build_simulation
from mrgym.sim.scheduler import Commission, Decommission, Migrate
from mrgym.sim.tracker import InvalidDecision


def _two_hosts(maps: int = 2, **host) -> dict:
    hosts = [
        {
            "count": 2,
            "type": "generic-4core",
            "vms_per_host": 1,
            "vm": {"vcpus": 2, "map_slots": 1, "reduce_slots": 0},
            **host,
        }
    ]
    return scenario(
        cluster(hosts), [{"profile": "piest", "maps": maps, "reduces": 0, "input_mb": 3000}]
    )


def _migrate_first(moved: list, downtime_s: float):
    """Control: migrate the first VM seen running to the other host (once; into ``moved``)."""

    def act(view):
        if moved:
            return []
        vm = next((v for v in view.topology.workers if v.running), None)
        if vm is None:
            return []
        moved.append(vm)
        return [Migrate(vm.id, 1 - vm.host.id, downtime_s=downtime_s)]

    return act


def test_a_vm_whose_host_fails_during_the_downtime_restarts_unpaused():
    moved: list = []
    sim = build_simulation(_two_hosts(), Script(_migrate_first(moved, 200.0)), 0)
    dyn = sim.dynamics

    def chaos():
        yield sim.env.timeout(60.0)  # pre-copy (2 GB at 125 MB/s) is over: in the downtime
        vm = moved[0]
        assert vm.paused
        dyn.lose_host(vm.host, "failed")
        yield sim.env.timeout(300.0)
        dyn.repair(vm.host)

    sim.env.process(chaos())
    sim.run()
    vm = moved[0]
    assert not vm.paused and vm.alive and vm.cpu_cap is None
    assert all(t.state == 2 for j in sim.jobs for t in j.maps)  # every map done
    assert any(a.vm is vm and a.outcome == "success" and a.start_s > 360 for a in sim.attempts)


def test_a_copy_to_a_dying_target_is_cancelled():
    moved: list = []
    sim = build_simulation(_two_hosts(maps=1), Script(_migrate_first(moved, 1.0)), 0)

    def chaos():
        yield sim.env.timeout(7.0)  # mid pre-copy
        vm = moved[0]
        target = sim.topo.hosts[1 - vm.host.id]
        sim.dynamics.lose_host(target, "failed")
        yield sim.env.timeout(6.0)
        assert not target.nic_down.flows  # the copy no longer holds the link
        assert not vm.paused and vm.id not in sim.dynamics._migrating

    sim.env.process(chaos())
    sim.run()
    assert moved[0].host.id == 0 or moved[0].host.id == 1
    assert sim.attempts[0].outcome == "success"


def test_commission_calls_off_a_drain():
    calls = []

    def act(view):
        calls.append(view.now)
        if len(calls) == 1:
            return [Decommission(1, drain=True)]
        if len(calls) == 2:
            return [Commission(1)]
        return []

    sc = _two_hosts(maps=8, datanode=False)
    sc["cluster"]["hosts"] = [
        {**sc["cluster"]["hosts"][0], "count": 1, "datanode": True},
        {**sc["cluster"]["hosts"][0], "count": 1},
    ]
    sim = build_simulation(sc, Script(act), 0)
    sim.run()
    host = sim.topo.hosts[1]
    assert host.id not in sim.dynamics.off and not host.evicting and host.alive
    assert sim.dynamics.hosts_decommissioned == 0
    assert any(a.vm.host is host and a.start_s > calls[1] for a in sim.attempts)


@pytest.mark.parametrize("action", [Commission(-1), Decommission(99)])
def test_bad_host_indices_are_refused(action):
    sim = build_simulation(_two_hosts(maps=1), "fifo", 0)
    with pytest.raises(InvalidDecision, match="host must be an index in 0..1"):
        sim.dynamics.apply_control(action)
