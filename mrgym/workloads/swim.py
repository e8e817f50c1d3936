"""SWIM workload traces (Facebook 2009/2010 synthesized days; Chen et al., SWIM).

Format: tab-separated rows ``job_id, submit_s, gap_s, map_input_bytes, shuffle_bytes,
reduce_output_bytes`` (+ ``input_path`` and two empty fields in the ``withInputPaths``
variants).  SWIM has no task counts, so we choose and state (sizing rules shared with the
Rumen reader: :mod:`mrgym.workloads.trace_sizing`):

* maps = ceil(map input / block size), at least 1 (one map per HDFS block, as Hadoop),
  at most ``max_maps``; a job with no input reads one empty split (1 map of
  ``MIN_INPUT_MB``) and its shuffle and output bytes are carried as absolute sizes, so the
  simulated job shuffles exactly the trace's bytes (FB-2009 day 0 has 86 such rows);
* when ``max_maps`` cuts a job's input, its shuffle and output shrink in proportion;
* reduces = ceil(simulated shuffle / ``reduce_mb``) (default 1 GB per reduce), 0 when
  shuffle is 0 (SWIM's map-only jobs), at most ``max_maps``;
* the job's profile is ``base_profile`` with its map-output and output ratios replaced by
  the trace's shuffle/input and output/input (relative to the simulated input);
* ``start_s``/``duration_s`` cut a window of the day, ``time_scale`` compresses time,
  ``max_jobs`` caps the count.  A trace or a selection with no job is an error.

Malformed rows raise a one-line ``ValueError`` naming the file and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from mrgym.sim.jobs import JobSpec, get_profile
from mrgym.workloads.trace_sizing import (
    MAX_COUNT,
    MAX_TRACE_BYTES,
    MB,
    cap_reduces,
    quote,
    selection_error,
    size_job,
    source_name,
    trace_file,
)

FIELD_COUNTS = (6, 9)  # plain rows, and the withInputPaths variant
TIME_FIELDS = ("submit_s", "gap_s")
BYTE_FIELDS = ("map_input_bytes", "shuffle_bytes", "reduce_output_bytes")


@dataclass(frozen=True)
class SwimJob:
    job_id: str
    submit_s: float
    gap_s: float
    input_bytes: int
    shuffle_bytes: int
    output_bytes: int


def _seconds(name: str, text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a finite number of seconds >= 0, got {quote(text)}")
    return v


def _bytes(name: str, text: str) -> int:
    try:
        v: int | None = int(text)
    except ValueError:
        try:
            f = float(text)  # "1.5e9" is a byte count too
        except ValueError:
            f = math.nan
        v = int(f) if math.isfinite(f) and f == int(f) else None
    if v is None or not 0 <= v <= MAX_COUNT:
        raise ValueError(f"{name} must be a whole number of bytes >= 0, got {quote(text)}")
    return v


def _row(fields: list[str]) -> SwimJob:
    if len(fields) not in FIELD_COUNTS:
        raise ValueError(f"expected 6 or 9 tab-separated fields, got {len(fields)}")
    if not fields[0].strip():
        raise ValueError("job_id is empty")
    t = [_seconds(k, s) for k, s in zip(TIME_FIELDS, fields[1:3])]
    b = [_bytes(k, s.strip()) for k, s in zip(BYTE_FIELDS, fields[3:6])]
    return SwimJob(fields[0].strip(), t[0], t[1], b[0], b[1], b[2])


def read_swim(path: str | Path) -> list[SwimJob]:
    """Parse a SWIM TSV (6 or 9 fields a row); errors are one line naming file and line."""
    p = trace_file(path, "read_swim")
    if p.stat().st_size > MAX_TRACE_BYTES:
        raise ValueError(
            f"{p.name}: the trace exceeds the limit of {MAX_TRACE_BYTES:,} bytes "
            "(MAX_TRACE_BYTES); split it or select fewer jobs"
        )
    out = []
    with p.open("rb") as fh:  # bytes: a non-UTF-8 line is reported with its number
        for n, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise ValueError(f"{p.name}:{n}: not UTF-8 text (byte {e.start + 1})") from None
            if not line.strip():
                continue
            try:
                out.append(_row(line.split("\t")))
            except ValueError as e:
                raise ValueError(f"{p.name}:{n}: {e}") from None
    if not out:
        raise ValueError(f"{p.name}: no job rows (empty trace)")
    return out


def swim_jobs(rows: list[SwimJob], w, block_mb: float) -> list[JobSpec]:
    """The selected rows as jobs (module docstring: sizes, reduce counts, window)."""
    src = source_name(w, "SWIM trace")
    if not rows:
        raise ValueError(f"{src}: no job rows (empty trace)")
    base = get_profile(w.base_profile)
    end = w.start_s + w.duration_s if w.duration_s else math.inf
    sel = [r for r in rows if w.start_s <= r.submit_s < end]
    if not sel:
        times = [r.submit_s for r in rows]
        raise selection_error(src, w, len(rows), min(times), max(times))
    if w.max_jobs:
        sel = sel[: w.max_jobs]
    out = []
    for r in sel:
        trace_mb = r.input_bytes / MB
        maps = min(w.max_maps, max(1, math.ceil(trace_mb / block_mb)))
        s = size_job(
            trace_mb, min(trace_mb, maps * block_mb), r.shuffle_bytes / MB, r.output_bytes / MB
        )
        reduces = 0 if r.shuffle_bytes == 0 else cap_reduces(s.shuffle_mb / w.reduce_mb, w.max_maps)
        prof = base.with_(map_output_ratio=s.map_output_ratio, output_ratio=s.output_ratio)
        out.append(
            JobSpec(
                r.job_id, prof, (r.submit_s - w.start_s) / w.time_scale, maps, reduces, s.input_mb
            )
        )
    return out
