"""HybridMR's I/O gate never closes an idle disk (baselines/hybridmr_phase2.py, Phase2.admits).

The gate's exponential model learns from busy disks only.  After host failures a poor fit
gave eff(1) = 0.38 < io_min_eff 0.5: every virtual host refused every map, no new
observation could correct the fit, and the jobs placed in the virtual pool waited until the
time cap (36 000 s)."""

from __future__ import annotations

import dataclasses

from helpers import with_dynamics as _with_dynamics

from baselines.hybridmr_phase2 import IoModel
from mrgym.config import load_scenario
from mrgym.runner import build_simulation
from mrgym.sim.scheduler import MAP


def _failing_hybrid48():
    data = _with_dynamics("hybrid48")
    data.setdefault("execution", {})["parallel_copies"] = 1
    return load_scenario(data)


def test_jobs_in_the_virtual_pool_finish_after_a_poor_io_fit():
    sim = build_simulation(_failing_hybrid48(), "hybridmr", 2)
    sim.run()
    assert not sim.truncated
    assert all(j.finish_s is not None or j.failed_s is not None for j in sim.jobs)
    assert sim.env.now < 2000  # it used to run to the 36 000 s cap


def test_the_gate_admits_an_idle_disk_and_still_gates_a_busy_one(monkeypatch):
    sim = build_simulation("hybrid48", "hybridmr", 0)
    p2 = sim.scheduler.phase2
    p2.io = IoModel(a=0.3, b=0.08, k=0.5)  # eff(1) = 0.38: the fit the failing run learned
    vm = next(v for v in sim.topo.workers if v.host.virtualized)

    class Ctx:
        slot_kind = MAP
        view = sim.view

    Ctx.vm = vm
    streams = {"n": 0}
    real = sim.view.host_metrics

    def metrics(host):
        return dataclasses.replace(real(host), disk_streams=streams["n"])

    monkeypatch.setattr(sim.view, "host_metrics", metrics)
    assert p2.admits(Ctx())  # no stream: nothing to interfere with
    streams["n"] = 1
    assert not p2.admits(Ctx())  # eff(2) < 0.5: gated as before
