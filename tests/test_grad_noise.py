"""The gradient noise scale (agents/grad_noise.py): the estimators on gradients of known
signal and noise, the per-rollout gradient against PPO's own loss, and a short
measurement on a small config."""

from __future__ import annotations

import json
import math
from contextlib import contextmanager

import numpy as np
import pytest
import torch
import yaml
from stable_baselines3.common.callbacks import CallbackList

from agents.analysis import grad_noise
from agents.analysis.grad_noise import noise_scale
from agents.config import TrainConfig

P = 40  # parameters


def _streams(g: np.ndarray, sd: float, n: int, rollouts: int, seed: int = 0) -> list:
    """``n`` streams of ``rollouts`` gradients: ``g`` plus independent normal noise."""
    rng = np.random.default_rng(seed)
    return [g + sd * rng.standard_normal((rollouts, len(g))) for _ in range(n)]


def test_the_noise_scale_of_gradients_with_known_signal_and_noise():
    g = np.zeros(P)
    g[0] = 1.0  # |G|^2 = 1
    sd = 0.5  # tr(Sigma) = P * sd^2 = 10, so B_simple = 10 rollouts
    ns = noise_scale(_streams(g, sd, n=30, rollouts=8))
    assert ns.streams == 30 and ns.rollouts == 240
    assert ns.g2 == pytest.approx(1.0, abs=0.15)
    assert ns.g2_low < 1.0 < ns.g2_high
    assert ns.trace == pytest.approx(10.0, rel=0.05)
    assert ns.b_simple == pytest.approx(10.0, rel=0.2)
    assert ns.b_low < 10.0 < ns.b_high
    # two noisy rollouts' cosine: |G|^2 / (|G|^2 + tr Sigma), about 1/11
    assert ns.cos == pytest.approx(1 / 11, abs=0.02)
    # uncorrelated rollouts: R x a stream mean's variance is tr(Sigma) too
    assert ns.trace_of_means == pytest.approx(10.0, rel=0.2)


def test_noise_alone_gives_no_signal_and_an_open_interval():
    ns = noise_scale(_streams(np.zeros(P), 1.0, n=12, rollouts=4, seed=1))
    assert ns.g2_low < 0.0 < ns.g2_high
    assert ns.b_high == math.inf  # |G|^2 could be 0: no finite bound
    assert abs(ns.cos) < 0.02


def test_rollouts_of_one_stream_that_share_their_noise_do_not_count_as_signal():
    # noise shared by a stream's rollouts (one episode's luck) must not look like G: the
    # estimate crosses streams only
    rng = np.random.default_rng(2)
    streams = [np.tile(rng.standard_normal(P), (6, 1)) for _ in range(20)]
    ns = noise_scale(streams)
    assert ns.g2_low < 0.0 < ns.g2_high
    assert abs(ns.g2) < 0.1 * P / 20**0.5


def test_too_few_or_uneven_streams_are_errors_that_name_them():
    with pytest.raises(ValueError, match="streams: need at least 3"):
        noise_scale(_streams(np.zeros(P), 1.0, n=2, rollouts=3))
    uneven = _streams(np.zeros(P), 1.0, n=3, rollouts=3)
    uneven[0] = uneven[0][:2]
    with pytest.raises(ValueError, match=r"streams: expected equal lengths, got \[2, 3, 3\]"):
        noise_scale(uneven)


TINY = {
    "name": "tiny-grad-noise",
    "n_envs": 1,
    "total_steps": 128,
    "env": {"scenario": "lee-gpu", "job_slots": 4, "max_sim_time_s": 600},
    "hyperparameters": {"n_steps": 64, "batch_size": 32, "gamma": 0.99, "ent_coef": 0.01},
    "discount_per": "second",
    "lambda_per": "second",
    "eval": {"seeds": [7], "every_steps": 10_000},
}


def _tiny_config(tmp_path) -> str:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY))
    return str(path)


@contextmanager
def _one_rollout(cfg: TrainConfig):
    """A fresh model of ``cfg`` with one rollout collected, as training collects it."""
    from agents.time_discount import SojournCallback
    from agents.train import _new_model, make_vec, seed_everything

    seed_everything(0)
    venv = make_vec(cfg)
    model = _new_model(cfg, venv, None)
    _, cb = model._setup_learn(10**6, CallbackList([SojournCallback()]), True, "t", False)
    cb.on_training_start(locals(), globals())
    model.collect_rollouts(model.env, cb, model.rollout_buffer, model.n_steps)
    try:
        yield model
    finally:
        venv.close()


