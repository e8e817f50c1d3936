"""hostcap (baselines/hostcap.py): a random legal launch under a cap on the tasks of the slot's
kind that the asking VM's host runs; its fraction tuned on validation seeds only."""

from __future__ import annotations

import json
from collections import defaultdict
from types import SimpleNamespace

import pytest

import mrgym
from baselines import hostcap
from baselines.hostcap import HostCapScheduler, host_cap, tuned_frac
from baselines.simple import DEFAULT_ALPHA, tuned_alpha
from mrgym import registry
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.scheduler import MAP, REDUCE

SMALL = {"workload.scale_maps_to": 300}  # ila72's job mix shrunk: an episode in about 1 s


def test_the_cap_is_the_floor_of_the_fraction_of_the_hosts_slots_and_at_least_one():
    # ila72's hosts: 6 VMs x 2 map slots, x 1 reduce slot
    assert [host_cap(f, 12) for f in hostcap.FRAC_GRID] == [6, 7, 9, 10, 12]
    assert [host_cap(f, 6) for f in hostcap.FRAC_GRID] == [3, 3, 4, 5, 6]
    assert host_cap(0.5, 1) == 1 and host_cap(0.1, 4) == 1  # a host may always run one


def _ctx(running: list[str], kind=MAP):
    """A slot of ``kind`` on a host of 2 VMs with 2 map and 1 reduce slots each, running
    tasks of the kinds in ``running``; jobs 7 and 8 can launch."""
    attempts = [SimpleNamespace(task=SimpleNamespace(kind=k)) for k in running]  # VM.running
    # is a dict of attempts; iterating a list gives the same attempts
    vms = [
        SimpleNamespace(map_slots=2, reduce_slots=1, running=attempts[:2]),
        SimpleNamespace(map_slots=2, reduce_slots=1, running=attempts[2:]),
    ]
    host = SimpleNamespace(vms=vms)
    for v in vms:
        v.host = host
    jobs = [SimpleNamespace(id=7), SimpleNamespace(id=8)]
    return SimpleNamespace(
        slot_kind=kind,
        vm=vms[0],
        jobs=jobs,
        can_launch=lambda job, k: True,
        view=SimpleNamespace(scenario=SimpleNamespace(name="test")),
    )


def test_declines_at_the_hosts_cap_of_that_kind_and_launches_below_it():
    s = HostCapScheduler(frac=0.75)  # 4 map slots -> cap 3; 2 reduce slots -> cap 1
    s.reset(0)
    assert s.decide(_ctx([MAP, MAP, MAP])).declines  # 3 maps on the host: at the cap
    d = s.decide(_ctx([MAP, MAP, REDUCE]))  # 2 maps: below it, reduces do not count
    assert not d.declines and d.kind == MAP and d.job in (7, 8)
    assert s.decide(_ctx([MAP, REDUCE], kind=REDUCE)).declines  # 1 reduce: cap 1
    assert not s.decide(_ctx([MAP, MAP, MAP], kind=REDUCE)).declines
    # no cap: random itself, which declines only where no job can launch
    assert not HostCapScheduler(frac=1.0).decide(_ctx([MAP, MAP, MAP, MAP])).declines


@pytest.mark.parametrize("bad", [0, -0.5, 1.5, True, "0.5", float("nan")])
def test_a_bad_fraction_is_refused_naming_the_key(bad):
    with pytest.raises(ValueError, match=r"hostcap.frac: expected a number in \(0, 1\]"):
        HostCapScheduler(frac=bad)


@pytest.fixture
def frac_file(tmp_path, monkeypatch):
    """A table of tuned fractions of the test's own (the committed one's cache restored)."""
    f = tmp_path / "hostcap_frac.json"
    monkeypatch.setattr(hostcap, "FRAC_FILE", f)
    hostcap._frac_table.cache_clear()
    yield f
    hostcap._frac_table.cache_clear()


def test_the_tuned_fraction_is_per_scenario_and_gater_else_no_cap(frac_file):
    frac_file.write_text(json.dumps({"frac": {"sc": 0.75, "sc@hybridmr": 0.875}}))
    assert tuned_frac("sc", "hybridmr") == 0.875
    assert tuned_frac("sc") == 0.75
    assert tuned_frac("sc", "ila") == 1.0  # tuned alone, not under ILA's gate: no cap
    assert tuned_frac("other") == 1.0  # none tuned: no cap


