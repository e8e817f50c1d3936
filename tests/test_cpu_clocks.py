"""The per-VM compute clocks of a CpuPool (cpu.py) against a brute-force model.

The reference recomputes every running phase's rate from the sharing rule at every event
(a VM's n phases get min(1, cap / n) cores each, everything scaled down once the host's
demand exceeds its cores, a co-runner penalty per extra phase, times the phase's factor)
and steps to the next start, throttle or finish; the engine re-times one clock per VM.
Both must give the same completion times, up to floating-point rounding.
"""

from __future__ import annotations

import math

import numpy as np
import simpy
from helpers import StubHost, StubType, StubVM

from mrgym.sim.cpu import CpuPool
from mrgym.sim.execution import FluidEngine
from mrgym.sim.params import ModelParams

CORES, SPEED, PENALTY = 4.0, 1.3, 0.05


def _workload(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    phases = [
        (
            float(rng.uniform(0, 30)),  # start time
            int(rng.integers(0, 3)),  # VM
            float(rng.uniform(1, 25)),  # core-seconds
            float(rng.uniform(0.5, 1.5)),  # factor
        )
        for _ in range(n)
    ]
    phases += [(5.0, 1, 10.0, 1.0)] * 3  # equal phases starting together: ties
    throttles = [(12.0, 0, 0.5), (20.0, 2, 1.5), (26.0, 0, None)]  # (time, VM, cap)
    return phases, throttles


def _setup():
    env = simpy.Environment()
    params = ModelParams(corunner_penalty=PENALTY)
    eng = FluidEngine(env, params)
    host = StubHost(type=StubType(cores=CORES, core_speed=SPEED))
    host.cpu = CpuPool(host, eng, params)
    vms = [StubVM(i, host) for i in range(3)]
    return env, eng, host, vms


def _engine_finish_times(phases, throttles) -> tuple[list[float], list[tuple]]:
    env, eng, host, vms = _setup()
    done = [math.nan] * len(phases)
    granted: list[tuple] = []  # (phase, cores) seen just after each throttle

    def start(i, t0, vm, core_s, factor):
        yield env.timeout(t0)
        w = eng.compute(vms[vm], core_s, factor)
        works[i] = w
        yield w.event
        done[i] = env.now

    def throttle(t0, vm, cap):
        yield env.timeout(t0)
        vms[vm].cpu_cap = cap
        host.cpu.recompute(env.now)
        eng.kick()
        granted.extend((i, w.cores) for i, w in sorted(works.items()) if w.active)

    works: dict = {}
    for i, p in enumerate(phases):
        env.process(start(i, *p))
    for t in throttles:
        env.process(throttle(*t))
    env.run()
    assert not host.cpu.works and all(w.cores == 0.0 for w in works.values())
    return done, granted


def _shares(running, phases, caps):
    count = {}
    for i in running:
        count[phases[i][1]] = count.get(phases[i][1], 0) + 1
    d = {i: min(1.0, (caps[phases[i][1]] or 2.0) / count[phases[i][1]]) for i in running}
    demand = sum(d.values())
    scale = 1.0 if demand <= CORES else CORES / demand
    pen = (1.0 - PENALTY) ** (len(running) - 1) if len(running) > 1 else 1.0
    return d, scale, pen


def _reference_finish_times(phases, throttles) -> tuple[list[float], list[tuple]]:
    left = {i: p[2] for i, p in enumerate(phases)}
    started: set[int] = set()
    caps = [None, None, None]
    pending = sorted(throttles, key=lambda t: t[0])
    done = [math.nan] * len(phases)
    granted: list[tuple] = []
    now = 0.0
    while left:
        while pending and pending[0][0] <= now + 1e-12:
            _, vm, cap = pending.pop(0)
            caps[vm] = cap
            d, scale, _ = _shares(sorted(started & left.keys()), phases, caps)
            granted.extend((i, d[i] * scale) for i in sorted(d))
        for i, p in enumerate(phases):
            if i in left and i not in started and p[0] <= now + 1e-12:
                started.add(i)
        running = sorted(started & left.keys())
        d, scale, pen = _shares(running, phases, caps)
        rate = {i: d[i] * SPEED * scale * pen * phases[i][3] for i in running}
        nxt = [p[0] for i, p in enumerate(phases) if i not in started]
        nxt += [t[0] for t in pending]
        nxt += [now + left[i] / rate[i] for i in running]
        t = min(nxt)
        for i in running:
            left[i] -= rate[i] * (t - now)
        now = t
        for i in running:
            if left[i] <= 1e-9:
                done[i] = now
                del left[i]
    return done, granted


def test_vm_clocks_match_the_brute_force_model():
    for seed in range(4):
        phases, throttles = _workload(seed)
        got, got_cores = _engine_finish_times(phases, throttles)
        want, want_cores = _reference_finish_times(phases, throttles)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
        assert [i for i, _ in got_cores] == [i for i, _ in want_cores]
        np.testing.assert_allclose(
            [c for _, c in got_cores], [c for _, c in want_cores], rtol=1e-12
        )


def test_a_suspended_phase_keeps_its_progress_and_shows_no_cores():
    env, eng, host, vms = _setup()
    a = eng.compute(vms[0], 10.0)
    b = eng.compute(vms[0], 10.0)
    env.run(until=2.0)
    pen = 1.0 - PENALTY
    assert a.cores == b.cores == 1.0
    assert math.isclose(a.remaining_at(2.0), 10.0 - 2.0 * SPEED * pen, rel_tol=1e-12)
    eng.suspend(b)
    assert b.cores == 0.0 and b.rate_now() == 0.0
    assert math.isclose(b.remaining, 10.0 - 2.0 * SPEED * pen, rel_tol=1e-12)
    env.run(until=3.0)
    assert math.isclose(b.remaining, 10.0 - 2.0 * SPEED * pen, rel_tol=1e-12)
    assert a.rate_now() == SPEED  # alone: no co-runner penalty
    eng.resume(b)
    finish = {}
    a.event.callbacks.append(lambda _e: finish.setdefault("a", env.now))
    b.event.callbacks.append(lambda _e: finish.setdefault("b", env.now))
    env.run()
    # a: 2 s shared, 1 s alone, then shared until it finishes; b then has SPEED left, alone
    t_a = 3.0 + (10.0 - 2.0 * SPEED * pen - SPEED) / (SPEED * pen)
    assert math.isclose(finish["a"], t_a, rel_tol=1e-12)
    assert math.isclose(finish["b"], t_a + 1.0, rel_tol=1e-12)
