"""What the tests share: small scenarios, a pinning and a scripting scheduler, tiny training
configs, the CLI runner and the third-party trace paths.  Test files import from here, never
from each other."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from mrgym.config import Scenario
from mrgym.registry import make
from mrgym.reproduce.probes import Pinned, cluster
from mrgym.reproduce.probes import scenario as _probe_scenario
from mrgym.sim.scheduler import Scheduler

__all__ = [
    "Pinned",
    "cluster",
    "scenario",
    "run_cli",
    "run_cli_process",
    "StubModel",
    "StubType",
    "StubHost",
    "StubVM",
    "TINY_HP",
    "tiny_train_config",
    "MTBF_HOURS",
    "with_dynamics",
    "Script",
    "ILA72_SMALL",
    "HYBRID48_PEAK_SMALL",
    "smaller",
]

# ila72's 25 jobs at 300 maps: the same cluster and code paths in about a sixth of the time,
# for tests of agreement and invariants rather than of ila72's numbers
ILA72_SMALL = {"workload.scale_maps_to": 300}
# hybrid48-peak's 20 jobs at half the maps on a third of its servers, 8 native + 8
# virtualized: a third of the idle slots, hence of the declined decisions, while the batch
# still runs into the interactive peak with more load per server, so SLAs still break
# (tests/test_gym_exact.py checks it; there schedulers with control actions keep the full
# size)
HYBRID48_PEAK_SMALL = {
    "cluster.hosts.0.count": 8,
    "cluster.hosts.1.count": 8,
    "workload.maps_median": 15,
}
_SMALL = {"ila72": ILA72_SMALL, "hybrid48-peak": HYBRID48_PEAK_SMALL}


def smaller(name: str) -> Scenario:
    """The scenario ``name``, with ila72 at ILA72_SMALL and hybrid48-peak at
    HYBRID48_PEAK_SMALL (other names as they are)."""
    from mrgym.config import load_scenario

    return load_scenario(name, _SMALL.get(name))


def scenario(cluster_: dict, jobs: list[dict], replication: int = 1, **kw) -> dict:
    """The probes' scenario builder, named "test" (error messages in tests say test.KEY)."""
    sc = _probe_scenario(cluster_, jobs, replication, **kw)
    sc["name"] = kw.get("name", "test")
    return sc


