"""A synthetic generator: Poisson arrivals, log-normal map counts, a weighted profile mix."""

from __future__ import annotations

import numpy as np

from mrgym.sim.jobs import JobSpec, get_profile
from mrgym.workloads.paper_mixes import default_reduces


def synthetic(rng: np.random.Generator, w, block_mb: float) -> list[JobSpec]:
    mix = w.profiles or {"terasort": 1.0, "wordcount": 1.0, "grep": 1.0, "kmeans": 1.0}
    names = sorted(mix)
    p = np.array([mix[n] for n in names], dtype=float)
    if not (np.isfinite(p).all() and (p >= 0).all() and p.sum() > 0):
        # the schema refuses these; a hand-built spec would otherwise fail inside numpy
        raise ValueError("workload.profiles: weights must be finite, >= 0 and not all 0")
    p /= p.sum()
    kinds = rng.choice(len(names), size=w.n_jobs, p=p)
    maps = np.clip(
        np.round(rng.lognormal(np.log(w.maps_median), w.maps_sigma, size=w.n_jobs)), 1, w.max_maps
    )
    gaps = (
        rng.exponential(w.mean_interarrival_s, size=w.n_jobs)
        if w.mean_interarrival_s > 0
        else np.zeros(w.n_jobs)
    )
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
