"""The slowdown reward in units of a baseline's on the same workload (agents/episode_scale.py,
``env.slowdown_scale_by``): the baseline's own return is -n_jobs on every workload."""

from __future__ import annotations

import gymnasium as gym
import pytest

import mrgym
from agents.config import EnvConfig
from agents.episode_scale import ScaledSlowdown, mean_square_slowdown, scaled_with_hooks
from agents.pretrain import collect

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
    assert demos.returns[0] == pytest.approx(raw.returns[0] / env.scale, rel=1e-6)
    assert mean_square_slowdown(env, BASE) == env.scale


def test_bad_settings_name_the_key():
    with pytest.raises(ValueError, match="slowdown_scale_by: unknown scheduler 'srtp'"):
        EnvConfig(reward_weights={"slowdown": 1.0}, slowdown_scale_by="srtp")
    with pytest.raises(ValueError, match="slowdown_scale_by: scales the slowdown term alone"):
        EnvConfig(reward_weights={"jct": 1.0}, slowdown_scale_by=BASE)
    with pytest.raises(ValueError, match="slowdown_scale_by: scales the slowdown term alone"):
        EnvConfig(reward_weights={"slowdown": 1.0, "jct": 0.5}, slowdown_scale_by=BASE)
    with pytest.raises(ValueError, match="drop env.continuous and env.randomize"):
        EnvConfig(reward_weights={"slowdown": 1.0}, slowdown_scale_by=BASE, randomize={})
    with pytest.raises(RuntimeError, match="call env.reset"):
        mean_square_slowdown(_env(), BASE)
