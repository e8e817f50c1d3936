"""The per-link virtual clocks of the fluid engine (mrgym/sim/execution.py).

The model (README, "The model in one paragraph"): every flow crosses a path of links and
runs at the minimum over them of its class's share of each link, times its factor.  A
network link splits its capacity (less background traffic) equally among its flows.  A
disk (or a NIC with a host) serves each read as one stream and all its writes together as
one more stream, whose share the writes split; its aggregate throughput is multiplied by
floor + (1 - floor) exp(-thrash (streams - 1)).

The references below compute those shares from the links' parameters (``model_shares``),
never from ``Link.shares``: hand-worked cases, and two brute-force fluid models (one of
starts only, one with suspend, resume, extend, shrink and cancel) that recompute every
rate from scratch at every event and step to the next one.  The engine re-times clocks and
re-binds only the flows whose bottleneck moves; both must agree to rounding.  Each test
also checks that no flow is left on a clock (``Clock.bound``, ``Clock.heap``) or in the
engine's heap once it has ended.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy

from mrgym.sim.execution import EPS, WRITE_TAGS, FluidEngine
from mrgym.sim.params import ModelParams
from mrgym.sim.topology import Link


class _Host:  # a disk's or NIC's host: only its presence matters
    pass


def model_shares(link: Link, reads: int, writes: int) -> tuple[float, float]:
    """(a read's, a write's) rate on ``link`` carrying ``reads`` read and ``writes`` write
    flows, from the model's statement (module docstring) and the link's parameters."""
    usable = link.capacity * (1.0 - link.background)
    if link.host is None:  # a network link: equal split among all its flows
        n = reads + writes
        return (usable / n, usable / n) if n else (usable, usable)
    streams = reads + (1 if writes else 0)  # the writes merge into one stream
    if streams == 0:
        return usable, usable
    seek = link.floor + (1.0 - link.floor) * math.exp(-link.thrash * (streams - 1))
    stream = usable * seek / streams
    return stream, (stream / writes if writes else stream)


def _links() -> list[Link]:
    disk = Link("disk", 120.0, thrash=0.3, host=_Host(), floor=0.2)
    nic = Link("nic", 100.0)
    nic.attach(_Host())  # a NIC: writes share one stream, like a disk's
    return [disk, nic, Link("up", 80.0, background=0.1), Link("down", 150.0)]


def _path_rate(links, path, write: bool, factor: float, counts) -> float:
    """A flow's rate: the min over its path of its class's model share, times its factor."""
    return min(model_shares(links[j], *counts[j])[1 if write else 0] for j in path) * factor


def _counts(links, flows, running) -> list[tuple[int, int]]:
    """(reads, writes) on each link among the ``running`` flows (path, write) of ``flows``."""
    return [
        (
            sum(1 for i in running if j in flows[i][1] and not flows[i][4]),
            sum(1 for i in running if j in flows[i][1] and flows[i][4]),
        )
        for j in range(len(links))
    ]


# -- the model's shares, worked by hand ------------------------------------------------


def test_model_shares_by_hand():
    disk = Link("disk", 120.0, thrash=0.3, host=_Host(), floor=0.2)
    # 2 reads + 3 writes = 3 streams: 120 (0.2 + 0.8 e^-0.6) = 76.685 MB/s;
    # a read 25.562, the three writes one stream of 25.562: 8.521 each
    agg = 120.0 * (0.2 + 0.8 * 0.5488116360940264)
    assert model_shares(disk, 2, 3) == pytest.approx((agg / 3, agg / 9), rel=1e-12)
    assert model_shares(disk, 1, 0) == (120.0, 120.0)  # one stream: no seeking
    assert model_shares(disk, 0, 4) == (120.0, 30.0)  # writes alone: one stream
    up = Link("up", 80.0, background=0.1)
    assert model_shares(up, 2, 2) == pytest.approx((18.0, 18.0))  # 72 over 4 flows


def test_the_engine_gives_the_model_shares_worked_by_hand():
    """A disk with 2 reads and 3 writes, a read also on a 60 MB/s uplink it shares."""
    env = simpy.Environment()
    eng = FluidEngine(env, ModelParams())
    disk = Link("disk", 120.0, thrash=0.3, host=_Host(), floor=0.2)
    up = Link("up", 60.0)
    r1 = eng.flow((disk,), 100.0)
    r2 = eng.flow((disk, up), 100.0)
    u = eng.flow((up,), 100.0)
    ws = [eng.flow((disk,), 100.0, tag="write") for _ in range(3)]
    stream = 120.0 * (0.2 + 0.8 * math.exp(-0.3 * 2)) / 3  # 25.562 (see above)
    assert r1.rate_now() == pytest.approx(stream, rel=1e-12)
    assert r2.rate_now() == pytest.approx(stream, rel=1e-12)  # < 30 on the uplink
    assert u.rate_now() == pytest.approx(30.0, rel=1e-12)
    assert [w.rate_now() for w in ws] == pytest.approx([stream / 3] * 3, rel=1e-12)
    eng.cancel(r1)  # 1 read + writes: 2 streams, 120 (0.2 + 0.8 e^-0.3) / 2 = 53.56
    stream = 120.0 * (0.2 + 0.8 * math.exp(-0.3)) / 2
    assert r2.rate_now() == pytest.approx(30.0)  # now the uplink is its bottleneck
    assert ws[0].rate_now() == pytest.approx(stream / 3, rel=1e-12)


# -- starts only, against a brute-force fluid model --------------------------------------


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
        counts = _counts(links, flows, run)
        rate = {i: _path_rate(links, flows[i][1], flows[i][4], flows[i][3], counts) for i in run}
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


def _engine() -> tuple[simpy.Environment, FluidEngine]:
    env = simpy.Environment()
    return env, FluidEngine(env, ModelParams())


def _at(env: simpy.Environment, t: float, fn) -> None:
    """Run ``fn`` at ``t``; created before a flow, it runs before the engine's wake-up."""
    env.timeout(t - env.now).callbacks.append(lambda _ev: fn())


