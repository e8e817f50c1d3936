"""Model constants of the execution model, in one table with their sources.

Every number the fluid model uses lives here; a scenario's ``execution:`` section may
override any field.  Units: seconds, MB, MB/s, cores.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelParams:
    # --- Disk -------------------------------------------------------------------------
    # Aggregate throughput of one physical disk with n concurrent streams is
    # disk_mbps * (floor + (1 - floor) * exp(-disk_thrash * (n - 1))): seek thrashing makes
    # each extra stream cost more than its fair share, so the slowdown of an I/O-bound task
    # grows exponentially with co-hosted I/O streams (ILA §2.2 Fig. 2; HybridMR Fig. 6c),
    # down to the disk's random-access throughput (the floor, ~20 % of sequential for a
    # 7200 rpm disk serving 64 KB requests), so heavy load never collapses to zero.
    disk_thrash: float = 0.15
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
    guest_page_cache: bool = False
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
    # --- Virtualization ---------------------------------------------------------------
    # Extra time of a compute phase / an I/O stream on a virtualized host, scaled by the
    # job profile's virt_sensitivity.  Generic benchmarks: ~5 % computation and ~15 % I/O
    # overhead (HybridMR §I citing [10]); with these, I/O-bound jobs end 7-24 % and
    # CPU-bound jobs < 8 % slower than native (HybridMR Fig. 1a), see tests.
    virt_cpu_overhead: float = 0.04
    virt_io_overhead: float = 0.20
    # Reading a co-hosted VM's block goes through the hypervisor's memory copy: as fast as
    # local (ILA §2.3, Fig. 3 "approximately the same time"), a few percent slower.
    server_read_penalty: float = 0.05
    # --- MapReduce (Hadoop 1 defaults) ------------------------------------------------
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
    noise_sigma: float = 0.25
    # Independent multipliers drawn per task at reset: attempt k uses draw k % this, so a
    # speculative or re-executed copy gets different (but policy-independent) luck.
    noise_draws_per_task: int = 4
    # --- Compressed input (gridmix2's block-compressed SequenceFiles) -------------------
    # On: a map whose profile has input_compression r > 1 reads input_mb / r from disk and
    # network and spends decompress_cpu_s_per_mb per MB of records (jobs.py).  False:
    # every map reads its records uncompressed.
    compressed_input: bool = False
    # --- Monitoring -------------------------------------------------------------------
    # Period of the metric sampler (fairness over time, interactive response time).
    sample_s: float = 10.0


DEFAULT_PARAMS = ModelParams()

# Proposed "on" values of this part's mechanisms (the calibration fits and flips them).
PROPOSED: dict[str, object] = {"guest_page_cache": True, "compressed_input": True}
