"""Fine-tuning: ``init_from`` starts a fresh run from a trained model's policy weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml
from helpers import tiny_train_config as _cfg

from agents.config import TrainConfigError, load_train_config
from agents.shipped import shipped
from agents.train import load_model, read_saved_config, train


def _tuned(cfg, source, **update):
    hp = {**cfg.hyperparameters, **update.pop("hp", {})}
    return cfg.model_copy(
        update={"name": "tuned", "init_from": str(source), "hyperparameters": hp, **update}
    )


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A tiny trained run of seed 1, in a folder named for its seed."""
    logdir = tmp_path_factory.mktemp("src")
    cfg = _cfg("maskable_ppo", steps=128).model_copy(update={"name": "src-s1", "seed": 1})
    return train(cfg, logdir=logdir, progress=False)


def test_the_weights_are_the_source_models_and_the_step_count_starts_afresh(source, tmp_path):
    # a zero learning rate leaves the copied weights as they were through the updates
    template = str(source).replace("-s1", "-s{seed}")
    cfg = _tuned(_cfg("maskable_ppo", steps=64), template, seed=1, hp={"learning_rate": 0.0})
    run = train(cfg, logdir=tmp_path, progress=False)
    tuned, _ = load_model(run / "model.zip")
    src, _ = load_model(source / "model.zip")
    a, b = tuned.policy.state_dict(), src.policy.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert tuned.num_timesteps == 64  # the config's own steps, not the source's 128 + 64
    stats = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert stats["init_from"] == str(source) and stats["init_from_steps"] == 128
    assert stats["resumed_from"] is None and "bc_expert" not in stats
    # a resumed fine-tuning run keeps the record of where it started
    train(None, steps=256, resume=run, progress=False)
    again = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert again["init_from"] == str(source) and again["resumed_from"] == 64


def test_the_runs_random_streams_follow_its_seed_not_the_sources(source):
    # SB3's load reseeds the global generators with the saved model's seed
    from agents.train import _init_from, _init_source, _new_model, make_vec

    draws = []
    for seed in (0, 3):
        cfg = _tuned(_cfg("maskable_ppo", steps=64), source, seed=seed)
        venv = make_vec(cfg)
        _init_from(_new_model(cfg, venv, ""), cfg, _init_source(cfg))
        draws.append((torch.rand(3).tolist(), np.random.rand(3).tolist()))
        venv.close()
    assert draws[0] != draws[1]


@pytest.mark.parametrize(
    ("update", "message"),
    [
        (
            {"queue_order": "arrival"},
            r"env\.queue_order 'remaining'; this config has env\.queue_order 'arrival'",
        ),
        ({"job_slots": 3}, r"observation_space .* differs .*env\.job_slots"),
    ],
)
def test_a_model_of_another_env_is_refused(source, tmp_path, update, message):
    base = _cfg("maskable_ppo", steps=64)
    cfg = _tuned(base, source, env=base.env.model_copy(update=update))
    with pytest.raises(ValueError, match=message):
        train(cfg, logdir=tmp_path, progress=False)


def test_init_from_and_pretrain_exclude_each_other(tmp_path):
    data = _cfg("maskable_ppo").model_dump()
    data.update(init_from="somewhere", pretrain={"expert": "fair"})
    path = tmp_path / "both.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(TrainConfigError, match="init_from: 'somewhere' .* set one of them"):
        load_train_config(path)


def test_the_bundled_fine_tuning_config_starts_from_each_seeds_shipped_model():
    cfg = load_train_config("configs/train/ft_jobset_ila72_gate_500k.yaml")
    for seed in (0, 1, 2):
        name = cfg.model_copy(update={"seed": seed}).init_model()
        assert name == f"ila72-gate-500k-v1-s{seed}" and name in shipped()
        saved = read_saved_config(shipped()[name].with_name("config.yaml"))
        assert saved.env == cfg.env and saved.policy == cfg.policy


def test_cli_init_from_replaces_the_configs(source, tmp_path):
    from helpers import run_cli

    cfg = tmp_path / "t.yaml"
    cfg.write_text(
        yaml.safe_dump({**_cfg("maskable_ppo", steps=64).model_dump(), "init_from": "nowhere"})
    )
    r = run_cli(
        "train", "--config", str(cfg), "--logdir", str(tmp_path), "--init-from", str(source)
    )
    assert r.returncode == 0, r.stderr
    stats = yaml.safe_load((tmp_path / "tiny-maskable_ppo" / "train_stats.yaml").read_text())
    # the config's own init_from names no model: the flag's replaced it
    assert stats["init_from"] == str(source) and stats["init_from_steps"] == 128
    # with a warm start in the config: one line that names both
    data = yaml.safe_load(cfg.read_text())
    data["pretrain"], data["init_from"] = {"expert": "fair"}, None
    cfg.write_text(yaml.safe_dump(data))
    r = run_cli(
        "train", "--config", str(cfg), "--init-from", str(source), "--logdir", str(tmp_path / "x")
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "--init-from" in r.stderr and "'fair'" in r.stderr and not (tmp_path / "x").exists()


def test_a_missing_model_names_the_key_and_the_seed_and_makes_no_folder(tmp_path):
    cfg = _tuned(_cfg("maskable_ppo", steps=64), tmp_path / "run-s{seed}", seed=4)
    with pytest.raises(
        ValueError, match=r"^init_from: '.*run-s\{seed\}' \(seed 4: .*run-s4\): no saved model"
    ):
        train(cfg, logdir=tmp_path / "runs", progress=False)
    assert not (tmp_path / "runs").exists()


def test_init_value_false_zeroes_only_the_value_output(source, tmp_path):
    from agents.train import _init_from, _init_source, _new_model, make_vec

    cfg = _tuned(_cfg("maskable_ppo", steps=64), source, init_value=False)
    venv = make_vec(cfg)
    model = _new_model(cfg, venv, "")
    stats = _init_from(model, cfg, _init_source(cfg))
    venv.close()
    assert stats["init_from_value"] is False
    src, _ = load_model(source / "model.zip")
    a, b = model.policy.state_dict(), src.policy.state_dict()
    zeroed = {"value_net.weight", "value_net.bias"}
    assert all(torch.equal(a[k], b[k]) for k in a if k not in zeroed)
    assert all(a[k].abs().sum() == 0 and b[k].abs().sum() > 0 for k in zeroed)
    obs = venv.observation_space.sample()
    value = model.policy.predict_values(model.policy.obs_to_tensor(obs)[0])
    assert value.item() == 0.0


def test_init_value_false_without_init_from_is_refused(tmp_path):
    data = _cfg("maskable_ppo", steps=64).model_dump()
    data.update(init_value=False)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(TrainConfigError, match="init_value: false .* init_from is not set"):
        load_train_config(path)
