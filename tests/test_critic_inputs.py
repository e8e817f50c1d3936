"""Critic-only inputs: the workload still to arrive, seen by the critic and never by the
actor (mrgym/envs/observation.py CRITIC_FEATURE_TABLE, agents/critic_inputs.py); the critic's
work feature counts the work the simulator runs, and a snapshot names the setting it lacks."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from helpers import tiny_train_config as _cfg

import mrgym
from agents.config import TrainConfig, TrainConfigError, load_train_config
from agents.train import load_model, train
from mrgym.envs.observation import CRITIC_FEATURES, job_work
from mrgym.sim.jobs import PROFILES, JobSpec


def _env(**kw):
    return gym.make("MRCluster-v0", config="ila72", **kw).unwrapped


def test_features_follow_the_workload_still_to_arrive():
    base, env = _env(), _env(critic_inputs=True)
    n = len(CRITIC_FEATURES)
    assert env.observation_space.shape[0] == base.observation_space.shape[0] + n
    assert env.feature_names[-n:] == [f"critic.{f}" for f in CRITIC_FEATURES]
    obs0, _ = base.reset(seed=3)
    obs, info = env.reset(seed=3)
    np.testing.assert_array_equal(obs[:-n], obs0)  # the rest of the observation as before
    view = env.view
    jobs, cap = view.all_jobs, env.max_time
    rng = np.random.default_rng(0)
    seen_some = seen_none = False
    for _ in range(4000):
        crit = obs[-n:]
        i = view.n_arrived
        left = jobs[i:]
        if left:
            seen_some = True
            maps_all = sum(j.spec.n_maps for j in jobs)
            work_all = sum(job_work(j.spec) for j in jobs)
            want = [
                len(left) / len(jobs),
                np.log1p(sum(j.spec.n_maps for j in left)) / np.log1p(maps_all),
                np.log1p(sum(job_work(j.spec) for j in left)) / np.log1p(work_all),
                (left[0].spec.submit_s - view.now) / cap,
                np.mean([j.spec.submit_s for j in left]) / cap - view.now / cap,
            ]
            np.testing.assert_allclose(crit, np.clip(want, 0, 1), rtol=1e-5, atol=1e-6)
            assert crit[0] > 0 and crit[3] >= 0
        else:
            seen_none = True
            assert not crit.any()  # every job has arrived: nothing is left to come
        legal = np.flatnonzero(info["action_mask"])
        obs, _r, term, trunc, info = env.step(int(rng.choice(legal)))
        if term or trunc:
            break
    assert seen_some and seen_none


def test_a_bad_value_names_the_key():
    with pytest.raises(ValueError, match="critic_inputs: must be true or false, got 'yes'"):
        _env(critic_inputs="yes")


@pytest.mark.parametrize(
    "text, error",
    [
        (
            "env: {critic_inputs: true}\n",
            "critic_inputs: true needs policy CriticInputsPolicy or JobSetPolicy .* got "
            "policy MlpPolicy",
        ),
        ("policy: CriticInputsPolicy\n", "CriticInputsPolicy needs env.critic_inputs: true"),
        (
            "policy: CriticInputsPolicy\nalgorithm: ppo\nenv: {critic_inputs: true}\n",
            "needs algorithm maskable_ppo, got ppo",
        ),
    ],
)
def test_config_ties_the_inputs_to_their_policy(tmp_path, text, error):
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(TrainConfigError, match=error):
        load_train_config(p)
    for policy in ("CriticInputsPolicy", "JobSetPolicy"):
        ok = TrainConfig.model_validate({"policy": policy, "env": {"critic_inputs": True}})
        assert ok.env.critic_inputs


def _critic_cfg(steps: int = 128, policy: str = "CriticInputsPolicy") -> TrainConfig:
    cfg = _cfg("maskable_ppo", steps=steps)
    data = cfg.model_dump()
    data["policy"] = policy
    data["env"]["critic_inputs"] = True
    return TrainConfig.model_validate(data)


def test_actor_ignores_the_critic_inputs_and_the_critic_uses_them(tmp_path):
    run = train(_critic_cfg(), logdir=tmp_path, progress=False)
    model, saved = load_model(run / "model.zip")  # a saved and reloaded model
    assert saved.env.critic_inputs
    policy = model.policy
    env = gym.make("MRCluster-v0", **{"config": "lee-gpu", "job_slots": 4, "critic_inputs": True})
    obs, info = env.reset(seed=5)
    n = len(CRITIC_FEATURES)
    a = th.as_tensor(np.stack([obs, obs]))
    a[1, -n:] = th.as_tensor([0.9, 0.1, 0.7, 0.3, 0.5])  # another future, same state
    with th.no_grad():
        probs = policy.get_distribution(a).distribution.probs
        values = policy.predict_values(a)
    th.testing.assert_close(probs[0], probs[1], rtol=0, atol=0)
    assert values[0].item() != values[1].item()
    # the actor's extractor zeroes the hidden inputs; the critic's passes them on
    feats = policy.pi_features_extractor(a)
    assert not feats[:, -n:].any()
    assert policy.vf_features_extractor(a)[1, -n:].sum() > 0


def test_model_policy_runs_it_and_refuses_an_env_without_the_inputs(tmp_path):
    run = train(_critic_cfg(), logdir=tmp_path, progress=False)
    pol = mrgym.ModelPolicy.load(run)
    assert pol.env_kwargs["critic_inputs"] is True
    env = pol.make_env()
    res = mrgym.run_episode(env, pol, seed=7, max_steps=300)
    assert res.metrics["jobs_completed"] == res.metrics["jobs_submitted"] > 0
    plain = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4)
    with pytest.raises(ValueError, match="observation space"):
        pol.bind(plain)


def test_the_set_policy_s_value_reads_the_inputs_and_its_actor_does_not(tmp_path):
    # JobSetPolicy with env.critic_inputs: the extractor passes the hidden features past
    # the slot embeddings, for the value network alone (agents/extractors.py)
    run = train(_critic_cfg(policy="JobSetPolicy"), logdir=tmp_path, progress=False)
    model, saved = load_model(run / "model.zip")
    assert saved.env.critic_inputs and saved.policy == "JobSetPolicy"
    policy = model.policy
    assert policy.features_extractor.critic_dim == len(CRITIC_FEATURES)
    env = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, critic_inputs=True)
    obs, _ = env.reset(seed=5)
    n = len(CRITIC_FEATURES)
    a = th.as_tensor(np.stack([obs, obs, obs]))
    a[1, -n:] = th.as_tensor([0.9, 0.1, 0.7, 0.3, 0.5])  # another future, same state
    a[2, -n:] = th.nan  # not even a NaN there reaches the actor
    with th.no_grad():
        probs = policy.get_distribution(a).distribution.probs
        values = policy.predict_values(a[:2])
    th.testing.assert_close(probs[0], probs[1], rtol=0, atol=0)
    th.testing.assert_close(probs[0], probs[2], rtol=0, atol=0)
    assert values[0].item() != values[1].item()
    # and the saved model plays an episode through ModelPolicy, in its own env
    pol = mrgym.ModelPolicy.load(run)
    res = mrgym.run_episode(pol.make_env(), pol, seed=7, max_steps=300)
    assert res.metrics["jobs_submitted"] > 0 and res.invalid_actions == 0


def test_every_builder_of_the_set_policy_passes_it_the_inputs():
    # train, tune and the training benchmark build the policy through resolve_policy
    from agents.extractors import JobSetPolicy, resolve_policy

    policy, hp = resolve_policy("JobSetPolicy", {"policy_kwargs": {"net_arch": [8]}}, True)
    assert policy is JobSetPolicy
    assert hp["policy_kwargs"] == {
        "net_arch": [8],
        "features_extractor_kwargs": {"critic_inputs": True},
    }
    assert resolve_policy("JobSetPolicy", {}, False)[1] == {}
    assert resolve_policy("CriticInputsPolicy", {}, True)[1] == {}  # its own extractors


def test_the_set_policy_without_the_inputs_is_unchanged():
    # the default set policy reads no critic features: its value net's input is the
    # pooled features alone, and an env with the inputs does not fit its layout
    from sb3_contrib import MaskablePPO

    from agents.extractors import JobSetPolicy

    env = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4)
    model = MaskablePPO(JobSetPolicy, env, n_steps=16, batch_size=16, device="cpu")
    fe = model.policy.features_extractor
    assert fe.critic_dim == 0
    assert model.policy.mlp_extractor.value_net[0].in_features == fe.pooled_dim
    wide = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, critic_inputs=True)
    with pytest.raises(ValueError, match="not .* context features"):
        MaskablePPO(JobSetPolicy, wide, n_steps=16, batch_size=16, device="cpu")


# -- the work feature and snapshots --------------------------------------------------------
def test_a_map_only_job_has_no_reduce_work():
    # attempts.run_map writes a map-only job's output to HDFS and no reduce ever runs:
    # its CPU work is its maps' only
    prof = PROFILES["sort"]
    spec = JobSpec("m", prof, 0.0, 8, 0, 1024.0)
    assert job_work(spec) == pytest.approx(1024.0 * prof.map_cpu_s_per_mb)


def test_restore_names_a_setting_the_snapshot_lacks():
    env = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4).unwrapped
    env.reset(seed=1)
    snap = env.snapshot()
    env.restore(snap)  # its own snapshot: fine
    old = dataclasses.replace(
        snap, settings=tuple(kv for kv in snap.settings if kv[0] != "critic_inputs")
    )
    with pytest.raises(ValueError, match="does not record critic_inputs"):
        env.restore(old)
    other = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, critic_inputs=True)
    with pytest.raises(ValueError, match="critic_inputs=False"):
        other.unwrapped.restore(snap)