@dataclass
class CliResult:
    """What a run of the CLI left: its exit status and its text output."""

    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str) -> CliResult:
    """Run ``mrgym ARGS`` in this process, capturing text output as a subprocess would.

    In-process because a new interpreter re-imports numpy, torch and SB3 (seconds per
    call, dozens of calls).  argparse's exits give their status; an exception the CLI
    lets through becomes status 1 with its traceback on stderr, as in a real process.
    Off a terminal (StringIO), the CLI logs progress lines as it does into a pipe.
    ``run_cli_process`` is for the few tests that need a real process."""
    from mrgym import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(args))
        except SystemExit as e:
            rc = _exit_status(e.code)
        except Exception:
            traceback.print_exc()
            rc = 1
    return CliResult(rc, out.getvalue(), err.getvalue())


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` gives a process: a message (printed) means 1."""
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1


def run_cli_process(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m mrgym.cli ARGS`` in a new process, capturing text output."""
    return subprocess.run(
        [sys.executable, "-m", "mrgym.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# The third-party traces (docs/model.md §7, docs/traces.md); tests that read them skip when
# absent.
TRACES = Path(
    os.environ.get("MRGYM_TRACES", Path(__file__).resolve().parents[2] / "shared" / "traces")
)
SWIM = TRACES / "swim_fb" / "FB-2009_samples_24_times_1hr_0.tsv"
RUMEN = TRACES / "rumen_mumak_19jobs" / "19-jobs.trace.json.gz"
# the reason says how to fix it; tests/conftest.py shows reasons in the summary (-rs)
_HOW = "set MRGYM_TRACES to the folder that holds swim_fb/ and rumen_mumak_19jobs/"
needs_swim = pytest.mark.skipif(not SWIM.exists(), reason=f"SWIM trace not found at {SWIM}; {_HOW}")
needs_rumen = pytest.mark.skipif(
    not RUMEN.exists(), reason=f"Rumen trace not found at {RUMEN}; {_HOW}"
)


def lee_cloud_small() -> dict:
    """lee-cloud with gridmix2's "small" jobs (51 maps over a tenth of the records, 15
    reduces; configs/lee-cloud.yaml derives the medium ones): the same rounds, pools and
    spot market in a fraction of the time, for tests of mechanics rather than sizes."""
    over: dict = {}
    for j in range(5):
        over[f"workload.jobs.{j}.maps"] = 51
        over[f"workload.jobs.{j}.input_mb"] = 3121.95 if j == 3 else 12487.8
        over[f"workload.jobs.{j}.reduces"] = 1 if j == 2 else 15
    return over


# -- stubs of a host and its VMs for a CpuPool alone (tests/test_cpu_clocks*.py) ----------
@dataclass
class StubType:
    cores: float = 4.0
    core_speed: float = 1.3
    power_idle_w: float = 100.0
    power_max_w: float = 200.0


@dataclass(eq=False)
class StubHost:
    type: StubType = field(default_factory=StubType)
    virtualized: bool = False  # Dom0's demand only counts I/O streams, which these lack
    alive: bool = True
    cpu: object = None


@dataclass(eq=False)
class StubVM:
    id: int
    host: StubHost
    vcpus: float = 2.0
    cpu_cap: float | None = None


# -- tiny SB3 training configs (tests/test_agents.py and the training tests beside it) -----
TINY_HP = {
    "maskable_ppo": {"n_steps": 64, "batch_size": 32},
    "ppo": {"n_steps": 64, "batch_size": 32},
    "a2c": {"n_steps": 16},
    "dqn": {"learning_starts": 32, "buffer_size": 1000, "batch_size": 16},
}


def tiny_train_config(algo: str, n_envs: int = 1, steps: int = 256, cap_s: float = 600):
    """A TrainConfig of ``steps`` on lee-gpu with TINY_HP: seconds, not minutes, to train."""
    from agents.config import TrainConfig  # the RL side, only for the tests that train

    return TrainConfig.model_validate(
        {
            "name": f"tiny-{algo}",
            "algorithm": algo,
            "n_envs": n_envs,
            "seed": 0,
            "total_steps": steps,
            # an untrained agent may decline for ever: cap episodes at 10 simulated minutes
            "env": {"scenario": "lee-gpu", "job_slots": 4, "max_sim_time_s": cap_s},
            "hyperparameters": TINY_HP[algo],
            "checkpoint_every_steps": 128,
            "eval": {"seeds": [7], "every_steps": 10_000},
        }
    )


# -- a scenario with host failures and spot evictions (fault and shuffle tests) ------------
# mean time between failures per scenario, so that a run of it sees several failures
MTBF_HOURS = {"lee-gpu": 0.03, "lsap-snapshot": 0.2, "pna60": 0.2, "hybrid48": 0.2}


def with_dynamics(name: str) -> dict:
    """The scenario with host failures and a quarter of its first host group turned into
    spot hosts evicted at 2 per hour (30 s notice)."""
    from mrgym.config import load_scenario

    data = load_scenario(name).model_dump(exclude_none=True)
    hosts = data["cluster"]["hosts"]
    g = hosts[0]
    n_spot = max(1, g["count"] // 4)
    if g["count"] > n_spot:
        spot = dict(g, count=n_spot, pool="spot", datanode=False)
        g["count"] -= n_spot
        hosts.insert(1, spot)
    data["dynamics"] = {
        "failures": {
            "mtbf_hours": MTBF_HOURS.get(name, 1.0),
            "repair_s": 120,
            # half the scenarios replace failed machines (empty disks: blocks get lost)
            "keeps_disk": name not in ("lee-gpu", "lsap-snapshot", "pna60", "tara80"),
        },
        "spot": {"hazard_per_hour": 2.0, "notice_s": 30},
    }
    if name == "ila2400":  # the scale test, at a fifth of its jobs and tasks
        data["workload"].update(n_jobs=20, scale_maps_to=3000, total_reduces=1000)
    return data


# -- a scheduler that scripts control actions (migration and shuffle tests) ----------------
class Script(Scheduler):
    """FIFO, plus control actions returned by ``act(view)`` every 5 s."""

    control_period_s = 5.0

    def __init__(self, act):
        self.inner = make("fifo")
        self.act = act

    def decide(self, ctx):
        return self.inner.decide(ctx)

    def control(self, view):
        return self.act(view)


# -- an SB3-like model with fixed action probabilities (decoding and ablation tests) -------
class StubPolicy:
    """An SB3-like policy whose distribution is fixed (masked actions get 0)."""

    def __init__(self, probs):
        self.probs = np.asarray(probs, dtype=np.float64)

    def obs_to_tensor(self, obs):
        import torch as th  # lazy: only the tests that use a stub need torch

        return th.as_tensor(obs)[None], True

    def get_distribution(self, obs, action_masks=None):
        import torch as th

        p = self.probs.copy()
        if action_masks is not None:
            p = np.where(action_masks, p, 0.0)
        p = p / p.sum()
        return SimpleNamespace(distribution=SimpleNamespace(probs=th.as_tensor(p)[None]))


class StubModel:
    """A model whose ``predict`` is the argmax of the stub policy's legal probabilities."""

    def __init__(self, probs):
        self.policy = StubPolicy(probs)

    def predict(self, obs, action_masks=None, deterministic=True):
        p = (
            self.policy.probs
            if action_masks is None
            else np.where(action_masks, self.policy.probs, 0)
        )
        return int(np.argmax(p)), None
