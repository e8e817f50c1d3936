"""MRCluster-v0: checkers, masks, determinism, vectorization, rendering, rewards."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import mrgym
from mrgym.envs import MRClusterEnv
from mrgym.envs.observation import GLOBAL_FEATURE_TABLE, JOB_FEATURE_TABLE, VM_FEATURE_TABLE

SMALL = ["lsap-snapshot", "lee-gpu", "hybrid48", "lee-cloud"]
INFO_KEYS = {
    "sim_time",
    "decision_vm",
    "slot_kind",
    "pending_tasks",
    "running_tasks",
    "jobs_completed",
    "invalid_action",
    "held_asks",
    "reward_terms",
    "action_mask",
}


@pytest.mark.parametrize("name", mrgym.available_scenarios())
def test_gymnasium_and_sb3_checkers_pass_without_warnings(name):
    from gymnasium.utils.env_checker import check_env as gym_check
    from stable_baselines3.common.env_checker import check_env as sb3_check

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym_check(MRClusterEnv(config=name), skip_render_check=True)
        sb3_check(MRClusterEnv(config=name), warn=True)


def test_registered_and_made_with_overrides():
    env = gym.make(
        "MRCluster-v0",
        config="lee-gpu",
        job_slots=4,
        queue_order="deficit",
        overrides={"hdfs.replication": 1},
    )
    assert env.action_space.n == 13
    n_vm, n_global, n_job = (
        len(t) for t in (VM_FEATURE_TABLE, GLOBAL_FEATURE_TABLE, JOB_FEATURE_TABLE)
    )
    assert env.observation_space.shape == (n_vm + n_global + n_job * 4,)
    assert len(env.unwrapped.feature_names) == n_vm + n_global + n_job * 4
    assert env.unwrapped.scenario.hdfs.replication == 1


def test_every_observation_feature_is_described_once_in_the_docstring():
    import mrgym.envs.observation as obs

    tables = obs.VM_FEATURE_TABLE + obs.GLOBAL_FEATURE_TABLE + obs.JOB_FEATURE_TABLE
    names = [n for n, _ in tables]
    assert len(set(names)) == len(names)
    for name, what in tables:
        assert what and f"``{name}``: {what}" in obs.__doc__
    # the observation the environment builds has one value per listed feature
    env = gym.make("MRCluster-v0", config="ila72", job_slots=3)
    o, _ = env.reset(seed=0)
    assert o.shape == (len(obs.VM_FEATURES) + len(obs.GLOBAL_FEATURES) + 3 * len(obs.JOB_FEATURES),)


def _play(env, seed, rng):
    obs, info = env.reset(seed=seed)
    steps = 0
    while True:
        assert (
            set(info) >= INFO_KEYS and "episode" not in info and "terminal_observation" not in info
        )
        mask = env.unwrapped.action_masks()
        # decline is legal unless the (default) work-conserving mask forbids idling
        assert mask[-1] == (not env.unwrapped.codec.work_conserving or not mask[:-1].any())
        assert (mask == info["action_mask"].astype(bool)).all()
        a = int(rng.choice(np.flatnonzero(mask)))
        obs, r, term, trunc, info = env.step(a)
        assert isinstance(r, float) and type(term) is bool and type(trunc) is bool
        assert not info["invalid_action"]
        assert env.observation_space.contains(obs)
        steps += 1
        if term or trunc:
            return info, steps


@pytest.mark.parametrize("name", SMALL)
def test_random_masked_play_reaches_the_simulator_invariants(name):
    env = gym.make("MRCluster-v0", config=name)
    rng = np.random.default_rng(0)
    info, steps = _play(env, 0, rng)
    m = info["episode_metrics"]
    assert m["jobs_completed"] == m["jobs_submitted"] > 0
    sim = env.unwrapped.sim
    for job in sim.jobs:
        for t in job.maps + job.reduces:
            assert sum(a.outcome == "success" for a in t.attempts) == 1
    for vm in sim.topo.workers:  # no slot over-committed at the end, none leaked
        assert vm.free_map == vm.map_slots and vm.free_reduce == vm.reduce_slots or not vm.alive


def test_masked_action_declines_or_raises():
    env = gym.make("MRCluster-v0", config="lee-gpu")
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, r, term, trunc, info = env.step(illegal)
    assert info["invalid_action"] is True
    strict = gym.make("MRCluster-v0", config="lee-gpu", invalid_action="raise")
    obs, info = strict.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match=rf"action {illegal} \("):
        strict.step(illegal)
    n = strict.action_space.n
    with pytest.raises(ValueError, match=rf"action {n} is outside Discrete\({n}\)"):
        strict.step(n)  # outside the space: a bug, even under python -O


def test_same_seed_same_trajectory():
    def trajectory(seed):
        env = gym.make("MRCluster-v0", config="hybrid48")
        rng = np.random.default_rng(5)
        obs, info = env.reset(seed=seed)
        out = [obs.copy()]
        for _ in range(400):
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, r, term, trunc, info = env.step(a)
            out.append(
                (
                    obs.copy(),
                    r,
                    term,
                    trunc,
                    {k: v for k, v in info.items() if k != "action_mask"},
                    info["action_mask"].tolist(),
                )
            )
            if term or trunc:
                break
        return out

    a, b = trajectory(3), trajectory(3)
    assert len(a) == len(b)
    assert np.array_equal(a[0], b[0])
    for x, y in zip(a[1:], b[1:]):
        assert np.array_equal(x[0], y[0]) and x[1:] == y[1:]
    c = trajectory(4)
    assert not all(np.array_equal(x[0], y[0]) for x, y in zip(a[1:50], c[1:50]))


@pytest.mark.parametrize("env_id,start", [("mrgym:MRCluster-v0", None), ("MRCluster-v0", "fork")])
def test_subproc_vec_env_steps_with_masks(env_id, start):
    """ "mrgym:MRCluster-v0" imports mrgym in each worker (any start method); the bare id
    needs workers that inherit the registry (fork)."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    venv = make_vec_env(
        env_id,
        n_envs=2,
        vec_env_cls=SubprocVecEnv,
        seed=0,
        env_kwargs={"config": "lee-gpu"},
        vec_env_kwargs={"start_method": start} if start else None,
    )
    try:
        obs = venv.reset()
        assert obs.shape == (2, venv.observation_space.shape[0])
        for _ in range(30):
            masks = np.stack(venv.env_method("action_masks"))
            actions = np.array([np.flatnonzero(m)[0] for m in masks])
            obs, rewards, dones, infos = venv.step(actions)
            assert not any(i["invalid_action"] for i in infos)
    finally:
        venv.close()


