"""mrgym: a gym for scheduling virtualized, heterogeneous Hadoop MapReduce clusters.

``import mrgym`` registers the Gymnasium environment ``MRCluster-v0``.
"""

import gymnasium

from mrgym.config import Scenario, ScenarioError, available_scenarios, load_scenario

# the harness function shadows its module name on purpose: ``mrgym.evaluate(...)``
from mrgym.evaluate import evaluate  # noqa: I001
from mrgym.policy import EnvPolicy, ModelPolicy
from mrgym.runner import EpisodeResult, SimResult, run_episode, run_sim

if "MRCluster-v0" not in gymnasium.registry:
    gymnasium.register(id="MRCluster-v0", entry_point="mrgym.envs.mr_cluster:MRClusterEnv")


__all__ = [
    "EnvPolicy",
    "EpisodeResult",
    "ModelPolicy",
    "Scenario",
    "ScenarioError",
    "SimResult",
    "available_scenarios",
    "evaluate",
    "load_scenario",
    "run_episode",
    "run_sim",
]
__version__ = "0.1.0"
