"""SWIM workload traces (Facebook 2009/2010 synthesized days; Chen et al., SWIM).

Format: tab-separated rows ``job_id, submit_s, gap_s, map_input_bytes, shuffle_bytes,
reduce_output_bytes`` (+ ``input_path`` and two empty fields in the ``withInputPaths``
variants).  SWIM has no task counts, so we choose and state:

* maps = ceil(map input / block size), at least 1 (one map per HDFS block, as Hadoop);
  a job with no input reads one empty split (1 map, ~0 MB);
* reduces = ceil(shuffle / ``reduce_mb``) (default 1 GB per reduce), 0 when shuffle is 0
  (SWIM's map-only jobs);
* the job's profile is ``base_profile`` with its map-output and output ratios replaced by
  the trace's shuffle/input and output/input;
* ``start_s``/``duration_s`` cut a window of the day, ``time_scale`` compresses time,
  ``max_jobs`` caps the count, and map counts are capped at ``max_maps``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from mrgym.sim.jobs import JobSpec, get_profile

MB = 1024.0 * 1024.0


@dataclass(frozen=True)
class SwimJob:
    job_id: str
    submit_s: float
    gap_s: float
    input_bytes: int
    shuffle_bytes: int
    output_bytes: int


def read_swim(path: str | Path) -> list[SwimJob]:
    """Parse a SWIM TSV (6 or 9 fields a row); errors name the line."""
    out = []
    p = Path(path)
    with p.open() as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            f = line.split("\t")
            if len(f) < 6:
                raise ValueError(
                    f"{p.name}:{n}: expected 6 or 9 tab-separated fields, got {len(f)}"
                )
            try:
                out.append(SwimJob(f[0], float(f[1]), float(f[2]), int(f[3]), int(f[4]), int(f[5])))
            except ValueError:
                raise ValueError(
                    f"{p.name}:{n}: fields 2-6 must be numbers, got {f[1:6]}"
                ) from None
    return out


def swim_jobs(rows: list[SwimJob], w, block_mb: float) -> list[JobSpec]:
    base = get_profile(w.base_profile)
    end = w.start_s + w.duration_s if w.duration_s else math.inf
    sel = [r for r in rows if w.start_s <= r.submit_s < end]
    if w.max_jobs:
        sel = sel[: w.max_jobs]
    out = []
    for r in sel:
        in_mb = r.input_bytes / MB
        maps = min(w.max_maps, max(1, math.ceil(in_mb / block_mb)))
        in_mb = min(in_mb, maps * block_mb)
        reduces = (
            0 if r.shuffle_bytes == 0 else max(1, math.ceil(r.shuffle_bytes / MB / w.reduce_mb))
        )
        ratio_in = max(r.input_bytes, 1)
        prof = base.with_(
            name=f"{base.name}",
            map_output_ratio=r.shuffle_bytes / ratio_in,
            output_ratio=r.output_bytes / ratio_in,
        )
        out.append(
            JobSpec(
                r.job_id,
                prof,
                (r.submit_s - w.start_s) / w.time_scale,
                maps,
                reduces,
                max(in_mb, 1e-3),
            )
        )
    return out
