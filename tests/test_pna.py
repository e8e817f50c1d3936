"""PNA and Coupling (baselines/pna.py; PNA §II-III): the worked example of §II-B with its
hop matrix given through ``cluster.rack_hops``, eqs. 1-5 and the P_min rule, the
vectorized costs against the scalar formulas, Algorithm 2's one-reduce-per-node rule,
Coupling's progress-coupled reduce launches, determinism, and the gym loop."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
from helpers import cluster, scenario

import mrgym
from baselines.pna import (
    P_MIN,
    CouplingScheduler,
    PnaScheduler,
    accept_probability,
    estimated_output,
    intermediate,
    map_cost,
    reduce_cost,
)
from mrgym import registry
from mrgym.config import load_scenario
from mrgym.sim.scheduler import MAP, REDUCE
from mrgym.sim.simulation import Simulation

# §II-B "An Example": the hop matrix H between D1..D4
H = [[0, 4, 2, 8], [4, 0, 10, 4], [2, 10, 0, 6], [8, 4, 6, 0]]

# pna60 shrunk: 12 of its nodes (3 racks), four small jobs submitted at once (~0.1 s a run)
JOBS = [
    {"profile": "wordcount", "maps": 48, "reduces": 12},
    {"profile": "terasort", "maps": 36, "reduces": 10},
    {"profile": "grep", "maps": 24, "reduces": 6},
    {"profile": "wordcount", "maps": 12, "reduces": 4},
]
SMALL = {"cluster.hosts.0.count": 12, "workload": {"kind": "jobs", "jobs": JOBS}}


def _small(**over):
    return load_scenario("pna60", {**SMALL, **over})


def _same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _example_view():
    """One native node per rack, the paper's H as the rack-to-rack hop matrix."""
    hosts = [{"count": 4, "type": "palmetto-16core", "native": True}]
    jobs = [{"profile": "wordcount", "maps": 2, "reduces": 2, "input_mb": 256}]
    sc = scenario(cluster(hosts, racks=4, rack_hops=H), jobs)
    sim = Simulation(load_scenario(sc), PnaScheduler(), 0)
    return sim.view, sim.topo.workers


# -- §II-B: the worked example ------------------------------------------------------------------
def test_the_hop_matrix_comes_from_rack_hops():
    view, d = _example_view()
    assert [[view.hops(a, b) for b in d] for a in d] == H


def test_worked_example_map_costs_eq1():
    view, d = _example_view()
    m1 = SimpleNamespace(block=SimpleNamespace(replicas=[d[0]]), input_mb=128.0)  # on D1
    m2 = SimpleNamespace(block=SimpleNamespace(replicas=[d[1]]), input_mb=128.0)  # on D2
    assert map_cost(view, m1, d[2]) == 256  # "the transmission cost for M1 is 128 x 2 = 256"
    assert map_cost(view, m2, d[1]) == 0  # "the cost for M2 is 128 x 0 = 0"
    assert [map_cost(view, m1, v) for v in d] == [0, 512, 256, 1024]
    # eq. 1 takes the nearest replica: with a second one on D4, D2 reads from it (4 hops)
    both = SimpleNamespace(block=SimpleNamespace(replicas=[d[0], d[3]]), input_mb=128.0)
    assert [map_cost(view, both, v) for v in d] == [0, 512, 256, 0]
    assert map_cost(view, SimpleNamespace(block=None, input_mb=0.0), d[2]) == 0


def test_worked_example_reduce_costs_eq2():
    view, d = _example_view()
    # M1 placed on D3, M2 on D2; R1 on D1, R2 on D3: the mapper-to-reducer distances
    assert [[view.hops(m, r) for r in (d[0], d[2])] for m in (d[2], d[1])] == [[2, 0], [4, 10]]
    # I (MB): M1 -> (R1 10, R2 5), M2 -> (R1 20, R2 10)
    r1 = reduce_cost(view, [(d[2], 10.0), (d[1], 20.0)], d[0])
    r2 = reduce_cost(view, [(d[2], 5.0), (d[1], 10.0)], d[2])
    assert (r1, r2) == (10 * 2 + 20 * 4, 5 * 0 + 10 * 10) == (100, 100)
    assert 256 + 0 + r1 + r2 == 456  # the whole assignment of Fig. 2


