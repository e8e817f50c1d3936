"""The models shipped in ``models/`` load against MRCluster-v1, act legally, and are the
ones the leaderboard's agent rows name (docs/learning.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]
MODELS = sorted((ROOT / "models").glob("*/best_model.zip"))


def test_there_are_shipped_models():
    assert len(MODELS) == 3  # ila72, training seeds 0, 1 and 2


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.parent.name)
def test_a_shipped_model_plays_on_v1(path):
    import mrgym
    from mrgym.policy import ModelPolicy

    policy = ModelPolicy.load(str(path))
    assert policy.env_kwargs["observation_version"] == 1
    assert path.stat().st_size < 3 * 2**20
    env = policy.make_env()
    assert env.spec.id == "MRCluster-v1"
    r = mrgym.run_episode(env, policy, seed=2000, max_steps=300)
    assert r.steps == 300 and r.invalid_actions == 0


def test_the_leaderboard_rows_name_the_shipped_models():
    named = set()
    for f in (ROOT / "docs" / "leaderboard").glob("ila72-agents-*.json"):
        for p in json.loads(f.read_text())["policies"]:
            named.add(p["source"])
    assert named == {str(p.relative_to(ROOT)) for p in MODELS}
