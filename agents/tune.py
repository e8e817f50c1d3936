"""Hyper-parameter search for the SB3 / sb3-contrib agents: Ray Tune trials, an Optuna
search and ASHA early stopping on the held-out mean JCT (``mrgym tune``).

A trial is :func:`agents.train`'s training with one CPU (``n_envs = 1``, one torch
thread) and the sampled hyper-parameters, cut into ``rungs`` equal parts; after each part
the model runs the config's held-out seeds (``eval.seeds``, through the same
:class:`agents.callbacks.HeldOutEvalCallback` as training) and reports their mean JCT.
ASHA (asynchronous successive halving, Li et al. 2020) stops the worse half of the
trials at each rung; Optuna's TPE sampler (seeded with the config's ``seed``) proposes the
next trial from the finished ones.  Each trial writes its own TensorBoard folder
(``TRIAL/tb``: SB3's ``train/``, ``mr/`` and ``mr_eval/`` tags), and the best trial's
hyper-parameters are written back into the config as ``OUT/best.yaml``, loadable by
``mrgym train --config``.

The search space per algorithm is :data:`SPACES`: the constructor arguments that matter
most for these algorithms, in ranges around SB3's defaults and the bundled configs'
values.  Rollout lengths (``n_steps``) longer than a rung's budget are left out, so that
a tiny budget still trains in every rung.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from agents.config import TrainConfig

if TYPE_CHECKING:  # pragma: no cover
    from ray.tune import Result, ResultGrid

METRIC = "mean_jct"  # seconds, lower is better
NO_JOB_DONE = 1e12  # reported when no held-out job finished (NaN would fail the trial)

_GAMMA = ("uniform", 0.99, 0.9999)
_PPO = {
    "learning_rate": ("loguniform", 1e-5, 1e-3),
    "gamma": _GAMMA,
    "ent_coef": ("loguniform", 1e-4, 5e-2),
    "clip_range": ("uniform", 0.1, 0.3),
    "n_steps": ("choice", [64, 128, 256, 512, 1024, 2048]),
}
SPACES: dict[str, dict[str, tuple]] = {
    "maskable_ppo": _PPO,
    "ppo": _PPO,
    "a2c": {
        "learning_rate": ("loguniform", 1e-5, 3e-3),
        "gamma": _GAMMA,
        "ent_coef": ("loguniform", 1e-4, 5e-2),
        "n_steps": ("choice", [5, 16, 64, 256]),
    },
    "dqn": {
        "learning_rate": ("loguniform", 1e-5, 1e-3),
        "gamma": _GAMMA,
        "exploration_fraction": ("uniform", 0.05, 0.5),
        "learning_starts": ("choice", [0, 1000, 5000]),
    },
}


def search_space(algorithm: str, rung_steps: int) -> dict[str, Any]:
    """:data:`SPACES` of ``algorithm`` as Ray Tune domains; step-count choices above the
    rung's budget are dropped (the smallest is always kept)."""
    from ray import tune

    out: dict[str, Any] = {}
    for name, (kind, *args) in SPACES[algorithm].items():
        if kind == "choice":
            opts = [v for v in args[0] if v <= rung_steps] or [min(args[0])]
            out[name] = tune.choice(opts)
        else:
            out[name] = getattr(tune, kind)(*args)
    return out


def trial_config(
    base: TrainConfig, params: dict[str, Any], n_envs: int | None = None
) -> TrainConfig:
    """``base`` with the sampled hyper-parameters; ``n_envs`` (a trial: 1) changes the
    environment count, and PPO's ``batch_size`` shrinks to the rollout when it is longer."""
    hp = {**base.hyperparameters, **params}
    envs = n_envs or base.n_envs
    if "n_steps" in hp and "batch_size" in hp and base.algorithm in ("ppo", "maskable_ppo"):
        hp["batch_size"] = min(int(hp["batch_size"]), int(hp["n_steps"]) * envs)
    return base.model_copy(update={"hyperparameters": hp, "n_envs": envs})


