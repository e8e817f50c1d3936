"""Review of the shuffle's indexed path (mrgym/sim/shuffle.py) and of compare's decision
cap: regressions for what the review found.

The indexed path waits out a round's heartbeat, then finds that the index no longer holds
(an output was lost, or a VM moved, during that wait) and hands over to the general path,
which computed the same wait again: ``last_round + hb - now`` after ``now += wait`` is not
always exactly 0 in floating point, so the general path sometimes waits a second time (one
ulp) and starts its copies later than the old reduce loop did."""

from __future__ import annotations

import pytest
import simpy
from helpers import with_dynamics as _with_dynamics

import mrgym
from mrgym.config import load_scenario
from mrgym.runner import build_simulation
from mrgym.sim import shuffle


def _general_only(monkeypatch) -> None:
    def no_index(runner, att, st):
        return "switched"  # st is the general path's fresh state
        yield  # a generator, like _indexed

    monkeypatch.setattr(shuffle, "_indexed", no_index)


def _run(sc, scheduler: str, seed: int) -> tuple[list, str]:
    sim = build_simulation(sc, scheduler, seed)
    sim.run()
    log = [
        (a.task.job.id, a.task.index, a.task.kind, a.number, a.vm.id, a.start_s, a.end_s)
        for a in sim.attempts
    ]
    return log, repr(mrgym.metrics.episode_metrics(sim))  # repr: NaN equals NaN


def _failing_lee_gpu(heartbeat_s: float) -> dict:
    data = _with_dynamics("lee-gpu")
    data["dynamics"]["failures"]["mtbf_hours"] = 0.02
    data["cluster"]["heartbeat_s"] = heartbeat_s
    return data


@pytest.mark.parametrize("seed", [137, 176])
def test_a_handover_at_round_start_does_not_wait_the_heartbeat_again(seed, monkeypatch):
    # a long heartbeat keeps the rounds early (last_round < heartbeat), where
    # now0 + (last_round + hb - now0) can fall one ulp short of last_round + hb
    sc = load_scenario(_failing_lee_gpu(80.0))
    indexed = _run(sc, "fair", seed)
    _general_only(monkeypatch)
    general = _run(sc, "fair", seed)
    assert indexed[0] == general[0]
    assert indexed[1] == general[1]


def test_a_handover_at_round_start_resumes_the_round_at_once(monkeypatch):
    """The mechanism, seen directly (even where the outcome would not change): when the
    indexed path hands over at a round's start it has waited that round's heartbeat, so
    the general path must not start with another (one-ulp) timeout."""
    second_waits: list[float] = []
    general = shuffle._general

    def watching(runner, att, st):
        gen = general(runner, att, st)
        if st.epoch is None:  # no indexed round ran: nothing was waited
            return (yield from gen)
        try:
            ev = next(gen)
        except StopIteration as stop:
            return stop.value
        if isinstance(ev, simpy.events.Timeout) and ev._delay < 1e-6:
            second_waits.append(ev._delay)
        while True:
            try:
                got = yield ev
            except BaseException as e:  # pragma: no cover - not raised by the simulator
                ev = gen.throw(e)
                continue
            try:
                ev = gen.send(got)
            except StopIteration as stop:
                return stop.value

    monkeypatch.setattr(shuffle, "_general", watching)
    sc = load_scenario(_failing_lee_gpu(80.0))
    for seed in (137, 176):
        build_simulation(sc, "fair", seed).run()
    assert second_waits == []


def test_a_cap_of_zero_means_no_cap_and_none_means_the_models_eval_cap():
    from mrgym.cli.commands import _cap_model

    class Policy:
        eval_max_steps = 200
        max_decisions = None

    class Factory:
        policy = Policy()

    f = Factory()
    assert _cap_model(f, 0) is None and f.policy.max_decisions is None
    assert _cap_model(f, None) == 200 and f.policy.max_decisions == 200
    assert _cap_model(f, 7) == 7 and f.policy.max_decisions == 7


def test_the_training_seed_table_counts_every_model_run_in_its_footnote():
    from mrgym.summary import across_training_seeds, markdown_table, summarize

    rows = []
    for pol, cut in (("m-s1", (True, False)), ("m-s2", (False, "True"))):
        for seed, t in enumerate(cut):
            rows.append(
                {"policy": pol, "scenario": "s", "seed": seed, "mean_jct_s": 10.0 + seed}
                | {"truncated": t}
            )
    grouped = across_training_seeds(summarize(rows), {"m-s1": "m", "m-s2": "m"})
    assert [g["truncated"] for g in grouped] == [2]
    table = markdown_table(grouped)
    assert "| m (2 training seeds) † |" in table
    assert "† m (2 training seeds): 2 of 4 runs cut" in table
