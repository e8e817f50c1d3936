"""``env.hooks``: a baseline's place_job/control around a learning agent (agents/env_hooks.py)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

pytest.importorskip("sb3_contrib")

import mrgym  # noqa: E402
from agents.config import TrainConfig  # noqa: E402
from agents.env_hooks import check_hooks, make_env  # noqa: E402
from agents.pretrain import collect  # noqa: E402
from baselines.hybridmr import HybridMRScheduler  # noqa: E402
from mrgym.policy import EnvPolicy, ModelPolicy  # noqa: E402
from mrgym.reproduce.claims.hybridmr import virtual_only  # noqa: E402


def _loaded_vms() -> dict:
    """Four Xen hosts whose interactive VMs run at 80 req/s beside two CPU-bound jobs: FIFO
    co-hosting breaches their SLA, HybridMR's phase II does not (test_hybridmr)."""
    over = virtual_only(
        [
            {"name": "k", "profile": "kmeans", "maps": 96},
            {"name": "p", "profile": "piest", "maps": 48},
        ]
    )
    over["cluster.hosts"][0]["count"] = 4
    over["cluster.hosts"][0]["interactive"].update(base_rps=80.0, peak_rps=80.0, noise_sigma=0.0)
    return {"config": "hybrid48", "overrides": over, "job_slots": 4, "queue_order": "deficit"}


def test_hooks_must_be_a_registered_scheduler_that_has_hooks():
    assert check_hooks(None) is None and check_hooks("hybridmr") == "hybridmr"
    with pytest.raises(ValueError, match=r"'nosuch' is not registered; expected .*'hybridmr'"):
        check_hooks("nosuch")
    with pytest.raises(ValidationError, match="'fair' has no environment hooks"):
        TrainConfig.model_validate({"env": {"hooks": "fair"}})


def test_the_agent_takes_hybridmrs_task_choice_while_its_hooks_manage_the_vms():
    kw = _loaded_vms()
    bare = mrgym.run_episode(make_env(kw), EnvPolicy("fifo"), seed=0).metrics
    # FIFO's task choice with HybridMR's hooks around it: the hooks keep the SLA
    env = make_env(kw, hooks="hybridmr")
    assert isinstance(env.unwrapped._hooks, HybridMRScheduler)
    hooked = mrgym.run_episode(env, _FifoAgent(), seed=0).metrics
    assert bare["sla_violation_s"] > 100
    assert hooked["sla_violation_s"] <= 0.1 * bare["sla_violation_s"]
    assert hooked["jobs_completed"] == bare["jobs_completed"] == 2


class _FifoAgent:
    """An agent that launches the first legal action (slot 0 first), declining last."""

    name = "first-legal"

    def predict(self, obs, info) -> int:
        return int(np.flatnonzero(info["action_mask"])[0])


def _played(kw: dict, name: str, seed: int) -> list[int]:
    """The actions of scheduler ``name`` playing the environment with its own hooks."""
    played = []
    env, policy = make_env(kw), EnvPolicy(name)
    policy.bind(env)
    obs, info = env.reset(seed=seed)
    while True:
        played.append(policy.predict(obs, info))
        obs, _, term, trunc, info = env.step(played[-1])
        if term or trunc:
            return played


def test_a_warm_start_clones_the_hooks_own_scheduler_and_no_other():
    # HybridMR's gate declines slots: only a mask that allows declining expresses every
    # decision (work-conserving, seed 10 000 has 2 declines the mask turns into launches)
    kw = {**_loaded_vms(), "work_conserving": False}
    demos = collect(kw, "hybridmr", [10_000], hooks="hybridmr")
    assert demos.inexact == 0 and len(demos.actions) > 0
    # the same decisions as HybridMR playing the environment with its own hooks
    played = _played(kw, "hybridmr", 10_000)
    assert demos.actions.tolist() == played
    with pytest.raises(ValueError, match="run its hooks in the environment"):
        collect(kw, "hybridmr", [10_000])  # without them, HybridMR cannot be copied


def test_hooks_around_an_agent_keep_its_work_conservation_and_speculation():
    kw = {**_loaded_vms(), "work_conserving": True, "speculation": True}
    agent = make_env(kw, hooks="hybridmr").unwrapped
    agent.reset(seed=0)
    assert agent.codec.work_conserving is True and agent.codec.speculation is True
    # HybridMR deciding for itself (EnvPolicy) may decline a slot and never speculates
    own = make_env(kw).unwrapped
    EnvPolicy("hybridmr").bind(own)
    own.reset(seed=0)
    assert own.codec.work_conserving is False and own.codec.speculation is False
    # a snapshot restored into a fresh env replays the episode as it was run
    agent.step(int(np.flatnonzero(agent.action_masks())[0]))
    fresh = make_env(kw).unwrapped
    fresh.restore(agent.snapshot())
    assert fresh.codec.work_conserving is True and isinstance(fresh._hooks0, HybridMRScheduler)


