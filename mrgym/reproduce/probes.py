"""Small, single-effect experiments on the simulator: the probes behind the model-effect
claims (:mod:`mrgym.reproduce.claims.effects`, :mod:`mrgym.reproduce.claims.platforms`) and ``tests/test_effects.py``.

Each probe builds a tiny scenario that isolates one mechanism of the fluid model
(docs/model.md §2) — CPU sharing, disk thrash, locality, virtualization overhead, GPU
speedup — and returns a time.  Task-duration noise is off where the paper normalizes a
task to itself running alone, so a ratio measures the mechanism and nothing else; the seed
still changes block placement (and, in the cluster-sized probes, the schedule).
"""

from __future__ import annotations

from typing import Any

from mrgym.runner import build_simulation, run_sim
from mrgym.sim.hdfs import Hdfs
from mrgym.sim.scheduler import (
    DECLINE,
    MAP,
    Decision,
    DecisionContext,
    Scheduler,
    launch_map,
    launch_reduce,
)


class Pinned(Scheduler):
    """Runs job j's maps only on the VMs ``pins[j]`` (any VM when absent) and, when
    ``levels[j]`` is set, only where the map's locality equals that level (0 node,
    1 server, 2 rack, 3 off-rack)."""

    name = "pinned"

    def __init__(
        self, pins: dict[int, set[int]] | None = None, levels: dict[int, int] | None = None
    ):
        self.pins = pins or {}
        self.levels = levels or {}

    def decide(self, ctx: DecisionContext) -> Decision:
        vm = ctx.vm
        for job in ctx.jobs:
            pins = self.pins.get(job.id)
            if pins is not None and vm.id not in pins:
                continue
            if ctx.slot_kind != MAP:
                if ctx.can_launch(job, "reduce"):
                    return launch_reduce(job.id)
                continue
            if not ctx.can_launch(job, MAP):
                continue
            want = self.levels.get(job.id)
            if want is None:
                best = ctx.best_map(job)
                if best is not None:
                    return launch_map(job.id, best[0].index)
                continue
            for t in ctx.view.pending_maps(job):
                if t.block is not None and Hdfs.locality(t.block, vm) == want:
                    return launch_map(job.id, t.index)
        return DECLINE


def cluster(hosts: list[dict], racks: int = 1, **kw: Any) -> dict:
    """A cluster section: host groups on ``racks`` racks, 1 s heartbeats."""
    c: dict[str, Any] = {"racks": racks, "hosts": hosts, "heartbeat_s": 1.0}
    c.update(kw)
    return c


def scenario(
    cluster_: dict,
    jobs: list[dict],
    replication: int = 1,
    params: dict | None = None,
    **kw: Any,
) -> dict:
    """A scenario dict with an explicit job list and no luck: no task-duration noise
    (neither the lognormal draw nor its heavy tail) and no persistently slow VMs, all on by
    default.  A slow VM is luck of the same kind, drawn per VM instead of per attempt: left
    on, a one-map probe measures whether its few VMs drew slow (a Fig. 3 rack read from a
    slow VM's disk reads 2x slow) rather than the mechanism; and the papers' probe setups
    had no co-located neighbours to make a VM slow (ILA §2.3: "sufficient resource to
    eliminate interference"; HybridMR Fig. 1(a): one VM per host).  ``params``: further
    ``execution`` fields (``ModelParams``), e.g. a calibration's trial values."""
    sc: dict[str, Any] = {
        "name": "probe",
        "cluster": cluster_,
        "hdfs": {"replication": replication, "block_mb": kw.pop("block_mb", 128)},
        "workload": {"kind": "jobs", "jobs": jobs},
        "execution": {
            "noise_sigma": 0.0,
            "noise_tail_p": 0.0,
            "slow_vm_p": 0.0,
            **(params or {}),
        },
    }
    sc.update(kw)
    return sc


