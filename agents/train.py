"""Train SB3 / sb3-contrib agents on MRCluster-v0 and load them back for evaluation.

MaskablePPO (the default) gets the action mask from ``env.action_masks()``; PPO, A2C and
DQN see the same environment without masks: an illegal action declines the slot (and sets
``info["invalid_action"]``), so they learn the mask's effect from the rewards.
"""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml
from pydantic import ValidationError

from agents.callbacks import (
    HeldOutEvalCallback,
    HParamsTextCallback,
    MRMetricsCallback,
    ParallelEval,
    TqdmCallback,
)
from agents.config import TrainConfig, algorithm_class
from agents.env_hooks import WithHooks, make_env

if TYPE_CHECKING:  # pragma: no cover
    from stable_baselines3.common.base_class import BaseAlgorithm
    from stable_baselines3.common.vec_env import VecEnv

ENV_ID = "mrgym:MRCluster-v1"  # the module prefix makes SubprocVecEnv workers import mrgym


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
        "observation_version": e.observation_version,
    }
    if e.max_sim_time_s is not None:
        kw["max_sim_time_s"] = e.max_sim_time_s
    if e.critic_inputs:  # only when set: earlier runs' settings stay as they were
        kw["critic_inputs"] = True
    if e.hooks is not None:  # with or without the gate, so that a saved model binds to it
        kw["hooks_gate"] = e.hooks_gate
    if e.wait_actions:  # only when set, as critic_inputs
        kw["wait_actions"] = e.wait_actions
    return kw


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_vec(cfg: TrainConfig):
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    cls = SubprocVecEnv if cfg.n_envs > 1 and cfg.vec_env == "subproc" else DummyVecEnv
    kw = env_kwargs(cfg)
    hooks = {"wrapper_class": WithHooks, "wrapper_kwargs": {"hooks": cfg.env.hooks}}
    hooks = hooks if cfg.env.hooks else {}  # no wrapper unless it has hooks to install
    if cfg.env.slowdown_scale_by is not None:  # refused with continuous and randomize
        from agents.episode_scale import scaled_with_hooks

        hooks = {"wrapper_class": scaled_with_hooks}
        hooks["wrapper_kwargs"] = {"hooks": cfg.env.hooks, "name": cfg.env.slowdown_scale_by}
    if cfg.env.continuous is not None:  # kept out of env_kwargs: evaluation runs the scenario
        from agents.continuous import ContinuousSpec, differential, make_continuous_env

        spec = ContinuousSpec.from_dict(cfg.env.continuous)
        kw["overrides"] = spec.overrides(kw["config"], kw["overrides"])
        kw.update(spec=spec, hooks=cfg.env.hooks)
        shaped = {"wrapper_class": differential}
        shaped["wrapper_kwargs"] = {"window_steps": spec.window_steps}
        return make_vec_env(
            make_continuous_env,
            cfg.n_envs,
            cfg.seed,
            vec_env_cls=cls,
            env_kwargs=kw,
            **(shaped if spec.differential else {}),
        )
    if cfg.env.randomize is not None:  # kept out of env_kwargs: evaluation runs the scenario
        from agents.randomize import make_randomized_env

        kw["base_config"] = kw.pop("config")
        kw["spec"] = cfg.env.randomize
        return make_vec_env(
            make_randomized_env, cfg.n_envs, cfg.seed, vec_env_cls=cls, env_kwargs=kw, **hooks
        )
    return make_vec_env(ENV_ID, cfg.n_envs, cfg.seed, vec_env_cls=cls, env_kwargs=kw, **hooks)


def p95_limit(cfg: TrainConfig) -> float | None:
    """``eval.p95_no_worse_than``'s scheduler's p95 JCT on the validation seeds, averaged
    over them as the evaluations average the model's (None without the constraint)."""
    name = cfg.eval.p95_no_worse_than
    if name is None:
        return None
    import gymnasium as gym

    import mrgym

    # the scenario as the evaluation env builds it (env.overrides, env.max_sim_time_s)
    env = gym.make(ENV_ID, **env_kwargs(cfg))
    scenario = env.unwrapped.scenario
    env.close()
    rows = mrgym.evaluate([name], [scenario], cfg.eval.seeds)
    limit = float(np.mean([r["p95_jct_s"] for r in rows]))
    if not np.isfinite(limit):  # no job finished on some seed: nothing could ever qualify
        raise ValueError(
            f"eval.p95_no_worse_than: {name} finished no job on some of eval.seeds "
            f"{cfg.eval.seeds} (p95 {limit}); pick another scheduler or longer episodes"
        )
    return limit


