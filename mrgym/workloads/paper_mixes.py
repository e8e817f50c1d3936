"""The papers' job mixes.

* ILA §5.2 Table 4: 25 jobs from the Facebook job-size distribution of [26] (54 % 1-2 maps,
  14 % 3-20, 14 % 21-150, 6 % 151-300, 4 % 301-500, 8 % > 500), Poisson arrivals with a
  mean inter-arrival of 14 s.  With more jobs (``n_jobs``) the same 25-job mix repeats;
  ``scale_maps_to``/``total_reduces`` rescale it (ILA §5.6: 100 jobs, 15 000 maps, 5 000
  reduces).  Reduce counts are not in the paper: each job gets its profile's
  ``default_reduce_ratio`` x maps (at least one for jobs with a shuffle).
  KMeans and Bayes read small inputs: ILA §4.2 "For jobs with small input file, their
  performance are insensitive to data locality ... CPU-intensive applications, such as
  machine learning applications, usually have small input file", and §5.2 "for CPU-bound
  jobs with small input files, ILA and LAO scheduler used default greedy locality policy"
  (eq. 4's no-delay case, F_j / F_b <= 1 %).  The paper gives no size: each of their maps
  reads ``SMALL_INPUT_MB`` = 1 MB (under 1 % of ila72's 128 MB block) and does the CPU work
  and writes the bytes of a full-block map of its profile (the profile's per-MB figures
  scaled by block / 1 MB), so only the bytes read and eq. 4's branch change.  PiEst has no
  input file at all (its profile has none).  Measured (``mrgym reproduce --claims
  ila-ablation --quick``, ila72): mean JCT with full-block -> 1 MB inputs: ILA 154 -> 156 s,
  IAO 151 -> 157 s, LAO 151 -> 146 s, PureFair 155 -> 150 s (the small CPU-bound jobs no
  longer wait for locality under LAO, nor read a block under any scheduler).
* TeraGen and RandomWriter: ILA gives their map counts (Table 4: TeraGen(600),
  RWrite(40)), not what each map writes.  ``generator_mb`` sets it (default one block):
  a map's generation CPU and its HDFS output both scale with it.  ``ila72`` takes the
  value that stage C of the calibration fits (docs/calibration.md), so it is a declared
  input of that fit, not evidence.
* PNA §III Table II: three batches of ten jobs (WordCount, TeraSort, Grep, 10-100 GB) with
  the paper's exact input sizes, map and reduce counts (a map reads input / maps), each
  batch submitted at once.
"""

from __future__ import annotations

import math

import numpy as np

from mrgym.sim.jobs import JobSpec, get_profile
from mrgym.sim.rng import WorkloadDraws

# (profile, maps, count) — ILA Table 4, columns "# of I/O (size)" and "# of CPU (size)"
ILA_TABLE4 = [
    ("terasort", 2, 6),
    ("kmeans", 1, 8),
    ("terasort", 10, 2),
    ("bayes", 20, 2),
    ("randomwriter", 40, 1),
    ("grep", 120, 2),
    ("wordcount", 250, 1),
    ("piest", 480, 1),
    ("teragen", 600, 1),
    ("piest", 1000, 1),
]

# PNA Table II: (job, input GB, maps, reduces)
PNA_TABLE2 = {
    "wordcount": [
        (10, 88, 157),
        (20, 160, 169),
        (30, 278, 159),
        (40, 502, 169),
        (50, 490, 127),
        (60, 645, 187),
        (70, 598, 165),
        (80, 818, 291),
        (90, 837, 157),
        (100, 930, 197),
    ],
    "terasort": [
        (10, 143, 190),
        (20, 199, 186),
        (30, 364, 131),
        (40, 320, 149),
        (50, 490, 189),
        (60, 480, 193),
        (70, 560, 178),
        (80, 648, 184),
        (90, 753, 171),
        (100, 824, 193),
    ],
    "grep": [
        (10, 87, 148),
        (20, 163, 174),
        (30, 188, 184),
        (40, 203, 158),
        (50, 285, 164),
        (60, 389, 137),
        (70, 578, 179),
        (80, 634, 178),
        (90, 815, 164),
        (100, 893, 184),
    ],
}


SMALL_INPUT_MB = {"kmeans": 1.0, "bayes": 1.0}  # per map (ILA §4.2, §5.2; size a choice)


