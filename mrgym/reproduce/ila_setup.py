"""The setups of the ILA claims: each scenario value behind a number, with its source
(:mod:`mrgym.reproduce.setups`; issue "Fidelity III").

ILA §5.1 names Hadoop 0.20.205 ("a modified version of Hadoop 0.20.205"), so a value the
paper leaves open is that version's default where Hadoop has one.  The model's fitted
parameters are listed with the claims they were fitted on (docs/calibration.md).
"""

from __future__ import annotations

from mrgym.reproduce.claims import sources
from mrgym.reproduce.setups import (
    Setting,
    calibrated,
    fixed,
    hadoop,
    measured,
    paper,
    scenario_setup,
)

FIG8 = ("ila-fig8-purefair", "ila-fig8-ila")  # stage C's targets
HADOOP = "Hadoop 0.20.205 (§5.1)"
DISK = measured(
    "a 500 GB 7 200 rpm SATA disk of 2012 (§5.1's 'one 500GB disk'): ~100 MB/s "
    "sequential, the spec sheets' figure"
)

#: ila72's values and their sources (configs/ila72.yaml)
ILA72 = {
    "cluster.hosts.0.count": paper("§5.1: '12 physical servers'"),
    "catalog.xen-12core.cores": paper("§5.1: 'The 6 VMs were configured to compete for 10 cores'"),
    "catalog.xen-12core.disk_mbps": DISK,
    "catalog.xen-12core.nic_gbps": paper("§5.1: 'connected by a 1Gbps Ethernet'"),
    "cluster.hosts.0.vms_per_host": paper("§5.1: 'Each server hosted 6 VMs'"),
    "cluster.hosts.0.vm.vcpus": paper("§5.1: 'each VM was configured with 2 VCPUs'"),
    "cluster.hosts.0.vm.memory_gb": paper("§5.1: 'and 2GB memory'"),
    "cluster.hosts.0.vm.map_slots": paper("§5.1: 'each slave with 2 map slots and 1 reduce slot'"),
    "cluster.hosts.0.vm.reduce_slots": paper("§5.1"),
    "cluster.racks": paper("§5.1: 'The virtual cluster spanned 2 racks'"),
    "cluster.rack_uplink_mbps": paper("§5.1: '1Gbps Ethernet' between the racks"),
    "cluster.rack_aware": paper("§4.2: LASM's rack and off-rack levels need the rack topology"),
    "cluster.heartbeat_s": hadoop(f"{HADOOP}: max(3 s, TaskTrackers / 100 s)"),
    "cluster.oob_heartbeat": hadoop(f"{HADOOP}: mapreduce.tasktracker.outofband.heartbeat false"),
    "hdfs.block_mb": paper("§5.1: 'The HDFS block size was set to 128 MB'"),
    "hdfs.replication": hadoop(f"{HADOOP}: dfs.replication 3"),
    "hdfs.placement": hadoop(f"{HADOOP}: BlockPlacementPolicyDefault"),
    "workload.kind": paper("§5.2 Table 4: the job types and sizes"),
    "workload.n_jobs": paper("§5.2: 'a job submission schedule for 25 jobs'"),
    "workload.mean_interarrival_s": paper("§5.2: inter-arrival 'exponential with a mean of 14 s'"),
    "workload.users": paper(
        "§5.2: Capacity could not 'guarantee each job queue's resource portion' (several "
        "queues); their number is not given: 5, the jobs round-robin"
    ),
    "workload.generator_mb": calibrated(
        "stage C: no output size of TeraGen or RandomWriter in the paper", FIG8
    ),
    **sources.NOISE,
    **sources.VIRT,
    **sources.INTERFERENCE,
    "execution.slow_vm_p": paper(
        "§5.1: a private cluster of Hadoop VMs only, no neighbour to make a VM slow"
    ),
}


def ila72_setup(**extra: tuple) -> tuple[Setting, ...]:
    """ila72's settings, then ``extra`` named values: ``name=(value, source)``."""
    out = scenario_setup("ila72", ILA72)
    return out + tuple(fixed(k, v, s) for k, (v, s) in extra.items())


ILA_PARAMS = {
    "H": (1.0, paper("§4.4: 'We set a static threshold H to 1 by default'")),
    "k": (20.0, paper("§4.4: '20 seconds in our experiments'")),
    "alpha": (0.8, paper("§4.3: 'We set α to 0.8 in this work'")),
    "refit_every": (100, paper("§4.1: 'k is set to 100 in this work'")),
    "waits_s": ("0.5, 5, 5", paper("§4.4: 'level 0 delay ... 0.5 second ... other levels 5'")),
}
DELAY_WAITS = ("5 s node, 5 s rack", paper("§4.2: T_node and T_rack 5 s in 'the latest Hadoop'"))


