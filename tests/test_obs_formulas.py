"""Every MRCluster-v1 observation feature equals its formula in docs/environment.md.

The expected values are written out here from the page's tables, apart from the
generated builder (``mrgym.envs.observation``), and compared entry by entry at states of
real episodes.  The golden hashes of ``tests/test_golden.py`` say only that the vector
changed; this says which feature is wrong.  Each ratio is checked at states where its
numerator is not zero and where its denominator differs from the ones it could be
confused with (a cluster's map and reduce slots, a job's maps and reduces), so a feature
divided by the wrong count fails here."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from helpers import smaller

import mrgym  # noqa: F401 - registers the environments
from mrgym.config import load_scenario
from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.jobs import MAP

K = 6  # job slots: fewer than ila72's jobs, so that some active jobs get no slot
LOG_4H = math.log1p(4 * 3600.0)


def _lf(x: float, scale: float) -> float:
    """The page's "log-scaled x / s": log(1 + x) / log(1 + s), capped at 1."""
    return 0.0 if x <= 0 else min(1.0, math.log1p(x) / math.log1p(scale))


def _frac(x: float, total: float) -> float:
    return x / total if total else 0.0


def expected(env) -> dict[str, float]:
    """Every feature by the docs' formulas, read from the simulator's state."""
    u = env.unwrapped
    view, vm, kind, slots, mask = u.view, u._vm, u._kind, u._slots, u._mask
    host = vm.host
    vmm, hm = view.vm_metrics(vm), view.host_metrics(host)
    disk, cores = host.disk.capacity, host.type.cores
    workers = view.topology.workers
    map_slots = sum(w.map_slots for w in workers)
    red_slots = sum(w.reduce_slots for w in workers)
    active = view.jobs
    now = view.now
    arrived = [j for j in view.all_jobs if j.arrived_s is not None]
    out = {
        "slot_is_map": float(kind == MAP),
        "slot_is_reduce": float(kind != MAP),
        "free_map_frac": _frac(vm.free_map, vm.map_slots),
        "free_reduce_frac": _frac(vm.free_reduce, vm.reduce_slots),
        "vm_cpu_frac": vmm.cpu_cores / vm.vcpus,
        "vm_read_frac": vmm.read_mbps / disk,
        "vm_write_frac": vmm.write_mbps / disk,
        "host_vm_cpu_frac": hm.vm_cpu_cores / cores,
        "host_dom0_cpu_frac": hm.dom0_cpu_cores / cores,
        "host_disk_util": hm.disk_util,
        "host_disk_streams": _lf(hm.disk_streams, 32),
        "host_virtualized": float(host.virtualized),
        "host_gpu": float(host.type.gpus > 0),
        "host_spot": float(host.is_spot),
        "host_core_speed": host.type.core_speed / 5,
        "host_evicting": float(host.evicting),
        "busy_map_slots": sum(j.running_maps for j in active) / map_slots,
        "busy_reduce_slots": sum(j.running_reduces for j in active) / red_slots,
        "pending_maps": _lf(sum(j.n_pending_maps for j in active), 16 * map_slots),
        "ready_reduces": _lf(sum(j.n_pending_reduces for j in active if j.ready), 16 * red_slots),
        "active_jobs": len(active) / K,
        "jobs_finished": _frac(len(arrived) - len(active), len(arrived)),
        "since_arrival": _lf(now - max(j.arrived_s for j in arrived), 4 * 3600),
    }
    running_of = "running_maps" if kind == MAP else "running_reduces"
    running_all = sum(getattr(j, running_of) for j in active)
    total_weight = sum(j.weight for j in active)
    for i in range(K):
        p = f"job{i}."
        if i >= len(slots):  # an empty slot: all zero
            out.update({n: 0.0 for n in u.feature_names if n.startswith(p)})
            continue
        job = slots[i]
        nm, nr = len(job.maps), len(job.reduces)
        best = view.best_map(job, vm, pick=False) if job.n_pending_maps else None
        level = None if best is None else (OFF_RACK if best[1] is None else best[1])
        n_done, sum_s, sum_cpu = job.stats[MAP][:3]
        fair = job.weight / total_weight
        share = _frac(getattr(job, running_of), running_all)
        w = job.spec.weight
        out.update(
            {
                p + "valid": 1.0,
                p + "maps_pending": job.n_pending_maps / nm,
                p + "maps_running": job.running_maps / nm,
                p + "maps_done": job.maps_done / nm,
                p + "reduces_pending": _frac(job.n_pending_reduces, nr),
                p + "reduces_running": _frac(job.running_reduces, nr),
                p + "reduces_done": job.reduces_done / nr if nr else 1.0,
                p + "reduces_ready": float(job.ready),
                p + "best_node": float(level == NODE),
                p + "best_server": float(level == SERVER),
                p + "best_rack": float(level == RACK),
                p + "best_off_rack": float(level == OFF_RACK),
                p + "share_vs_fair": share / fair / 4 if running_all else 0.0,
                p + "waiting": _lf(now - job.arrived_s, 4 * 3600),
                p + "gpu_gain": _gpu_gain(view, job),
                p + "est_map_time": _lf(sum_s / n_done, 3600) if n_done else 0.0,
                p + "est_cpu_intensity": sum_cpu / sum_s if n_done and sum_s > 0 else 0.0,
                p + "size": _lf(nm, 16 * map_slots),
                p + "weight": w / (1 + w),
                p + "can_speculate": float(mask[3 * i + 2]),
                p + "allowed_here": 1.0,
            }
        )
    return {k: min(1.0, max(0.0, v)) for k, v in out.items()}  # the Box is [0, 1]


