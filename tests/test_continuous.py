"""Decima's training episodes (``agents.continuous``): a random end drawn per episode from
its own seeded stream, the differential reward's arithmetic, and the config that turns
them on for training only."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import yaml
from helpers import tiny_train_config

from agents.config import TrainConfig
from agents.continuous import ContinuousSpec, DifferentialReward, RandomEnds
from agents.train import env_kwargs, make_vec


def _random_play(env, seed: int) -> tuple[list[float], bool, bool, float]:
    """Random legal actions to the episode's end: (sim times, terminated, truncated, horizon)."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    horizon, times = info["horizon_s"], []
    while True:
        mask = env.unwrapped.action_masks()
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        times.append(info["sim_time"])
        if term or trunc:
            return times, term, trunc, horizon


def _ends(horizon_mean_s: float = 150.0) -> RandomEnds:
    env = gym.make("MRCluster-v1", config="hybrid48", overrides={"workload.n_jobs": 60})
    return RandomEnds(env, horizon_mean_s)


def test_an_episode_ends_at_the_first_decision_past_its_drawn_horizon():
    times, term, trunc, horizon = _random_play(_ends(), 3)
    # Decima's end: the episode terminates there (no bootstrap past it)
    assert term and not trunc
    assert times[-1] >= horizon and all(t < horizon for t in times[:-1])
    # the same seed draws the same horizon; another seed another one
    assert _random_play(_ends(), 3)[3] == horizon
    assert _ends().reset(seed=4)[1]["horizon_s"] != horizon


def test_unseeded_resets_continue_the_horizon_stream():
    def horizons(env):
        out = [env.reset(seed=5)[1]["horizon_s"]]
        return out + [env.reset()[1]["horizon_s"] for _ in range(3)]

    first = horizons(_ends())
    assert len(set(first)) == 4 and horizons(_ends()) == first
    # Exp(mean) draws: a mean of 1 s scales them all by 1/150
    assert horizons(_ends(1.0)) == pytest.approx([h / 150.0 for h in first])


class _Clock(gym.Env):
    """Rewards and elapsed times from a list, as MRClusterEnv reports them."""

    observation_space = gym.spaces.Box(0, 1, (1,))
    action_space = gym.spaces.Discrete(1)

    def __init__(self, steps):
        self.steps, self.i, self.t = steps, 0, 0.0

    def reset(self, *, seed=None, options=None):
        return np.zeros(1, np.float32), {}

    def step(self, action):
        r, dt = self.steps[self.i]
        self.i += 1
        self.t += dt
        info = {"dt": dt, "sim_time": self.t}
        return np.zeros(1, np.float32), r, False, False, info


def test_the_differential_reward_subtracts_the_earlier_steps_rate():
    env = DifferentialReward(_Clock([(-4.0, 2.0), (-3.0, 1.0), (0.0, 0.0), (-6.0, 2.0)]), 2)
    env.reset()
    shaped = [env.step(0)[1] for _ in range(4)]
    # beta = 1 - 1/2: the rate after step 1 is -4/2, after 2 (-2-3)/(1+1), after 3 the same
    assert shaped == pytest.approx([-4.0, -3.0 + 2.0, 0.0, -6.0 + 2.5 * 2.0])
    # a constant rate is removed entirely once it is known, across episodes too
    env = DifferentialReward(_Clock([(-2.0 * dt, dt) for dt in (1.0, 3.0, 0.5, 2.0)]), 100)
    env.reset()
    shaped = [env.step(0)[1] for _ in range(2)]
    env.reset()
    shaped += [env.step(0)[1] for _ in range(2)]
    assert shaped[1:] == pytest.approx([0.0, 0.0, 0.0])


def _cfg(**continuous) -> TrainConfig:
    cfg = tiny_train_config("maskable_ppo", steps=64)
    env = cfg.env.model_copy(update={"scenario": "hybrid48", "continuous": continuous})
    return cfg.model_copy(update={"env": env})


