"""Stable-Baselines3 agents trained on MRCluster-v0 (arrives with the training issue)."""
