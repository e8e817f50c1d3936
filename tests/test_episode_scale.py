"""The slowdown reward in units of a baseline's on the same workload (agents/episode_scale.py,
``env.slowdown_scale_by``): the baseline's own return is -n_jobs on every workload."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import mrgym
from agents.config import EnvConfig, TrainConfig
from agents.episode_scale import ScaledSlowdown, mean_square_slowdown, scaled_with_hooks
from agents.pretrain import collect
from agents.train import env_kwargs, make_vec
from mrgym.reference import reference_jct

# ila72's 25 jobs at 300 maps in all: seconds a run (tests/test_tracks.py's size)
ILA_SMALL = {"workload.scale_maps_to": 300}
BASE = "ila-gate+srpt"


def _env(job_slots: int = 32) -> gym.Env:
    return gym.make(
        "MRCluster-v1",
        config="ila72",
        overrides=ILA_SMALL,
        job_slots=job_slots,
        reward_weights={"slowdown": 1.0},
    )


@pytest.mark.parametrize("seed", [1, 2])
def test_the_baselines_own_scaled_return_is_minus_its_job_count(seed):
    """Played through the environment at 32 slots (exact play, docs/baselines.md), the
    baseline's raw return is -n x its RMS slowdown^2 (the track's identity), so scaled by
    its own mean square it is -n on each workload, whatever the workload's load."""
    env = ScaledSlowdown(_env(), BASE)
    r = mrgym.run_episode(env, mrgym.EnvPolicy(BASE), seed=seed)
    assert r.inexact == 0
    n = r.metrics["jobs_completed"]
    assert n == 25
    assert r.episode_return == pytest.approx(-n, rel=1e-9)
    # the raw return, the scale and the baseline's own run agree
    assert r.reward_terms["slowdown"] == pytest.approx(-n * env.scale, rel=1e-9)
    row = mrgym.run_sim(env.unwrapped.scenario, BASE, seed).metrics
    assert row["mean_jct_s"] == pytest.approx(r.metrics["mean_jct_s"], rel=1e-12)


def test_the_scale_follows_the_workload_and_not_the_policy():
    """Each reset recomputes the baseline's mean square on the new workload; another policy's
    episode on the same seed gets the same divisor, and its return is its own squared
    slowdowns over it."""
    env = ScaledSlowdown(_env(), BASE)
    scales = {}
    for seed in (1, 2):
        env.reset(seed=seed)
        scales[seed] = env.scale
    assert scales[1] != scales[2] and all(s > 1.0 for s in scales.values())
    r = mrgym.run_episode(env, mrgym.EnvPolicy("fifo"), seed=2)
    assert env.scale == scales[2]
    assert r.episode_return == pytest.approx(r.reward_terms["slowdown"] / scales[2], rel=1e-9)
    assert r.episode_return < -25  # fifo's slowdowns are worse than SRPT's order under ILA's gate


def test_training_and_the_clone_see_the_same_scaled_rewards():
    """SB3's wrapper (hooks, then the scale) and the demonstrations' returns divide alike."""
    kw = dict(
        config="ila72",
        overrides=ILA_SMALL,
        job_slots=8,
        queue_order="deficit",
        reward_weights={"slowdown": 1.0},
        work_conserving=True,
        hooks_gate=True,
    )
    demos = collect(kw, BASE, [1], gamma=1.0, hooks=BASE, scale_by=BASE)
    raw = collect(kw, BASE, [1], gamma=1.0, hooks=BASE)
    env = scaled_with_hooks(gym.make("MRCluster-v1", **kw), BASE, BASE)
    env.reset(seed=1)
    assert env.unwrapped._proxy.hooks is not None  # the hooks are installed under the scale
    assert demos.returns[0] == pytest.approx(raw.returns[0] / env.scale, rel=1e-6)
    # the divisor from the baseline's own job log, computed here without track_values
    ref = reference_jct(env.unwrapped.scenario, 1)
    jobs = mrgym.run_sim(env.unwrapped.scenario, BASE, 1).jobs
    square = np.mean([((end - t0) / ref[j]) ** 2 for j, _, _, t0, end in jobs])
    assert env.scale == pytest.approx(square, rel=1e-12)


def _config(**env) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "n_envs": 1,
            "vec_env": "dummy",
            "env": {
                "scenario": "ila72",
                "overrides": ILA_SMALL,
                "work_conserving": True,
                "reward_weights": {"slowdown": 1.0},
                "hooks": BASE,
                "hooks_gate": True,
                **env,
            },
        }
    )