def rung_budgets(steps: int, rungs: int) -> list[int]:
    """``steps`` cut into ``rungs`` parts (the first ones one step longer when it does not
    divide)."""
    q, r = divmod(steps, rungs)
    return [q + (i < r) for i in range(rungs) if q + (i < r) > 0]


def run_trial(params: dict[str, Any], base: dict[str, Any], steps: int, rungs: int) -> None:
    """One Ray Tune trial (module level: Ray imports it by name on its workers)."""
    import gymnasium as gym
    import torch
    from ray import tune

    from agents.callbacks import HeldOutEvalCallback, MRMetricsCallback
    from agents.config import algorithm_class
    from agents.extractors import resolve_policy
    from agents.train import ENV_ID, env_kwargs, make_vec, seed_everything

    cfg = trial_config(TrainConfig.model_validate(base), params, n_envs=1)
    tb = Path(tune.get_context().get_trial_dir()) / "tb"
    seed_everything(cfg.seed)
    torch.set_num_threads(1)  # one CPU per trial
    venv = make_vec(cfg)
    policy, hp = resolve_policy(cfg.policy, cfg.hyperparameters, cfg.env.critic_inputs)
    model = algorithm_class(cfg.algorithm)(
        policy, venv, seed=cfg.seed, device="cpu", verbose=0, tensorboard_log=str(tb), **hp
    )
    if cfg.pretrain is not None:  # every trial starts from the same expert's clone
        from agents.train import _warm_start

        _warm_start(model, cfg)
    held_out = HeldOutEvalCallback(
        lambda: gym.make(ENV_ID, **env_kwargs(cfg)), cfg.eval.seeds, every_steps=10**12
    )
    try:
        for i, n in enumerate(rung_budgets(steps, rungs)):
            # the held-out evaluation runs at the end of each part (_on_training_end)
            model.learn(
                n,
                callback=[MRMetricsCallback(), held_out],
                reset_num_timesteps=i == 0,
                tb_log_name="trial",
            )
            jct = held_out.history[-1][1]
            jct = NO_JOB_DONE if math.isnan(jct) else jct
            tune.report({METRIC: jct, "steps": int(model.num_timesteps)})
    finally:
        venv.close()


@dataclass
class TuneOutcome:
    folder: Path  # OUT: trials/ (Ray Tune's), trials.csv, best.yaml
    best_yaml: Path
    best: dict[str, Any]  # the best trial's hyper-parameters
    best_jct: float
    trials: int


def _fresh(out: Path, name: str) -> Path:
    d, k = out / f"tune-{name}", 2
    while d.exists():
        d, k = out / f"tune-{name}-{k}", k + 1
    return d


def _check_tunable(cfg: TrainConfig, samples: int, rungs: int) -> None:
    """Refuse counts below 1 and the settings trials cannot apply: they build their models
    themselves and learn in rungs."""
    if samples < 1 or rungs < 1:
        raise ValueError(f"tune: --samples {samples} and --rungs {rungs} must be >= 1")
    for key, value, plain in (
        ("discount_per", cfg.discount_per, "decision"),
        ("lr_schedule", cfg.lr_schedule, "constant"),
        ("env.hooks", cfg.env.hooks, None),
        ("init_from", cfg.init_from, None),
    ):
        if value != plain:
            fix = f"tune with {key}: {plain!r}" if plain else f"tune without {key}"
            raise ValueError(
                f"tune: {key}: {value!r} is not supported by trials (they learn in rungs); {fix}"
            )


