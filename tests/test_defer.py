"""``eval.defer_below``: a saved model hands the decision to its hooks' scheduler while few
jobs are active (agents/model_policy.py, ``MRClusterEnv.hooks_action``)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import yaml
from pydantic import ValidationError

pytest.importorskip("sb3_contrib")

import mrgym  # noqa: E402
from agents.config import TrainConfig  # noqa: E402
from agents.env_hooks import make_env  # noqa: E402
from agents.pretrain import collect  # noqa: E402
from agents.train import env_kwargs  # noqa: E402
from mrgym.policy import ModelPolicy  # noqa: E402

# ila72's 25 jobs at 300 maps in all: seconds a run (tests/test_tracks.py's size)
ENV = {
    "scenario": "ila72",
    "overrides": {"workload.scale_maps_to": 300},
    "job_slots": 8,
    "queue_order": "deficit",
    "work_conserving": True,
    "hooks": "ila-gate+srpt",
    "hooks_gate": True,
    "reward_weights": {"slowdown": 1.0},
}


def _saved(
    tmp_path, defer_below: int | None, hooks: str = "ila-gate+srpt", **env: object
) -> ModelPolicy:
    """An untrained model saved with the fairness recipe's env (``env`` over it) and
    ``eval.defer_below``."""
    from sb3_contrib import MaskablePPO

    tmp_path.mkdir(parents=True, exist_ok=True)
    cfg = TrainConfig.model_validate(
        {
            "name": "d",
            "env": {**ENV, "hooks": hooks, **env},
            "eval": {"decode": "sample", "defer_below": defer_below},
        }
    )
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump()))
    env = make_env(env_kwargs(cfg))
    MaskablePPO("MlpPolicy", env, n_steps=64, seed=0, device="cpu").save(tmp_path / "model.zip")
    return ModelPolicy.load(tmp_path)


def _play(policy: ModelPolicy, seed: int) -> tuple[list[int], list[int], dict]:
    """The episode's actions, the active jobs at each decision, and its metrics."""
    env = policy.make_env()
    policy.bind(env)
    policy.start_episode(seed)
    obs, info = env.reset(seed=seed)
    actions, active = [], []
    while True:
        active.append(len(env.unwrapped.view.jobs))
        a = policy.predict(obs, info)
        actions.append(a)
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return actions, active, info["episode_metrics"]


@pytest.mark.parametrize("hooks", ["ila-gate+srpt", "hybridmr-gate+hostcap", "hybridmr"])
def test_deferring_every_decision_is_the_baseline_bit_for_bit(tmp_path, hooks):
    """Above any job count, every action is the hooks' scheduler's: the episode is its own
    run (run_sim), metrics bit for bit, no decision inexact, though the environment asks
    the gate before the agent (hooks_gate) and the composition's decide would ask it again:
    a second IASM call per slot moved ILA's thresholds (Scheduler.decide_past_gate).  The
    warm start's expert (agents/pretrain.py, its own loop) records the same actions."""
    policy = _saved(tmp_path, defer_below=10**6, hooks=hooks)
    assert policy.defer_below == 10**6 and policy.hooks == hooks
    actions, _, metrics = _play(policy, seed=3)
    assert policy.deferred == len(actions) > 100
    kw = env_kwargs(TrainConfig.model_validate({"env": {**ENV, "hooks": hooks}}))
    scenario = make_env(kw).unwrapped.scenario
    own = mrgym.run_sim(scenario, hooks, 3).metrics
    assert metrics["jobs_completed"] == own["jobs_completed"] == 25
    for key in ("mean_jct_s", "makespan_s", "sim_time_s"):
        assert metrics[key] == own[key], key
    demos = collect(kw, hooks, [3], hooks=hooks)
    assert demos.inexact == 0 and demos.actions.tolist() == actions


def test_without_the_environments_gate_deferring_asks_the_whole_decide(tmp_path):
    """``hooks_gate: false`` (and declines allowed): nothing asked the gate before the
    deferral, so ``decide`` asks it, once; the episode is still the baseline's own run."""
    policy = _saved(tmp_path, defer_below=10**6, hooks_gate=False, work_conserving=False)
    actions, _, metrics = _play(policy, seed=3)
    assert policy.deferred == len(actions) > 100
    scenario = policy.make_env().unwrapped.scenario
    assert (
        metrics["mean_jct_s"] == mrgym.run_sim(scenario, "ila-gate+srpt", 3).metrics["mean_jct_s"]
    )


def test_the_threshold_splits_the_decisions_by_active_jobs(tmp_path):
    """Below the threshold the hooks' scheduler decides and the model's sampling draws
    nothing; at or above it the model decides.  ``None`` and a threshold never reached play
    the model's own episode, draw for draw."""
    own, _, own_m = _play(_saved(tmp_path / "a", defer_below=None), seed=4)
    never, _, never_m = _play(_saved(tmp_path / "b", defer_below=1), seed=4)
    assert never == own and never_m["mean_jct_s"] == own_m["mean_jct_s"]
    policy = _saved(tmp_path / "c", defer_below=4)
    actions, active, _ = _play(policy, seed=4)
    below = sum(n < 4 for n in active)
    assert policy.deferred == below and 0 < below < len(actions)
    assert actions != own


def test_a_copy_of_a_deferring_episode_goes_on_as_the_episode(tmp_path):
    """A copy replays the episode, asking the hooks' scheduler again on each deferred step
    (envs/replay.py): past the gate, as deferring asked it, so the copy's ILA thresholds
    and the rest of its episode are the original's."""
    import copy

    policy = _saved(tmp_path, defer_below=10**6)
    env = policy.make_env()
    policy.bind(env)
    obs, info = env.reset(seed=3)
    for _ in range(150):
        obs, *_ = env.step(policy.predict(obs, info))
    twin = copy.deepcopy(env)

    def finish(e) -> dict:
        policy.bind(e)
        while True:
            a = e.unwrapped.hooks_action()[0]
            _, _, term, trunc, info = e.step(a)
            if term or trunc:
                return info["episode_metrics"]

    assert finish(twin)["mean_jct_s"] == finish(env)["mean_jct_s"]


def test_bad_settings_name_the_key(tmp_path):
    with pytest.raises(ValidationError, match="eval.defer_below: 6 defers to env.hooks'"):
        TrainConfig.model_validate({"eval": {"defer_below": 6}})
    with pytest.raises(ValidationError, match=r"eval\.defer_below\n.*greater than or equal to 1"):
        TrainConfig.model_validate({"env": ENV, "eval": {"defer_below": 0}})
    policy = _saved(tmp_path, defer_below=3)
    obs = np.zeros(policy.model.observation_space.shape, dtype=np.float32)
    with pytest.raises(RuntimeError, match="eval.defer_below asks the environment: bind"):
        policy.predict(obs, None)
    env = gym.make("MRCluster-v1", config="ila72", overrides=ENV["overrides"])
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="hooks_action: this episode has no hooks' scheduler"):
        env.unwrapped.hooks_action()
