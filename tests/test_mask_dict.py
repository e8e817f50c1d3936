"""The Dict-observation action-mask view of MRCluster-v0 (mrgym.envs.mask_dict)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import mrgym  # noqa: F401 - registers MRCluster-v0
from mrgym.envs.mask_dict import MASK_KEY, OBS_KEY, DictMaskObservation


def _env(config: str = "lee-gpu", **kw) -> DictMaskObservation:
    return DictMaskObservation(gym.make("MRCluster-v0", config=config, **kw))


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_spaces_and_check_env():
    env = _env()
    assert set(env.observation_space.spaces) == {OBS_KEY, MASK_KEY}
    n = env.action_space.n
    assert env.observation_space[MASK_KEY].shape == (n,)
    assert env.observation_space[OBS_KEY] == env.unwrapped.observation_space
    check_env(env, skip_render_check=True)
    env.close()


@pytest.mark.parametrize(
    "config,kw",
    [
        ("lee-gpu", {}),
        ("lee-gpu", {"work_conserving": False, "speculation": True}),
        ("lsap-snapshot", {"queue_order": "arrival"}),
    ],
)
def test_the_mask_is_never_all_false_and_matches_the_env(config, kw):
    env = _env(config, **kw)
    rng = np.random.default_rng(0)
    steps = declines = 0
    for seed in (0, 1):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            mask = obs[MASK_KEY]
            assert env.observation_space.contains(obs)
            assert mask.any() and set(np.unique(mask)) <= {0.0, 1.0}
            assert np.array_equal(mask.astype(bool), env.action_masks())
            assert np.array_equal(mask, info["action_mask"].astype(np.float32))
            # mostly legal actions; every tenth an unmasked one (it declines)
            legal = np.flatnonzero(mask)
            a = int(rng.integers(env.action_space.n)) if steps % 10 == 9 else int(rng.choice(legal))
            declines += a == env.action_space.n - 1
            obs, _, term, trunc, info = env.step(a)
            done = term or trunc
            steps += 1
        assert obs[MASK_KEY].any()  # the final observation too
        assert "episode_metrics" in info
    assert steps > 50
    env.close()


class _BrokenEnv(gym.Env):
    """An env whose mask goes all-false on its first step: the wrapper must refuse it."""

    observation_space = gym.spaces.Box(0, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        return np.zeros(2, np.float32), {"action_mask": np.array([0, 0, 1], np.int8)}

    def step(self, action):
        info = {"action_mask": np.zeros(3, np.int8), "sim_time": 9.0}
        return np.zeros(2, np.float32), 0.0, False, False, info


def test_an_all_false_mask_is_refused():
    env = DictMaskObservation(_BrokenEnv())
    obs, _ = env.reset()
    assert obs[MASK_KEY].tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(RuntimeError, match="all-false action mask.*9.0"):
        env.step(2)


def test_a_dict_observation_library_trains_on_it():
    # SB3's MultiInputPolicy reads both keys from the observation, as RLlib's masking
    # module does; a short PPO run must go through episodes of the wrapped env
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO

    env = _env(max_sim_time_s=300)
    model = PPO(
        "MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(128)
    assert model.num_timesteps >= 128
    obs, _ = env.reset(seed=5)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(int(action))