def _done_at(env: simpy.Environment, w) -> list[float]:
    out: list[float] = []
    w.event.callbacks.append(lambda _ev: out.append(env.now))
    return out


def _clocks(links):
    seen = {}
    for link in links:
        seen[id(link.clk)] = link.clk
        seen[id(link.clk_w)] = link.clk_w
    return list(seen.values())


def _model_rate(link: Link, write: bool) -> float:
    """The model share of a read or a write on ``link`` with the flows it carries now."""
    writes = sum(1 for f in link.flows if f.tag in WRITE_TAGS)
    return model_shares(link, len(link.flows) - writes, writes)[1 if write else 0]


def _check(links, works) -> None:
    """Every active flow runs at its min share; clocks hold exactly the active flows."""
    for f in works:
        if f.active:
            want = min(_model_rate(link, f.write) for link in f.links) * f.factor
            assert f.rate_now() == pytest.approx(want, rel=1e-12, abs=1e-12), (f.tag, want)
            assert f.clk is not None and f.clk in f.clks and f in f.clk.bound
        else:
            assert f.clk is None
    for c in _clocks(links):
        for f in c.bound:
            assert f.active and f.clk is c


def _check_wakeup(eng, links) -> None:
    """No completion can fire late: every clock with a bound flow has a live entry in the
    engine's heap no later than its first flow's finish, and a wake-up no later still."""
    for c in _clocks(links):
        if not c.bound or c.rate <= 0.0:
            continue
        true = min(c.t + (f.vfin - c.v) / c.rate for f in c.bound)
        assert c.due <= true + 1e-9, (c.due, true)
        assert any(e[2] is c and e[0] == c.due for e in eng._heap)
        assert eng._wake_at <= true + 1e-9, (eng._wake_at, true)


def _assert_clean(eng, links) -> None:
    for c in _clocks(links):
        assert not c.bound and not c.heap
    assert not eng._heap


# -- suspend, resume, extend, shrink, cancel: hand-computed cases ---------------------------------------------------------------


