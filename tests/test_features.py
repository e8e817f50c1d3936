"""Observation features and reward terms are each defined once (name, meaning, value):
the layout, the space, ``feature_names``, the docstrings and the docs tables derive from
``mrgym.envs.observation.GROUPS`` and ``mrgym.envs.rewards.TERMS``."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import mrgym.envs.observation as obs
from mrgym.envs import MRClusterEnv, rewards


def test_each_feature_has_one_name_a_meaning_and_a_value():
    names = [f.name for f in obs.FEATURES]
    assert len(names) == len(set(names)) == 16 + 7 + 21 + 5
    for f in obs.FEATURES:
        assert f.doc and f.value and f"``{f.name}``: {f.doc}" in obs.__doc__
        assert f"# {f.name}\n" in obs.BUILD_SOURCE  # its value is compiled into the builder
    assert obs.observation_size(8) == 191 and obs.observation_size(2, True) == 70
    # the env's docstring states the default size
    assert "n = 191 with the default 8 job slots" in MRClusterEnv.__doc__


def test_the_layout_follows_the_groups():
    env = MRClusterEnv(config="lee-gpu", job_slots=3, critic_inputs=True)
    o, _ = env.reset(seed=0)
    names = env.feature_names
    assert o.shape == env.observation_space.shape == (obs.observation_size(3, True),)
    # the class's default is MRCluster-v1's observation
    assert names == obs.feature_names(3, True, version=1) and len(names) == len(o)
    assert names[:2] == ["slot_is_map", "slot_is_reduce"] and names[-1] == "critic.mean_arrival"
    at = {n: o[i] for i, n in enumerate(names)}
    # the first decision of an episode: a map slot, no job finished, no time since arrival
    assert (at["slot_is_map"], at["slot_is_reduce"], at["jobs_finished"]) == (1.0, 0.0, 0.0)
    view = env.view
    since = view.now - view.all_jobs[view.n_arrived - 1].arrived_s
    assert at["since_arrival"] == pytest.approx(math.log1p(since) / math.log1p(4 * 3600), 1e-6)
    n = len(view.all_jobs)
    assert at["job0.valid"] == 1.0
    assert at["critic.unarrived_jobs"] == pytest.approx((n - view.n_arrived) / n)
    assert at["active_jobs"] == pytest.approx(len(env.view.jobs) / 3)


def test_a_value_that_is_not_one_expression_is_refused():
    # "1.0, 2.0" would put two values in one feature's place and shift every later one
    bad = obs.Feature("two", "two values", "1.0, 2.0")
    groups = (obs.Group("vm", "t", "", (bad,)), *obs.GROUPS_V1[1:])
    with pytest.raises(ValueError, match="feature two: value '1.0, 2.0' is not one expr"):
        obs._compile(groups, 1)


def test_the_tables_render_as_markdown():
    table = obs.markdown_table()
    assert table.count("\n") == 1 + len(obs.FEATURES)
    assert "| `host_spot` | vm | 1: a spot host (evictable) |" in table
    terms = rewards.markdown_table()
    assert terms.count("\n") == 1 + len(rewards.TERMS) == 9
    assert "| `throughput` | tasks completed in [t0, t1] |" in terms


def test_each_reward_term_is_defined_once_and_reported():
    assert rewards.TERM_NAMES == (
        "jct",
        "throughput",
        "locality",
        "fairness",
        "makespan",
        "slowdown",
        "cost",
        "sla",
    )
    for t in rewards.TERMS:
        assert t.doc and f"``{t.name}``: {t.doc}" in rewards.__doc__
        assert f"``{t.name}``" in MRClusterEnv.__doc__
    weights = dict.fromkeys(rewards.TERM_NAMES, 1.0)
    env = gym.make("MRCluster-v0", config="lee-gpu", reward_weights=weights)
    _, info = env.reset(seed=0)
    total = 0.0
    for _ in range(30):
        a = int(np.flatnonzero(info["action_mask"])[0])
        _, r, term, trunc, info = env.step(a)
        terms = info["reward_terms"]
        assert list(terms) == list(rewards.TERM_NAMES)
        assert r == pytest.approx(sum(terms.values()))
        total += terms["throughput"]
    assert total > 0  # tasks finished within 30 launches


def test_an_unweighted_costly_term_is_not_computed():
    env = gym.make("MRCluster-v0", config="lee-gpu", reward_weights={"jct": 1.0})
    tracker = rewards.RewardTracker(env.unwrapped.weights)
    assert [name for name, _, _ in tracker._terms] == [
        "jct",
        "throughput",
        "locality",
        "makespan",
        "sla",
    ]


def _section(page: str, start: str, end: str) -> str:
    return page[page.index(start) : page.index(end)]


def test_the_environment_page_lists_exactly_the_features_and_terms():
    """docs/environment.md's tables are written for people; this ties them to the one
    definition, so a feature or term added in code (or removed) fails here until the
    page says so."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "environment.md").read_text()
    obs_text = _section(page, "## Observation", "## Reward")
    rows = re.findall(r"^\| (`[^|]+`) \|", obs_text, flags=re.M)
    listed = {n for cell in rows for n in re.findall(r"`(\w+)`", cell)}
    # the page documents the current version, MRCluster-v1 (v0's names: version history)
    critic = {f.name for g in obs.GROUPS_V1 if g.key == "critic" for f in g.features}
    assert listed == {f.name for g in obs.GROUPS_V1 for f in g.features} - critic
    history = page[page.index("## Version history") :]
    v0_only = {f.name for g in obs.GROUPS for f in g.features} - {
        f.name for g in obs.GROUPS_V1 for f in g.features
    }
    assert v0_only == {"jobs_completed", "time", "gpu_affinity"}
    assert all(f"`{n}`" in history for n in v0_only)
    assert all(f"`{n}`" in obs_text for n in critic)
    sizes = {g.key: len(g.features) for g in obs.GROUPS_V1}
    counts = f"({sizes['vm']} + {sizes['global']} + {sizes['job']} K,)"
    assert counts in obs_text, f"the page should state the shape {counts}"
    reward_text = _section(page, "## Reward", "## Episode end")
    terms = re.findall(r"^\| `(\w+)` \|", reward_text, flags=re.M)
    assert tuple(terms) == rewards.TERM_NAMES
