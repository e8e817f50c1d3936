"""Discounting per simulated second (agents/time_discount.py): the GAE recursion with
gamma ** dt (and with lambda_per: second, gae_lambda ** dt), the environment's sojourn
times, the config checks and a short training run."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer

import mrgym  # noqa: F401  (registers MRCluster-v0)
from agents.config import TrainConfig
from agents.time_discount import TimeDiscountBuffer, TimeLambdaBuffer
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
DTS = [2.0, 0.0, 3.5, 1.0, 0.5]  # simulated seconds per step; step 1 takes none


def _computed(cls):
    """A ``cls`` buffer of the five steps above with DTS, its GAE computed from V = 4."""
    buf = _buffer(cls, 5)
    _fill(buf, REWARDS, VALUES, STARTS)
    buf.dts[:, 0] = DTS
    buf.compute_returns_and_advantage(torch.tensor([4.0]), np.array([0.0]))
    return buf


def test_the_advantages_follow_gamma_to_the_sojourn_time():
    dts, last_value = DTS, 4.0
    buf = _computed(TimeDiscountBuffer)
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


def test_lambda_per_second_decays_the_trace_by_the_sojourn_time():
    dts = DTS
    buf = _computed(TimeLambdaBuffer)
    want, gae = [0.0] * 5, 0.0
    for t in reversed(range(5)):
        nxt, alive = (4.0, 1.0) if t == 4 else (VALUES[t + 1], 1.0 - STARTS[t + 1])
        delta = REWARDS[t] + GAMMA ** dts[t] * nxt * alive - VALUES[t]
        gae = delta + (GAMMA * LAM) ** dts[t] * alive * gae
        want[t] = gae
    np.testing.assert_allclose(buf.advantages[:, 0], want, rtol=1e-6)
    # two decisions at one instant share their credit undecayed: A_1 = delta_1 + A_2
    delta1 = REWARDS[1] + VALUES[2] - VALUES[1]
    assert buf.advantages[1, 0] == pytest.approx(delta1 + buf.advantages[2, 0], rel=1e-6)
    # one second per step: the per-decision buffer's numbers exactly
    per_decision = _buffer(TimeDiscountBuffer, 5)
    per_second = _buffer(TimeLambdaBuffer, 5)
    for b in (per_decision, per_second):
        _fill(b, REWARDS, VALUES, STARTS)
        b.compute_returns_and_advantage(torch.tensor([4.0]), np.array([0.0]))
    np.testing.assert_allclose(per_second.advantages, per_decision.advantages, rtol=1e-6)


def test_lambda_per_decision_keeps_the_recursion_bit_for_bit():
    # the per-decision recursion as it was before lambda_per existed, in float32 buffers:
    # runs trained without lambda_per must not move by a single bit
    buf = _computed(TimeDiscountBuffer)
    disc = np.power(GAMMA, buf.dts, dtype=np.float64)
    want, gae = np.zeros_like(buf.advantages), 0.0
    for t in reversed(range(5)):
        if t == 4:
            alive, nxt = 1.0 - np.array([0.0], np.float32), np.array([4.0], np.float32)
        else:
            alive, nxt = 1.0 - buf.episode_starts[t + 1], buf.values[t + 1]
        delta = buf.rewards[t] + disc[t] * nxt * alive - buf.values[t]
        gae = delta + disc[t] * LAM * alive * gae
        want[t] = gae
    np.testing.assert_array_equal(buf.advantages, want)


def test_lambda_per_second_needs_discount_per_second():
    with pytest.raises(ValueError, match="lambda_per: 'second' needs discount_per: 'second'"):
        TrainConfig.model_validate({"lambda_per": "second"})
    cfg = TrainConfig.model_validate({"lambda_per": "second", "discount_per": "second"})
    assert cfg.lambda_per == "second"
    assert TrainConfig().lambda_per == "decision"


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


@pytest.mark.parametrize(
    ("lambda_per", "buffer"), [("decision", TimeDiscountBuffer), ("second", TimeLambdaBuffer)]
)
def test_a_run_discounted_per_second_records_sojourn_times(tmp_path, lambda_per, buffer):
    cfg = TrainConfig.model_validate(
        {
            "name": "tiny-semi-mdp",
            "n_envs": 1,
            "total_steps": 128,
            "env": {"scenario": "lee-gpu", "job_slots": 4, "max_sim_time_s": 600},
            "hyperparameters": {"n_steps": 64, "batch_size": 32, "gamma": 0.99},
            "discount_per": "second",
            "lambda_per": lambda_per,
            "checkpoint_every_steps": 128,
            "eval": {"seeds": [7], "every_steps": 10_000},
        }
    )
    run = train(cfg, logdir=tmp_path, progress=False)
    model, saved = load_model(run / "model.zip")
    assert saved.discount_per == "second" and model.num_timesteps >= 128
    assert saved.lambda_per == lambda_per
    assert type(model.rollout_buffer) is buffer  # kept by the saved model
    assert f"|lambda_per|{lambda_per}|" in _hparams_text(run)  # and TensorBoard's TEXT tab


def _hparams_text(run) -> str:
    """The run's hyperparameter table as HParamsTextCallback wrote it to TensorBoard."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    texts = []
    for events in run.glob("tb/*/events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        for tag in acc.Tags()["tensors"]:
            if tag.startswith("hyperparameters"):
                texts += [t.tensor_proto.string_val[0].decode() for t in acc.Tensors(tag)]
    return "\n".join(texts)


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


# -- sojourn times in SB3's rollouts ----------------------------------------------------
class _TinyEnv(gym.Env):
    """Three decisions per episode, each covering ``dt`` simulated seconds; the third is
    truncated (a time cap), so SB3 bootstraps it with the terminal observation's value."""

    observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self, dt: float = 4.0):
        self.dt = dt
        self.k = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.k = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.k += 1
        obs = np.full(1, self.k / 3.0, np.float32)
        return obs, 0.0, False, self.k == 3, {"dt": self.dt}

    def action_masks(self):
        return np.ones(2, bool)


def _collect(dts, gamma=0.5):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.time_discount import SojournCallback, TimeDiscountBuffer

    venv = DummyVecEnv([lambda dt=dt: _TinyEnv(dt) for dt in dts])
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=6,
        batch_size=6,
        n_epochs=1,
        gamma=gamma,
        seed=0,
        device="cpu",
        rollout_buffer_class=TimeDiscountBuffer,
    )
    got = {}

    class Grab(BaseCallback):
        def _on_step(self):
            return True

        def _on_rollout_end(self):
            buf = self.model.rollout_buffer
            got["rewards"] = buf.rewards.copy()
            got["dts"] = buf.dts.copy()
            import torch

            with torch.no_grad():
                obs = torch.ones((1, 1))
                got["v_end"] = float(self.model.policy.predict_values(obs)[0, 0])

    model.learn(6, callback=[SojournCallback(), Grab()])
    return got


def test_each_env_gets_its_own_sojourn_times():
    got = _collect([4.0, 0.5])
    np.testing.assert_array_equal(got["dts"][:, 0], 4.0)
    np.testing.assert_array_equal(got["dts"][:, 1], 0.5)


def test_a_truncated_step_bootstraps_with_gamma_to_its_sojourn_time():
    gamma, dt = 0.5, 4.0
    got = _collect([dt], gamma)
    # steps 2 and 5 end a (truncated) episode: reward 0 + discount x V(terminal obs = 1)
    for step in (2, 5):
        assert math.isclose(got["rewards"][step, 0], gamma**dt * got["v_end"], rel_tol=1e-4)
