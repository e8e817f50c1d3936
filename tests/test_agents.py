"""SB3 training on MRCluster-v0 with tiny budgets: train, save, load, evaluate, resume, TB tags."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers import run_cli

from agents.config import TrainConfig, TrainConfigError, load_train_config
from agents.train import ModelFactory, load_model, train

TINY_HP = {
    "maskable_ppo": {"n_steps": 64, "batch_size": 32},
    "ppo": {"n_steps": 64, "batch_size": 32},
    "a2c": {"n_steps": 16},
    "dqn": {"learning_starts": 32, "buffer_size": 1000, "batch_size": 16},
}


def _cfg(algo: str, n_envs: int = 1, steps: int = 256, cap_s: float = 600) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "name": f"tiny-{algo}",
            "algorithm": algo,
            "n_envs": n_envs,
            "seed": 0,
            "total_steps": steps,
            # an untrained agent may decline for ever: cap episodes at 10 simulated minutes
            "env": {"scenario": "lee-gpu", "job_slots": 4, "max_sim_time_s": cap_s},
            "hyperparameters": TINY_HP[algo],
            "checkpoint_every_steps": 128,
            "eval": {"seeds": [7], "every_steps": 10_000},
        }
    )


def _tags(run: Path) -> set[str]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tags: set[str] = set()
    for events in run.glob("tb/*/events.out.tfevents.*"):
        acc = EventAccumulator(str(events))
        acc.Reload()
        tags |= set(acc.Tags()["scalars"])
    return tags


@pytest.mark.parametrize("algo", ["maskable_ppo", "ppo", "a2c", "dqn"])
def test_each_algorithm_trains_saves_and_evaluates(algo, tmp_path):
    run = train(_cfg(algo), logdir=tmp_path, progress=False)
    assert (run / "model.zip").exists() and (run / "config.yaml").exists()
    model, cfg = load_model(run / "model.zip")
    assert cfg.algorithm == algo and model.num_timesteps >= 256
    import mrgym

    rows = mrgym.evaluate([ModelFactory(run / "model.zip")], ["lee-gpu"], [100, 101])
    assert len(rows) == 2 and all(r["jobs_submitted"] == 2 and r["sim_time_s"] <= 600 for r in rows)
    assert rows[0]["policy"].startswith(algo)


def test_tensorboard_has_mr_tags_and_hparams(tmp_path):
    # 2-minute episodes, so several end within the budget
    run = train(
        _cfg("maskable_ppo", n_envs=2, steps=512, cap_s=120), logdir=tmp_path, progress=False
    )
    tags = _tags(run)
    # (mean JCT appears once an episode completes a job; two-minute episodes may not)
    for tag in (
        "mr/jobs_completed",
        "mr/locality_node",
        "mr/fairness",
        "mr/utilization",
        "mr/reward_jct",
        "mr/reward_throughput",
        "mr_eval/jobs_completed",
    ):
        assert tag in tags, sorted(tags)


def test_resume_continues_the_step_count(tmp_path):
    cfg = _cfg("maskable_ppo", steps=128)
    run = train(cfg, logdir=tmp_path, progress=False)
    ckpt = run / "checkpoints" / "model_128_steps.zip"
    assert ckpt.exists()
    cfg2 = cfg.model_copy(update={"total_steps": 384})
    run2 = train(cfg2, resume=ckpt, progress=False)
    assert run2 == run
    model, _ = load_model(run / "model.zip")
    assert model.num_timesteps == 384
    stats = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert stats["steps"] == 384


def test_bad_training_config_names_the_key(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("algorithm: sac\n")
    with pytest.raises(TrainConfigError, match="bad.yaml: algorithm:"):
        load_train_config(p)
    p.write_text("n_envs: 2\nlearning_rate: 0.1\n")
    with pytest.raises(TrainConfigError, match="bad.yaml: learning_rate: unknown key"):
        load_train_config(p)


def test_bundled_training_configs_load():
    for path in sorted(Path(__file__).resolve().parents[1].glob("configs/train/*.yaml")):
        cfg = load_train_config(path)
        assert cfg.env.scenario == "ila72"


def test_cli_train_evaluate_compare(tmp_path):
    cfg = tmp_path / "t.yaml"
    cfg.write_text(yaml.safe_dump(_cfg("maskable_ppo", steps=128).model_dump()))
    r = run_cli("train", "--config", str(cfg), "--logdir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    model = tmp_path / "tiny-maskable_ppo" / "model.zip"
    r = run_cli("evaluate", "--model", str(model), "--config", "lee-gpu", "--seeds", "100-101")
    assert r.returncode == 0, r.stderr
    assert "| maskable_ppo:tiny-maskable_ppo |" in r.stdout
    tb = tmp_path / "tb"
    r = run_cli(
        "compare",
        "--config",
        "lee-gpu",
        "--seeds",
        "0-1",
        "--schedulers",
        "fifo",
        "--models",
        str(model),
        "--out",
        str(tmp_path / "cmp"),
        "--tensorboard",
        str(tb),
    )
    assert r.returncode == 0, r.stderr
    assert "| fifo |" in r.stdout and "| maskable_ppo:tiny-maskable_ppo |" in r.stdout
    assert (tb / "baseline-fifo").is_dir() and (
        tb / "baseline-maskable_ppo_tiny-maskable_ppo"
    ).is_dir()
