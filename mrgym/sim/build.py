"""Provisioning: turn a scenario's cluster section into a :class:`Topology`.

Hosts of all groups are laid into racks in order, filling racks evenly (a group may name
its racks).  Each host runs ``vms_per_host`` worker VMs (one worker directly on the
hardware for a ``native`` host), optional interactive VMs, and in the split architecture
one DataNode VM per host beside data-less TaskTracker VMs (HybridMR §II).  A ``provision``
section instead places a number of VMs onto the hosts of a group round-robin, at random or
on the hosts it lists (``explicit``: a placement chosen outside, e.g. TARA, Lee §3.2;
docs/model.md §2: provisioning is pluggable).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mrgym.sim.params import ModelParams
from mrgym.sim.topology import CATALOG, MBIT, VM, Host, InstanceType, Link, Rack, Site, Topology


def model_params(scenario: Any) -> ModelParams:
    """The fluid model's constants: the defaults with the scenario's ``execution:``."""
    return ModelParams(**scenario.execution.model_dump())


def instance_catalog(cluster: Any) -> dict[str, InstanceType]:
    cat = dict(CATALOG)
    for name, t in (cluster.catalog or {}).items():
        cat[name] = InstanceType(name=name, **t.model_dump())
    return cat


def build_topology(
    cluster: Any, hdfs: Any, params: ModelParams, rng: np.random.Generator
) -> Topology:
    """The cluster section as a :class:`Topology`: sites, racks, hosts in order with their
    VMs, provisioned VMs, rack uplinks sized, and every worker's slots free."""
    cat = instance_catalog(cluster)
    sites = _sites(cluster)
    racks = _racks(cluster, sites)
    n_racks = len(racks)
    total_hosts = sum(g.count for g in cluster.hosts)
    hosts: list[Host] = []
    vms: list[VM] = []
    apps: list[tuple[VM, Any]] = []
    i = 0
    for g in cluster.hosts:
        for k in range(g.count):
            if g.racks:
                rack = racks[g.racks[k % len(g.racks)]]
            else:
                rack = racks[i * n_racks // total_hosts]
            h = _host(len(hosts), cat[g.type], rack, g, params)
            rack.hosts.append(h)
            hosts.append(h)
            _host_vms(h, g, hdfs, vms, apps)
            i += 1

    if cluster.provision is not None:
        _provision(cluster.provision, hosts, vms, rng)
    _size_uplinks(cluster, racks)
    for vm in vms:
        vm.free_map = vm.map_slots
        vm.free_reduce = vm.reduce_slots
    topo = Topology(sites, racks, hosts, vms, cluster.rack_hops)
    topo.interactive_specs = apps
    return topo


def _sites(cluster: Any) -> list[Site]:
    """The sites, each with its WAN links when there are several (one site has none)."""
    n_sites = cluster.sites
    sites = []
    for s in range(n_sites):
        wan = cluster.wan_mbps * MBIT if n_sites > 1 else None
        sites.append(
            Site(
                s,
                f"site{s}",
                Link(f"site{s}.wan_up", wan, background=cluster.background) if wan else None,
                Link(f"site{s}.wan_down", wan, background=cluster.background) if wan else None,
            )
        )
    return sites


def _racks(cluster: Any, sites: list[Site]) -> list[Rack]:
    """The racks, spread over the sites in order, with uplinks of no capacity yet: their
    size may depend on the hosts (``_size_uplinks``)."""
    n_racks, n_sites = cluster.racks, len(sites)
    racks: list[Rack] = []
    for r in range(n_racks):
        site = sites[r * n_sites // n_racks]
        rack = Rack(
            r,
            f"rack{r}",
            site,
            Link(f"rack{r}.up", 0.0, background=cluster.background),
            Link(f"rack{r}.down", 0.0, background=cluster.background),
        )
        site.racks.append(rack)
        racks.append(rack)
    return racks


def _host(index: int, t: InstanceType, rack: Rack, g: Any, params: ModelParams) -> Host:
    """Host ``index`` of group ``g`` on ``rack``: its disk (seek-thrashing) and its NICs,
    attached to it so that its writes share them as a disk's."""
    name = f"h{index}"
    h = Host(
        index,
        name,
        t,
        rack,
        g.pool,
        not g.native,
        disk=None,
        nic_up=Link(f"{name}.nic_up", t.nic_gbps * 1000 * MBIT),
        nic_down=Link(f"{name}.nic_down", t.nic_gbps * 1000 * MBIT),
    )
    h.disk = Link(
        f"{name}.disk",
        t.disk_mbps,
        thrash=params.disk_thrash,
        host=h,
        floor=params.disk_thrash_floor,
    )
    h.nic_up.attach(h)
    h.nic_down.attach(h)
    return h


def _host_vms(h: Host, g: Any, hdfs: Any, vms: list[VM], apps: list[tuple[VM, Any]]) -> None:
    """Add host ``h``'s VMs (group ``g``) to it and to ``vms``: its workers (one on the
    hardware for a native host), a DataNode VM in the split architecture, and its
    interactive VMs (also to ``apps``, with their load's spec)."""
    name = h.name
    t = h.type
    n_workers = 1 if g.native else g.vms_per_host
    data_on_workers = g.datanode and not hdfs.split_architecture
    for _ in range(n_workers):
        vcpus = t.cores if g.native else g.vm.vcpus
        vm = VM(
            len(vms),
            f"{name}.vm{len(h.vms)}",
            h,
            vcpus,
            g.vm.map_slots,
            g.vm.reduce_slots,
            data_on_workers,
            memory_gb=g.vm.memory_gb,
        )
        h.vms.append(vm)
        vms.append(vm)
    if g.datanode and hdfs.split_architecture and n_workers > 0:
        dn = VM(len(vms), f"{name}.dn", h, 1.0, 0, 0, True, memory_gb=g.vm.memory_gb)
        h.vms.append(dn)
        vms.append(dn)
    if g.interactive is not None and not g.native:
        for _ in range(g.interactive.vms_per_host):
            iv = VM(
                len(vms),
                f"{name}.web{len(h.vms)}",
                h,
                g.interactive.vcpus,
                0,
                0,
                False,
                memory_gb=0.0,  # not a Hadoop VM: its cache takes no Hadoop writes
            )
            h.vms.append(iv)
            vms.append(iv)
            apps.append((iv, g.interactive))


def _size_uplinks(cluster: Any, racks: list[Rack]) -> None:
    """Rack uplinks: explicit Mbit/s (cycled over racks, e.g. TARA's 800..200) or the sum
    of the rack's host NICs divided by the oversubscription ratio."""
    uplinks = cluster.rack_uplink_mbps
    for r, rack in enumerate(racks):
        if uplinks is not None:
            cap = (uplinks[r % len(uplinks)] if isinstance(uplinks, list) else uplinks) * MBIT
        else:
            cap = sum(h.nic_up.capacity for h in rack.hosts) / cluster.oversubscription
        rack.uplink_up.capacity = cap
        rack.uplink_down.capacity = cap


def _provision(prov: Any, hosts: list[Host], vms: list[VM], rng: np.random.Generator) -> None:
    """Place ``prov.vms`` worker VMs onto the hosts of pool ``prov.pool``."""
    targets = [h for h in hosts if h.pool == prov.pool]
    if not targets:  # the schema refuses this; a hand-built spec must not divide by zero
        pools = sorted({h.pool for h in hosts})
        raise ValueError(
            f"cluster.provision.pool: must be the pool of a host group {pools}, got {prov.pool!r}"
        )
    if prov.placement == "explicit":  # VM k on host prov.hosts[k] (TARA's choice)
        bad = [i for i in prov.hosts if not 0 <= i < len(hosts) or hosts[i].pool != prov.pool]
        if bad:  # the schema refuses this; a hand-built spec must not place VMs elsewhere
            raise ValueError(
                f"cluster.provision.hosts: must be host indices of pool {prov.pool!r}, got {bad[0]}"
            )
        order = [hosts[i] for i in prov.hosts]
    elif prov.placement == "random":
        order = [
            targets[j]
            for j in rng.choice(len(targets), size=prov.vms, replace=len(targets) < prov.vms)
        ]
    else:  # round-robin over racks first, so consecutive VMs land on different racks
        by_rack: dict[int, list[Host]] = {}
        for h in targets:
            by_rack.setdefault(h.rack.id, []).append(h)
        columns = list(by_rack.values())
        order = []
        k = 0
        while len(order) < prov.vms:
            col = columns[k % len(columns)]
            order.append(col[(k // len(columns)) % len(col)])
            k += 1
    for h in order:
        vm = VM(
            len(vms),
            f"{h.name}.vm{len(h.vms)}",
            h,
            prov.vm.vcpus,
            prov.vm.map_slots,
            prov.vm.reduce_slots,
            prov.datanode,
            memory_gb=prov.vm.memory_gb,
        )
        h.vms.append(vm)
        vms.append(vm)
