"""Guest page caches, HybridMR's memory balancer and compressed input (issue 34's memory
part): mrgym/sim/writeback.py, baselines/hybridmr_phase2.py, mrgym/sim/attempts.py."""

from __future__ import annotations

import pytest

import mrgym
from mrgym import registry
from mrgym.reproduce.claims import probe_memory
from mrgym.runner import build_simulation
from mrgym.sim.jobs import PROFILES
from mrgym.sim.params import ModelParams

# one Xen server with two 2 GB worker VMs and nothing much to run
TWO_VMS = {
    "name": "two-vms",
    "cluster": {
        "racks": 1,
        "hosts": [
            {
                "count": 1,
                "type": "xen-12core",
                "vms_per_host": 2,
                "vm": {"vcpus": 2, "memory_gb": 2, "map_slots": 1, "reduce_slots": 0},
            }
        ],
    },
    "hdfs": {"replication": 1},
    "workload": {"kind": "jobs", "jobs": [{"profile": "grep", "maps": 1, "reduces": 0}]},
}


def _sim(guest: bool):
    return build_simulation({**TWO_VMS, "execution": {"guest_page_cache": guest}}, "fifo", 0)


def test_off_one_cache_per_host_pools_both_vms_memory():
    sim = _sim(False)
    host = sim.topo.hosts[0]
    cache = sim.caches[host.id]
    vm0 = host.vms[0]
    assert cache.guests is None and cache.budget_mb == pytest.approx(0.2 * 2 * 2048)
    assert cache.take(400.0, 0.0, vm0) is cache
    assert cache.take(400.0, 0.0, vm0) is cache  # 800 MB: the neighbour's memory took it
    assert cache.take(100.0, 0.0, vm0) is None


def test_a_guest_cache_absorbs_up_to_its_own_budget_not_its_neighbours():
    sim = _sim(True)
    host = sim.topo.hosts[0]
    vm0, vm1 = host.vms
    host_cache = sim.caches[host.id]
    c0 = host_cache.take(400.0, 0.0, vm0)
    assert c0 is not None and c0.vm is vm0
    assert c0.budget_mb == pytest.approx(0.2 * 2048)  # 409.6 MB: one guest's 20 %
    assert host_cache.take(100.0, 0.0, vm0) is None  # 500 > 409.6: throttled to the disk
    assert c0.throttled_mb == 100.0
    c1 = host_cache.take(400.0, 0.0, vm1)  # the neighbour still has its own room
    assert c1 is not None and c1.vm is vm1
    # both flushers write back to the one disk
    assert len(host.disk.flows) == 2 and c0.dirty_mb(0.0) == pytest.approx(400.0)
    # a write from another host's VM goes through the first DataNode guest here
    assert host_cache.guest(None) is c0


def test_heaps_and_the_balloon_shrink_a_guest_cache():
    sim = _sim(True)
    vm0 = sim.topo.hosts[0].vms[0]
    c0 = sim.caches[0].guests[vm0.id]
    vm0.running[object()] = None  # one running task: its 200 MB JVM heap
    assert c0.budget_mb == pytest.approx(0.2 * (2048 - 200))
    vm0.balloon_gb = 1.0  # the balloon driver holds 1 GB
    assert c0.budget_mb == pytest.approx(0.2 * (1024 - 200))
    vm0.balloon_gb = -1.0  # granted 1 GB more
    assert c0.budget_mb == pytest.approx(0.2 * (3072 - 200))


def test_a_failed_host_drops_its_guests_dirty_pages():
    sim = _sim(True)
    host = sim.topo.hosts[0]
    c0 = sim.caches[host.id].take(300.0, 0.0, host.vms[0])
    sim.dynamics.lose_host(host, "failed")
    assert c0.dirty_mb(0.0) == 0.0 and not host.disk.flows


def test_monitoring_shows_a_guests_dirty_pages_only_when_modelled():
    for guest, want in ((False, (0.0, 0.0)), (True, (300.0, 409.6))):
        sim = _sim(guest)
        vm0 = sim.topo.hosts[0].vms[0]
        sim.caches[0].take(300.0, 0.0, vm0)
        m = sim.view.vm_metrics(vm0)
        assert (m.dirty_mb, m.dirty_limit_mb) == pytest.approx(want)


