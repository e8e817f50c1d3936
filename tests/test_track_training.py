"""Training for the benchmark tracks: the track recipes train on their track's reward,
batched in-process environments (``vec_env: dummy``), argument checks off while training,
and the pick of a run's checkpoint by a track's metric on the validation seeds
(``agents.analysis.pick_track``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import tiny_train_config

from agents.analysis.pick_track import _ranked, candidates, main, pick
from agents.config import load_train_config, train_config_dir
from agents.train import make_vec, train, unchecked_distributions
from mrgym.benchmark.tracks import TRACKS

TRACK_RECIPES = sorted((train_config_dir() / "tracks").glob("*.yaml"))


def test_every_track_has_a_recipe_per_scenario_with_its_reward():
    by = {}
    for p in TRACK_RECIPES:
        cfg = load_train_config(p)
        # SCENARIO_TRACK.yaml, or SCENARIO_TRACK_VARIANT.yaml for a track's second recipe
        m = re.fullmatch(rf"(.+?)_({'|'.join(TRACKS)})(_[a-z0-9]+)?", p.stem)
        assert m is not None, p.name
        scenario, track = m.group(1), m.group(2)
        # the recipe trains on exactly the track's reward: the return estimates its metric
        assert dict(cfg.env.reward_weights) == dict(TRACKS[track].reward_weights), p.name
        assert cfg.n_envs * cfg.hyperparameters["n_steps"] == 2048, p.name
        if scenario == "ila72":  # the gate and the cap decline; the agent picks a launch
            assert cfg.env.work_conserving is True, p.name
        by.setdefault(scenario, set()).add(track)
    assert by == {"ila72": set(TRACKS), "lee_gpu": set(TRACKS)}


def _declines_offered(cfg, steps: int = 150) -> tuple[int, int]:
    """(asked steps with a launch legal, those of them where decline was legal too), the
    first legal launch taken each step."""
    import numpy as np

    venv = make_vec(cfg.model_copy(update={"n_envs": 1}))
    try:
        venv.reset()
        decline = venv.get_attr("codec")[0].decline  # the env's own decline action
        asked = offered = 0
        for _ in range(steps):
            mask = np.asarray(venv.env_method("action_masks")[0])
            launches = np.flatnonzero(mask[:decline])
            if len(launches):
                asked += 1
                offered += bool(mask[decline])
            venv.step([int(launches[0]) if len(launches) else decline])
        return asked, offered
    finally:
        venv.close()


def test_ila72_track_agents_launch_on_every_slot_the_gate_and_cap_leave():
    # the jct track's runs that could also decline drifted to starving jobs: in the
    # recipes HybridMR's gate and hostcap's cap decline, and the agent only picks a launch
    cfg = load_train_config(train_config_dir() / "tracks" / "ila72_jct.yaml")
    assert cfg.env.hooks == "hybridmr-gate+hostcap" and cfg.env.hooks_gate
    asked, offered = _declines_offered(cfg)
    assert asked > 100 and offered == 0
    env = cfg.env.model_copy(update={"work_conserving": "cluster"})
    asked, offered = _declines_offered(cfg.model_copy(update={"env": env}))
    assert asked > 100 and offered > asked // 2  # may idle whenever a task runs anywhere


def test_dummy_vec_env_keeps_the_envs_in_this_process():
    from stable_baselines3.common.vec_env import DummyVecEnv

    cfg = tiny_train_config("maskable_ppo", n_envs=3).model_copy(update={"vec_env": "dummy"})
    venv = make_vec(cfg)
    try:
        assert isinstance(venv, DummyVecEnv) and venv.num_envs == 3
    finally:
        venv.close()


def test_unchecked_distributions_restores_the_checks():
    from torch.distributions import Categorical, Distribution

    was = Distribution._validate_args
    bad = torch.tensor([0.5, float("nan")])
    with unchecked_distributions():
        assert Distribution._validate_args is False
        Categorical(probs=bad)  # unchecked: no error
    assert Distribution._validate_args is was
    Distribution.set_default_validate_args(True)
    try:
        with pytest.raises(ValueError):
            Categorical(probs=bad)
    finally:
        Distribution.set_default_validate_args(was)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny run whose evaluation plays the first validation seed, with two checkpoints."""
    data = tiny_train_config("maskable_ppo", steps=256).model_dump()
    data["eval"] = {"seeds": [2000], "every_steps": 10_000}
    cfg = type(tiny_train_config("maskable_ppo")).model_validate(data)
    return train(cfg, logdir=tmp_path_factory.mktemp("pick"), progress=False)


def test_the_pick_is_the_candidate_with_the_lowest_track_metric(run):
    names = list(candidates(run))
    assert names == [f"{run.name}@128", f"{run.name}@256"]  # model.zip repeats @256
    assert main(["--track", "fairness", str(run)]) == 0
    doc = json.loads((run / "pick_fairness.json").read_text())
    assert doc["metric"] == "rms_slowdown" and set(doc["values"]) == set(names)
    ok = {k: v for k, v in doc["values"].items() if v is not None}
    assert ok, "some candidate ran its validation episode whole"
    assert doc["values"][doc["best"]] == min(ok.values())
    # each candidate's per-seed values, in the order of the seeds, give its mean
    for k, v in ok.items():
        assert len(doc["per_seed"][k]) == len(doc["seeds"])
        assert np.mean(doc["per_seed"][k]) == pytest.approx(v, rel=1e-12)
    best = run / "best_fairness.zip"
    src = candidates(run)[doc["best"]]
    assert best.read_bytes() == src.read_bytes()