def _meets_limit(stats: dict, limit: float | None) -> bool:
    """Whether a recorded best may stay the best under ``limit`` (a resumed run whose
    config gained eval.p95_no_worse_than: a best without a recorded p95 cannot)."""
    if limit is None:
        return True
    p95 = stats.get("best_eval_p95_jct_s")
    return p95 is not None and p95 <= limit


def resolve_model_path(path: str | Path, shipped_names: bool = True) -> Path:
    """A saved model's .zip from a run folder (its model.zip), a model.zip, a checkpoint or
    a shipped model's short name (``models/NAME/best_model.zip``, agents/shipped.py); a
    missing file is one line listing the run's checkpoints (SB3 would try ``.zip.zip``).
    A folder without ``model.zip`` gives its ``best_model.zip`` (a shipped model's folder).
    ``shipped_names=False`` takes paths only (``--resume`` must not write into models/)."""
    from agents.shipped import is_short_name, shipped, shipped_path

    p = Path(path)
    short = shipped_path(path) if shipped_names else None  # agents/shipped.py
    if short is not None:
        return short
    if p.is_dir():
        best = p / "best_model.zip"
        p = best if best.is_file() and not (p / "model.zip").exists() else p / "model.zip"
    if p.is_file():
        return p
    if shipped_names and is_short_name(path):
        names = ", ".join(shipped()) or "none"
        raise FileNotFoundError(
            f"no saved model at {path}: not a file, a run folder or a shipped model's short "
            f"name (shipped: {names})"
        )
    near = sorted(
        (p.parent.glob("*.zip") if p.parent.is_dir() else []),
        key=lambda c: (len(c.name), c.name),  # model_50000_steps before model_100000_steps
    )
    have = f"; found: {', '.join(c.name for c in near)}" if near else ""
    raise FileNotFoundError(f"no saved model at {path}{have}")


def saved_steps(zip_path: str | Path) -> int:
    """The step count stored in an SB3 .zip (read from its JSON, without loading torch)."""
    import json
    import zipfile

    with zipfile.ZipFile(zip_path) as z:
        return int(json.loads(z.read("data"))["num_timesteps"])


def model_label(zip_path: str | Path, cfg: TrainConfig) -> str:
    """A model's name in tables and TensorBoard: the run name (prefixed by the algorithm
    only when the name does not already say it), ``@STEPS`` for a checkpoint."""
    run = find_config(zip_path).parent.name
    label = run if cfg.algorithm in run else f"{cfg.algorithm}:{run}"
    p = Path(zip_path)
    if p.parent.name == "checkpoints":
        label += f"@{saved_steps(p)}"
    elif p.name == "best_model.zip":  # the held-out evaluation's pick
        label += f"@best{saved_steps(p)}"
    return label


# the config sections a resumed model depends on: its spaces, the meaning of its actions
# and the algorithm's saved state
_RESUME_KEYS = ("algorithm", "policy", "env")


def _resume_config(cfg: TrainConfig | None, ckpt: Path) -> tuple[TrainConfig, Path]:
    """The config to resume with and the run folder the checkpoint belongs to."""
    saved_path = find_config(ckpt)
    saved = TrainConfig.model_validate(yaml.safe_load(saved_path.read_text()))
    if cfg is None:
        return saved, saved_path.parent
    for key in _RESUME_KEYS:
        mine, theirs = getattr(cfg, key), getattr(saved, key)
        if mine != theirs:
            if key == "env":
                mine, theirs = mine.model_dump(), theirs.model_dump()
            raise ValueError(
                f"--resume {ckpt}: the config's {key} {mine} differs from the run's "
                f"{saved_path} ({theirs}); resume with the run's own config"
            )
    # the run keeps its folder and name; the new config may change budgets and callbacks
    return cfg.model_copy(update={"name": saved.name}), saved_path.parent