def test_suspend_and_resume_keep_progress_and_reshare():
    env, eng = _engine()
    up = Link("up", 100.0)
    a = eng.flow((up,), 100.0)
    b = eng.flow((up,), 100.0)
    ta, tb = _done_at(env, a), _done_at(env, b)
    _at(env, 1.0, lambda: eng.suspend(b))  # b has 50 MB left
    _at(env, 2.0, lambda: eng.resume(b))
    env.run(until=1.0 + 1e-9)
    assert b.remaining == pytest.approx(50.0) and b.rate_now() == 0.0
    assert a.rate_now() == 100.0 and b not in up.clk.bound
    env.run()
    # a: 50 MB at 50, then 50 MB at 100 -> 1.5; b: paused 1..2, 50 MB at 100 -> 2.5
    assert ta == [pytest.approx(1.5)] and tb == [pytest.approx(2.5)]
    _assert_clean(eng, [up])


def test_suspending_the_bottleneck_holder_moves_the_others_on_two_links():
    env, eng = _engine()
    l1, l2 = Link("l1", 100.0), Link("l2", 60.0)
    f = eng.flow((l1, l2), 90.0)  # limited by l2: 30
    g = eng.flow((l2,), 300.0)  # 30
    h = eng.flow((l1,), 100.0)  # l1 holds f and h: 50; f is at 30
    works = [f, g, h]
    _check([l1, l2], works)
    assert f.rate_now() == 30.0 and h.rate_now() == 50.0
    tf, tg, th = (_done_at(env, w) for w in works)
    _at(env, 1.0, lambda: eng.suspend(g))  # f alone on l2 (60), l1: 50 -> f at 50
    _at(env, 1.0 + 1e-6, lambda: _check([l1, l2], works))
    _at(env, 1.5, lambda: eng.resume(g))
    env.run()
    # t in [0,1]: f 30, g 30, h 50 -> f 60 left, g 270, h 50
    # t in [1,1.5]: f 50, h 50 -> f 35 left, h 25 left
    # t in [1.5,..]: f 30 (l2 shared with g), g 30, h 50 -> h done at 2.0
    # then f on l1 alone (100) and l2 shared (30): f 20 left at 2.0 -> 2 + 20/30
    assert th == [pytest.approx(2.0)]
    assert tf == [pytest.approx(2.0 + 20.0 / 30.0)]
    # g: 270 at t=1; 30/s over [1.5, 2.667] -> 235, then alone at 60
    assert tg == [pytest.approx(2.0 + 20.0 / 30.0 + 235.0 / 60.0)]
    _assert_clean(eng, [l1, l2])


def test_a_flow_suspended_at_its_completion_instant_still_completes_on_resume():
    env, eng = _engine()
    up = Link("up", 100.0)
    box = []
    _at(env, 1.0, lambda: eng.suspend(box[0]))  # runs before the engine's wake-up at 1.0
    _at(env, 2.0, lambda: eng.resume(box[0]))
    a = eng.flow((up,), 100.0)
    box.append(a)
    env.run()
    assert a.event.triggered  # the attempt waiting on it would otherwise hang forever


def test_extend_delays_only_the_extended_flow():
    env, eng = _engine()
    disk = Link("disk", 100.0, host=_Host())
    f = eng.flow((disk,), 100.0, tag="writeback")
    r = eng.flow((disk,), 100.0, tag="read")
    # one read stream and one write stream: 50 each
    assert f.rate_now() == 50.0 and r.rate_now() == 50.0
    tf, tr = _done_at(env, f), _done_at(env, r)
    _at(env, 1.0, lambda: eng.extend(f, 50.0))  # f: 50 left -> 100 left
    env.run(until=1.5)
    assert f.remaining_at(env.now) == pytest.approx(75.0)
    assert f.total == pytest.approx(150.0)
    env.run()
    # r done at 2 (100 at 50); f has 50 left at 2, alone at 100 -> 2.5
    assert tr == [pytest.approx(2.0)] and tf == [pytest.approx(2.5)]
    _assert_clean(eng, [disk])


