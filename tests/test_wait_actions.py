"""Wait actions (``wait_actions=W``): action 3K + w declines the slot and the next w asks of
the VM's slot kind without asking the policy, while declining is legal there."""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numpy as np
import pytest
from helpers import ILA72_SMALL

import mrgym  # noqa: F401  (registers MRCluster-v1)
from mrgym.envs.actions import MAX_WAIT_ACTIONS, ActionCodec

KW = {"config": "ila72", "overrides": ILA72_SMALL, "queue_order": "deficit"}
KW |= {"work_conserving": "cluster"}


def _env(waits: int):
    return gym.make("MRCluster-v1", wait_actions=waits, **KW)


def test_the_waits_follow_decline_and_are_legal_exactly_when_it_is():
    env = _env(3)
    u = env.unwrapped
    assert env.action_space.n == 3 * 8 + 1 + 3 and u.codec.decline == 24
    _, info = env.reset(seed=1)
    seen = set()
    for _ in range(300):
        m = info["action_mask"].astype(bool)
        assert (m[25:] == m[24]).all()
        seen.add(bool(m[24]))
        legal = np.flatnonzero(m[:24])
        _, _, te, tr, info = env.step(int(legal[0]) if len(legal) else 24)
        if te or tr:
            break
    assert seen == {True, False}  # both cases were checked
    assert u.codec.describe(26) == "decline and wait 2 more ask(s)"


@pytest.mark.parametrize("bad", [-1, MAX_WAIT_ACTIONS + 1, 1.5, True, "2"])
def test_a_bad_wait_count_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="wait_actions"):
        ActionCodec(8, "deficit", False, "cluster", bad)


def _rule(info, decline: int) -> tuple[int, int]:
    """(launch or decline, asks to hold): wait 2 on VMs whose id is a multiple of 3 where
    declining is legal, else the first legal launch."""
    m = info["action_mask"].astype(bool)
    if m[decline] and info["decision_vm"] % 3 == 0:
        return decline, 2
    legal = np.flatnonzero(m[:decline])
    return (int(legal[0]), 0) if len(legal) else (decline, 0)


def test_a_wait_is_the_same_as_declining_the_next_asks_by_hand():
    # the env's waits, against a policy that declines the held asks itself (no waits)
    env = _env(2)
    _, info = env.reset(seed=3)
    steps = held = 0
    while True:
        a, hold = _rule(info, 24)
        _, _, te, tr, info = env.step(a + hold)
        steps, held = steps + 1, held + info["held_asks"]
        if te or tr:
            break
    waited = info["episode_metrics"]

    env = _env(0)
    _, info = env.reset(seed=3)
    holds: dict[tuple[int, str], int] = {}
    by_hand = 0
    while True:
        key = (info["decision_vm"], info["slot_kind"])
        if holds.get(key) and info["action_mask"][24]:
            holds[key] -= 1
            a = 24
        else:
            holds.pop(key, None)
            a, hold = _rule(info, 24)
            if hold:
                holds[key] = hold
        _, _, te, tr, info = env.step(a)
        by_hand += 1
        if te or tr:
            break
    assert held > 100  # the waits held many asks
    assert by_hand == steps + held
    assert info["episode_metrics"] == waited


def test_copies_pickles_and_snapshots_in_the_middle_of_a_wait_continue_the_same():
    env = _env(3)
    _, info = env.reset(seed=2)
    u = env.unwrapped
    for _ in range(200):
        a, _ = _rule(info, 24)
        _, _, _, _, info = env.step(a + 3 if a == 24 else a)
    assert u._holds  # some holds are pending
    snap = u.snapshot()
    restored = _env(3).unwrapped
    restored.restore(snap)
    twins = [copy.deepcopy(env).unwrapped, pickle.loads(pickle.dumps(u)), restored]
    assert all(t._holds == u._holds for t in twins)
    for _ in range(200):
        a, _ = _rule(info, 24)
        out = u.step(a)
        for t in twins:
            other = t.step(a)
            assert np.array_equal(out[0], other[0]) and out[1] == other[1]
            assert out[4]["held_asks"] == other[4]["held_asks"]
        info = out[4]


