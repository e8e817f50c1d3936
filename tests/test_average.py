"""Checkpoint averaging (``agents.analysis.average``): the mean of the models' policy weights,
written as a run folder that loads like any saved model; models that do not fit together
and an output folder that holds a run are refused."""

from __future__ import annotations

import shutil

import pytest
import torch
import yaml
from helpers import tiny_train_config as _cfg

from agents.analysis.average import average_models, main
from agents.train import load_model, train


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A tiny trained run, and a checkpoint (config one folder up, as ``mrgym train``
    lays them out) of a copy whose float weights are 1.0 higher."""
    logdir = tmp_path_factory.mktemp("avg")
    run = train(_cfg("maskable_ppo", steps=64), logdir=logdir, progress=False)
    other = logdir / "shifted"
    (other / "checkpoints").mkdir(parents=True)
    shutil.copyfile(run / "config.yaml", other / "config.yaml")
    model, _ = load_model(run / "model.zip")
    with torch.no_grad():
        for p in model.policy.parameters():
            p.add_(1.0)
    model.save(other / "checkpoints" / "model_64_steps.zip")
    return run / "model.zip", other / "checkpoints" / "model_64_steps.zip"


def test_the_average_is_the_mean_of_the_weights(two_runs, tmp_path):
    a, b = two_runs
    main([str(tmp_path / "avg"), str(a.parent), str(b)])  # a run folder and a checkpoint
    avg, cfg = load_model(tmp_path / "avg")
    base, base_cfg = load_model(a)
    want = base.policy.state_dict()
    for k, v in avg.policy.state_dict().items():
        assert torch.allclose(v, want[k] + 0.5 if v.is_floating_point() else want[k]), k
    assert cfg == base_cfg  # the first model's config came along


def test_models_that_do_not_fit_together_are_refused(two_runs, tmp_path):
    a, b = two_runs
    with pytest.raises(ValueError, match="at least 2"):
        average_models([a])
    with pytest.raises(ValueError, match="given twice"):
        average_models([a, b, a])
    other = tmp_path / "fifo-order"
    other.mkdir()
    cfg = yaml.safe_load((a.parent / "config.yaml").read_text())
    cfg["env"]["queue_order"] = "arrival" if cfg["env"]["queue_order"] != "arrival" else "deficit"
    (other / "config.yaml").write_text(yaml.safe_dump(cfg))
    shutil.copyfile(a, other / "model.zip")
    with pytest.raises(ValueError, match="env.queue_order"):
        average_models([a, other])
    with pytest.raises(SystemExit, match="no saved model"):
        main([str(tmp_path / "x"), str(a), str(tmp_path / "missing.zip")])


def test_an_output_folder_that_holds_a_run_is_refused(two_runs):
    a, b = two_runs
    with pytest.raises(SystemExit, match="already holds config.yaml, model.zip"):
        main([str(a.parent), str(a), str(b)])
