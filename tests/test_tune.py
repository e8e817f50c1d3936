"""``mrgym tune`` (agents.tune): Ray Tune trials with Optuna search and ASHA stopping."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

pytest.importorskip("ray")
pytest.importorskip("optuna")
pytest.importorskip("sb3_contrib")

from agents.config import TrainConfig, load_train_config  # noqa: E402
from agents.tune import SPACES, rung_budgets, search_space, trial_config  # noqa: E402
from mrgym import cli  # noqa: E402

# xdist: one Ray cluster at a time (with tests/test_sweep.py)
pytestmark = pytest.mark.xdist_group("ray")


TINY = {
    "name": "tiny",
    "algorithm": "maskable_ppo",
    "env": {"scenario": "lee-gpu", "max_sim_time_s": 600},
    "n_envs": 2,
    "seed": 0,
    "total_steps": 128,
    "hyperparameters": {"n_steps": 64, "batch_size": 256, "n_epochs": 1},
    "eval": {"seeds": [1000], "every_steps": 100000},
}


def test_rung_budgets_add_up():
    assert rung_budgets(128, 2) == [64, 64]
    assert rung_budgets(10, 4) == [3, 3, 2, 2]
    assert rung_budgets(2, 4) == [1, 1]


def test_search_space_drops_rollouts_longer_than_a_rung():
    space = search_space("ppo", 300)
    assert space["n_steps"].categories == [64, 128, 256]
    assert search_space("ppo", 10)["n_steps"].categories == [64]  # the smallest stays
    assert set(search_space("dqn", 10**6)) == set(SPACES["dqn"])
    lr = space["learning_rate"]
    assert (lr.lower, lr.upper) == (1e-5, 1e-3)


def test_trial_config_keeps_ppo_batches_within_the_rollout():
    base = TrainConfig.model_validate(TINY)
    t = trial_config(base, {"n_steps": 128, "learning_rate": 1e-4}, n_envs=1)
    assert t.n_envs == 1 and t.hyperparameters["batch_size"] == 128
    assert t.hyperparameters["learning_rate"] == 1e-4 and t.hyperparameters["n_epochs"] == 1
    assert trial_config(base, {"n_steps": 64}).hyperparameters["batch_size"] == 128  # 64 x 2


def test_tune_two_trials_write_tensorboard_and_the_best_config(ray_cluster, tmp_path, capsys):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    argv = ["tune", "--config", str(cfg), "--samples", "2", "--rungs", "2", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    out = tmp_path / "tune-tiny"
    assert "2 trials; best held-out mean JCT" in capsys.readouterr().out
    with open(out / "trials.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 and len({r["trial_id"] for r in rows}) == 2
    jcts = [float(r["mean_jct"]) for r in rows]
    assert all(0 < j < 1e6 for j in jcts)  # held-out jobs finished: a real JCT
    # each trial its own TensorBoard folder with SB3's event files
    trials = [p for p in (out / "trials").iterdir() if p.is_dir()]
    assert len(trials) == 2
    for t in trials:
        assert list((t / "tb").rglob("events.out.tfevents.*"))
    # the best config: the base config with the winning trial's hyper-parameters
    best = load_train_config(out / "best.yaml")
    winner = min(rows, key=lambda r: float(r["mean_jct"]))
    assert best.name == "tiny-tuned" and best.n_envs == 2 and best.total_steps == 128
    hp = best.hyperparameters
    assert hp["learning_rate"] == pytest.approx(float(winner["config/learning_rate"]))
    assert 1e-5 <= hp["learning_rate"] <= 1e-3 and 0.99 <= hp["gamma"] <= 0.9999
    assert hp["n_steps"] == 64 and hp["batch_size"] == 128 and hp["n_epochs"] == 1
    assert f"{min(jcts):.1f} s" in (out / "best.yaml").read_text().splitlines()[0]


def test_tune_rejects_bad_input(tmp_path):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    assert cli.main(["tune", "--config", str(cfg), "--workers", "0"]) == 2
    assert cli.main(["tune", "--config", str(tmp_path / "nope.yaml")]) == 2
    assert not Path(tmp_path / "tune-tiny").exists()


@pytest.mark.parametrize(
    ("key", "value"),
    [("discount_per", "second"), ("lr_schedule", "linear"), ("init_from", "some-model")],
)
def test_tune_refuses_settings_its_trials_cannot_apply(key, value, tmp_path, capsys):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump({**TINY, key: value}))
    assert cli.main(["tune", "--config", str(cfg), "--out", str(tmp_path)]) == 2
    assert f"tune: {key}: {value!r} is not supported by trials" in capsys.readouterr().err
    assert not list(tmp_path.glob("tune-*"))


def test_tune_refuses_environment_hooks(tmp_path, capsys):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump({**TINY, "env": {**TINY["env"], "hooks": "hybridmr"}}))
    assert cli.main(["tune", "--config", str(cfg), "--out", str(tmp_path)]) == 2
    assert "tune: env.hooks: 'hybridmr' is not supported by trials" in capsys.readouterr().err
