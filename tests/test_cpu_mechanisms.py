"""The CPU-side mechanisms of cpu.py: contention below the cores (membw), Dom0 as its own
pool and the credit scheduler's coupling of I/O to CPU; each on by default at its fitted
value, params.MECHANISMS_OFF turns it off."""

from __future__ import annotations

import math

import pytest
import simpy
from helpers import StubHost, StubType, StubVM

from mrgym.config import ScenarioError, load_scenario
from mrgym.reproduce.claims.probe_cpu import CREDIT_ON, DOM0_ON, MEMBW_ON, _probe_time
from mrgym.sim.cpu import PROPOSED, U_MAX, CpuPool
from mrgym.sim.execution import FluidEngine
from mrgym.sim.jobs import PROFILES, get_profile
from mrgym.sim.params import ALL_OFF, MECHANISMS_OFF, ModelParams


def _kmeans_beside_matrix(k: int, execution: dict) -> float:
    """A KMeans map's time beside k Matrix maps (computing) on a 10-core Xen host."""
    return _probe_time("kmeans", "matrix", k, execution, 0, bg_mb=512.0, submit_s=100.0)


def test_membw_slows_a_cpu_bound_map_before_the_cores_are_full():
    alone = _kmeans_beside_matrix(0, MEMBW_ON)
    assert alone == _kmeans_beside_matrix(0, {})  # a phase alone is never slowed
    # 3 co-runners: 4 of 10 cores busy
    off = _kmeans_beside_matrix(3, {}) / alone
    on = _kmeans_beside_matrix(3, MEMBW_ON) / alone
    assert off < 1.02  # only corunner_penalty
    assert on > 1.15


def test_membw_slowdown_grows_super_linearly():
    alone = _kmeans_beside_matrix(0, MEMBW_ON)
    s = [_kmeans_beside_matrix(k, MEMBW_ON) / alone - 1.0 for k in (2, 4, 6)]
    assert s[1] > 2.0 * s[0] and s[2] - s[1] > s[1] - s[0]


def test_membw_keeps_ila_fig1_flat_below_the_cores():
    """PiEst (pressure 0.05) beside a KMeans probe: < 10 % below the cores, as ILA Fig. 1."""
    kw = {"bg_mb": 20000.0}
    alone = _probe_time("kmeans", "piest", 0, MEMBW_ON, 0, **kw)
    assert _probe_time("kmeans", "piest", 7, MEMBW_ON, 0, **kw) / alone < 1.10


def _pool(params: ModelParams, cores: float = 4.0, virtualized: bool = False):
    env = simpy.Environment()
    eng = FluidEngine(env, params)
    host = StubHost(type=StubType(cores=cores, core_speed=1.0), virtualized=virtualized)
    host.cpu = CpuPool(host, eng, params)
    return env, eng, host, [StubVM(i, host) for i in range(3)]


def test_membw_retimes_a_phase_when_its_co_runner_leaves():
    """Victim (sens 0.6) 10 core-s beside a hog (pressure 0.7) of 2 core-s: analytic end."""
    alpha, cap, cores = 1.0, 0.5, 4.0
    params = ModelParams(corunner_penalty=0.0, membw_alpha=alpha, membw_capacity=cap)
    env, eng, host, vms = _pool(params, cores)
    victim = get_profile("kmeans").with_(mem_pressure=0.0, mem_sensitivity=0.6)
    hog = get_profile("matrix").with_(mem_pressure=0.7, mem_sensitivity=0.0)
    wv = eng.compute(vms[0], 10.0, 1.0, victim)
    wh = eng.compute(vms[1], 2.0, 1.0, hog)
    env.run()
    u = 0.7 / (cap * cores)
    slow = 1.0 + alpha * 0.6 * u / (1.0 - min(u, U_MAX))
    # the hog ends at 2 s (the victim presses nothing); the victim did 2 / slow by then
    assert wh.event.triggered and wv.event.triggered
    assert env.now == pytest.approx(2.0 + 10.0 - 2.0 / slow, rel=1e-12)


def test_dom0_pool_caps_a_hosts_io():
    """8 Grep maps on a 400 MB/s disk: Dom0's 1 core at 0.01 core-s/MB serves 100 MB/s."""
    off = _probe_time("grep", "grep", 7, {}, 0, host="xen-ssd")
    on = _probe_time("grep", "grep", 7, DOM0_ON, 0, host="xen-ssd")
    wider = dict(DOM0_ON, dom0_cores=4.0)
    assert on > 1.5 * off
    assert _probe_time("grep", "grep", 7, wider, 0, host="xen-ssd") < on
    # the probe's 128 MB moved at no more than its fair share of Dom0's 100 MB/s
    read_s = on - 0.015 * 128 * 1.04  # minus its compute phase (virtualized)
    assert 128.0 / read_s <= 100.0 / 8 * 1.01


def test_credit_coupling_slows_io_on_an_over_committed_host():
    def ratio(ex: dict) -> float:
        busy = _probe_time("grep", "piest", 20, ex, 0, bg_mb=200.0)
        return busy / _probe_time("grep", "piest", 0, ex, 0)

    off, on = ratio({}), ratio(CREDIT_ON)
    assert on > 1.1 * off
    # not over-committed (5 PiEst maps on 10 cores): no effect
    assert _probe_time("grep", "piest", 5, CREDIT_ON, 0, bg_mb=200.0) == _probe_time(
        "grep", "piest", 5, {}, 0, bg_mb=200.0
    )