@dataclass
class _Run:
    """Where a training run starts: its config, folder and step counts, and for a resumed
    run the checkpoint and its recorded ``train_stats.yaml``."""

    cfg: TrainConfig
    run_dir: Path
    total: int  # the run's total step count, a resumed model's steps included
    ckpt: Path | None = None  # the checkpoint resumed from (None: a fresh model)
    start: int = 0  # the resumed model's steps
    old_stats: dict = field(default_factory=dict)  # its steps, clone and best model


def _start_run(
    cfg: TrainConfig | None, steps: int | None, logdir: str | Path, resume: str | Path | None
) -> _Run:
    """Resolve a fresh run's folder, or a resumed run's checkpoint, config and stats; a
    resumed run whose total is not above its model's steps is a ``ValueError``."""
    if resume:
        from agents.shipped import shipped_path

        if shipped_path(resume) is not None:
            raise ValueError(
                f"--resume {resume}: a shipped model's short name; resume a run folder or "
                f"checkpoint (copy models/{resume}/ elsewhere to fine-tune it)"
            )
        ckpt = resolve_model_path(resume, shipped_names=False)
        cfg, run_dir = _resume_config(cfg, ckpt)
        run = _Run(cfg, run_dir, steps or cfg.total_steps, ckpt, saved_steps(ckpt))
        stats_file = run_dir / "train_stats.yaml"
        if stats_file.exists():
            run.old_stats = yaml.safe_load(stats_file.read_text()) or {}
        latest = run.old_stats.get("steps")
        if isinstance(latest, int) and latest > run.start:
            print(
                f"train: note: resuming {run_dir} from step {run.start:,}, before its latest "
                f"({latest:,}): its model.zip and later checkpoints will be replaced",
                file=sys.stderr,
            )
        if run.total <= run.start:
            raise ValueError(
                f"--resume {resume}: the model already has {run.start:,} steps and --steps "
                f"(or total_steps) is the total, {run.total:,}; pass more than {run.start:,}"
            )
        return run
    if cfg is None:
        raise ValueError("train: give a config, or resume= a checkpoint")
    return _Run(cfg, _fresh_run_dir(Path(logdir), cfg.name), steps or cfg.total_steps)


def _new_model(cfg: TrainConfig, venv: VecEnv, tb: str | None) -> BaseAlgorithm:
    """A fresh model of ``cfg.algorithm`` with its policy, hyper-parameters, the per-second
    discount's rollout buffer and the linear learning-rate schedule when configured."""
    from agents.extractors import resolve_policy

    algo = algorithm_class(cfg.algorithm)
    # JobSetPolicy and the "deepsets"/"attention" extractors are named by string in YAML
    policy, hp = resolve_policy(cfg.policy, cfg.hyperparameters, cfg.env.critic_inputs)
    if cfg.discount_per == "second":
        from agents.time_discount import TimeDiscountBuffer, TimeLambdaBuffer

        buffer = TimeLambdaBuffer if cfg.lambda_per == "second" else TimeDiscountBuffer
        hp = {**hp, "rollout_buffer_class": buffer}
    if cfg.lr_schedule == "linear":
        import inspect

        from stable_baselines3.common.utils import LinearSchedule

        default = inspect.signature(algo).parameters["learning_rate"].default
        lr = float(hp.get("learning_rate", default))
        hp = {**hp, "learning_rate": LinearSchedule(lr, 0.0, 1.0)}
    return algo(policy, venv, seed=cfg.seed, device="cpu", verbose=0, tensorboard_log=tb, **hp)


def _run_model(run: _Run, venv: VecEnv) -> BaseAlgorithm:
    """The run's model on ``venv``: the resumed checkpoint, or a fresh model."""
    tb = str(run.run_dir / "tb")
    if run.ckpt is not None:
        algo = algorithm_class(run.cfg.algorithm)
        return algo.load(str(run.ckpt), env=venv, device="cpu", tensorboard_log=tb)
    return _new_model(run.cfg, venv, tb)


