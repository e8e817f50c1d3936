"""Probes of guest memory and compressed input, each mechanism alone, on vs off.

* ``probe-guest-cache`` (``execution.guest_page_cache``; mrgym/sim/writeback.py): one Xen
  server with two 2 GB worker VMs running a CPU-bound PiEst job and a map-only
  RandomWriter job (128 MB blocks, one replica).  With one page cache per host the writes
  fill the pooled budget of both VMs' memory (20 % of 4 GB); with one per guest (as Xen
  has, HybridMR §II's virtual cluster) each VM's burst fills only its own budget less its
  running tasks' JVM heaps, and the rest is throttled to the disk.
* ``probe-compressed`` (``execution.compressed_input``; mrgym/sim/attempts.py run_map):
  one native m1.large (Lee §4.4.1's core node) and gridmix2's webdataScan (block-
  compressed input, ~4x: mrgym/sim/jobs.py) alone: the maps read a quarter of the
  records' MB from disk and spend inflate CPU on all of them.

Both are in isolation: everything else is the default model.  Verdicts test the
mechanism's direction and size (criterion in each ``why``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mrgym.config import load_scenario
from mrgym.reproduce.claims import Result, claim, finish
from mrgym.reproduce.stats import figure
from mrgym.runner import build_simulation
from mrgym.sim.params import ALL_OFF

# one Xen server, two worker VMs of 2 GB with two map slots each, replication 1
_XEN = {
    "name": "probe-guest-cache",
    "cluster": {
        "racks": 1,
        "hosts": [
            {
                "count": 1,
                "type": "xen-12core",
                "vms_per_host": 2,
                "vm": {"vcpus": 2, "memory_gb": 2, "map_slots": 2, "reduce_slots": 0},
            }
        ],
    },
    "hdfs": {"replication": 1, "block_mb": 128},
}


def _guest_run(on: bool, seed: int, n_maps: int) -> dict:
    """A writer job beside a CPU-bound job on the two VMs (module docstring)."""
    jobs = [
        {"profile": "piest", "maps": 2, "reduces": 0, "name": "cpu"},
        {"profile": "randomwriter", "maps": n_maps, "reduces": 0, "name": "writer"},
    ]
    # every other mechanism off: this one alone
    over = {
        "workload": {"kind": "jobs", "jobs": jobs},
        "execution": {**ALL_OFF, "guest_page_cache": on},
    }
    sim = build_simulation(load_scenario(_XEN, over), "fifo", seed)
    sim.run()
    writer = next(j for j in sim.jobs if j.spec.name == "writer")
    guests = sim.caches[0].guests
    caches = list(guests.values()) if guests else [sim.caches[0]]
    return {
        "writer_jct_s": float(writer.finish_s - writer.arrived_s),
        "absorbed_mb": float(sum(c.absorbed_mb for c in caches)),
        "throttled_mb": float(sum(c.throttled_mb for c in caches)),
    }


def _off_on(run, seeds: list[int], n_maps: int) -> tuple[dict, dict]:
    """``run(on, seed, n_maps)``'s numbers averaged over ``seeds``, mechanism off then on."""
    mean = []
    for on in (False, True):
        rs = [run(on, s, n_maps) for s in seeds]
        mean.append({k: float(np.mean([r[k] for r in rs])) for k in rs[0]})
    return mean[0], mean[1]


