"""A synthetic generator: Poisson arrivals, log-normal map counts, a weighted profile mix."""

from __future__ import annotations

import numpy as np

from mrgym.sim.jobs import JobSpec, get_profile
from mrgym.sim.rng import WorkloadDraws
from mrgym.workloads.paper_mixes import default_reduces


def synthetic(draws: WorkloadDraws, w, block_mb: float) -> list[JobSpec]:
    mix = w.profiles or {"terasort": 1.0, "wordcount": 1.0, "grep": 1.0, "kmeans": 1.0}
    names = sorted(mix)
    p = np.array([mix[n] for n in names], dtype=float)
    if not (np.isfinite(p).all() and (p >= 0).all() and p.sum() > 0):
        # the schema refuses these; a hand-built spec would otherwise fail inside numpy
        raise ValueError("workload.profiles: weights must be finite, >= 0 and not all 0")
    p /= p.sum()
    # each job's kind, size and gap from its own stream: adding jobs changes no other job
    kinds, maps, gaps = [], [], []
    for k in range(w.n_jobs):
        g = draws.job(k)
        kinds.append(int(g.choice(len(names), p=p)))
        maps.append(
            min(max(round(float(g.lognormal(np.log(w.maps_median), w.maps_sigma))), 1), w.max_maps)
        )
        gaps.append(
            float(g.exponential(w.mean_interarrival_s)) if w.mean_interarrival_s > 0 else 0.0
        )
    if gaps:
        gaps[0] = 0.0
    times = np.cumsum(gaps)
    out = []
    for k in range(w.n_jobs):
        prof = get_profile(names[kinds[k]])
        m = int(maps[k])
        out.append(
            JobSpec(
                f"{prof.name}-{k}",
                prof,
                float(times[k]),
                m,
                default_reduces(prof, m),
                m * block_mb,
                user=f"user{k % w.users}",
                pool=f"user{k % w.users}",
            )
        )
    return out
