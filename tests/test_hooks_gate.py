"""``env.hooks_gate``: around an agent, the slots the hooks' scheduler gates (``Scheduler.gate``)
are answered without it; HybridMR's gate is phase II's part of its task choice."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

pytest.importorskip("sb3_contrib")

import mrgym  # noqa: E402
from agents.config import TrainConfig  # noqa: E402
from agents.env_hooks import make_env  # noqa: E402
from agents.train import env_kwargs  # noqa: E402
from baselines.classic import FairScheduler  # noqa: E402


def _gated(**extra) -> dict:
    # on ila72 HybridMR's I/O gate declines ~27-60 % of the slots offered (seeds 100-101);
    # HybridMR's own settings: declines legal, no speculation, Fair's order in the slots
    kw = {"config": "ila72", "job_slots": 8, "queue_order": "deficit"}
    return {**kw, "work_conserving": False, "hooks_gate": True, **extra}


def _play(env, choose, seed: int = 101):
    """Run one episode choosing each action with ``choose(env)``; its metrics and steps."""
    obs, info = env.reset(seed=seed)
    steps = 0
    while True:
        obs, _, term, trunc, info = env.step(choose(env.unwrapped))
        steps += 1
        if term or trunc:
            return info["episode_metrics"], steps


def test_hybridmrs_gate_with_fairs_choice_on_the_rest_is_hybridmr():
    kw = _gated()
    env = make_env(kw, hooks="hybridmr")
    fair = FairScheduler()
    fair.reset(101)
    gated, _ = _play(env, lambda u: u.closest_action(fair.decide(u.decision_context()))[0])
    own = mrgym.run_sim(mrgym.load_scenario("ila72"), "hybridmr", 101).metrics
    assert env.unwrapped._proxy.hooks.n_gated > 500  # the gate declined those slots
    for key in ("mean_jct_s", "p95_jct_s", "makespan_s", "jobs_completed"):
        assert gated[key] == pytest.approx(own[key], rel=1e-12), key


def test_the_agent_never_sees_a_slot_the_gate_claims():
    seen = []

    def first_legal(u):
        # phase II's admission on the slot the agent is asked about (side-effect free)
        seen.append(u._proxy.hooks.phase2.admits(u.sim.context(u._vm, u._kind)))
        return int(np.flatnonzero(u.action_masks())[0])

    env = make_env(_gated(), hooks="hybridmr")
    gated, steps = _play(env, first_legal)
    assert len(seen) == steps and all(seen)
    assert env.unwrapped._proxy.hooks.n_gated > 500  # slots it declined, never asked about
    # without the gate every slot is the agent's: this one launches wherever it can
    env = make_env(_gated(hooks_gate=False), hooks="hybridmr")
    ungated, _ = _play(env, first_legal)
    assert env.unwrapped._proxy.hooks.n_gated == 0
    assert gated["jobs_completed"] == ungated["jobs_completed"] == 25
    assert gated["mean_jct_s"] != ungated["mean_jct_s"]


def test_the_gate_needs_hooks_and_travels_with_the_config_and_snapshots():
    with pytest.raises(ValidationError, match="env.hooks_gate: true needs env.hooks"):
        TrainConfig.model_validate({"env": {"hooks_gate": True}})
    cfg = TrainConfig.model_validate({"env": {"hooks": "hybridmr", "hooks_gate": True}})
    assert env_kwargs(cfg)["hooks_gate"] is True  # the training, evaluation and saved envs
    assert "hooks_gate" not in env_kwargs(TrainConfig())  # older runs' settings unchanged
    with pytest.raises(ValueError, match="hooks_gate: must be true or false, got 'yes'"):
        make_env({"config": "ila72", "hooks_gate": "yes"})
    # a snapshot replays only where the gate is the same, and then exactly
    env = make_env(_gated(), hooks="hybridmr").unwrapped
    env.reset(seed=0)
    for _ in range(40):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    snap = env.snapshot()
    with pytest.raises(ValueError, match="hooks_gate"):
        make_env(_gated(hooks_gate=False)).unwrapped.restore(snap)
    fresh = make_env(_gated()).unwrapped
    fresh.restore(snap)
    assert np.array_equal(fresh._obs(), env._obs()) and fresh.view.now == env.view.now


def test_a_copy_replays_the_gate_the_episode_began_with():
    import copy

    from mrgym.registry import make

    env = make_env(_gated(), hooks="hybridmr").unwrapped
    env.reset(seed=101)
    for _ in range(300):
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    # set_hooks changes the next episode (EnvPolicy binding a copy mid-episode, say)
    env.set_hooks(make("hybridmr"), decides=True)
    for other in (copy.deepcopy(env), _restored(env)):
        assert other.view.now == env.view.now
        assert other._proxy.gates and np.array_equal(other._obs(), env._obs())


def _restored(env):
    fresh = make_env(_gated()).unwrapped
    fresh.restore(env.snapshot())
    return fresh


def test_a_saved_gated_model_refuses_an_env_without_the_gate(tmp_path):
    import yaml
    from sb3_contrib import MaskablePPO

    from mrgym.policy import ModelPolicy

    with pytest.raises(ValidationError, match="'fifo-random' has no gate"):
        TrainConfig.model_validate({"env": {"hooks": "fifo-random", "hooks_gate": True}})
    env_cfg = {"scenario": "ila72", "queue_order": "deficit", "work_conserving": False}
    cfg = TrainConfig.model_validate({"name": "g", "env": {**env_cfg, "hooks": "hybridmr"}})
    for gate in (True, False):
        cfg.env.hooks_gate = gate
        run = tmp_path / str(gate)
        run.mkdir()
        (run / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump()))
        model = MaskablePPO("MlpPolicy", make_env(_gated()), n_steps=64, seed=0, device="cpu")
        model.save(str(run / "model.zip"))
        policy = ModelPolicy.load(run)
        assert policy.env_kwargs["hooks_gate"] is gate
        with pytest.raises(ValueError, match=f"hooks_gate={gate!r}"):
            policy.bind(make_env(_gated(hooks_gate=not gate)))
        env = policy.make_env()
        policy.bind(env)
        assert env.unwrapped.hooks_gate is gate