def _learn(model: BaseAlgorithm, steps: int, callbacks: list, fresh: bool) -> tuple[float, bool]:
    """``model.learn`` for ``steps`` more steps; Ctrl-C ends it but keeps what was learned
    (model.zip is what --resume RUN continues from).  Returns the wall seconds and whether
    it was interrupted."""
    from stable_baselines3.common.callbacks import CallbackList

    t0 = time.perf_counter()
    interrupted = False
    try:
        model.learn(
            steps,
            callback=CallbackList(callbacks),
            reset_num_timesteps=fresh,
            tb_log_name="run",
        )
    except KeyboardInterrupt:
        interrupted = True
    return time.perf_counter() - t0, interrupted


def _hparams(cfg: TrainConfig, total: int) -> dict[str, Any]:
    """The settings TensorBoard's text tab shows for a run (HParamsTextCallback)."""
    return {
        "algorithm": cfg.algorithm,
        "scenario": cfg.env.scenario,
        "n_envs": cfg.n_envs,
        "vec_env": cfg.vec_env,
        "seed": cfg.seed,
        "total_steps": total,
        "job_slots": cfg.env.job_slots,
        "queue_order": cfg.env.queue_order,
        "speculation": cfg.env.speculation,
        "work_conserving": cfg.env.work_conserving,
        "reward_weights": cfg.env.reward_weights,
        "discount_per": cfg.discount_per,
        "lambda_per": cfg.lambda_per,
        "lr_schedule": cfg.lr_schedule,
        **({"continuous": cfg.env.continuous} if cfg.env.continuous is not None else {}),
        **{f"hp.{k}": v for k, v in cfg.hyperparameters.items()},
    }


def _held_out_eval(run: _Run, report: bool = False) -> HeldOutEvalCallback:
    """The held-out evaluation that picks best_model.zip; a resumed run's recorded best
    stays best until beaten (unless a limit added since rules it out).  With ``report`` it
    shows its episodes' progress and prints a line per evaluation."""
    cfg, old = run.cfg, run.old_stats
    parallel = None
    if cfg.eval.workers > 1:
        parallel = ParallelEval(
            cfg.eval.workers,
            cfg.algorithm,
            env_kwargs(cfg),
            cfg.env.hooks,
            str(run.run_dir / "held_out_eval.zip"),
            cfg.torch_threads,
        )
    eval_cb = HeldOutEvalCallback(
        lambda: make_env(env_kwargs(cfg), cfg.env.hooks),
        cfg.eval.seeds,
        cfg.eval.every_steps,
        max_steps=cfg.eval.max_steps,
        best_path=str(run.run_dir / "best_model.zip"),
        decode=cfg.eval.decode,
        temperature=cfg.eval.temperature,
        p95_limit=p95_limit(cfg),
        # the clone, or the model fine-tuning starts from, is a candidate
        evaluate_at_start=bool(cfg.pretrain or cfg.init_from) and run.ckpt is None,
        parallel=parallel,
        report=report,
    )
    if "best_eval_step" in old and _meets_limit(old, eval_cb.p95_limit):
        eval_cb.best = (int(old["best_eval_step"]), float(old["best_eval_mean_jct_s"]))
        eval_cb.best_p95 = old.get("best_eval_p95_jct_s")
    return eval_cb


