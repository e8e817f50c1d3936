"""How a trace job's byte counts become a simulated job's sizes (SWIM and Rumen alike).

A trace gives a job's total input, shuffle and output bytes; the simulator needs an input
size, a map count and two ratios (``map_output_ratio`` = shuffle / map input,
``output_ratio`` = output / job input; see ``mrgym.sim.attempts``: a map writes
``input_mb * map_output_ratio``, the reduces write ``total input * output_ratio``).  The
rules, chosen here and used by both readers:

* **Tiny or zero input.**  A job whose input is below :data:`MIN_INPUT_MB` (SWIM has such
  rows: jobs that read nothing and generate data) reads one nominal split of
  ``MIN_INPUT_MB``.  Its shuffle and output are carried as absolute sizes: the ratios are
  taken relative to the *simulated* input, so the simulated job shuffles and writes exactly
  the trace's bytes.  (Ratios relative to the trace's own input, ~0 bytes, would multiply a
  10 GB shuffle by ~1 000 or by 1e10 with a zero-input guard of one byte.)
* **Truncated input.**  When ``workload.max_maps`` (or the block size) cuts a job's input,
  shuffle, output and reduce count shrink by the same factor ``simulated / trace input``, so
  each task keeps the trace's per-task sizes; nothing is ever scaled *up*.
* **Reduce cap.**  A job never has more reduces than ``workload.max_maps``: the one per-job
  task cap bounds both phases (SWIM's largest shuffle, 8.2 TB, would otherwise ask for 8 216
  reduces of 1 GB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

MB = 1024.0 * 1024.0
# One empty split: the input a job with (near) zero trace input reads.  Small enough to cost
# nothing (1 KB), non-zero so the map has a block to read and the ratios stay finite.
MIN_INPUT_MB = 1e-3
QUOTE_CHARS = 60  # error messages quote at most this much of the offending input
MAX_COUNT = 2**63 - 1  # Hadoop counters are Java longs; anything larger is corrupt
# The most bytes of trace text a reader takes in, after decompression.  A reader holds the
# text and its decoded string at once (~2x this in memory at the peak), so 512 MiB keeps a
# run under ~1.5 GB; public SWIM and Rumen traces are well below it (tens of MB).  A gzip
# "bomb" (2.5 MB unpacking to 2.6 GB) is stopped at this many bytes, not allocated.
MAX_TRACE_BYTES = 512 * 1024**2


def trace_file(path: str | Path, reader: str) -> Path:
    """``path`` as a Path when it names a readable regular file; otherwise a one-line
    ``ValueError`` naming the reader and the path (never IsADirectoryError and friends)."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{reader}: {p}: expected a trace file, got a directory")
    if not p.exists():
        raise ValueError(f"{reader}: {p}: no such trace file")
    if not p.is_file():  # a device or a pipe: no size to check, maybe no end
        raise ValueError(f"{reader}: {p}: expected a trace file, got a special file")
    return p


@dataclass(frozen=True)
class Sizing:
    input_mb: float  # simulated input
    map_output_ratio: float
    output_ratio: float
    scale: float  # simulated / trace size of shuffle, output and reduce count (<= 1)

    @property
    def shuffle_mb(self) -> float:
        return self.input_mb * self.map_output_ratio


def size_job(
    trace_input_mb: float, sim_input_mb: float, shuffle_mb: float, output_mb: float
) -> Sizing:
    """Ratios that make the simulated job shuffle ``shuffle_mb * scale`` and write
    ``output_mb * scale``, where ``scale = min(1, sim_input / trace_input)``."""
    sim = max(sim_input_mb, MIN_INPUT_MB)
    scale = min(1.0, sim / trace_input_mb) if trace_input_mb > 0 else 1.0
    return Sizing(sim, shuffle_mb * scale / sim, output_mb * scale / sim, scale)


def cap_reduces(n: float, max_tasks: int) -> int:
    """A reduce count: ``ceil(n)`` (so a job with any shuffle keeps one reduce), capped at the
    workload's per-job task cap; 0 stays 0 (map-only job)."""
    if n <= 0:
        return 0
    return min(max(1, math.ceil(n - 1e-9)), max(1, max_tasks))


def quote(value: object) -> str:
    """``repr`` of a bad input, cut to :data:`QUOTE_CHARS` so an error stays one short line."""
    r = repr(value)
    return r if len(r) <= QUOTE_CHARS else r[: QUOTE_CHARS - 3] + "..."


def source_name(w: object, default: str) -> str:
    """The trace file a workload spec names, for messages about its selection."""
    path = getattr(w, "path", None)
    return Path(str(path)).name if path else default


def selection_error(src: str, w: object, n_rows: int, lo: float, hi: float) -> ValueError:
    """No job left after ``start_s``/``duration_s``: an error, never a 0-job episode."""
    dur = getattr(w, "duration_s", None)
    return ValueError(
        f"{src}: no jobs in the selection start_s={getattr(w, 'start_s', 0.0):g}, "
        f"duration_s={'none' if dur is None else f'{dur:g}'} "
        f"(the trace's {n_rows} jobs are submitted at {lo:g}-{hi:g} s)"
    )
