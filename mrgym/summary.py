"""The comparison's numbers from the harness's rows (:func:`mrgym.evaluate.evaluate`): means
and spreads over seeds (:func:`summarize`), the markdown table and the CSV ``mrgym
compare`` writes, and every completed job's JCT for the CDF plot (:mod:`mrgym.plots`)."""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mrgym.metrics import (
    COMPARE_COLUMNS,
    COMPARE_KEYS,
    OPTIONAL_COMPARE_COLUMNS,
    OPTIONAL_COMPARE_KEYS,
    Metric,
)

#: The comparison's columns: (metric key, column header), from
#: :data:`mrgym.metrics.COMPARE_COLUMNS`.
SUMMARY = [(m.key, m.column) for m in COMPARE_COLUMNS]


#: The spread the summary table and the plots' error bars show (one choice for both).
SPREADS = {
    "ci95": "half-width of the 95 % confidence interval of the mean (Student t)",
    "std": "sample standard deviation",
}


#: Below this many seeds the table shows each mean's range [min, max] instead of a 95 %
#: interval: from 2-4 seeds the interval's t factor (12.7, 4.3, 3.2) makes it so wide that
#: it says nothing (fifo 360 ± 2 079 s over 3 seeds), while the range is what was seen.
SMALL_N = 5


def _t_factor(n: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, n - 1))


def _spread(vals: np.ndarray, spread: str) -> float:
    """``vals``' spread; NaN for one value (no interval from one seed: say so, not 0)."""
    if len(vals) < 2:
        return math.nan
    sd = float(vals.std(ddof=1))
    if spread == "std":
        return sd
    return _t_factor(len(vals)) * sd / math.sqrt(len(vals))


def summarize(rows: list[dict[str, Any]], spread: str = "ci95") -> list[dict[str, Any]]:
    """Mean and spread across seeds, one row per policy x scenario (first-seen order).

    Each metric is ``(mean, spread)``; ``spread`` is ``"ci95"`` (half-width of the 95 %
    Student-t confidence interval of the mean: what the plots' error bars show) or
    ``"std"`` (sample standard deviation); one seed gives NaN.  ``ranges`` holds each
    metric's ``(min, max, n)`` over the seeds that have a value (n of them), which the
    table shows instead of the interval below :data:`SMALL_N` seeds."""
    if spread not in SPREADS:
        raise ValueError(f"spread: expected one of {list(SPREADS)}, got {spread!r}")
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["scenario"], r["policy"]), []).append(r)
    out = []
    for (sc, pol), rs in groups.items():
        row: dict[str, Any] = {
            "scenario": sc,
            "policy": pol,
            "seeds": len(rs),
            "seed_list": [r["seed"] for r in rs],
            "spread": spread,
            # runs cut before every job finished (a decision cap or the time cap)
            "truncated": sum(_true(r.get("truncated")) for r in rs),
        }
        ranges = {}
        for key in COMPARE_KEYS + OPTIONAL_COMPARE_KEYS:
            vals = np.array(
                [r[key] for r in rs if r.get(key) is not None and not _nan(r[key])], dtype=float
            )
            row[key] = (float(vals.mean()), _spread(vals, spread)) if len(vals) else (math.nan,) * 2
            lo, hi = (float(vals.min()), float(vals.max())) if len(vals) else (math.nan,) * 2
            ranges[key] = (lo, hi, len(vals))
        row["ranges"] = ranges
        out.append(row)
    return out


def across_training_seeds(
    summary: list[dict[str, Any]], groups: dict[str, str]
) -> list[dict[str, Any]]:
    """One row per group of models trained alike but from different seeds (``groups``:
    policy label -> group name): each metric is the mean of the models' per-seed means and
    the sample standard deviation across the models (the training-seed spread, which the
    evaluation seeds' interval does not show).  Policies not in ``groups`` are left out."""
    members: dict[tuple, list] = {}
    for row in summary:
        g = groups.get(row["policy"])
        if g is not None:
            members.setdefault((row["scenario"], g), []).append(row)
    out = []
    for (sc, g), rs in members.items():
        row: dict[str, Any] = {
            "scenario": sc,
            "policy": f"{g} ({len(rs)} training seeds)",
            "seeds": rs[0]["seeds"],
            "seed_list": rs[0]["seed_list"],
            "spread": "training-seed std",
            "models": [r["policy"] for r in rs],
            "truncated": sum(r.get("truncated", 0) for r in rs),
        }
        for key in COMPARE_KEYS + OPTIONAL_COMPARE_KEYS:
            vals = [r[key][0] for r in rs if key in r and not _nan(r[key][0])]
            vals = np.array(vals, dtype=float)
            row[key] = (float(vals.mean()), _spread(vals, "std")) if len(vals) else (math.nan,) * 2
        out.append(row)
    return out


def _true(x) -> bool:
    """A row's flag, from the harness (bool) or read back from a CSV (text)."""
    return x is True or (isinstance(x, str) and x.strip().lower() in ("true", "1"))


