"""The ``sample`` decode's temperature (``eval.temperature``): its check and the
reshaping of the probabilities, kept apart so that the training config can check the
setting without importing the policy."""

from __future__ import annotations

import numpy as np


def check_temperature(temperature: float, decode: str) -> None:
    """A ValueError naming the key unless ``temperature`` is a positive number, and 1 unless
    the decode samples (it changes nothing else)."""
    if not (isinstance(temperature, int | float) and 0 < temperature < float("inf")):
        raise ValueError(f"temperature: expected a number > 0, got {temperature!r}")
    if temperature != 1.0 and decode != "sample":
        raise ValueError(
            f"temperature: {temperature} acts on decode 'sample' only, got decode {decode!r}"
        )


def sharpen(p: np.ndarray, temperature: float) -> np.ndarray:
    """``p`` to the power 1/temperature, unnormalised, computed on the logs so that a low
    temperature does not underflow every probability to 0 (zeros stay 0; the largest
    becomes 1)."""
    out = np.zeros_like(p)
    legal = p > 0
    logp = np.log(p[legal])
    out[legal] = np.exp((logp - logp.max()) / temperature)
    return out
