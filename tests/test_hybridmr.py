"""HybridMR (baselines/hybridmr.py, hybridmr_phase2.py): Algorithm 2's placement, the DRM's
CPU balancer, the IPS's budget, Algorithm 3 ending an SLA breach that FIFO co-hosting
does not, live migration's cost, and the gym loop with HybridMR's hooks delegated."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import pytest
from helpers import cluster, scenario

import mrgym
from baselines.hybridmr import FifoRandomScheduler, HybridMRScheduler, Phase1
from baselines.hybridmr_phase2 import IoModel, Phase2, _water_fill
from mrgym import registry
from mrgym.reproduce.claims.hybridmr import batch_jobs, virtual_only
from mrgym.runner import build_simulation
from mrgym.sim.params import DEFAULT_PARAMS, MECHANISMS_OFF
from mrgym.sim.scheduler import Scheduler


class FakeDB:
    """Estimates by hand: virtual = native x (1 + overhead[app])."""

    def __init__(self, native: float, overhead: dict[str, float]):
        self.native, self.overhead = native, overhead

    def lookup(self, app, platform):
        if app not in self.overhead:
            raise KeyError(app)
        return [app]

    def estimate(self, app, data_mb, nodes, platform):
        jct = self.native * (1 + self.overhead[app] if platform == "virtual" else 1)
        return SimpleNamespace(jct_s=jct)


def _view(n_native=2, n_virtual=2):
    hosts = [SimpleNamespace(pool="native", id=i) for i in range(n_native)]
    hosts += [SimpleNamespace(pool="virtual", id=n_native + i) for i in range(n_virtual)]
    workers = [SimpleNamespace(host=h) for h in hosts for _ in range(2)]
    return SimpleNamespace(topology=SimpleNamespace(workers=workers))


def _job(app, deadline=None, jid=0):
    spec = SimpleNamespace(input_mb=1024.0, deadline_s=deadline)
    return SimpleNamespace(id=jid, profile=SimpleNamespace(name=app), spec=spec)


def test_algorithm2_places_by_overhead_and_desired_time():
    p = Phase1(FakeDB(100.0, {"sort": 0.20, "piest": 0.04}), desired_slack=0.08)
    view = _view()
    assert p.place(_job("sort"), view) == {"native"}  # 120 s >= 108 s desired
    assert p.place(_job("piest", jid=1), view) == {"virtual"}  # 104 s < 108 s
    assert p.place(_job("piest", deadline=50.0, jid=2), view) == {"native"}  # a deadline wins
    assert p.place(_job("sort", deadline=500.0, jid=3), view) == {"virtual"}
    assert p.place(_job("teragen", jid=4), view) is None  # not profiled: anywhere
    assert p.place(_job("sort", jid=5), _view(n_native=0)) is None  # one pool only
    assert p.estimates[0] == (100.0, 120.0)


def test_water_fill_is_max_min_fair_and_spends_the_budget():
    caps = _water_fill({1: 0.0, 2: 0.5, 3: 3.0}, budget=2.0, floor=0.25)
    assert sum(caps.values()) == pytest.approx(2.0)
    # VM 2 wants 0.5 and gets it; VM 1 keeps its floor; VM 3 takes what is left
    assert caps[2] == pytest.approx(0.5) and caps[1] == pytest.approx(0.25)
    assert caps[3] == pytest.approx(1.25)
    assert _water_fill({1: 0.0, 2: 0.0}, 1.0, 0.1) == pytest.approx({1: 0.5, 2: 0.5})


def test_ips_budget_follows_the_mm1_ps_model():
    """A 2-core host, one interactive VM (1 vCPU, 10 ms per request, SLA 2 s, headroom 0):
    at 80 req/s it needs a share g >= 0.8 + 0.01 / 1 s of its demand, so the host may carry
    2 / 0.81 - 0.8 cores of Hadoop work (no Dom0 work here)."""
    spec = SimpleNamespace(service_ms=10.0, sla_s=2.0)
    ivm = SimpleNamespace(vcpus=1.0)
    app = SimpleNamespace(spec=spec, rps=80.0)
    host = SimpleNamespace(vms=[ivm], type=SimpleNamespace(cores=2.0))
    view = SimpleNamespace(
        interactive_app=lambda vm: app if vm is ivm else None,
        host_metrics=lambda h: SimpleNamespace(dom0_cpu_cores=0.0),
    )
    p2 = Phase2(headroom=0.0, target_frac=0.5)
    assert p2.budget(host, view) == pytest.approx(2 / 0.81 - 0.8)
    app.rps = 0.0
    assert p2.budget(host, view) == pytest.approx(2 / 0.01)  # idle: no limit in practice
    host.vms = []
    assert p2.budget(host, view) == float("inf")


def test_io_model_recovers_an_exponential_decay():
    m = IoModel()
    for n in range(1, 9):
        for _ in range(10):
            m.observe(n, 0.2 + 0.8 * 2.718281828 ** (-0.3 * (n - 1)))
    m.refit()
    assert m.efficiency(1) == pytest.approx(1.0, abs=0.02)
    assert m.efficiency(5) == pytest.approx(0.2 + 0.8 * 2.718281828 ** (-1.2), abs=0.02)


def _sla_case(rps: float = 80.0) -> dict:
    jobs = [
        {"name": "k", "profile": "kmeans", "maps": 96},
        {"name": "p", "profile": "piest", "maps": 48},
    ]
    over = virtual_only(jobs)
    over["cluster.hosts"][0]["count"] = 4
    g = over["cluster.hosts"][0]["interactive"]
    g.update(base_rps=rps, peak_rps=rps, noise_sigma=0.0)
    return over


def test_phase2_ends_an_sla_breach_that_fifo_cohosting_does_not():
    sc = mrgym.load_scenario("hybrid48", _sla_case())
    fifo = mrgym.run_sim(sc, "fifo", 0).metrics
    sched = HybridMRScheduler(phase1=False)
    hmr = mrgym.run_sim(sc, sched, 0).metrics
    assert fifo["sla_violation_s"] > 100  # 4 RUBiS VMs starved while the jobs run
    assert hmr["sla_violation_s"] <= 0.1 * fifo["sla_violation_s"]
    assert sched.phase2.n_throttles > 0
    assert hmr["jobs_completed"] == fifo["jobs_completed"] == 2


def test_interactive_response_falls_when_the_arbiter_acts():
    """Without the DRM's caps the IPS must reassign, migrate or pause: breaches happen, and
    each ends within a few control periods (the response is back under the SLA), while
    FIFO's last for as long as the jobs run."""

    class Watch(HybridMRScheduler):
        def control(self, view):
            worst = max(view.response_time_s(a.vm) for a in view.interactive_apps())
            self.trace.append(worst)
            return super().control(view)

    def longest_breach(trace: list[float]) -> int:
        run = best = 0
        for r in trace:
            run = run + 1 if r > 2.0 else 0
            best = max(best, run)
        return best

    # credit coupling off: with it (issue 34) the MR VMs' I/O slows whenever the host's vCPUs
    # are over-committed, and the pause/resume/kill cycle here never lets a task finish
    # (0 of 2 jobs in 10 h, 4364 breaches); vCPU overcommit's cost does the same to their
    # compute, and so do, each alone, the child JVM's start-up paid again by every killed
    # and restarted attempt and the fitted seek thrash (0 of 2 jobs, 4364 breaches, with
    # only credit and overcommit off); this test is about the arbiter's control loop
    over = _sla_case(90.0)
    for mech in ("credit", "overcommit", "jvm_start"):
        over.update({f"execution.{k}": v for k, v in MECHANISMS_OFF[mech].items()})
    sc = mrgym.load_scenario("hybrid48", over)
    sched = Watch(phase1=False, manage="io")
    sched.trace = []
    sim = build_simulation(sc, sched, 0)
    sim.run()
    p2 = sched.phase2
    assert p2.n_breaches > 0 and p2.n_reassigned + p2.n_paused + p2.n_migrated > 0
    assert sum(r > 2.0 for r in sched.trace) > 0
    assert longest_breach(sched.trace) <= 4  # each breach over within 12 s
    fifo = Watch(phase1=False, phase2=False)
    fifo.control_period_s = 3.0
    fifo.trace = []
    fifo.inner = registry.make("fifo")
    mrgym.run_sim(sc, fifo, 0)
    assert longest_breach(fifo.trace) > 20  # FIFO: a minute and more over the SLA
    m = mrgym.metrics.episode_metrics(sim)
    assert m["jobs_completed"] == 2 and not m["truncated"]


