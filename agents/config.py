"""Training configuration: one typed, validated YAML per run (``configs/train/*.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.pretrain import PretrainConfig
from mrgym.envs.actions import MAX_JOB_SLOTS, MAX_WAIT_ACTIONS
from mrgym.suggest import did_you_mean

ALGORITHMS = ("maskable_ppo", "ppo", "a2c", "dqn")
# the policies whose actors never read env.critic_inputs' features (the value may)
CRITIC_INPUT_POLICIES = ("CriticInputsPolicy", "JobSetPolicy")


def algorithm_class(name: str):
    """The SB3 / sb3-contrib class of an ``ALGORITHMS`` name (imported on first use)."""
    if name == "maskable_ppo":
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    import stable_baselines3 as sb3

    return {"ppo": sb3.PPO, "a2c": sb3.A2C, "dqn": sb3.DQN}[name]


class TrainConfigError(ValueError):
    pass


# constructor arguments that train() passes itself (the rollout buffer: discount_per), or
# that YAML cannot give (a class): not for hyperparameters
_SET_BY_TRAIN = frozenset(
    {"policy", "env", "seed", "device", "verbose", "tensorboard_log"}
    | {"rollout_buffer_class", "replay_buffer_class"}
)


def algorithm_parameters(name: str) -> list[str] | None:
    """The keys ``hyperparameters:`` may set for an ``ALGORITHMS`` name: its constructor's
    arguments but those train() passes itself (None when the RL extra is not installed:
    ``mrgym train`` says so before it reads a config)."""
    import inspect

    try:
        cls = algorithm_class(name)
    except ImportError:
        return None
    params = inspect.signature(cls).parameters
    return sorted(k for k in params if k not in _SET_BY_TRAIN and not k.startswith("_"))


class EnvConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scenario: str = "ila72"
    overrides: dict[str, Any] | None = None
    job_slots: int = Field(8, ge=1, le=MAX_JOB_SLOTS)
    # the environment's defaults (see MRClusterEnv's "Arguments"): they train well
    queue_order: Literal["arrival", "deficit", "remaining"] = "remaining"
    reward_weights: dict[str, float] = {"jct": 1.0}
    speculation: bool = False
    # True: never idle a slot that has work; "cluster": idle slots, never the whole cluster
    work_conserving: bool | str = True

    @field_validator("work_conserving", mode="before")
    @classmethod
    def _check_work_conserving(cls, v: Any) -> Any:
        if isinstance(v, bool) or v == "cluster":
            return v
        raise ValueError(f"expected true, false or 'cluster', got {v!r}")

    max_sim_time_s: float | None = Field(None, gt=0)
    # the workload still to arrive appended to the observation for the critic only (an
    # input-dependent baseline, agents/critic_inputs.py): needs policy CriticInputsPolicy
    # (the MLP) or JobSetPolicy (the set policy)
    critic_inputs: bool = False
    # domain randomization (agents/randomize.py): each training episode draws a variant of
    # the scenario (cluster size, interference, background traffic, arrival rate); the
    # held-out evaluation stays on the scenario itself.  {} takes the default ranges.
    randomize: dict[str, Any] | None = None
    # Decima's training episodes (agents/continuous.py): a workload of continuous.n_jobs
    # jobs, each episode cut at a random time, and the differential reward; the held-out
    # evaluation stays on the scenario itself
    continuous: dict[str, Any] | None = None
    # a registered scheduler whose environment hooks (place_job, control) run inside the
    # environment while the agent picks the tasks (agents/env_hooks.py), e.g. hybridmr: its
    # phase I placement and phase II VM management around the agent; None: no hooks
    hooks: str | None = None
    # with hooks: the slots the hooks' scheduler gates (Scheduler.gate; HybridMR: a killed
    # task's relaunch Algorithm 3 reserved, no task under SLA pressure, on a paused VM or a
    # thrashing disk) are answered without the agent, which picks the task everywhere else
    hooks_gate: bool = False
    # 1: MRCluster-v1's observation, computed only from what the master knows at that
    # moment; 0: MRCluster-v0's, which reads episode totals and hidden profile numbers
    observation_version: Literal[0, 1] = 1
    # W extra actions after decline: wait w (1..W) declines and also the next w asks of the
    # VM's slot kind (MRClusterEnv's wait_actions): one decision for several heartbeats
    wait_actions: int = Field(0, ge=0, le=MAX_WAIT_ACTIONS)
    # a registered scheduler: each training episode's slowdown reward divided by its mean
    # squared slowdown on the episode's workload (agents/episode_scale.py), so that every
    # workload weighs the same, as in the fairness track's paired per-seed change; None:
    # the reward as it is.  Evaluations run the environment unscaled
    slowdown_scale_by: str | None = None

    @field_validator("hooks")
    @classmethod
    def _check_hooks(cls, v: str | None) -> str | None:
        from agents.env_hooks import check_hooks

        return check_hooks(v)

    @field_validator("randomize")
    @classmethod
    def _check_randomize(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is not None:
            from agents.randomize import RandomizationSpec

            RandomizationSpec.from_dict(v)  # a ValueError names randomize.KEY
        return v

    @field_validator("continuous")
    @classmethod
    def _check_continuous(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is not None:
            from agents.continuous import ContinuousSpec

            ContinuousSpec.from_dict(v)  # a ValueError names continuous.KEY
        return v

    @model_validator(mode="after")
    def _a_gate_needs_hooks(self) -> EnvConfig:
        if self.continuous is not None and self.randomize is not None:
            raise ValueError(
                "env.continuous and env.randomize: give one (each rebuilds the training "
                "episodes' workload its own way)"
            )
        if self.continuous is not None:  # refused here, before a run folder is made
            from agents.continuous import ContinuousSpec

            ContinuousSpec.from_dict(self.continuous).overrides(self.scenario, self.overrides)
        if self.slowdown_scale_by is not None:
            from agents.episode_scale import check_scale

            check_scale(self.slowdown_scale_by, self.reward_weights)
            if self.continuous is not None or self.randomize is not None:
                raise ValueError(
                    "env.slowdown_scale_by: runs the scheduler on the scenario's own "
                    "episodes; drop env.continuous and env.randomize"
                )
        if self.hooks_gate and self.hooks is None:
            raise ValueError(
                "env.hooks_gate: true needs env.hooks (a scheduler whose gate answers slots), "
                "got no env.hooks"
            )
        if self.hooks_gate:
            from agents.env_hooks import check_gate

            check_gate(self.hooks)
        return self


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seeds: list[int] = [2000, 2001, 2002]  # the first of the benchmark's validation seeds
    every_steps: int = Field(50_000, ge=1)
    # decisions per evaluation episode before it is cut (and then never the best model):
    # a policy that holds slots back can need far more decisions than Fair's ~2 700
    max_steps: int = Field(200_000, ge=1)
    # how the policy picks its action in evaluations, and in compare's runs of the saved
    # model (mrgym.policy.DECODES): "launch-first" declines only when declining (decline
    # and any waits) holds half of the probability; "sample" draws from the policy, seeded
    # by the episode's seed
    decode: Literal["argmax", "launch-first", "sample"] = "argmax"
    # "sample" draws from the probabilities to the power 1/temperature, renormalised: below
    # 1 the likely actions more often (towards argmax as it nears 0); 1 with other decodes
    temperature: float = Field(1.0, gt=0, allow_inf_nan=False)
    # with env.hooks: while fewer than this many jobs are active, the decision is that
    # scheduler's (its closest action) instead of the model's, in every run of the saved
    # model (compare, benchmark, pick; not the in-training evaluations); None: the model
    # makes every decision
    defer_below: int | None = Field(None, ge=1)
    # a constraint on the pick: best_model.zip only from evaluations whose p95 JCT (mean
    # over the seeds) is no worse than this registered scheduler's on the same seeds, so
    # the pick cannot buy mean JCT with a starved tail; None: no constraint
    p95_no_worse_than: str | None = None
    # worker processes for the evaluation's episodes (one seed each at a time): the same
    # numbers as 1 (the serial loop), sooner on a machine with cores to spare
    workers: int = Field(1, ge=1)

    @field_validator("p95_no_worse_than")
    @classmethod
    def _known_scheduler(cls, v: str | None) -> str | None:
        from mrgym import registry

        if v is not None and v not in registry.available():
            raise ValueError(f"unknown scheduler {v!r}; expected one of {registry.available()}")
        return v

    @model_validator(mode="after")
    def _temperature_samples(self) -> EvalConfig:
        from agents.sampling import check_temperature

        check_temperature(self.temperature, self.decode)
        return self


class TrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "run"
    algorithm: Literal["maskable_ppo", "ppo", "a2c", "dqn"] = "maskable_ppo"
    env: EnvConfig = EnvConfig()
    n_envs: int = Field(2, ge=1)
    # how n_envs > 1 environments step: "subproc", a worker process each (SB3's
    # SubprocVecEnv, for machines with cores to spare), or "dummy", all in this process
    # (DummyVecEnv), where each step's forward pass is batched over the envs: on 2 cores
    # the per-call cost of the small network's forward pass, not the simulator, is most of
    # a one-env step (docs/performance.md, "Training")
    vec_env: Literal["subproc", "dummy"] = "subproc"
    seed: int = 0
    total_steps: int = Field(200_000, ge=1)
    policy: str = "MlpPolicy"
    hyperparameters: dict[str, Any] = {}
    # what hyperparameters.gamma discounts: each decision (SB3's default) or each simulated
    # second (agents/time_discount.py: the discount between decisions is gamma ** dt)
    discount_per: Literal["decision", "second"] = "decision"
    # what hyperparameters.gae_lambda decays over: each decision (SB3's default) or each
    # simulated second (needs discount_per: second; agents/time_discount.py says why)
    lambda_per: Literal["decision", "second"] = "decision"
    # hyperparameters.learning_rate held for the whole run, or decayed linearly to 0 at
    # total_steps (SB3's LinearSchedule): late updates get small, so late checkpoints settle
    lr_schedule: Literal["constant", "linear"] = "constant"
    checkpoint_every_steps: int = Field(50_000, ge=1)
    # torch intra-op threads: a small MLP trains faster on one thread, and the env
    # workers need the other cores
    torch_threads: int = Field(1, ge=1)
    eval: EvalConfig = EvalConfig()
    # behaviour cloning of a baseline before RL (agents/pretrain.py); None: start at random
    pretrain: PretrainConfig | None = None
    # fine-tuning: start from another trained model's policy weights (a shipped model's
    # short name, a .zip such as a run's best_model.zip, or a run folder for its model.zip;
    # "{seed}" becomes this config's seed, so that one config fine-tunes each seed's own
    # model). Its algorithm, policy and env must be this config's; the optimizer, step
    # count and learning-rate schedule start afresh.
    init_from: str | None = Field(None, min_length=1)
    # false: the value head's output layer starts at zero instead of the source's, for a
    # fine-tuning whose reward means something else (env.continuous.differential: returns
    # around 0, where the source's are large and negative: Adam's small steps at a
    # fine-tuning rate would take long to move them, through the extractor the actor shares)
    init_value: bool = True

    def init_model(self) -> str | None:
        """``init_from`` with ``{seed}`` replaced by the seed."""
        return None if self.init_from is None else self.init_from.replace("{seed}", str(self.seed))

    @model_validator(mode="after")
    def _known_hyperparameters(self) -> TrainConfig:
        # checked here, before any environment is built: the algorithm's constructor would
        # only say "unexpected keyword argument" at the end of a long traceback
        known = algorithm_parameters(self.algorithm) if self.hyperparameters else None
        for key in self.hyperparameters if known is not None else ():
            if key not in known:
                raise ValueError(
                    f"hyperparameters.{key}: unknown key{did_you_mean(key, known)} "
                    f"({self.algorithm} takes {', '.join(known)})"
                )
        return self

    @model_validator(mode="after")
    def _defer_needs_hooks(self) -> TrainConfig:
        if self.eval.defer_below is not None and self.env.hooks is None:
            raise ValueError(
                f"eval.defer_below: {self.eval.defer_below} defers to env.hooks' scheduler, "
                "but env.hooks is not set; set it (e.g. ila-gate+srpt) or drop eval.defer_below"
            )
        return self

    @model_validator(mode="after")
    def _time_discount_needs_maskable_ppo(self) -> TrainConfig:
        if self.discount_per == "second" and self.algorithm != "maskable_ppo":
            raise ValueError(
                f"discount_per: 'second' needs algorithm maskable_ppo (its rollout buffer "
                f"takes the simulated time), got algorithm {self.algorithm}"
            )
        if self.lambda_per == "second" and self.discount_per != "second":
            raise ValueError(
                "lambda_per: 'second' needs discount_per: 'second' (the same buffer takes "
                f"the simulated time), got discount_per: {self.discount_per!r}"
            )
        return self

    @model_validator(mode="after")
    def _critic_inputs_need_their_policy(self) -> TrainConfig:
        # any other policy's actor would act on the future workload; CriticInputsPolicy's
        # actor expects the features to be there; JobSetPolicy's actor never reads them and
        # its value does (extractors.resolve_policy passes it critic_inputs)
        if self.env.critic_inputs and self.policy not in CRITIC_INPUT_POLICIES:
            raise ValueError(
                f"env.critic_inputs: true needs policy {' or '.join(CRITIC_INPUT_POLICIES)} "
                f"(their actors never see those features), got policy {self.policy}"
            )
        if self.policy == "CriticInputsPolicy" and not self.env.critic_inputs:
            raise ValueError("policy: CriticInputsPolicy needs env.critic_inputs: true, got false")
        if self.env.critic_inputs and self.algorithm != "maskable_ppo":
            raise ValueError(
                f"env.critic_inputs: needs algorithm maskable_ppo, got {self.algorithm}"
            )
        return self

    @model_validator(mode="after")
    def _init_value_needs_init_from(self) -> TrainConfig:
        if not self.init_value and self.init_from is None:
            raise ValueError(
                "init_value: false zeroes the value head copied by init_from, but init_from "
                "is not set (give init_from, or leave init_value at true)"
            )
        return self

    @model_validator(mode="after")
    def _one_starting_point(self) -> TrainConfig:
        if self.init_from is not None and self.pretrain is not None:
            raise ValueError(
                f"init_from: {self.init_from!r} starts from a trained model and pretrain "
                f"clones {self.pretrain.expert!r} into a fresh one; set one of them, not both"
            )
        return self

    @model_validator(mode="after")
    def _pretrain_needs_a_policy_gradient(self) -> TrainConfig:
        if self.pretrain is not None and self.algorithm == "dqn":
            raise ValueError(
                "pretrain: behaviour cloning needs an actor-critic algorithm "
                "(maskable_ppo, ppo or a2c), got algorithm dqn"
            )
        return self

    @model_validator(mode="after")
    def _an_expert_with_hooks_needs_them_in_the_env(self) -> TrainConfig:
        # its decisions presume its own placement and control (agents/env_hooks.py)
        expert = self.pretrain.expert if self.pretrain is not None else None
        if expert is not None and expert != self.env.hooks:
            from agents.env_hooks import has_hooks
            from mrgym import registry

            if expert in registry.available() and has_hooks(registry.make(expert)):
                raise ValueError(
                    f"pretrain.expert: {expert!r} acts through environment hooks "
                    f"(place_job/control), but env.hooks is {self.env.hooks!r}; set env.hooks: "
                    f"{expert}, or clone a scheduler without hooks, e.g. fair"
                )
        return self


def train_config_dir() -> Path:
    """The bundled recipes: ``configs/train/`` (the shipped models' recipes and the starting
    points), with the recipes tried and not shipped in its ``tried/`` folder."""
    from mrgym.config import CONFIG_DIR

    return CONFIG_DIR / "train"


def bundled_recipes() -> list[str]:
    """The names ``mrgym train --config NAME`` finds without a path (the top-level ones)."""
    return sorted(p.stem for p in train_config_dir().glob("*.yaml"))


def recipe_path(path: str | Path) -> Path:
    """``path`` itself when it exists; else the bundled recipe it names relative to
    ``configs/train/`` (``NAME``, ``NAME.yaml`` or ``tried/NAME``), so that a recipe is found
    from any folder and in an installed wheel.  A bare name that is neither is a
    :class:`TrainConfigError` naming the recipes."""
    p = Path(path)
    if p.exists() or p.is_absolute():
        return p
    bundled = train_config_dir() / p
    bundled = bundled if bundled.suffix == ".yaml" else bundled.with_name(bundled.name + ".yaml")
    if bundled.is_file():
        return bundled
    if len(p.parts) == 1:  # a name, not a path: say which names there are
        names = bundled_recipes()
        raise TrainConfigError(
            f"training config {str(path)!r}: no such file or bundled recipe"
            f"{did_you_mean(p.stem, names)} (bundled: {', '.join(names)}; tried/NAME for "
            "configs/train/tried/)"
        )
    return p


def load_train_config(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Read and validate a training config (a file, or a bundled recipe's name:
    :func:`recipe_path`); every problem is one line naming the file."""
    from mrgym.config import ScenarioError, read_yaml_file, short

    p = recipe_path(path)
    try:  # the scenario reader's checks: size, UTF-8, safe tags, duplicate keys, a mapping
        data = read_yaml_file(p, p.name if p.is_file() else short(str(path)), "training config")
    except ScenarioError as e:
        raise TrainConfigError(str(e)) from None
    data.setdefault("name", p.stem)
    data.update(overrides or {})
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        if err["type"] == "value_error":  # our validators' messages say what they got
            msg = msg.removeprefix("Value error, ")
            raise TrainConfigError(f"{p.name}: {key + ': ' if key else ''}{msg}") from None
        raise TrainConfigError(f"{p.name}: {key}: {msg}, got {short(err.get('input'))}") from None


