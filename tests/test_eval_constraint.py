"""eval.p95_no_worse_than: the pick of best_model.zip constrained to evaluations whose p95
JCT is no worse than a baseline's on the same validation seeds."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.logger import configure  # noqa: E402

import mrgym  # noqa: E402
from agents.callbacks import HeldOutEvalCallback  # noqa: E402
from agents.config import TrainConfig, load_train_config  # noqa: E402
from agents.train import p95_limit  # noqa: E402


def _make():
    return gym.make("MRCluster-v0", config="lee-gpu", job_slots=4)


def test_an_evaluation_above_the_p95_limit_is_never_the_best(tmp_path):
    model = MaskablePPO("MlpPolicy", _make(), seed=0, device="cpu", n_steps=64)
    model.set_logger(configure(None, []))
    seeds = [0, 1]
    # the p95 the callback will see: the same episodes, averaged over the seeds
    env = _make()
    p95 = np.mean(
        [
            mrgym.run_episode(env, mrgym.ModelPolicy(model), seed=s).metrics["p95_jct_s"]
            for s in seeds
        ]
    )
    path = tmp_path / "best.zip"
    for limit, saved in ((p95 - 1e-6, False), (p95, True)):
        path.unlink(missing_ok=True)
        cb = HeldOutEvalCallback(
            _make, seeds, every_steps=1, best_path=str(path), p95_limit=float(limit)
        )
        cb.init_callback(model)
        cb.evaluate()
        assert path.exists() == saved and (cb.best is not None) == saved


def test_the_limit_is_the_baseline_p95_averaged_over_the_validation_seeds():
    cfg = TrainConfig.model_validate(
        {
            "env": {"scenario": "lee-gpu", "job_slots": 4},
            "eval": {"seeds": [3, 4], "p95_no_worse_than": "fifo"},
        }
    )
    rows = [mrgym.evaluate(["fifo"], ["lee-gpu"], [s])[0]["p95_jct_s"] for s in (3, 4)]
    assert p95_limit(cfg) == pytest.approx((rows[0] + rows[1]) / 2, rel=1e-12)
    assert (
        p95_limit(
            cfg.model_copy(update={"eval": cfg.eval.model_copy(update={"p95_no_worse_than": None})})
        )
        is None
    )


def test_an_unknown_scheduler_is_one_line_naming_the_key(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("eval:\n  p95_no_worse_than: fiar\n")
    with pytest.raises(ValueError, match=r"eval\.p95_no_worse_than: unknown scheduler 'fiar'"):
        load_train_config(p)


def test_the_limit_runs_the_scenario_as_the_evaluation_env_builds_it():
    # env.max_sim_time_s cuts the baseline's episodes as it cuts the model's (200 s: fifo
    # finishes one of lee-gpu's two jobs on seed 3, at ~150 s; the other at ~256 s)
    cfg = TrainConfig.model_validate(
        {
            "env": {"scenario": "lee-gpu", "job_slots": 4, "max_sim_time_s": 200.0},
            "eval": {"seeds": [3], "p95_no_worse_than": "fifo"},
        }
    )
    scenario = mrgym.load_scenario("lee-gpu", {"run.max_sim_time_s": 200.0})
    cut = mrgym.evaluate(["fifo"], [scenario], [3])[0]["p95_jct_s"]
    full = mrgym.evaluate(["fifo"], ["lee-gpu"], [3])[0]["p95_jct_s"]
    assert cut != full and p95_limit(cfg) == cut


def test_a_resumed_best_without_a_recorded_p95_does_not_survive_a_new_limit():
    from agents.train import _meets_limit

    assert _meets_limit({"best_eval_step": 5}, None)
    assert not _meets_limit({"best_eval_step": 5}, 500.0)
    assert _meets_limit({"best_eval_p95_jct_s": 480.0}, 500.0)
    assert not _meets_limit({"best_eval_p95_jct_s": 520.0}, 500.0)


def test_train_says_when_no_evaluation_qualified(tmp_path, capsys):
    """Every evaluation above the p95 limit: no best_model.zip, and train says which file
    to use instead (a command naming best_model.zip would otherwise fail later)."""
    from agents.train import _say_no_best

    cb = HeldOutEvalCallback(_make, [0], every_steps=1, best_path="x", p95_limit=486.6)
    cb.history.append((2048, 500.0))
    _say_no_best(cb, tmp_path)
    err = capsys.readouterr().err
    assert "no held-out evaluation met p95 <= 486.6 s" in err
    assert f"no best_model.zip; use {tmp_path / 'model.zip'}" in err
