"""The simulator core: pure SimPy + NumPy, no Gymnasium, torch, baselines or agents."""