def test_a_rollouts_gradient_is_what_ppos_first_update_follows():
    # one minibatch of the whole rollout, one epoch, the policy loss alone, no clipping of
    # the norm: MaskablePPO's first optimizer step then follows exactly the policy gradient
    hp = {"batch_size": 64, "n_epochs": 1, "vf_coef": 0.0, "ent_coef": 0.0, "max_grad_norm": 1e9}
    cfg = TrainConfig.model_validate({**TINY, "hyperparameters": {**TINY["hyperparameters"], **hp}})
    with _one_rollout(cfg) as model:
        pg, ent = grad_noise._gradients(model)
        assert np.linalg.norm(pg) > 0 and not ent.any()  # ent_coef 0
        params = [p for p in model.policy.parameters() if p.requires_grad]
        seen = []
        # record the gradient PPO's optimizer would apply, and do not apply it
        model.policy.optimizer.step = lambda *a, **k: seen.append(
            grad_noise.flat_grads([p.grad for p in params], params)
        )
        model.train()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], pg, rtol=1e-4, atol=1e-7)


def test_the_entropy_terms_gradient_is_ent_coef_times_that_of_minus_the_entropy():
    with _one_rollout(TrainConfig.model_validate(TINY)) as model:
        _, ent = grad_noise._gradients(model)
        data = next(model.rollout_buffer.get(batch_size=None))
        _, _, entropy = model.policy.evaluate_actions(
            data.observations, data.actions.long().flatten(), action_masks=data.action_masks
        )
        params = [p for p in model.policy.parameters() if p.requires_grad]
        grads = torch.autograd.grad(-0.01 * entropy.mean(), params, allow_unused=True)
    np.testing.assert_allclose(ent, grad_noise.flat_grads(grads, params), rtol=1e-4, atol=1e-8)


def test_a_measurement_on_a_small_config_is_repeatable(tmp_path):
    config = _tiny_config(tmp_path)
    a = grad_noise.measure(config, 0, streams=3, rollouts=2, progress=False)
    b = grad_noise.measure(config, 0, streams=3, rollouts=2, progress=False)
    assert json.dumps(a) == json.dumps(b)  # each stream's env and policy seeds are fixed
    assert a["decisions"] == 3 * 2 * 64 and a["rollouts"] == 6
    assert a["model"] == "a fresh network" and a["env_seeds"] == [5000, 5002]
    assert a["trace"] > 0 and a["sim_seconds"] > 0
    assert -1.0 <= a["entropy_cos"] <= 1.0


def test_the_command_writes_json_and_refuses_a_missing_model(tmp_path, capsys):
    config = _tiny_config(tmp_path)
    out = tmp_path / "gn.json"
    argv = ["--config", config, "--streams", "3", "--rollouts", "1", "--out", str(out)]
    assert grad_noise.main(argv) == 0
    saved = json.loads(out.read_text())  # strict JSON: inf and nan are written as null
    assert saved["streams"] == 3 and saved["decisions"] == 3 * 64
    assert "B_simple" in capsys.readouterr().out
    assert grad_noise.main([*argv, "--model", "no-such-model"]) == 2
    assert "no-such-model" in capsys.readouterr().err
    # a shipped model of another network: refused, naming what differs
    assert grad_noise.main([*argv, "--model", "lee-gpu-wfair-v1-s0"]) == 2
    assert "was trained with other" in capsys.readouterr().err
    assert grad_noise.main([*argv, "--clone"]) == 2  # TINY has no pretrain
    assert "has no pretrain" in capsys.readouterr().err


def test_a_measurement_at_the_clone_starts_where_training_would(tmp_path):
    cfg = {**TINY, "pretrain": {"expert": "wfair", "episodes": 1, "epochs": 1}}
    path = tmp_path / "bc.yaml"
    path.write_text(yaml.safe_dump(cfg))
    r = grad_noise.measure(str(path), 0, streams=3, rollouts=1, progress=False, clone=True)
    assert r["model"] == "the behaviour clone for seed 0" and r["decisions"] == 3 * 64
    # the clone is the one a training run of the config starts from: the same cloning
    from agents.config import load_train_config
    from agents.train import train

    bc = load_train_config(str(path))
    run = train(bc.model_copy(update={"total_steps": 1}), logdir=tmp_path / "runs", progress=False)
    made = grad_noise.make_clone(bc, tmp_path / "clone")
    ran = yaml.safe_load((run / "train_stats.yaml").read_text())
    cloned = yaml.safe_load((made.parent / "train_stats.yaml").read_text())
    assert cloned["bc_samples"] > 0
    for key in ("bc_loss", "bc_agreement", "bc_samples"):
        assert cloned[key] == ran[key]