def test_a_final_model_that_repeats_the_last_checkpoints_weights_is_one_candidate(run, tmp_path):
    import shutil
    import zipfile

    other = tmp_path / "other"
    shutil.copytree(run, other)
    last = other / "checkpoints" / sorted(p.name for p in (other / "checkpoints").iterdir())[-1]

    def final_from(src, steps: int, weights: bytes | None = None) -> None:
        # model.zip as src with num_timesteps = steps (and, given, other policy weights)
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(other / "model.zip", "w") as zout:
            for name in zin.namelist():
                data = zin.read(name)
                if name == "data":
                    doc = json.loads(data)
                    doc["num_timesteps"] = steps
                    data = json.dumps(doc).encode()
                if name == "policy.pth" and weights is not None:
                    data = weights
                zout.writestr(name, data)

    final_from(last, 300)  # saved past the last checkpoint, no update since: same weights
    assert list(candidates(other)) == ["other@128", "other@256"]
    final_from(last, 300, weights=zipfile.ZipFile(last).read("policy.pth") + b"x")
    assert list(candidates(other)) == ["other@128", "other@256", "other@300"]


def test_a_pick_on_more_seeds_and_samples_says_so(run, tmp_path):
    import shutil

    import yaml

    other = tmp_path / "wide"
    shutil.copytree(run, other)
    doc = pick(other, "jct", n_seeds=2, samples=2)
    assert doc["seeds"] == [2000, 2001] and doc["samples"] == 1  # argmax: one episode a seed
    cfg = yaml.safe_load((other / "config.yaml").read_text())
    cfg["eval"]["decode"] = "sample"
    (other / "config.yaml").write_text(yaml.safe_dump(cfg))
    doc = pick(other, "jct", n_seeds=2, samples=2)
    assert doc["samples"] == 2 and doc["values"][doc["best"]] is not None
    with pytest.raises(ValueError, match="seeds: expected 1 to 20"):
        pick(other, "jct", n_seeds=21)
    with pytest.raises(ValueError, match="samples: expected at least 1"):
        pick(other, "jct", samples=0)


def test_a_two_stage_pick_plays_only_the_first_stages_best_again(run, tmp_path, capsys):
    import shutil

    other = tmp_path / "two"
    shutil.copytree(run, other)
    doc = pick(other, "jct", n_seeds=2, top=1)
    first = doc["first"]
    assert first["seeds"] == [2000] and first["samples"] == 1  # the run's own evaluation seeds
    assert set(first["values"]) == set(candidates(other))
    assert set(first["per_seed"]) == set(candidates(other))
    ok = {k: v for k, v in first["values"].items() if v is not None}
    leader = min(ok, key=lambda k: (ok[k], k))
    assert list(doc["values"]) == [leader] and doc["best"] == leader  # only it played again
    assert doc["seeds"] == [2000, 2001]
    assert "first" not in pick(other, "jct")  # one stage: no first
    assert main(["--track", "jct", "--top", "1", "--seeds", "2", str(other)]) == 0
    assert f"first stage kept {leader} " in capsys.readouterr().out
    doc = pick(other, "jct", n_seeds=2, top=5)  # more than there are: every one plays again
    assert set(doc["values"]) == set(candidates(other))
    with pytest.raises(ValueError, match="top: expected at least 1"):
        pick(other, "jct", top=0)
    with pytest.raises(ValueError, match="would replay the first"):
        pick(other, "jct", top=1)  # the run's own seed, one episode: the first stage again


def test_the_ranking_breaks_ties_by_name_and_leaves_out_cut_candidates():
    assert _ranked(Path("r"), {"r@2": 1.0, "r@1": 1.0, "r@3": None, "r@4": 0.5}) == [
        "r@4",
        "r@1",
        "r@2",
    ]
    with pytest.raises(ValueError, match="no candidate ran every validation episode whole"):
        _ranked(Path("r"), {"r@1": None})


def test_a_run_evaluated_off_the_validation_seeds_is_refused(run, tmp_path):
    import shutil

    import yaml

    other = tmp_path / "other"
    shutil.copytree(run, other)
    cfg = yaml.safe_load((other / "config.yaml").read_text())
    cfg["eval"]["seeds"] = [7]
    (other / "config.yaml").write_text(yaml.safe_dump(cfg))
    with pytest.raises(ValueError, match="not the first validation seeds"):
        pick(other, "jct")
    with pytest.raises(ValueError, match="not the first validation seeds"):
        pick(other, "jct", n_seeds=2, top=1)  # its first stage plays the run's own seeds
    assert pick(other, "jct", n_seeds=1)["seeds"] == [2000]  # named seeds: no own ones needed
    with pytest.raises(ValueError, match="no checkpoints"):
        candidates(tmp_path)
