"""The simple job orders of ``baselines/simple.py`` (random, sjf, srpt, wfair), their
compositions with a gate (``<gater>-gate+<order>``), ILA's gate, and wfair's tuning."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import gymnasium as gym
import pytest
from helpers import cluster, run_cli, scenario

import baselines.simple as simple
import mrgym
from baselines.simple import (
    GatedScheduler,
    RandomScheduler,
    SjfScheduler,
    SrptScheduler,
    WeightedFairScheduler,
)
from mrgym import registry
from mrgym.sim.scheduler import DECLINE, MAP, REDUCE, Decision

# ila72's 25-job Table 4 mix shrunk to 300 maps: a whole episode in well under a second
SMALL = {"workload.scale_maps_to": 300}
SIMPLE = ["random", "sjf", "srpt", "wfair", "hostcap"]


def _small():
    return mrgym.load_scenario("ila72", SMALL)


def _same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


# -- orders on a hand-made state -------------------------------------------------------------
def _job(jid: int, maps: int, reduces: int, maps_done=0, reduces_done=0, running=0, weight=1.0):
    return SimpleNamespace(
        id=jid,
        maps=[None] * maps,
        reduces=[None] * reduces,
        maps_done=maps_done,
        reduces_done=reduces_done,
        running_maps=running,
        running_reduces=0,
        weight=weight,
    )


def _ctx(jobs, kind=MAP, launchable=None, name="test"):
    """A decision context over ``jobs`` (all launchable unless ``launchable`` lists ids)."""
    ok = {j.id for j in jobs} if launchable is None else set(launchable)
    return SimpleNamespace(
        slot_kind=kind,
        jobs=jobs,
        can_launch=lambda job, k: job.id in ok,
        view=SimpleNamespace(scenario=SimpleNamespace(name=name)),
    )


def test_sjf_orders_by_size_and_srpt_by_what_is_left():
    # job 0: 10 maps + 2 reduces, 9 maps done, 1 running -> size 12, remaining 3
    # job 1: 4 maps + 1 reduce, nothing done             -> size 5,  remaining 5
    # job 2: 4 maps + 1 reduce, arrived after job 1       -> a tie with job 1: arrival
    jobs = [_job(0, 10, 2, maps_done=9, running=1), _job(1, 4, 1), _job(2, 4, 1)]
    assert [j.id for j in SjfScheduler().order(_ctx(jobs))] == [1, 2, 0]
    assert [j.id for j in SrptScheduler().order(_ctx(jobs))] == [0, 1, 2]
    assert SjfScheduler().decide(_ctx(jobs)) == Decision(MAP, 1)  # no task index: the env's
    assert SrptScheduler().decide(_ctx(jobs)) == Decision(MAP, 0)
    # a reduce slot: the same order over the jobs with a ready reduce
    assert SjfScheduler().decide(_ctx(jobs, REDUCE, launchable=[0, 2])) == Decision(REDUCE, 2)
    assert SrptScheduler().decide(_ctx(jobs, REDUCE, launchable=[])) is DECLINE


def test_wfair_shares_grow_with_remaining_work_to_the_alpha():
    # running maps 2 and 1; remaining tasks 10 and 2.  running / (remaining^alpha):
    # alpha = 0: 2 vs 1 (even shares: job 1 is further below); alpha = 1: 2/10 = 0.2 vs
    # 1/2 = 0.5 (job 0's share is 5x job 1's); alpha = -1: 2*10 = 20 vs 1*2 = 2
    jobs = [_job(0, 10, 0, running=2), _job(1, 2, 0, running=1)]
    first = {a: WeightedFairScheduler(a).decide(_ctx(jobs)).job for a in (0.0, 1.0, -1.0)}
    assert first == {0.0: 1, 1.0: 0, -1.0: 1}
    # weights still count: job 1 at weight 0.25 -> 1 / 0.25 = 4 > 2 at alpha = 0
    jobs[1].weight = 0.25
    assert WeightedFairScheduler(0.0).decide(_ctx(jobs)).job == 0
    with pytest.raises(ValueError, match="wfair.alpha: expected a finite number or None"):
        WeightedFairScheduler(float("nan"))


def test_wfair_takes_the_tuned_alpha_of_the_scenario(monkeypatch):
    monkeypatch.setattr(simple, "_alpha_table", lambda: {"tuned": -1.0})
    jobs = [_job(0, 10, 0, running=2), _job(1, 2, 0, running=1)]
    s = WeightedFairScheduler()
    assert s.decide(_ctx(jobs, name="tuned")).job == 1 and s._alpha == -1.0
    s.reset(0)  # a new run looks its scenario up again
    assert s.decide(_ctx(jobs, name="other")).job == 0 and s._alpha == simple.DEFAULT_ALPHA == 1


def test_wfair_with_alpha_zero_is_fair_without_speculation():
    # the full ila72: with 300 maps the jobs seldom compete, and alpha = 1 changes nothing
    a = mrgym.run_sim("ila72", registry.make("wfair", alpha=0), 0).metrics
    b = mrgym.run_sim("ila72", registry.make("fair", speculation=False), 0).metrics
    assert _same(a, b)
    c = mrgym.run_sim("ila72", registry.make("wfair", alpha=1), 0).metrics
    assert c["mean_jct_s"] != a["mean_jct_s"]


# -- orders in a simulation ------------------------------------------------------------------
ONE_SLOT = cluster(
    [{"count": 1, "type": "generic-4core", "vm": {"vcpus": 4, "map_slots": 1, "reduce_slots": 1}}]
)


def _map_order(sc: dict, name: str) -> list[int]:
    """The jobs of the maps in their start order."""
    log = mrgym.run_sim(sc, name, 0).task_log
    return [t.job for t in sorted(log, key=lambda t: t.start) if t.kind == "map"]


def test_sjf_launches_the_smaller_jobs_maps_first():
    # one map slot; job 0 (4 maps) and job 1 (2 maps) both at 0 s
    jobs = [{"profile": "grep", "maps": m, "reduces": 0} for m in (4, 2)]
    sc = scenario(ONE_SLOT, jobs)
    assert _map_order(sc, "fifo") == [0, 0, 0, 0, 1, 1]
    assert _map_order(sc, "sjf") == [1, 1, 0, 0, 0, 0]


def test_srpt_finishes_the_nearly_done_big_job_where_sjf_switches():
    # job 0 (6 maps) alone on one map slot; job 1 (4 maps) arrives while job 0's 4th map
    # runs, when 3 of job 0's tasks are left (the running one included).  At the next free
    # slot job 0 has 2 left < 4: SRPT keeps to job 0; SJF takes job 1 (4 tasks < 6)
    alone = scenario(ONE_SLOT, [{"profile": "grep", "maps": 6, "reduces": 0}])
    maps = sorted(mrgym.run_sim(alone, "fifo", 0).task_log, key=lambda t: t.start)
    mid = (maps[3].start + maps[3].end) / 2
    jobs = [
        {"profile": "grep", "maps": 6, "reduces": 0},
        {"profile": "grep", "maps": 4, "reduces": 0, "submit_s": mid},
    ]
    sc = scenario(ONE_SLOT, jobs)
    assert _map_order(sc, "srpt") == [0] * 6 + [1] * 4
    assert _map_order(sc, "sjf") == [0] * 4 + [1] * 4 + [0] * 2


class _Shifted(RandomScheduler):
    """``random`` whose own stream is seeded one above the run's."""

    def reset(self, seed):
        super().reset(seed + 1)


