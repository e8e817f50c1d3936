"""The per-link virtual clocks (execution.py) against a brute-force fluid model.

The reference recomputes every running flow's rate from scratch at every event (the min
over its links of its class's share, times its factor) and steps to the next start or
finish; the engine re-times clocks and re-binds only flows whose bottleneck moves.  Both
must give the same completion times, up to floating-point rounding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy

from mrgym.sim.execution import FluidEngine
from mrgym.sim.params import ModelParams
from mrgym.sim.topology import Link


class _Host:  # a disk's or NIC's host: only its presence matters to Link.shares
    pass


def _links() -> list[Link]:
    disk = Link("disk", 120.0, thrash=0.3, host=_Host(), floor=0.2)
    nic = Link("nic", 100.0)
    nic.attach(_Host())  # a NIC: writes share one stream, like a disk's
    return [disk, nic, Link("up", 80.0, background=0.1), Link("down", 150.0)]


def _workload(seed: int, n: int = 60) -> list[tuple[float, tuple[int, ...], float, float, bool]]:
    rng = np.random.default_rng(seed)
    flows = []
    for _ in range(n):
        k = int(rng.integers(1, 4))
        path = tuple(sorted(rng.choice(4, size=k, replace=False).tolist()))
        flows.append(
            (
                float(rng.uniform(0, 20)),  # start time
                path,
                float(rng.uniform(5, 200)),  # MB
                float(rng.uniform(0.5, 1.5)),  # factor
                bool(rng.random() < 0.3),  # a write
            )
        )
    # equal flows starting together: exact ties in the completion order
    flows += [(3.0, (1, 2), 40.0, 1.0, False)] * 3
    return flows


def _engine_finish_times(flows) -> list[float]:
    env = simpy.Environment()
    eng = FluidEngine(env, ModelParams())
    links = _links()
    done = [math.nan] * len(flows)

    def start(i, t0, path, mb, factor, write):
        yield env.timeout(t0)
        w = eng.flow(tuple(links[j] for j in path), mb, factor, tag="write" if write else "read")
        yield w.event
        done[i] = env.now

    for i, f in enumerate(flows):
        env.process(start(i, *f))
    env.run()
    return done


def _reference_finish_times(flows) -> list[float]:
    links = _links()
    left = {i: f[2] for i, f in enumerate(flows)}
    started: set[int] = set()
    done = [math.nan] * len(flows)
    now = 0.0
    while left:
        for i, f in enumerate(flows):
            if i in left and i not in started and f[0] <= now + 1e-12:
                started.add(i)
        run = [i for i in left if i in started]
        for link in links:  # the flows on each link, for its shares
            link.flows = {i: None for i in run if links.index(link) in flows[i][1]}
            link.n_writes = sum(1 for i in link.flows if flows[i][4])
        shares = [link.shares() for link in links]
        rate = {
            i: min(shares[j][1 if flows[i][4] else 0] for j in flows[i][1]) * flows[i][3]
            for i in run
        }
        t_next = min([flows[i][0] for i in left if i not in started], default=math.inf)
        t_fin = min([now + left[i] / rate[i] for i in run], default=math.inf)
        t = min(t_next, t_fin)
        for i in run:
            left[i] -= rate[i] * (t - now)
        now = t
        for i in run:
            if left[i] <= 1e-9 * max(1.0, flows[i][2]):
                done[i] = now
                del left[i]
    return done


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_virtual_clocks_match_a_brute_force_fluid_model(seed):
    flows = _workload(seed)
    got = _engine_finish_times(flows)
    want = _reference_finish_times(flows)
    assert not any(math.isnan(x) for x in got)
    worst = max(abs(a - b) / max(1.0, b) for a, b in zip(got, want))
    assert worst < 1e-9, worst


def test_a_cancelled_flow_leaves_its_clock_and_the_others_speed_up():
    env = simpy.Environment()
    eng = FluidEngine(env, ModelParams())
    up = Link("up", 100.0)
    a = eng.flow((up,), 100.0)
    b = eng.flow((up,), 100.0)
    assert a.rate_now() == b.rate_now() == 50.0
    env.run(until=1.0)
    eng.cancel(b)
    assert a.rate_now() == 100.0 and b.rate_now() == 0.0
    assert b.remaining == pytest.approx(50.0)
    env.run()
    # 50 MB at 50 MB/s, then the other 50 MB at 100 MB/s
    assert a.event.triggered and env.now == pytest.approx(1.5)
    assert not up.clk.bound and not up.clk.heap
