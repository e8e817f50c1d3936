"""ILA's interference gate as the scheduler wires it (ILA §4.4, Algorithm 1): the slowdown
it predicts, normalised by the same task's prediction on an idle server, and the server's
running (Z_R) and idle (Z_I) map slots handed to the threshold test in that order.

The model is set by hand (eqs. 1-3 with round coefficients) and the system information
N_info is given, so every expected number below is worked out in the comments, not read
from the code under test."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import cluster, scenario

import baselines.ila as ila
from baselines.ila import IlaScheduler
from baselines.ila_model import ExpTerm, InterferenceModel
from baselines.ila_profile import CPU_FEATURES, FEATURES, IO_FEATURES, Demand
from mrgym.config import load_scenario
from mrgym.sim.scheduler import DECLINE, MAP
from mrgym.sim.simulation import Simulation

# one server, two VMs of two map slots each: Z_R + Z_I = 4
SERVER = cluster([{"count": 1, "type": "xen-12core", "vms_per_host": 2}])
JOB = [{"profile": "grep", "maps": 4, "reduces": 0, "input_mb": 512}]
T_C = 1.0  # the task's CPU demand (eq. 7's init, given below)


def hand_model() -> InterferenceModel:
    """eq. 1: S_cpu = 1·exp(ln2·t_c + ln2·c_u) + 0 = 2^(t_c + c_u); eq. 2: S_io = 0·exp(.) +
    0.5; eq. 3 with α = β = 1, C_3 = 0: S = 2^(t_c + c_u) + 0.5."""
    g = np.zeros(len(CPU_FEATURES))
    g[CPU_FEATURES.index(FEATURES.index("t_c"))] = math.log(2)
    g[CPU_FEATURES.index(FEATURES.index("c_u"))] = math.log(2)
    cpu = ExpTerm(np.array(CPU_FEATURES), 1.0, g, 0.0)
    io = ExpTerm(np.array(IO_FEATURES), 0.0, np.zeros(len(IO_FEATURES)), 0.5)
    return InterferenceModel(cpu, io, alpha=1.0, beta=1.0, C_3=0.0)


class _HandIla(IlaScheduler):
    """ILA with the hand-set model in place of the one trained in the simulator."""

    def _ensure_model(self, view) -> None:
        if self.model is not None:
            return
        self.model = hand_model()
        self._ts = SimpleNamespace(alone_s={})  # no profiled alone times: no online refits
        n = len(FEATURES)
        self._lo, self._hi = np.zeros(n), np.full(n, 10.0)  # the "training range"
        self.profiler.init = Demand(T_C, 0.0, 0.0)
        self.profiler.interval_s = view.heartbeat_s


def _info(c_u: float) -> np.ndarray:
    """N_info (c_u, c_a, c_0, r_u, w_u, r_a, w_a, io_u) with only the VM's own CPU busy."""
    return np.array([c_u, 0, 0, 0, 0, 0, 0, 0], dtype=float)


def _setup(monkeypatch, c_u: float):
    """A simulation at its first map request, ILA with the hand model, N_info given, and a
    log of the (Ŝ, Z_R, Z_I) each gate call receives."""
    monkeypatch.setattr(ila, "node_info", lambda view, vm: _info(c_u))
    sched = _HandIla()
    sim = Simulation(load_scenario(scenario(SERVER, JOB)), sched, 0)
    vm = sim.advance()
    assert vm is not None and vm.map_slots == 2 and len(vm.host.vms) == 2
    sched._ensure_model(sim.view)
    calls: list[tuple[float, int, int]] = []
    admit = sched.iasm.admit

    def spy(s_hat, host_id, z_r, z_i, now):
        calls.append((s_hat, z_r, z_i))
        return admit(s_hat, host_id, z_r, z_i, now)

    sched.iasm.admit = spy
    return sched, sim, vm, calls


def _decide(sched, sim, vm, now: float):
    ctx = sim.context(vm, MAP)
    ctx.now = now
    return sched._decide(ctx)


def _launched(decision) -> bool:
    return decision is not DECLINE


def test_idle_server_prediction_is_normalised_to_one(monkeypatch):
    # idle server (N_info all 0): S = 2^(1 + 0) + 0.5 = 2.5 both for the task and for its
    # idle-server reference, so Ŝ = 2.5 / 2.5 = 1 = H: "no task slowdown due to
    # interference" (§4.4), admitted at once by the static threshold.  Unnormalised, Ŝ
    # would be 2.5 > H and the idle server would turn the task away.
    sched, sim, vm, calls = _setup(monkeypatch, c_u=0.0)
    assert _launched(_decide(sched, sim, vm, sim.env.now))
    assert calls[0][0] == pytest.approx(1.0, rel=1e-12)


def test_busy_server_prediction_is_over_the_idle_server_prediction(monkeypatch):
    # the VM's CPU fully busy (c_u = 1): S = 2^(1 + 1) + 0.5 = 4.5 against 2.5 on an idle
    # server (c_u = 0, same task demand t_c = 1): Ŝ = 4.5 / 2.5 = 1.8 > H = 1, rejected
    sched, sim, vm, calls = _setup(monkeypatch, c_u=1.0)
    assert not _launched(_decide(sched, sim, vm, sim.env.now))
    assert calls[0][0] == pytest.approx(4.5 / 2.5, rel=1e-12)


def test_gate_sees_running_and_idle_slots_all_idle(monkeypatch):
    # all four slots idle: Z_R = 0, Z_I = 4 > 1.  Ŝ = 1.8 (as above).  Algorithm 1: before
    # k = 20 s of Z_I > 1 the static H = 1 rejects; at 20 s the dynamic threshold accepts,
    # as (Z_R + 1)/Ŝ = 1/1.8 > Z_R/H_d = 0 and Ŝ = 1.8 > H_d = 1.  (Z_R and Z_I swapped,
    # Z_I = 0 is never > 1: the static threshold would reject at 20 s too.)
    sched, sim, vm, calls = _setup(monkeypatch, c_u=1.0)
    t0 = sim.env.now
    assert not _launched(_decide(sched, sim, vm, t0))
    assert not _launched(_decide(sched, sim, vm, t0 + 19.9))
    assert _launched(_decide(sched, sim, vm, t0 + 20.0))
    assert [(z_r, z_i) for _s, z_r, z_i in calls] == [(0, 4)] * 3
    assert sched.iasm.servers[vm.host.id].h_d == pytest.approx(1.8)  # H_d = Ŝ


def test_gate_sees_running_and_idle_slots_mostly_running(monkeypatch):
    # three slots running, one idle (the other VM full, this one half): Z_R = 3, Z_I = 1.
    # Z_I > 1 never holds, so the static H = 1 rejects Ŝ = 1.8 however long it waits.
    # (Swapped, Z_I = 3 for 20 s: (1 + 1)/1.8 = 1.11 > 1/1 and 1.8 > 1 would accept.)
    sched, sim, vm, calls = _setup(monkeypatch, c_u=1.0)
    other = next(v for v in vm.host.vms if v is not vm)
    vm.free_map, other.free_map = 1, 0
    t0 = sim.env.now
    for dt in (0.0, 20.0, 60.0):
        assert not _launched(_decide(sched, sim, vm, t0 + dt))
    assert [(z_r, z_i) for _s, z_r, z_i in calls] == [(3, 1)] * 3
