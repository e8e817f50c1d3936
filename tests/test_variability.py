"""Variability mechanisms (issue 34): heavy-tailed per-attempt noise on every phase,
persistently slow VMs, and Hadoop 0.20/1.x's default speculation in the classic schedulers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mrgym.config import ScenarioError, load_scenario
from mrgym.registry import make
from mrgym.runner import build_simulation, run_sim
from mrgym.sim.params import ALL_OFF
from mrgym.sim.simulation import heavy_tail

TAIL = {"noise_tail_p": 0.05, "noise_tail_alpha": 1.5}


def _sim(scenario: str, execution: dict, seed: int = 0, sched: str = "fifo"):
    return build_simulation(load_scenario(scenario, {"execution": execution}), sched, seed)


def _noise(sim) -> np.ndarray:
    for j in sim.jobs:  # a job's noise is drawn when it arrives: draw every job's now
        sim.materialize(j)
    return np.array([t.noise for j in sim.jobs for t in (*j.maps, *j.reduces)])


def test_heavy_tail_hits_with_probability_p_and_has_the_pareto_shape():
    x = heavy_tail(np.random.default_rng(1), (50_000, 4), 0.05, 1.5)
    hit = x[x > 1.0]
    assert x.min() == 1.0
    assert hit.size / x.size == pytest.approx(0.05, abs=0.003)
    # Pareto(alpha, x_m = 1): log X is exponential with mean 1 / alpha, P(X > 2) = 2^-alpha
    assert np.log(hit).mean() == pytest.approx(1 / 1.5, rel=0.05)
    assert (hit > 2.0).mean() == pytest.approx(2**-1.5, abs=0.02)


def test_tail_multiplies_the_log_normal_draws_without_shifting_them():
    base, tail = _noise(_sim("ila72", {"noise_tail_p": 0.0})), _noise(_sim("ila72", TAIL))
    ratio = tail / base
    assert ratio.min() == pytest.approx(1.0)  # the log-normal draws are the same
    assert (ratio > 1.0 + 1e-12).mean() == pytest.approx(0.05, abs=0.015)


def test_same_seed_same_draws_for_two_policies():
    on = {**TAIL, "slow_vm_p": 0.2, "slow_vm_factor": 2.0}
    a, b = _sim("ila72", on, 3, "fifo"), _sim("ila72", on, 3, "fair")
    assert np.array_equal(_noise(a), _noise(b))
    assert a.tasks._slow_vm == b.tasks._slow_vm and a.tasks._slow_vm


def test_slow_vms_only_on_virtual_hosts_at_the_rate_p():
    slow = total = 0
    for seed in range(6):
        sim = _sim("hybrid48", {"slow_vm_p": 0.3, "slow_vm_factor": 2.5}, seed)
        virt = [v for v in sim.topo.vms if v.host.virtualized]
        assert all(sim.topo.vms[i].host.virtualized for i in sim.tasks._slow_vm)
        assert set(sim.tasks._slow_vm.values()) == {2.5}
        assert any(not v.host.virtualized for v in sim.topo.vms)  # natives exist, none slow
        slow += len(sim.tasks._slow_vm)
        total += len(virt)
    assert slow / total == pytest.approx(0.3, abs=0.06)


def test_slowness_is_hidden_from_the_vms_and_the_view():
    off, on = _sim("ila72", {}), _sim("ila72", {"slow_vm_p": 0.5, "slow_vm_factor": 3.0})
    assert on.tasks._slow_vm
    assert [vars(v).keys() for v in off.topo.vms] == [vars(v).keys() for v in on.topo.vms]
    assert not [k for k in dir(on.view) if "slow_vm" in k]


def _mean_map_s(r, vms: set[str] | None = None) -> float:
    d = [
        t.end - t.start
        for t in r.task_log
        if t.kind == "map" and t.outcome == "success" and (vms is None or t.vm in vms)
    ]
    return float(np.mean(d))


def test_a_slow_vm_runs_its_maps_about_factor_times_slower():
    ex = {"slow_vm_p": 0.5, "slow_vm_factor": 3.0}
    sim = _sim("ila72", ex)
    slow = {sim.topo.vms[i].name for i in sim.tasks._slow_vm}
    fair = make("fair", speculation=False)
    r = run_sim(load_scenario("ila72", {"execution": ex}), fair, 0)
    fast = {t.vm for t in r.task_log} - slow
    ratio = _mean_map_s(r, slow) / _mean_map_s(r, fast)
    assert 2.0 < ratio < 4.0


def test_compute_mode_is_todays_behaviour_and_all_stretches_io():
    sc = "ila72"
    fair = make("fair", speculation=False)
    # the other mechanisms off (ALL_OFF, whose noise_phases is "compute") and the noise of the
    # model before the fit (sigma 0.25; the fitted 0.017 stretches I/O by less than the
    # scheduling changes it causes move the mean)
    pre = {**ALL_OFF, "noise_sigma": 0.25}
    base = run_sim(load_scenario(sc, {"execution": pre}), fair, 1)
    io = run_sim(load_scenario(sc, {"execution": {**pre, "noise_phases": "all"}}), fair, 1)
    assert io.task_log != base.task_log
    # only draws > 1 stretch I/O (a flow never beats its link share): maps get slower
    assert _mean_map_s(io) > _mean_map_s(base)


@pytest.mark.parametrize(
    "key,value",
    [
        ("noise_phases", "io"),
        ("noise_tail_p", 1.5),
        ("noise_tail_alpha", 1.0),
        ("slow_vm_p", -0.1),
        ("slow_vm_factor", 0.5),
    ],
)
def test_bad_variability_keys_are_refused(key, value):
    with pytest.raises(ScenarioError, match=key):
        load_scenario("ila72", {"execution": {key: value}})


# -- Hadoop 0.20/1.x default speculation ---------------------------------------------------
@pytest.mark.parametrize("name", ["fifo", "fair", "delay", "capacity"])
def test_classic_schedulers_speculate_by_default_and_can_be_turned_off(name):
    assert make(name).speculates and not make(name, speculation=False).speculates
    r = run_sim("ila72", make(name, speculation=False), 0)
    assert r.metrics["speculative_attempts"] == 0


def test_hadoop_speculation_follows_the_60_s_lag_and_one_backup_per_task():
    r = run_sim("ila72", "fair", 0)
    # 74 backups on the calibrated default model (seed 0)
    assert r.metrics["speculative_attempts"] >= 3
    by_task: dict = {}
    for t in r.task_log:
        by_task.setdefault((t.job, t.kind, t.task), []).append(t)
    for atts in by_task.values():
        backups = [a for a in atts if a.speculative]
        assert len(backups) <= max(0, len(atts) - 1)
        for b in backups:
            first = min(a.start for a in atts if not a.speculative and a.start <= b.start)
            assert b.start - first >= 60.0 - 1e-9
            assert b.vm not in {a.vm for a in atts if a is not b and a.start <= b.start}


def test_late_and_dl_sched_keep_their_own_speculation():
    assert make("late").speculates and not make("late").speculation
    assert not make("dl-sched").speculates


def test_probe_claim_quick(tmp_path: Path):
    from mrgym.reproduce.claims.probe_variability import probe_variability

    res = probe_variability([0], tmp_path, quick=True)
    off, on = res.data["off"], res.data["on"]
    assert on[0] > off[0] and on[1] > off[1]
    assert res.verdict in ("reproduced", "same direction")


def test_pooled_dispersion_of_a_task_log():
    from types import SimpleNamespace as R

    from mrgym.reproduce.claims.probe_variability import map_dispersion, pooled_dispersion

    # job 0: 100 maps of 1..100 s (median 50.5); job 1 too small to count
    log = [R(kind="map", job=0, outcome="success", start=0.0, end=float(i)) for i in range(1, 101)]
    log += [R(kind="map", job=1, outcome="success", start=0.0, end=500.0)]
    log += [R(kind="map", job=0, outcome="killed", start=0.0, end=1e6)]
    p90, p99, n = pooled_dispersion(log, min_maps=100)
    assert n == 100
    assert p90 == pytest.approx(np.percentile(np.arange(1, 101), 90) / 50.5)
    assert p99 == pytest.approx(np.percentile(np.arange(1, 101), 99) / 50.5)
    assert map_dispersion(log, 0) == pytest.approx((p90, p99))
    with pytest.raises(ValueError, match="min_maps"):
        pooled_dispersion(log, min_maps=1000)
