"""The per-CpuPool compute clock (cpu.py, execution.py, work.py) through every event a
phase meets.

The compute tests drive a FluidEngine with stub hosts/VMs through starts, suspends,
resumes, cancels, throttles and a live-migration-like move, and compare completion times
and granted cores with a brute-force model that recomputes every rate at every event.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy
from helpers import StubHost as _Host
from helpers import StubType as _Type
from helpers import StubVM as _VM

from mrgym.sim.cpu import CpuPool
from mrgym.sim.execution import FluidEngine
from mrgym.sim.params import ModelParams


# -- stubs ------------------------------------------------------------------------------
def _engine(penalty: float):
    env = simpy.Environment()
    params = ModelParams(corunner_penalty=penalty)
    return env, FluidEngine(env, params)


def _host(eng, cores=4.0, speed=1.3):
    h = _Host(type=_Type(cores=cores, core_speed=speed))
    h.cpu = CpuPool(h, eng, eng.params)
    return h


def _finish_times(env, works):
    done = {}
    for k, w in works.items():
        w.event.callbacks.append(lambda _e, k=k: done.setdefault(k, env.now))
    return done


# -- brute-force reference for one host -----------------------------------------------
def _shares(running, vm_of, caps, vcpus, cores):
    count: dict[int, int] = {}
    for i in running:
        count[vm_of[i]] = count.get(vm_of[i], 0) + 1
    d = {}
    for i in running:
        cap = caps[vm_of[i]] if caps[vm_of[i]] is not None else vcpus
        d[i] = min(1.0, cap / count[vm_of[i]])
    demand = sum(d.values())
    scale = 1.0 if demand <= cores else cores / demand
    return d, scale


def _reference(events, n_vms, penalty, cores, speed, vcpus=2.0):
    """events: sorted (t, op, args).  Returns finish times and cores seen after each op."""
    left: dict[int, float] = {}
    vm_of: dict[int, int] = {}
    factor: dict[int, float] = {}
    state: dict[int, str] = {}
    caps: list = [None] * n_vms
    done: dict[int, float] = {}
    seen: list = []
    now, k = 0.0, 0
    while True:
        running = sorted(i for i, s in state.items() if s == "run")
        d, scale = _shares(running, vm_of, caps, vcpus, cores)
        pen = (1.0 - penalty) ** (len(running) - 1) if len(running) > 1 else 1.0
        rate = {i: d[i] * scale * speed * pen * factor[i] for i in running}
        nxt = [events[k][0]] if k < len(events) else []
        nxt += [now + left[i] / rate[i] for i in running if rate[i] > 0]
        if not nxt:
            return done, seen
        t = min(nxt)
        for i in running:
            left[i] -= rate[i] * (t - now)
        now = t
        for i in running:
            if left[i] <= 1e-9:
                state[i] = "done"
                done[i] = now
        while k < len(events) and events[k][0] <= now:
            _, op, a = events[k]
            k += 1
            if op == "start":
                i, vm, core_s, f = a
                vm_of[i], left[i], factor[i], state[i] = vm, core_s, f, "run"
            elif op == "cap":
                caps[a[0]] = a[1]
            else:
                i = a[0]
                s = state.get(i)
                if op == "suspend" and s == "run":
                    state[i] = "sus"
                elif op == "resume" and s == "sus":
                    state[i] = "run"
                elif op == "cancel" and s == "run":
                    state[i] = "cancelled"
            running = sorted(i for i, s in state.items() if s == "run")
            d, scale = _shares(running, vm_of, caps, vcpus, cores)
            seen.append(tuple((i, d[i] * scale) for i in running))


def _run_engine(events, n_vms, penalty, cores, speed):
    env, eng = _engine(penalty)
    host = _host(eng, cores, speed)
    vms = [_VM(j, host) for j in range(n_vms)]
    works: dict[int, object] = {}
    done: dict[int, float] = {}
    seen: list = []
    cancelled: set[int] = set()

    def proc(t, op, a):
        yield env.timeout(t)
        if op == "start":
            i, vm, core_s, f = a
            w = eng.compute(vms[vm], core_s, f)
            works[i] = w
            w.event.callbacks.append(lambda _e, i=i: done.setdefault(i, env.now))
        elif op == "cap":
            vms[a[0]].cpu_cap = a[1]
            host.cpu.recompute(env.now)
            eng.kick()
        else:
            w = works.get(a[0])
            if w is not None and a[0] not in cancelled:  # a killed attempt's work stays dead
                if op == "cancel" and w.active:
                    cancelled.add(a[0])
                getattr(eng, op)(w)
        seen.append(tuple((i, w.cores) for i, w in sorted(works.items()) if w.active))

    for t, op, a in events:
        env.process(proc(t, op, a))
    env.run()
    return done, seen, host, works


def _random_events(seed: int, n_vms: int = 3, n: int = 24):
    rng = np.random.default_rng(seed)
    ev = []
    for i in range(n):
        ev.append(
            (
                float(rng.uniform(0, 30)),
                "start",
                (
                    i,
                    int(rng.integers(n_vms)),
                    float(rng.uniform(1, 20)),
                    float(rng.uniform(0.5, 1.5)),
                ),
            )
        )
    for _ in range(18):
        op = ("suspend", "resume", "resume", "cancel")[int(rng.integers(4))]
        ev.append((float(rng.uniform(0, 45)), op, (int(rng.integers(n)),)))
    for _ in range(6):
        cap = (0.25, 0.5, 1.0, 1.5, 3.0, None)[int(rng.integers(6))]
        ev.append((float(rng.uniform(0, 45)), "cap", (int(rng.integers(n_vms)), cap)))
    ev.sort(key=lambda e: e[0])
    return ev


@pytest.mark.parametrize("seed", range(6))
def test_suspend_resume_cancel_and_throttle_match_the_brute_force_model(seed):
    events = _random_events(seed)
    got, got_seen, host, works = _run_engine(events, 3, 0.05, 4.0, 1.3)
    want, want_seen = _reference(events, 3, 0.05, 4.0, 1.3)
    assert sorted(got) == sorted(want)
    for i in want:
        assert math.isclose(got[i], want[i], rel_tol=1e-9, abs_tol=1e-9), (i, got[i], want[i])
    assert len(got_seen) == len(want_seen)
    for g, w in zip(got_seen, want_seen):
        assert [i for i, _ in g] == [i for i, _ in w]
        np.testing.assert_allclose([c for _, c in g], [c for _, c in w], rtol=1e-12)
    # whatever is left is suspended: nothing on the pool or its clock
    pool = host.cpu
    assert not pool.works and not pool.vm_count and not pool.vms and not pool.share
    assert not pool.clock.bound and all(w.cores == 0.0 for w in works.values())
    assert all(w.remaining >= 0.0 for w in works.values())


def _rebind_on_fire(penalty):
    """VM A (2 vCPUs) runs 3 phases (2/3 core each); VM B one phase.  When A's short
    phase finishes, A's share becomes 1: A's phases are re-bound inside ``_fire``."""
    env, eng = _engine(penalty)
    h = _host(eng, cores=8.0, speed=1.0)
    a, b = _VM(0, h), _VM(1, h)
    works = {
        "a1": eng.compute(a, 1.0),
        "a2": eng.compute(a, 100.0),
        "a3": eng.compute(a, 100.0),
        "b": eng.compute(b, 2.0),
    }
    done = _finish_times(env, works)
    env.run()
    q = 1.0 - penalty
    t_a1 = 1.0 / (2.0 / 3.0 * q**3)
    t_b = t_a1 + (2.0 - t_a1 * q**3) / q**2  # b: 1 core throughout, 3 co-runners after
    return done, t_a1, t_b


def test_a_finish_that_rebinds_a_vm_keeps_the_other_vms_completion():
    done, t_a1, t_b = _rebind_on_fire(0.05)
    assert math.isclose(done["a1"], t_a1, rel_tol=1e-12)
    assert math.isclose(done["b"], t_b, rel_tol=1e-12)


def test_a_finish_that_rebinds_a_vm_keeps_the_other_vms_completion_without_penalty():
    done, t_a1, t_b = _rebind_on_fire(0.0)
    assert math.isclose(done["a1"], t_a1, rel_tol=1e-12)
    assert math.isclose(done["b"], t_b, rel_tol=1e-12)


def test_a_cap_of_zero_stalls_the_phase_until_lifted():
    env, eng = _engine(0.05)
    h = _host(eng, cores=8.0, speed=1.0)
    vm = _VM(0, h)
    w = eng.compute(vm, 10.0)
    env.run(until=1.0)
    vm.cpu_cap = 0.0
    h.cpu.recompute(env.now)
    eng.kick()
    env.run(until=5.0)
    assert w.cores == 0.0 and math.isclose(w.remaining_at(5.0), 9.0)
    vm.cpu_cap = None
    h.cpu.recompute(env.now)
    eng.kick()
    env.run()
    assert math.isclose(env.now, 14.0)


def test_a_host_without_cores_stalls_without_error():
    env, eng = _engine(0.05)
    h = _host(eng, cores=0.0, speed=1.0)
    w = eng.compute(_VM(0, h), 5.0)
    env.run(until=50.0)
    assert not w.event.triggered and w.cores == 0.0 and w.rate_now() == 0.0
    assert w.remaining_at(50.0) == 5.0
    eng.cancel(w)
    assert not h.cpu.works and not h.cpu.clock.bound


def test_the_only_phase_rebound_in_the_same_instant_keeps_its_progress():
    """The last bound phase is unbound (its clock's heap cleared) and bound again at once
    by a throttle that changes its share; no progress is lost or double counted."""
    env, eng = _engine(0.05)
    h = _host(eng, cores=8.0, speed=1.0)
    vm = _VM(0, h)
    w = eng.compute(vm, 10.0)
    done = _finish_times(env, {"w": w})
    env.run(until=2.0)
    vm.cpu_cap = 0.5  # 2 core-s done; 8 left at half a core
    h.cpu.recompute(env.now)
    eng.kick()
    assert w.cores == 0.5 and math.isclose(w.remaining_at(2.0), 8.0)
    env.run(until=4.0)
    vm.cpu_cap = 3.0  # 1 more done; 7 left at a whole core
    h.cpu.recompute(env.now)
    eng.kick()
    env.run()
    assert math.isclose(done["w"], 11.0, rel_tol=1e-12)


def test_the_lazy_heap_follows_a_rate_that_falls_then_rises():
    env, eng = _engine(0.0)
    h = _host(eng, cores=2.0, speed=1.0)
    a, b = _VM(0, h, vcpus=1.0), _VM(1, h, vcpus=1.0)
    x = eng.compute(a, 4.0)
    done = _finish_times(env, {"x": x})
    env.run(until=1.0)
    ys = [eng.compute(b, 100.0) for _ in range(3)]  # b: 3 phases of 1/3 core; no overload
    env.run(until=2.0)
    assert math.isclose(x.remaining_at(2.0), 2.0)
    c = _VM(2, h, vcpus=2.0)
    z = eng.compute(c, 100.0)  # demand 1 + 1 + 1 = 3 > 2 cores: every share x 2/3
    env.run(until=3.5)
    assert math.isclose(x.cores, 2.0 / 3.0) and math.isclose(x.remaining_at(3.5), 1.0)
    eng.cancel(z)  # back to a whole core: x finishes at 4.5
    for y in ys:
        eng.suspend(y)
    env.run(until=10.0)
    assert math.isclose(done["x"], 4.5, rel_tol=1e-12)


def test_a_migrated_vm_leaves_nothing_on_its_old_pool():
    """migration.py: pause (suspend every phase), move vm.host and each phase's host,
    resume on the target."""
    p = 0.1
    env, eng = _engine(p)
    h1, h2 = _host(eng, cores=8.0, speed=1.0), _host(eng, cores=8.0, speed=1.0)
    a, b = _VM(0, h1), _VM(1, h2)
    works = {"a1": eng.compute(a, 10.0), "a2": eng.compute(a, 20.0), "b": eng.compute(b, 30.0)}
    done = _finish_times(env, works)
    env.run(until=2.0)
    for k in ("a1", "a2"):
        eng.suspend(works[k])
    a.host = h2
    for k in ("a1", "a2"):
        works[k].host = h2
    for k in ("a1", "a2"):
        eng.resume(works[k])
    pool1 = h1.cpu
    assert not pool1.works and not pool1.vm_count and not pool1.share and not pool1.clock.bound
    assert works["a1"].cores == 1.0 and works["a1"].clk is h2.cpu.clock
    env.run()
    q = 1.0 - p
    t1 = 2.0 + (10.0 - 2.0 * q) / q**2  # a1: 2 s with a2, then 3 phases
    t2 = t1 + (20.0 - 2.0 * q - (t1 - 2.0) * q**2) / q  # a2 with b
    b_left = 30.0 - 2.0 - (t1 - 2.0) * q**2 - (t2 - t1) * q
    assert math.isclose(done["a1"], t1, rel_tol=1e-12)
    assert math.isclose(done["a2"], t2, rel_tol=1e-12)
    assert math.isclose(done["b"], t2 + b_left, rel_tol=1e-12)
    assert pool1.busy_core_s == pytest.approx(2.0 * 2)


def test_a_phase_suspended_at_its_finish_instant_completes_on_resume():
    env, eng = _engine(0.05)
    h = _host(eng, cores=8.0, speed=1.0)
    w = eng.compute(_VM(0, h), 2.0)
    env.run(until=2.0 - 1e-12)
    eng.suspend(w)
    assert 0.0 <= w.remaining <= 1e-9
    eng.resume(w)
    assert w.event.triggered and w.remaining == 0.0 and w.cores == 0.0
    assert not h.cpu.works and not h.cpu.share


def test_granted_cores_add_up_to_the_pools_use():
    """monitoring.py sums w.cores over a pool; HybridMR sorts by a.work.cores."""
    env, eng = _engine(0.05)
    h = _host(eng, cores=3.0, speed=1.0)
    vms = [_VM(0, h, vcpus=2.0), _VM(1, h, vcpus=1.0), _VM(2, h, vcpus=4.0)]
    ws = [eng.compute(vms[i % 3], 50.0) for i in range(7)]
    env.run(until=1.0)
    assert math.isclose(sum(w.cores for w in h.cpu.works), h.cpu.used, rel_tol=1e-12)
    vms[2].cpu_cap = 0.5
    h.cpu.recompute(env.now)
    assert math.isclose(sum(w.cores for w in h.cpu.works), h.cpu.used, rel_tol=1e-12)
    eng.suspend(ws[0])
    assert ws[0].cores == 0.0
    assert math.isclose(sum(w.cores for w in h.cpu.works), h.cpu.used, rel_tol=1e-12)