def _fit(
    cfg: TrainConfig,
    folder: Path,
    samples: int,
    steps: int,
    rungs: int,
    workers: int | None,
    address: str | None,
    progress: bool,
) -> ResultGrid:
    """Run the trials under Ray Tune (Optuna's search, ASHA's early stopping over the
    rungs) into ``folder/trials``; returns Ray's ResultGrid."""
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.optuna import OptunaSearch

    from mrgym.sweep import default_workers, ray_session

    trainable = tune.with_resources(
        tune.with_parameters(run_trial, base=cfg.model_dump(), steps=steps, rungs=rungs),
        {"cpu": 1},
    )
    local_cpus = workers or default_workers()
    with ray_session(address, num_cpus=local_cpus):
        tuner = tune.Tuner(
            trainable,
            param_space=search_space(cfg.algorithm, max(rung_budgets(steps, rungs))),
            tune_config=tune.TuneConfig(
                metric=METRIC,
                mode="min",
                search_alg=OptunaSearch(seed=cfg.seed),
                scheduler=ASHAScheduler(max_t=rungs, grace_period=1, reduction_factor=2),
                num_samples=samples,
                max_concurrent_trials=workers,
            ),
            run_config=tune.RunConfig(
                name="trials",
                storage_path=str(folder),
                verbose=0,
                callbacks=[_lines()] if progress else [],
            ),
        )
        return tuner.fit()


def _best_result(grid: ResultGrid) -> Result:
    """The best among the trials that reached the last rung (ASHA's survivors): an early
    stopped trial's number is at a smaller budget and not comparable.  No finished trial
    is a ``RuntimeError`` with the first errors."""
    done = [r for r in grid if r.error is None and r.metrics and METRIC in r.metrics]
    if not done:
        errors = "; ".join(str(r.error).splitlines()[0] for r in grid if r.error)[:300]
        raise RuntimeError(f"tune: no trial finished ({errors or 'no results'})")
    top = max(r.metrics["training_iteration"] for r in done)
    return min(
        (r for r in done if r.metrics["training_iteration"] == top),
        key=lambda r: r.metrics[METRIC],
    )


def tune_agent(
    cfg: TrainConfig,
    samples: int,
    steps: int | None = None,
    rungs: int = 4,
    workers: int | None = None,
    address: str | None = None,
    out: str | Path = "runs",
    progress: bool = True,
) -> TuneOutcome:
    """Run ``samples`` trials of ``steps`` (default ``cfg.total_steps``) environment steps
    each, at most ``workers`` at a time (default: every CPU of the local Ray, or the
    cluster's at ``address``); returns where the results are."""
    _check_tunable(cfg, samples, rungs)
    steps = steps or cfg.total_steps
    rungs = min(rungs, steps)
    scenario = Path(cfg.env.scenario)
    if scenario.is_file():  # trials run in their own folders: a relative path would break
        cfg = cfg.model_copy(
            update={"env": cfg.env.model_copy(update={"scenario": str(scenario.resolve())})}
        )
    folder = _fresh(Path(out), cfg.name).resolve()
    folder.mkdir(parents=True)
    grid = _fit(cfg, folder, samples, steps, rungs, workers, address, progress)
    best = _best_result(grid)
    params = {k: _plain(v) for k, v in best.config.items()}
    tuned = trial_config(cfg, params).model_copy(update={"name": f"{cfg.name}-tuned"})
    best_yaml = folder / "best.yaml"
    jct = float(best.metrics[METRIC])
    head = (
        f"# {cfg.name} tuned by `mrgym tune`: {len(grid)} trials of {steps} steps, "
        f"best held-out mean JCT {jct:.1f} s on seeds {cfg.eval.seeds}\n"
    )
    best_yaml.write_text(head + yaml.safe_dump(tuned.model_dump(), sort_keys=False))
    df = grid.get_dataframe()
    df.to_csv(folder / "trials.csv", index=False)
    return TuneOutcome(folder, best_yaml, params, jct, len(grid))


def _plain(v: Any) -> Any:
    """numpy scalars (Optuna's choices) as Python values, for the YAML."""
    return v.item() if hasattr(v, "item") else v


def _lines():
    from ray import tune

    class Lines(tune.Callback):
        """One stderr line per rung result: trial, step count, held-out mean JCT."""

        def on_trial_result(self, iteration, trials, trial, result, **info):
            print(
                f"tune: {trial.trial_id} rung {result['training_iteration']}: "
                f"{result.get('steps', '?')} steps, held-out mean JCT "
                f"{result.get(METRIC, float('nan')):.1f} s",
                file=sys.stderr,
                flush=True,
            )

    return Lines()