def ila_sched_setup() -> tuple[Setting, ...]:
    """ila72 under ILA's schedulers: the scenario and ILA's parameters."""
    return ila72_setup(**{f"ila.{k}": v for k, v in ILA_PARAMS.items()}, delay=DELAY_WAITS)


def table1_setup() -> tuple[Setting, ...]:
    """ILA Table 1's two clusters (:func:`mrgym.reproduce.ila_runs.table1_scenario`)."""
    from mrgym.reproduce.ila_runs import table1_scenario

    virt = {
        "cluster.hosts.0.count": paper("§2.3: '24 VMs on 6 physical servers, each with 4 VMs'"),
        "cluster.hosts.0.vms_per_host": paper("§2.3"),
        "cluster.hosts.0.vm.vcpus": paper("§2.2: 'Each slave VM was configured with 3 VCPUs'"),
        "cluster.hosts.0.vm.memory_gb": paper("§2.2: '2GB memory'"),
        "cluster.hosts.0.vm.map_slots": paper("§2.2: '3 map slots and 1 reduce slot'"),
        "cluster.hosts.0.vm.reduce_slots": paper("§2.2"),
        "catalog.xen-12core.cores": paper("§2.2: 'The VMs competed for 10 physical cores'"),
        "catalog.xen-12core.disk_mbps": DISK,
        "cluster.racks": paper("§5.1: 2 racks (the same lab)"),
        "cluster.rack_aware": hadoop(
            f"{HADOOP}: no topology script, every node in /default-rack (the paper names "
            "none; Table 1's 7.2 % off-rack maps need replicas placed without racks: "
            "rack-aware placement with 2 racks leaves none)"
        ),
        "cluster.heartbeat_s": hadoop(HADOOP),
        "cluster.oob_heartbeat": hadoop(HADOOP),
        "hdfs.block_mb": paper("§2.3: 120 map tasks over 12 GB"),
        "hdfs.replication": hadoop(f"{HADOOP}: dfs.replication 3"),
        "workload.jobs.0.maps": paper("§2.3: 'a total of 120 tasks'"),
        "workload.jobs.0.reduces": hadoop(
            "Hadoop 0.20's MapReduce tutorial, 'How Many Reduces?': 0.95 x the reduce slots"
        ),
    }
    phys = {
        "cluster.hosts.0.count": paper("§2.3: '24 physical machines'"),
        "cluster.hosts.0.vm.map_slots": paper("§2.2's slots (one Hadoop configuration)"),
        "cluster.catalog.ila-server.cores": paper(
            "§5.1's servers (the one physical machine the paper describes), native"
        ),
        "cluster.catalog.ila-server.disk_mbps": DISK,
    }
    out = scenario_setup(table1_scenario(True), virt)
    out = tuple(Setting(f"virtual: {s.what}", s.value, s.source) for s in out)
    ph = scenario_setup(table1_scenario(False), phys)
    out += tuple(Setting(f"physical: {s.what}", s.value, s.source) for s in ph)
    return out + (fixed("delay waits", *DELAY_WAITS),)


def host_setup(key: str) -> tuple[Setting, ...]:
    """ILA Fig. 1-2's one server (:func:`mrgym.reproduce.probes.cohosted_probe`)."""
    from mrgym.reproduce import probes

    vm = probes.HOST_VM
    src = paper("§2.2: '5 Xen VMs ... 3 VCPUs, 2GB memory ... 3 map slots and 1 reduce slot'")
    return (
        fixed("VMs on the server", probes.HOST_VMS, src),
        fixed("vCPUs, map slots per VM", f"{vm['vcpus']}, {vm['map_slots']}", src),
        fixed(
            "guest cores, disks", "10, 1", paper("§2.2: '10 physical cores and one shared disk'")
        ),
        fixed("disk MB/s", 100, DISK),
    ) + scenario_setup(
        "ila72",
        {k: v for k, v in sources.INTERFERENCE.items() if k != "execution.slow_vm_p"},
    )


def fig3_setup() -> tuple[Setting, ...]:
    from mrgym.reproduce import probes

    cat = probes.FIG3_CATALOG["ila-fig3"]
    return (
        fixed("VMs, servers", "24 on 12 (2 each)", paper("§2.3: '24 VMs deployed on 12 machines'")),
        fixed("racks", 2, paper("§2.3: 'installed on 2 racks'")),
        fixed("NIC and switch Mbit/s", int(cat["nic_gbps"] * 1000), paper("§2.3: '100 Mbps'")),
        fixed("map input MB", 100, paper("§2.3: 120 maps over 12 GB")),
        fixed(
            "background traffic share of the links",
            0.3,
            calibrated("a choice for 'network contention scenarios' (§2.3)", ("ila-fig3",)),
        ),
    )
