"""mrgym: a gym for scheduling virtualized, heterogeneous Hadoop MapReduce clusters."""

from mrgym.config import Scenario, ScenarioError, available_scenarios, load_scenario
from mrgym.runner import SimResult, run_sim

__all__ = [
    "Scenario",
    "ScenarioError",
    "SimResult",
    "available_scenarios",
    "load_scenario",
    "run_sim",
]
__version__ = "0.1.0"
