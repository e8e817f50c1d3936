"""The gradient noise scale (agents/grad_noise.py): the estimators on gradients of known
signal and noise, the per-rollout gradient against PPO's own loss, and a short
measurement on a small config."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
import yaml
from stable_baselines3.common.callbacks import CallbackList

from agents import grad_noise
from agents.config import TrainConfig
from agents.grad_noise import noise_scale

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


def test_too_few_streams_is_an_error_that_names_them():
    with pytest.raises(ValueError, match="streams: need at least 3"):
        noise_scale(_streams(np.zeros(P), 1.0, n=2, rollouts=3))


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


def test_a_rollouts_gradient_is_ppos_first_step():
    from agents.time_discount import SojournCallback
    from agents.train import _new_model, make_vec, seed_everything

    cfg = TrainConfig.model_validate(TINY)
    seed_everything(0)
    venv = make_vec(cfg)
    model = _new_model(cfg, venv, None)
    _, cb = model._setup_learn(10**6, CallbackList([SojournCallback()]), True, "t", False)
    cb.on_training_start(locals(), globals())
    model.collect_rollouts(model.env, cb, model.rollout_buffer, model.n_steps)
    pg, ent = grad_noise._gradients(model)
    # PPO's clipped surrogate on the same data, as MaskablePPO.train computes it
    data = next(model.rollout_buffer.get(batch_size=None))
    actions = data.actions.long().flatten()
    _, log_prob, entropy = model.policy.evaluate_actions(
        data.observations, actions, action_masks=data.action_masks
    )
    adv = (data.advantages - data.advantages.mean()) / (data.advantages.std() + 1e-8)
    ratio = torch.exp(log_prob - data.old_log_prob)
    assert torch.allclose(ratio, torch.ones_like(ratio), atol=1e-5)  # no update yet
    clip = model.clip_range(1.0)
    loss = -torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - clip, 1 + clip)).mean()
    params = [p for p in model.policy.parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    want = np.concatenate(
        [
            (g if g is not None else torch.zeros_like(p)).numpy().ravel()
            for g, p in zip(grads, params)
        ]
    )
    np.testing.assert_allclose(pg, want, rtol=1e-4, atol=1e-7)
    assert np.linalg.norm(pg) > 0
    # the entropy term's gradient: ent_coef x the gradient of -mean(H)
    e = torch.autograd.grad(-0.01 * entropy.mean(), params, allow_unused=True)
    e = np.concatenate(
        [(g if g is not None else torch.zeros_like(p)).numpy().ravel() for g, p in zip(e, params)]
    )
    np.testing.assert_allclose(ent, e, rtol=1e-4, atol=1e-8)
    venv.close()


def test_a_measurement_on_a_small_config_is_repeatable(tmp_path):
    config = _tiny_config(tmp_path)
    a = grad_noise.measure(config, 0, streams=3, rollouts=2, progress=False)
    b = grad_noise.measure(config, 0, streams=3, rollouts=2, progress=False)
    assert json.dumps(a) == json.dumps(b)  # each stream's env and policy seeds are fixed
    assert a["decisions"] == 3 * 2 * 64 and a["rollouts"] == 6
    assert a["model"] == "a fresh network" and a["env_seeds"] == [5000, 5002]
    assert a["trace"] > 0 and a["entropy_grad_norm"] > 0
    assert a["sim_seconds"] > 0


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
