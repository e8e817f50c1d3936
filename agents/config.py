"""Training configuration: one typed, validated YAML per run (``configs/train/*.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.pretrain import PretrainConfig
from mrgym.envs.actions import MAX_JOB_SLOTS

ALGORITHMS = ("maskable_ppo", "ppo", "a2c", "dqn")


class TrainConfigError(ValueError):
    pass


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
    work_conserving: bool | Literal["cluster"] = True
    max_sim_time_s: float | None = Field(None, gt=0)
    # domain randomization (agents/randomize.py): each training episode draws a variant of
    # the scenario (cluster size, interference, background traffic, arrival rate); the
    # held-out evaluation stays on the scenario itself.  {} takes the default ranges.
    randomize: dict[str, Any] | None = None

    @field_validator("randomize")
    @classmethod
    def _check_randomize(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is not None:
            from agents.randomize import RandomizationSpec

            RandomizationSpec.from_dict(v)  # a ValueError names randomize.KEY
        return v


class EvalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seeds: list[int] = [1000, 1001, 1002]
    every_steps: int = Field(50_000, ge=1)


class TrainConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "run"
    algorithm: Literal["maskable_ppo", "ppo", "a2c", "dqn"] = "maskable_ppo"
    env: EnvConfig = EnvConfig()
    n_envs: int = Field(2, ge=1)
    seed: int = 0
    total_steps: int = Field(200_000, ge=1)
    policy: str = "MlpPolicy"
    hyperparameters: dict[str, Any] = {}
    checkpoint_every_steps: int = Field(50_000, ge=1)
    # torch intra-op threads: a small MLP trains faster on one thread, and the env
    # workers need the other cores
    torch_threads: int = Field(1, ge=1)
    eval: EvalConfig = EvalConfig()
    # behaviour cloning of a baseline before RL (agents/pretrain.py); None: start at random
    pretrain: PretrainConfig | None = None


def load_train_config(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """Read and validate a training config; every problem is one line naming the file."""
    from mrgym.config import ScenarioError, read_yaml_file, short

    p = Path(path)
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
        raise TrainConfigError(f"{p.name}: {key}: {msg}, got {short(err.get('input'))}") from None


def seed_groups(configs: dict[str, TrainConfig]) -> dict[str, str]:
    """Models trained alike from different seeds: label -> group name, for the models whose
    configs are equal apart from ``seed`` and ``name`` and that have company (a group of
    one is left out).  The group's name is the run names' longest common prefix, without
    a trailing ``-``, ``_`` or ``seed``/``s`` marker, else the first label."""
    import json
    import os
    import re

    by: dict[str, list[str]] = {}
    for label, cfg in configs.items():
        key = json.dumps(cfg.model_dump(exclude={"seed", "name"}), sort_keys=True, default=str)
        by.setdefault(key, []).append(label)
    out: dict[str, str] = {}
    for labels in by.values():
        if len(labels) < 2:
            continue
        name = re.sub(r"([-_.]?(seed|s))?[-_.]*$", "", os.path.commonprefix(labels))
        for lab in labels:
            out[lab] = name or labels[0]
    return out
