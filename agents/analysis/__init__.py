"""One-off measurement tools over trained models and runs (``python -m agents.analysis.X``).

They answer questions about what the training path produced; none of them is needed to
train, load or evaluate a model:

- :mod:`agents.analysis.curves` and :mod:`agents.analysis.pareto` -- a run's held-out
  evaluations over training, and the mean-vs-p95 front of them;
- :mod:`agents.analysis.average` -- a run's checkpoints averaged into one model;
- :mod:`agents.analysis.grad_noise` -- the gradient noise scale of PPO's policy loss at a
  model;
- :mod:`agents.analysis.ablate` -- what a model's margin over ``hostcap`` is made of;
- :mod:`agents.analysis.generalize` -- models and baselines on SWIM trace windows.

Imports go one way: these modules may import the training path (``agents.config``,
``agents.train``, ...), and nothing outside this package imports them
(tests/test_layers.py checks it).
"""