def _callbacks(
    run: _Run,
    metrics_cb: MRMetricsCallback,
    eval_cb: HeldOutEvalCallback,
    progress: tuple[int, int] | None,
) -> list:
    """The run's callbacks: metrics, hyper-parameters text, checkpoints, the held-out
    evaluation, the per-second discount's sojourn times and, with ``progress`` (the
    model's steps at the start and per rollout), the progress bar."""
    from stable_baselines3.common.callbacks import CheckpointCallback

    cfg = run.cfg
    callbacks = [
        metrics_cb,
        HParamsTextCallback(_hparams(cfg, run.total)),
        CheckpointCallback(
            save_freq=max(1, cfg.checkpoint_every_steps // cfg.n_envs),
            save_path=str(run.run_dir / "checkpoints"),
            name_prefix="model",
        ),
        eval_cb,
    ]
    if cfg.discount_per == "second":
        from agents.time_discount import SojournCallback

        callbacks.insert(0, SojournCallback())
    if progress is not None:
        # on-policy algorithms collect whole rollouts (n_envs x n_steps): SB3 stops at the
        # first rollout boundary at or past the target, so the bar counts to that
        start, rollout = progress
        planned = start + -(-(run.total - start) // rollout) * rollout
        callbacks.append(TqdmCallback(planned, initial=start, episodes=metrics_cb))
    return callbacks


def _train_stats(
    model: BaseAlgorithm,
    start: int,
    resumed: bool,
    metrics_cb: MRMetricsCallback,
    eval_cb: HeldOutEvalCallback,
    wall: float,
    interrupted: bool,
    bc: dict,
) -> dict[str, Any]:
    """What train_stats.yaml records: steps, speed, the clone's numbers and the held-out
    evaluation's pick (with its p95 constraint)."""
    stats = {
        "steps": int(model.num_timesteps),
        "interrupted": interrupted,
        "resumed_from": int(start) if resumed else None,
        "episodes_finished": metrics_cb.episodes,
        "wall_s": round(wall, 1),
        "steps_per_s": round((model.num_timesteps - start) / wall, 1) if wall > 0 else None,
        "eval_wall_s": round(eval_cb.eval_s, 1),  # of wall_s: the held-out evaluations
        **bc,
    }
    if eval_cb.best is not None:  # best_model.zip: the best held-out evaluation's model
        stats["best_eval_step"], stats["best_eval_mean_jct_s"] = (
            eval_cb.best[0],
            round(eval_cb.best[1], 1),
        )
        if eval_cb.best_p95 is not None:
            stats["best_eval_p95_jct_s"] = round(eval_cb.best_p95, 1)
    if eval_cb.p95_limit is not None:  # the pick's constraint (eval.p95_no_worse_than)
        stats["eval_p95_limit_s"] = round(eval_cb.p95_limit, 1)
    return stats


def train(
    cfg: TrainConfig | None,
    steps: int | None = None,
    logdir: str | Path = "runs",
    resume: str | Path | None = None,
    progress: bool = True,
) -> Path:
    """Train (or resume) and return the run folder holding model.zip and config.yaml.

    ``steps`` (default ``cfg.total_steps``) is the run's total step count, the resumed
    model's steps included.  ``resume``: a checkpoint, a model.zip or a run folder; training
    continues in that run's folder (``logdir`` is ignored) with its config when ``cfg`` is
    None, and a ``steps`` not above the model's count is a ``ValueError``.
    """
    run = _start_run(cfg, steps, logdir, resume)
    cfg, run_dir, total = run.cfg, run.run_dir, run.total
    # a wrong model to fine-tune stops the run before its folder is made
    src = _init_source(cfg) if cfg.init_from is not None and run.ckpt is None else None
    run_dir.mkdir(parents=True, exist_ok=True)
    saved_cfg = cfg.model_copy(update={"total_steps": total})
    (run_dir / "config.yaml").write_text(yaml.safe_dump(saved_cfg.model_dump(), sort_keys=False))
    seed_everything(cfg.seed)
    import torch

    torch.set_num_threads(cfg.torch_threads)
    with unchecked_distributions():
        return _train_run(run, src, progress)


@contextmanager
def unchecked_distributions() -> Iterator[None]:
    """torch.distributions without their argument checks, for the block.  SB3 builds a
    Categorical for every forward pass, and checking its logits was ~7 % of a one-env
    training step on ``ila72``; the checks only raise, so the numbers are the same."""
    from torch.distributions import Distribution

    was = Distribution._validate_args
    Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        Distribution.set_default_validate_args(was)


def _train_run(run: _Run, src: Path | None, progress: bool) -> Path:
    """The body of :func:`train`: build the envs and the model, learn, save."""
    cfg, run_dir, total = run.cfg, run.run_dir, run.total
    venv = make_vec(cfg)
    model = _run_model(run, venv)
    start = model.num_timesteps
    if run.ckpt is not None:  # the run's clone or starting model, as it was recorded
        bc = {k: v for k, v in run.old_stats.items() if k.startswith(("bc_", "init_from"))}
    elif src is not None:
        bc = _init_from(model, cfg, src)
    else:
        bc = _warm_start(model, cfg) if cfg.pretrain else {}
    metrics_cb = MRMetricsCallback()
    eval_cb = _held_out_eval(run, report=progress)
    rollout = getattr(model, "n_steps", 1) * venv.num_envs
    callbacks = _callbacks(run, metrics_cb, eval_cb, (start, rollout) if progress else None)
    try:
        wall, interrupted = _learn(model, total - start, callbacks, fresh=run.ckpt is None)
    finally:
        eval_cb.close()  # its workers, if any, also when learning raised
    model.save(str(run_dir / "model.zip"))
    stats = _train_stats(
        model, start, run.ckpt is not None, metrics_cb, eval_cb, wall, interrupted, bc
    )
    (run_dir / "train_stats.yaml").write_text(yaml.safe_dump(stats, sort_keys=False))
    venv.close()
    if interrupted:
        print(
            f"train: interrupted at {model.num_timesteps:,} steps; saved {run_dir / 'model.zip'}"
            f" (continue with --resume {run_dir})",
            file=sys.stderr,
        )
        raise KeyboardInterrupt
    if metrics_cb.episodes == 0:
        print(
            no_episode_note(model.num_timesteps - start, cfg, metrics_cb, eval_cb), file=sys.stderr
        )
    if eval_cb.best_path and eval_cb.history and not (run_dir / "best_model.zip").exists():
        _say_no_best(eval_cb, run_dir)
    return run_dir


def _say_no_best(eval_cb, run_dir: Path) -> None:
    """No held-out evaluation qualified (each broke eval.p95_no_worse_than): there is no
    best_model.zip, and a command naming it would fail; say which file to use instead."""
    limit = f" p95 <= {eval_cb.p95_limit:.1f} s" if eval_cb.p95_limit is not None else ""
    print(
        f"train: no held-out evaluation met{limit or ' its constraint'} "
        f"(eval.p95_no_worse_than), so there is no best_model.zip; "
        f"use {run_dir / 'model.zip'} or train longer",
        file=sys.stderr,
    )


def _warm_start(model, cfg: TrainConfig) -> dict:
    """Behaviour-clone ``cfg.pretrain.expert`` into the fresh model (agents/pretrain.py) on
    seeds no evaluation uses (10 000 + 100 x seed + i), and say how well it copied."""
    from agents.pretrain import clone, collect

    p = cfg.pretrain
    seeds = [10_000 + 100 * cfg.seed + i for i in range(p.episodes)]
    t0 = time.perf_counter()
    gamma = float(cfg.hyperparameters.get("gamma", 0.99))
    per_second = cfg.discount_per == "second"  # the returns discount as PPO's will
    scale_by = cfg.env.slowdown_scale_by
    demos = collect(env_kwargs(cfg), p.expert, seeds, gamma, per_second, cfg.env.hooks, scale_by)
    out = clone(model, demos, p, seed=cfg.seed)
    out = {k: round(v, 4) for k, v in out.items()}
    out["bc_expert"] = p.expert
    out["bc_inexact"] = demos.inexact
    out["bc_wall_s"] = round(time.perf_counter() - t0, 1)
    print(
        f"train: cloned {p.expert} from {len(demos):,} steps of {p.episodes} episodes: "
        f"agreement {out['bc_agreement']:.3f}, loss {out['bc_loss']:.3f} "
        f"({out['bc_wall_s']} s)",
        file=sys.stderr,
    )
    return out


# what gives a policy's weights their meaning without changing its spaces: the observation's
# features, the slots' order and the scheduler around the agent
_MEANING_KEYS = ("observation_version", "queue_order", "hooks", "hooks_gate")


def config_differences(cfg: TrainConfig, other: TrainConfig) -> list[str]:
    """The keys whose values make ``other``'s weights mean something else under ``cfg``:
    the algorithm, the policy and its network, and the observation's meaning."""
    differ = [k for k in ("algorithm", "policy") if getattr(cfg, k) != getattr(other, k)]
    differ += [f"env.{k}" for k in _MEANING_KEYS if getattr(cfg.env, k) != getattr(other.env, k)]
    if cfg.hyperparameters.get("policy_kwargs") != other.hyperparameters.get("policy_kwargs"):
        differ.append("hyperparameters.policy_kwargs")
    return differ


def _init_source(cfg: TrainConfig) -> Path:
    """The model ``cfg.init_from`` names (its seed filled in), checked against the config
    before the run's folder is made: a missing model or one trained with another
    algorithm, policy, network or observation meaning is a one-line ``ValueError``."""
    name = cfg.init_model()
    where = f"init_from: {cfg.init_from!r} (seed {cfg.seed}: {name})"
    try:
        src = resolve_model_path(name)
        saved = read_saved_config(find_config(src))
    except (FileNotFoundError, ValueError) as e:
        raise ValueError(f"{where}: {e}") from None
    differ = config_differences(cfg, saved)
    if differ:
        theirs = ", ".join(f"{k} {_dotted(saved, k)!r}" for k in differ)
        mine = ", ".join(f"{k} {_dotted(cfg, k)!r}" for k in differ)
        raise ValueError(f"{where} was trained with {theirs}; this config has {mine}")
    theirs, mine = saved.env.wait_actions, cfg.env.wait_actions
    if theirs != mine and (theirs or cfg.policy != "JobSetPolicy"):
        raise ValueError(
            f"{where} was trained with env.wait_actions {theirs}; this config has {mine}: "
            "waits can only be added to a JobSetPolicy model without any (_add_waits)"
        )
    return src


def _init_from(model, cfg: TrainConfig, src: Path) -> dict:
    """Copy the policy weights of ``cfg.init_from`` (``src``: that model, already checked
    by :func:`_init_source`) into the fresh model, for fine-tuning; a model of another
    observation or action space is a one-line ``ValueError``."""
    name = cfg.init_model()
    # SB3's load seeds Python's, NumPy's and torch's generators with the saved model's seed:
    # the run's own seed, so that the run's random streams follow its seed, not the source's
    other = algorithm_class(cfg.algorithm).load(
        str(src), device="cpu", custom_objects={"seed": cfg.seed}
    )
    state = other.policy.state_dict()
    for space in ("observation_space", "action_space"):
        theirs, mine = getattr(other, space), getattr(model, space)
        # a model without waits may start a config with them (_init_source checked that
        # the source has none): same job slots, so the spaces differ by the waits alone
        grown = space == "action_space" and mine.n - theirs.n == cfg.env.wait_actions > 0
        if theirs != mine and not grown:
            raise ValueError(
                f"init_from: {name}'s {space} {theirs} differs from this config's {mine} "
                "(env.job_slots, env.critic_inputs, env.wait_actions?)"
            )
        if grown:
            state = _add_waits(state, cfg.env.wait_actions, cfg.policy)
    try:
        model.policy.load_state_dict(state)
    except RuntimeError as e:
        raise ValueError(
            f"init_from: {name}'s network does not fit this config's "
            f"(hyperparameters.policy_kwargs?): {str(e).splitlines()[0]}"
        ) from None
    if not cfg.init_value:  # V = 0 everywhere: the scale of a differential reward's returns
        import torch

        with torch.no_grad():
            model.policy.value_net.weight.zero_()
            model.policy.value_net.bias.zero_()
    steps = int(other.num_timesteps)
    print(f"train: starting from {name} ({steps:,} steps)", file=sys.stderr)
    return {"init_from": str(name), "init_from_steps": steps, "init_from_value": cfg.init_value}


def _add_waits(state: dict, waits: int, policy: str) -> dict:
    """A JobSetPolicy's weights without wait actions, given ``waits`` of them: each wait's
    logit is a copy of decline's, all of them lowered by log(1 + waits), so that declining
    in any way keeps the probability that decline had (the launches' are unchanged) and the
    new actions start as equal shares of it."""
    if policy != "JobSetPolicy":
        raise ValueError(
            f"init_from: env.wait_actions={waits} adds actions to the starting model, which "
            f"only policy JobSetPolicy can take (its decline logit is copied); got {policy!r}"
        )
    state = dict(state)
    w, b = state["action_net.extra_logits.weight"], state["action_net.extra_logits.bias"]
    if w.shape[0] != 1:
        raise ValueError(
            f"init_from: the starting model has {w.shape[0] - 1} wait actions already; "
            "env.wait_actions can only be added to a model with none"
        )
    state["action_net.extra_logits.weight"] = w.repeat(1 + waits, 1)
    state["action_net.extra_logits.bias"] = b.repeat(1 + waits) - math.log(1 + waits)
    return state  # load_state_dict copies the tensors: the source's are never written


def _dotted(obj, key: str):
    for part in key.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part)
    return obj


def _fresh_run_dir(logdir: Path, name: str) -> Path:
    """``logdir/name``, or ``name-2``, ``name-3``... when that folder already holds a run:
    a new run never mixes its checkpoints and event files with an old one's."""
    run = logdir / name
    k = 2
    while (run / "model.zip").exists() or (run / "checkpoints").exists():
        run = logdir / f"{name}-{k}"
        k += 1
    return run


def no_episode_note(
    steps: int, cfg: TrainConfig, metrics: MRMetricsCallback, held_out: HeldOutEvalCallback
) -> str:
    """Why a short run's TensorBoard has no ``mr/`` and ``rollout/`` tags, in one line."""
    parts = [f"the longest training episode ran {metrics.longest:,} steps and did not end"]
    if held_out.episode_steps:
        mean = sum(held_out.episode_steps) / len(held_out.episode_steps)
        parts.append(f"held-out episodes on {cfg.env.scenario} took ~{mean:,.0f} steps")
    return (
        f"note: no training episode finished in {steps:,} steps ({'; '.join(parts)}): the mr/ "
        "and rollout/ tags appear after the first episode ends; train longer (--steps) or "
        "cap episodes (env.max_sim_time_s) to see them"
    )


def find_config(model_path: str | Path) -> Path:
    p = Path(model_path).resolve()
    if not p.is_file():
        raise FileNotFoundError(f"model {model_path} does not exist (expected a model.zip)")
    for folder in (p.parent, p.parent.parent):
        if (folder / "config.yaml").exists():
            return folder / "config.yaml"
    raise FileNotFoundError(f"no config.yaml beside {model_path} (or one folder up)")


def read_saved_config(path: Path) -> TrainConfig:
    """The training config ``mrgym train`` saved at ``path``; a ``config.yaml`` that is not
    one (a user's own file beside a bare model) is a one-line error naming its path."""
    try:
        data = yaml.safe_load(path.read_text())
        env = data.get("env") if isinstance(data, dict) else None
        if isinstance(env, dict):
            # a run saved before MRCluster-v1 trained on v0's observation: keep it there
            env.setdefault("observation_version", 0)
        return TrainConfig.model_validate(data)
    except (ValidationError, yaml.YAMLError, AttributeError) as e:
        first = e.errors()[0] if isinstance(e, ValidationError) else {}
        key = ".".join(str(x) for x in first.get("loc", ()))
        raise ValueError(
            f"{path}: not a training config saved by mrgym train"
            f"{f' ({key}: ' + first['msg'] + ')' if key else ''}; move it away to load the "
            "model beside it as a bare SB3 zip"
        ) from None


def load_model(model_path: str | Path):
    """A saved model and the training config stored beside it."""
    zip_path = resolve_model_path(model_path)
    cfg = read_saved_config(find_config(zip_path))
    model = algorithm_class(cfg.algorithm).load(str(zip_path), device="cpu")
    return model, cfg


# label -> step count of every model loaded for evaluation in this process: compare's
# TensorBoard writer draws each model at its step and the baselines across that range
LOADED_STEPS: dict[str, int] = {}


class ModelFactory:
    """``evaluate``'s policy factory for a saved model: its env settings come along
    (``env_kwargs``), and each call binds a fresh ``ModelPolicy`` to them."""

    def __init__(self, model_path: str | Path, name: str | None = None):
        import mrgym

        self.path = str(model_path)
        self.policy = mrgym.ModelPolicy.load(model_path, name=name)
        self.model, self.name = self.policy.model, self.policy.name
        self.env_kwargs = self.policy.env_kwargs
        self.scenario = self.policy.scenario
        LOADED_STEPS[self.name] = int(self.model.num_timesteps)

    def __call__(self, env):
        return self.policy
