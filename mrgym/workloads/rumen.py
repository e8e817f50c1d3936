"""Hadoop Rumen job traces (JSON objects concatenated, one per job; Mumak's input).

We keep per job: submit time, map and reduce counts, HDFS bytes read by successful maps,
shuffle bytes, HDFS bytes written, and the successful map attempts' durations.  Mapping
to the simulator (our choice, stated here; sizing rules shared with the SWIM reader:
:mod:`mrgym.workloads.trace_sizing`):

* maps = the trace's ``totalMaps``, at most ``workload.max_maps``; the job's trace input is
  the mean successful map's ``hdfsBytesRead`` x ``totalMaps``, and each simulated map reads
  that mean, at least ``MIN_INPUT_MB`` (an empty split) and at most one block;
* the simulated job shuffles and writes the trace's bytes (successful reduces'
  ``reduceShuffleBytes`` and ``hdfsBytesWritten``), shrunk by ``simulated / trace input``
  when ``max_maps`` or the block size cuts the input; never scaled up, so a job reading
  ~0 bytes still shuffles what the trace says;
* reduces = ``totalReduces`` x the same factor (so each reduce shuffles the trace's
  per-reduce bytes), at least 1 when the trace has any, at most ``workload.max_maps``;
* map CPU per MB is fitted to the median successful map duration minus a 100 MB/s read
  (floored at the base profile's value);
* jobs with no maps are dropped; times are relative to the first submission, divided by
  ``time_scale``.  A trace or selection with no job left is an error.

Malformed input (bad gzip, non-UTF-8 bytes, invalid or truncated JSON, a top-level array, a
field of the wrong type) raises a one-line ``ValueError`` naming the file and the job; so does
a path that is no file, and a trace whose text (after gunzip) exceeds
:data:`~mrgym.workloads.trace_sizing.MAX_TRACE_BYTES`: a .gz is unpacked in chunks and
stopped at the limit, never inflated whole.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mrgym.sim.jobs import JobSpec, get_profile
from mrgym.workloads.trace_sizing import (
    MAX_COUNT,
    MAX_TRACE_BYTES,
    MB,
    MIN_INPUT_MB,
    cap_reduces,
    quote,
    selection_error,
    size_job,
    source_name,
    trace_file,
)

REFERENCE_DISK_MBPS = 100.0
GZIP_MAGIC = b"\x1f\x8b"


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


class _Bad(Exception):
    """A field of one job is malformed; :func:`read_rumen` adds the file and job."""


# -- typed access: a wrong type is a _Bad naming the field, never a TypeError deep inside ----
def _num(o: dict, key: str, where: str, default: float | None = None) -> float:
    v = o.get(key, default)
    if v is None:
        raise _Bad(f"{where}{key} is missing")
    if (
        isinstance(v, bool)
        or not isinstance(v, int | float)
        or abs(v) > MAX_COUNT  # before isfinite: a huge JSON int does not fit a float
        or not math.isfinite(v)
    ):
        raise _Bad(f"{where}{key} must be a number, got {quote(v)}")
    return v


def _count(o: dict, key: str, where: str, default: int | None = None) -> int:
    v = _num(o, key, where, default)
    if v < 0 or v != int(v):
        raise _Bad(f"{where}{key} must be a whole number >= 0, got {quote(v)}")
    return int(v)


def _str(o: dict, key: str, where: str, default: str | None = None) -> str | None:
    v = o.get(key, default)
    if v is not None and not isinstance(v, str):
        raise _Bad(f"{where}{key} must be a string, got {quote(v)}")
    return v


def _objs(o: dict, key: str, where: str) -> list[tuple[str, dict]]:
    """The objects of list field ``key`` (absent or null: none), each with its path."""
    v = o.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise _Bad(f"{where}{key} must be a list, got {quote(v)}")
    for i, x in enumerate(v):
        if not isinstance(x, dict):
            raise _Bad(f"{where}{key}[{i}] must be an object, got {quote(x)}")
    return [(f"{where}{key}[{i}].", x) for i, x in enumerate(v)]


def _host_rack(name: str | None) -> tuple[str | None, str | None]:
    if not name:
        return None, None
    parts = name.replace("\\.", ".").strip("/").split("/")
    return (parts[-1], parts[0]) if len(parts) >= 2 else (parts[-1], None)


def _too_big(p: Path) -> ValueError:
    return ValueError(
        f"{p.name}: the trace's text exceeds the limit of {MAX_TRACE_BYTES:,} bytes "
        "(MAX_TRACE_BYTES); split it or select fewer jobs"
    )


def _gunzip(p: Path, limit: int) -> bytes:
    """The decompressed bytes of ``p``, read in chunks: more than ``limit`` is refused
    before it is allocated (a small .gz can unpack to gigabytes)."""
    chunks, total = [], 0
    try:
        with gzip.open(p, "rb") as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
                if total > limit:
                    raise _too_big(p)
                chunks.append(chunk)
    except (OSError, EOFError, zlib.error) as e:
        raise ValueError(f"{p.name}: not a valid gzip file ({e})") from None
    return b"".join(chunks)


def _raw(p: Path) -> bytes:
    """The file's bytes, gunzipped when it starts with gzip's magic (or is named .gz)."""
    with p.open("rb") as fh:
        magic = fh.read(2)
    if magic == GZIP_MAGIC or p.suffix == ".gz":
        return _gunzip(p, MAX_TRACE_BYTES)
    if p.stat().st_size > MAX_TRACE_BYTES:
        raise _too_big(p)
    return p.read_bytes()


def _text(p: Path) -> str:
    """The file's text (see :func:`_raw`), refused when it is not UTF-8."""
    raw = _raw(p)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        # the text before the bad byte is valid: the objects it completes name the job
        k = sum(1 for _ in _objects(raw[: e.start].decode("utf-8"), p.name, complete=True)) + 1
        line = raw.count(b"\n", 0, e.start) + 1
        raise ValueError(
            f"{p.name}: job {k} (line {line}): not UTF-8 text (byte {e.start + 1} of the file)"
        ) from None