def test_jct_return_is_minus_total_jct():
    env = gym.make("MRCluster-v0", config="lee-gpu", reward_weights={"jct": 1.0, "locality": 0.0})
    r = mrgym.run_episode(env, mrgym.EnvPolicy("fifo"), seed=0)
    sim = env.unwrapped.sim
    total_jct = sum(j.finish_s - j.arrived_s for j in sim.jobs)
    assert r.episode_return == pytest.approx(-total_jct / 100, rel=1e-9)
    assert r.reward_terms["throughput"] == pytest.approx(r.metrics["tasks_completed"])


def test_locality_reward_counts_launch_levels():
    env = gym.make("MRCluster-v0", config="lsap-snapshot", reward_weights={"locality": 1.0})
    r = mrgym.run_episode(env, mrgym.EnvPolicy("fifo"), seed=1)
    sim = env.unwrapped.sim
    value = {0: 1.0, 1: 0.9, 2: 0.3, 3: 0.0}
    expect = sum(
        value[a.locality] for a in sim.attempts if a.task.kind == "map" and a.locality is not None
    )
    assert r.episode_return == pytest.approx(expect)


def test_render_modes():
    env = gym.make("MRCluster-v0", config="lee-gpu", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "rack0" in text and "decision:" in text and "[" in text
    env = gym.make("MRCluster-v0", config="lee-gpu", render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3 and img.shape[0] > 50


def test_bad_arguments_name_the_key():
    with pytest.raises(ValueError, match=r"job_slots: must be in \[1, 1024\], got 0"):
        MRClusterEnv(config="lee-gpu", job_slots=0)
    with pytest.raises(ValueError, match="queue_order: must be one of"):
        MRClusterEnv(config="lee-gpu", queue_order="random")
    with pytest.raises(ValueError, match="reward_weights.speed: unknown term"):
        MRClusterEnv(config="lee-gpu", reward_weights={"speed": 1})
    with pytest.raises(ValueError, match="invalid_action: must be"):
        MRClusterEnv(config="lee-gpu", invalid_action="ignore")


def test_sb3_model_runs_through_the_same_harness():
    from sb3_contrib import MaskablePPO

    # work-conserving: a barely trained deterministic policy may otherwise decline the same
    # slot forever (its argmax is arbitrary) and the episode would only end at the time cap
    kw = {"work_conserving": True}
    env = gym.make("MRCluster-v0", config="lee-gpu", **kw)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu")
    model.learn(64)
    policy = mrgym.ModelPolicy(model, name="maskable-ppo")
    r = mrgym.run_episode(env, policy, seed=0)
    assert r.invalid_actions == 0  # the mask is honoured
    assert r.metrics["jobs_completed"] == r.metrics["jobs_submitted"]
    rows = mrgym.evaluate(
        [lambda e: mrgym.ModelPolicy(model, name="maskable-ppo"), "fifo"],
        ["lee-gpu"],
        [0, 1],
        env_kwargs=kw,
    )
    assert [row["policy"] for row in rows] == ["maskable-ppo", "maskable-ppo", "fifo", "fifo"]
    assert all(row["jobs_completed"] == row["jobs_submitted"] for row in rows)


def test_work_conserving_masks_decline_only_when_a_launch_is_legal():
    env = gym.make("MRCluster-v0", config="lee-gpu", work_conserving=True)
    obs, info = env.reset(seed=0)
    steps = 0
    while True:
        mask = info["action_mask"].astype(bool)
        assert mask.any()
        assert mask[-1] == (not mask[:-1].any())
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        steps += 1
        if term or trunc:
            break
    assert info["episode_metrics"]["jobs_completed"] == 2


def test_cluster_work_conservation_idles_slots_but_never_the_whole_cluster():
    """work_conserving="cluster": decline is legal while some task runs, masked when none
    does, so a policy that always declines still finishes work (no livelock)."""
    env = gym.make("MRCluster-v0", config="ila72", work_conserving="cluster", max_sim_time_s=120.0)
    u = env.unwrapped
    obs, info = env.reset(seed=5)
    decline = u.codec.decline
    steps = held = forced = 0
    while True:
        mask = info["action_mask"]
        running = info["running_tasks"]
        launch_legal = mask[:decline].any()
        if launch_legal:
            assert mask[decline] == (running > 0)  # the guard, and nothing else
        if mask[decline]:
            a = decline
            held += launch_legal
        else:
            a = int(np.flatnonzero(mask)[0])
            forced += 1
        obs, r, term, trunc, info = env.step(a)
        steps += 1
        if term or trunc:
            break
    assert held > 100 and forced >= 2  # both branches seen (measured: 4 524 and 3)
    assert info["episode_metrics"]["attempts"] >= 3  # one task at a time (~38 s each), not none
    with pytest.raises(ValueError, match=r"work_conserving: must be true, false or 'cluster'"):
        gym.make("MRCluster-v0", config="ila72", work_conserving="yes")