def test_random_is_reproducible_per_seed_and_its_own_seed_matters():
    # the full ila72: with 300 maps one job at a time can launch, and any order is the same
    a = mrgym.run_sim("ila72", "random", 0)
    b = mrgym.run_sim("ila72", "random", 0)
    assert _same(a.metrics, b.metrics) and a.task_log == b.task_log
    # the same simulation seed (workload, luck), another stream for the policy alone
    c = mrgym.run_sim("ila72", _Shifted(), 0)
    assert a.metrics["mean_jct_s"] != c.metrics["mean_jct_s"]
    assert a.metrics["jobs_completed"] == c.metrics["jobs_completed"] == 25


def test_random_picks_uniformly_among_the_launchable_jobs_and_never_declines():
    jobs = [_job(i, 3, 1) for i in range(4)]
    s = RandomScheduler()
    s.reset(7)
    picks = [s.decide(_ctx(jobs, launchable=[0, 2, 3])).job for _ in range(3000)]
    counts = {j: picks.count(j) for j in (0, 1, 2, 3)}
    assert counts[1] == 0 and all(900 < counts[j] < 1100 for j in (0, 2, 3)), counts
    s.reset(7)
    assert [s.decide(_ctx(jobs, launchable=[0, 2, 3])).job for _ in range(3000)] == picks
    assert s.decide(_ctx(jobs, launchable=[])) is DECLINE