def _gpu_gain(view, job) -> float:
    """(MB/s of its finished maps on GPU hosts / on the others - 1) / 4, 0 until both."""
    gpu = {h.type.name for h in view.topology.hosts if h.type.gpus > 0}
    s = {True: 0.0, False: 0.0}
    mb = {True: 0.0, False: 0.0}
    for name, (sec, size) in job.rate_by_type.items():
        s[name in gpu] += sec
        mb[name in gpu] += size
    if min(s.values()) <= 0 or min(mb.values()) <= 0:
        return 0.0
    return ((mb[True] / s[True]) / (mb[False] / s[False]) - 1) / 4


# A ratio's denominator, and what it could be mistaken for: at some checked state the
# feature's value under the wrong denominator must differ from the right one, else a swap
# of the two would pass unnoticed.
def _confusions(env) -> dict[str, float]:
    """Each ratio feature recomputed with a wrong denominator."""
    u = env.unwrapped
    view, vm = u.view, u._vm
    workers = view.topology.workers
    map_slots = sum(w.map_slots for w in workers)
    red_slots = sum(w.reduce_slots for w in workers)
    active = view.jobs
    cores = vm.host.type.cores
    vmm, hm = view.vm_metrics(vm), view.host_metrics(vm.host)
    out = {
        "free_map_frac": _frac(vm.free_map, vm.reduce_slots),
        "free_reduce_frac": _frac(vm.free_reduce, vm.map_slots),
        "vm_cpu_frac": vmm.cpu_cores / cores,  # the host's cores, not the VM's vCPUs
        "host_vm_cpu_frac": hm.vm_cpu_cores / vm.vcpus,
        "busy_map_slots": sum(j.running_maps for j in active) / red_slots,
        "busy_reduce_slots": sum(j.running_reduces for j in active) / map_slots,
        "pending_maps": _lf(sum(j.n_pending_maps for j in active), 16 * red_slots),
        "ready_reduces": _lf(sum(j.n_pending_reduces for j in active if j.ready), 16 * map_slots),
        "active_jobs": len(active) / 8,  # the default job slots, not the env's
        # v0's denominator: every job of the episode, arrived or not
        "jobs_finished": _frac(view.n_arrived - len(active), len(view.all_jobs)),
    }
    for i, job in enumerate(u._slots):
        p = f"job{i}."
        nm, nr = len(job.maps), len(job.reduces)
        out[p + "maps_pending"] = job.n_pending_maps / max(nr, 1)
        out[p + "maps_running"] = job.running_maps / max(nr, 1)
        out[p + "maps_done"] = job.maps_done / max(nr, 1)
        out[p + "reduces_pending"] = job.n_pending_reduces / nm if nr else -1
        out[p + "reduces_done"] = job.reduces_done / nm if nr else -1
        out[p + "size"] = _lf(nm, 16 * red_slots)
    return {k: min(1.0, max(0.0, v)) if v >= 0 else -1.0 for k, v in out.items()}


