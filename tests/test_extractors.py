"""Job-slot networks (agents/extractors.py): invariance, equivariance, padding, masks, SB3 I/O."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3.common.torch_layers import FlattenExtractor

import mrgym  # noqa: F401  (registers MRCluster-v0)
from agents.extractors import (
    CONTEXT_DIM,
    SLOT_DIM,
    VALID,
    AttentionJobSetExtractor,
    JobSetExtractor,
    JobSetPolicy,
    job_slots_of,
    resolve_policy,
    split_observation,
)
from mrgym.envs.actions import PER_SLOT
from mrgym.envs.observation import GLOBAL_FEATURES, JOB_FEATURES, VM_FEATURES

K = 8
N_OBS = CONTEXT_DIM + K * SLOT_DIM
N_ACT = K * PER_SLOT + 1
OBS_SPACE = spaces.Box(0.0, 1.0, (N_OBS,), np.float32)
ACT_SPACE = spaces.Discrete(N_ACT)
EXTRACTORS = [JobSetExtractor, AttentionJobSetExtractor]
BY_NAME = {"deepsets": JobSetExtractor, "attention": AttentionJobSetExtractor}


@pytest.fixture(autouse=True)
def one_thread():
    before = th.get_num_threads()
    th.set_num_threads(1)
    yield
    th.set_num_threads(before)


def _obs(rng: np.random.Generator, batch: int = 16) -> th.Tensor:
    """Observations with random features and 0..K valid slots; empty slots all zero."""
    x = rng.uniform(0, 1, (batch, N_OBS)).astype(np.float32)
    slots = x[:, CONTEXT_DIM:].reshape(batch, K, SLOT_DIM)
    valid = rng.uniform(size=(batch, K)) < rng.uniform(0.2, 1.0, (batch, 1))
    valid[0], valid[1] = True, False  # a full row and an empty one
    slots[~valid] = 0.0
    slots[..., VALID] = valid
    return th.as_tensor(x)


def _permute(obs: th.Tensor, perm: np.ndarray) -> th.Tensor:
    ctx, slots = split_observation(obs)
    return th.cat([ctx, slots[:, perm].flatten(start_dim=1)], dim=1)


def _policy(extractor: type) -> JobSetPolicy:
    th.manual_seed(0)
    return JobSetPolicy(OBS_SPACE, ACT_SPACE, lambda _: 3e-4, features_extractor_class=extractor)


def _probs(policy: JobSetPolicy, obs: th.Tensor, masks=None) -> th.Tensor:
    with th.no_grad():
        return policy.get_distribution(obs, masks).distribution.probs


def _logits(policy: JobSetPolicy, obs: th.Tensor) -> th.Tensor:
    """The raw action logits (before masking and normalization)."""
    with th.no_grad():
        return policy.action_net(policy.mlp_extractor.forward_actor(policy.extract_features(obs)))


def test_split_follows_the_observation_tables():
    assert CONTEXT_DIM == len(VM_FEATURES) + len(GLOBAL_FEATURES) == 23
    assert SLOT_DIM == len(JOB_FEATURES) == 21 and JOB_FEATURES[VALID] == "valid"
    x = th.arange(2 * N_OBS, dtype=th.float32).reshape(2, N_OBS)
    ctx, slots = split_observation(x)
    assert ctx.shape == (2, 23) and slots.shape == (2, K, 21)
    assert slots[1, 3, 0].item() == N_OBS + 23 + 3 * 21  # row 1, slot 3, feature 0
    assert job_slots_of(23 + 21) == 1
    with pytest.raises(ValueError, match="job-slot features"):
        job_slots_of(N_OBS + 1)


@pytest.mark.parametrize("cls", EXTRACTORS)
def test_extractor_is_permutation_invariant(cls):
    th.manual_seed(0)
    fe = cls(OBS_SPACE).eval()
    assert fe.features_dim == 2 * 64 + 32
    rng = np.random.default_rng(1)
    obs = _obs(rng)
    with th.no_grad():
        base = fe(obs)
        for _ in range(3):
            moved = fe(_permute(obs, rng.permutation(K)))
            assert th.allclose(base, moved, atol=1e-5), (base - moved).abs().max()
    # ... and it does read the slots: changing a valid job's features changes the output
    changed = obs.clone()
    changed[0, CONTEXT_DIM + 2] += 0.5  # row 0 (all valid), slot 0, its second feature
    with th.no_grad():
        assert (fe(changed) - base)[0].abs().max() > 1e-4


@pytest.mark.parametrize("cls", EXTRACTORS)
def test_slot_logits_are_permutation_equivariant(cls):
    policy = _policy(cls)
    rng = np.random.default_rng(2)
    obs = _obs(rng)
    perm = rng.permutation(K)
    base, moved = _logits(policy, obs), _logits(policy, _permute(obs, perm))
    slot = base[:, : K * PER_SLOT].reshape(-1, K, PER_SLOT)
    assert th.allclose(slot[:, perm].flatten(start_dim=1), moved[:, : K * PER_SLOT], atol=1e-5)
    assert th.allclose(base[:, -1], moved[:, -1], atol=1e-5)  # decline
    # not trivially so: the map logits differ between the jobs of a row
    assert (slot[0, :, 0].max() - slot[0, :, 0].min()) > 1e-3 * slot[0, :, 0].abs().max()
    with th.no_grad():
        v0, v1 = policy.predict_values(obs), policy.predict_values(_permute(obs, perm))
    assert th.allclose(v0, v1, atol=1e-5)


@pytest.mark.parametrize("cls", EXTRACTORS)
def test_empty_slots_are_ignored_whatever_they_hold(cls):
    th.manual_seed(0)
    fe = cls(OBS_SPACE).eval()
    policy = _policy(cls)
    rng = np.random.default_rng(3)
    obs = _obs(rng)
    _, slots = split_observation(obs)
    empty = (slots[..., VALID] == 0).unsqueeze(-1).expand_as(slots).clone()
    empty[..., VALID] = False  # they stay empty: only their other features change
    garbage = slots.clone()
    garbage[empty] = th.as_tensor(rng.uniform(-50, 50, int(empty.sum())), dtype=th.float32)
    dirty = th.cat([obs[:, :CONTEXT_DIM], garbage.flatten(start_dim=1)], dim=1)
    assert (dirty != obs).sum() > 100
    with th.no_grad():
        assert th.allclose(fe(obs), fe(dirty), atol=1e-6)
        assert th.equal(fe(obs)[1, :128], th.zeros(128))  # no job: zero mean and max
    assert th.allclose(_probs(policy, obs), _probs(policy, dirty), atol=1e-6)


def _env_batch() -> tuple[th.Tensor, np.ndarray]:
    """Real observations and masks of ila72 with 8 slots (first legal action each step),
    from steps 300-599: by then several jobs compete for each free slot."""
    env = gym.make("MRCluster-v0", config="ila72", job_slots=K)
    obs, _ = env.reset(seed=5)
    xs, ms = [], []
    for step in range(600):
        mask = env.unwrapped.action_masks()
        if step >= 300:
            xs.append(obs)
            ms.append(mask)
        obs, *_ = env.step(int(np.flatnonzero(mask)[0]))
    env.close()
    return th.as_tensor(np.array(xs)), np.array(ms)


@pytest.mark.parametrize("cls", EXTRACTORS)
def test_masked_actions_get_zero_probability(cls):
    obs, masks = _env_batch()
    assert masks.sum(axis=1).max() > 2 and (~masks).any()  # real choices, real masks
    probs = _probs(_policy(cls), obs, masks)
    assert th.all(probs[~th.as_tensor(masks)] == 0)
    assert th.all(probs[th.as_tensor(masks)] > 0)
    assert th.allclose(probs.sum(dim=1), th.ones(len(obs)), atol=1e-5)


def test_resolve_policy_turns_names_into_classes():
    hp = {"n_steps": 8, "policy_kwargs": {"features_extractor_class": "attention"}}
    policy, out = resolve_policy("JobSetPolicy", hp)
    assert policy is JobSetPolicy
    assert out["policy_kwargs"]["features_extractor_class"] is AttentionJobSetExtractor
    assert hp["policy_kwargs"]["features_extractor_class"] == "attention"  # input untouched
    assert resolve_policy("MlpPolicy", {"n_steps": 8}) == ("MlpPolicy", {"n_steps": 8})
    with pytest.raises(ValueError, match="unknown 'sets'"):
        resolve_policy("MlpPolicy", {"policy_kwargs": {"features_extractor_class": "sets"}})
    with pytest.raises(ValueError, match="must be a JobSetExtractor"):
        JobSetPolicy(
            OBS_SPACE, ACT_SPACE, lambda _: 3e-4, features_extractor_class=FlattenExtractor
        )


@pytest.mark.parametrize(
    "policy, extractor", [("MlpPolicy", "deepsets"), ("JobSetPolicy", "attention")]
)
def test_maskable_ppo_learns_saves_and_loads(policy, extractor, tmp_path):
    env = gym.make("MRCluster-v0", config="ila72", job_slots=K)
    cls, hp = resolve_policy(
        policy,
        {
            "n_steps": 128,
            "batch_size": 64,
            "n_epochs": 2,
            "policy_kwargs": {"features_extractor_class": extractor},
        },
    )
    model = MaskablePPO(cls, env, seed=0, device="cpu", **hp)
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(256)
    assert model.num_timesteps == 256
    assert any(not th.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True))
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    assert type(loaded.policy) is type(model.policy)
    assert isinstance(loaded.policy.features_extractor, BY_NAME[extractor])
    obs, masks = _env_batch()
    a0, _ = model.predict(obs.numpy(), action_masks=masks, deterministic=True)
    a1, _ = loaded.predict(obs.numpy(), action_masks=masks, deterministic=True)
    assert np.array_equal(a0, a1) and masks[np.arange(len(a0)), a0].all()
    assert th.allclose(_probs(model.policy, obs, masks), _probs(loaded.policy, obs, masks))
    env.close()
