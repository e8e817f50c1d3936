"""agents.analysis.ablate: each variant takes the launch-or-decline choice and the job choice
from the model or from hostcap's cap and random draw, as its docstring says."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest

th = pytest.importorskip("torch")

from agents.analysis import ablate  # noqa: E402
from mrgym.policy import ModelPolicy  # noqa: E402
from mrgym.runner import run_episode  # noqa: E402
from mrgym.sim.scheduler import DECLINE, Decision  # noqa: E402
from tests.helpers import StubModel  # noqa: E402

# three launches and decline (last); the model favours launch 0 and declines with 0.5
PROBS = [0.4, 0.05, 0.05, 0.5]
DRAWS = 4000


class _Cap:
    """hostcap's gate, fixed: declines every slot or none."""

    def __init__(self, declines: bool):
        self.declines = declines

    def gate(self, ctx):
        return DECLINE if self.declines else None

    def reset(self, seed):
        pass


class _StubEnv:
    """Launch action a is job 10 + a's map task; jobs outside 10-12 are not in the slots."""

    @staticmethod
    def decode(action: int) -> Decision:
        return Decision("map", 10 + action)

    @staticmethod
    def encode(d: Decision) -> int:
        if not 0 <= d.job - 10 < 3:
            raise ValueError("not among the job slots")
        return d.job - 10


# a cluster where no job runs a task: every job is below its share
_IDLE = SimpleNamespace(
    job=lambda j: SimpleNamespace(running_maps=0, running_reduces=0),
    jobs=[1],
    topology=SimpleNamespace(workers=[SimpleNamespace(map_slots=1, reduce_slots=1)]),
)


def _policy(variant: str, cap_declines: bool, probs=PROBS, waits: int = 0):
    pol = ablate.AblatedPolicy(ModelPolicy(StubModel(probs), decode="sample"), variant)
    pol.cap = _Cap(cap_declines)
    pol.env = SimpleNamespace(
        decision_context=lambda: SimpleNamespace(view=_IDLE),
        decode=_StubEnv.decode,
        encode=_StubEnv.encode,
    )
    pol._decline = len(probs) - 1 - waits
    pol.start_episode(0)
    return pol


def _freq(variant: str, cap_declines: bool, mask=None, probs=PROBS, waits=0) -> np.ndarray:
    pol = _policy(variant, cap_declines, probs, waits)
    mask = np.ones(len(probs), dtype=bool) if mask is None else np.asarray(mask)
    obs = np.zeros(3, dtype=np.float32)
    info = {"action_mask": mask, "slot_kind": "map"}
    c = Counter(pol.predict(obs, info) for _ in range(DRAWS))
    return np.array([c[a] for a in range(len(probs))]) / DRAWS


def test_agent_declines_as_the_model_but_launches_a_uniform_job():
    f = _freq("agent-declines", cap_declines=True)  # the cap is not asked
    assert f[3] == pytest.approx(0.5, abs=0.03)
    # the model would launch job 0 eight times as often as job 1; here all alike
    assert f[:3] == pytest.approx([0.5 / 3] * 3, abs=0.03)


def test_a_models_waits_stay_its_own_when_it_declines():
    # three launches, decline and one wait: the model declines with 0.6, a third by decline
    f = _freq("agent-declines", True, probs=[0.3, 0.05, 0.05, 0.2, 0.4], waits=1)
    assert f[3:] == pytest.approx([0.2, 0.4], abs=0.03)
    assert f[:3] == pytest.approx([0.4 / 3] * 3, abs=0.03)
    f = _freq("either-declines", False, probs=[0.3, 0.05, 0.05, 0.2, 0.4], waits=1)
    assert f == pytest.approx([0.3, 0.05, 0.05, 0.2, 0.4], abs=0.03)


def test_cap_declines_where_the_cap_does_and_launches_the_models_job():
    assert _freq("cap-declines", cap_declines=True)[3] == 1.0
    f = _freq("cap-declines", cap_declines=False)
    assert f[3] == 0.0  # the model's 0.5 of declining is not used
    assert f[:3] == pytest.approx([0.8, 0.1, 0.1], abs=0.03)


def test_either_declines_where_the_cap_or_the_model_does():
    assert _freq("either-declines", cap_declines=True)[3] == 1.0
    f = _freq("either-declines", cap_declines=False)
    assert f == pytest.approx([0.4, 0.05, 0.05, 0.5], abs=0.03)


