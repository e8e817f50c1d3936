"""Hadoop Rumen job traces (JSON objects concatenated, one per job; Mumak's input).

We keep per job: submit time, map and reduce counts, HDFS bytes read by successful maps,
shuffle bytes, HDFS bytes written, and the successful map attempts' durations.  Mapping
to the simulator (our choice, stated here):

* maps = the trace's ``totalMaps``; input = the mean successful map's ``hdfsBytesRead``
  x maps (so the block count equals the map count when blocks are large enough: the
  split size is input / maps, capped at the block size by ``workload.max_maps``);
* the profile is ``base_profile`` with map-output ratio = shuffle / input and output ratio
  = HDFS output / input, and map CPU per MB fitted to the median successful map duration
  minus a 100 MB/s read (floored at the base profile's value);
* times are relative to the first submission, divided by ``time_scale``.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mrgym.sim.jobs import JobSpec, get_profile

MB = 1024.0 * 1024.0
REFERENCE_DISK_MBPS = 100.0


@dataclass(frozen=True)
class RumenJob:
    job_id: str
    user: str
    submit_ms: int
    total_maps: int
    total_reduces: int
    outcome: str
    map_input_bytes: int  # sum over successful maps
    successful_maps: int
    shuffle_bytes: int
    output_bytes: int
    map_durations_s: tuple[float, ...]
    map_locality: dict  # node/rack/off_rack counts of successful map attempts


def _open(path: Path):
    return gzip.open(path, "rt") if path.suffix == ".gz" else path.open()


def _host_rack(name: str | None) -> tuple[str | None, str | None]:
    if not name:
        return None, None
    parts = name.replace("\\.", ".").strip("/").split("/")
    return (parts[-1], parts[0]) if len(parts) >= 2 else (parts[-1], None)


def read_rumen(path: str | Path) -> list[RumenJob]:
    """Parse a Rumen trace (plain or .gz): a stream of JSON objects, not an array."""
    p = Path(path)
    with _open(p) as fh:
        text = fh.read()
    dec = json.JSONDecoder()
    i, n = 0, len(text)
    jobs = []
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise ValueError(f"{p.name}: invalid JSON at character {e.pos}: {e.msg}") from None
        jobs.append(_job(obj))
    return jobs


def _job(o: dict) -> RumenJob:
    in_bytes = out_bytes = shuffle = 0
    ok_maps = 0
    durs = []
    loc = {"node": 0, "rack": 0, "off_rack": 0}
    for t in o.get("mapTasks") or []:
        prefs = {
            (_host_rack(pl["layers"][-1])[0], pl["layers"][0].replace("\\.", "."))
            for pl in (t.get("preferredLocations") or [])
            if pl.get("layers")
        }
        for a in t.get("attempts") or []:
            if a.get("result") != "SUCCESS":
                continue
            ok_maps += 1
            in_bytes += max(0, a.get("hdfsBytesRead", -1))
            if a.get("startTime", -1) > 0 and a.get("finishTime", -1) > 0:
                durs.append((a["finishTime"] - a["startTime"]) / 1000.0)
            host, rack = _host_rack(a.get("hostName"))
            if prefs and host:
                if any(h == host for h, _ in prefs):
                    loc["node"] += 1
                elif any(r == rack for _, r in prefs):
                    loc["rack"] += 1
                else:
                    loc["off_rack"] += 1
    for t in o.get("reduceTasks") or []:
        for a in t.get("attempts") or []:
            if a.get("result") != "SUCCESS":
                continue
            shuffle += max(0, a.get("reduceShuffleBytes", -1))
            out_bytes += max(0, a.get("hdfsBytesWritten", -1))
    if not o.get("reduceTasks"):
        for t in o.get("mapTasks") or []:
            for a in t.get("attempts") or []:
                if a.get("result") == "SUCCESS":
                    out_bytes += max(0, a.get("hdfsBytesWritten", -1))
    return RumenJob(
        str(o.get("jobID")),
        str(o.get("user", "default")),
        int(o.get("submitTime", 0)),
        int(o.get("totalMaps", 0)),
        int(o.get("totalReduces", 0)),
        str(o.get("outcome")),
        in_bytes,
        ok_maps,
        shuffle,
        out_bytes,
        tuple(durs),
        loc,
    )


def rumen_jobs(rows: list[RumenJob], w, block_mb: float) -> list[JobSpec]:
    base = get_profile(w.base_profile)
    rows = [r for r in rows if r.total_maps > 0]
    if not rows:
        return []
    t0 = min(r.submit_ms for r in rows)
    rows = [r for r in rows if (r.submit_ms - t0) / 1000.0 >= w.start_s]
    if w.duration_s:
        rows = [r for r in rows if (r.submit_ms - t0) / 1000.0 < w.start_s + w.duration_s]
    if w.max_jobs:
        rows = rows[: w.max_jobs]
    out = []
    for r in rows:
        maps = min(w.max_maps, r.total_maps)
        per_map = (r.map_input_bytes / r.successful_maps / MB) if r.successful_maps else 0.0
        per_map = min(max(per_map, 1e-3), block_mb)
        in_mb = per_map * maps
        ratio_in = max(r.map_input_bytes, 1)
        cpu = base.map_cpu_s_per_mb
        if r.map_durations_s and per_map > 1.0:
            med = float(np.median(r.map_durations_s))
            cpu = max(cpu, (med - per_map / REFERENCE_DISK_MBPS) / per_map)
        prof = base.with_(
            map_output_ratio=r.shuffle_bytes / ratio_in,
            output_ratio=r.output_bytes / ratio_in,
            map_cpu_s_per_mb=cpu,
        )
        out.append(
            JobSpec(
                r.job_id,
                prof,
                (r.submit_ms - t0) / 1000.0 / w.time_scale - w.start_s / w.time_scale,
                maps,
                r.total_reduces,
                in_mb,
                user=r.user,
                pool=r.user,
                map_durations_s=r.map_durations_s,
            )
        )
    return out