def test_intermediate_size_estimate_moves_the_reduce():
    """§II-B.2: M2 at 10 % has 1 MB of its final 10 MB for R1, M1 at 90 % has 5 MB; with
    current sizes R1 goes next to M1, with the estimate A·B/d_read next to M2."""
    b = 128.0
    m2 = estimated_output(1.0, b, 0.1 * b)
    m1 = estimated_output(5.0, b, 0.9 * b)
    assert m2 == pytest.approx(10.0) and m1 == pytest.approx(5.0 / 0.9)
    assert estimated_output(1.0, b, 0.0) is None  # nothing read: no estimate
    view, d = _example_view()
    at = {"M1": d[0], "M2": d[1]}  # M1 on D1, M2 on D2

    def best(sizes):
        src = [(at["M1"], sizes[0]), (at["M2"], sizes[1])]
        return min(range(4), key=lambda i: reduce_cost(view, src, d[i]))

    assert best((5.0, 1.0)) == 0  # current sizes: D1, M1's node
    assert best((m1, m2)) == 1  # estimated sizes: D2, M2's node


# -- eqs. 4-5 and P_min -------------------------------------------------------------------------
def test_accept_probability_eq4():
    assert accept_probability(1.0, 1.0) == pytest.approx(1 - math.exp(-1))  # 0.632
    assert accept_probability(256.0, 128.0) == pytest.approx(1 - math.exp(-2))
    assert accept_probability(128.0, 256.0) == pytest.approx(1 - math.exp(-0.5))
    assert accept_probability(5.0, 0.0) == 1.0  # local: always assigned (line 7)
    assert accept_probability(0.0, 0.0) == 1.0
    assert accept_probability(0.0, 5.0) == 0.0
    # §II-C: P >= P_min iff C_ij <= C_ave / -ln(1 - P_min)  (1.958 C_ave for 0.4)
    bound = 1.0 / -math.log(1 - P_MIN)
    assert accept_probability(1.0, bound * 0.999) > P_MIN > accept_probability(1.0, bound * 1.001)


def test_p_min_floor_and_coin():
    s = PnaScheduler()
    s.reset(7)
    state = s.rng.bit_generator.state
    assert not s._accept(0.399) and s.rng.bit_generator.state == state  # skipped, no draw
    assert s._accept(1.0) and s.rng.bit_generator.state == state  # certain, no draw
    hits = [s._accept(0.5) for _ in range(4000)]
    assert abs(np.mean(hits) - 0.5) < 0.03  # P >= P_min: assigned with probability P
    assert np.mean([s._accept(0.9) for _ in range(4000)]) == pytest.approx(0.9, abs=0.03)
    s0 = PnaScheduler(p_min=0.0)
    s0.reset(1)
    assert np.mean([s0._accept(0.1) for _ in range(4000)]) == pytest.approx(0.1, abs=0.03)
    with pytest.raises(ValueError, match=r"pna.p_min: must be in \[0, 1\], got 2"):
        PnaScheduler(p_min=2)
    with pytest.raises(ValueError, match="pna.distance"):
        PnaScheduler(distance="km")
    with pytest.raises(ValueError, match="coupling.remote_pick"):
        CouplingScheduler(remote_pick="best")


# -- the vectorized decision against the formulas ----------------------------------------------
def test_probabilities_match_the_scalar_formulas():
    sched = PnaScheduler()
    sim = Simulation(_small(), sched, 3)
    sched.reset(3)
    view = sim.view
    seen_map = seen_red = 0
    while (vm := sim.advance()) is not None and (seen_map < 40 or seen_red < 20):
        for kind in (MAP, REDUCE):
            ctx = sim.context(vm, kind)
            for job in view.jobs:
                if kind == MAP and job.n_pending_maps and vm.free_map:
                    pend, p = sched.map_probabilities(ctx, job)
                    idle = view.idle_vms(MAP)
                    want = [
                        accept_probability(
                            np.mean([map_cost(view, t, k) for k in idle]), map_cost(view, t, vm)
                        )
                        for t in pend
                    ]
                    assert p == pytest.approx(want, rel=1e-9, abs=1e-12)
                    seen_map += bool(p.min() < 1.0)
                if kind == REDUCE and job.ready and job.outputs and vm.free_reduce:
                    ids, w = intermediate(view, job, estimate=True)
                    src = [(view.topology.vms[i], x) for i, x in zip(ids, w)]
                    idle = view.idle_vms(REDUCE)
                    c_ave = np.mean([reduce_cost(view, src, k) for k in idle])
                    want = accept_probability(c_ave, reduce_cost(view, src, vm))
                    assert sched.reduce_probability(ctx, job) == pytest.approx(want, rel=1e-9)
                    seen_red += 1
        sim.beats.serve(vm, sched.decide)
    assert seen_map >= 40 and seen_red >= 20  # non-local maps and reduces were compared