def _objects(text: str, name: str, complete: bool = False) -> Iterator[Any]:
    """The JSON values of a concatenated stream; ``complete``: stop quietly at the first
    value that does not parse (counting the whole ones before a bad byte)."""
    dec = json.JSONDecoder()
    i, n, k = 0, len(text), 0
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return
        k += 1
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError as e:
            if complete:
                return
            raise ValueError(
                f"{name}: job {k} (line {e.lineno}): invalid JSON at character {e.pos}: {e.msg}"
            ) from None
        except RecursionError:
            if complete:
                return
            raise ValueError(f"{name}: job {k}: JSON nested too deeply") from None
        yield obj


def read_rumen(path: str | Path) -> list[RumenJob]:
    """Parse a Rumen trace (plain or .gz): a stream of JSON objects, not an array."""
    p = trace_file(path, "read_rumen")
    jobs: list[RumenJob] = []
    for k, obj in enumerate(_objects(_text(p), p.name), 1):
        if not isinstance(obj, dict):
            raise ValueError(
                f"{p.name}: job {k}: expected a JSON object per job (Rumen traces are a stream "
                f"of objects), got a {type(obj).__name__}"
            )
        try:
            jobs.append(_job(obj))
        except _Bad as e:
            jid = obj.get("jobID")
            plain = isinstance(jid, str) and len(jid) <= 40 and jid.isprintable()
            name = f" ({jid})" if plain else ""
            raise ValueError(f"{p.name}: job {k}{name}: {e}") from None
    if not jobs:
        raise ValueError(f"{p.name}: no jobs (empty trace)")
    return jobs


def _ok_attempts(task_where: str, t: dict) -> list[tuple[str, dict]]:
    out = []
    for where, a in _objs(t, "attempts", task_where):
        if _str(a, "result", where) == "SUCCESS":
            out.append((where, a))
    return out