def test_shrink_makes_a_flow_finish_earlier_and_to_zero_cancels_it():
    env, eng = _engine()
    up = Link("up", 100.0)
    a = eng.flow((up,), 100.0)
    b = eng.flow((up,), 200.0)
    c = eng.flow((up,), 500.0)
    ta, tb, tc = (_done_at(env, w) for w in (a, b, c))
    # t=1: a 66.67 left, b 166.67, c 466.67 (33.33 each)
    _at(env, 1.0, lambda: eng.shrink(b, 160.0))  # b: 6.67 left -> done at 1.2
    _at(env, 1.3, lambda: eng.shrink(c, c.remaining_at(env.now)))  # c: to zero, cancelled
    env.run()
    third = 100.0 / 3.0
    assert tb == [pytest.approx(1.0 + (200.0 - third - 160.0) / third)]
    assert tc == [] and not c.active and not c.event.triggered
    # a: 66.67 left at 1; [1,1.2]: 33.33/s; [1.2,1.3]: 50/s; then alone at 100
    a_left = 100.0 - third - third * 0.2 - 50.0 * 0.1
    assert ta == [pytest.approx(1.3 + a_left / 100.0)]
    _assert_clean(eng, [up])


def test_shrink_on_a_suspended_flow_then_resume():
    env, eng = _engine()
    up = Link("up", 100.0)
    a = eng.flow((up,), 100.0)
    ta = _done_at(env, a)
    _at(env, 0.5, lambda: eng.suspend(a))  # 50 left
    _at(env, 0.6, lambda: eng.shrink(a, 30.0))  # 20 left
    _at(env, 0.7, lambda: eng.extend(a, 5.0))  # 25 left
    _at(env, 1.0, lambda: eng.resume(a))
    env.run()
    assert ta == [pytest.approx(1.25)]
    _assert_clean(eng, [up])


def test_cancel_at_the_completion_instant_before_the_engine_fires():
    env, eng = _engine()
    up = Link("up", 100.0)
    box = []
    _at(env, 2.0, lambda: eng.cancel(box[0]))  # before the engine's wake-up at 2.0
    a = eng.flow((up,), 100.0)
    b = eng.flow((up,), 100.0)  # ties with a: both due at 2.0
    box.append(a)
    ta, tb = _done_at(env, a), _done_at(env, b)
    env.run()
    assert ta == [] and not a.event.triggered
    assert tb == [pytest.approx(2.0)]
    _assert_clean(eng, [up])


def test_cancel_after_the_engine_fired_at_the_same_instant_is_a_no_op():
    env, eng = _engine()
    up = Link("up", 100.0)
    a = eng.flow((up,), 100.0)
    b = eng.flow((up,), 100.0)
    # scheduled at 1.5, after the engine's wake-up for 2.0 (re-armed at 1.0): runs after it
    _at(env, 1.5, lambda: _at(env, 2.0, lambda: eng.cancel(a)))
    ta, tb = _done_at(env, a), _done_at(env, b)
    env.run()
    assert ta == [pytest.approx(2.0)] and tb == [pytest.approx(2.0)]
    assert a.remaining == 0.0 and b.remaining == 0.0
    _assert_clean(eng, [up])


def test_simultaneous_completions_on_one_clock_with_different_factors():
    env, eng = _engine()
    up = Link("up", 90.0)
    a = eng.flow((up,), 100.0, factor=1.0)
    b = eng.flow((up,), 200.0, factor=2.0)
    c = eng.flow((up,), 50.0, factor=0.5)
    d = eng.flow((up,), 400.0)
    works = [a, b, c, d]
    _check([up], works)
    times = [_done_at(env, w) for w in works]
    env.run()
    # 22.5 per flow: a, b, c finish together at 100/22.5; d then has 300 left at 90
    t1 = 100.0 / 22.5
    assert [t for (t,) in times[:3]] == pytest.approx([t1] * 3, rel=1e-12)
    assert times[3] == [pytest.approx(t1 + 300.0 / 90.0)]
    _assert_clean(eng, [up])


