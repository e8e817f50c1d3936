"""Sources the PNA, HybridMR and Lee claims' setups share (:mod:`mrgym.reproduce.setups`):
the defaults of the Hadoop versions those papers name, and the model's fitted parameters.

Each paper names its Hadoop version: PNA §III 1.2.1, HybridMR §IV 0.22.0, Lee §2.3 0.18.3
(ch. 3, Cloudera's distribution, §3.3.2) and 0.20.2 (ch. 4); Lee ch. 5 ran Google's
MapReduce.  Where a paper is silent, a value is that version's default, read from its
source:

- heartbeat interval, ``JobTracker.getNextHeartbeatInterval``: 0.18-0.19 max(TaskTrackers
  / 50 + 1 s, 5 s) (``MRConstants``: ``HEARTBEAT_INTERVAL_MIN`` = 5 s,
  ``CLUSTER_INCREMENT`` = 50); 0.20-0.22 max(ceil(TaskTrackers / 100) s, 3 s); 1.1.0 on
  max(TaskTrackers / 100 s, 0.3 s) (MAPREDUCE-1906, "The default minimum heartbeat interval
  has been dropped from 3 seconds to 300ms", release notes of 1.1.0 and 0.23.0; 1.2.1's
  ``MRConstants.HEARTBEAT_INTERVAL_MIN`` = 300);
- no out-of-band heartbeat: MAPREDUCE-270 came in 0.21, off by default
  (``mapreduce.tasktracker.outofband.heartbeat`` = false) in 0.22 and 1.x;
- ``mapred.reduce.slowstart.completed.maps`` = 0.05; speculative execution of maps and
  reduces on; 2 map and 2 reduce slots per TaskTracker
  (``mapred.tasktracker.{map,reduce}.tasks.maximum``); ``dfs.block.size`` 64 MB;
  ``dfs.replication`` 3; the default block placement (writer, another rack, the second's
  rack);
- the FairScheduler of 1.x (``contrib/fairscheduler``): locality delay computed as
  min(15 s, 1.5 x heartbeat) for node and rack (``autoComputeLocalityDelay``),
  ``mapred.fairscheduler.assignmultiple`` true (every free slot of a heartbeat).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from mrgym.reproduce.setups import (
    Setting,
    Source,
    calibrated,
    hadoop,
    measured,
    scenario_setup,
)

# Hadoop's defaults that do not depend on the version (0.18-1.2)
SLOWSTART = "mapred.reduce.slowstart.completed.maps = 0.05"
SLOTS = "mapred.tasktracker.map.tasks.maximum = 2, mapred.tasktracker.reduce.tasks.maximum = 2"
BLOCK = "dfs.block.size = 64 MB"
REPLICATION = "dfs.replication = 3"
PLACEMENT = "the default block placement: the writer, a node on another rack, one on that rack"


def _heartbeat_rule(version: str) -> tuple[str, Callable[[int], float]]:
    """``version``'s heartbeat rule: its text and the interval (s) it gives for N trackers."""
    if version.startswith(("0.18", "0.19")):
        return "max(TaskTrackers / 50 + 1 s, 5 s)", lambda n: max(n // 50 + 1, 5)
    if version.startswith(("0.20", "0.21", "0.22")):
        return "max(ceil(TaskTrackers / 100) s, 3 s)", lambda n: max(math.ceil(n / 100), 3)
    # 1.1.0 and later 1.x
    return "max(TaskTrackers / 100 s, 0.3 s) (MAPREDUCE-1906, 1.1.0)", lambda n: max(n / 100, 0.3)


def heartbeat_s(version: str, trackers: int) -> float:
    """The heartbeat interval (s) of Hadoop ``version`` with ``trackers`` TaskTrackers."""
    return _heartbeat_rule(version)[1](trackers)


def heartbeat(version: str, trackers: int) -> Source:
    """The source of a heartbeat interval: ``version``'s rule at ``trackers``."""
    rule, interval = _heartbeat_rule(version)
    return hadoop(
        f"Hadoop {version}: {rule} = {interval(trackers):g} s for {trackers} "
        "TaskTrackers (JobTracker.getNextHeartbeatInterval)"
    )


def oob(version: str) -> Source:
    """No out-of-band heartbeats in ``version``."""
    if version.startswith(("0.18", "0.19", "0.20")):
        return hadoop(f"Hadoop {version}: none (MAPREDUCE-270 came in 0.21)")
    return hadoop(f"Hadoop {version}: mapreduce.tasktracker.outofband.heartbeat = false")


def defaults(version: str, *what: str) -> Source:
    """``version``'s defaults ``what`` (:data:`SLOWSTART`, :data:`SLOTS`, ...)."""
    return hadoop(f"Hadoop {version}: " + "; ".join(what))


# The model's fitted parameters (docs/calibration.md, "The fit"): the stages and what they
# were fitted on.  A validation claim lists those that act on its cluster.
_STAGE_A = (
    "stage A: Rumen trace map-duration dispersion (p90/p50, p99/p50) and Lee §5.2's "
    "log-normal task durations"
)
_STAGE_B = "stage B: HybridMR Fig. 1(a)'s overhead bands"
_STAGE_C = (
    "stage C: ILA Fig. 8's two distributions, PureFair's (a constraint) and ILA's own, "
    "ILA Fig. 1-3 as penalties"
)
_FIG1A = tuple(
    f"hybridmr-fig1a-{a}" for a in ("twitter", "wordcount", "distgrep", "sort", "piest", "kmeans")
)
STAGE_C_ON = ("ila-fig8-purefair", "ila-fig8-ila", "ila-fig1", "ila-fig2", "ila-fig3")
NOISE = {
    "execution.noise_sigma": calibrated(_STAGE_A),
    "execution.noise_tail_p": calibrated(_STAGE_A),
    "execution.noise_tail_alpha": calibrated(_STAGE_A),
    "execution.task_jvm_start_s": measured(
        "a child JVM a task (mapred.job.reuse.jvm.num.tasks = 1, Hadoop 0.18-1.x), 'around "
        "a second' to start (T. White, Hadoop: The Definitive Guide, 'Task JVM Reuse')"
    ),
}
VIRT = {
    "execution.virt_cpu_overhead": calibrated(_STAGE_B, _FIG1A),
    "execution.virt_io_overhead": calibrated(_STAGE_B, _FIG1A),
}
INTERFERENCE = {
    "execution.credit_overcommit": calibrated(_STAGE_C, STAGE_C_ON),
    "execution.membw_alpha": calibrated(_STAGE_C, STAGE_C_ON),
    "execution.credit_coupling": calibrated(_STAGE_C, STAGE_C_ON),
    "execution.dom0_core_s_per_mb": calibrated(_STAGE_C, STAGE_C_ON),
    "execution.disk_thrash": calibrated(_STAGE_C, STAGE_C_ON),
    "execution.slow_vm_p": calibrated(
        "off: no neighbour outside the scenario makes a VM slow; co-located tasks' "
        "interference is modelled by its causes (docs/model.md)"
    ),
}

PROFILE = calibrated(
    "the model's profile table (mrgym.sim.jobs), not fitted: CPU per MB by rules of thumb "
    "(an I/O-bound 128 MB map takes 5-10 s on the reference core, ILA §5.6's 10 s tasks; "
    "CPU-bound ones 25-50 s), output ratios by the application"
)


def profiles(names, fields=("map_cpu_s_per_mb", "map_output_ratio")) -> dict[str, Source]:
    """Setup keys of the profile fields ``fields`` of the applications ``names``."""
    return {f"profile.{n}.{f}": PROFILE for n in names for f in fields}


def model(scenario: Any, virtual: bool, overrides: dict | None = None) -> tuple[Setting, ...]:
    """The fitted parameters acting on ``scenario``: the native variability always, the
    virtualization overheads and co-location interference on a ``virtual`` cluster."""
    keys = {**NOISE, **(VIRT | INTERFERENCE if virtual else {})}
    return scenario_setup(scenario, keys, overrides)


# --- Lee ch. 4 (Hadoop 0.20.2, §2.3) on EC2, Table 4.1 ------------------------------------
LEE4 = "0.20.2"  # Lee §2.3: "we use Hadoop version ... 0.20.2 in Chapter 4"
TABLE41 = "Table 4.1: EC2 instances as of June 2011 (cores, CU, $/h, I/O class)"


def gpu_speedup() -> Setting:
    """Crypto's GPU speed-up: the model's value, set from Lee Fig. 4.11 (its calibration)."""
    from mrgym.reproduce.setups import fixed
    from mrgym.sim.jobs import get_profile

    return fixed(
        "profile.crypto-gpu.gpu_speedup",
        get_profile("crypto-gpu").gpu_speedup,
        calibrated("set from Fig. 4.11's 2x: (1 + 3) / (1 + 1) = 2", ("lee-fig4.11",)),
    )


def lee_gpu_setup(*extra) -> tuple[Setting, ...]:
    """The values behind the claims on ``lee-gpu`` (Lee §4.4.2), then ``extra``."""
    from mrgym.reproduce.setups import fixed, measured, paper

    keys = {
        "cluster.hosts.0.type": paper("§4.4.2: 'two nodes ... all cc1.4xlarge instances'"),
        "cluster.hosts.1.type": paper("§4.4.2: 'we replaced a node with a cg1.4xlarge'"),
        "catalog.cc1.4xlarge.cores": paper(TABLE41),
        "catalog.cc1.4xlarge.core_speed": paper(TABLE41 + ": 33.5 CU / 8 cores"),
        "catalog.cg1.4xlarge.gpus": measured("AWS's cg1.4xlarge: 2 x NVIDIA Tesla M2050"),
        "catalog.cc1.4xlarge.nic_gbps": measured(
            "AWS's Cluster Compute instances (2010): 10 Gigabit Ethernet; Table 4.1: "
            "'very high' I/O"
        ),
        "catalog.cc1.4xlarge.disk_mbps": calibrated("UNSOURCED: the catalog's value, not fitted"),
        "cluster.hosts.0.vm.map_slots": defaults(LEE4, SLOTS),
        "cluster.hosts.0.vm.reduce_slots": defaults(LEE4, SLOTS),
        "cluster.heartbeat_s": heartbeat(LEE4, 2),
        "cluster.oob_heartbeat": oob(LEE4),
        "hdfs.replication": defaults(LEE4, REPLICATION + ", capped by the 2 DataNodes"),
        "hdfs.block_mb": defaults(LEE4, BLOCK),
        "execution.reduce_slowstart": defaults(LEE4, SLOWSTART),
        **profiles(("crypto-gpu", "sort")),
    }
    return (
        *scenario_setup("lee-gpu", keys),
        fixed(
            "jobs",
            "Crypto 64 maps of 16 MB of words, no reduce; Sort 64 maps of one block, 4 reduces",
            calibrated("UNSOURCED: §4.4.2 gives no sizes"),
        ),
        *extra,
        *model("lee-gpu", virtual=False),
    )
