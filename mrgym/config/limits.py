"""The size limits of a scenario, each named in the error that enforces it (the list in
:mod:`mrgym.config`'s docstring says what each bounds).  The workload limits ``MAX_JOBS``,
``MAX_TASKS`` and ``MAX_REPEAT`` live in :mod:`mrgym.workloads`, which checks drawn
workloads against them."""

from __future__ import annotations

MAX_HOSTS = 20_000
MAX_VMS = 20_000  # workers + DataNode VMs + interactive VMs
MAX_RACKS = 2_000
MAX_TIME_S = 1e8  # seconds: run length, submit times, periods
MAX_FAILURES = 1_000_000  # expected host failures over a run
# interactive-load updates (or SLA checks) over a run, all interactive VMs together: each
# one is simulated (~2-3 us), busy or idle, since the load's noise stream, the SLA and the
# energy follow every update; 1e7 keeps their cost under ~30 s of CPU
MAX_INTERACTIVE_TICKS = 10_000_000
MAX_MB = 1e9  # one job's input: 1 PB
MAX_SLOTS = 256  # map or reduce slots of one VM
MAX_FILE_BYTES = 4 * 1024**2  # parsing YAML costs ~2 s per MiB even with libyaml
