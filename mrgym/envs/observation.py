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
    return min(1.0, math.log1p(max(0.0, x)) / math.log1p(scale))


class ObservationBuilder:
    def __init__(self, job_slots: int):
        self.k = job_slots
        self.size = len(VM_FEATURES) + len(GLOBAL_FEATURES) + job_slots * len(JOB_FEATURES)

    def zeros(self) -> np.ndarray:
        return np.zeros(self.size, dtype=np.float32)

    def build(self, sim, vm, slot_kind: str, slots: list, max_time: float) -> np.ndarray:
        out = self.zeros()
        if vm is None:
            return out
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
        workers = sim.topo.workers
        map_slots = sum(w.map_slots for w in workers) or 1
        red_slots = sum(w.reduce_slots for w in workers) or 1
        run_m = sum(j.running_maps for j in sim.active_list)
        run_r = sum(j.running_reduces for j in sim.active_list)
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
        i = len(VM_FEATURES)
        out[:i] = v
        out[i : i + len(g)] = g
        i += len(g)
        now = sim.env.now
        total_w = sum(j.weight for j in sim.active_list) or 1.0
        running_all = (run_m if slot_kind == MAP else run_r) or 0
        for job in slots:
            out[i : i + len(JOB_FEATURES)] = self._job(
                sim, view, job, vm, slot_kind, now, max_time, total_w, running_all, total_maps
            )
            i += len(JOB_FEATURES)
        np.clip(out, 0.0, 1.0, out=out)
        return out

    def _job(self, sim, view, job, vm, slot_kind, now, max_time, total_w, running_all, total_maps):
        nm = len(job.maps) or 1
        nr = len(job.reduces)
        best = sim.best_map(job, vm) if job.n_pending_maps else None
        level = best[1] if best is not None else -1
        running = job.running_maps if slot_kind == MAP else job.running_reduces
        share = running / running_all if running_all else 0.0
        fair = job.weight / total_w
        st = view.job_stats(job, "map")
        allowed = job.allowed_pools is None or sim._pool_ok(job, vm)
        return (
            1.0,
            job.n_pending_maps / nm,
            job.running_maps / nm,
            job.maps_done / nm,
            job.n_pending_reduces / nr if nr else 0.0,
            job.running_reduces / nr if nr else 0.0,
            job.reduces_done / nr if nr else 1.0,
            job.ready,
            level == NODE,
            level == SERVER,
            level == RACK,
            level == OFF_RACK or (best is not None and level is None),
            min(share / fair, 4.0) / 4.0 if fair else 0.0,
            _log_frac(now - job.arrived_s, max_time),
            min(job.profile.gpu_speedup - 1.0, 4.0) / 4.0,
            _log_frac(st["mean_s"], 3600.0) if st else 0.0,
            min(1.0, st["mean_cpu_s"] / st["mean_s"]) if st and st["mean_s"] > 0 else 0.0,
            _log_frac(nm, total_maps),
            job.weight / (1.0 + job.weight),
            sim.has_speculation_target(job, slot_kind, vm),
            allowed,
        )