def map_time(sc: dict, sched: Scheduler, job: int = 0, seed: int = 0) -> float:
    """Run time of the one map attempt of ``job`` (the probe job has a single map)."""
    r = run_sim(sc, sched, seed)
    (a,) = [x for x in r.task_log if x.kind == "map" and x.job == job]
    return a.end - a.start


# ILA §2.3 / Fig. 3: 24 VMs on 12 servers in 2 racks behind a 100 Mbit/s switch
FIG3_CATALOG = {"ila-fig3": {"cores": 10, "core_speed": 1.0, "disk_mbps": 100, "nic_gbps": 0.1}}
LOCALITY_LEVELS = ("node", "server", "rack", "off_rack")


def locality_map_time(level: int, seed: int = 0, params: dict | None = None) -> float:
    """Time of one 100 MB TeraSort map launched at locality ``level`` (0..3) on the ILA
    Fig. 3 cluster (background traffic takes 30 % of the links)."""
    sc = scenario(
        cluster(
            [{"count": 12, "type": "ila-fig3", "vms_per_host": 2}],
            racks=2,
            rack_uplink_mbps=100,
            background=0.3,
            catalog=FIG3_CATALOG,
        ),
        [{"profile": "terasort", "maps": 1, "reduces": 0, "input_mb": 100}],
        params=params,
    )
    return map_time(sc, Pinned(levels={0: level}), seed=seed)


# ILA §2.2 / Figs. 1-2: "5 Xen VMs deployed on a physical server ... Each slave VM was
# configured with 3 VCPUs, 2GB memory and with 3 map slots and 1 reduce slot. The VMs
# competed for 10 physical cores and one shared disk": the probe on VM 0, background on
# VMs 1-4 (at most 12 maps, 1 200 % of a core)
HOST_VMS = 5
HOST_VM = {"vcpus": 3, "memory_gb": 2.0, "map_slots": 3, "reduce_slots": 1}
HOST_CORES = 10  # xen-12core's guest cores
MAX_BG = (HOST_VMS - 1) * HOST_VM["map_slots"]  # background maps the co-hosted VMs hold


def _cohosted(
    probe: str, background: str, bg: int, bg_mb: float, params: dict | None
) -> tuple[dict, Pinned]:
    """The scenario and placement of :func:`cohosted_probe`."""
    if bg > MAX_BG:
        raise ValueError(f"bg: at most {MAX_BG} background maps fit ILA §2.2's host, got {bg}")
    jobs: list[dict] = [
        {"name": "probe", "profile": probe, "maps": 1, "reduces": 0, "submit_s": 5.0}
    ]
    pins: dict[int, set[int]] = {0: {0}}
    if bg:
        jobs.insert(
            0,
            {
                "name": "bg",
                "profile": background,
                "maps": bg,
                "reduces": 0,
                "input_mb": bg * bg_mb,
                "submit_s": 0.0,
            },
        )
        pins = {0: set(range(1, HOST_VMS)), 1: {0}}
    host = [{"count": 1, "type": "xen-12core", "vms_per_host": HOST_VMS, "vm": dict(HOST_VM)}]
    return scenario(cluster(host), jobs, params=params), Pinned(pins=pins)


def cohosted_probe(
    probe: str, background: str, bg: int, bg_mb: float, seed: int = 0, params: dict | None = None
) -> float:
    """Map time of a one-map ``probe`` job on VM 0 while ``bg`` (at most :data:`MAX_BG`)
    long maps of ``background`` (``bg_mb`` each, so they outlast the probe) run on the 4
    co-hosted VMs of ILA §2.2's 10-core Xen host; the probe arrives at 5 s, when they are
    all running."""
    sc, sched = _cohosted(probe, background, bg, bg_mb, params)
    return map_time(sc, sched, job=1 if bg else 0, seed=seed)


TRAFFIC_SAMPLE_S = 0.25  # the co-hosted traffic's sampling period