def _nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def format_seeds(seeds: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``: the seeds as a reader can check them."""
    xs = sorted(set(seeds))
    parts: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ", ".join(parts)


def _shows_range(row: dict[str, Any]) -> bool:
    """The table shows ``row``'s range, not its interval: a 95 % interval from 2 to
    ``SMALL_N - 1`` seeds."""
    return row.get("spread") == "ci95" and 2 <= row.get("seeds", 0) < SMALL_N and "ranges" in row


def spread_note(summary: list[dict[str, Any]]) -> str:
    """What the numbers and ``±`` (or ``[min, max]``, or the error bars) are."""
    if not summary:
        return ""
    seeds = sorted({s for row in summary for s in row["seed_list"]})
    n = len(seeds)
    if n < 2:
        return f"mean of 1 seed ({format_seeds(seeds)}); one seed gives no spread"
    small = [r for r in summary if _shows_range(r)]
    if len(small) == len(summary):
        k = small[0]["seeds"]
        return (
            f"mean [min, max] over n = {n} seeds ({format_seeds(seeds)}); with fewer than "
            f"{SMALL_N} seeds the range is shown, as a 95 % confidence interval would be "
            f"±{_t_factor(k):.1f} standard errors wide (Student t, {k - 1} degrees of freedom) "
            "and say little"
        )
    note = f"mean ± {SPREADS[summary[0]['spread']]} over {n} seeds ({format_seeds(seeds)})"
    if small:
        note += f"; rows with fewer than {SMALL_N} seeds show mean [min, max] instead"
    return note


def _cell(row: dict[str, Any], metric: Metric) -> str:
    """One table cell: mean ± spread, mean [min, max] (few seeds), the mean (one seed),
    or ``-`` (no value)."""
    m, s = row.get(metric.key, (math.nan, math.nan))
    fmt = ".3f" if metric.bounded else ",.1f"  # a 0..1 value: three decimals
    if math.isnan(m):
        return "-"
    if _shows_range(row):
        lo, hi, k = row["ranges"].get(metric.key, (math.nan, math.nan, 0))
        if k >= 2:
            return f"{m:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"
        return f"{m:{fmt}}"
    if math.isnan(s):  # one seed: no interval
        return f"{m:{fmt}}"
    return f"{m:{fmt}} ± {s:{fmt}}"


def table_columns(summary: list[dict[str, Any]]) -> list[Metric]:
    """The comparison's columns, then each optional one (SLA violations) that some row of
    ``summary`` has a non-zero mean for."""
    extra = [
        m
        for m in OPTIONAL_COMPARE_COLUMNS
        if any(m.key in r and not _nan(r[m.key][0]) and r[m.key][0] != 0 for r in summary)
    ]
    return [*COMPARE_COLUMNS, *extra]


def markdown_table(summary: list[dict[str, Any]], columns: list[Metric] | None = None) -> str:
    """The summary as a markdown table (``columns``: :func:`table_columns` of ``summary``
    unless given, so that two tables can share them), then a line saying what ``±`` is."""
    columns = table_columns(summary) if columns is None else columns
    head = ["policy"] + [m.column for m in columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    cut = []
    for row in summary:
        cells = [row["policy"]]
        if row.get("truncated"):  # its JCTs cover the jobs that finished: say so
            cells[0] += " †"
            cut.append(row)
        cells += [_cell(row, metric) for metric in columns]
        lines.append("| " + " | ".join(cells) + " |")
    if summary and summary[0].get("spread") == "training-seed std":
        note = (
            "mean over the models of each one's mean over the evaluation seeds "
            "± sample standard deviation across the training seeds (their count is in "
            "each row's name)"
        )
    else:
        note = spread_note(summary)
    out = "\n".join(lines) + (f"\n\n{note[0].upper()}{note[1:]}." if note else "")
    for row in cut:
        runs = len(row["models"]) * row["seeds"] if "models" in row else row["seeds"]
        out += (
            f"\n\n† {row['policy']}: {row['truncated']} of {runs} runs cut before every job "
            "finished (a decision cap or the time cap); its JCT columns count the jobs that "
            "finished."
        )
    return out


def write_csv(rows: list[dict[str, Any]], path: str | Path) -> None:
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys and not k.startswith("_"):
                keys.append(k)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def job_jcts(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Per policy, every completed job's JCT across seeds (rows from ``keep_logs=True``)."""
    out: dict[str, list[float]] = {}
    for r in rows:
        for _, _, _, arrived, finish in r.get("_jobs") or ():
            if arrived is not None and finish is not None:
                out.setdefault(r["policy"], []).append(finish - arrived)
    return out


def fresh_run_dir(root: Path, prefix: str) -> Path:
    """A new ``root/PREFIX-YYYYmmdd-HHMMSS`` (``-2``, ``-3`` ... within one second), made
    here: a run never writes into an earlier run's folder, and the timestamp sorts the runs
    and says when each was made (``compare`` and ``reproduce`` folders)."""
    base = root / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
    root.mkdir(parents=True, exist_ok=True)
    out, k = base, 1
    while True:
        try:  # created atomically: two runs started in one second get two folders
            out.mkdir()
            return out
        except FileExistsError:
            k += 1
            out = base.with_name(f"{base.name}-{k}")