def generates(profile) -> bool:
    """A map-only generator: its maps read nothing and write their output (TeraGen,
    RandomWriter); PiEst, which writes next to nothing, is not one."""
    return not profile.has_input and profile.output_ratio > 0


def small_input(
    profile, block_mb: float, generator_mb: float | None = None
) -> tuple[object, float]:
    """The profile of a small-input job type (per-MB work scaled so that one map does a
    full block's work) and its per-map input MB; a generator's maps generate
    ``generator_mb`` each (its CPU and its output in proportion: a row costs the same to
    make whatever their number); other types unchanged, one block a map."""
    if generator_mb is not None and generates(profile):
        return profile, generator_mb
    mb = SMALL_INPUT_MB.get(profile.name)
    if mb is None or mb >= block_mb:
        return profile, block_mb
    k = block_mb / mb
    scaled = profile.with_(
        map_cpu_s_per_mb=profile.map_cpu_s_per_mb * k,
        map_output_ratio=profile.map_output_ratio * k,
        output_ratio=profile.output_ratio * k,
    )
    return scaled, mb


def default_reduces(profile, maps: int) -> int:
    if profile.map_output_ratio <= 0 or profile.default_reduce_ratio <= 0:
        return 1 if profile.name == "piest" else 0
    return max(1, round(maps * profile.default_reduce_ratio))


def _ila_mix(n_jobs: int) -> list[tuple[str, int]]:
    """The first ``n_jobs`` of the Table 4 mix repeated: (profile, maps) each."""
    mix = [(p, m) for p, m, c in ILA_TABLE4 for _ in range(c)]
    reps = math.ceil(n_jobs / len(mix))
    return (mix * reps)[:n_jobs]


def _scale_maps(maps: np.ndarray, scale_to: int | None) -> np.ndarray:
    if scale_to:
        return np.maximum(1, np.round(maps * scale_to / maps.sum()))
    return maps


def ila_total_maps(w) -> int:
    """The map tasks of an ``ila-table4`` workload: the mix is fixed (only its order is
    drawn), so the scenario schema can check the size before any draw."""
    maps = np.array([m for _, m in _ila_mix(w.n_jobs)], dtype=float)
    return int(_scale_maps(maps, w.scale_maps_to).sum())


def ila_table4(draws: WorkloadDraws, w, block_mb: float) -> list[JobSpec]:
    jobs = _ila_mix(w.n_jobs)
    # the order from one uniform per row of the mix, the k-th gap from its own stream
    order = np.argsort([draws.keyed("order", i).random() for i in range(len(jobs))], kind="stable")
    gaps = np.array(
        [
            draws.keyed("gap", k).exponential(w.mean_interarrival_s)
            if w.mean_interarrival_s > 0
            else 0.0
            for k in range(len(jobs))
        ]
    )
    if len(gaps):
        gaps[0] = 0.0
    times = np.cumsum(gaps)
    maps = _scale_maps(np.array([jobs[i][1] for i in order], dtype=float), w.scale_maps_to)
    profiles = [get_profile(jobs[i][0]) for i in order]
    reduces = np.array([default_reduces(p, int(m)) for p, m in zip(profiles, maps)], dtype=float)
    if w.total_reduces is not None and reduces.sum() > 0:
        reduces = np.where(
            reduces > 0, np.maximum(1, np.round(reduces * w.total_reduces / reduces.sum())), 0
        )
    out = []
    for k, (prof, m, r, t) in enumerate(zip(profiles, maps, reduces, times)):
        prof, per_map_mb = small_input(prof, block_mb, w.generator_mb)
        out.append(
            JobSpec(
                f"{prof.name}-{k}",
                prof,
                float(t),
                int(m),
                int(r),
                float(m) * per_map_mb,
                user=f"user{k % w.users}",
                pool=f"user{k % w.users}",
            )
        )
    return out


def pna_batch(draws: WorkloadDraws, w, block_mb: float) -> list[JobSpec]:
    batches = ["wordcount", "terasort", "grep"] if w.batch == "all" else [w.batch]
    out = []
    t0 = 0.0
    for b in batches:
        prof = get_profile(b)
        for gb, maps, reduces in PNA_TABLE2[b]:
            # Table II gives both the input size and the map count: the split is their
            # ratio (a file written with that block size; 88 maps over 10 GB: ~116 MB)
            out.append(JobSpec(f"{b}_{gb}GB", prof, t0, maps, reduces, gb * 1024.0))
        t0 += w.batch_gap_s
    return out
