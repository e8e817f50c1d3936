"""mrgym: a gym for scheduling virtualized, heterogeneous Hadoop MapReduce clusters.

``import mrgym`` registers the Gymnasium environments ``MRCluster-v0`` and ``MRCluster-v1``
(v1: an observation without the future); ``mrgym.envs``
holds its class (``mrgym.envs.MRClusterEnv``).
"""

from __future__ import annotations

import importlib
from typing import Any

try:
    import gymnasium
except ImportError:  # pragma: no cover - the simulator core (mrgym.sim) runs without it
    gymnasium = None

from mrgym.config import Scenario, ScenarioError, available_scenarios, load_scenario

# the harness function shadows its module name on purpose: ``mrgym.evaluate(...)``
from mrgym.evaluate import evaluate  # noqa: I001
from mrgym.policy import EnvPolicy
from mrgym.runner import EpisodeResult, SimResult, run_episode, run_sim

if gymnasium is not None and "MRCluster-v0" not in gymnasium.registry:
    gymnasium.register(
        id="MRCluster-v0",
        entry_point="mrgym.envs.mr_cluster:MRClusterEnv",
        kwargs={"observation_version": 0},
    )
if gymnasium is not None and "MRCluster-v1" not in gymnasium.registry:
    # v1: the same simulator and actions, an observation without the future (docs/environment.md)
    gymnasium.register(
        id="MRCluster-v1",
        entry_point="mrgym.envs.mr_cluster:MRClusterEnv",
        kwargs={"observation_version": 1},
    )


def __getattr__(name: str) -> Any:
    # ``mrgym.envs`` is imported on first use rather than here, so that ``import mrgym.sim``
    # (the simulator core, docs/model.md §1) does not need Gymnasium; ``help(mrgym.envs...)`` and
    # ``mrgym.envs.MRClusterEnv`` work right after ``import mrgym``
    if name == "envs":
        return importlib.import_module("mrgym.envs")
    # ModelPolicy lives with the agents (loading a model needs SB3): mrgym.policy
    # re-exports it on first use, so ``import mrgym`` imports neither agents nor torch
    if name == "ModelPolicy":
        from mrgym import policy

        return policy.ModelPolicy
    raise AttributeError(f"module 'mrgym' has no attribute {name!r}")


__all__ = [
    "EnvPolicy",
    "EpisodeResult",
    "ModelPolicy",
    "Scenario",
    "ScenarioError",
    "SimResult",
    "available_scenarios",
    "envs",
    "evaluate",
    "load_scenario",
    "run_episode",
    "run_sim",
    "version",
]
__version__ = "0.1.0"


def version() -> str:
    """The installed distribution's version (what pip reports), else the package's."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("mrgym")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return __version__