def _sort_on_virtual_cluster(guest: bool):
    from mrgym.reproduce.claims.hybridmr import virtual_only

    over = virtual_only([{"name": "sort", "profile": "sort", "maps": 160}])
    over["execution.guest_page_cache"] = guest
    sched = registry.make("hybridmr", phase1=False, manage="cpu+io+mem")
    sim = build_simulation(mrgym.load_scenario("hybrid48", over), sched, 0)
    sim.run()
    return sim, sched.phase2


def test_hybridmr_balloons_memory_to_throttled_guests_only_with_guest_memory():
    sim, p2 = _sort_on_virtual_cluster(True)
    assert p2.n_balloons > 0
    for h in sim.topo.hosts:  # a balloon moves memory between a host's VMs: total kept
        assert sum(v.balloon_gb for v in h.vms) == pytest.approx(0.0)
        for v in h.vms:  # never below mem_floor of its memory
            assert v.balloon_gb <= 0.5 * v.memory_gb + 1e-9
    # the takers are the DataNode VMs (every HDFS replica goes through their cache)
    takers = {v.name.split(".")[1] for v in sim.topo.vms if v.balloon_gb < 0}
    assert takers == {"dn"}
    _, off = _sort_on_virtual_cluster(False)
    assert off.n_balloons == 0 and not off.balloons


def _scan(compressed: bool):
    sc = mrgym.load_scenario(
        probe_memory._M1,
        {
            "workload": {"kind": "jobs", "jobs": [{"profile": "webdatascan", "maps": 4}]},
            "execution.compressed_input": compressed,
        },
    )
    sim = build_simulation(sc, "fifo", 0)
    sim.run()
    return [a for t in sim.jobs[0].maps for a in t.attempts if a.outcome == "success"]


def test_a_compressed_map_reads_fewer_disk_mb_and_takes_more_cpu():
    prof = PROFILES["webdatascan"]
    assert prof.input_compression == pytest.approx(4162.6 / 1040.65)
    off, on = _scan(False), _scan(True)
    assert [a.read_mb for a in off] == [64.0] * 4
    assert [a.read_mb for a in on] == pytest.approx([64.0 / prof.input_compression] * 4)
    # the same noise draws: the CPU grows by exactly the inflate cost per MB of records
    # (the child JVM's start-up, the same in both, aside)
    want = (prof.map_cpu_s_per_mb + prof.decompress_cpu_s_per_mb) / prof.map_cpu_s_per_mb
    jvm = ModelParams().task_jvm_start_s
    for a, b in zip(off, on, strict=True):
        assert (b.cpu_s - jvm) / (a.cpu_s - jvm) == pytest.approx(want)  # 0.025 / 0.015


def test_an_uncompressed_profile_is_unchanged_by_the_switch():
    def grep_map(on: bool):
        sim = build_simulation({**TWO_VMS, "execution": {"compressed_input": on}}, "fifo", 0)
        sim.run()
        (att,) = [a for t in sim.jobs[0].maps for a in t.attempts if a.outcome == "success"]
        return att.read_mb, att.cpu_s, att.end_s

    assert PROFILES["grep"].input_compression == 1.0
    assert grep_map(True) == grep_map(False) and grep_map(False)[0] == 128.0


@pytest.mark.parametrize("fn", [probe_memory.probe_guest_cache, probe_memory.probe_compressed])
def test_memory_probes_quick(fn, tmp_path):
    r = fn([0], tmp_path, quick=True)
    assert r.verdict == "reproduced", r.ours
    assert r.plot is not None and r.plot.is_file()


def test_hybridmr_memory_parameters_are_checked():
    from baselines.hybridmr_phase2 import Phase2

    with pytest.raises(ValueError, match="hybridmr mem_high: expected a number in"):
        Phase2(mem_high=0.0)
    with pytest.raises(ValueError, match="hybridmr mem_step_gb: expected a number > 0"):
        Phase2(mem_step_gb=0.0)


def test_a_native_worker_writes_through_its_hosts_cache():
    """lee-gpu's native workers (vm.memory_gb 2 GB, 10 slots) are no Xen guests: with
    guest_page_cache on they keep the host's cache (0.2 x 2 GB), not a guest's 2 GB less
    10 heaps of 200 MB, which left ~10 MB and made Sort's cc1 maps 1.5x its cg1 ones."""
    sim = build_simulation("lee-gpu", "fifo", 0)
    assert sim.params.guest_page_cache
    for c in sim.caches.values():
        assert c.guests is None and c.budget_mb == pytest.approx(0.2 * 2048.0)
        assert c.guest(c.host.vms[0]) is c
    xen = build_simulation("ila72", "fifo", 0)
    assert all(c.guests for c in xen.caches.values())
