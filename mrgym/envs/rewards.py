"""Reward terms (docs/model.md §3): a weighted sum of named terms, each reported in
``info["reward_terms"]``.

Each term is defined once, in :data:`TERMS`: a :class:`RewardTerm` holds its name, what it
is, and the function that computes it for one step, between two decisions at simulated
times t0 < t1.  Weights come from ``MRCluster-v0(reward_weights=...)`` (default
``{"jct": 1}``: the return is -sum(JCT) / 100).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mrgym.sim.hdfs import NODE, OFF_RACK, RACK, SERVER
from mrgym.sim.jobs import MAP
from mrgym.sim.monitoring import fairness

LOCALITY_VALUE = {NODE: 1.0, SERVER: 0.9, RACK: 0.3, OFF_RACK: 0.0, None: 0.0}
TIME_SCALE = 100.0


@dataclass(frozen=True)
class RewardTerm:
    """One reward term.  ``value(tracker, view, launched, dt)`` returns the term for the
    step (``launched``: the attempt the action started, or None; ``dt = t1 - t0``) and
    may update the tracker's running totals.  A term with ``weighted_only`` is computed
    only when its weight is not 0 (it costs a pass over the cluster) and reads 0
    otherwise."""

    name: str
    doc: str
    value: Callable[[RewardTracker, Any, Any, float], float]
    weighted_only: bool = False


def _jct(tr: RewardTracker, view, launched, dt: float) -> float:
    js = view.job_seconds_at(view.now)
    out = -(js - tr.job_s) / TIME_SCALE
    tr.job_s = js
    return out


def _throughput(tr: RewardTracker, view, launched, dt: float) -> float:
    n = view.n_success
    out = float(n - tr.done)
    tr.done = n
    return out


def _locality(tr: RewardTracker, view, launched, dt: float) -> float:
    if launched is not None and launched.task.kind == MAP and not launched.speculative:
        return LOCALITY_VALUE[launched.locality]
    return 0.0


def _fairness(tr: RewardTracker, view, launched, dt: float) -> float:
    # lsap's fairness distance now, the same formula as the fairness metric
    f = fairness(view.jobs) if dt > 0 else None
    return -f[1] * dt / TIME_SCALE if f is not None else 0.0


def _makespan(tr: RewardTracker, view, launched, dt: float) -> float:
    # the workload's clock: from time 0 to the last job's end, the return is -(makespan +
    # the first arrival) / 100, and the first arrival is the workload's, not the policy's
    return -dt / TIME_SCALE


def _slowdown(tr: RewardTracker, view, launched, dt: float) -> float:
    # sum over jobs of (age / reference JCT)^2, each age frozen at the job's end: its
    # increase over the step, so that the return is -sum over jobs of slowdown^2
    if tr.reference is None:
        raise ValueError(
            "reward_weights.slowdown: needs each job's reference JCT (RewardTracker.reference)"
        )
    now = view.now
    q = 0.0
    for j in view.all_jobs:
        ref = tr.reference.get(j.id)
        if j.arrived_s is None or not ref:
            continue
        end = j.finish_s if j.finish_s is not None else now
        q += ((end - j.arrived_s) / ref) ** 2
    out = -(q - tr.slow_sq)
    tr.slow_sq = q
    return out


def _cost(tr: RewardTracker, view, launched, dt: float) -> float:
    c = view.cost_so_far()
    out = -(c - tr.cost)
    tr.cost = c
    return out


def _sla(tr: RewardTracker, view, launched, dt: float) -> float:
    sla = sum(a.violation_s for a in view.interactive_apps())
    out = -(sla - tr.sla) / TIME_SCALE
    tr.sla = sla
    return out


#: every reward term, in ``info["reward_terms"]``'s order
TERMS = (
    RewardTerm(
        "jct",
        "-(the integral of the number of active jobs over [t0, t1]) / 100: the episode's "
        "return is -sum(JCT) / 100 (seconds), so maximizing it minimizes mean JCT",
        _jct,
    ),
    RewardTerm("throughput", "tasks completed in [t0, t1]", _throughput),
    RewardTerm(
        "locality",
        "per map launched by the action: node-local 1, server-local 0.9, rack-local 0.3, "
        "off-rack 0 (ILA §2.3: server ~ node, rack ~3x and off-rack ~4x slower)",
        _locality,
    ),
    RewardTerm(
        "fairness",
        "-(lsap's fairness distance at t1: the mean over jobs with work of |running share - "
        "weight share| / weight share, the fairness_distance metric's formula) x (t1 - t0) "
        "/ 100",
        _fairness,
        weighted_only=True,
    ),
    RewardTerm(
        "makespan",
        "-(t1 - t0) / 100: the episode's return is -(the last job's end) / 100, so "
        "maximizing it minimizes the makespan (the first arrival is the workload's)",
        _makespan,
    ),
    RewardTerm(
        "slowdown",
        "-(the increase over [t0, t1] of the sum over arrived jobs of (age / reference "
        "JCT)^2, age frozen at the job's end): the return is -(sum over jobs of slowdown^2); "
        "a job's reference JCT is its JCT alone on the cluster under fair "
        "(mrgym.reference.reference_jct)",
        _slowdown,
        weighted_only=True,
    ),
    RewardTerm("cost", "-$ spent on instances in [t0, t1]", _cost, weighted_only=True),
    RewardTerm("sla", "-(interactive SLA-violation seconds in [t0, t1]) / 100", _sla),
)
TERM_NAMES = tuple(t.name for t in TERMS)


def markdown_table(terms: tuple[RewardTerm, ...] = TERMS) -> str:
    """The reward terms as a markdown table (term, definition), for the docs."""
    lines = ["| term | definition |", "|---|---|"]
    lines += [f"| `{t.name}` | {t.doc} |" for t in terms]
    return "\n".join(lines)


__doc__ = (
    (__doc__ or "") + "\nThe terms:\n\n" + "".join(f"* ``{t.name}``: {t.doc}\n" for t in TERMS)
)


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
    out = dict.fromkeys(TERM_NAMES, 0.0)
    for k, v in weights.items():
        if k not in TERM_NAMES:
            raise ValueError(
                f"reward_weights.{k}: unknown term; expected one of {list(TERM_NAMES)}"
            )
        # a term stays far below 1e300 a step (jct: active jobs x seconds / 100, ~1e4 at
        # most), so weights within 1e6 keep every reward finite; 1e308 x a term is inf
        bad = isinstance(v, bool) or not isinstance(v, numbers.Real)
        if bad or not math.isfinite(v) or abs(v) > MAX_WEIGHT:
            raise ValueError(
                f"reward_weights.{k}: must be a finite number in [-1e6, 1e6], got {v!r}"
            )
        out[k] = float(v)
    return out


MAX_WEIGHT = 1e6  # the largest |weight| a reward term takes (check_weights)


class RewardTracker:
    """The running totals the terms difference, and the weighted sum of a step."""

    def __init__(self, weights: dict[str, float], reference: dict[int, float] | None = None):
        self.w = weights
        # job id -> its reference JCT (the slowdown term's denominator)
        self.reference = reference
        # (name, weight, value function) of the terms computed each step, in TERMS order
        self._terms = [
            (t.name, weights[t.name], t.value)
            for t in TERMS
            if not t.weighted_only or weights[t.name]
        ]
        self.reset(None)

    def reset(self, view) -> None:
        """Count from time 0, so whatever accrued before the first decision lands in the
        first step's reward and the return covers the whole episode."""
        self.t = 0.0
        self.job_s = 0.0
        self.done = 0
        self.cost = 0.0
        self.sla = 0.0
        self.slow_sq = 0.0

    def step(self, view, launched) -> tuple[float, dict[str, float]]:
        """Terms since the last call; ``launched`` is the attempt the action started."""
        now = view.now
        dt = now - self.t
        terms = dict.fromkeys(TERM_NAMES, 0.0)
        total = 0.0
        for name, w, value in self._terms:
            v = terms[name] = float(value(self, view, launched, dt))
            total += w * v
        self.t = now
        return total, terms
