"""Means with 95 % Student-t intervals, fit quality, and the figure helpers the claims
share (matplotlib without pyplot, like :mod:`mrgym.plots`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class MeanCI:
    """Mean over seeds and the half-width of its 95 % Student-t interval (NaN from one
    seed: one value gives no interval, and saying 0 would claim a precision we lack)."""

    mean: float
    half: float
    n: int

    @property
    def lo(self) -> float:
        return self.mean - self.half if self.n > 1 else self.mean

    @property
    def hi(self) -> float:
        return self.mean + self.half if self.n > 1 else self.mean

    def fmt(self, digits: int = 2, scale: float = 1.0, unit: str = "") -> str:
        """``"1.23 ± 0.04 x"``; with one seed ``"1.23 x (1 seed)"``."""
        m = self.mean * scale
        if self.n < 2:
            return f"{m:.{digits}f}{unit} (1 seed)"
        return f"{m:.{digits}f} ± {self.half * scale:.{digits}f}{unit}"

    def pct(self, digits: int = 1) -> str:
        """The mean and interval of a fraction as signed percentages: ``"+15.2 ± 3.1 %"``."""
        m = 100 * self.mean
        if self.n < 2:
            return f"{m:+.{digits}f} % (1 seed)"
        return f"{m:+.{digits}f} ± {100 * self.half:.{digits}f} %"

    def as_dict(self) -> dict:
        return {"mean": self.mean, "ci95": None if self.n < 2 else self.half, "n": self.n}


def mean_ci(values: Sequence[float]) -> MeanCI:
    """Mean of ``values`` with the half-width of the 95 % Student-t interval."""
    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        raise ValueError("mean_ci: no values")
    if len(v) < 2:
        return MeanCI(float(v[0]), math.nan, 1)
    from scipy import stats

    half = float(stats.t.ppf(0.975, len(v) - 1)) * float(v.std(ddof=1)) / math.sqrt(len(v))
    return MeanCI(float(v.mean()), half, len(v))


def r2(y: np.ndarray, fit: np.ndarray) -> float:
    """Coefficient of determination of ``fit`` for ``y``."""
    y, fit = np.asarray(y, dtype=float), np.asarray(fit, dtype=float)
    return float(1 - np.sum((y - fit) ** 2) / np.sum((y - y.mean()) ** 2))


def exp_vs_linear(x: Sequence[float], y: Sequence[float]) -> dict:
    """Fit ``a·exp(b·x) + c`` and a line to (x, y): parameters, fitted values, both R²."""
    from scipy.optimize import curve_fit

    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    (a, b, c), _ = curve_fit(
        lambda t, a, b, c: a * np.exp(b * t) + c, xs, ys, p0=(1, 0.2, 0), maxfev=20000
    )
    exp_fit = a * np.exp(b * xs) + c
    coef = np.polyfit(xs, ys, 1)
    lin_fit = np.polyval(coef, xs)
    return {
        "exp": {"a": float(a), "b": float(b), "c": float(c), "r2": r2(ys, exp_fit)},
        "linear": {"slope": float(coef[0]), "intercept": float(coef[1]), "r2": r2(ys, lin_fit)},
        "exp_fit": exp_fit,
        "lin_fit": lin_fit,
    }


def pct(x: float, digits: int = 0) -> str:
    """``0.25`` -> ``"25 %"`` (the project writes a space before %)."""
    return f"{100 * x:.{digits}f} %"


DPI = 150


def plot_file(out: Path, key: str) -> Path:
    """Where claim ``key`` writes its figure: ``out/<key>.png``, ``out`` being the folder a
    claim's ``run(seeds, out)`` gets, the report's folder (its links are relative)."""
    return Path(out) / f"{key}.png"


def figure(width: float = 5.0, height: float = 3.4):
    """A fresh figure and its one axes (no pyplot: no global backend or figure state)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot()
    ax.grid(alpha=0.3)
    ax.set_axisbelow(True)
    return fig, ax


def save(fig, path: Path, caption: str | None = None) -> Path:
    """Write ``fig`` as a PNG; ``caption`` goes under the axes (the source of the
    paper's number, so the figure can be read on its own)."""
    if caption:
        fig.text(0.01, -0.02, caption, ha="left", va="top", fontsize=7.5, color="0.3", wrap=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    # bbox_inches="tight" takes in the caption below and a legend beside the axes
    fig.savefig(path, dpi=DPI, bbox_inches="tight", pad_inches=0.1)
    return path


def ci(xs) -> tuple[float, float]:
    """Mean and half-width of the 95 % t-interval of the finite values (0 for one value)."""
    a = [x for x in xs if x is not None and np.isfinite(x)]
    if not a:
        return float("nan"), float("nan")
    m = mean_ci(a)
    return m.mean, (m.half if m.n > 1 else 0.0)


def fmt(xs, scale: float = 1.0, digits: int = 0, unit: str = "") -> str:
    m, h = ci(xs)
    if len(list(xs)) < 2:  # one seed: no interval
        return f"{m * scale:.{digits}f}{unit}"
    return f"{m * scale:.{digits}f} ± {h * scale:.{digits}f}{unit}"


def save_pyplot(fig, out: Path, key: str) -> Path:
    """Write a pyplot figure as claim ``key``'s plot (``out/<key>.png``)."""
    path = plot_file(out, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)
    return path


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