def test_ties_on_every_link_rebind_when_the_holder_rises():
    env, eng = _engine()
    l1, l2 = Link("l1", 100.0), Link("l2", 100.0)
    f = eng.flow((l1, l2), 200.0)
    g = eng.flow((l1,), 50.0)
    h = eng.flow((l2,), 150.0)
    works = [f, g, h]
    assert f.rate_now() == g.rate_now() == h.rate_now() == 50.0  # a tie on l1 and l2
    tf, tg, th = (_done_at(env, w) for w in works)
    for t in (0.5, 1.5, 3.2):
        _at(env, t, lambda: _check([l1, l2], works))
    env.run()
    # [0,1] all at 50: g done; f 150, h 100 -> [1,3] f, h at 50 (l2): h done at 3;
    # f 50 left, alone -> 3.5
    assert tg == [pytest.approx(1.0)] and th == [pytest.approx(3.0)]
    assert tf == [pytest.approx(3.5)]
    _assert_clean(eng, [l1, l2])


def test_a_zero_capacity_link_stalls_its_flows_without_stalling_the_others():
    env, eng = _engine()
    zero, a = Link("zero", 0.0), Link("a", 100.0)
    f = eng.flow((a, zero), 100.0)  # bound to the zero link: rate 0
    g = eng.flow((a,), 100.0)  # a is shared by f and g: 50
    h = eng.flow((zero,), 10.0)
    works = [f, g, h]
    _check([zero, a], works)
    assert f.rate_now() == 0.0 and g.rate_now() == 50.0 and h.rate_now() == 0.0
    tg = _done_at(env, g)
    _at(env, 3.0, lambda: eng.cancel(f))
    _at(env, 3.0, lambda: eng.cancel(h))
    env.run()
    assert tg == [pytest.approx(2.0)]
    assert not f.event.triggered and not h.event.triggered
    assert f.remaining == 100.0 and h.remaining == 10.0
    _assert_clean(eng, [zero, a])


@pytest.mark.xfail(
    strict=True,
    raises=KeyError,
    reason="pre-existing (also before f89b0d3; unreachable in the simulator, paths are "
    "de-duplicated): a link twice in a path is deleted twice from link.flows in _detach",
)
def test_a_link_twice_in_a_path():
    env, eng = _engine()
    up = Link("up", 100.0)
    f = eng.flow((up, up), 100.0)
    g = eng.flow((up,), 100.0)
    assert f.rate_now() == g.rate_now() == 50.0
    tf = _done_at(env, f)
    env.run()
    assert tf == [pytest.approx(2.0)]
    _assert_clean(eng, [up])


def test_link_attach_before_any_flow_gives_writes_their_own_clock():
    env, eng = _engine()
    nic = Link("nic", 90.0)
    nic.attach(_Host())
    r = eng.flow((nic,), 90.0)
    w1 = eng.flow((nic,), 90.0, tag="write")
    w2 = eng.flow((nic,), 90.0, tag="write")
    _check([nic], [r, w1, w2])
    assert r.rate_now() == 45.0 and w1.rate_now() == 22.5
    assert w1.clk is nic.clk_w is not nic.clk


def test_link_attach_is_refused_once_the_link_carried_flows():
    """A host is attached while building (build.py): a write clock made later would not be
    followed by flows already bound to the shared clock, so it is refused."""
    env, eng = _engine()
    nic = Link("nic", 100.0)
    eng.flow((nic,), 100.0)
    with pytest.raises(RuntimeError, match="nic has carried flows"):
        nic.attach(_Host())
    env.run()
    with pytest.raises(RuntimeError, match="attach while building"):
        nic.attach(_Host())  # its share is still set from the flow it carried