def test_cap_held_launches_the_held_job_until_it_cannot_and_only_then_asks_the_model():
    assert _freq("cap-held", cap_declines=True)[3] == 1.0
    pol = _policy("cap-held", cap_declines=False)
    obs, legal = np.zeros(3, dtype=np.float32), np.ones(4, dtype=bool)
    first = pol.predict(obs, {"action_mask": legal, "slot_kind": "map"})
    assert first < 3 and pol.asks == 1
    for _ in range(50):  # held: the same job, the model not asked, never a decline
        assert pol.predict(obs, {"action_mask": legal, "slot_kind": "map"}) == first
    assert pol.asks == 1
    # a reduce slot has no held job yet: the model is asked
    pol.predict(obs, {"action_mask": legal, "slot_kind": "reduce"})
    assert pol.asks == 2
    # the held job cannot launch here: the model draws another among the legal launches
    blocked = legal.copy()
    blocked[first] = False
    again = pol.predict(obs, {"action_mask": blocked, "slot_kind": "map"})
    assert again != first and again < 3 and pol.asks == 3
    # that one is now held
    assert pol.predict(obs, {"action_mask": legal, "slot_kind": "map"}) == again
    assert pol.asks == 3
    # over many episodes the held job follows the model's launch probabilities
    firsts = Counter()
    for seed in range(2000):
        pol.start_episode(seed)
        firsts[pol.predict(obs, {"action_mask": legal, "slot_kind": "map"})] += 1
    assert [firsts[a] / 2000 for a in range(3)] == pytest.approx([0.8, 0.1, 0.1], abs=0.03)


def test_cap_held_share_holds_the_job_only_below_its_equal_share():
    pol = _policy("cap-held-share", cap_declines=False)
    # 2 workers of 2 map slots and 2 active jobs: an equal share is 2 running maps
    running = {j: 0 for j in (10, 11, 12)}
    view = SimpleNamespace(
        job=lambda j: SimpleNamespace(running_maps=running[j], running_reduces=0),
        jobs=[1, 2],
        topology=SimpleNamespace(workers=[SimpleNamespace(map_slots=2, reduce_slots=1)] * 2),
    )
    pol.env.decision_context = lambda: SimpleNamespace(view=view)
    obs, info = np.zeros(3, dtype=np.float32), {"action_mask": np.ones(4, bool), "slot_kind": "map"}
    first = pol.predict(obs, info)
    running[10 + first] = 1
    assert pol.predict(obs, info) == first and pol.asks == 1  # below its share: held
    running[10 + first] = 2
    pol.predict(obs, info)  # at its share: the model draws afresh
    assert pol.asks == 2
    running.update({j: 2 for j in running})  # every job at its share: a draw every slot
    for _ in range(20):
        pol.predict(obs, info)
    assert pol.asks == 22
    running.update({j: 0 for j in running})  # below: the last drawn job is held again
    held = pol.predict(obs, info)
    assert all(pol.predict(obs, info) == held for _ in range(20)) and pol.asks == 22


def test_hostcap_is_the_cap_and_a_uniform_launch():
    assert _freq("hostcap", cap_declines=True)[3] == 1.0
    assert _freq("hostcap", cap_declines=False) == pytest.approx([1 / 3] * 3 + [0], abs=0.03)


@pytest.mark.parametrize("variant", ablate.VARIANTS[1:])
def test_the_mask_binds_every_variant(variant):
    # no legal launch: decline; decline illegal (work-conserving): a legal launch
    assert _freq(variant, True, mask=[False, False, False, True])[3] == 1.0
    f = _freq(variant, True, mask=[False, True, True, False])
    assert f[0] == f[3] == 0.0 and f[1] + f[2] == 1.0


def test_agent_plays_as_model_policy_does_and_the_table_pairs_seeds():
    name = "lee-gpu-wfair-v1-s0"
    rows = ablate.run([name], [2000, 2001], ["agent", "hostcap", "cap-held"])
    assert [r["model_asks"] for r in rows[:2]] == [r["decisions"] for r in rows[:2]]
    assert [r["model_asks"] for r in rows[2:4]] == [0, 0]
    # holding a job: the model is asked at some of the slots, not all
    assert all(0 < r["model_asks"] < r["decisions"] for r in rows[4:])
    assert not any(r["truncated"] for r in rows)
    alone = ModelPolicy.load(name, decode="sample")
    for seed, row in zip((2000, 2001), rows[:2]):
        r = run_episode(alone.make_env(), alone, seed=seed)
        assert row["mean_jct_s"] == r.metrics["mean_jct_s"]
        assert row["decisions"] == r.steps
    tab = {r["variant"]: r for r in ablate.table(rows[:4])}
    jct = {v: [r["mean_jct_s"] for r in rows if r["variant"] == v] for v in tab}
    rel = [100 * (a / b - 1) for a, b in zip(jct["agent"], jct["hostcap"])]
    assert tab["agent"]["vs_hostcap"][0] == pytest.approx(np.mean(rel))
    assert tab["hostcap"]["vs_agent"][0] == pytest.approx(
        np.mean([100 * (b / a - 1) for a, b in zip(jct["agent"], jct["hostcap"])])
    )
    assert tab["agent"]["vs_agent"] == [0.0, 0.0, 0.0]
    assert "| `lee-gpu-wfair-v1-s0` | hostcap |" in ablate.markdown(ablate.table(rows))


