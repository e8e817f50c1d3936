"""Cross-checks of a whole scenario, run by :class:`mrgym.config.schema.Scenario` once
every field is valid: what no single field can say (a host type missing from the catalog,
more replicas than DataNodes, a cluster without a map slot, a workload or a failure rate
over the limits).  Each failure is a :class:`~mrgym.config.errors.CheckError` that names
its key."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mrgym.config.errors import CheckError, key_text, short
from mrgym.config.limits import MAX_FAILURES, MAX_HOSTS, MAX_INTERACTIVE_TICKS, MAX_VMS
from mrgym.sim.jobs import PROFILES
from mrgym.sim.topology import CATALOG
from mrgym.workloads import MAX_JOBS, MAX_TASKS
from mrgym.workloads.paper_mixes import default_reduces, ila_total_maps

if TYPE_CHECKING:
    from mrgym.config.schema import (
        ClusterSpec,
        HdfsSpec,
        HostGroup,
        JobItem,
        Scenario,
        WorkloadSpec,
    )


def check_scenario(sc: Scenario) -> None:
    """Every cross-check, in order; the first that fails raises."""
    _check_catalog(sc.cluster)
    _check_hosts(sc.cluster)
    _check_sizes(sc.cluster, sc.hdfs)
    _check_slots(sc.cluster, sc.workload)
    _check_hdfs(sc.cluster, sc.hdfs)
    _check_network(sc.cluster)
    _check_workload(sc.workload)
    _check_failures(sc)
    _check_interactive(sc)
    _check_time_cap(sc)


def _workers(g: HostGroup) -> int:
    """Worker VMs of one host of the group."""
    return 1 if g.native else g.vms_per_host


def _check_catalog(c: ClusterSpec) -> None:
    for name, t in (c.catalog or {}).items():
        if t.power_max_w < t.power_idle_w:
            raise CheckError(
                f"cluster.catalog.{key_text(name)}.power_max_w",
                f"must be >= power_idle_w ({t.power_idle_w:g}), got {t.power_max_w:g}",
            )


def _check_hosts(c: ClusterSpec) -> None:
    if not c.hosts:  # before the racks check, which would blame cluster.racks
        raise CheckError("cluster.hosts", "must list at least one host group, got []")
    types = set(CATALOG) | set(c.catalog or {})
    for i, g in enumerate(c.hosts):
        if g.native and g.interactive is not None:  # build.py would silently drop it
            raise CheckError(
                f"cluster.hosts.{i}.interactive",
                "needs a virtualized group (native: false): a native host runs no interactive VMs",
            )
        if g.type not in types:
            raise CheckError(
                f"cluster.hosts.{i}.type",
                f"must be one of {short(sorted(types), 200)}, got {short(g.type)}",
            )
        if g.racks and max(g.racks) >= c.racks:
            raise CheckError(
                f"cluster.hosts.{i}.racks",
                f"rack ids must be < cluster.racks={c.racks}, got {short(g.racks)}",
            )
        # a switched-off host holds no HDFS blocks (Lee §4.2: data-less accelerator nodes)
        prov_data = c.provision is not None and c.provision.pool == g.pool and c.provision.datanode
        if g.standby and (g.datanode or prov_data):
            raise CheckError(
                f"cluster.hosts.{i}.standby", "needs a data-less group (datanode: false)"
            )
    total_hosts = sum(g.count for g in c.hosts)
    if total_hosts < c.racks:
        raise CheckError(
            "cluster.racks", f"must be <= the number of hosts ({total_hosts}), got {c.racks}"
        )
    if c.sites > c.racks:
        raise CheckError("cluster.sites", f"must be <= cluster.racks ({c.racks}), got {c.sites}")
    if c.provision is not None:
        pools = sorted({g.pool for g in c.hosts})
        if c.provision.pool not in pools:
            raise CheckError(
                "cluster.provision.pool",
                f"must be the pool of a host group ({short(pools)}), got {short(c.provision.pool)}",
            )
        _check_explicit_hosts(c)


def _check_explicit_hosts(c: ClusterSpec) -> None:
    """``placement: explicit``: every listed index is a host of the provision's pool (host
    indices run over all host groups in order, as build.py lays the hosts out)."""
    prov = c.provision
    if prov is None or prov.hosts is None:
        return
    total = sum(g.count for g in c.hosts)
    in_pool = [g.pool == prov.pool for g in c.hosts for _ in range(g.count)]
    for k, h in enumerate(prov.hosts):
        if h >= total or not in_pool[h]:
            first = next(i for i, ok in enumerate(in_pool) if ok)
            last = max(i for i, ok in enumerate(in_pool) if ok)
            where = f"host indices of pool {prov.pool!r} (within {first}..{last})"
            raise CheckError(f"cluster.provision.hosts.{k}", f"must be one of the {where}, got {h}")


def _check_sizes(c: ClusterSpec, hdfs: HdfsSpec) -> None:
    hosts = sum(g.count for g in c.hosts)
    if hosts > MAX_HOSTS:
        raise CheckError("cluster.hosts", f"at most {MAX_HOSTS:,} hosts in all, got {hosts:,}")
    workers = sum(g.count * _workers(g) for g in c.hosts)
    workers += c.provision.vms if c.provision else 0
    if workers == 0:
        raise CheckError("cluster.hosts", "must provide at least one worker VM, got none")
    extra = sum(
        g.count * g.interactive.vms_per_host
        for g in c.hosts
        if g.interactive is not None and not g.native
    )
    if hdfs.split_architecture:  # one DataNode VM beside the workers of each host
        extra += sum(g.count for g in c.hosts if g.datanode and _workers(g) > 0)
    if workers + extra > MAX_VMS:
        raise CheckError(
            "cluster.hosts",
            f"at most {MAX_VMS:,} VMs in all (workers, DataNodes, interactive), "
            f"got {workers + extra:,}",
        )


def _workload_has_reduces(w: WorkloadSpec) -> bool | None:
    """Whether the workload surely has reduce tasks (None: a trace, unknown until read)."""
    if w.kind == "jobs":
        return any(
            (j.reduces if j.reduces is not None else default_reduces(_profile(j.profile), j.maps))
            > 0
            for j in w.jobs or ()
        )
    if w.kind == "synthetic" and w.profiles:
        return any(default_reduces(_profile(p), 1) > 0 for p, wt in w.profiles.items() if wt > 0)
    if w.kind in ("swim", "rumen"):
        return None
    return True  # the papers' mixes and the default synthetic mix all shuffle


def _check_slots(c: ClusterSpec, w: WorkloadSpec) -> None:
    """A cluster without a map (reduce) slot never finishes a job: it would only idle
    until run.max_sim_time_s."""
    prov = c.provision
    maps = sum(g.count * _workers(g) * g.vm.map_slots for g in c.hosts)
    maps += prov.vms * prov.vm.map_slots if prov else 0
    if maps == 0:
        raise CheckError(
            "cluster.hosts.vm.map_slots", "must be >= 1 on some worker VM, got 0 map slots in all"
        )
    reduces = sum(g.count * _workers(g) * g.vm.reduce_slots for g in c.hosts)
    reduces += prov.vms * prov.vm.reduce_slots if prov else 0
    if reduces == 0 and _workload_has_reduces(w):
        raise CheckError(
            "cluster.hosts.vm.reduce_slots",
            "must be >= 1 on some worker VM: the workload has reduce tasks, got 0 reduce slots",
        )


def _check_hdfs(c: ClusterSpec, hdfs: HdfsSpec) -> None:
    datanodes = sum(
        g.count * (1 if (g.native or hdfs.split_architecture) else g.vms_per_host)
        for g in c.hosts
        if g.datanode
    )
    if c.provision and c.provision.datanode:
        datanodes += c.provision.vms
    if hdfs.replication > datanodes:
        raise CheckError(
            "hdfs.replication",
            f"must be <= the number of DataNodes ({datanodes}), got {hdfs.replication}",
        )


def _check_network(c: ClusterSpec) -> None:
    if c.rack_hops is not None:
        n = c.racks
        if len(c.rack_hops) != n or any(len(r) != n for r in c.rack_hops):
            raise CheckError("cluster.rack_hops", f"must be a {n}x{n} matrix")


def _profile(name: str):
    return PROFILES[name.lower()]


def _check_workload(w: WorkloadSpec) -> None:
    if w.profiles is not None and not any(v > 0 for v in w.profiles.values()):
        raise CheckError("workload.profiles", "must give some profile a weight > 0")
    if w.kind in ("swim", "rumen"):
        _check_trace_path(w)
    if w.kind == "jobs":
        _check_jobs(w.jobs or [])
    if w.kind == "ila-table4":
        maps = ila_total_maps(w)
        if maps > MAX_TASKS:
            raise CheckError(
                "workload.n_jobs",
                f"the mix has {maps:,} map tasks, more than the limit of {MAX_TASKS:,}",
            )


def _check_trace_path(w: WorkloadSpec) -> None:
    if not w.path:
        raise CheckError("workload.path", f"is required for kind {w.kind!r}")
    p = Path(w.path)
    if p.is_dir():
        raise CheckError(
            "workload.path", f"must be a {w.kind} trace file, got a directory {short(w.path)}"
        )
    if not p.is_file():
        raise CheckError("workload.path", f"no such file {short(w.path)}")


def _check_jobs(jobs: list[JobItem]) -> None:
    if not jobs:
        raise CheckError("workload.jobs", "must list at least one job for kind 'jobs'")
    n_jobs = sum(j.repeat or 1 for j in jobs)
    if n_jobs > MAX_JOBS:
        raise CheckError("workload.jobs", f"at most {MAX_JOBS:,} jobs with repeats, got {n_jobs:,}")
    maps = sum(j.maps * (j.repeat or 1) for j in jobs)
    if maps > MAX_TASKS:
        raise CheckError(
            "workload.jobs", f"at most {MAX_TASKS:,} map tasks with repeats, got {maps:,}"
        )
    reduces = sum((j.reduces or 0) * (j.repeat or 1) for j in jobs)
    if reduces > MAX_TASKS:
        raise CheckError(
            "workload.jobs", f"at most {MAX_TASKS:,} reduce tasks with repeats, got {reduces:,}"
        )


def _check_failures(sc: Scenario) -> None:
    """Failures are drawn lazily, but each one is simulated (its tasks killed and re-run,
    its blocks re-replicated): bound how many a run can have, so a tiny MTBF over a long
    horizon is refused instead of running for hours."""
    f = sc.dynamics.failures
    if f is None or not f.mtbf_hours:
        return
    hosts = sum(g.count for g in sc.cluster.hosts)
    expected = hosts * sc.run.max_sim_time_s / (f.mtbf_hours * 3600.0 + f.repair_s)
    if expected > MAX_FAILURES:
        raise CheckError(
            "dynamics.failures.mtbf_hours",
            f"{hosts:,} hosts over run.max_sim_time_s={sc.run.max_sim_time_s:,.0f} would fail "
            f"~{expected:,.0f} times, more than the limit of {MAX_FAILURES:,}; raise the MTBF",
        )


def _check_time_cap(sc: Scenario) -> None:
    """A run shorter than one heartbeat period can end before any VM asks for a task: the
    episode would be empty, and the environment would blame the slots instead."""
    cap, hb = sc.run.max_sim_time_s, sc.cluster.heartbeat_s
    if cap < hb:
        raise CheckError(
            "run.max_sim_time_s",
            f"must be >= cluster.heartbeat_s={hb:g} (tasks start at heartbeats), got {cap:g}",
        )


def _check_interactive(sc: Scenario) -> None:
    """Interactive VMs are never idle: their load is updated every ``update_s`` and their
    SLA checked every ``execution.sample_s`` up to the time cap, jobs or not (each update
    draws noise, so skipping one would change every later result).  Bound both counts, as
    failures are bounded, so that a 1 s update over a 1e8 s cap is refused, not run for
    hours."""
    cap = sc.run.max_sim_time_s
    groups = [(i, g) for i, g in enumerate(sc.cluster.hosts) if g.interactive is not None]
    apps = sum(g.count * g.interactive.vms_per_host for _, g in groups)
    if not apps:
        return
    rates = {i: g.count * g.interactive.vms_per_host / g.interactive.update_s for i, g in groups}
    updates = cap * sum(rates.values())
    if updates > MAX_INTERACTIVE_TICKS:
        i = max(rates, key=rates.__getitem__)
        raise CheckError(
            f"cluster.hosts.{i}.interactive.update_s",
            f"{apps:,} interactive VMs over run.max_sim_time_s={cap:,.0f} would update their "
            f"load ~{updates:,.0f} times, more than the limit of {MAX_INTERACTIVE_TICKS:,}; "
            "raise update_s or lower the time cap",
        )
    checks = apps * cap / sc.execution.sample_s
    if checks > MAX_INTERACTIVE_TICKS:
        raise CheckError(
            "execution.sample_s",
            f"{apps:,} interactive VMs over run.max_sim_time_s={cap:,.0f} would have their SLA "
            f"checked ~{checks:,.0f} times, more than the limit of {MAX_INTERACTIVE_TICKS:,}; "
            "raise sample_s or lower the time cap",
        )
