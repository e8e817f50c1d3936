"""A model saved by one's own SB3 script (a bare ``.zip``, no ``config.yaml``) loads as a
``ModelPolicy``: its algorithm comes from the .zip, its job slots and critic inputs from
its saved spaces, and it joins ``mrgym compare --models``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import yaml

import mrgym
from agents.model_policy import ModelPolicy, saved_algorithm, space_settings

pytest.importorskip("sb3_contrib")


def _env(**kw):
    return gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, max_sim_time_s=600, **kw)


@pytest.fixture(scope="module")
def bare_ppo(tmp_path_factory):
    """A PPO trained for 128 steps by a user's script and saved with ``model.save``."""
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", _env(), n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    path = tmp_path_factory.mktemp("mine") / "my_ppo.zip"
    model.save(str(path))
    return path


def test_a_bare_zip_loads_with_the_settings_its_spaces_imply(bare_ppo):
    p = ModelPolicy.load(bare_ppo)
    assert type(p.model).__name__ == "PPO" and p.name == "ppo:my_ppo"
    assert p.env_kwargs == {"job_slots": 4} and p.scenario is None
    assert p.model.num_timesteps == 128 and p.eval_max_steps == 200_000  # compare's cap
    env = p.make_env("lee-gpu", max_sim_time_s=600)
    assert env.observation_space.shape == (23 + 4 * 21,)
    r = mrgym.run_episode(env, p, seed=0, max_steps=40)
    assert r.steps == 40
    # the harness builds its env with the model's 4 job slots, not its default 8
    rows = mrgym.evaluate([p], ["lee-gpu"], [3], env_kwargs={"max_sim_time_s": 60})
    assert rows[0]["policy"] == "ppo:my_ppo" and rows[0]["sim_time_s"] <= 60


def test_explicit_settings_join_and_contradictions_are_one_line(bare_ppo, tmp_path):
    p = ModelPolicy.load(bare_ppo, env_kwargs={"queue_order": "arrival"}, name="mine")
    assert p.env_kwargs == {"queue_order": "arrival", "job_slots": 4} and p.name == "mine"
    with pytest.raises(ValueError, match="queue_order='remaining' but the model was trained"):
        mrgym.run_episode(_env(), p, seed=0)
    with pytest.raises(ValueError, match=r"job_slots=8: .* Discrete\(13\) has 4 job slots"):
        ModelPolicy.load(bare_ppo, env_kwargs={"job_slots": 8})
    # a run folder's config.yaml gives its settings: env_kwargs would contradict it
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.zip").write_bytes(bare_ppo.read_bytes())
    (run / "config.yaml").write_text(yaml.safe_dump({"algorithm": "ppo", "env": {"job_slots": 4}}))
    assert ModelPolicy.load(run).name == "ppo:run"
    with pytest.raises(ValueError, match="env_kwargs: .* has its settings in .*config.yaml"):
        ModelPolicy.load(run, env_kwargs={"queue_order": "arrival"})


def test_the_algorithm_and_critic_inputs_come_from_the_zip(tmp_path):
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import A2C, DQN

    for cls, kw, algo, hp in (
        (MaskablePPO, {"critic_inputs": True}, "maskable_ppo", {"n_steps": 64}),
        (A2C, {}, "a2c", {}),
        (DQN, {}, "dqn", {"buffer_size": 100}),  # not the default million-step buffer
    ):
        path = tmp_path / f"{algo}.zip"
        cls("MlpPolicy", _env(**kw), seed=0, device="cpu", **hp).save(str(path))
        p = ModelPolicy.load(path)
        assert type(p.model) is cls and p.name == f"{algo}:{algo}"
        assert p.env_kwargs == {"job_slots": 4, **kw}
        assert p.maskable == (cls is MaskablePPO)


class _Other(gym.Env):
    """An environment with MRCluster-like spaces that no MRCluster-v0 has."""

    def __init__(self, n: int, size: int):
        self.action_space = gym.spaces.Discrete(n)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)


@pytest.mark.parametrize(
    "n,size,match",
    [
        (2, 4, r"action space n=2, .*not a model of MRCluster-v0"),
        (
            13,
            50,
            r"observation shape \(50,\) does not match MRCluster-v0 with job_slots=4: "
            r"expected \(107,\), or \(112,\) with critic_inputs=True",
        ),
    ],
)
def test_a_zip_of_another_environment_is_one_line(tmp_path, n, size, match):
    from stable_baselines3 import PPO

    path = tmp_path / "other.zip"
    PPO("MlpPolicy", _Other(n, size), n_steps=64, seed=0, device="cpu").save(str(path))
    with pytest.raises(ValueError, match=match) as e:
        ModelPolicy.load(path)
    assert "\n" not in str(e.value)


def test_space_settings_and_algorithm_read_only_the_json():
    def data(n, size, **extra):
        # as SB3 writes them: n as a string, the shape as a list
        return {"action_space": {"n": str(n)}, "observation_space": {"_shape": [size]}, **extra}

    assert space_settings(data(25, 23 + 8 * 21), "m.zip", {}) == {"job_slots": 8}
    assert space_settings(data(4, 23 + 21 + 5), "m.zip", {}) == {
        "job_slots": 1,
        "critic_inputs": True,
    }
    maskable = {"clip_range": 0.2, "policy_class": {"__module__": "sb3_contrib.common.maskable"}}
    assert saved_algorithm(maskable) == "maskable_ppo"
    assert saved_algorithm({"clip_range": 0.2}) == "ppo"
    assert saved_algorithm({"exploration_rate": 0.05}) == "dqn"
    assert saved_algorithm({}) == "a2c"


def test_compare_takes_a_bare_zip(bare_ppo, tmp_path, capsys):
    from mrgym.cli import main

    # one worker: in this process, no spawned interpreters importing torch again
    args = [
        "compare",
        "--config",
        "lee-gpu",
        "--seeds",
        "0",
        "--schedulers",
        "fifo",
        "--workers",
        "1",
    ]
    out = tmp_path / "cmp"
    assert main([*args, "--models", str(bare_ppo), "--max-decisions", "50", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| ppo:my_ppo † |" in text and "| fifo |" in text
    assert (out / "results.csv").read_text().count("ppo:my_ppo") == 1


def test_evaluate_names_config_for_a_bare_zip(bare_ppo, capsys):
    """A bare .zip names no scenario: evaluate asks for --config instead of guessing one."""
    from mrgym.cli import main

    assert main(["evaluate", "--model", str(bare_ppo), "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert "saved without a training config.yaml, so it names no scenario; pass --config" in err
    with pytest.raises(ValueError, match="names no scenario; pass config=SCENARIO"):
        ModelPolicy.load(bare_ppo).make_env()


def test_a_foreign_config_yaml_beside_a_bare_zip_is_one_line(bare_ppo, tmp_path):
    """Only a config that mrgym train saved is read as one; another config.yaml in the
    model's folder (or one up) is named, not reported as a pydantic dump."""
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"lr": 3, "batch": 64}))
    sub = tmp_path / "models"
    sub.mkdir()
    (sub / "mine.zip").write_bytes(bare_ppo.read_bytes())
    with pytest.raises(ValueError) as e:
        ModelPolicy.load(sub / "mine.zip")
    text = str(e.value)
    assert "\n" not in text and "config.yaml: not a training config saved by mrgym train" in text