def test_the_committed_value_reaches_a_run_and_reset_restores_it():
    s = registry.make("hybridmr-gate+hostcap")
    assert s.order.frac is None  # looked up at the first slot
    sc = mrgym.load_scenario("ila72", SMALL)  # still named ila72: the committed value
    run_sim(sc, s, 1)
    assert s.order._frac == tuned_frac("ila72", "hybridmr") < 1.0  # a cap, not the default
    s.order._frac = 0.5  # a stale value from another scenario...
    s.reset(2)
    assert s.order._frac is None  # ...is looked up again
    assert registry.make("hostcap").decide is not None and tuned_frac("ila72") == 1.0


def test_a_transfer_run_takes_the_value_tuned_for_its_base_scenario():
    from agents.analysis.generalize import baseline

    sc = mrgym.load_scenario("ila72", {**SMALL, "name": "swim-ila72-w1"})
    plain = registry.make("hybridmr-gate+hostcap")
    run_sim(sc, plain, 1)
    assert plain.order._frac == 1.0  # the window's own name has no tuned value: no cap
    moved = baseline("hybridmr-gate+hostcap", "ila72")
    assert moved.order.tuned_for == "ila72"
    run_sim(sc, moved, 1)
    assert moved.order._frac == tuned_frac("ila72", "hybridmr") < 1.0
    assert baseline("fair", "ila72").name == "fair"  # nothing tuned by name: unchanged
    # wfair's exponent is tuned by name too
    assert tuned_alpha("ila72") != DEFAULT_ALPHA
    w = baseline("wfair", "ila72")
    run_sim(sc, w, 1)
    assert w._alpha == tuned_alpha("ila72")
    w0 = registry.make("wfair")
    run_sim(sc, w0, 1)
    assert w0._alpha == DEFAULT_ALPHA
    with pytest.raises(ValueError, match="hostcap.tuned_for: expected a scenario name"):
        HostCapScheduler(tuned_for="")
    with pytest.raises(ValueError, match="wfair.tuned_for: expected a scenario name"):
        registry.make("wfair", tuned_for=3)


def test_generalization_runs_build_their_baselines_tuned_for_the_base_config(monkeypatch):
    from agents.analysis import generalize

    got = []

    def fake_evaluate(policies, scenarios, seeds, **kw):
        got.append((policies, [s.name for s in scenarios]))
        return []

    monkeypatch.setattr(generalize, "evaluate", fake_evaluate)
    monkeypatch.setattr(generalize, "WORKLOADS", {"renamed": lambda seed, d: ("ila72", SMALL)})
    generalize.run_rows({}, ["hybridmr-gate+hostcap", "wfair"], [0, 1], None, ["renamed"])
    assert len(got) == 2  # a fresh set of baselines per seed
    for policies, _ in got:
        fair, capped, wfair = policies
        assert fair.name == "fair"  # the reference, added first
        assert capped.order.tuned_for == "ila72" and wfair.tuned_for == "ila72"


def test_a_composition_tells_the_order_its_gater():
    s = registry.make("hybridmr-gate+hostcap", order_params={"frac": 0.5})
    assert s.name == "hybridmr-gate+hostcap" and s.stochastic and not s.speculates
    assert s.order.gater == "hybridmr" and s.order.frac == 0.5
    assert registry.make("hostcap").gater is None


def _peak_per_host(sim, kind: str) -> int:
    """The most tasks of ``kind`` that ran at once on one host over the whole run."""
    events = defaultdict(list)
    for a in sim.attempts:
        if a.task.kind == kind:
            events[a.vm.host.id] += [(a.start_s, 1), (a.end_s, -1)]
    peak = 0
    for evs in events.values():
        level = 0
        for _, d in sorted(evs):  # an end before a start at the same instant
            level += d
            peak = max(peak, level)
    return peak


def test_a_whole_run_never_exceeds_the_cap_and_finishes_every_job():
    sc = mrgym.load_scenario("ila72", SMALL)
    free = build_simulation(sc, HostCapScheduler(frac=1.0), 3)
    free.run()
    capped = build_simulation(sc, HostCapScheduler(frac=0.5), 3)
    capped.run()
    assert _peak_per_host(free, MAP) == 12  # uncapped, some host fills its 12 map slots
    assert _peak_per_host(capped, MAP) <= 6 and _peak_per_host(capped, REDUCE) <= 3
    for sim in (free, capped):
        assert all(j.finish_s is not None for j in sim.jobs)


