"""Stable-Baselines3 agents on MRCluster-v0 (the ``rl`` extras: torch, SB3, sb3-contrib).

- :mod:`agents.config` — the training configuration, one validated YAML per run
  (``configs/train/*.yaml``: algorithm, scenario, env settings, budget, held-out seeds).
- :mod:`agents.train` — ``train()`` (``mrgym train``: MaskablePPO by default, PPO, A2C,
  DQN; checkpoints, resume), ``load_model()`` and ``ModelFactory``, which ``mrgym evaluate``
  and ``mrgym compare --models`` run through the harness (:mod:`mrgym.evaluate`).
- :mod:`agents.model_policy` — ``ModelPolicy``: a model in the Gymnasium loop, loaded
  from a run folder or a bare SB3 ``.zip``; ``ModelSpec`` for parallel runs.
- :mod:`agents.callbacks` — the training callbacks: episode metrics under ``mr/``, held-out
  evaluation under ``mr_eval/`` (tags from :data:`mrgym.metrics.METRICS`), the
  hyperparameters as text, progress.
- :mod:`agents.tensorboard` — ``mrgym compare --tensorboard``: compared policies drawn
  beside the agents' runs under the same tags.
- :mod:`agents.analysis` — the one-off measurement tools (``python -m agents.analysis.X``:
  curves, pareto, average, grad_noise, ablate, generalize), apart from the training path:
  they may import it, nothing in it imports them.

The agents sit above the library: they import ``mrgym``, never the other way round.
The CLI's commands import them when they run, and ``mrgym.ModelPolicy`` is a lazy
re-export of :mod:`agents.model_policy` (docs/architecture.md, "Import rules").
"""