def test_env_decode_is_the_inverse_of_encode():
    env = ModelPolicy.load("lee-gpu-wfair-v1-s0").make_env()
    env.reset(seed=2000)
    env = env.unwrapped
    launches = np.flatnonzero(env.action_masks()[: env.codec.decline])
    assert len(launches) > 0
    for a in launches:
        assert env.encode(env.decode(a)) == a
    assert env.decode(env.codec.decline) == DECLINE


def test_the_cap_is_hostcaps_tuned_one_under_the_models_gate():
    from baselines.hostcap import host_cap, tuned_frac

    assert ablate.cap_gater(ModelPolicy.load("ila72-gate-ft-v1-s0")) == "hybridmr"
    assert ablate.cap_gater(ModelPolicy.load("hybrid48-peak-srpt-v1-s0")) == "hybridmr"
    assert ablate.cap_gater(ModelPolicy.load("lee-gpu-wfair-v1-s0")) is None
    assert ablate.AblatedPolicy("ila72-gate-ft-v1-s0", "hostcap", frac=0.5).cap.frac == 0.5
    # on ila72 (12 map and 6 reduce slots a host, at hostcap's tuned fraction under
    # hybridmr): decline exactly where the asking VM's host is at that cap
    pol = ablate.AblatedPolicy("ila72-gate-ft-v1-s0", "hostcap")
    env = pol.make_env()
    pol.bind(env)
    pol.start_episode(2000)
    _, info = env.reset(seed=2000)
    u, seen = env.unwrapped, Counter()
    for _ in range(600):
        ctx = u.decision_context()
        vms = ctx.vm.host.vms
        kind = ctx.slot_kind
        slots = sum(v.map_slots if kind == "map" else v.reduce_slots for v in vms)
        running = sum(1 for v in vms for a in v.running if a.task.kind == kind)
        mask = info["action_mask"].astype(bool)
        a = pol.predict(None, info)
        if mask[u.codec.decline] and mask[: u.codec.decline].any():
            at_cap = running >= host_cap(tuned_frac("ila72", "hybridmr"), slots)
            assert (a == u.codec.decline) == at_cap
            seen[at_cap] += 1
        _, _, term, trunc, info = env.step(a)
        assert not (term or trunc)
    assert seen[True] > 0 and seen[False] > 0


def test_bad_input_names_the_key(capsys):
    lee = ["--models", "lee-gpu-wfair-v1-s0"]
    for args, says in (
        (["--variants", "agent,best"], "--variants: expected a list of"),
        (["--frac", "1.5"], "--frac: expected a number in (0, 1]"),
        (["--seeds", "3000-3002"], "--seeds: [3000, 3001, 3002] are test seeds"),
        (["--workers", "0"], "--workers: expected an integer >= 1, got 0"),
    ):
        assert ablate.main(lee + args) == 2
        assert says in capsys.readouterr().err
    # a bad name among several fails before any episode runs
    assert ablate.main(["--models", "lee-gpu-wfair-v1-s0,no-such-model"]) == 2
    out = capsys.readouterr()
    assert "no-such-model" in out.err and out.out == ""
    assert "ep/s" not in out.err  # no progress bar: no episode started
    with pytest.raises(ValueError, match="decode='sample'"):
        ablate.AblatedPolicy(ModelPolicy(StubModel(PROBS), decode="argmax"), "agent")


def test_a_bound_near_zero_keeps_its_side():
    # the leaderboard's formatter: an upper bound of -0.014 % excludes zero, and says so
    assert ablate._pct([-1.23, -2.31, -0.014]) == "-1.2 % [-2.3, -0.01]"
    assert ablate._pct([0.03, None, None]) == "+0.03 %"
    assert ablate._pct([-3e-13, -1.0, 1.0]) == "+0.0 % [-1.0, +1.0]"
    assert ablate._pct(None) == "" and ablate._pct([None, None, None]) == ""