def test_migration_style_pause_downtime_resume():
    """A VM's task flow shares its NIC with the migration copy, is paused for the downtime,
    then resumes (migration.py)."""
    env, eng = _engine()
    nic = Link("nic", 100.0)
    nic.attach(_Host())
    disk = Link("disk", 200.0, host=_Host())
    copy = eng.flow((nic,), 100.0, tag="migrate")
    task = eng.flow((disk, nic), 300.0)
    works = [copy, task]
    tc, tt = _done_at(env, copy), _done_at(env, task)
    _at(env, 2.5, lambda: eng.suspend(task))  # Pause
    _at(env, 2.6, lambda: _check([nic, disk], works))
    _at(env, 3.0, lambda: eng.resume(task))  # Resume after 0.5 s of downtime
    env.run()
    # both at 50 on the NIC until the copy is done at 2; the task alone at 100 until 2.5
    # (150 left), paused, then 150 at 100 from 3.0
    assert tc == [pytest.approx(2.0)] and tt == [pytest.approx(4.5)]
    _assert_clean(eng, [nic, disk])


def test_host_failure_drops_the_flusher_and_kills_a_writer():
    """dynamics._halt: the dead host's flusher is cancelled; a killed writer's unsent data
    is taken back from another host's flusher (writeback.take_back -> shrink)."""
    env, eng = _engine()
    d0 = Link("d0", 100.0, host=_Host())
    d1 = Link("d1", 100.0, host=_Host())
    fl0 = eng.flow((d0,), 500.0, tag="writeback")
    fl1 = eng.flow((d1,), 200.0, tag="writeback")
    reader = eng.flow((d1,), 100.0)  # d1: 50 each
    writer = eng.flow((d0,), 100.0, tag="write")  # d0: one write stream, 2 writes: 50
    works = [fl0, fl1, reader, writer]
    t1, tr = _done_at(env, fl1), _done_at(env, reader)

    def fail():
        eng.cancel(fl0)
        unsent = writer.remaining_at(env.now)  # 50
        eng.shrink(fl1, unsent)  # fl1: 150 -> 100
        eng.cancel(writer)
        _check([d0, d1], works)

    _at(env, 1.0, fail)
    env.run()
    # reader: 100 at 50 -> 2.0; fl1: 100 left at t=1 at 50 -> 50 at 2.0, alone -> 2.5
    assert tr == [pytest.approx(2.0)] and t1 == [pytest.approx(2.5)]
    assert not fl0.event.triggered and not writer.event.triggered
    _assert_clean(eng, [d0, d1])


def test_many_extends_leave_no_stale_entries_once_the_clock_is_looked_at():
    env, eng = _engine()
    disk = Link("disk", 100.0, host=_Host())
    f = eng.flow((disk,), 100.0, tag="writeback")
    tf = _done_at(env, f)
    for i in range(1, 1001):
        _at(env, i * 0.0009, lambda: eng.extend(f, 0.1))
    env.run(until=1.0 + 1e-6)  # the clock's first entry (t=1) came up: stale ones dropped
    assert len(disk.clk_w.heap) <= 2
    assert len(eng._heap) <= 2
    env.run()
    assert tf == [pytest.approx(2.0)]
    _assert_clean(eng, [disk])


# -- randomized: suspend, resume, extend, shrink, cancel against a brute-force model ---


def _scenario(seed: int):
    rng = np.random.default_rng(seed)
    flows = []
    for _ in range(40):
        k = int(rng.integers(1, 4))
        path = tuple(sorted(rng.choice(4, size=k, replace=False).tolist()))
        flows.append(
            (
                float(rng.uniform(0, 10)),
                path,
                float(rng.uniform(5, 150)),
                float(rng.uniform(0.5, 1.5)),
                bool(rng.random() < 0.35),
            )
        )
    ops = []
    for _ in range(120):
        i = int(rng.integers(len(flows)))
        kind = str(
            rng.choice(
                ["suspend", "resume", "extend", "shrink", "cancel"], p=[0.3, 0.3, 0.15, 0.15, 0.1]
            )
        )
        frac = float(rng.choice([rng.uniform(0.05, 0.9), 1.0], p=[0.85, 0.15]))
        ops.append((float(rng.uniform(0, 30)), kind, i, frac, float(rng.uniform(1, 50))))
    ops += [(60.0, "resume", i, 0.0, 0.0) for i in range(len(flows))]  # nothing left paused
    ops.sort(key=lambda o: o[0])
    return flows, ops


