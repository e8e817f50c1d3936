"""Reward terms (docs/model.md §3): a weighted sum of named terms, each reported in info.

Between two decisions at sim times t0 < t1:

* ``jct``        -(integral of the number of active jobs over [t0, t1]) / 100: the episode's
                 return is -sum(JCT) / 100 (seconds), so maximizing it minimizes mean JCT;
* ``throughput`` tasks completed in [t0, t1];
* ``locality``   per map launched by the action: node 1, server 0.9, rack 0.3, off-rack 0
                 (ILA §2.3: server ~ node, rack ~3x and off-rack ~4x slower);
* ``fairness``   -(lsap's fairness distance at t1: mean over jobs with work of |running
                 share - weight share| / weight share, the ``fairness_distance`` metric's
                 formula, mrgym.sim.monitoring.fairness) x (t1 - t0) / 100;
* ``cost``       -$ spent on instances in [t0, t1];
* ``sla``        -(interactive SLA-violation seconds in [t0, t1]) / 100.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.jobs import MAP
from mrgym.sim.monitoring import fairness

TERMS = ("jct", "throughput", "locality", "fairness", "cost", "sla")
LOCALITY_VALUE = {NODE: 1.0, SERVER: 0.9, RACK: 0.3, OFF_RACK: 0.0, None: 0.0}
TIME_SCALE = 100.0


def check_weights(weights: dict[str, float] | None) -> dict[str, float]:
    """Every term's weight (0 for terms not named); one-line ``ValueError`` naming the key
    for an unknown term or a weight that is not a finite number (a NaN weight would make
    every reward NaN and silently poison training)."""
    if weights is None:
        weights = {"jct": 1.0}
    if not isinstance(weights, Mapping):
        raise ValueError(
            f"reward_weights: must be a mapping of term -> weight, got {type(weights).__name__}"
        )
    out = dict.fromkeys(TERMS, 0.0)
    for k, v in weights.items():
        if k not in TERMS:
            raise ValueError(f"reward_weights.{k}: unknown term; expected one of {list(TERMS)}")
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v):
            raise ValueError(f"reward_weights.{k}: must be a finite number, got {v!r}")
        out[k] = float(v)
    return out


class RewardTracker:
    def __init__(self, weights: dict[str, float]):
        self.w = weights
        self.t = 0.0
        self.job_s = 0.0
        self.done = 0
        self.cost = 0.0
        self.sla = 0.0

    def reset(self, view) -> None:
        """Count from time 0, so whatever accrued before the first decision lands in the
        first step's reward and the return covers the whole episode."""
        self.t = 0.0
        self.job_s = 0.0
        self.done = 0
        self.cost = 0.0
        self.sla = 0.0

    def step(self, view, launched) -> tuple[float, dict[str, float]]:
        """Terms since the last call; ``launched`` is the attempt the action started."""
        now = view.now
        dt = now - self.t
        terms = dict.fromkeys(TERMS, 0.0)
        js = view.job_seconds_at(now)
        terms["jct"] = -(js - self.job_s) / TIME_SCALE
        terms["throughput"] = float(view.n_success - self.done)
        if launched is not None and launched.task.kind == MAP and not launched.speculative:
            terms["locality"] = LOCALITY_VALUE[launched.locality]
        if self.w["fairness"] and dt > 0:
            # lsap's fairness distance now, the same formula as the fairness metric
            f = fairness(view.jobs)
            if f is not None:
                terms["fairness"] = -f[1] * dt / TIME_SCALE
        if self.w["cost"]:
            c = view.cost_so_far()
            terms["cost"] = -(c - self.cost)
            self.cost = c
        sla = sum(a.violation_s for a in view.interactive_apps())
        terms["sla"] = -(sla - self.sla) / TIME_SCALE
        self.sla = sla
        self.t, self.job_s, self.done = now, js, view.n_success
        total = sum(self.w[k] * v for k, v in terms.items())
        return float(total), {k: float(v) for k, v in terms.items()}
