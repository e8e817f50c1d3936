"""Train SB3 / sb3-contrib agents on MRCluster-v0 and load them back for evaluation.

MaskablePPO (the default) gets the action mask from ``env.action_masks()``; PPO, A2C and
DQN see the same environment without masks: an illegal action declines the slot (and sets
``info["invalid_action"]``), so they learn the mask's effect from the rewards.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agents.callbacks import (
    HeldOutEvalCallback,
    HParamsTextCallback,
    MRMetricsCallback,
    TqdmCallback,
)
from agents.config import TrainConfig

ENV_ID = "mrgym:MRCluster-v0"  # the module prefix makes SubprocVecEnv workers import mrgym


def algorithm_class(name: str):
    if name == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    import stable_baselines3 as sb3

    return {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}[name]


def env_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    e = cfg.env
    kw = {
        "config": e.scenario,
        "overrides": e.overrides,
        "job_slots": e.job_slots,
        "queue_order": e.queue_order,
        "reward_weights": e.reward_weights,
        "speculation": e.speculation,
        "work_conserving": e.work_conserving,
    }
    if e.max_sim_time_s is not None:
        kw["max_sim_time_s"] = e.max_sim_time_s
    return kw


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_vec(cfg: TrainConfig):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    cls = SubprocVecEnv if cfg.n_envs > 1 else DummyVecEnv
    return make_vec_env(
        ENV_ID, n_envs=cfg.n_envs, seed=cfg.seed, vec_env_cls=cls, env_kwargs=env_kwargs(cfg)
    )


def train(
    cfg: TrainConfig,
    steps: int | None = None,
    logdir: str | Path = "runs",
    resume: str | Path | None = None,
    progress: bool = True,
) -> Path:
    """Train (or resume) and return the run folder holding model.zip and config.yaml."""
    import gymnasium as gym
    from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback

    total = steps or cfg.total_steps
    run_dir = Path(resume).resolve().parent.parent if resume else Path(logdir) / cfg.name
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    seed_everything(cfg.seed)
    import torch

    torch.set_num_threads(cfg.torch_threads)
    venv = make_vec(cfg)
    algo = algorithm_class(cfg.algorithm)
    tb = str(run_dir / "tb")
    if resume:
        model = algo.load(str(resume), env=venv, device="cpu", tensorboard_log=tb)
    else:
        model = algo(
            cfg.policy,
            venv,
            seed=cfg.seed,
            device="cpu",
            verbose=0,
            tensorboard_log=tb,
            **cfg.hyperparameters,
        )
    start = model.num_timesteps
    callbacks = [
        MRMetricsCallback(),
        HParamsTextCallback(
            {
                "algorithm": cfg.algorithm,
                "scenario": cfg.env.scenario,
                "n_envs": cfg.n_envs,
                "seed": cfg.seed,
                "total_steps": total,
                "job_slots": cfg.env.job_slots,
                "queue_order": cfg.env.queue_order,
                "reward_weights": cfg.env.reward_weights,
                **{f"hp.{k}": v for k, v in cfg.hyperparameters.items()},
            }
        ),
        CheckpointCallback(
            save_freq=max(1, cfg.checkpoint_every_steps // cfg.n_envs),
            save_path=str(run_dir / "checkpoints"),
            name_prefix="model",
        ),
        HeldOutEvalCallback(
            lambda: gym.make(ENV_ID, **env_kwargs(cfg)), cfg.eval.seeds, cfg.eval.every_steps
        ),
    ]
    if progress:
        callbacks.append(TqdmCallback(total, initial=start))
    t0 = time.perf_counter()
    model.learn(
        max(0, total - start),
        callback=CallbackList(callbacks),
        reset_num_timesteps=not resume,
        tb_log_name="run",
    )
    wall = time.perf_counter() - t0
    model.save(str(run_dir / "model.zip"))
    (run_dir / "train_stats.yaml").write_text(
        yaml.safe_dump(
            {
                "steps": int(model.num_timesteps),
                "wall_s": round(wall, 1),
                "steps_per_s": round((model.num_timesteps - start) / wall, 1) if wall > 0 else None,
            }
        )
    )
    venv.close()
    return run_dir


def find_config(model_path: str | Path) -> Path:
    p = Path(model_path).resolve()
    if not p.is_file():
        raise FileNotFoundError(f"model {model_path} does not exist (expected a model.zip)")
    for folder in (p.parent, p.parent.parent):
        if (folder / "config.yaml").exists():
            return folder / "config.yaml"
    raise FileNotFoundError(f"no config.yaml beside {model_path} (or one folder up)")


def load_model(model_path: str | Path):
    """A saved model and the training config stored beside it."""
    cfg = TrainConfig.model_validate(yaml.safe_load(find_config(model_path).read_text()))
    model = algorithm_class(cfg.algorithm).load(str(model_path), device="cpu")
    return model, cfg


class ModelFactory:
    """``evaluate``'s policy factory for a saved model: its env settings come along."""

    def __init__(self, model_path: str | Path, name: str | None = None):
        self.model, self.cfg = load_model(model_path)
        self.name = name or f"{self.cfg.algorithm}:{Path(model_path).parent.name}"
        kw = env_kwargs(self.cfg)
        kw.pop("config")
        self.env_kwargs = kw

    def __call__(self, env):
        import mrgym

        return mrgym.ModelPolicy(self.model, name=self.name)