def test_a_saved_model_trained_with_hooks_runs_with_them(tmp_path):
    """``mrgym compare --models`` / ``mrgym.evaluate``: ModelPolicy.load reads env.hooks."""
    import yaml
    from sb3_contrib import MaskablePPO

    kw = _loaded_vms()
    env_cfg = {"scenario": "hybrid48", "overrides": kw["overrides"], "job_slots": 4}
    env_cfg.update(queue_order="deficit", hooks="hybridmr")
    cfg = TrainConfig.model_validate({"name": "h", "env": env_cfg})
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump()))
    model = MaskablePPO("MlpPolicy", make_env(kw), n_steps=64, seed=0, device="cpu")
    model.save(str(tmp_path / "model.zip"))
    policy = ModelPolicy.load(tmp_path)
    assert policy.hooks == "hybridmr"
    env = policy.make_env()
    policy.bind(env)
    first = env.unwrapped._hooks
    assert isinstance(first, HybridMRScheduler)
    policy.bind(env)
    assert env.unwrapped._hooks is not first  # a fresh scheduler each time it is bound
    (row,) = mrgym.evaluate([policy], [policy.scenario], [0])
    bare = mrgym.run_sim(mrgym.load_scenario("hybrid48", kw["overrides"]), "fifo", 0).metrics
    assert bare["sla_violation_s"] > 100 and row["sla_violation_s"] <= 0.1 * bare["sla_violation_s"]
    with pytest.raises(ValidationError, match="pretrain.expert: 'hybridmr' acts through"):
        TrainConfig.model_validate({"pretrain": {"expert": "hybridmr"}})  # without env.hooks


def test_training_envs_get_the_hooks(tmp_path):
    from agents.train import make_vec

    kw = _loaded_vms()
    env = {"scenario": kw["config"], "overrides": kw["overrides"], "hooks": "hybridmr"}
    cfg = TrainConfig.model_validate({"env": env, "n_envs": 1})
    venv = make_vec(cfg)
    assert isinstance(venv.envs[0].unwrapped._hooks, HybridMRScheduler)
    venv.close()
    # in worker processes and with domain randomization (which rebuilds the env at reset)
    cfg2 = cfg.model_copy(update={"n_envs": 2})
    cfg2.env.randomize = {"cluster_scale": [1, 1]}
    venv = make_vec(cfg2)
    venv.reset()
    names = [type(h).__name__ for h in venv.get_attr("_hooks")]
    assert names == ["HybridMRScheduler"] * 2
    # ... and the rebuilt env keeps the agent's work conservation (the config's default)
    assert venv.get_attr("codec")[0].work_conserving is True
    venv.close()


def test_a_composition_lends_its_gaters_hooks_so_its_order_can_be_cloned():
    # hybridmr-gate+srpt: HybridMR's hooks and gate, SRPT's order (the warm start of
    # configs/train/bc_jobset_hybrid48_peak_srpt.yaml)
    assert check_hooks("hybridmr-gate+srpt") == "hybridmr-gate+srpt"
    cfg = TrainConfig.model_validate(
        {
            "env": {"hooks": "hybridmr-gate+srpt", "hooks_gate": True},
            "pretrain": {"expert": "hybridmr-gate+srpt"},
        }
    )
    assert cfg.env.hooks == "hybridmr-gate+srpt"
    with pytest.raises(ValidationError, match="unknown order 'nosuch'"):
        TrainConfig.model_validate({"env": {"hooks": "hybridmr-gate+nosuch"}})
    # ILA's gate too: no placement or control of its own, its gate around the agent
    assert check_hooks("ila-gate+srpt") == "ila-gate+srpt"
    # the clone's decisions are the composition's, played with its own hooks
    kw = {**_loaded_vms(), "work_conserving": False, "queue_order": "remaining"}
    demos = collect(kw, "hybridmr-gate+srpt", [10_000], hooks="hybridmr-gate+srpt")
    played = _played(kw, "hybridmr-gate+srpt", 10_000)
    assert demos.inexact == 0 and demos.actions.tolist() == played
    fair_order = collect(kw, "hybridmr", [10_000], hooks="hybridmr")
    assert fair_order.actions.tolist() != played  # HybridMR's Fair order: another schedule