def test_a_masked_wait_launches_and_the_last_mask_lets_every_decline():
    # work conserving: while a launch is legal, decline and the waits are masked, and a
    # masked choice takes the first legal launch (no hold starts)
    env = gym.make("MRCluster-v1", wait_actions=2, **{**KW, "work_conserving": True})
    _, info = env.reset(seed=0)
    assert not info["action_mask"][24:].any()
    _, _, _, _, info = env.step(26)
    assert info["invalid_action"] and not env.unwrapped._holds
    while True:
        _, _, te, tr, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if te or tr:
            break
    assert info["action_mask"][24:].all() and not info["action_mask"][:24].any()


def test_a_model_binds_to_its_wait_count():
    from mrgym.policy import BINDING_SETTINGS, env_setting

    assert "wait_actions" in BINDING_SETTINGS
    assert env_setting(_env(2), "wait_actions") == 2
    assert env_setting(_env(0), "wait_actions") == 0


def test_added_waits_keep_the_launches_odds_and_split_declines():
    th = pytest.importorskip("torch")
    from helpers import tiny_train_config

    from agents.train import _add_waits, _new_model, make_vec

    probs = []
    base = tiny_train_config("maskable_ppo", steps=64).model_copy(update={"policy": "JobSetPolicy"})
    models = []
    for waits in (0, 3):
        cfg = base.model_copy(update={"env": base.env.model_copy(update={"wait_actions": waits})})
        venv = make_vec(cfg)
        models.append((_new_model(cfg, venv, ""), venv))
    (m0, v0), (m3, v3) = models
    # a decline logit far from the launches', so that the split is visible
    state = m0.policy.state_dict()
    state["action_net.extra_logits.bias"] = state["action_net.extra_logits.bias"] + 1.0
    m0.policy.load_state_dict(state)
    m3.policy.load_state_dict(_add_waits(m0.policy.state_dict(), 3, "JobSetPolicy"))
    obs = v0.reset()
    for model, n in ((m0, 13), (m3, 16)):
        obs_t, _ = model.policy.obs_to_tensor(obs)
        with th.no_grad():
            dist = model.policy.get_distribution(obs_t, action_masks=np.ones((1, n), bool))
        probs.append(dist.distribution.probs[0].numpy())
    p0, p3 = probs
    assert np.allclose(p3[:12], p0[:12], atol=1e-6)
    assert p3[12:].sum() == pytest.approx(p0[12], abs=1e-6)
    assert np.allclose(p3[12:], p0[12] / 4, atol=1e-6)
    with pytest.raises(ValueError, match="JobSetPolicy"):
        _add_waits(m0.policy.state_dict(), 3, "MlpPolicy")
    for _, v in models:
        v.close()


def test_init_from_adds_waits_to_a_model_without_them(tmp_path):
    th = pytest.importorskip("torch")
    from helpers import tiny_train_config

    from agents.train import load_model, train

    base = tiny_train_config("maskable_ppo", steps=64).model_copy(
        update={"policy": "JobSetPolicy", "name": "src-s0"}
    )
    source = train(base, logdir=tmp_path, progress=False)
    hp = {**base.hyperparameters, "learning_rate": 0.0}  # the copied weights stay as they are
    env = base.env.model_copy(update={"wait_actions": 2})
    cfg = base.model_copy(
        update={"name": "waits", "init_from": str(source), "env": env, "hyperparameters": hp}
    )
    run = train(cfg, logdir=tmp_path, progress=False)
    src, _ = load_model(source / "model.zip")
    got, _ = load_model(run / "model.zip")
    assert got.action_space.n == src.action_space.n + 2
    a, b = src.policy.state_dict(), got.policy.state_dict()
    w, bias = "action_net.extra_logits.weight", "action_net.extra_logits.bias"
    assert all(th.equal(a[k], b[k]) for k in a if k not in (w, bias))
    assert th.equal(b[w], a[w].repeat(3, 1))
    assert th.allclose(b[bias], a[bias].repeat(3) - np.log(3))
    # a model that has waits is not given others
    again = cfg.model_copy(
        update={"init_from": str(run), "env": env.model_copy(update={"wait_actions": 3})}
    )
    with pytest.raises(ValueError, match=r"env\.wait_actions 2; this config has 3"):
        train(again, logdir=tmp_path, progress=False)