def seed_groups(configs: dict[str, TrainConfig]) -> dict[str, str]:
    """Models trained alike from different seeds: label -> group name.

    A group is the models whose configs are equal apart from ``seed`` and ``name`` and
    whose labels carry the same ``@`` tag kind (``@best``, a checkpoint step), with one
    model per seed (a second model of a seed -- a rerun ``NAME-2`` -- starts no group of
    its own and is left out); a group of one is left out.  Its name is the first label
    without its ``@`` tag and a trailing ``-sN`` / ``_seedN`` (``-sN-K`` for reruns), plus
    the tag kind; names that would clash get `` #2``, `` #3``..."""
    import json
    import re

    def tag(label: str) -> str:
        at = label.partition("@")[2]
        return "@best" if at.startswith("best") else (f"@{at}" if at else "")

    by: dict[str, dict[int, str]] = {}
    for label, cfg in configs.items():
        key = json.dumps(
            [cfg.model_dump(exclude={"seed", "name"}), tag(label)], sort_keys=True, default=str
        )
        by.setdefault(key, {}).setdefault(cfg.seed, label)  # first model of each seed
    out: dict[str, str] = {}
    used: set[str] = set()
    for members in by.values():
        if len(members) < 2:
            continue
        labels = list(members.values())
        base = re.sub(r"[-_](s|seed)\d+(-\d+)?$", "", labels[0].partition("@")[0])
        name = base + tag(labels[0])
        k = 2
        while name in used:
            name = f"{base}{tag(labels[0])} #{k}"
            k += 1
        used.add(name)
        for lab in labels:
            out[lab] = name
    return out