def test_training_environments_are_scaled_anew_at_each_drawn_seed_and_evaluations_not():
    """make_vec (SB3's DummyVecEnv, auto-reset without a seed): each episode's rewards sum
    to its raw slowdown return over the baseline's mean square on the seed the env drew."""
    venv = make_vec(_config(slowdown_scale_by=BASE))
    env = venv.envs[0]
    assert isinstance(env, ScaledSlowdown)
    venv.reset()
    episodes, total, raw = [], 0.0, 0.0
    seed, scale = env.unwrapped.episode_seed, env.scale
    while len(episodes) < 2:
        mask = np.asarray(venv.env_method("action_masks")[0], dtype=bool)
        _, reward, done, info = venv.step(np.array([int(np.flatnonzero(mask)[0])]))
        total += float(reward[0])
        raw += info[0]["reward_terms"]["slowdown"]
        if done[0]:
            assert info[0]["reward_scale"] == scale
            episodes.append((seed, scale, total, raw))
            seed, scale, total, raw = env.unwrapped.episode_seed, env.scale, 0.0, 0.0
    (s1, d1, _, _), (s2, d2, _, _) = episodes
    assert s1 != s2 and d1 != d2  # a new workload, a new divisor
    for _, d, t, r in episodes:
        assert t == pytest.approx(r / d, rel=1e-6)
        assert r < 0 and d > 1.0
    # the evaluations build their environment from env_kwargs: no scale there
    assert "slowdown_scale_by" not in env_kwargs(_config(slowdown_scale_by=BASE))
    venv.close()


def test_the_warm_start_divides_as_training_does(monkeypatch):
    from agents import pretrain
    from agents.train import _warm_start

    seen = {}

    def spy(*args, **kwargs):
        seen["args"] = args
        raise RuntimeError("stop")

    monkeypatch.setattr(pretrain, "collect", spy)
    cfg = _config(slowdown_scale_by=BASE).model_copy(
        update={"pretrain": pretrain.PretrainConfig(expert=BASE, episodes=1)}
    )
    with pytest.raises(RuntimeError, match="stop"):
        _warm_start(None, cfg)
    assert seen["args"][-1] == BASE


def test_bad_settings_name_the_key():
    with pytest.raises(ValueError, match="slowdown_scale_by: unknown scheduler 'srtp'"):
        EnvConfig(reward_weights={"slowdown": 1.0}, slowdown_scale_by="srtp")
    with pytest.raises(ValueError, match="slowdown_scale_by: .*'srtp'"):  # a bad order
        EnvConfig(reward_weights={"slowdown": 1.0}, slowdown_scale_by="ila-gate+srtp")
    with pytest.raises(ValueError, match="with slowdown > 0 and no other term"):
        EnvConfig(reward_weights={"slowdown": -1.0}, slowdown_scale_by=BASE)
    with pytest.raises(ValueError, match="slowdown_scale_by: scales the slowdown term alone"):
        EnvConfig(reward_weights={"jct": 1.0}, slowdown_scale_by=BASE)
    with pytest.raises(ValueError, match="slowdown_scale_by: scales the slowdown term alone"):
        EnvConfig(reward_weights={"slowdown": 1.0, "jct": 0.5}, slowdown_scale_by=BASE)
    with pytest.raises(ValueError, match="drop env.continuous and env.randomize"):
        EnvConfig(reward_weights={"slowdown": 1.0}, slowdown_scale_by=BASE, randomize={})
    with pytest.raises(ValueError, match="slowdown_scale_by: scales the slowdown term alone"):
        ScaledSlowdown(gym.make("MRCluster-v1", config="lee-gpu"), BASE)  # jct alone
    with pytest.raises(RuntimeError, match="call env.reset"):
        mean_square_slowdown(_env(), BASE)


def test_the_episode_seed_is_the_given_one_or_the_drawn_one():
    env = gym.make("MRCluster-v1", config="lee-gpu").unwrapped
    assert env.episode_seed is None
    env.reset(seed=5)
    assert env.episode_seed == 5
    env.reset()
    drawn = env.episode_seed
    assert isinstance(drawn, int) and drawn != 5
    obs = env._obs()
    again = gym.make("MRCluster-v1", config="lee-gpu")
    assert np.array_equal(again.reset(seed=drawn)[0], obs)  # the drawn seed replays it
