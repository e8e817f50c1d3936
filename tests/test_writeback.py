"""The write-back page cache and the disk's two classes of flows (mrgym/sim/writeback.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mrgym
from mrgym.reproduce.ila_runs import alone_time
from mrgym.runner import build_simulation
from mrgym.sim.params import MECHANISMS_OFF
from mrgym.sim.topology import Link

# one Xen server with one 2 GB worker VM and nothing to run
ONE_HOST = {
    "name": "one-host",
    "cluster": {
        "racks": 1,
        "hosts": [
            {
                "count": 1,
                "type": "xen-12core",
                "vms_per_host": 1,
                "vm": {"vcpus": 2, "memory_gb": 2, "map_slots": 1, "reduce_slots": 0},
            }
        ],
    },
    "hdfs": {"replication": 1},
    "workload": {"kind": "jobs", "jobs": [{"profile": "grep", "maps": 1, "reduces": 0}]},
    # Dom0 off: its link would bound the flusher below the disk (its cap is tested in
    # test_cpu_mechanisms), and these tests time the flusher at the disk's pace
    "execution": dict(MECHANISMS_OFF["dom0"]),
}


def _disk(n_reads: int, n_writes: int) -> Link:
    disk = Link("disk", 100.0, thrash=0.15, floor=0.2, host=object())
    for i in range(n_reads + n_writes):
        disk.flows[i] = None
    disk.n_writes = n_writes
    return disk


def test_writes_count_as_one_stream_and_split_its_share():
    thrash = lambda k: 0.2 + 0.8 * math.exp(-0.15 * (k - 1))  # noqa: E731
    read, write = _disk(1, 4).shares()
    assert read == pytest.approx(100 * thrash(2) / 2)  # the read and one write stream
    assert write == pytest.approx(read / 4)
    five_reads, _ = _disk(5, 0).shares()
    assert five_reads == pytest.approx(100 * thrash(5) / 5)
    assert read > 2 * five_reads  # writers no longer make every read seek against them
    # a network link shares fairly whatever the flows are for
    nic = Link("nic", 125.0)
    nic.flows.update({1: None, 2: None})
    nic.n_writes = 1
    assert nic.shares() == (62.5, 62.5)


def test_the_cache_absorbs_up_to_dirty_ratio_of_memory_then_throttles():
    sim = build_simulation(ONE_HOST, "fifo", 0)
    host = sim.topo.hosts[0]
    cache = sim.caches[host.id]
    assert cache.budget_mb == pytest.approx(0.2 * 2048)  # dirty_ratio x the VM's 2 GB
    assert cache.absorb(300.0, 0.0)
    assert cache.flusher is not None and host.disk.flows == {cache.flusher: None}
    assert cache.dirty_mb(0.0) == pytest.approx(300.0)
    assert not cache.absorb(200.0, 0.0)  # 500 MB > 409.6 MB: the writer goes to the disk
    assert cache.absorb(100.0, 0.0)  # 400 MB fits: the flusher takes 100 MB more
    disk_mbps = host.type.disk_mbps
    sim.env.run(until=1.0)
    assert cache.dirty_mb(1.0) == pytest.approx(400.0 - disk_mbps)  # one sequential stream
    sim.env.run(until=400.0 / disk_mbps + 1e-6)
    assert cache.dirty_mb(sim.env.now) == 0.0 and not host.disk.flows
    assert cache.absorb(400.0, sim.env.now)  # drained: room again


def test_a_failed_host_loses_its_dirty_pages():
    sim = build_simulation(ONE_HOST, "fifo", 0)
    host = sim.topo.hosts[0]
    cache = sim.caches[host.id]
    assert cache.absorb(300.0, 0.0)
    sim.dynamics.lose_host(host, "failed")
    assert cache.dirty_mb(0.0) == 0.0 and not host.disk.flows
    assert not cache.absorb(10.0, 0.0)  # a down host takes no writes


def test_no_cache_sends_every_write_to_the_disk():
    sim = build_simulation(
        {**ONE_HOST, "execution": {"dirty_ratio": 0.0}},
        "fifo",
        0,
    )
    assert not sim.caches[sim.topo.hosts[0].id].absorb(1.0, 0.0)


# the seeds pooled: one seed's tail is luck (which maps land on the slow VMs).  Per seed
# 0-7 the share of cached maps > 10x is 0.18, 0.12, 0.05, 0.11, 0.10, 0.31, 0.04, 0.08 and
# the four criteria below hold on 4 of 8 seeds (1, 2, 3, 6; before the refit of the
# parameters on the keyed streams on 0, 1, 3, 6), so one seed passed or failed by luck
SEEDS = range(4)


def _io_slowdowns(dirty_ratio: float) -> np.ndarray:
    # Dom0 on its own core (issue 34) off: with it, Dom0's CPU bounds every write, cached or
    # not, and shrinks the page cache's effect this test measures (cached / uncached > 2x:
    # 0.759 / 0.897 with it, 0.655 / 0.889 without; medians 3.23 / 3.54 and 2.84 / 3.55;
    # seeds 0-3 pooled)
    dom0_off = {f"execution.{k}": v for k, v in MECHANISMS_OFF["dom0"].items()}
    sc = mrgym.load_scenario("ila72", {"execution.dirty_ratio": dirty_ratio, **dom0_off})
    return np.concatenate([_io_slowdowns_of(build_simulation(sc, "fair", s)) for s in SEEDS])


def _io_slowdowns_of(sim) -> np.ndarray:
    sim.run()
    return np.array(
        [
            (a.end_s - a.start_s) / alone_time(sim, a)
            for a in sim.attempts
            if a.task.kind == "map"
            and a.outcome == "success"
            and a.task.job.profile.io_bound
            and a.task.block is not None
        ]
    )


def test_io_bound_maps_are_slowed_as_ila_fig8_says_not_crushed():
    """Issue 9's diagnosis: with every write a seeking stream of its own (each 3-replica
    pipeline write on three disks), I/O-bound maps ran a median ~30x slower than alone on
    ila72 under Fair and 88 % of them more than 10x.  With writes merged into one stream
    per disk they are a few times slower (ILA Fig. 8: up to 60 % of tasks > 2x, 10 % >
    10x), and the page cache takes a further share of the >2x ones off.  Measured (seeds
    0-3 pooled, cached / uncached, with the seek thrash fitted on ILA Fig. 8 in issue
    "Fidelity III"): median 4.26 / 4.37, > 10x 0.257 / 0.211, > 2x 0.803 / 0.920 (I/O-bound
    maps only; with the other maps and Dom0 on, Fig. 8's 10 % > 10x holds, the report)."""
    cached, uncached = _io_slowdowns(0.2), _io_slowdowns(0.0)
    assert 1.5 < np.median(cached) < 5.0
    assert np.mean(cached > 10) < 0.3
    assert np.mean(cached > 2) < np.mean(uncached > 2) - 0.1
    assert np.median(cached) < np.median(uncached)


def test_every_flow_runs_at_its_class_share_after_each_re_rating(monkeypatch):
    """The incremental re-rating of _refresh_links equals a brute-force recomputation:
    each active flow's base is the min over its links of its class's share (read or
    write), and no disk serves more than its thrashed capacity."""
    from mrgym.sim.execution import WRITE_TAGS, FluidEngine

    orig = FluidEngine._refresh_links
    seen: dict = {}
    bad = []

    def checked(self, links, now, new=None):
        orig(self, links, now, new)
        for link in links:
            seen[id(link)] = link
        for link in seen.values():
            total = 0.0
            for f in link.flows:
                total += f.rate_now()
                want = min((lk.cur_w if f.tag in WRITE_TAGS else lk.cur) for lk in f.links)
                base = f.clk.rate  # the share of the clock the flow is bound to
                if abs(base - want) > 1e-9 * max(1.0, want):
                    bad.append((now, link.name, f.tag, base, want))
            if link.host is not None and link.flows:
                k = len(link.flows) - link.n_writes + (1 if link.n_writes else 0)
                cap = link.capacity * (
                    link.floor + (1 - link.floor) * math.exp(-link.thrash * (k - 1))
                    if link.thrash and k > 1
                    else 1.0
                )
                if total > cap * (1 + 1e-9):
                    bad.append((now, link.name, "over capacity", total, cap))

    monkeypatch.setattr(FluidEngine, "_refresh_links", checked)
    mrgym.run_sim("lee-gpu", "fair", 0)
    assert len(seen) > 3 and not bad, bad[:5]


def test_the_flusher_finishes_when_its_data_is_written_after_a_late_extend():
    sim = build_simulation(ONE_HOST, "fifo", 0)
    host = sim.topo.hosts[0]
    cache, mbps = sim.caches[host.id], host.type.disk_mbps
    assert cache.absorb(100.0, 0.0)
    sim.env.run(until=0.5)
    assert cache.absorb(100.0, 0.5)  # 150 MB left at 0.5 s: done at 0.5 + 150 / mbps
    sim.env.run(until=0.5 + 150.0 / mbps - 1e-6)
    assert cache.dirty_mb(sim.env.now) > 0
    sim.env.run(until=0.5 + 150.0 / mbps + 1e-6)
    assert cache.dirty_mb(sim.env.now) == 0.0 and not host.disk.flows


TWO_HOSTS = {
    "name": "two-hosts",
    "cluster": {
        "racks": 1,
        "hosts": [
            {
                "count": 2,
                "type": "xen-12core",
                "vms_per_host": 1,
                "vm": {"vcpus": 2, "memory_gb": 2, "map_slots": 1, "reduce_slots": 0},
            }
        ],
    },
    "hdfs": {"replication": 2},
    "workload": {
        "kind": "jobs",
        "jobs": [{"profile": "teragen", "maps": 1, "reduces": 0, "input_mb": 128}],
    },
}


def test_a_killed_writer_leaves_only_what_it_sent_in_the_page_caches():
    sim = build_simulation(TWO_HOSTS, "fifo", 0)
    env = sim.env
    seen = {}

    def killer():
        while True:  # wait for the map's HDFS write (its phase 2)
            yield env.timeout(0.01)
            atts = [a for a in sim.attempts if a.phase == 2 and a.outcome == "running"]
            if atts:
                break
        att = atts[0]
        w = att.work
        sent = w.total - w.remaining_at(env.now)
        # each host's cache that took the replica: the host's own, or (guest_page_cache, the
        # default) its one DataNode guest's
        caches = [sim.caches[h.id].guest(None) for h in sim.topo.hosts]
        before = [c.dirty_mb(env.now) for c in caches]
        sim.tracker.kill(att, "killed", requeue=False)
        seen.update(sent=sent, before=before)
        seen["after"] = [c.dirty_mb(env.now) for c in caches]

    env.process(killer())
    sim.run()
    assert seen, "the writer was never seen writing"
    assert 0 < seen["sent"] < 128
    for before, after in zip(seen["before"], seen["after"]):
        # each cache had taken the whole block; it keeps what arrived before the kill
        assert after == pytest.approx(max(0.0, before - (128 - seen["sent"])), abs=1e-6)
        assert after < before


def test_without_a_cache_writes_keep_their_disks():
    sim = build_simulation({**TWO_HOSTS, "execution": {"dirty_ratio": 0.0}}, "fifo", 0)
    disks = []

    def watch():
        while True:
            yield sim.env.timeout(0.01)
            for a in sim.attempts:
                if a.phase == 2 and a.outcome == "running":
                    disks.append(sum(lk is lk.host.disk for lk in a.work.links if lk.host))
                    return

    sim.env.process(watch())
    sim.run()
    assert disks == [2]  # both replicas' disks are on the writer's path