def _apply(op, st, remaining, do):
    """Shared rules for both models: which op applies to a flow in which state."""
    _, kind, i, frac, mb = op
    s = st[i]
    if kind == "suspend" and s == "active":
        do("suspend", i, 0.0)
        st[i] = "paused"
    elif kind == "resume" and s == "paused":
        do("resume", i, 0.0)
        st[i] = "active"
    elif kind == "extend" and s == "active":
        do("extend", i, mb)
    elif kind == "shrink" and s == "active":
        take = remaining(i) * frac
        if remaining(i) - take <= EPS:
            st[i] = "cancelled"
        do("shrink", i, take)
    elif kind == "cancel" and s in ("active", "paused"):
        do("cancel", i, 0.0)
        st[i] = "cancelled"


def _engine_run(flows, ops, check=True):
    env, eng = _engine()
    links = _links()
    works = [None] * len(flows)
    st = ["pending"] * len(flows)
    done = [math.nan] * len(flows)

    def finish(i):
        done[i] = env.now
        st[i] = "done"
        if check:
            _check(links, [w for w in works if w is not None])
            _check_wakeup(eng, links)

    def start(i):
        t0, path, mb, factor, write = flows[i]
        w = eng.flow(tuple(links[j] for j in path), mb, factor, tag="write" if write else "read")
        works[i] = w
        st[i] = "active"
        w.event.callbacks.append(lambda _ev, i=i: finish(i))

    def do(kind, i, mb):
        w = works[i]
        if kind in ("extend", "shrink"):
            getattr(eng, kind)(w, mb)
        else:
            getattr(eng, kind)(w)

    def op_at(op):
        _apply(op, st, lambda i: works[i].remaining_at(env.now), do)
        if check:
            _check(links, [w for w in works if w is not None])
            _check_wakeup(eng, links)

    for i, f in enumerate(flows):
        _at(env, f[0], lambda i=i: start(i))
    for op in ops:
        _at(env, op[0], lambda op=op: op_at(op))
    env.run()
    _assert_clean(eng, links)
    return done, st


def _reference_run(flows, ops):
    links = _links()
    n = len(flows)
    left = [f[2] for f in flows]
    total = [f[2] for f in flows]
    st = ["pending"] * n
    done = [math.nan] * n
    events = sorted(
        [(f[0], 0, i, None) for i, f in enumerate(flows)] + [(op[0], 1, -1, op) for op in ops],
        key=lambda e: (e[0], e[1]),
    )
    now = 0.0
    k = 0

    def do(kind, i, mb):
        if kind == "extend":
            left[i] += mb
            total[i] += mb
        elif kind == "shrink":
            left[i] -= mb

    while True:
        run = [i for i in range(n) if st[i] == "active"]
        counts = _counts(links, flows, run)
        rate = {i: _path_rate(links, flows[i][1], flows[i][4], flows[i][3], counts) for i in run}
        t_next = events[k][0] if k < len(events) else math.inf
        t_fin = min([now + left[i] / rate[i] for i in run if rate[i] > 0], default=math.inf)
        t = min(t_next, t_fin)
        if t == math.inf:
            break
        for i in run:
            left[i] -= rate[i] * (t - now)
        now = t
        for i in run:
            if left[i] <= 1e-9 * max(1.0, total[i]):
                done[i] = now
                st[i] = "done"
        while k < len(events) and events[k][0] <= now:
            _, kind, i, op = events[k]
            k += 1
            if kind == 0:
                st[i] = "active"
            else:
                _apply(op, st, lambda i: max(0.0, left[i]), do)
    return done, st


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_suspend_resume_extend_shrink_cancel_match_a_brute_force_model(seed):
    flows, ops = _scenario(seed)
    got, st_got = _engine_run(flows, ops)
    want, st_want = _reference_run(flows, ops)
    assert st_got == st_want
    for a, b in zip(got, want):
        assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 * max(1.0, b), (a, b)
    assert sum(not math.isnan(x) for x in got) >= 10  # the scenario exercises completions