@pytest.mark.parametrize(
    "name,kw",
    [
        ("srpt", {"queue_order": "remaining"}),
        ("sjf", {"job_slots": 32}),
        ("random", {"job_slots": 32}),
    ],
)
def test_the_orders_are_actions_of_the_env(name, kw):
    """Each decision is "launch a task of the slot's kind for job J": in the gym loop the
    run is the same as run_sim's (srpt: always slot 0 of the env's `remaining` order)."""
    a = mrgym.run_sim(_small(), name, 0).metrics
    env = gym.make(
        "MRCluster-v0",
        config="ila72",
        overrides=SMALL,
        speculation=False,
        work_conserving=False,
        **kw,
    )
    policy = mrgym.EnvPolicy(name)
    b = mrgym.run_episode(env, policy, 0)
    assert policy.inexact == 0 and not registry.make(name).speculates
    assert _same(a, b.metrics)


# -- compositions ------------------------------------------------------------------------------
def test_hybridmr_gate_with_fair_is_hybridmr():
    own = registry.make("hybridmr")
    comp = registry.make("hybridmr-gate+fair")
    a, b = mrgym.run_sim("ila72", own, 0), mrgym.run_sim("ila72", comp, 0)
    assert _same(a.metrics, b.metrics) and a.task_log == b.task_log
    assert own.n_gated == comp.n_gated == comp.gater.n_gated > 100


# xdist: ILA's training set is built once per process; its tests share one
ILA_GROUP = pytest.mark.xdist_group("ila")


@pytest.mark.parametrize(
    "name", ["hybridmr-gate+srpt", pytest.param("ila-gate+sjf", marks=ILA_GROUP)]
)
def test_a_composition_declines_exactly_where_its_gate_does(name):
    s = registry.make(name)
    gates, orders, out = [], [], []
    gate, decide = s.gater.gate, s.order.decide

    def spy_gate(ctx):
        gates.append(gate(ctx))
        return gates[-1]

    def spy_decide(ctx):
        orders.append(decide(ctx))
        return orders[-1]

    s.gater.gate, s.order.decide = spy_gate, spy_decide
    real = s.decide
    s.decide = lambda ctx: out.append(real(ctx)) or out[-1]
    r = mrgym.run_sim(_small() if name.startswith("ila") else "ila72", s, 0)
    assert r.metrics["jobs_completed"] == 25
    declined = [g for g in gates if g is not None and g.declines]
    assert len(declined) == s.n_gated == s.gater.n_gated > 0
    # the gate answered those slots; the order answered every other one, and launched
    assert len(out) == len(gates) == len(orders) + sum(g is not None for g in gates)
    assert sum(d.declines for d in out) == len(declined) + sum(d.declines for d in orders)
    assert not any(d.declines for d in orders)  # slots are offered only with work to launch