@pytest.mark.parametrize(
    "param,value",
    [("target_frac", 0.0), ("downtime_s", -5.0), ("period_s", 0.0), ("io_min_eff", 1.5)],
)
def test_bad_phase2_parameters_are_refused(param, value):
    with pytest.raises(ValueError, match=f"hybridmr {param}: expected"):
        registry.make("hybridmr", **{param: value})


def test_live_migration_costs_its_memory_copy():
    """Pre-copy sends the VM's memory over the path first: a 4 GB VM takes longer to move
    than a 1 GB one, and the moved task still ends (HybridMR Fig. 10(b))."""
    from mrgym.sim.scheduler import Migrate

    class Mover(Scheduler):
        control_period_s = 5.0

        def __init__(self):
            self.done = False
            self.inner = registry.make("fifo")

        def reset(self, seed):
            self.done = False

        def place_job(self, job, view):
            return None

        def decide(self, ctx):
            return self.inner.decide(ctx)

        def control(self, view):
            if self.done:
                return []
            vm = next((v for v in view.topology.workers if v.running), None)
            if vm is None:
                return []
            self.done = True
            return [Migrate(vm.id, 1 - vm.host.id, downtime_s=1.0)]

    ends = {}
    for gb in (1.0, 4.0):
        hosts = [
            {
                "count": 2,
                "type": "generic-4core",
                "vms_per_host": 1,
                "vm": {"vcpus": 2, "map_slots": 1, "reduce_slots": 0, "memory_gb": gb},
            }
        ]
        sc = scenario(
            cluster(hosts), [{"profile": "piest", "maps": 1, "reduces": 0, "input_mb": 3000}]
        )
        sim = build_simulation(sc, Mover(), 0)
        moves: list[float] = []

        def traced(vm, target, downtime, _orig=sim.dynamics.migrate, _sim=sim, _moves=moves):
            t0 = _sim.env.now
            yield from _orig(vm, target, downtime)
            _moves.append(_sim.env.now - t0)

        sim.dynamics.migrate = traced
        sim.run()
        assert sim.attempts[0].outcome == "success"
        ends[gb] = moves[0]
    # the pre-copy crosses the NIC (125 MB/s) and the Dom0s that run it (cpu.py): 1 GB at
    # the slower of the two, plus the 1 s downtime
    p = DEFAULT_PARAMS
    rate = min(125.0, p.dom0_cores / p.dom0_core_s_per_mb)
    assert ends[1.0] == pytest.approx(1024 / rate + 1.0, rel=0.1)
    assert ends[4.0] == pytest.approx(4096 / rate + 1.0, rel=0.1)


