"""Seeds as the command line and the library take them: ``0-4``, ``1,3,9`` or ``7``.

Library code (``agents.analysis.generalize``, the benchmarks) parses seed lists here, not
through the CLI, so that no library module imports :mod:`mrgym.cli`.
"""

from __future__ import annotations

from mrgym.config import short

MAX_SEEDS = 10_000  # a typo like 0-1000000000 would otherwise build a billion-item list


def parse_seeds(text: str) -> list[int]:
    """``0-4`` -> [0..4]; ``1,3,9`` -> [1, 3, 9]; ``7`` -> [7]."""
    shown = short(text)
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            a, dash, b = part.partition("-")
            lo, hi = int(a), int(b) if dash else int(a)
        except ValueError:
            raise ValueError(
                f"--seeds {shown}: expected a range like 0-4 or a list like 1,3,9"
            ) from None
        if hi < lo:
            raise ValueError(f"--seeds {shown}: the range {part} runs backwards; write {hi}-{lo}")
        if hi - lo + 1 + len(seeds) > MAX_SEEDS:
            raise ValueError(f"--seeds {shown}: at most {MAX_SEEDS:,} seeds")
        seeds.extend(range(lo, hi + 1))
    if not seeds:
        raise ValueError(f"--seeds {shown}: no seed given")
    if max(seeds) >= 2**63:  # numpy's SeedSequence takes non-negative integers
        raise ValueError(f"--seeds {shown}: seeds must be < 2**63")
    return seeds


def check_seed(seed: int) -> int:
    if not 0 <= seed < 2**63:  # numpy's SeedSequence takes non-negative integers
        raise ValueError(f"--seed {seed}: must be >= 0 and < 2**63")
    return seed