def cohosted_traffic(
    probe: str, background: str, bg: int, bg_mb: float, seed: int = 0, params: dict | None = None
) -> tuple[float, float]:
    """:func:`cohosted_probe`'s map time and the co-hosted VMs' aggregated I/O traffic
    (read + write MB/s, what Xentop shows per VM, summed) averaged over the probe's life:
    ILA Fig. 2's x-axis ("the aggregated I/O traffic from co-hosted VMs", §2.2).  The
    sampler only reads the monitors, so the map time equals :func:`cohosted_probe`'s."""
    sc, sched = _cohosted(probe, background, bg, bg_mb, params)
    sim = build_simulation(sc, sched, seed)
    others = sim.topo.workers[1:HOST_VMS]
    samples: list[tuple[float, float]] = []

    def sampler():
        while True:
            yield sim.env.timeout(TRAFFIC_SAMPLE_S)
            ms = [sim.view.vm_metrics(v) for v in others]
            samples.append((sim.env.now, sum(m.read_mbps + m.write_mbps for m in ms)))

    sim.env.process(sampler())
    sim.run()
    job = 1 if bg else 0
    (a,) = [x for x in sim.attempts if x.task.kind == "map" and x.task.job.id == job]
    during = [mb for t, mb in samples if a.start_s <= t <= a.end_s]
    return a.end_s - a.start_s, (sum(during) / len(during) if during else 0.0)


def cpu_probe(bg: int, seed: int = 0, params: dict | None = None) -> float:
    """CPU-bound probe (KMeans) beside ``bg`` CPU-bound PiEst maps (one core each)."""
    return cohosted_probe("kmeans", "piest", bg, 2000, seed, params)


def io_probe(bg: int, seed: int = 0, params: dict | None = None) -> float:
    """I/O-bound probe (Sort) beside ``bg`` disk-bound Grep maps (one disk stream each)."""
    return cohosted_probe("sort", "grep", bg, 20000, seed, params)


def io_probe_traffic(bg: int, seed: int = 0, params: dict | None = None) -> tuple[float, float]:
    """:func:`io_probe`'s time and its co-hosted VMs' I/O traffic (MB/s)."""
    return cohosted_traffic("sort", "grep", bg, 20000, seed, params)


def virt_jct(profile: str, native: bool, seed: int = 0, params: dict | None = None) -> float:
    """Mean JCT of one 32-map ``profile`` job on 8 two-core hosts, native or as one Xen VM
    per host (same slots and vCPUs): HybridMR Fig. 1(a)'s comparison."""
    g = {
        "count": 8,
        "type": "opteron-2core",
        "native": native,
        "vms_per_host": 1,
        "vm": {"vcpus": 2, "map_slots": 2, "reduce_slots": 1},
    }
    sc = scenario(
        cluster([g], racks=2, rack_uplink_mbps=1000),
        [{"profile": profile, "maps": 32}],
        replication=2,
        params=params,
    )
    return run_sim(sc, "dl-sched", seed).metrics["mean_jct_s"]


LEE_JOBS: dict[str, dict] = {
    "crypto": {
        "name": "crypto",
        "profile": "crypto-gpu",
        "maps": 128,
        "reduces": 0,
        "input_mb": 2048,
    },
    "sort": {"name": "sort", "profile": "sort", "maps": 64, "reduces": 4},
}


def lee_jct(job: str, gpu: bool, seed: int = 0) -> float:
    """JCT of Lee's Crypto or Sort job alone on the two-node ``lee-gpu`` cluster, the
    second node a cg1.4xlarge (GPU) or a cc1.4xlarge (the same without GPUs)."""
    import mrgym

    sc = mrgym.load_scenario(
        "lee-gpu",
        {
            "workload.jobs": [LEE_JOBS[job]],
            "cluster.hosts.1.type": "cg1.4xlarge" if gpu else "cc1.4xlarge",
        },
    )
    return run_sim(sc, "dl-sched", seed).metrics["mean_jct_s"]