def test_fifo_random_draws_pools_from_its_seed():
    a, b = FifoRandomScheduler(), FifoRandomScheduler()
    a.reset(3)
    b.reset(3)
    view = _view()
    picks = [a.place_job(_job("sort", jid=i), view) for i in range(20)]
    assert picks == [b.place_job(_job("sort", jid=i), view) for i in range(20)]
    assert {next(iter(p)) for p in picks} == {"native", "virtual"}


def test_hybridmr_is_deterministic_and_registered():
    over = {"workload": {"kind": "jobs", "jobs": batch_jobs(3)}}
    a = mrgym.run_sim(mrgym.load_scenario("hybrid48", over), "hybridmr", 1).metrics
    b = mrgym.run_sim(mrgym.load_scenario("hybrid48", over), "hybridmr", 1).metrics
    assert a == b
    assert registry.entry_point("hybridmr") == "baselines.hybridmr:HybridMRScheduler"
    assert registry.make("hybridmr-phase1").phase2 is None
    with pytest.raises(ValueError, match="expected a subset of"):
        registry.make("hybridmr", manage="cpu+memory")  # the resource is "mem"


def test_gym_loop_with_hybridmr_hooks_delegated():
    """An agent (here EnvPolicy replaying HybridMR's decide) runs with HybridMR's place_job
    and control hooks inside the environment: phase I places the jobs, phase II throttles,
    and the episode equals run_sim's whenever no decision names a reassigned task."""
    # WordCount's generous deadline sends it to the virtual pool (Algorithm 2: virtual when
    # its estimate meets the deadline); without one, every profiled virtual estimate is
    # > 8 % over the native one, and phase I keeps the batch native
    jobs = batch_jobs(3)
    jobs[1]["deadline_s"] = 3600.0
    sc = mrgym.load_scenario("hybrid48", {"workload": {"kind": "jobs", "jobs": jobs}})
    direct = HybridMRScheduler()
    a = mrgym.run_sim(sc, direct, 0).metrics
    env = gym.make("MRCluster-v0", config=sc, job_slots=8, work_conserving=False)
    policy = mrgym.EnvPolicy(HybridMRScheduler())
    b = mrgym.run_episode(env, policy, 0)
    placed = policy.scheduler.phase1.placed
    assert placed == direct.phase1.placed and set(placed.values()) == {"native", "virtual"}
    assert policy.scheduler.phase2.n_throttles == direct.phase2.n_throttles > 0
    assert b.invalid_actions == 0 and b.inexact == policy.inexact == 0
    assert b.metrics["mean_jct_s"] == a["mean_jct_s"]


def test_an_agent_runs_under_hybridmr_hooks():
    """Any agent (here random legal actions) may assign tasks while HybridMR's phase I
    places jobs and its phase II controls the VMs: ``env.unwrapped.set_hooks``."""
    import numpy as np

    over = _sla_case()  # two CPU-bound jobs beside loaded interactive VMs, + the natives
    native = mrgym.load_scenario("hybrid48").cluster.hosts[0].model_dump(exclude_none=True)
    over["cluster.hosts"] = [{**native, "count": 4}, *over["cluster.hosts"]]
    over["cluster.racks"] = 2
    over["cluster.hosts"][1]["racks"] = [1]
    env = gym.make("MRCluster-v0", config=mrgym.load_scenario("hybrid48", over))
    hooks = HybridMRScheduler()
    env.unwrapped.set_hooks(hooks)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        legal = np.flatnonzero(info["action_mask"])
        obs, _, term, trunc, info = env.step(int(rng.choice(legal)))
        done = term or trunc
    assert term and info["episode_metrics"]["jobs_completed"] == 2
    assert len(hooks.phase1.placed) == 2 and hooks.phase2.n_throttles > 0