@ILA_GROUP
@pytest.mark.parametrize("name", ["iao", "ila"])
def test_ilas_gate_declines_where_algorithm_1_idles_the_slot(name):
    """On each map slot, ``gate`` on a copy of the scheduler (same state, same slot)
    declines exactly where IAO (IASM + greedy locality) idles it; ILA idles those slots
    and, for LASM's locality waits, some more."""
    s = registry.make(name)
    real = s._decide
    pairs = []  # (gate's decision, the scheduler's own) per map slot

    def spy(ctx):
        if ctx.slot_kind == MAP:
            # the same state (the training set shared: read-only, and large)
            twin = copy.deepcopy(s, {id(s._ts): s._ts})
            pairs.append((twin.gate(ctx), real(ctx)))
            return pairs[-1][1]
        return real(ctx)

    s._decide = spy
    r = mrgym.run_sim(_small(), s, 0)
    assert r.metrics["jobs_completed"] == 25
    gated = [g is not None for g, _ in pairs]
    idle = [d.declines for _, d in pairs]
    assert all(g is None or g.declines for g, _ in pairs)  # IASM declines or stays out
    assert sum(gated) > 10
    if name == "iao":
        assert gated == idle
    else:
        assert all(i for g, i in zip(gated, idle) if g) and sum(idle) > sum(gated)
    assert s.n_gated == 0  # its own decisions never went through the gate


@ILA_GROUP
def test_ila_keeps_its_decisions_with_a_gate_method():
    """ILA's thresholds moved to ``iasm`` so that ``gate`` is the Scheduler hook; ILA's own
    run does not call it (n_gated stays 0) and ``ila-gate+fair`` decides otherwise."""
    s = registry.make("ila")
    a = mrgym.run_sim(_small(), s, 0)
    assert s.n_gated == 0 and s.n_rejected > 0 and hasattr(s.iasm, "admit")
    comp = registry.make("ila-gate+fair")
    b = mrgym.run_sim(_small(), comp, 0)
    assert comp.n_gated > 0 and not _same(a.metrics, b.metrics)


def test_a_composition_runs_in_the_gym_loop():
    env = gym.make("MRCluster-v0", config="ila72", overrides=SMALL)
    policy = mrgym.EnvPolicy("hybridmr-gate+srpt")
    # seed 1: HybridMR's gate closes on this small mix (232 launches gated; on seed 0, none)
    r = mrgym.run_episode(env, policy, 1)
    assert r.metrics["jobs_completed"] == 25 and r.invalid_actions == 0
    assert policy.scheduler.n_gated > 0


# -- the registry -----------------------------------------------------------------------------
def test_names_resolve_and_compositions_are_listed_apart():
    assert registry.available()[-5:] == SIMPLE
    for name in SIMPLE:
        assert registry.make(name).name == name
    comps = registry.compositions()
    assert len(comps) == 12 and "hybridmr-gate+srpt" in comps and "ila-gate+fair" in comps
    assert not set(comps) & set(registry.available())  # `compare --schedulers all` unchanged
    for name in comps:
        s = registry.make(name)
        assert isinstance(s, GatedScheduler) and s.name == name and not s.speculates
    s = registry.make(
        "HybridMR-Gate+WFair", order_params={"alpha": 0.5}, gater_params={"headroom": 0.3}
    )
    assert s.name == "hybridmr-gate+wfair" and s.order.alpha == 0.5
    assert s.gater.phase2.headroom == 0.3 and s.control_period_s == 3.0
    assert registry.make("hybridmr-gate+fair").order.speculation is False
    assert registry.composition("srpt") is None
    assert registry.composition("ila-gate+random") == ("ila", "random")


