"""Golden outputs that guard refactors: a refactor of the simulator or the environment must
reproduce them bit for bit (issue "Architecture").

* every bundled scenario but those in ``SKIP`` x every classic scheduler x seeds 0 and 1: a
  hash of ``run_sim``'s metrics and of its task log;
* the environment on three scenarios: a hash of 2 000 masked-random steps (observations,
  rewards, reward terms, masks, ends).

``python tests/golden_cases.py --write`` records ``tests/data/golden.json`` from the code as
it is; only do that when a change is *meant* to alter results, and say so in the commit.
It was recorded before the simulator was split into parts (issue "Architecture").
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).parent / "data" / "golden.json"
CLASSIC = ("fifo", "fair", "delay", "capacity", "late", "dl-sched", "rand-sched")
SEEDS = (0, 1)
ENV_SCENARIOS = ("ila72", "hybrid48", "lee-gpu")
ENV_STEPS = 2000
# ila2400: 20 000 tasks a run, the suite runs it elsewhere (test_faults, bench);
# hybrid48-peak: hybrid48 with one interactive-load parameter changed, hybrid48's cases
# cover its code paths
SKIP = {"ila2400", "hybrid48-peak"}


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr).encode()).hexdigest()


def sim_cases() -> list[tuple[str, str, int]]:
    from mrgym.config import available_scenarios

    return [
        (sc, s, seed)
        for sc in available_scenarios()
        if sc not in SKIP
        for s in CLASSIC
        for seed in SEEDS
    ]


def sim_hash(scenario: str, scheduler: str, seed: int) -> str:
    import mrgym

    r = mrgym.run_sim(scenario, scheduler, seed)
    log = [
        (t.job, t.task, t.kind, t.attempt, t.vm, t.start, t.end, t.locality, t.outcome)
        for t in r.task_log
    ]
    return _digest({"metrics": r.metrics, "log": log})


def env_hash(scenario: str) -> str:
    import gymnasium as gym

    import mrgym  # noqa: F401  (registers MRCluster-v0)

    env = gym.make("MRCluster-v0", config=scenario)
    rng = np.random.default_rng(7)
    h = hashlib.sha256()
    obs, info = env.reset(seed=3)
    for _ in range(ENV_STEPS):
        mask = info["action_mask"].astype(bool)
        a = int(rng.choice(np.flatnonzero(mask)))
        obs, reward, term, trunc, info = env.step(a)
        h.update(np.ascontiguousarray(obs).tobytes())
        h.update(repr((reward, term, trunc, sorted(info["reward_terms"].items()))).encode())
        h.update(np.asarray(info["action_mask"]).tobytes())
        if term or trunc:
            obs, info = env.reset(seed=4)
    return h.hexdigest()


def record() -> dict:
    out = {"sim": {}, "env": {}}
    for sc, s, seed in sim_cases():
        out["sim"][f"{sc}/{s}/{seed}"] = sim_hash(sc, s, seed)
    for sc in ENV_SCENARIOS:
        out["env"][sc] = env_hash(sc)
    return out


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/golden_cases.py --write")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(record(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
