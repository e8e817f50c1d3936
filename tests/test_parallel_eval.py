"""eval.workers: the held-out evaluation's episodes in worker processes give the serial
loop's numbers (agents/callbacks.py ParallelEval)."""

from __future__ import annotations

import pytest

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.logger import configure  # noqa: E402

from agents.callbacks import HeldOutEvalCallback, ParallelEval  # noqa: E402
from agents.config import TrainConfig  # noqa: E402
from agents.env_hooks import make_env  # noqa: E402

KW = {"config": "lee-gpu", "job_slots": 4, "max_sim_time_s": 600.0}


def _callback(model, tmp_path, workers: int, name: str) -> HeldOutEvalCallback:
    par = ParallelEval(workers, "maskable_ppo", KW, None, str(tmp_path / f"{name}.zip"))
    cb = HeldOutEvalCallback(
        lambda: make_env(KW),
        [0, 1, 2],
        every_steps=1,
        max_steps=400,
        best_path=str(tmp_path / f"best-{name}.zip"),
        decode="sample",
        parallel=par if workers > 1 else None,
    )
    cb.init_callback(model)
    return cb


def test_workers_give_the_serial_numbers_and_clean_up(tmp_path):
    from agents.extractors import JobSetPolicy

    model = MaskablePPO(JobSetPolicy, make_env(KW), seed=0, device="cpu", n_steps=64)
    model.set_logger(configure(None, []))
    serial = _callback(model, tmp_path, 1, "serial")
    parallel = _callback(model, tmp_path, 2, "parallel")
    try:
        a, b = serial.evaluate(), parallel.evaluate()
        assert a == b  # the same sampled episodes, bit for bit
        assert serial.episode_steps == parallel.episode_steps
        assert a > 0 and len(serial.episode_steps) == 3
        assert serial.best == parallel.best and parallel.best is not None
        assert (tmp_path / "parallel.zip").exists()  # the model the workers loaded
    finally:
        parallel.close()
    assert parallel.parallel.pool is None and not (tmp_path / "parallel.zip").exists()


def test_workers_is_a_positive_count():
    assert TrainConfig.model_validate({"eval": {"workers": 4}}).eval.workers == 4
    with pytest.raises(ValueError, match="workers"):
        TrainConfig.model_validate({"eval": {"workers": 0}})


def _threads(task) -> int:
    import torch

    return torch.get_num_threads()


def test_a_serial_grid_runs_models_on_one_torch_thread_and_gives_the_threads_back(monkeypatch):
    """mrgym compare/evaluate/benchmark --workers 1 run saved models in this process: one
    intra-op thread while they run (torch's default, one per core, spins on 2 busy cores
    at ~8x the CPU time), the caller's setting back afterwards; scheduler tasks and a
    user's OMP_NUM_THREADS leave torch alone."""
    import torch

    from mrgym import sweep

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        model = sweep.Task(0, object(), "lee-gpu", 0)  # any policy that is no scheduler
        named = sweep.Task(1, "fifo", "lee-gpu", 0)
        assert list(sweep.run_grid([model, named], workers=1, fn=_threads)) == [1, 1]
        assert torch.get_num_threads() == 3
        assert list(sweep.run_grid([named], workers=1, fn=_threads)) == [3]
        monkeypatch.setenv("OMP_NUM_THREADS", "2")  # the user's choice stands
        assert list(sweep.run_grid([model], workers=1, fn=_threads)) == [3]
    finally:
        torch.set_num_threads(before)