def _episode(config, steps: int, every: int, **kw):
    """(observation, expected, confusions) at every ``every``-th of ``steps`` steps of a
    deterministic policy that spreads its launches over the legal actions."""
    env = gym.make("MRCluster-v1", config=config, job_slots=K, **kw)
    obs, info = env.reset(seed=3)
    names = env.unwrapped.feature_names
    out = []
    for step in range(steps):
        if step % every == 0:
            out.append((dict(zip(names, obs.tolist())), expected(env), _confusions(env)))
        legal = np.flatnonzero(info["action_mask"])
        obs, _, term, trunc, info = env.step(int(legal[step % len(legal)]))
        if term or trunc:
            break
    return out


# two jobs with more reduces than ila72 has reduce slots: some of a job's reduces finish
# while others still wait, so its reduces_done is between 0 and 1 in a slot
MANY_REDUCES = [
    {"profile": "terasort", "maps": 100, "reduces": 300, "submit_s": 0, "name": "big"},
    {"profile": "wordcount", "maps": 60, "reduces": 150, "submit_s": 20, "name": "b"},
]


@pytest.fixture(scope="module")
def ila72_states():
    """A whole ila72 episode (every 5th of ~2 700 steps), the first 400 steps of a 300-map
    one with speculation on (where can_speculate is sometimes 1), and MANY_REDUCES."""
    many = load_scenario("ila72", {"workload": {"kind": "jobs", "jobs": MANY_REDUCES}})
    return (
        _episode("ila72", 10_000, 5)
        + _episode(smaller("ila72"), 400, 10, speculation=True)
        + _episode(many, 10_000, 5)
    )


@pytest.fixture(scope="module")
def gpu_states():
    # lee-gpu: GPU and other hosts, so the measured GPU gain becomes non-zero
    return _episode("lee-gpu", 10_000, 3)


def _check(states) -> None:
    for got, want, _ in states:
        assert set(got) == set(want)
        for name, value in want.items():
            assert got[name] == pytest.approx(value, rel=1e-5, abs=1e-6), name


def test_every_feature_follows_its_formula(ila72_states, gpu_states):
    _check(ila72_states)
    _check(gpu_states)


def test_the_states_tell_each_ratio_from_a_wrong_denominator(ila72_states, gpu_states):
    """The check above would fail for a feature divided by the wrong count: at some state
    the wrong denominator gives another value (the numerator is not zero and the two
    denominators differ)."""
    told, confusable = set(), set()
    for got, _, wrong in ila72_states + gpu_states:
        for name, value in wrong.items():
            confusable.add(name.split(".", 1)[-1])
            if value >= 0 and abs(got[name] - value) > 1e-3:
                told.add(name.split(".", 1)[-1])
    # every feature with a denominator it could be confused with, 16 of them (the counts
    # and fractions of slots, CPU, pending and running tasks, jobs and sizes)
    assert told == confusable and len(told) >= 16, confusable - told


# the features that divide one count or rate by another (the denominators this file is for)
RATIOS = {
    "free_map_frac",
    "free_reduce_frac",
    "vm_cpu_frac",
    "vm_read_frac",
    "vm_write_frac",
    "host_vm_cpu_frac",
    "host_dom0_cpu_frac",
    "host_disk_streams",
    "host_core_speed",
    "busy_map_slots",
    "busy_reduce_slots",
    "pending_maps",
    "ready_reduces",
    "active_jobs",
    "jobs_finished",
    "since_arrival",
    "maps_pending",
    "maps_running",
    "maps_done",
    "reduces_pending",
    "reduces_running",
    "reduces_done",
    "share_vs_fair",
    "waiting",
    "gpu_gain",
    "est_map_time",
    "est_cpu_intensity",
    "size",
    "weight",
}


def test_the_states_give_every_ratio_a_non_zero_value(ila72_states, gpu_states):
    """Each ratio is non-zero at some checked state (one always 0 there would be checked
    only against 0); gpu_gain on lee-gpu, whose jobs run on GPU hosts and others."""
    seen = set()
    for got, _, _ in ila72_states + gpu_states:
        seen |= {n.split(".", 1)[-1] for n, v in got.items() if v > 0}
    names = {n.split(".", 1)[-1] for n in ila72_states[0][0]}
    assert names >= RATIOS and seen >= RATIOS