def test_every_profile_has_a_memory_character_in_range():
    for p in PROFILES.values():
        assert 0.0 <= p.mem_pressure <= 1.0 and 0.0 <= p.mem_sensitivity <= 1.0
    # PiEst presses nothing (ILA Fig. 1's background); streaming sorts press most
    assert PROFILES["piest"].mem_pressure < 0.1 < PROFILES["terasort"].mem_pressure - 0.7


def _mix_run(execution: dict):
    """ila72's Xen cluster running a compressed scan, KMeans and TeraSort side by side: a
    mix on which every mechanism of docs/model.md §2 has an effect.

    Seed 2: a host's runnable vCPUs exceed its cores (the credit coupling's trigger) only
    now and then in this mix, and on seeds 0 and 3 never (the credit mechanism alone then
    changes nothing); seed 2 has the most of seeds 0-7 (8 pool updates over-committed, 1-6
    on the others), and every other mechanism has an effect on every seed 0-7."""
    from mrgym.registry import make
    from mrgym.runner import run_sim

    jobs = [{"profile": p, "maps": 60} for p in ("webdatascan", "kmeans", "terasort")]
    over = {"workload": {"kind": "jobs", "jobs": jobs}, "execution": execution}
    return run_sim(load_scenario("ila72", over), make("fair", speculation=False), 2).task_log


def test_mechanisms_are_on_by_default_and_each_off_entry_disables_its_effect():
    d = ModelParams()
    assert d.membw_alpha > 0.0 and d.dom0_cores > 0.0 and d.credit_coupling > 0.0
    assert all(v > 0 and not math.isnan(v) for v in PROPOSED.values())
    # every OFF setting differs from the default (the default turns the mechanism on)
    assert all(getattr(d, k) != v for k, v in ALL_OFF.items())
    # ALL_OFF is the union of the per-mechanism entries, none shadowing another
    assert len(ALL_OFF) == sum(len(off) for off in MECHANISMS_OFF.values())
    base = _mix_run(dict(ALL_OFF))
    for name, off in MECHANISMS_OFF.items():
        # this mechanism alone at its default: a run that differs from ALL_OFF's, so its
        # OFF entry is what turned it off
        only = _mix_run({k: v for k, v in ALL_OFF.items() if k not in off})
        assert only != base, name


@pytest.mark.parametrize(
    "key, value",
    [("membw_capacity", 0.0), ("membw_alpha", -1.0), ("dom0_core_s_per_mb", 0.0)],
)
def test_bad_values_are_rejected_naming_the_key(key, value):
    with pytest.raises((ScenarioError, ValueError), match=key):
        load_scenario({"name": "x", **_tiny(), "execution": {key: value}})


def _tiny() -> dict:
    return {
        "cluster": {"racks": 1, "hosts": [{"count": 1, "type": "xen-12core"}]},
        "workload": {"kind": "jobs", "jobs": [{"profile": "grep", "maps": 1}]},
    }


@pytest.mark.parametrize("key", ["probe-membw", "probe-dom0"])
def test_probe_claims_run_quick(key, tmp_path):
    from mrgym.reproduce.report import load_claims

    (c,) = [c for c in load_claims() if c.key == key]
    r = c.execute([0], tmp_path, quick=True)
    assert r.verdict == "reproduced" and r.plot is not None and r.plot.exists()


def test_credit_coupling_retimes_a_flow_when_the_cpus_free_up():
    """A 100 MB flow on a 10 MB/s link of a virtualized host whose 2 cores carry 4 cores of
    demand until 4 s (excess 1): 10 / 1.5 MB/s until then, 10 MB/s after."""
    from mrgym.sim.topology import Link

    # the other mechanisms off (ALL_OFF): Dom0's own pool would add a link to the flow and
    # membw would slow the phases, moving the analytic end this test checks
    off = {**ALL_OFF, "corunner_penalty": 0.0, "dom0_cores_per_stream": 0.0}
    params = ModelParams(**{**off, "credit_coupling": 0.5})
    env, eng, host, vms = _pool(params, cores=2.0, virtualized=True)
    flow = eng.flow((Link("disk", 10.0),), 100.0, 1.0, (host,))
    phases = [eng.compute(vms[i // 2], 2.0) for i in range(4)]  # 2 VMs x 2 phases, 1 core each
    env.run()
    assert all(w.event.triggered for w in phases) and flow.event.triggered
    moved = 4.0 * 10.0 / 1.5
    assert env.now == pytest.approx(4.0 + (100.0 - moved) / 10.0, rel=1e-12)
    assert not host.cpu.io_flows and host.cpu.excess == 0.0


def test_dom0_pool_is_a_link_on_the_hosts_flows_and_shows_its_cpu():
    """3 flows on a 400 MB/s disk of a host whose Dom0 (1 core, 0.01 core-s/MB) serves
    100 MB/s: each gets 100/3 MB/s, and Dom0 shows 1 busy core; the guests' pool none."""
    from mrgym.sim.topology import Link

    params = ModelParams(dom0_cores=1.0, dom0_core_s_per_mb=0.01)
    env = simpy.Environment()
    eng = FluidEngine(env, params)
    host = StubHost(type=StubType(cores=4.0, core_speed=1.0), virtualized=True)
    host.name = "h0"
    host.cpu = CpuPool(host, eng, params)
    disk = Link("disk", 400.0)
    flows = [eng.flow((disk,), 100.0, 1.0, (host,)) for _ in range(3)]
    assert [f.rate_now() for f in flows] == pytest.approx([100.0 / 3] * 3, rel=1e-12)
    assert host.cpu.dom0_busy() == pytest.approx(1.0) and host.cpu.dom0_demand() == 0.0
    env.run()
    assert env.now == pytest.approx(3.0, rel=1e-12) and host.cpu.dom0_busy() == 0.0
