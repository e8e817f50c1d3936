"""Model constants of the execution model, in one table with their sources.

Every number the fluid model uses lives here; a scenario's ``execution:`` section may
override any field.  Units: seconds, MB, MB/s, cores.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelParams:
    """The model's constants.  The fitted ones (``noise_sigma``, ``noise_tail_*``,
    ``virt_*_overhead``, ``credit_overcommit``, ``membw_alpha``, ``credit_coupling``,
    ``dom0_core_s_per_mb``, ``disk_thrash``) are ``mrgym calibrate``'s result, rounded to 4 significant
    digits (docs/calibration.md; docs/reproduction/calibration.json, which a test ties
    them to); the others state their sources."""

    # --- Disk -------------------------------------------------------------------------
    # Aggregate throughput of one physical disk with n concurrent streams is
    # disk_mbps * (floor + (1 - floor) * exp(-disk_thrash * (n - 1))): seek thrashing makes
    # each extra stream cost more than its fair share, so the slowdown of an I/O-bound task
    # grows exponentially with co-hosted I/O streams (HybridMR Fig. 6c), down to the disk's
    # random-access throughput (the floor, ~20 % of sequential for a 7200 rpm disk serving
    # 64 KB requests), so heavy load never collapses to zero.  The decay is fitted
    # (docs/calibration.md, stage C), the floor stated.  The fit makes it nearly a
    # fair-share disk: a steeper decay makes the co-hosted traffic fall as streams are
    # added, where ILA §2.2 Fig. 2 has the slowdown grow with that traffic (stage C's
    # ila-fig2-traffic constraint).
    disk_thrash: float = 0.002749
    disk_thrash_floor: float = 0.2
    # Writes go through the page cache (Linux write-back, writeback.py): a write returns
    # once its data is in memory, and the kernel's flusher writes dirty pages back in
    # large sorted batches — one sequential stream per disk, however many writers.  A
    # host may hold dirty data up to this fraction of its Hadoop VMs' memory (Linux
    # vm.dirty_ratio, default 20 % since 2.6.22; JVM heaps are not subtracted); beyond
    # it writers are throttled to the disk (balance_dirty_pages).  Reads are not cached
    # (MapReduce input is read once).  0: no write cache.
    dirty_ratio: float = 0.2
    # Guest memory (writeback.py): False = one page cache per physical host (its Hadoop
    # VMs' budgets pooled); True = one per guest VM, as under Xen, whose budget is
    # dirty_ratio of the guest's dirtyable memory: its memory less its balloon and less
    # task_heap_mb per running task (Hadoop 1 mapred.child.java.opts default -Xmx200m;
    # Linux applies vm.dirty_ratio to free + reclaimable memory, not to JVM heaps).
    guest_page_cache: bool = True
    task_heap_mb: float = 200.0
    # --- CPU --------------------------------------------------------------------------
    # Dom0 CPU (cores) consumed per active I/O stream of a virtualized host: every guest
    # I/O request is served by Dom0 (ILA §3.1, "Handling a large number of I/O requests
    # ... will consume substantial CPU resources in Dom0").
    dom0_cores_per_stream: float = 0.1
    # Multiplicative slowdown per co-running compute phase on the same host
    # (cache/memory-bandwidth contention).  Small, so a CPU-bound task shows "no
    # significant slowdown until the background demand reaches the capacity" (ILA Fig. 1).
    corunner_penalty: float = 0.005
    # Contention below the cores (cpu.py; Mars et al., Bubble-Up, MICRO 2011; Delimitrou &
    # Kozyrakis, Paragon, ASPLOS 2013): co-located phases slow each other through the
    # shared last-level cache and memory bandwidth before the cores are full, by an amount
    # that depends on the co-runners' pressure and the victim's sensitivity (profile fields
    # mem_pressure, mem_sensitivity).  A phase slows by 1 + membw_alpha * sensitivity *
    # u / (1 - min(u, 0.9)), u = the other phases' pressure / (membw_capacity x cores): the
    # M/M/1 queueing delay of a loaded memory controller.  0: off.
    membw_alpha: float = 2.079
    # pressure units the host's memory system serves per core (a co-runner at full
    # pressure on one core uses 1 unit)
    membw_capacity: float = 0.8
    # Dom0 as its own CPU pool (cpu.py; ILA §3.1; Ongaro, Cox & Rixner, VEE 2008): > 0 gives
    # Dom0 this many cores, pinned outside the guests' cores, and every MB of guest I/O of a
    # virtualized host costs dom0_core_s_per_mb core-seconds of it, so a saturated Dom0
    # caps the host's I/O (its streams share dom0_cores / dom0_core_s_per_mb MB/s fairly);
    # dom0_cores_per_stream is then unused.  0: Dom0's demand joins the host's pool as above.
    dom0_cores: float = 1.0
    dom0_core_s_per_mb: float = 0.003006
    # The credit scheduler's coupling of I/O to CPU (Ongaro et al., VEE 2008): with more runnable
    # vCPUs than cores, a domain woken by an I/O completion waits for a time slice behind
    # CPU-bound domains, so each request takes longer.  A guest I/O stream's rate is divided
    # by 1 + credit_coupling x sum over its virtualized end hosts of max(0, runnable
    # vCPUs / cores - 1), runnable = CPU demand rounded to whole vCPUs.  0: off.
    credit_coupling: float = 0.7146
    # vCPU overcommit under the credit scheduler (cpu.py): when a virtualized host's
    # runnable CPU demand exceeds its cores, every compute phase runs slower than its fair
    # share of the cores by 1 + credit_overcommit x excess, excess = demand / cores - 1.
    # Xen's credit scheduler time-slices over-committed vCPUs in 30 ms quanta: a guest's
    # threads wait for a descheduled sibling vCPU (lock-holder preemption, Uhlig et al.,
    # VM'04; a JVM's safepoints), and each switch refills caches and TLBs, so a guest loses
    # more than its share (Kang et al., HPDC'11, ILA's ref. [16]: Xen's scheduler slows
    # MapReduce).  ILA §2.2 Fig. 1 and §4.1 eq. 1: past the cores, a CPU-bound task's time
    # grows exponentially, not in proportion, with the co-hosted demand.  0: off (fair
    # share only).  Fitted (docs/calibration.md, stage C).
    credit_overcommit: float = 14.8
    # --- Virtualization ---------------------------------------------------------------
    # Extra time of a compute phase / an I/O stream on a virtualized host, scaled by the
    # job profile's virt_sensitivity.  Generic benchmarks: ~5 % computation and ~15 % I/O
    # overhead (HybridMR §I citing [10]); with these, I/O-bound jobs end 7-24 % and
    # CPU-bound jobs < 8 % slower than native (HybridMR Fig. 1a), see tests.  That fit is
    # on one VM per host (HybridMR's setup); co-hosted VMs add their interference to it.
    virt_cpu_overhead: float = 0.03921
    virt_io_overhead: float = 0.2958
    # Reading a co-hosted VM's block goes through the hypervisor's memory copy: as fast as
    # local (ILA §2.3, Fig. 3 "approximately the same time"), a few percent slower.
    server_read_penalty: float = 0.05
    # --- MapReduce (Hadoop 1 defaults) ------------------------------------------------
    # Every attempt runs in a child JVM of its own (mapred.job.reuse.jvm.num.tasks = 1, the
    # default of Hadoop 0.18-1.x), whose start-up (class loading, JIT warm-up) costs about a
    # second of CPU before the task's own work (Tom White, Hadoop: The Definitive Guide,
    # "Task JVM Reuse": "the overhead of starting a new JVM for each task is around a
    # second").  Reference core-seconds, folded into the attempt's compute phase (the same
    # work, one event less), not stretched by its noise.  0: no start-up cost.
    task_jvm_start_s: float = 1.0
    # Which of a job's pending maps a slot gets once a scheduler picked the job:
    # "hadoop" (Hadoop 0.20/1.x JobInProgress.obtainNewMapTask, lsap §III.A): a node-local
    # task, else a rack-local one (Hadoop does not know VMs, so a co-hosted block is just
    # rack-local), else any — the first pending one of that level; "nodegroup": the same
    # with the server (node group) level before the rack (Hadoop's virtualization
    # extensions, HADOOP-8468); "lookahead": nodegroup order, and among the first 8 of a
    # level the block with the fewest replicas on other idle VMs (no Hadoop does this;
    # mrgym <= 0.1's default).
    task_choice: str = "hadoop"
    # mapred.reduce.slowstart.completed.maps
    reduce_slowstart: float = 0.05
    # mapred.reduce.parallel.copies
    parallel_copies: int = 5
    # mapred.map.max.attempts / mapred.reduce.max.attempts: a task whose attempts fail this
    # many times fails its job.  Attempts killed by a lost node or a backup copy do not
    # count (Hadoop 1 marks them KILLED, not FAILED).
    max_task_attempts: int = 4
    # A map whose input block has no live replica asks the NameNode again
    # dfs.client.max.block.acquire.failures = 3 times, 3 s apart (Hadoop 1 DFSClient
    # chooseDataNode), then fails with BlockMissingException.
    block_acquire_failures: int = 3
    block_retry_s: float = 3.0
    # --- Task-duration noise (Lee ch. 5: phase durations are log-normal) ---------------
    # sigma of log(multiplier); mean of the multiplier is 1.
    noise_sigma: float = 0.0009973
    # Independent multipliers drawn per task at reset: attempt k uses draw k % this, so a
    # speculative or re-executed copy gets different (but policy-independent) luck.
    noise_draws_per_task: int = 4
    # Which phases the multiplier stretches: "compute" (the compute phase only) or "all"
    # (also the attempt's own I/O streams: a map's read and write, a reduce's shuffle copies
    # and HDFS write, each flow's rate divided by it when it is > 1: a flow never exceeds its
    # fair share of a link).  On a virtualized cluster a straggler
    # is as often slow in its I/O as in its CPU: co-located VMs contend for disk and network
    # (LATE, Zaharia et al. OSDI'08; Mantri, OSDI'10: contention is a main cause).
    noise_phases: str = "all"
    # Heavy tail of the noise: with probability noise_tail_p an attempt's draw is further
    # multiplied by a Pareto(noise_tail_alpha) factor >= 1 (x_m = 1).  Outlier durations in
    # production clusters are heavy-tailed (Mantri, OSDI'10; Dolly, NSDI'13: the slowest
    # task of a phase runs several times the median).  Drawn from the "tail" stream at reset, so
    # every policy sees the same outliers.  0: off (the draws stay log-normal).
    noise_tail_p: float = 0.09917
    noise_tail_alpha: float = 2.37
    # --- Persistently slow VMs -------------------------------------------------------
    # Each VM of a virtualized host is slow with probability slow_vm_p for the whole
    # episode: its compute phases and its attempts' I/O streams run slow_vm_factor x slower.
    # A VM's slowness is a persistent property of its placement, not transient noise
    # (Bobtail, Xu et al. NSDI'13: co-scheduled CPU-bound neighbours under Xen; LATE measured
    # a spread of per-VM I/O throughput of about 2x on EC2).  Native hosts never
    # are.  Drawn from the "slowvm" stream at reset and hidden from schedulers: only its
    # effect shows in monitoring.  Off by default: the neighbours that make a VM slow are
    # other tenants', outside the scenario, and the papers' clusters are private (a
    # co-located Hadoop task's interference is modelled by its cause, cpu.py and the
    # disk).  A scenario of a shared cloud sets a share and factor bounded by a
    # measurement of VM-to-VM variability.  slow_vm_p = 0 (or slow_vm_factor = 1): off.
    slow_vm_p: float = 0.0
    slow_vm_factor: float = 2.0
    # --- Compressed input (gridmix2's block-compressed SequenceFiles) -------------------
    # On: a map whose profile has input_compression r > 1 reads input_mb / r from disk and
    # network and spends decompress_cpu_s_per_mb per MB of records (jobs.py).  False:
    # every map reads its records uncompressed.
    compressed_input: bool = True
    # --- Monitoring -------------------------------------------------------------------
    # Period of the metric sampler (fairness over time, interactive response time).
    sample_s: float = 10.0


DEFAULT_PARAMS = ModelParams()

# The settings that turn each mechanism of docs/model.md §2 off (the model before it).  The
# probe claims (mrgym reproduce's probe-* rows) run with every one of them off but the one
# they show, so that each mechanism is seen in isolation.
MECHANISMS_OFF: dict[str, dict[str, object]] = {
    "variability": {"noise_phases": "compute", "noise_tail_p": 0.0},
    "overcommit": {"credit_overcommit": 0.0},
    "disk_thrash": {"disk_thrash": 0.0},
    "membw": {"membw_alpha": 0.0},
    "dom0": {"dom0_cores": 0.0},
    "credit": {"credit_coupling": 0.0},
    "guest_memory": {"guest_page_cache": False},
    "compressed_input": {"compressed_input": False},
    "jvm_start": {"task_jvm_start_s": 0.0},
}
ALL_OFF: dict[str, object] = {k: v for d in MECHANISMS_OFF.values() for k, v in d.items()}

# Demonstration values of the variability mechanisms for probe-variability, within the
# sources' bounds (Mantri and Dolly: outliers are a few percent of tasks and run several
# times the median; LATE: co-located VMs' I/O throughput differs by a factor of about 2).
# The tail is heavier than the fitted defaults' (docs/calibration.md) so that the probe
# shows it; the slow VMs at LATE's ~2x spread (15 % of VMs 2x slow; off by default).
VARIABILITY_PROPOSED: dict[str, float | str] = {
    "noise_phases": "all",
    "noise_tail_p": 0.05,
    "noise_tail_alpha": 1.5,
    "slow_vm_p": 0.15,
    "slow_vm_factor": 2.0,
}
