"""Domain randomization (agents/randomize.py) and the generalization table
(agents/generalize.py): determinism, fixed spaces, masks, spec errors, SWIM workloads and an
end-to-end table with a tiny MaskablePPO model."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from helpers import SWIM, needs_swim

import mrgym
from agents.randomize import (
    DomainRandomization,
    RandomizationSpec,
    draw_variant,
    make_randomized_env,
)
from mrgym.envs.mr_cluster import MRClusterEnv
from mrgym.sim.params import DEFAULT_PARAMS

# xdist: the tiny trained model built once
pytestmark = pytest.mark.xdist_group("generalize")


TRACE_DIR = SWIM.parent


def _variants(seed: int, n: int = 1, **spec) -> list[dict]:
    env = make_randomized_env("ila72", spec or None, job_slots=4)
    out = [env.reset(seed=seed)[1]["randomization"]]
    out += [env.reset()[1]["randomization"] for _ in range(n - 1)]
    return out


def test_randomization_is_deterministic_per_seed_and_varies_across_seeds():
    a, b = _variants(3, 3), _variants(3, 3)
    assert a == b  # the seeded reset and the unseeded ones after it repeat
    assert a[0] != a[1] != a[2]  # unseeded resets move on to new variants
    draws = [_variants(s)[0] for s in range(12)]
    hosts = [d["hosts"] for d in draws]
    assert len(set(hosts)) >= 5, hosts
    # x0.5..x2 of ila72's 12 servers and 2 racks; background in [0, 0.3]
    assert all(6 <= h <= 24 for h in hosts), hosts
    assert all(1 <= d["racks"] <= 4 for d in draws)
    assert all(0.0 <= d["background"] <= 0.3 for d in draws)
    for key in ("cluster_scale", "interference_scale", "arrival_rate_scale"):
        xs = [d[key] for d in draws]
        assert min(xs) >= 0.5 and max(xs) <= 2.0 and max(xs) / min(xs) > 1.5, (key, xs)


def test_variant_reaches_the_inner_scenario():
    env = make_randomized_env("ila72", job_slots=4)
    env.reset(seed=5)
    v, sc = env.variant, env.unwrapped.scenario
    assert sc.cluster.hosts[0].count == v.hosts == round(12 * v.cluster_scale)
    assert sc.cluster.racks == v.racks
    assert sc.cluster.background == pytest.approx(v.background)
    assert sc.execution.corunner_penalty == pytest.approx(0.005 * v.interference_scale)
    assert sc.execution.disk_thrash == pytest.approx(
        DEFAULT_PARAMS.disk_thrash * v.interference_scale
    )
    assert sc.workload.mean_interarrival_s == pytest.approx(14.0 / v.arrival_rate_scale)
    # the simulator built that many servers and racks
    topo = env.unwrapped.sim.topo
    assert len(topo.hosts) == v.hosts and len({h.rack for h in topo.hosts}) == v.racks


def test_spaces_stay_equal_and_masks_pass_through():
    env = make_randomized_env("ila72", {"cluster_scale": [0.5, 2.0]}, job_slots=4)
    sizes = set()
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        sizes.add(env.variant.hosts)
        assert env.observation_space == env.unwrapped.observation_space
        assert env.action_space == env.unwrapped.action_space == mrgym_space(4)
        assert env.observation_space.contains(obs)
        mask = env.action_masks()
        assert np.array_equal(mask, env.unwrapped.action_masks())
        assert np.array_equal(mask, info["action_mask"])
        for _ in range(5):  # legal launches step the inner env
            obs, _, term, trunc, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
            assert not info["invalid_action"]
    assert len(sizes) > 1


def mrgym_space(k: int):
    return MRClusterEnv(job_slots=k).action_space


def test_fixed_identity_spec_reproduces_the_base_env():
    spec = {
        "cluster_scale": [1, 1],
        "interference_scale": [1, 1],
        "background": [0, 0],
        "arrival_rate_scale": [1, 1],
    }
    wrapped = make_randomized_env("ila72", spec, job_slots=4)
    plain = MRClusterEnv("ila72", job_slots=4)
    o1, _ = wrapped.reset(seed=11)
    o2, _ = plain.reset(seed=11)
    for _ in range(200):
        assert np.array_equal(o1, o2)
        a = int(np.flatnonzero(plain.action_masks())[-1])
        o1, r1, *_ = wrapped.step(a)
        o2, r2, *_ = plain.step(a)
        assert r1 == r2


@pytest.mark.parametrize(
    "spec, match",
    [
        ({"cluster_scale": [2, 1]}, r"randomize\.cluster_scale: expected \[low, high\] with 0 <"),
        ({"arrival_rate_scale": [0, 2]}, r"randomize\.arrival_rate_scale: .* 0 < low"),
        ({"interference_scale": [1, 40]}, r"randomize\.interference_scale: .*<= 16, got \[1, 40\]"),
        ({"background": [0, 1.5]}, r"randomize\.background: .*0 <= low <= high <= 0\.99"),
        ({"cluster_scale": "big"}, r"randomize\.cluster_scale: .*got 'big'"),
        ({"cluster_scale": [1, math.nan]}, r"randomize\.cluster_scale: "),
        ({"hosts": [1, 2]}, r"randomize\.hosts: unknown key, expected one of \['cluster_scale'"),
    ],
)
def test_bad_spec_raises_a_clear_error(spec, match):
    with pytest.raises(ValueError, match=match):
        RandomizationSpec.from_dict(spec)
    with pytest.raises(ValueError, match=match):
        make_randomized_env("ila72", spec)


def test_arrival_rate_scaling_per_workload_kind():
    rng = np.random.default_rng(0)
    spec = RandomizationSpec(arrival_rate_scale=(2.0, 2.0))
    pna = mrgym.load_scenario("pna60", {"workload.batch_gap_s": 30.0})
    assert draw_variant(pna, spec, rng).overrides["workload.batch_gap_s"] == 15.0
    lee = mrgym.load_scenario("lee-gpu")
    ov = draw_variant(lee, spec, rng).overrides
    subs = [j.submit_s for j in lee.workload.jobs]
    assert [ov[f"workload.jobs.{k}.submit_s"] for k in range(len(subs))] == [s / 2 for s in subs]
    # racks named by the host groups (hybrid48) are kept; their hosts still scale
    hyb = mrgym.load_scenario("hybrid48")
    v = draw_variant(hyb, RandomizationSpec(cluster_scale=(2.0, 2.0)), rng)
    assert "cluster.racks" not in v.overrides and v.racks == hyb.cluster.racks
    assert v.hosts == 2 * sum(g.count for g in hyb.cluster.hosts)
    mrgym.load_scenario(hyb, v.overrides)  # a valid scenario


@pytest.mark.parametrize("name", mrgym.available_scenarios())
def test_every_bundled_scenario_draws_valid_variants(name):
    base = mrgym.load_scenario(name)
    spec = RandomizationSpec(cluster_scale=(0.1, 4.0))
    rng = np.random.default_rng(1)
    hosts = set()
    for _ in range(6):
        v = draw_variant(base, spec, rng)
        sc = mrgym.load_scenario(base, v.overrides)  # validates (DataNodes >= replicas...)
        assert sum(g.count for g in sc.cluster.hosts) == v.hosts
        hosts.add(v.hosts)
    assert len(hosts) > 1


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A MaskablePPO trained 128 steps on the randomized env through SB3's make_vec_env
    (the wiring agents/train.py uses), saved as a run folder ModelPolicy.load reads."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents.config import EnvConfig, TrainConfig

    kw = {"base_config": "ila72", "spec": {"cluster_scale": [0.5, 1.0]}, "job_slots": 4}
    venv = make_vec_env(
        make_randomized_env, n_envs=2, seed=0, vec_env_cls=DummyVecEnv, env_kwargs=kw
    )
    assert isinstance(venv.envs[0].unwrapped, MRClusterEnv)
    model = MaskablePPO(
        "MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(128)
    assert model.num_timesteps == 128
    run = tmp_path_factory.mktemp("runs") / "tiny"
    run.mkdir()
    model.save(str(run / "model.zip"))
    cfg = TrainConfig(name="tiny", env=EnvConfig(job_slots=4), total_steps=128)
    (run / "config.yaml").write_text(yaml.safe_dump(cfg.model_dump(), sort_keys=False))
    venv.close()
    return run


def test_domain_randomization_is_a_gym_wrapper():
    env = DomainRandomization("ila72", None, job_slots=4)
    env.reset(seed=0)
    assert env.unwrapped is env.env and env.unwrapped.codec.k == 4


# The window the run below uses.  Any window shows the workloads build and finish; seed 2's
# is a light hour: Fair runs it in ~0.9 s on swim-ila72 and ~1.5 s on swim-ila216, where
# seed 0's takes ~2 s and ~7 s (the x3 cluster's heartbeats), every job finishing in both.
SWIM_RUN_SEED = 2


@needs_swim
def test_swim_workloads_build_and_run_with_fair() -> None:
    from agents.analysis.generalize import SWIM_JOBS, swim_on_ila72, swim_on_larger, swim_window

    starts = {swim_window(s, TRACE_DIR) for s in range(5)}
    assert len(starts) == 5  # each seed draws its own window
    small, large = (
        mrgym.load_scenario(*f(SWIM_RUN_SEED, TRACE_DIR)) for f in (swim_on_ila72, swim_on_larger)
    )
    assert small.workload.start_s == large.workload.start_s
    vms = [sum(g.count * g.vms_per_host for g in s.cluster.hosts) for s in (small, large)]
    assert vms == [72, 216] and large.cluster.racks == 6
    for sc in (small, large):
        m = mrgym.run_sim(sc, "fair", 0).metrics
        assert m["jobs_submitted"] == m["jobs_completed"] == SWIM_JOBS
        assert not m["truncated"] and m["mean_jct_s"] > 0


def test_generalization_table_end_to_end(tiny_model, tmp_path):
    from agents.analysis.generalize import (
        generalization_table,
        load_models,
        main,
        markdown,
        write_outputs,
    )

    wls = ["in-dist"] + (["swim-ila72"] if SWIM.exists() else [])
    table = generalization_table({"tiny": tiny_model}, ["fifo"], [0], TRACE_DIR, wls)
    got = {(r["policy"], r["workload"]): r for r in table}
    assert set(got) == {(p, w) for p in ("fair", "fifo", "tiny") for w in wls}
    for (pol, wl), r in got.items():
        assert r["mean_jct_s"] > 0 and r["p95_jct_s"] >= r["mean_jct_s"] * 0.5
        assert 0.0 <= r["local_frac"] <= 1.0 and r["truncated"] == 0
        ratio = 1.0 if pol == "fair" else r["mean_jct_s"] / got[("fair", wl)]["mean_jct_s"]
        assert r["jct_vs_fair"] == pytest.approx(ratio)
        ind = got[(pol, "in-dist")]["jct_vs_fair"]
        assert r["gap_vs_in_dist"] == pytest.approx(r["jct_vs_fair"] - ind)
    assert got[("fair", "in-dist")]["jobs"] == 25
    # the model runs under its training settings (4 job slots), not the env defaults
    (pol,) = load_models({"tiny": tiny_model})
    assert pol.env_kwargs["job_slots"] == 4 and pol.name == "tiny"
    # a training run's randomization spec is not an env argument: it is dropped
    pol.env_kwargs["randomize"] = {"cluster_scale": [0.5, 2]}
    (again,) = load_models({"dr": pol})
    assert "randomize" not in again.env_kwargs and again.name == "dr" and pol.name == "tiny"
    paths = write_outputs([], table, tmp_path)
    assert all(p.exists() for p in paths[1:])
    assert "| tiny | in-dist | 72 |" in markdown(table)
    with pytest.raises(SystemExit):
        main(["--models", "no-equals-sign", "--out", str(tmp_path)])


def test_missing_trace_is_a_clear_error(tmp_path):
    from agents.analysis.generalize import swim_on_ila72

    with pytest.raises(FileNotFoundError, match=r"SWIM trace FB-2009_.*not found in"):
        swim_on_ila72(0, tmp_path)