def test_training_envs_get_the_long_workload_and_evaluation_the_scenario():
    data = _cfg(n_jobs=60, horizon_mean_s=100.0).model_dump()
    data["env"].update(hooks="hybridmr", hooks_gate=True, overrides={"cluster.background": 0.1})
    cfg = TrainConfig.model_validate(data)
    venv = make_vec(cfg)
    inner = venv.envs[0]
    sc = inner.unwrapped.scenario
    assert sc.workload.n_jobs == 60 and sc.cluster.background == 0.1  # the user's kept
    wrappers = []
    while isinstance(inner, gym.Wrapper):
        wrappers.append(type(inner).__name__)
        inner = inner.env
    # SB3's Monitor sees the cut episodes and the reward before the differential term
    assert wrappers[:3] == ["DifferentialReward", "Monitor", "RandomEnds"]
    assert type(inner.unwrapped._hooks).__name__ == "HybridMRScheduler"  # hooks installed
    # a cut step ends the episode for SB3 too: no bootstrap, the episode logged
    rng = np.random.default_rng(0)
    venv.reset()
    for _ in range(20_000):
        mask = venv.env_method("action_masks")[0]
        _, _, dones, infos = venv.step(np.array([rng.choice(np.flatnonzero(mask))]))
        if dones[0]:
            break
    assert dones[0] and "cut_at_s" in infos[0] and "episode" in infos[0]
    assert not infos[0].get("TimeLimit.truncated", False)
    venv.close()
    # the held-out evaluation and a saved model's env: the scenario's own 20 jobs
    assert env_kwargs(cfg)["overrides"] == {"cluster.background": 0.1}
    assert gym.make("MRCluster-v1", **env_kwargs(cfg)).unwrapped.scenario.workload.n_jobs == 20


def test_a_training_rate_scale_slows_the_training_arrivals_only():
    base = gym.make("MRCluster-v1", config="hybrid48").unwrapped.scenario.workload
    cfg = _cfg(n_jobs=60, interarrival_scale=2.0)
    venv = make_vec(cfg)
    drawn = venv.envs[0].unwrapped.scenario.workload
    venv.close()
    assert base.mean_interarrival_s > 0
    assert drawn.mean_interarrival_s == pytest.approx(2.0 * base.mean_interarrival_s)
    assert drawn.n_jobs == 60
    # the held-out evaluation and a saved model's env keep the scenario's rate
    evaluated = gym.make("MRCluster-v1", **env_kwargs(cfg)).unwrapped.scenario.workload
    assert evaluated.mean_interarrival_s == base.mean_interarrival_s
    # unset, the training overrides are the earlier runs' exactly: the job count alone
    assert ContinuousSpec(n_jobs=60).overrides("hybrid48", None) == {"workload.n_jobs": 60}


def test_bad_continuous_settings_name_the_key():
    with pytest.raises(ValueError, match="continuous.horizon: unknown key"):
        ContinuousSpec.from_dict({"horizon": 10})
    with pytest.raises(ValueError, match=r"continuous.n_jobs: expected an integer >= 1, got 0"):
        ContinuousSpec.from_dict({"n_jobs": 0})
    with pytest.raises(ValueError, match="horizon_mean_s: expected a number of seconds > 0"):
        TrainConfig.model_validate(_cfg(horizon_mean_s=-1).model_dump())
    both = _cfg(n_jobs=60).model_dump()
    both["env"]["randomize"] = {}
    with pytest.raises(ValueError, match="env.continuous and env.randomize: give one"):
        TrainConfig.model_validate(both)
    explicit = _cfg(n_jobs=60).model_dump()
    explicit["env"]["scenario"] = "lee-gpu"  # two explicit jobs: nothing to draw more of
    with pytest.raises(ValueError, match="lee-gpu's is 'jobs'"):
        TrainConfig.model_validate(explicit)
    own = _cfg(n_jobs=60).model_dump()
    own["env"]["overrides"] = {"workload.n_jobs": 30}
    with pytest.raises(ValueError, match="workload.n_jobs is env.continuous.n_jobs's"):
        TrainConfig.model_validate(own)
    with pytest.raises(ValueError, match="n_jobs: expected an integer >= 1, got True"):
        ContinuousSpec.from_dict({"n_jobs": True})
    with pytest.raises(ValueError, match="interarrival_scale: expected a finite number > 0"):
        ContinuousSpec.from_dict({"interarrival_scale": 0})
    with pytest.raises(ValueError, match="interarrival_scale: expected a finite number > 0"):
        ContinuousSpec.from_dict({"interarrival_scale": float("inf")})
    with pytest.raises(
        ValueError, match="interarrival_scale: 10000000.0 makes hybrid48.s mean interarrival"
    ):
        TrainConfig.model_validate(_cfg(n_jobs=60, interarrival_scale=1e7).model_dump())


def test_a_run_trains_on_episodes_cut_short(tmp_path):
    from agents.train import train

    # 5 simulated seconds on average: a 256-step run sees many cut episodes
    data = _cfg(n_jobs=60, horizon_mean_s=5.0, window_steps=50).model_dump()
    data.update(total_steps=256, discount_per="second")
    run = train(TrainConfig.model_validate(data), logdir=tmp_path, progress=False)
    stats = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert stats["steps"] >= 256 and stats["episodes_finished"] >= 3
    assert yaml.safe_load((run / "config.yaml").read_text())["env"]["continuous"]["n_jobs"] == 60
