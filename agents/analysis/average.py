"""Checkpoint averaging: one model whose policy weights are the mean of several saved
models' (the checkpoints of one run, or runs started from one model).

After stochastic weight averaging (Izmailov et al., UAI 2018), which takes the uniform mean
of the weights one run visits late in training under a constant or cyclical learning rate;
for RL, Nikishin et al. (2018) report that it steadies the policy.  CHANGELOG.md says what
averaging a fine-tuning run's checkpoints gave on ``ila72`` (that run's learning rate
decayed to 0, so it is SWA's averaging, not its schedule).

The models must agree on the algorithm, the policy and its network, the observation's
meaning and the spaces (:func:`agents.train.config_differences`, the check ``init_from``
makes).  The average is written as a run folder, ``OUT/model.zip`` with the first model's
``config.yaml`` beside it, so that ``mrgym compare --models OUT`` and ``mrgym benchmark
--models OUT`` load it under the env settings it was trained with.  Its step count and
optimizer state are the first model's (SB3 saves them; they do not change how it plays)::

    python -m agents.analysis.average OUT RUN/checkpoints/model_25000_steps.zip RUN/checkpoints/...
"""

from __future__ import annotations

import argparse
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path

import torch
from stable_baselines3.common.base_class import BaseAlgorithm

from agents.train import (
    config_differences,
    find_config,
    load_model,
    read_saved_config,
    resolve_model_path,
)

RUN_FILES = ("config.yaml", "model.zip", "best_model.zip")  # what makes a folder a run's


def average_models(paths: Sequence[str | Path]) -> BaseAlgorithm:
    """The first model of ``paths`` with every floating-point tensor of its policy's
    ``state_dict`` replaced by the mean over all of them (integer buffers: the first's).
    A path may be a model .zip, a checkpoint, a run folder or a shipped short name."""
    if len(paths) < 2:
        raise ValueError(f"models: give at least 2 to average, got {len(paths)}")
    zips = [resolve_model_path(p) for p in paths]
    if len(set(zips)) < len(zips):
        raise ValueError("models: one is given twice (it would weigh double)")
    first = read_saved_config(find_config(zips[0]))
    for z in zips[1:]:
        differ = config_differences(first, read_saved_config(find_config(z)))
        if differ:
            raise ValueError(f"{z}: trained with other {', '.join(differ)} than {zips[0]}")
    models = []
    for z in zips:
        try:
            models.append(load_model(z)[0])
        except (zipfile.BadZipFile, KeyError) as e:
            raise ValueError(f"{z}: not a model saved by Stable-Baselines3 ({e})") from None
    for z, m in zip(zips[1:], models[1:]):
        for space in ("observation_space", "action_space"):
            if getattr(m, space) != getattr(models[0], space):
                raise ValueError(f"{z}: its {space} differs from {zips[0]}'s")
    states = [m.policy.state_dict() for m in models]
    mean: dict[str, torch.Tensor] = {}
    for k, v in states[0].items():
        if v.is_floating_point():  # summed in float64: no precision lost over many models
            v = torch.stack([sd[k].double() for sd in states]).mean(0).to(v.dtype)
        mean[k] = v
    models[0].policy.load_state_dict(mean)
    return models[0]


def write_average(out: str | Path, paths: Sequence[str | Path]) -> Path:
    """Average ``paths`` into ``out/model.zip``, the first one's config beside it; ``out``
    must not hold a run already (its model would be replaced)."""
    out = Path(out)
    taken = [f for f in RUN_FILES if (out / f).exists()]
    if taken:
        raise ValueError(f"out: {out} already holds {', '.join(taken)}; name a new folder")
    model = average_models(paths)
    config = find_config(resolve_model_path(paths[0]))
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(config, out / "config.yaml")
    model.save(out / "model.zip")
    return out / "model.zip"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m agents.analysis.average",
        description="Average the policy weights of saved models of one run.",
    )
    ap.add_argument("out", help="a new folder for model.zip and config.yaml")
    ap.add_argument("models", nargs="+", help="saved models: .zip files, run folders or names")
    args = ap.parse_args(argv)
    try:
        print(write_average(args.out, args.models))
    except (ValueError, OSError) as e:
        raise SystemExit(f"error: {e}") from None


if __name__ == "__main__":
    main()
