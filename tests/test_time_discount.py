"""Discounting per simulated second (agents/time_discount.py): the GAE recursion with
gamma ** dt, the environment's sojourn times, the config check and a short training run."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

import mrgym  # noqa: F401  (registers MRCluster-v0)
from agents.config import TrainConfig
from agents.time_discount import TimeDiscountBuffer
from agents.train import load_model, train

GAMMA, LAM = 0.9, 0.8


def _fill(buf, rewards, values, starts):
    for r, v, s in zip(rewards, values, starts):
        buf.add(
            np.zeros((1, 2), np.float32),
            np.zeros((1, 1)),
            np.array([r]),
            np.array([s]),
            torch.tensor([v]),
            torch.zeros(1),
            action_masks=np.ones((1, 3)),
        )


def _buffer(cls, n: int):
    buf = cls(n, spaces.Box(0, 1, (2,)), spaces.Discrete(3), gamma=GAMMA, gae_lambda=LAM)
    buf.reset()
    return buf


REWARDS = [-1.0, -0.5, 0.0, -2.0, -1.0]
VALUES = [-3.0, -2.5, -2.0, -1.5, -0.5]
STARTS = [1.0, 0.0, 0.0, 1.0, 0.0]  # a new episode at step 3


def test_the_advantages_follow_gamma_to_the_sojourn_time():
    dts = [2.0, 0.0, 3.5, 1.0, 0.5]
    buf = _buffer(TimeDiscountBuffer, 5)
    _fill(buf, REWARDS, VALUES, STARTS)
    buf.dts[:, 0] = dts
    last_value, done = 4.0, np.array([0.0])
    buf.compute_returns_and_advantage(torch.tensor([last_value]), done)
    # by hand, backwards; the step before an episode start does not bootstrap
    want, gae = [0.0] * 5, 0.0
    for t in reversed(range(5)):
        nxt, alive = (last_value, 1.0) if t == 4 else (VALUES[t + 1], 1.0 - STARTS[t + 1])
        g = GAMMA ** dts[t]
        delta = REWARDS[t] + g * nxt * alive - VALUES[t]
        gae = delta + g * LAM * alive * gae
        want[t] = gae
    np.testing.assert_allclose(buf.advantages[:, 0], want, rtol=1e-6)
    np.testing.assert_allclose(buf.returns[:, 0], np.array(want) + VALUES, rtol=1e-6)
    # a step that took no simulated time is not discounted at all
    assert want[1] == pytest.approx(REWARDS[1] + VALUES[2] - VALUES[1] + LAM * want[2])


def test_one_second_per_step_is_sb3s_per_step_discount():
    ours, sb3 = _buffer(TimeDiscountBuffer, 5), _buffer(MaskableRolloutBuffer, 5)
    for buf in (ours, sb3):
        _fill(buf, REWARDS, VALUES, STARTS)
        buf.compute_returns_and_advantage(torch.tensor([4.0]), np.array([0.0]))
    np.testing.assert_allclose(ours.advantages, sb3.advantages, rtol=1e-6)


def test_the_sojourn_times_add_up_to_the_simulated_time():
    env = gym.make("MRCluster-v0", config="lee-gpu", max_sim_time_s=600)
    obs, info = env.reset(seed=3)
    t0, total, zero = info["sim_time"], 0.0, 0
    for _ in range(300):
        mask = info["action_mask"].astype(bool)
        obs, _r, term, trunc, info = env.step(int(np.flatnonzero(mask)[-1]))
        assert info["dt"] >= 0.0
        total += info["dt"]
        zero += info["dt"] == 0.0
        if term or trunc:
            break
    assert total == pytest.approx(info["sim_time"] - t0, abs=1e-9)
    assert 0 < zero < 300  # slots of one heartbeat decide at one instant


def test_discount_per_second_needs_maskable_ppo():
    with pytest.raises(ValueError, match="discount_per: 'second' needs algorithm maskable_ppo"):
        TrainConfig.model_validate({"algorithm": "ppo", "discount_per": "second"})


def test_a_run_discounted_per_second_records_sojourn_times(tmp_path):
    cfg = TrainConfig.model_validate(
        {
            "name": "tiny-semi-mdp",
            "n_envs": 1,
            "total_steps": 128,
            "env": {"scenario": "lee-gpu", "job_slots": 4, "max_sim_time_s": 600},
            "hyperparameters": {"n_steps": 64, "batch_size": 32, "gamma": 0.99},
            "discount_per": "second",
            "checkpoint_every_steps": 128,
            "eval": {"seeds": [7], "every_steps": 10_000},
        }
    )
    run = train(cfg, logdir=tmp_path, progress=False)
    model, saved = load_model(run / "model.zip")
    assert saved.discount_per == "second" and model.num_timesteps >= 128
    assert isinstance(model.rollout_buffer, TimeDiscountBuffer)  # kept by the saved model


def test_the_callback_fills_the_buffer_with_the_steps_durations():
    from sb3_contrib import MaskablePPO

    from agents.time_discount import SojournCallback

    env = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, max_sim_time_s=600)
    seen: list[float] = []

    class Spy(SojournCallback):
        def _on_step(self) -> bool:
            seen.append(float(self.locals["infos"][0]["dt"]))
            return super()._on_step()

    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=32, rollout_buffer_class=TimeDiscountBuffer
    )
    model.learn(64, callback=Spy())
    np.testing.assert_array_equal(model.rollout_buffer.dts[:, 0], np.float32(seen))
    assert (model.rollout_buffer.dts == 0.0).any()  # slots of one heartbeat
