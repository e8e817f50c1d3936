"""Probe claim of the variability mechanisms of issue 34 (``mrgym/sim/params.py``): per-attempt
noise on every phase (``noise_phases: all``), its heavy tail (Mantri, OSDI'10; Dolly, NSDI'13:
outliers are heavy-tailed) and persistently slow VMs (LATE, OSDI'08, on EC2; Bobtail,
NSDI'13: a VM's slowness is a property of its placement), on vs off with the values
``params.VARIABILITY_PROPOSED`` suggests.

``probe-variability``: one big TeraSort-like job alone on a small virtual cluster (6 Xen
hosts x 4 VMs), PureFair without speculation (so that no backup hides a straggler); the
dispersion of its map durations, p90/p50 and p99/p50, with the mechanisms off (today's
log-normal compute noise) and on.  The anchor is native: the Hadoop Rumen 19-job trace of a
production cluster, pooled over its 5 641 maps of jobs with >= 10 maps, has p90/p50 1.17
and p99/p50 1.86; a virtualized cluster should show more (LATE's EC2 measurements).  The
``paper`` is ILA, whose §5.2 blames Table 1's locality loss on uneven task times in a
virtual cluster.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mrgym.registry import make
from mrgym.reproduce import probes
from mrgym.reproduce.claims import Result, claim, finish
from mrgym.reproduce.stats import figure
from mrgym.runner import run_sim
from mrgym.sim.params import ALL_OFF
from mrgym.sim.params import VARIABILITY_PROPOSED as PROPOSED

# the Rumen trace's native dispersion (pooled maps of jobs with >= 10 maps)
NATIVE_P90, NATIVE_P99 = 1.17, 1.86
HOSTS, VMS = 6, 4


def map_dispersion(task_log, job: int = 0) -> tuple[float, float]:
    """p90/p50 and p99/p50 of ``job``'s successful map attempts' durations."""
    d = np.array(
        [
            r.end - r.start
            for r in task_log
            if r.kind == "map" and r.job == job and r.outcome == "success"
        ]
    )
    med = float(np.median(d))
    return float(np.percentile(d, 90)) / med, float(np.percentile(d, 99)) / med


def pooled_dispersion(task_log, min_maps: int = 100) -> tuple[float, float, int]:
    """p90 and p99 of every successful map's duration over its job's median, pooled over
    the jobs with >= ``min_maps`` successful maps (the Rumen anchor's statistic: 1.17 and
    1.86 natively), and the number of maps pooled.  For fitting the noise parameters."""
    by_job: dict[int, list[float]] = {}
    for r in task_log:
        if r.kind == "map" and r.outcome == "success":
            by_job.setdefault(r.job, []).append(r.end - r.start)
    rel = [np.array(d) / np.median(d) for d in by_job.values() if len(d) >= min_maps]
    if not rel:
        raise ValueError(f"min_maps: no job has >= {min_maps} successful maps")
    x = np.concatenate(rel)
    return float(np.percentile(x, 90)), float(np.percentile(x, 99)), int(x.size)


def _scenario(maps: int, execution: dict) -> dict:
    g = {"count": HOSTS, "type": "xen-12core", "vms_per_host": VMS}
    job = {"name": "big", "profile": "terasort", "maps": maps, "reduces": 0}
    job["input_mb"] = maps * 128.0
    sc = probes.scenario(probes.cluster([g]), [job], replication=3)
    sc["execution"] = dict(execution)  # the model's default noise (probes turn it off)
    return sc


def dispersion(maps: int, execution: dict, seeds: list[int]) -> tuple[float, float]:
    """Mean over seeds of the big job's map-duration p90/p50 and p99/p50."""
    vals = [
        map_dispersion(
            run_sim(_scenario(maps, execution), make("fair", speculation=False), s).task_log
        )
        for s in seeds
    ]
    p90, p99 = np.mean(np.array(vals), axis=0)
    return float(p90), float(p99)


@claim(
    paper="ila",
    key="probe-variability",
    where="probe (§5.2; LATE, Mantri, Dolly, Bobtail)",
    what="map-duration dispersion of one big job on a virtual cluster, variability "
    "mechanisms (noise on all phases, heavy tail, slow VMs) on vs off",
    paper_value="native Rumen trace: p90/p50 1.17, p99/p50 1.86; a virtual cluster "
    "shows more (LATE on EC2)",
    default_seeds=3,
)
def probe_variability(seeds: list[int], out: Path, quick: bool = False) -> Result:
    maps = 96 if quick else 240
    res = {
        "off": dispersion(maps, dict(ALL_OFF), seeds),
        "on": dispersion(maps, {**ALL_OFF, **PROPOSED}, seeds),
    }
    (off90, off99), (on90, on99) = res["off"], res["on"]
    more = on90 > off90 and on99 > off99
    ok = more and on90 > NATIVE_P90 and on99 > NATIVE_P99
    verdict = "reproduced" if ok else ("same direction" if more else "not reproduced")
    ours = f"p90/p50 off {off90:.2f} -> on {on90:.2f}; p99/p50 off {off99:.2f} -> on {on99:.2f}"
    why = (
        "reproduced if, with the mechanisms on, both ratios exceed the native trace's (1.17, "
        "1.86) and their values off; same direction if they only exceed the values off. "
        f"One TeraSort job of {maps} maps alone on {HOSTS} Xen hosts x {VMS} VMs, PureFair "
        "without speculation; on = params.VARIABILITY_PROPOSED (proposed, not fitted)"
    )
    fig, ax = figure()
    x = np.arange(2)
    ax.bar(x - 0.25, [off90, off99], 0.25, label="mechanisms off")
    ax.bar(x, [on90, on99], 0.25, label="on (proposed values)")
    ax.bar(x + 0.25, [NATIVE_P90, NATIVE_P99], 0.25, color="0.6", label="Rumen trace (native)")
    ax.set_xticks(x, ["p90/p50", "p99/p50"])
    ax.set_ylabel("map duration / job median")
    return finish(
        fig,
        ax,
        out,
        "probe-variability",
        "Map-duration dispersion, variability on vs off",
        f"One big job on a {HOSTS * VMS}-VM virtual cluster; seeds: {len(seeds)}.",
        ours=ours,
        verdict=verdict,
        why=why,
        data={"maps": maps, "off": list(res["off"]), "on": list(res["on"]), "proposed": PROPOSED},
    )
