"""Imitation warm start (agents/pretrain.py) and the training-seed table of compare."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agents.config import TrainConfig, TrainConfigError, load_train_config, seed_groups
from agents.pretrain import PretrainConfig, clone, collect
from mrgym.summary import across_training_seeds, markdown_table

# a short ila72 episode in Fair's own queue order: the expert is always job slot 0's map
ENV = {"config": "ila72", "queue_order": "deficit", "max_sim_time_s": 150.0}


def test_collect_records_the_experts_legal_actions():
    demos = collect(ENV, "fair", [7], gamma=0.9)
    n = len(demos)
    assert n > 100
    assert demos.obs.shape[0] == demos.masks.shape[0] == n
    assert demos.inexact == 0  # Fair's choice is always expressible in its queue order
    assert demos.masks[np.arange(n), demos.actions].all()  # every action was legal
    # Fair's first job in deficit order is slot 0: launches are the map (0) or reduce (1)
    assert set(np.unique(demos.actions)) <= {0, 1}
    # returns are the discounted sums of the (negative) JCT reward
    assert demos.returns.max() <= 0.0 and np.isfinite(demos.returns).all()
    again = collect(ENV, "fair", [7], gamma=0.9)
    assert np.array_equal(again.actions, demos.actions)  # deterministic


def test_per_second_returns_discount_by_simulated_time():
    """discount_per: second: the critic's targets are gamma ** dt-discounted, as PPO's GAE
    (TimeDiscountBuffer) will discount them, not gamma per decision."""
    undiscounted = collect(ENV, "fair", [7], gamma=1.0)
    per_step = collect(ENV, "fair", [7], gamma=0.9)
    per_second = collect(ENV, "fair", [7], gamma=0.9, per_second=True)
    assert np.array_equal(per_second.actions, undiscounted.actions)
    g1, r = undiscounted.returns.astype(np.float64), per_second.returns.astype(np.float64)
    rewards = g1 - np.append(g1[1:], 0.0)  # one episode: the undiscounted sums' differences
    dt = per_second.dts.astype(np.float64)
    assert (dt >= 0).all() and (dt == 0).any() and (dt > 1).any()  # same-heartbeat and later
    assert np.allclose(per_step.dts, 1.0)
    assert np.allclose(r[:-1], rewards[:-1] + 0.9 ** dt[:-1] * r[1:], atol=1e-4)
    assert not np.allclose(r, per_step.returns, atol=1e-3)  # the two discounts differ
    # each exponent is its own step's simulated seconds: replay the episode, same actions
    import gymnasium as gym

    env = gym.make("MRCluster-v0", **ENV).unwrapped
    env.reset(seed=7)
    replayed = [env.step(int(a))[4]["dt"] for a in per_second.actions]
    assert np.allclose(per_second.dts, replayed)


def test_a_scheduler_with_hooks_is_refused():
    with pytest.raises(ValueError, match=r"pretrain\.expert: 'hybridmr'"):
        collect(ENV, "hybridmr", [0])


def test_cloning_copies_a_non_trivial_expert():
    import gymnasium as gym
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    # in arrival order Fair's job is not always slot 0: the policy must read the features
    # 250 s: since the refit of Fidelity III's traffic constraint the first 150 s have a
    # choice on only 12 steps (an over-committed host finishes fewer tasks in them)
    env_kw = {**ENV, "queue_order": "arrival", "max_sim_time_s": 250.0}
    demos = collect(env_kw, "fair", [3, 4], gamma=0.99)
    assert len(set(demos.actions.tolist())) > 2
    env = gym.make("MRCluster-v0", **env_kw)
    model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu", n_steps=64)
    choice = demos.masks.sum(axis=1) > 1  # steps where the policy has a choice to copy
    assert choice.sum() > 50

    def agreement() -> float:
        pred, _ = model.policy.predict(demos.obs, deterministic=True, action_masks=demos.masks)
        return float(np.mean(pred[choice] == demos.actions[choice]))

    before = agreement()
    stats = clone(model, demos, PretrainConfig(epochs=30, value_coef=0.0), seed=0)
    assert stats["bc_agreement"] > 0.8  # over all steps (measured 0.83)
    # measured 0.12 -> 0.66 on the steps with a choice (those demos' states, drawn on the
    # simulator of issue "Fidelity III"'s traffic-constrained refit)
    assert agreement() > max(0.6, before + 0.2)


def test_pretrain_config_is_validated(tmp_path):
    cfg = TrainConfig.model_validate({"pretrain": {"expert": "delay", "episodes": 2}})
    assert cfg.pretrain.expert == "delay" and cfg.pretrain.epochs == 10
    assert TrainConfig().pretrain is None
    bad = tmp_path / "bad.yaml"
    bad.write_text("pretrain: {expert: fair, episodes: 0}\n")
    with pytest.raises(TrainConfigError, match=r"pretrain\.episodes: .*greater than or equal"):
        load_train_config(bad)


def test_models_from_different_seeds_form_one_group():
    a = TrainConfig(name="bc-s0", seed=0)
    b = TrainConfig(name="bc-s1", seed=1)
    other = TrainConfig(name="mlp", seed=0, n_envs=4)
    groups = seed_groups({"maskable_ppo:bc-s0": a, "maskable_ppo:bc-s1": b, "mlp": other})
    assert groups == {
        "maskable_ppo:bc-s0": "maskable_ppo:bc",
        "maskable_ppo:bc-s1": "maskable_ppo:bc",
    }
    # the same seed twice (a checkpoint, a rerun) is no second training seed
    assert seed_groups({"bc-s0": a, "bc-s0-2": a}) == {}
    # checkpoints and best models group only with their own kind; -s10 stays a seed marker
    s10 = TrainConfig(name="bc-s10", seed=10)
    g = seed_groups({"bc-s0@best5000": a, "bc-s10@best7000": s10, "bc-s0": a, "bc-s10": s10})
    assert g == {
        "bc-s0@best5000": "bc@best",
        "bc-s10@best7000": "bc@best",
        "bc-s0": "bc",
        "bc-s10": "bc",
    }
    # configs that differ form different groups even when their names would clash
    c, d = TrainConfig(name="x-s0", seed=0, n_envs=3), TrainConfig(name="x-s1", seed=1, n_envs=3)
    g = seed_groups({"x-s0": a, "x-s1": b, "x-s0-2": c, "x-s1-2": d})
    assert sorted(set(g.values())) == ["x", "x #2"]


def test_training_seed_spread_is_the_std_of_the_model_means():
    from mrgym.metrics import COMPARE_KEYS

    def row(policy, jct):
        r = {"scenario": "ila72", "policy": policy, "seeds": 2, "seed_list": [0, 1]}
        r.update({k: (1.0, 0.1) for k in COMPARE_KEYS})
        r["mean_jct_s"] = (jct, 5.0)
        return r

    summary = [row("m-s0", 100.0), row("m-s1", 120.0), row("m-s2", 140.0), row("fair", 150.0)]
    groups = {"m-s0": "m", "m-s1": "m", "m-s2": "m"}
    (g,) = across_training_seeds(summary, groups)
    assert g["policy"] == "m (3 training seeds)"
    assert g["mean_jct_s"][0] == pytest.approx(120.0)
    assert g["mean_jct_s"][1] == pytest.approx(20.0)  # sample std of 100, 120, 140
    assert not math.isnan(g["mean_jct_s"][1])
    assert "across the training seeds" in markdown_table([g])


def test_a_randomized_training_config_trains_on_variants(tmp_path):
    """env.randomize reaches the training envs (make_vec), not the evaluation kwargs."""
    from agents.train import env_kwargs, make_vec

    cfg = TrainConfig.model_validate(
        {"n_envs": 1, "env": {"randomize": {"cluster_scale": [0.5, 2.0]}}}
    )
    assert "randomize" not in env_kwargs(cfg) and env_kwargs(cfg)["config"] == "ila72"
    venv = make_vec(cfg)
    inner = venv.envs[0]
    sizes = set()
    for seed in range(4):
        inner.reset(seed=seed)
        sizes.add(len(inner.unwrapped.sim.topo.workers))
    venv.close()
    assert len(sizes) > 1  # the cluster size changed between episodes
    bad = tmp_path / "bad.yaml"
    bad.write_text("env: {randomize: {cluster_scale: [2, 1]}}\n")
    with pytest.raises(TrainConfigError, match=r"randomize\.cluster_scale"):
        load_train_config(bad)


def test_training_warm_starts_and_keeps_the_best_held_out_model(tmp_path):
    import yaml

    from agents.train import model_label, train

    cfg = TrainConfig.model_validate(
        {
            "name": "bc",
            "n_envs": 1,
            "total_steps": 512,
            "env": {"scenario": "lee-gpu", "job_slots": 4, "queue_order": "deficit"},
            "hyperparameters": {"n_steps": 256, "batch_size": 64},
            "pretrain": {"expert": "fair", "episodes": 1, "epochs": 2},
            "eval": {"seeds": [0], "every_steps": 256},
            "checkpoint_every_steps": 10_000,
        }
    )
    run = train(cfg, logdir=tmp_path, progress=False)
    stats = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert stats["bc_expert"] == "fair" and stats["bc_samples"] > 0
    assert stats["bc_agreement"] > 0.5
    # the clone is evaluated at step 0 (before any update) and can be the pick
    from agents.analysis.pareto import evaluation_points

    assert [p.step for p in evaluation_points(run)][0] == 0
    assert stats["best_eval_step"] in (0, 512) and stats["best_eval_mean_jct_s"] > 0
    assert stats["best_eval_p95_jct_s"] >= stats["best_eval_mean_jct_s"] * 0.5  # recorded
    best = run / "best_model.zip"
    assert best.is_file()
    assert model_label(best, cfg).endswith(f"@best{stats['best_eval_step']}")
    # a resumed run neither clones again nor forgets its best evaluation
    train(None, steps=768, resume=run, progress=False)
    after = yaml.safe_load((run / "train_stats.yaml").read_text())
    assert after["bc_expert"] == "fair" and after["bc_samples"] == stats["bc_samples"]
    assert after["best_eval_mean_jct_s"] <= stats["best_eval_mean_jct_s"]


def test_an_evaluation_cut_by_the_time_cap_is_never_the_best(tmp_path):
    import gymnasium as gym
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure

    from agents.callbacks import HeldOutEvalCallback

    def make(cap):
        return lambda: gym.make("MRCluster-v0", config="lee-gpu", job_slots=4, max_sim_time_s=cap)

    model = MaskablePPO("MlpPolicy", make(None)(), seed=0, device="cpu", n_steps=64)
    model.set_logger(configure(None, []))
    path = tmp_path / "best.zip"
    for cap, saved in ((30.0, False), (None, True)):
        cb = HeldOutEvalCallback(make(cap), [0], every_steps=1, best_path=str(path))
        cb.init_callback(model)
        cb.evaluate()
        assert path.exists() == saved and (cb.best is not None) == saved


def test_training_curves_plot_reads_the_held_out_events(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    from agents.analysis.curves import plot_curves, read_curve

    run = tmp_path / "run-s0"
    w = SummaryWriter(str(run / "tb" / "run_1"))
    for step, v in ((100, 180.0), (200, 150.0), (300, 140.0)):
        w.add_scalar("mr_eval/mean_jct", v, step)
    w.close()
    assert read_curve(run) == [(100, 180.0), (200, 150.0), (300, 140.0)]
    out = plot_curves([run], {"fair": 150.0}, tmp_path / "c.png")
    assert out.stat().st_size > 5_000
    with pytest.raises(ValueError, match="no mr_eval/p95_jct"):
        read_curve(run, "mr_eval/p95_jct")


def test_training_curves_mark_the_evaluations_that_were_cut(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    from agents.analysis.curves import incomplete_steps, plot_curves

    run = tmp_path / "run-s1"
    w = SummaryWriter(str(run / "tb" / "run_1"))
    for step, v, n in ((100, 180.0, 25), (200, 150.0, 25), (300, 120.0, 23)):
        w.add_scalar("mr_eval/mean_jct", v, step)
        w.add_scalar("mr_eval/jobs_completed", n, step)
    w.close()
    assert incomplete_steps(run) == {300}
    assert incomplete_steps(tmp_path / "run-s0-none") == set()  # no events: nothing marked
    assert plot_curves([run], {}, tmp_path / "c.png").stat().st_size > 5_000


def test_train_seed_names_the_run_and_is_refused_on_resume(tmp_path):
    from helpers import run_cli

    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(
        "name: tiny\n"
        "n_envs: 1\n"
        "total_steps: 128\n"
        "env: {scenario: lee-gpu, job_slots: 4}\n"
        "hyperparameters: {n_steps: 128, batch_size: 64}\n"
        "eval: {seeds: [0], every_steps: 100000}\n"
    )
    done = run_cli("train", "--config", str(cfg), "--seed", "3", "--logdir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    saved = load_train_config(tmp_path / "tiny-s3" / "config.yaml")
    assert saved.seed == 3 and saved.name == "tiny-s3"
    bad = run_cli("train", "--resume", str(tmp_path / "tiny-s3"), "--seed", "4")
    assert bad.returncode != 0 and "--seed starts a new run" in bad.stderr