def test_no_cap_is_random_itself_and_a_seed_gives_the_same_run():
    sc = mrgym.load_scenario("ila72", SMALL)
    a = run_sim(sc, HostCapScheduler(frac=1.0), 5).metrics
    assert a == run_sim(sc, "random", 5).metrics
    b = run_sim(sc, HostCapScheduler(frac=0.5), 5).metrics
    assert b == run_sim(sc, HostCapScheduler(frac=0.5), 5).metrics
    assert b["mean_jct_s"] != a["mean_jct_s"]


def test_a_sweeps_runs_are_the_benchmarks_samples_and_tuning_writes_the_best(frac_file):
    from mrgym.benchmark.protocol import policy_seed
    from mrgym.benchmark.sampling import SampleTask, run_sample

    sc = mrgym.load_scenario("ila72", SMALL)
    sweep = hostcap.frac_sweep(sc, None, seeds=[2000], grid=[0.5, 1.0], samples=2)
    assert set(sweep) == {0.5, 1.0} and all(v > 0 for v in sweep.values())
    # each value is the mean of the runs `mrgym benchmark` makes of a stochastic policy:
    # episode seed 2000, samples j = 0, 1 drawing from policy_seed(2000, j)
    bench = [
        run_sample(SampleTask(0, 0, HostCapScheduler(0.5), sc, 2000, j, policy_seed(2000, j)))
        for j in range(2)
    ]
    assert sweep[0.5] == pytest.approx(sum(r.values["mean_jct_s"] for r in bench) / 2)
    best = min(sweep, key=sweep.__getitem__)
    hostcap.write_frac("ila72-small", sweep, [2000], 2)
    data = json.loads(frac_file.read_text())
    assert data["frac"] == {"ila72-small": best}
    assert data["sweeps"]["ila72-small"]["seeds"] == [2000]
    assert data["sweeps"]["ila72-small"]["samples"] == 2
    assert tuned_frac("ila72-small") == best


def test_equal_values_pick_the_least_capping_and_test_seeds_are_refused(frac_file, monkeypatch):
    real_sweep = hostcap.frac_sweep
    monkeypatch.setattr(hostcap, "frac_sweep", lambda *a, **k: {0.5: 9.0, 0.75: 7.0, 1.0: 7.0})
    assert hostcap.tune_frac("sc") == 1.0  # a tie: no more capping than needed
    hostcap.write_frac("sc", {0.5: 9.0, 0.75: 7.0, 0.875: 7.0}, [2000], 1)
    assert tuned_frac("sc") == 0.875
    with pytest.raises(ValueError, match="the test seeds 3000-3009 choose nothing"):
        real_sweep("ila72", None, seeds=[2000, 3004], grid=[1.0], samples=1)


def test_around_an_agent_the_composition_gates_the_slots_at_the_cap():
    """``env.hooks: hybridmr-gate+hostcap`` with ``hooks_gate``: the agent is asked only
    about slots whose host runs fewer than the cap of that kind (here 6 maps, 3 reduces)."""
    pytest.importorskip("sb3_contrib")
    from agents.env_hooks import make_env

    kw = {"config": mrgym.load_scenario("ila72", SMALL), "queue_order": "deficit"}
    env = make_env({**kw, "work_conserving": "cluster", "hooks_gate": True}, hooks=None)
    env.unwrapped.set_hooks(
        registry.make("hybridmr-gate+hostcap", order_params={"frac": 0.5}), decides=False
    )
    env.reset(seed=4)
    u, steps, at_cap = env.unwrapped, 0, []
    while True:
        vms = u._vm.host.vms
        running = sum(1 for v in vms for a in v.running if a.task.kind == u._kind)
        at_cap.append(running >= (6 if u._kind == MAP else 3))
        launch = [a for a in range(u.codec.decline) if u.action_masks()[a]]
        _, _, term, trunc, _ = env.step(launch[0] if launch else u.codec.decline)
        steps += 1
        if term or trunc:
            break
    assert steps > 100 and not any(at_cap)
    assert u._proxy.hooks.n_gated > 0  # the cap declined slots the agent never saw
    assert _peak_per_host(u.sim, MAP) <= 6
