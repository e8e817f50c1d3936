"""The benchmark's numbers from per-seed values: the paired difference to the best
baseline with its interval, duplicate policies, and one summary per policy.

Everything here is a pure function of the per-seed values a result JSON stores, so the
leaderboard page recomputes it from the JSON and gets the same numbers as the run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mrgym.benchmark.protocol import CONFIDENCE, RANK_KEY

Value = float | None


@dataclass(frozen=True)
class PairedDiff:
    """A policy's per-seed relative difference to a reference policy, in %: its mean over
    the ``n`` seeds where both have a value and the ``confidence`` interval of that mean
    (None below two seeds).  Negative: the policy is better (lower)."""

    mean_pct: float | None
    low_pct: float | None
    high_pct: float | None
    n: int
    reference: str | None = None


def paired_difference(
    values: Sequence[Value],
    reference: Sequence[Value],
    confidence: float = CONFIDENCE,
    reference_name: str | None = None,
) -> PairedDiff:
    """``100 (x_s / b_s - 1)`` per seed ``s`` (``values`` x, ``reference`` b, paired by
    position), its mean, and the paired Student-t interval of that mean:
    ``mean ± t((1 + confidence) / 2, n - 1) · sd / sqrt(n)``.

    Seeds where either value is missing (or the reference is 0) are left out; ``n`` says
    how many remain.  Identical values give a zero-width interval, not NaN."""
    if len(values) != len(reference):
        raise ValueError(
            f"paired_difference: {len(values)} values against {len(reference)} reference "
            "values; expected one each per seed"
        )
    rel = np.array(
        [100.0 * (x / b - 1.0) for x, b in zip(values, reference) if _ok(x) and _ok(b) and b],
        dtype=float,
    )
    n = len(rel)
    if n == 0:
        return PairedDiff(None, None, None, 0, reference_name)
    mean = float(rel.mean())
    if n < 2:
        return PairedDiff(mean, None, None, 1, reference_name)
    from scipy import stats

    se = float(rel.std(ddof=1)) / math.sqrt(n)
    half = float(stats.t.ppf((1.0 + confidence) / 2.0, n - 1)) * se
    return PairedDiff(mean, mean - half, mean + half, n, reference_name)


def _ok(x: Value) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


#: Two results are the same when every value agrees to this relative tolerance: the same
#: schedule can differ in the last bits of a sum taken in another order (fifo and
#: fifo-random on one pool: 1 ulp of CPU utilization), a different schedule does not.
SAME_REL_TOL = 1e-9


def same_as(results: dict[str, Sequence], rel_tol: float = SAME_REL_TOL) -> dict[str, str]:
    """Policies whose results equal an earlier one's: ``{later: first}``.

    ``results`` maps each policy, in run order, to its values as nested sequences of
    numbers (None for a missing value), e.g. per seed, per metric: :func:`result_values`.
    Equal means the same shape and every number within ``rel_tol`` (None only equals
    None): e.g. fair and hybridmr-phase1 on a single-pool scenario, which make the same
    schedule.  A later policy is compared with the first of each group only."""
    firsts: list[str] = []
    out: dict[str, str] = {}
    for name, vals in results.items():
        match = next((f for f in firsts if _close(vals, results[f], rel_tol)), None)
        if match is None:
            firsts.append(name)
        else:
            out[name] = match
    return out


def _close(a: Any, b: Any, rel_tol: float) -> bool:
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        return (
            isinstance(a, list | tuple)
            and isinstance(b, list | tuple)
            and len(a) == len(b)
            and all(_close(x, y, rel_tol) for x, y in zip(a, b))
        )
    if not _ok(a) or not _ok(b):
        return not _ok(a) and not _ok(b)
    return math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-12)


def result_values(
    seeds: Sequence[int], per_seed: dict[str, Sequence[Value]]
) -> tuple[tuple[int, ...], tuple[tuple[Value, ...], ...]]:
    """A policy's per-seed values for :func:`same_as`: the seeds, then each metric's
    values (metrics in name order)."""
    return tuple(seeds), tuple(tuple(per_seed[k]) for k in sorted(per_seed))


def mean_of(values: Sequence[Value]) -> Value:
    """The mean of the values present (None: none).  Equal values give that value exactly:
    a stochastic policy whose samples all agree must equal the deterministic policy it
    reduces to (fifo-random on one pool is fifo), bit for bit."""
    vals = [float(v) for v in values if _ok(v)]
    if not vals:
        return None
    if all(v == vals[0] for v in vals):
        return vals[0]
    return math.fsum(vals) / len(vals)


@dataclass
class PolicySummary:
    """One policy's row: the mean over seeds of each kept metric, which earlier policy it
    duplicates (``same_as``) and its paired difference to the best baseline (``diff``)."""

    name: str
    kind: str
    samples: int
    means: dict[str, Value] = field(default_factory=dict)
    same_as: str | None = None
    diff: PairedDiff | None = None
    best: bool = False


def complete(r: Any) -> bool:
    """Every seed has a mean JCT and no episode was cut (``truncated`` 0 where stored)."""
    if not all(_ok(v) for v in r.per_seed.get(RANK_KEY, [])) or not r.per_seed.get(RANK_KEY):
        return False
    return not any(_ok(v) and v > 0 for v in r.per_seed.get("truncated", []))


def summarize(
    results: Sequence[Any], rank_key: str = RANK_KEY
) -> tuple[list[PolicySummary], str | None]:
    """Summaries of ``results`` (objects with ``name``, ``kind``, ``samples``, ``seeds``
    and ``per_seed``, in run order) and the name of the best baseline.

    The best baseline is the baseline (models excluded) with the lowest mean over seeds of
    ``rank_key`` (a track's metric; default :data:`RANK_KEY`, mean JCT; a policy whose
    file lacks it is not a candidate), duplicates excluded (they tie with the policy they repeat, which
    stands for both), and so are baselines that did not finish every episode on every
    seed (a truncated episode's mean JCT counts only the jobs that finished, and a missing
    seed would average over fewer seeds); an exact tie goes to the one run first.  Every
    policy's ``diff`` is its paired difference to that baseline (None when the run has no
    baseline)."""
    dup = same_as({r.name: result_values(r.seeds, r.per_seed) for r in results})
    out = [
        PolicySummary(
            r.name,
            r.kind,
            r.samples,
            {k: mean_of(v) for k, v in r.per_seed.items()},
            dup.get(r.name),
        )
        for r in results
    ]
    candidates = [
        (s.means[rank_key], i)
        for i, (r, s) in enumerate(zip(results, out))
        if s.kind == "baseline"
        and s.same_as is None
        and complete(r)
        and s.means.get(rank_key) is not None
    ]
    if not candidates:
        return out, None
    best = min(candidates)[1]  # lowest mean, then the earliest
    ref = results[best]
    out[best].best = True
    for r, s in zip(results, out):
        if list(r.seeds) != list(ref.seeds):
            raise ValueError(
                f"{r.name}: seeds {list(r.seeds)} differ from the best baseline "
                f"{ref.name}'s {list(ref.seeds)}; a paired difference needs the same seeds"
            )
        mine = r.per_seed.get(rank_key) or [None] * len(r.seeds)
        s.diff = paired_difference(mine, ref.per_seed[rank_key], CONFIDENCE, ref.name)
    return out, ref.name
