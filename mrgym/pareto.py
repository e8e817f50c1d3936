"""The Pareto front of points in two objectives, both minimized (a maximized one: negate it)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the non-dominated points (both coordinates minimised), by first coordinate."""
    # sorted by (x, y, index): a point is on the front iff its y beats every earlier y;
    # ties in x put the lowest y first, and an exact duplicate keeps its first index
    finite = [i for i, (x, y) in enumerate(points) if math.isfinite(x) and math.isfinite(y)]
    order = sorted(finite, key=lambda i: (points[i][0], points[i][1], i))  # NaN: never on it
    front: list[int] = []
    best = float("inf")
    for i in order:
        if points[i][1] < best:
            front.append(i)
            best = points[i][1]
    return front