def _overlap(log, vm: str, job: int) -> bool:
    spans = sorted(
        (r.start, r.end) for r in log if r.kind == "reduce" and r.job == job and r.vm == vm
    )
    return any(b[0] < a[1] - 1e-9 for a, b in zip(spans, spans[1:]))


@pytest.mark.parametrize("name", ["pna", "coupling"])
def test_never_two_reduces_of_a_job_on_one_node(name):
    r = mrgym.run_sim(_small(), name, 0)
    assert r.metrics["jobs_completed"] == r.metrics["jobs_submitted"] == len(JOBS)
    vms = {x.vm for x in r.task_log}
    assert not any(_overlap(r.task_log, v, j) for v in vms for j in range(len(JOBS)))


def test_coupling_launches_reduces_no_faster_than_maps():
    r = mrgym.run_sim(_small(), CouplingScheduler(), 0)
    for j, spec in enumerate(JOBS):
        maps = [x for x in r.task_log if x.job == j and x.kind == "map"]
        reds = sorted(x.start for x in r.task_log if x.job == j and x.kind == "reduce")
        for k, t in enumerate(reds, 1):
            started = sum(1 for m in maps if m.start <= t)  # done or running: progress bound
            assert k <= math.ceil(started / spec["maps"] * spec["reduces"]), (j, k, t)


# -- runs ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [PnaScheduler, CouplingScheduler])
def test_deterministic_given_the_seed(cls):
    a, b, c = (mrgym.run_sim(_small(), cls(), s) for s in (1, 1, 2))
    assert _same(a.metrics, b.metrics) and a.task_log == b.task_log
    assert a.task_log != c.task_log
    assert a.metrics["jobs_completed"] == len(JOBS)


def test_pna_is_more_local_than_pure_fair_on_a_small_pna60():
    loc = {
        s: np.mean(
            [mrgym.run_sim(_small(), s, k).metrics["map_locality"]["node"] for k in range(3)]
        )
        for s in ("pna", "fair")
    }
    assert loc["pna"] > loc["fair"]


def test_network_condition_variant_runs():
    """§II-B.3: hops replaced by the inverse of the path's transmission rate."""
    sched = PnaScheduler(distance="rate")
    r = mrgym.run_sim(_small(), sched, 0)
    assert r.metrics["jobs_completed"] == len(JOBS)
    assert r.metrics["map_locality"]["node"] > 0.5


def test_registry_entry_points():
    assert registry.entry_point("pna") == "baselines.pna:PnaScheduler"
    assert registry.entry_point("coupling") == "baselines.pna:CouplingScheduler"
    assert isinstance(registry.make("pna", p_min=0.5), PnaScheduler)
    assert registry.make("coupling", wait_beats=1).wait_beats == 1
    assert registry.available().count("pna") == 1


def _episode(sc, name: str):
    env = gym.make("MRCluster-v0", config=sc, job_slots=32, work_conserving=False)
    policy = mrgym.EnvPolicy(name)
    return mrgym.run_episode(env, policy, 0), policy


def test_gym_loop_matches_run_sim_for_coupling():
    a = mrgym.run_sim(_small(), "coupling", 0).metrics
    b, policy = _episode(_small(), "coupling")
    assert policy.inexact == b.inexact == 0 and b.invalid_actions == 0
    assert _same(a, b.metrics)


def test_gym_loop_matches_run_sim_for_pna_when_it_names_no_remote_map():
    """Every block on every node: each map is node-local (P = 1, Hadoop's own pick), and the
    probabilistic reduce placement (its random draws included) replays exactly."""
    sc = _small(**{"hdfs.replication": 12})
    sched = PnaScheduler()
    a = mrgym.run_sim(sc, sched, 0).metrics
    assert sched.n_named == 0 and sched.n_prob > 0
    fresh = np.random.default_rng(0).bit_generator.state
    assert sched.rng.bit_generator.state != fresh  # coins were drawn (and are replayed)
    b, policy = _episode(sc, "pna")
    assert policy.inexact == b.inexact == 0 and b.invalid_actions == 0
    assert _same(a, b.metrics)


def test_gym_loop_is_inexact_for_pna_remote_maps():
    """PNA's remote map is the one of largest P_mj (Algorithm 1, line 9), which Hadoop's task
    choice (the environment's "launch a map of job j") need not pick: EnvPolicy counts
    exactly those decisions as inexact and the episode diverges from run_sim."""
    b, policy = _episode(_small(), "pna")
    assert b.inexact == policy.inexact == policy.scheduler.n_named > 0  # 3 on seed 0
    assert b.metrics["jobs_completed"] == len(JOBS)
    assert not _same(mrgym.run_sim(_small(), "pna", 0).metrics, b.metrics)