@pytest.mark.parametrize(
    "name,what",
    [
        ("foo-gate+srpt", "unknown gater 'foo'"),
        ("hybridmr-gate+lifo", "unknown order 'lifo'"),
        ("hybridmr+srpt", "a composition is '<gater>-gate+<order>'"),
        ("fair-gate+srpt", "unknown gater 'fair'"),
    ],
)
def test_bad_compositions_name_the_valid_parts(name, what):
    valid = (
        "gaters ['hybridmr', 'ila'], orders ['random', 'sjf', 'srpt', 'wfair', 'fair', 'hostcap']"
    )
    with pytest.raises(ValueError) as e:
        registry.make(name)
    assert what in str(e.value) and valid in str(e.value) and f"'{name}'" in str(e.value)
    with pytest.raises(ValueError, match="unknown order 'x'"):
        simple.compose("hybridmr", "x")


def test_the_cli_lists_and_compares_compositions(tmp_path):
    r = run_cli("schedulers")
    assert r.returncode == 0
    names = [line.split()[0] for line in r.stdout.splitlines()]  # then what each does
    assert names == registry.available() + registry.compositions()
    r = run_cli(
        "compare", "--config", "lee-gpu", "--seeds", "0", "--workers", "1",
        "--schedulers", "hybridmr-gate+srpt,srpt", "--out", str(tmp_path),
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "hybridmr-gate+srpt" in r.stdout and (tmp_path / "results.csv").exists()


# -- wfair's tuning -----------------------------------------------------------------------------
def test_tune_alpha_picks_the_lowest_mean_jct_on_validation_seeds(monkeypatch):
    calls = []

    def fake(sc, alpha, seed):
        calls.append((sc, alpha, seed))
        return 100.0 + (alpha - 0.5) ** 2 + seed % 2, True  # lowest at alpha = 0.5

    monkeypatch.setattr(simple, "_run_mean_jct", fake)
    assert simple.tune_alpha("ila72") == 0.5
    assert {s for _, _, s in calls} == set(range(2000, 2010))
    assert sorted({a for _, a, _ in calls}) == [-1, -0.5, 0, 0.5, 1, 2]
    # a run that left a job unfinished rules its alpha out
    monkeypatch.setattr(simple, "_run_mean_jct", lambda sc, a, s: (1.0, a != 0.5))
    assert simple.alpha_sweep("ila72", [2000], (0.5, 1.0)) == {0.5: float("inf"), 1.0: 1.0}


def test_tune_alpha_runs_and_its_values_are_stored(monkeypatch, tmp_path):
    sc = scenario(ONE_SLOT, [{"profile": "grep", "maps": m, "reduces": 1} for m in (4, 2)])
    sweep = simple.alpha_sweep(sc, seeds=[2000, 2001], grid=(-1.0, 1.0))
    assert set(sweep) == {-1.0, 1.0} and all(0 < j < 1e4 for j in sweep.values())
    assert simple.tune_alpha(sc, seeds=[2000, 2001], grid=(-1.0, 1.0)) == min(sweep, key=sweep.get)
    monkeypatch.setattr(simple, "ALPHA_FILE", tmp_path / "alpha.json")
    simple.write_alpha({"mine": {-1.0: 90.0, 1.0: 80.0}}, [2000, 2001])
    assert simple.tuned_alpha("mine") == 1.0 and simple.tuned_alpha("other") == 1.0
    simple.write_alpha({"two": {-1.0: 70.0, 1.0: 80.0}}, [2000])
    data = json.loads((tmp_path / "alpha.json").read_text())
    assert data["alpha"] == {"mine": 1.0, "two": -1.0}  # earlier entries kept
    assert data["sweeps"]["two"] == {"seeds": [2000], "mean_jct_s": {"-1": 70.0, "1": 80.0}}
    assert simple.tuned_alpha("two") == -1.0
    simple._alpha_table.cache_clear()  # the next test reads the shipped file again


def test_the_shipped_alpha_file_reads():
    data = json.loads(simple.ALPHA_FILE.read_text())
    assert data["command"] == "python -m baselines.simple tune-alpha --write"
    for name, alpha in data["alpha"].items():
        assert simple.tuned_alpha(name) == alpha and alpha in simple.ALPHA_GRID
