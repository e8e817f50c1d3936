"""ModelPolicy carries its training env settings: ``ModelPolicy.load`` reads them from the
run's config.yaml, ``mrgym.evaluate`` builds the env from them, and an env with other
settings is a one-line ValueError instead of an episode that declines for 870 000 steps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

import mrgym
from agents.config import TrainConfig
from mrgym.envs import MRClusterEnv

pytest.importorskip("sb3_contrib")

# xdist: the saved run built once
pytestmark = pytest.mark.xdist_group("model-policy")


ENV = {"scenario": "lee-gpu", "job_slots": 4, "max_sim_time_s": 600}


def _model(**env_kw):
    from sb3_contrib import MaskablePPO

    env = gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, **env_kw)
    return MaskablePPO("MlpPolicy", env, n_steps=64, seed=0, device="cpu")


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory) -> Path:
    """A run folder as ``mrgym train`` leaves it (model.zip + config.yaml), untrained."""
    run = tmp_path_factory.mktemp("runs") / "tiny"
    (run / "checkpoints").mkdir(parents=True)
    cfg = TrainConfig.model_validate({"name": "tiny", "algorithm": "maskable_ppo", "env": ENV})
    (run / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump()))
    model = _model()
    model.save(str(run / "model.zip"))
    model.save(str(run / "checkpoints" / "model_0_steps.zip"))
    return run


def test_defaults_train_well_and_cannot_idle():
    env = MRClusterEnv(config="lee-gpu")
    assert (env.codec.k, env.codec.queue_order) == (8, "remaining")
    assert env.speculation is False and env.codec.work_conserving is True
    obs, info = env.reset(seed=0)
    for _ in range(200):
        mask = info["action_mask"]
        # decline is legal only where nothing can launch: a masked policy never idles
        assert bool(mask[-1]) == (not mask[:-1].any())
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        if term or trunc:
            break


def test_load_carries_the_training_settings(saved_run):
    for path in (saved_run, saved_run / "model.zip"):
        p = mrgym.ModelPolicy.load(path)
        assert p.scenario == "lee-gpu" and p.name == "maskable_ppo:tiny"
        assert p.env_kwargs["job_slots"] == 4 and p.env_kwargs["max_sim_time_s"] == 600
        assert p.env_kwargs["queue_order"] == "remaining"
        assert p.env_kwargs["work_conserving"] is True and p.env_kwargs["speculation"] is False
    ckpt = mrgym.ModelPolicy.load(saved_run / "checkpoints" / "model_0_steps.zip")
    assert ckpt.name == "maskable_ppo:tiny@0" and ckpt.env_kwargs == p.env_kwargs
    r = mrgym.run_episode(p.make_env(), p, seed=0, max_steps=50)
    assert r.steps == 50


def test_missing_model_lists_the_checkpoints(saved_run):
    with pytest.raises(FileNotFoundError, match=r"no saved model at .*model_9_steps.zip; found: "):
        mrgym.ModelPolicy.load(saved_run / "checkpoints" / "model_9_steps.zip")


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"queue_order": "arrival"}, "env queue_order='arrival' but the model was trained with "),
        ({"work_conserving": False}, "env work_conserving=False but .* work_conserving=True"),
        ({"speculation": True}, "env speculation=True but .* speculation=False"),
        ({"job_slots": 8}, r"action space Discrete\(25\) does not match the model's Discrete"),
    ],
)
def test_bind_refuses_other_settings(saved_run, kw, match):
    p = mrgym.ModelPolicy.load(saved_run)
    env = p.make_env(**kw)
    with pytest.raises(ValueError, match=match) as e:
        mrgym.run_episode(env, p, seed=0)
    assert "\n" not in str(e.value)


def test_bare_model_policy_checks_the_spaces():
    p = mrgym.ModelPolicy(_model())
    p.bind(gym.make("MRCluster-v0", config="lee-gpu", job_slots=4))
    with pytest.raises(ValueError, match=r"action space Discrete\(25\) does not match.*\(13\)"):
        p.bind(gym.make("MRCluster-v0", config="lee-gpu"))


def test_evaluate_builds_the_env_from_the_model(saved_run):
    p = mrgym.ModelPolicy.load(saved_run)
    # the harness's default env (8 slots) would not fit the model: its own settings are used
    rows = mrgym.evaluate([p], ["lee-gpu"], [3])
    assert rows[0]["policy"] == "maskable_ppo:tiny" and rows[0]["sim_time_s"] <= 600
    # the caller may change what the model does not depend on, not what it does
    rows = mrgym.evaluate([p], ["lee-gpu"], [3], env_kwargs={"max_sim_time_s": 60})
    assert rows[0]["sim_time_s"] <= 60
    with pytest.raises(ValueError, match="queue_order='deficit': maskable_ppo:tiny was trained"):
        mrgym.evaluate([p], ["lee-gpu"], [3], env_kwargs={"queue_order": "deficit"})


def test_mrgym_imports_without_the_rl_extras():
    # ``import mrgym`` imports no agents module; ModelPolicy, re-exported from agents on
    # first use, needs no torch or SB3 until a model is loaded
    code = (
        "import sys\n"
        "for m in ('torch', 'stable_baselines3', 'sb3_contrib'): sys.modules[m] = None\n"
        "import mrgym\n"
        "print('agents' in sys.modules)\n"
        "print(mrgym.ModelPolicy.load.__doc__ is not None, 'agents' in sys.modules)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["False", "True", "True"], r.stderr


def test_load_without_the_rl_extras_says_what_the_cli_says(monkeypatch):
    # as uninstalled: `import sb3_contrib` fails (the CLI's own tests do the same)
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    with pytest.raises(ModuleNotFoundError) as e:
        mrgym.ModelPolicy.load("any-model")
    hint = 'needs the RL extras: pip install -e ".[rl]" in the mrgym checkout'
    assert str(e.value) == f"ModelPolicy.load {hint}" and e.value.name == "sb3_contrib"
    from mrgym.extras import RL_HINT

    assert hint.endswith(RL_HINT)  # the one line `mrgym train` prints, word for word


def test_action_probabilities_are_sb3s_distribution_bit_for_bit(saved_run):
    """ModelPolicy computes the masked probabilities from the logits itself (no three
    distribution objects per decision); they must be the very bits of sb3-contrib's
    MaskableCategorical, or a sampled episode would change."""
    import torch as th
    from sb3_contrib.common.maskable.distributions import MaskableCategorical

    from agents.model_policy import categorical_probs

    rng = np.random.default_rng(0)
    for _ in range(50):
        logits = th.as_tensor(rng.normal(0, 3, (1, 13)), dtype=th.float32)
        mask = rng.random(13) < 0.4
        mask[rng.integers(13)] = True
        ref = MaskableCategorical(logits=logits)
        ref.apply_masking(mask)
        assert th.equal(categorical_probs(logits, mask), ref.probs)
    # a saved policy's probabilities along an episode, against get_distribution's
    p = mrgym.ModelPolicy.load(saved_run)
    env = p.make_env()
    p.bind(env)
    obs, info = env.reset(seed=0)
    policy = p.model.policy
    for _ in range(40):
        mask = info["action_mask"].astype(bool)
        with th.no_grad():
            dist = policy.get_distribution(policy.obs_to_tensor(obs)[0], action_masks=mask)
        want = np.where(mask, dist.distribution.probs[0].numpy().astype(np.float64), 0.0)
        got = p._probs(obs, mask)
        assert got.dtype == np.float64 and np.array_equal(got, want)
        obs, _, term, trunc, info = env.step(int(np.argmax(got)))
        if term or trunc:
            break


def test_load_carries_the_runs_sampling_temperature(saved_run, tmp_path):
    import shutil

    run = tmp_path / "warm"
    shutil.copytree(saved_run, run)
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    cfg["eval"].update(decode="sample", temperature=0.5)
    (run / "config.yaml").write_text(yaml.safe_dump(cfg))
    p = mrgym.ModelPolicy.load(run)
    assert (p.decode, p.temperature) == ("sample", 0.5)
    # another decode asked for at load time samples nothing: the temperature stays behind
    q = mrgym.ModelPolicy.load(run, decode="argmax")
    assert (q.decode, q.temperature) == ("argmax", 1.0)
    assert mrgym.ModelPolicy.load(saved_run).temperature == 1.0
