"""The default observation: one normalized float32 vector in [0, 1].

Layout: VM_FEATURES, then GLOBAL_FEATURES, then JOB_FEATURES for each of the K job slots
(zero-padded, with a validity flag).  Everything comes from what Hadoop's master could see:
monitoring, job/HDFS metadata, topology, measured demand of finished tasks.
"""

from __future__ import annotations

import math

import numpy as np

from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.jobs import MAP

VM_FEATURES = (
    "slot_is_map",
    "slot_is_reduce",
    "free_map_frac",
    "free_reduce_frac",
    "vm_cpu_frac",
    "vm_read_frac",
    "vm_write_frac",
    "host_vm_cpu_frac",
    "host_dom0_cpu_frac",
    "host_disk_util",
    "host_virtualized",
    "host_gpu",
    "host_spot",
    "host_core_speed",
    "host_evicting",
)
GLOBAL_FEATURES = (
    "busy_map_slots",
    "busy_reduce_slots",
    "pending_maps",
    "ready_reduces",
    "active_jobs",
    "jobs_completed",
    "time",
)
JOB_FEATURES = (
    "valid",
    "maps_pending",
    "maps_running",
    "maps_done",
    "reduces_pending",
    "reduces_running",
    "reduces_done",
    "reduces_ready",
    "best_node",
    "best_server",
    "best_rack",
    "best_off_rack",
    "share_vs_fair",
    "waiting",
    "gpu_affinity",
    "est_map_time",
    "est_cpu_intensity",
    "size",
    "weight",
    "can_speculate",
    "allowed_here",
)


def _log_frac(x: float, scale: float) -> float:
    if x <= 0.0:
        return 0.0
    return min(1.0, math.log1p(x) / math.log1p(scale))


class ObservationBuilder:
    def __init__(self, job_slots: int):
        self.k = job_slots
        self.size = len(VM_FEATURES) + len(GLOBAL_FEATURES) + job_slots * len(JOB_FEATURES)

    def zeros(self) -> np.ndarray:
        return np.zeros(self.size, dtype=np.float32)

    def build(
        self, sim, vm, slot_kind: str, slots: list, max_time: float, mask: np.ndarray | None = None
    ) -> np.ndarray:
        if vm is None:
            return self.zeros()
        view = sim.view
        host = vm.host
        vmm = view.vm_metrics(vm)
        hm = view.host_metrics(host)
        disk = max(host.disk.capacity, 1e-9)
        cores = max(host.type.cores, 1e-9)
        v = [
            slot_kind == MAP,
            slot_kind != MAP,
            vm.free_map / vm.map_slots if vm.map_slots else 0.0,
            vm.free_reduce / vm.reduce_slots if vm.reduce_slots else 0.0,
            vmm.cpu_cores / max(vm.vcpus, 1e-9),
            vmm.read_mbps / disk,
            vmm.write_mbps / disk,
            hm.vm_cpu_cores / cores,
            hm.dom0_cpu_cores / cores,
            hm.disk_util,
            host.virtualized,
            host.type.gpus > 0,
            host.type.spot or host.pool == "spot",
            host.type.core_speed / 5.0,
            host.evicting,
        ]
        consts = getattr(sim, "_obs_consts", None)
        if consts is None:  # static per episode
            workers = sim.topo.workers
            consts = sim._obs_consts = (
                sum(w.map_slots for w in workers) or 1,
                sum(w.reduce_slots for w in workers) or 1,
            )
        map_slots, red_slots = consts
        run_m = run_r = 0
        total_w = 0.0
        for j in sim.active_list:
            run_m += j.running_maps
            run_r += j.running_reduces
            total_w += j.weight
        total_maps = sim.total_maps or 1
        n_jobs = len(sim.jobs) or 1
        g = [
            run_m / map_slots,
            run_r / red_slots,
            _log_frac(sim.n_pending_maps, total_maps),
            _log_frac(sim.n_ready_reduces, total_maps),
            len(sim.active_list) / self.k,
            (n_jobs - len(sim.active_list) - sim.n_unarrived()) / n_jobs,
            sim.env.now / max_time,
        ]
        vals = v + g
        now = sim.env.now
        total_w = total_w or 1.0
        is_map = slot_kind == MAP
        running_all = (run_m if is_map else run_r) or 0
        log_t = math.log1p(max_time)
        log_m = math.log1p(total_maps)
        log_h = math.log1p(3600.0)
        inv_fair = 1.0 / total_w
        for k, job in enumerate(slots):
            static = job.obs_static
            if static is None:  # features fixed for the job's life
                nm = len(job.maps) or 1
                nr = len(job.reduces)
                w = job.spec.weight
                static = job.obs_static = (
                    1.0 / nm,
                    1.0 / nr if nr else 0.0,
                    nr,
                    (job.profile.gpu_speedup - 1.0) / 4.0,
                    math.log1p(nm) / log_m,
                    w / (1.0 + w),
                    w,
                )
            inm, inr, nr, gpu, size, wfrac, weight = static
            level = -1
            if job.n_pending_maps:
                best = sim.best_map(job, vm, pick=False)
                if best is not None:
                    level = OFF_RACK if best[1] is None else best[1]
            running = job.running_maps if is_map else job.running_reduces
            fair = weight * inv_fair
            n_done, sum_s, sum_cpu, _ = job.stats["map"]
            wait = now - job.arrived_s
            vals += (
                1.0,
                job.n_pending_maps * inm,
                job.running_maps * inm,
                job.maps_done * inm,
                job.n_pending_reduces * inr,
                job.running_reduces * inr,
                job.reduces_done * inr if nr else 1.0,
                job.ready,
                level == NODE,
                level == SERVER,
                level == RACK,
                level == OFF_RACK,
                (running / running_all) / fair * 0.25 if running_all else 0.0,
                math.log1p(wait) / log_t if wait > 0 else 0.0,
                gpu,
                math.log1p(sum_s / n_done) / log_h if n_done else 0.0,
                sum_cpu / sum_s if n_done and sum_s > 0 else 0.0,
                size,
                wfrac,
                mask[3 * k + 2] if mask is not None else False,
                # always 1 since the slots skip jobs whose pools exclude this VM; kept so
                # that the observation layout of MRCluster-v0 does not change
                job.allowed_pools is None or sim._pool_ok(job, vm),
            )
        out = np.zeros(self.size, dtype=np.float32)
        out[: len(vals)] = vals
        np.clip(out, 0.0, 1.0, out=out)
        return out
