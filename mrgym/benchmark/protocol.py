"""The benchmark protocol: which seeds, how many samples, which interval.  Defined once
here; ``mrgym benchmark``, the leaderboard page and its tests read these names.

Two seed ranges, apart from each other and from the behaviour-cloning demonstrations
(seeds 10000 and up):

- **validation** seeds 2000-2019: for every development decision (tuning, checkpoint
  picks, choosing a config).
- **test** seeds 3000-3009: final numbers only; no development decision may use them.

A stochastic policy (a sampled model, or a scheduler whose class says ``stochastic =
True``) runs ``K`` samples per seed: sample ``j`` of seed ``s`` keeps episode seed ``s``
(the same jobs, placement and task luck for every policy) and draws its own choices from
policy seed :func:`policy_seed` ``(s, j)``.  Its value on seed ``s`` is the mean of its K
samples.  A deterministic policy runs once per seed.
"""

from __future__ import annotations

import numpy as np

#: Seeds for development decisions (tuning, picks).
VALIDATION_SEEDS: tuple[int, ...] = tuple(range(2000, 2020))
#: Seeds for final numbers only: no development decision may use them.
TEST_SEEDS: tuple[int, ...] = tuple(range(3000, 3010))
#: ``--split`` name -> its seeds.
SPLITS: dict[str, tuple[int, ...]] = {"validation": VALIDATION_SEEDS, "test": TEST_SEEDS}
#: The leaderboard shows this split only.
LEADERBOARD_SPLIT = "test"

#: Samples per seed of a stochastic policy (``--samples``).
DEFAULT_SAMPLES = 3
#: Level of the paired interval.
CONFIDENCE = 0.95
#: How the interval is computed, as the JSON and the page say it.
INTERVAL_METHOD = (
    "paired Student t: the mean over seeds of the per-seed relative difference in mean JCT, "
    "± t(0.975, n-1) x its standard error"
)

#: The per-seed metrics a result keeps (flat keys of :func:`mrgym.rows.flatten`, the ones
#: ``mrgym compare`` uses).  The first three are the leaderboard's columns.
METRIC_KEYS: tuple[str, ...] = (
    "mean_jct_s",
    "p95_jct_s",
    "local_frac",
    "small_jct_s",
    "makespan_s",
    "throughput_jobs_per_h",
    "fairness_jain",
    "slot_utilization",
    "tasks_reexecuted",
    "sla_violation_s",
    "jobs_completed",
    "truncated",
    # the tracks' metrics (mrgym.benchmark.tracks.TRACK_KEYS)
    "jct_locality_s",
    "locality_value",
    "rms_slowdown",
    "p90_slowdown",
    "jain_slowdown",
)
#: The metric the best baseline and the paired difference are taken on (lower is better).
RANK_KEY = "mean_jct_s"

# keeps the policy seeds' stream apart from any other use of SeedSequence([s, j])
_POLICY_SEED_TAG = 0x6D726762  # "mrgb"


def split_seeds(split: str) -> tuple[int, ...]:
    """The seeds of ``split`` (``"test"`` or ``"validation"``)."""
    if split not in SPLITS:
        raise ValueError(f"--split {split!r}: expected one of {', '.join(SPLITS)}")
    return SPLITS[split]


def policy_seed(episode_seed: int, sample: int) -> int:
    """The policy seed of sample ``sample`` on episode seed ``episode_seed``: a hash of
    both (numpy's ``SeedSequence``), so that samples differ from each other and from the
    seed a scheduler's own ``reset(episode_seed)`` would use; in ``[0, 2**63)``."""
    if episode_seed < 0 or sample < 0:
        raise ValueError(f"policy_seed: expected seeds >= 0, got ({episode_seed}, {sample})")
    ss = np.random.SeedSequence([_POLICY_SEED_TAG, int(episode_seed), int(sample)])
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))
