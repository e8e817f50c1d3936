"""The Gymnasium adapter: spaces, observation, action codec and mask, rewards, rendering."""

from mrgym.envs.mr_cluster import MRClusterEnv

__all__ = ["MRClusterEnv"]