def _job(o: dict) -> RumenJob:
    in_bytes = out_bytes = shuffle = 0
    ok_maps = 0
    durs = []
    loc = {"node": 0, "rack": 0, "off_rack": 0}
    maps = _objs(o, "mapTasks", "")
    reduces = _objs(o, "reduceTasks", "")
    for tw, t in maps:
        prefs = set()
        for pw, pl in _objs(t, "preferredLocations", tw):
            layers = pl.get("layers")
            if not layers:
                continue
            if not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
                raise _Bad(f"{pw}layers must be a list of strings, got {quote(layers)}")
            prefs.add((_host_rack(layers[-1])[0], layers[0].replace("\\.", ".")))
        for aw, a in _ok_attempts(tw, t):
            ok_maps += 1
            in_bytes += max(0, int(_num(a, "hdfsBytesRead", aw, -1)))  # -1: not recorded
            start, finish = _num(a, "startTime", aw, -1), _num(a, "finishTime", aw, -1)
            if start > 0 and finish > 0:
                durs.append((finish - start) / 1000.0)
            host, rack = _host_rack(_str(a, "hostName", aw))
            if prefs and host:
                if any(h == host for h, _ in prefs):
                    loc["node"] += 1
                elif any(r == rack for _, r in prefs):
                    loc["rack"] += 1
                else:
                    loc["off_rack"] += 1
            if not reduces:  # a map-only job writes its output from the maps
                out_bytes += max(0, int(_num(a, "hdfsBytesWritten", aw, -1)))
    for tw, t in reduces:
        for aw, a in _ok_attempts(tw, t):
            shuffle += max(0, int(_num(a, "reduceShuffleBytes", aw, -1)))
            out_bytes += max(0, int(_num(a, "hdfsBytesWritten", aw, -1)))
    job_id = _str(o, "jobID", "")
    if not job_id:
        raise _Bad("jobID is missing")
    return RumenJob(
        job_id,
        _str(o, "user", "", "default") or "default",
        int(_num(o, "submitTime", "")),
        _count(o, "totalMaps", ""),
        _count(o, "totalReduces", "", 0),
        str(_str(o, "outcome", "")),
        in_bytes,
        ok_maps,
        shuffle,
        out_bytes,
        tuple(durs),
        loc,
    )


def rumen_jobs(rows: list[RumenJob], w: Any, block_mb: float) -> list[JobSpec]:
    """The selected jobs (module docstring: sizes, reduce counts, window)."""
    src = source_name(w, "Rumen trace")
    base = get_profile(w.base_profile)
    rows = [r for r in rows if r.total_maps > 0]
    if not rows:
        raise ValueError(f"{src}: no jobs with totalMaps > 0")
    t0 = min(r.submit_ms for r in rows)
    rel = [(r.submit_ms - t0) / 1000.0 for r in rows]
    end = w.start_s + w.duration_s if w.duration_s else math.inf
    sel = [r for r, t in zip(rows, rel) if w.start_s <= t < end]
    if not sel:
        raise selection_error(src, w, len(rows), min(rel), max(rel))
    if w.max_jobs:
        sel = sel[: w.max_jobs]
    out = []
    for r in sel:
        maps = min(w.max_maps, r.total_maps)
        trace_per_map = (r.map_input_bytes / r.successful_maps / MB) if r.successful_maps else 0.0
        per_map = min(max(trace_per_map, MIN_INPUT_MB), block_mb)
        s = size_job(
            trace_per_map * r.total_maps, per_map * maps, r.shuffle_bytes / MB, r.output_bytes / MB
        )
        cpu = base.map_cpu_s_per_mb
        if r.map_durations_s and per_map > 1.0:
            med = float(np.median(r.map_durations_s))
            cpu = max(cpu, (med - per_map / REFERENCE_DISK_MBPS) / per_map)
        prof = base.with_(
            map_output_ratio=s.map_output_ratio,
            output_ratio=s.output_ratio,
            map_cpu_s_per_mb=cpu,
        )
        out.append(
            JobSpec(
                r.job_id,
                prof,
                (r.submit_ms - t0) / 1000.0 / w.time_scale - w.start_s / w.time_scale,
                maps,
                cap_reduces(r.total_reduces * s.scale, w.max_maps),
                s.input_mb,
                user=r.user,
                pool=r.user,
                map_durations_s=r.map_durations_s,
            )
        )
    return out