@claim(
    paper="hybridmr",
    key="probe-guest-cache",
    where="§II-III (Xen guests), model probe",
    what="one page cache per guest VM vs one per host: a VM's write burst no longer fills "
    "its neighbour's memory",
    paper_value="no paper number (a probe of the simulator's mechanism)",
    default_seeds=3,
)
def probe_guest_cache(seeds: list[int], out: Path, quick: bool = False) -> Result:
    n_maps = 4 if quick else 8
    off, on = _off_on(_guest_run, seeds, n_maps)
    ok = on["absorbed_mb"] < off["absorbed_mb"] and on["throttled_mb"] > off["throttled_mb"]
    ours = (
        f"absorbed {off['absorbed_mb']:.0f} -> {on['absorbed_mb']:.0f} MB, throttled "
        f"{off['throttled_mb']:.0f} -> {on['throttled_mb']:.0f} MB, writer JCT "
        f"{off['writer_jct_s']:.1f} -> {on['writer_jct_s']:.1f} s (per host -> per guest)"
    )
    why = (
        "Criterion: with a cache per guest the same burst is absorbed less and throttled "
        "more (its budget is 20 % of one 2 GB VM less its tasks' heaps, not of both VMs)"
    )
    fig, ax = figure(4.8, 3.0)
    x = np.arange(2)
    ax.bar(x - 0.2, [off["absorbed_mb"], on["absorbed_mb"]], 0.4, label="absorbed MB")
    ax.bar(x + 0.2, [off["throttled_mb"], on["throttled_mb"]], 0.4, label="throttled MB")
    ax.set_xticks(x, ["cache per host", "cache per guest"])
    ax.set_ylabel("MB written")
    return finish(
        fig,
        ax,
        out,
        "probe-guest-cache",
        "Guest page caches: one VM's write burst",
        f"One Xen server, two 2 GB VMs; {n_maps} RandomWriter maps; seeds: {len(seeds)}.",
        ours=ours,
        verdict="reproduced" if ok else "not reproduced",
        why=why,
        data={"off": off, "on": on},
    )


_M1 = {
    "name": "probe-compressed",
    "cluster": {
        "racks": 1,
        "hosts": [
            {
                "count": 1,
                "type": "m1.large",
                "native": True,
                "vm": {"map_slots": 2, "reduce_slots": 1},
            }
        ],
    },
    "hdfs": {"replication": 1, "block_mb": 64},
}


def _compressed_run(on: bool, seed: int, n_maps: int) -> dict:
    jobs = [{"profile": "webdatascan", "maps": n_maps, "reduces": 1}]
    # every other mechanism off: this one alone
    over = {
        "workload": {"kind": "jobs", "jobs": jobs},
        "execution": {**ALL_OFF, "compressed_input": on},
    }
    sim = build_simulation(load_scenario(_M1, over), "fifo", seed)
    sim.run()
    job = sim.jobs[0]
    atts = [a for t in job.maps for a in t.attempts if a.outcome == "success"]
    return {
        "jct_s": float(job.finish_s - job.arrived_s),
        "disk_read_mb": float(sum(a.read_mb for a in atts)),
        "map_cpu_s": float(sum(a.cpu_s for a in atts)),
    }


@claim(
    paper="lee",
    key="probe-compressed",
    where="§4.4.1 (gridmix2 input), model probe",
    what="block-compressed input: maps read 1/ratio of the records from disk and spend "
    "inflate CPU on all of them",
    paper_value="no paper number (a probe of the simulator's mechanism)",
    default_seeds=3,
)
def probe_compressed(seeds: list[int], out: Path, quick: bool = False) -> Result:
    n_maps = 4 if quick else 16
    off, on = _off_on(_compressed_run, seeds, n_maps)
    ratio = off["disk_read_mb"] / on["disk_read_mb"] if on["disk_read_mb"] else float("inf")
    ok = 3.5 < ratio < 4.5 and on["map_cpu_s"] > off["map_cpu_s"]
    ours = (
        f"disk MB read {off['disk_read_mb']:.0f} -> {on['disk_read_mb']:.0f} ({ratio:.2f}x "
        f"less), map CPU {off['map_cpu_s']:.0f} -> {on['map_cpu_s']:.0f} core-s, JCT "
        f"{off['jct_s']:.0f} -> {on['jct_s']:.0f} s (uncompressed -> compressed)"
    )
    why = (
        "Criterion: the disk reads shrink by gridmix2's ratio (4.0x, within 3.5-4.5x) and "
        "the maps' CPU grows by the inflate cost"
    )
    fig, ax = figure(4.8, 3.0)
    x = np.arange(2)
    ax.bar(x - 0.2, [off["disk_read_mb"], on["disk_read_mb"]], 0.4, label="disk MB read")
    ax.bar(x + 0.2, [off["map_cpu_s"], on["map_cpu_s"]], 0.4, label="map CPU (core-s)")
    ax.set_xticks(x, ["uncompressed", "compressed"])
    return finish(
        fig,
        ax,
        out,
        "probe-compressed",
        "Compressed input: gridmix2 webdataScan on one m1.large",
        f"{n_maps} maps of 64 MB blocks; seeds: {len(seeds)}.",
        ours=ours,
        verdict="reproduced" if ok else "not reproduced",
        why=why,
        data={"off": off, "on": on, "ratio": ratio},
    )
