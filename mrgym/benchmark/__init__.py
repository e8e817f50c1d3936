"""``mrgym benchmark`` and the leaderboard: a fixed protocol for numbers one can trust.

- :mod:`~mrgym.benchmark.protocol`: the validation and test seed ranges, K samples per seed
  of a stochastic policy and their policy seeds, the interval (defined once here);
- :mod:`~mrgym.benchmark.sampling`: one episode as a unit of work (a policy seed given
  to the policy, the episode seed kept);
- :mod:`~mrgym.benchmark.run`: the grid of episodes, each policy's result handed on as it
  finishes;
- :mod:`~mrgym.benchmark.stats`: the paired difference to the best baseline, duplicate
  policies, the summaries;
- :mod:`~mrgym.benchmark.results`: the result JSON, written atomically;
- :mod:`~mrgym.benchmark.leaderboard`: ``docs/leaderboard.md`` from the result files.
"""
