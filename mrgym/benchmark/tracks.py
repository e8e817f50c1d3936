"""Benchmark tracks: what a policy is ranked by, and the reward that trains for it.

A track is a reward configuration of ``MRCluster-v1`` (weights of the terms of
:mod:`mrgym.envs.rewards`), the episode metric that reward's return estimates (the track
ranks by it, lower is better) and the secondary metrics its table shows.  The result files
of ``mrgym benchmark`` keep every track's metric per seed, so one run of a policy serves
every track; ``--track`` only changes the ranking, the best baseline and the paired
difference.

The four tracks, and why these definitions (docs/leaderboard.md states them as well):

- ``jct``: mean job completion time, the ``jct`` term (return -sum JCT / 100).
- ``throughput``: the makespan, the ``makespan`` term (return -(last end) / 100).  For a
  fixed workload, jobs per hour is jobs / makespan: ranking by one ranks by the other.
  The ``throughput`` term (tasks completed per step) sums to the same total for every
  policy that completes the workload, so its return cannot rank anything.
- ``locality``: mean JCT plus a network charge of ``LOCALITY_CHARGE_S`` per map and unit
  of locality lost (node 0, server 0.1, rack 0.7, off-rack 1: one minus the ``locality``
  term's value), the ``jct`` term plus the ``locality`` term at weight
  ``LOCALITY_CHARGE_S / 100``.  Locality alone is won by never launching; here a wait for
  a local slot has to pay for itself in JCT.
- ``fairness``: the root mean square of the jobs' slowdowns (JCT over the job's JCT alone
  on the cluster, :func:`mrgym.reference.reference_jct`), the ``slowdown`` term (return
  -sum slowdown^2).  The l2 norm of slowdown (stretch) sits between the mean (l1, which
  starving a big job can lower) and the worst job (l-infinity): the norm Bansal and Pruhs
  (STOC 2003) proposed to trade average service for fairness.  Jain's index over
  slowdowns and the worst decile are shown beside it; neither ranks, since making every
  job equally slow maximizes Jain's index.

A policy that launches nothing, or starves a job, ranks low on every track: its episode
is cut at the time cap (a truncated run is never the best baseline and sorts last), and
its unfinished jobs count with their age at the cap as their JCT.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mrgym.envs.rewards import LOCALITY_VALUE, TIME_SCALE
from mrgym.sim.hdfs import LEVELS

#: Seconds charged per map for each unit of locality lost: a 128 MB block (ILA §5.1,
#: Hadoop 0.20's default 64 MB is half) read over a 1 Gbit/s rack uplink (ILA §5.1)
#: takes 128 x 8 / 1000 ~ 1 s of a link other jobs share, a cost the job's own JCT does
#: not show.
LOCALITY_CHARGE_S = 1.0


@dataclass(frozen=True)
class Track:
    """One track: its reward weights, the metric it ranks by (lower is better) and the
    secondary metrics of its table."""

    name: str
    title: str
    reward_weights: Mapping[str, float]
    metric: str
    secondary: tuple[str, ...]
    formula: str
    reward: str = field(default="")


TRACKS: dict[str, Track] = {
    t.name: t
    for t in (
        Track(
            "jct",
            "mean JCT",
            {"jct": 1.0},
            "mean_jct_s",
            ("p95_jct_s", "local_frac"),
            "mean over completed jobs of finish - arrival (s)",
            "`jct`: the return is -sum JCT / 100",
        ),
        Track(
            "throughput",
            "makespan",
            {"makespan": 1.0},
            "makespan_s",
            ("throughput_jobs_per_h", "slot_utilization", "mean_jct_s"),
            "last job's end - first job's arrival (s); jobs per hour = jobs / makespan",
            "`makespan`: the return is -(the last job's end) / 100",
        ),
        Track(
            "locality",
            "JCT with a locality charge",
            {"jct": 1.0, "locality": LOCALITY_CHARGE_S / TIME_SCALE},
            "jct_locality_s",
            ("mean_jct_s", "local_frac", "locality_value"),
            f"mean JCT + {LOCALITY_CHARGE_S:g} s x (maps x (1 - their mean locality "
            "value: node 1, server 0.9, rack 0.3, off-rack 0)) / jobs",
            f"`jct` + {LOCALITY_CHARGE_S / TIME_SCALE:g} x `locality`: the return is "
            f"-(sum JCT - {LOCALITY_CHARGE_S:g} s x sum of the maps' locality values) / 100",
        ),
        Track(
            "fairness",
            "RMS slowdown",
            {"slowdown": 1.0},
            "rms_slowdown",
            ("p90_slowdown", "jain_slowdown", "mean_jct_s"),
            "sqrt(mean over jobs of (JCT / the job's JCT alone on the cluster)^2)",
            "`slowdown`: the return is -sum over jobs of slowdown^2",
        ),
    )
}
DEFAULT_TRACK = "jct"

#: Per-seed metrics the tracks add to a result file (beside protocol.METRIC_KEYS' others):
#: key -> (its table header, its format)
LABELS = {
    "jct_locality_s": ("JCT + locality charge (s)", ",.1f"),
    "locality_value": ("locality value", ".3f"),
    "rms_slowdown": ("RMS slowdown", ".2f"),
    "p90_slowdown": ("p90 slowdown", ".2f"),
    "jain_slowdown": ("Jain (slowdowns)", ".3f"),
}
TRACK_KEYS = tuple(LABELS)


def get_track(name: str) -> Track:
    """The track called ``name``; a ``ValueError`` naming the known ones otherwise."""
    if name not in TRACKS:
        from mrgym.suggest import did_you_mean

        raise ValueError(
            f"--track {name!r}{did_you_mean(name, list(TRACKS))}: expected one of "
            f"{', '.join(TRACKS)}"
        )
    return TRACKS[name]


def locality_value(row: Mapping[str, Any]) -> float | None:
    """The mean locality value (``locality`` term's scale) of the successful maps that
    read a block, from a flat row's ``map_locality.*`` fractions."""
    fr = [row.get(f"map_locality.{lv}") for lv in LEVELS]
    if any(f is None for f in fr) or not math.isclose(sum(fr), 1.0, abs_tol=1e-6):
        return None  # no map read a block
    return float(sum(f * LOCALITY_VALUE[i] for i, f in enumerate(fr)))


def track_values(
    row: Mapping[str, Any],
    jobs: Sequence[tuple],
    reference: Mapping[int, float],
) -> dict[str, float | None]:
    """The tracks' per-episode metrics (:data:`TRACK_KEYS`) of one run.

    ``row``: the run's flat metrics (:func:`mrgym.rows.flatten`); ``jobs``: its job log,
    ``(id, name, maps, arrived_s, finish_s)`` per job (``run_row(keep_logs=True)``);
    ``reference``: each job's reference JCT.  A job unfinished at the end counts with its
    age at the end (``sim_time_s``) as its JCT: a lower bound of its slowdown, so that a
    starved job weighs on the fairness track instead of dropping out of it."""
    end = row.get("sim_time_s")
    arrived = [j for j in jobs if j[3] is not None]
    done = [j for j in arrived if j[4] is not None]
    out: dict[str, float | None] = dict.fromkeys(TRACK_KEYS)
    v = locality_value(row)
    out["locality_value"] = v
    jct = row.get("mean_jct_s")
    if v is not None and done and jct is not None and not math.isnan(jct):
        maps = sum(j[2] for j in done)
        out["jct_locality_s"] = jct + LOCALITY_CHARGE_S * maps * (1.0 - v) / len(done)
    slow = []
    for jid, _, _, t0, t1 in arrived:
        ref = reference.get(jid)
        stop = t1 if t1 is not None else end
        if ref and stop is not None:
            slow.append((stop - t0) / ref)
    if slow:
        s = np.array(slow)
        out["rms_slowdown"] = float(np.sqrt(np.mean(s**2)))
        out["p90_slowdown"] = float(np.percentile(s, 90))
        out["jain_slowdown"] = float(s.sum() ** 2 / (len(s) * (s**2).sum()))
    return out
