"""``lr_schedule: linear`` decays the learning rate to 0 at total_steps (agents/train.py)."""

from __future__ import annotations

import pytest
from helpers import tiny_train_config as _cfg

from agents.config import TrainConfig, TrainConfigError, load_train_config
from agents.train import load_model, train


def test_linear_schedule_decays_the_configured_rate(tmp_path):
    cfg = _cfg("maskable_ppo", steps=128).model_copy(update={"lr_schedule": "linear"})
    cfg.hyperparameters["learning_rate"] = 0.002
    run = train(cfg, logdir=tmp_path, progress=False)
    model, saved = load_model(run / "model.zip")
    assert saved.lr_schedule == "linear"
    assert model.lr_schedule(1.0) == pytest.approx(0.002)
    assert model.lr_schedule(0.25) == pytest.approx(0.0005)
    # the last update ran at a fraction of the start rate
    assert model.policy.optimizer.param_groups[0]["lr"] < 0.002 / 2


def test_without_a_rate_the_algorithm_default_decays(tmp_path):
    cfg = _cfg("a2c", steps=64).model_copy(update={"lr_schedule": "linear"})
    assert "learning_rate" not in cfg.hyperparameters
    model, _ = load_model(train(cfg, logdir=tmp_path, progress=False) / "model.zip")
    assert model.lr_schedule(1.0) == pytest.approx(7e-4)  # A2C's default
    assert model.lr_schedule(0.5) == pytest.approx(3.5e-4)


def test_constant_is_the_default_and_a_bad_value_names_the_key(tmp_path):
    assert TrainConfig().lr_schedule == "constant"
    p = tmp_path / "c.yaml"
    p.write_text("lr_schedule: cosine\n")
    with pytest.raises(TrainConfigError, match="lr_schedule"):
        load_train_config(p)
