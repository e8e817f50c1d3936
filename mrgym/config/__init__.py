"""The scenario schema: typed, validated, YAML <-> objects.

``load_scenario("ila72")`` reads ``configs/ila72.yaml``; a path or a dict works too, and
``overrides`` (a nested dict or dotted keys such as ``{"hdfs.replication": 2}``) are merged
before validation.  Unknown keys and out-of-range values raise :class:`ScenarioError` with
one line naming the key and what was expected (``ila72.cluster.racks: must be >= 1, got 0``).

Every number has finite bounds (no inf, no NaN), so no scenario can make the simulator
loop forever, divide by zero or run out of memory.  Limits on size, each named in the
error that enforces it:

* a cluster has at most 20 000 hosts and 20 000 VMs (workers, DataNodes and interactive
  VMs together) in at most 2 000 racks; ``ila2400``, the scale test, has 2 400 VMs;
* a workload has at most 100 000 jobs and 1 000 000 map tasks (and 1 000 000 reduce
  tasks); an explicit job repeats at most 10 000 times (``ila2400``: 100 jobs, 15 000
  maps); generated and trace workloads are checked when drawn (mrgym.workloads);
* ``run.max_sim_time_s`` and every time in a scenario are at most 1e8 s (about 3 years);
* at most 1 000 000 host failures are expected over a run (hosts x time / MTBF);
* interactive VMs update their load and have their SLA checked at most 10 000 000 times
  each over a run (VMs x time / ``update_s``, VMs x time / ``execution.sample_s``): they
  are simulated busy or idle, as their noise, SLA and energy follow every update;
* a run's ``run.max_sim_time_s`` is at least one ``cluster.heartbeat_s`` (tasks start at
  heartbeats);
* a SWIM or Rumen trace is at most 512 MiB of text (a ``.gz`` after unpacking; it is
  unpacked in chunks and stopped there, so a small "gzip bomb" cannot fill the memory);
* a scenario file is at most 4 MiB (about 130 000 inline job entries, a few seconds to
  parse); error messages show at most ~80 characters of a value.

The code lives in modules named for what they do, and this module re-exports their public
names (import them from here):

* :mod:`mrgym.config.limits`: the size limits above (``MAX_*``);
* :mod:`mrgym.config.errors`: :class:`ScenarioError`, :func:`short` and the one-line form
  of a validation error;
* :mod:`mrgym.config.schema`: :class:`Scenario`, the models of its sections and the bounds
  of ``execution.*`` (:data:`EXECUTION_BOUNDS`, :data:`EXECUTION_CHOICES`, :data:`EXECUTION_SWITCHES`);
* :mod:`mrgym.config.checks`: the cross-checks of a whole scenario;
* :mod:`mrgym.config.yaml`: :func:`parse_yaml`, :func:`read_yaml_file`;
* :mod:`mrgym.config.load`: :func:`load_scenario`, :func:`available_scenarios`,
  ``CONFIG_DIR``.
"""

from __future__ import annotations

# re-exported: the names other code imports from mrgym.config (``__all__`` below is what
# ``from mrgym.config import *`` gives, as before the split)
from mrgym.config.errors import ScenarioError, key_text, short  # noqa: F401
from mrgym.config.limits import (  # noqa: F401
    MAX_FAILURES,
    MAX_FILE_BYTES,
    MAX_HOSTS,
    MAX_INTERACTIVE_TICKS,
    MAX_MB,
    MAX_RACKS,
    MAX_SLOTS,
    MAX_TIME_S,
    MAX_VMS,
)
from mrgym.config.load import CONFIG_DIR, available_scenarios, load_scenario  # noqa: F401
from mrgym.config.schema import (  # noqa: F401
    EXECUTION_BOUNDS,
    EXECUTION_CHOICES,
    EXECUTION_SWITCHES,
    PROFILE_HINT,
    ClusterSpec,
    DynamicsSpec,
    ExecutionSpec,
    FailureSpec,
    Float,
    HdfsSpec,
    HostGroup,
    InstanceSpec,
    Int,
    InteractiveSpec,
    JobItem,
    Label,
    Profile,
    ProvisionSpec,
    RunSpec,
    Scenario,
    SpotSpec,
    VmSpec,
    WorkloadSpec,
)
from mrgym.config.yaml import UniqueKeyLoader, parse_yaml, read_yaml_file  # noqa: F401
from mrgym.workloads import MAX_JOBS, MAX_REPEAT, MAX_TASKS  # noqa: F401

__all__ = [
    "MAX_FAILURES",
    "MAX_INTERACTIVE_TICKS",
    "MAX_HOSTS",
    "MAX_JOBS",
    "MAX_REPEAT",
    "MAX_RACKS",
    "MAX_TASKS",
    "MAX_TIME_S",
    "MAX_VMS",
    "Scenario",
    "ScenarioError",
    "available_scenarios",
    "load_scenario",
    "parse_yaml",
    "read_yaml_file",
    "short",
]
