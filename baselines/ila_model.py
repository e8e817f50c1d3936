"""ILA's interference prediction model (Bu, Rao and Xu, "Interference and Locality-Aware
Task Scheduling for MapReduce Applications in Virtual Clusters", HPDC'13, §4.1) and §5.4's
comparators and metrics.  The slowdown S = T_real / T_alone is predicted from Table 2's 11
inputs (:data:`baselines.ila_profile.FEATURES`):

* eq. 1 (CPU-bound): S_cpu = α_cpu·exp(γ_t t_c + Σ_{1..3} γ_i CPU_i + C_cpu) + C_1
* eq. 2 (I/O-bound): S_io = β_io·exp(τ_tr t_r + τ_tw t_w + Σ_{1..5} τ_i IO_i + τ_0 c_0 + C_io) + C_2
* eq. 3 (general):   S = α·S_cpu + β·S_io + C_3

Training: eq. 1 on CPU-bound rows, eq. 2 on I/O-bound rows (Gauss-Newton), then eq. 3;
online, Gauss-Newton every k = 100 new observations (``refit``; the caller counts).

Deviations / choices:

* Parametrization: only α_cpu·exp(C_cpu) and β_io·exp(C_io) are identifiable, so C_cpu ≡
  C_io ≡ 0 and the signed amplitudes α_cpu, β_io are fitted (linear, well conditioned).  In
  eq. 3 only a = α·α_cpu, b = β·β_io and k = α·C_1 + β·C_2 + C_3 are: the joint (re)fit works
  on these 15 numbers (γ, τ, a, b, k) and maps them back keeping α, β, C_1, C_2 (a zero α or
  β becomes 1).  ``effective()`` returns them, ``coefficients`` the paper's symbols.
* Solver: ``scipy.optimize.least_squares(method="lm")`` (Levenberg-Marquardt, damped
  Gauss-Newton), analytic Jacobians, started from log-linear fits of log(y − c) for a few
  offsets c; a non-finite result or one raising the SSE is rejected (the start is kept).
* ``fit`` ends with one joint re-fit over all rows (``joint=False``: stop at stage 3, the
  literal procedure); the paper does not say, and it can only lower the training loss.
* Loss of the joint (re)fit: by default the sum of squared errors of log S (relative
  errors), not of S (``loss="sse"``, the paper's).  The simulator's slowdowns have a heavy
  tail (a writer throttled once the page cache is full runs 10-77x) that a raw SSE fit
  bends to, predicting ~1.5x for an idle server; on the ila72 training set the held-out
  R² of S is 0.56 with the log loss and 0.24 with raw SSE (``mrgym reproduce --claims ila-table5``
  reports both).  The stages still minimize raw SSE (they only give the start).
* The joint fit keeps a, b, k ≥ 0 (``positive``; bounded trust-region least squares):
  unconstrained, it found a negative amplitude with a steep exponent that predicted
  slowdowns below 0 (down to −33) for input combinations the training set lacks, which
  ILA's gate read as "no slowdown".
* A column constant over a stage's rows gets coefficient 0 (the constant absorbs it); the
  paper's stepwise variable selection is not reproduced.  Exponents are clipped to ±50.
* §5.4's quadratic model: linear terms plus squares, no cross terms (23 parameters, not 78).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from baselines.ila_profile import CPU_FEATURES, FEATURES, IO_FEATURES

N_FEATURES = len(FEATURES)
_CPU = np.array(CPU_FEATURES)
_IO = np.array(IO_FEATURES)
_CPU_NAMES = ("gamma_t", "gamma_1", "gamma_2", "gamma_3")  # t_c, c_u, c_a, c_0
_IO_NAMES = ("tau_tr", "tau_tw", "tau_1", "tau_2", "tau_3", "tau_4", "tau_5", "tau_0")
_ZMAX = 50.0  # exp(50) ~ 5e21: far beyond any slowdown, far below float overflow
_EPS = 1e-12
_MAX_NFEV = 200  # function evaluations per fit (an uncapped online refit once took 149 s)
_LOG_FLOOR = 1e-3  # a prediction below this counts as 1e-3 in the log loss (keeps it finite)
N_JOINT = len(_CPU) + len(_IO) + 3  # γ, τ, a, b, k


def _check_x(X, n_features: int | None = None) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or (n_features is not None and X.shape[1] != n_features):
        want = f"(rows, {n_features}) in the order {FEATURES}" if n_features else "2-D"
        raise ValueError(f"X must be {want}, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values")
    return X


def _check_xy(X, y, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    X, y = _check_x(X, n_features), np.asarray(y, dtype=float)
    if y.shape != (len(X),) or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be 1-D, finite, one value per row of X ({len(X)}): {y.shape}")
    return X, y


def _exp(z):
    return np.exp(np.clip(z, -_ZMAX, _ZMAX))


def _lsq(fun, jac, p0: np.ndarray, free: np.ndarray, lower: np.ndarray | None = None) -> np.ndarray:
    """Nonlinear least squares over the entries of ``p0`` where ``free`` (the others are held);
    returns ``p0`` itself unless the solver found a finite point with no larger SSE.
    ``lower``: lower bounds per parameter (then the bounded trust-region method)."""

    def full(q: np.ndarray) -> np.ndarray:
        p = p0.copy()
        p[free] = q
        return p

    r0 = fun(p0)
    sse0, method = float(r0 @ r0), "lm" if len(r0) >= free.sum() else "trf"  # lm needs m >= n
    bounds, solver = (-np.inf, np.inf), {}
    if lower is not None:
        method, bounds = "trf", (lower[free], np.full(int(free.sum()), np.inf))
        # "exact" takes a full SVD per step (28 ms at 1 600 rows); LSMR the same optimum
        # within 0.1 % of the loss, 50x faster (measured on an online refit)
        solver = {"tr_solver": "lsmr"}
    try:
        res = least_squares(
            lambda q: fun(full(q)),
            p0[free],
            lambda q: jac(full(q))[:, free],
            method=method,
            bounds=bounds,
            max_nfev=_MAX_NFEV,  # bounded cost per (online) fit: it keeps the best point
            **solver,
        )
    except (ValueError, np.linalg.LinAlgError, FloatingPointError):
        return p0
    p = full(res.x)  # status 0 (evaluation budget spent) may still have improved the fit
    sse = float(np.sum(fun(p) ** 2)) if res.status >= 0 else np.inf
    return p if np.isfinite(sse) and (sse <= sse0 or not np.isfinite(sse0)) else p0


def _start(F: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Start [coef..., amp, const]: the best of log-linear fits of log(y - c), c < min(y)."""
    A, spread = np.column_stack([F, np.ones(len(y))]), max(float(np.ptp(y)), 1e-6)
    best, best_sse = None, np.inf
    for q in (0.02, 0.1, 0.5, 2.0, 10.0):
        w, *_ = np.linalg.lstsq(A, np.log(y - (y.min() - q * spread)), rcond=None)
        E = np.column_stack([_exp(F @ w[:-1]), np.ones(len(y))])
        ac, *_ = np.linalg.lstsq(E, y, rcond=None)  # given the exponents, amp/const are linear
        if (sse := float(np.sum((E @ ac - y) ** 2))) < best_sse:
            best, best_sse = np.r_[w[:-1], ac], sse
    return best


@dataclass
class ExpTerm:
    """``amp * exp(coef · x[idx]) + const``: eq. 1 (α_cpu, γ, C_1) or eq. 2 (β_io, τ, C_2)."""

    idx: np.ndarray
    amp: float
    coef: np.ndarray
    const: float

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.amp * _exp(X[:, self.idx] @ self.coef) + self.const

    @classmethod
    def fit(cls, X: np.ndarray, y: np.ndarray, idx: np.ndarray) -> ExpTerm:
        Z, ones = X[:, idx], np.ones(len(y))
        free = np.r_[np.ptp(Z, axis=0) > _EPS, True, True]  # a constant column's coef stays 0
        p0 = np.zeros(len(idx) + 2)
        p0[free] = _start(Z[:, free[:-2]], y)

        def fun(p):
            return p[-2] * _exp(Z @ p[:-2]) + p[-1] - y

        def jac(p):
            e = _exp(Z @ p[:-2])
            return np.column_stack([p[-2] * e[:, None] * Z, e, ones])

        p = _lsq(fun, jac, p0, free)
        return cls(idx, float(p[-2]), p[:-2].copy(), float(p[-1]))


@dataclass
class InterferenceModel:
    """ILA's slowdown model, eqs. 1-3 (see the module docstring for the parametrization)."""

    cpu: ExpTerm | None = None  # eq. 1
    io: ExpTerm | None = None  # eq. 2
    alpha: float = 1.0  # eq. 3
    beta: float = 1.0
    C_3: float = 0.0
    loss: str = "log"  # the joint fit's residuals: "log" (log S) or "sse" (S, the paper's)
    positive: bool = True  # the joint fit keeps a = α·α_cpu, b = β·β_io and k >= 0
    # the joint fit keeps every exponent γ, τ >= 0: more load never predicts less slowdown
    monotone: bool = True
    _W: np.ndarray = field(init=False, repr=False, default=None)  # rows γ, τ over 11 inputs
    _abk: tuple = field(init=False, repr=False, default=(0.0, 0.0, 0.0))

    def __post_init__(self) -> None:
        if self.fitted:
            self._compile()

    @property
    def fitted(self) -> bool:
        return self.cpu is not None and self.io is not None

    def _compile(self) -> None:
        """Fold eqs. 1-3 into S = a·exp(W[0]·x) + b·exp(W[1]·x) + k: one 2x11 product per
        prediction instead of two gathers."""
        self._W = np.zeros((2, N_FEATURES))
        self._W[0, _CPU], self._W[1, _IO] = self.cpu.coef, self.io.coef
        a, b = self.alpha * self.cpu.amp, self.beta * self.io.amp
        k = self.alpha * self.cpu.const + self.beta * self.io.const + self.C_3
        self._abk = (float(a), float(b), float(k))

    def fit(self, X, y, cpu_bound, joint: bool = True) -> InterferenceModel:
        """Stage 1: eq. 1 on the ``cpu_bound`` rows; 2: eq. 2 on the others; 3: α, β, C_3 by
        linear least squares on all rows; then (``joint``) one joint re-fit of all rows."""
        X, y = _check_xy(X, y, N_FEATURES)
        if (cb := np.asarray(cpu_bound)).shape != y.shape:
            raise ValueError(f"cpu_bound must have one flag per row ({len(y)}), got {cb.shape}")
        cb = cb.astype(bool)
        for stage, name, rows, idx in ((1, "CPU-bound", cb, _CPU), (2, "I/O-bound", ~cb, _IO)):
            if (n := int(rows.sum())) < len(idx) + 2:
                msg = f"eq. {stage} has {len(idx) + 2} parameters but only {n} rows are {name}"
                raise ValueError(f"stage {stage}: {msg}")
        self.cpu, self.io = ExpTerm.fit(X[cb], y[cb], _CPU), ExpTerm.fit(X[~cb], y[~cb], _IO)
        A = np.column_stack([self.cpu(X), self.io(X), np.ones(len(y))])
        self.alpha, self.beta, self.C_3 = np.linalg.lstsq(A, y, rcond=None)[0].tolist()
        self._compile()
        if not joint:
            return self
        self.refit(X, y)
        # a second start, neutral (no interference: S = 1 everywhere), for the joint fit:
        # the stages' optimum of raw SSE can sit in another basin than the log loss's
        alt = InterferenceModel(
            ExpTerm(_CPU, 0.1, np.zeros(len(_CPU)), 0.0),
            ExpTerm(_IO, 0.1, np.zeros(len(_IO)), 0.0),
            C_3=0.8,
            loss=self.loss,
            positive=self.positive,
            monotone=self.monotone,
        ).refit(X, y)
        if alt.loss_of(X, y) < self.loss_of(X, y):
            self.cpu, self.io, self.alpha, self.beta, self.C_3 = (
                alt.cpu,
                alt.io,
                alt.alpha,
                alt.beta,
                alt.C_3,
            )
            self._compile()
        return self

    def loss_of(self, X, y) -> float:
        """The joint fit's objective on (X, y): sum of squared residuals of log S or S."""
        yhat = self.predict(X)
        log = self.loss == "log"
        r = np.log(np.maximum(yhat, _LOG_FLOOR)) - np.log(y) if log else yhat - y
        return float(r @ r)

    def refit(self, X, y) -> InterferenceModel:
        """Online re-calibration: one joint nonlinear least-squares fit of eq. 3 over all
        rows of (X, y), from the current parameters; kept only if it lowers the SSE."""
        self._require_fitted()
        X, y = _check_xy(X, y, N_FEATURES)
        if len(y) < N_JOINT:
            raise ValueError(f"refit fits {N_JOINT} parameters but got only {len(y)} rows")
        Xc, Xi, nc, ones = X[:, _CPU], X[:, _IO], len(_CPU), np.ones(len(y))

        def pred(p):
            return p[-3] * _exp(Xc @ p[:nc]) + p[-2] * _exp(Xi @ p[nc:-3]) + p[-1]

        def dpred(p):
            ea, eb = _exp(Xc @ p[:nc]), _exp(Xi @ p[nc:-3])
            return np.c_[p[-3] * ea[:, None] * Xc, p[-2] * eb[:, None] * Xi, ea, eb, ones]

        if self.loss == "log":  # relative errors: residuals of log S (module docstring)
            if np.any(y <= 0):
                raise ValueError("the log loss needs slowdowns y > 0")
            ly = np.log(y)

            def fun(p):
                return np.log(np.maximum(pred(p), _LOG_FLOOR)) - ly

            def jac(p):
                return dpred(p) / np.maximum(pred(p), _LOG_FLOOR)[:, None]
        else:

            def fun(p):
                return pred(p) - y

            jac = dpred

        p0 = np.r_[self.cpu.coef, self.io.coef, self._abk]
        free = np.r_[np.ptp(Xc, axis=0) > _EPS, np.ptp(Xi, axis=0) > _EPS, True, True, True]
        lower = None
        if self.positive or self.monotone:
            lower = np.full(len(p0), -np.inf)
            start = p0.copy()
            if self.positive:  # a, b, k >= 0: S > 0, and interference only adds to it
                lower[-3:] = 0.0
                start[-3:] = np.maximum(p0[-3:], 1e-6)
            if self.monotone:  # γ, τ >= 0: a busier server never predicts a faster task
                lower[:-3] = 0.0
                start[:-3] = np.maximum(p0[:-3], 0.0)
            if not np.array_equal(start, p0):  # an infeasible start: fit from the clip
                p0 = start
                self._set(p0)
        p = _lsq(fun, jac, p0, free, lower)  # a constant column keeps its coefficient
        if p is p0:
            return self
        self._set(p)
        return self

    def _set(self, p: np.ndarray) -> None:
        """Load the joint parameter vector (γ, τ, a, b, k)."""
        nc = len(_CPU)
        self.cpu.coef, self.io.coef = p[:nc].copy(), p[nc:-3].copy()
        # map (a, b, k) back keeping α, β, C_1, C_2: only the products are identifiable
        self.alpha = self.alpha if abs(self.alpha) > _EPS else 1.0
        self.beta = self.beta if abs(self.beta) > _EPS else 1.0
        self.cpu.amp, self.io.amp = float(p[-3] / self.alpha), float(p[-2] / self.beta)
        self.C_3 = float(p[-1] - self.alpha * self.cpu.const - self.beta * self.io.const)
        self._compile()

    def predict(self, X) -> np.ndarray:
        """Predicted slowdowns of the rows of ``X`` (n x 11)."""
        self._require_fitted()
        return _exp(_check_x(X, N_FEATURES) @ self._W.T) @ self._abk[:2] + self._abk[2]

    def predict_one(self, x) -> float:
        """Predicted slowdown of one row (length 11): the per-decision fast path, no checks."""
        zc, zi = (min(max(float(z), -_ZMAX), _ZMAX) for z in self._W @ x)
        a, b, k = self._abk
        return a * math.exp(zc) + b * math.exp(zi) + k

    def _require_fitted(self) -> None:
        if not self.fitted:
            raise RuntimeError("the model is not fitted: call fit first")

    @property
    def coefficients(self) -> dict[str, float]:
        """The fitted coefficients keyed by the paper's symbols (C_cpu, C_io fixed at 0)."""
        self._require_fitted()
        out = {"alpha_cpu": self.cpu.amp, "C_cpu": 0.0, "C_1": self.cpu.const}
        out |= {n: float(v) for n, v in zip(_CPU_NAMES, self.cpu.coef)}
        out |= {"beta_io": self.io.amp, "C_io": 0.0, "C_2": self.io.const}
        out |= {n: float(v) for n, v in zip(_IO_NAMES, self.io.coef)}
        return out | {"alpha": self.alpha, "beta": self.beta, "C_3": self.C_3}

    def effective(self) -> dict[str, np.ndarray | float]:
        """The identifiable parameters: γ, τ, a = α·α_cpu, b = β·β_io, k = αC_1 + βC_2 + C_3."""
        self._require_fitted()
        a, b, k = self._abk
        return {"gamma": self.cpu.coef.copy(), "tau": self.io.coef.copy(), "a": a, "b": b, "k": k}


@dataclass
class LinearModel:
    """§5.4's linear comparator: ordinary least squares on the 11 inputs plus an intercept."""

    coef: np.ndarray | None = None

    def _design(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(X)), X])

    def fit(self, X, y, cpu_bound=None) -> LinearModel:
        """``cpu_bound`` is accepted for a common interface and ignored."""
        X, y = _check_xy(X, y)
        D = self._design(X)
        if len(y) < (p := D.shape[1]):
            raise ValueError(f"{type(self).__name__} fits {p} parameters, got only {len(y)} rows")
        self.coef, *_ = np.linalg.lstsq(D, y, rcond=None)
        return self

    def predict(self, X) -> np.ndarray:
        if self.coef is None:
            raise RuntimeError("the model is not fitted: call fit first")
        D = self._design(_check_x(X))
        if D.shape[1] != len(self.coef):
            raise ValueError("X does not have the number of columns the model was fitted on")
        return D @ self.coef


@dataclass
class QuadraticModel(LinearModel):
    """§5.4's quadratic comparator: intercept, the inputs and their squares (no cross terms)."""

    def _design(self, X: np.ndarray) -> np.ndarray:
        return np.column_stack([np.ones(len(X)), X, X**2])


def r2(y, yhat) -> float:
    """§5.4's R² = 1 − Σ(y − ŷ)² / Σ(y − ȳ)² (for a constant y: 1 if matched exactly, else 0)."""
    y, yhat = _pair(y, yhat)
    ss_res, ss_tot = float(np.sum((y - yhat) ** 2)), float(np.sum((y - y.mean()) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else 0.0
    return 1.0 - ss_res / ss_tot


def prediction_error(y, yhat) -> float:
    """Fig. 11's prediction error: the mean of |y − ŷ| / y."""
    y, yhat = _pair(y, yhat)
    if np.any(y == 0):
        raise ValueError("prediction_error divides by y: y must not contain zeros")
    return float(np.mean(np.abs(y - yhat) / y))


def _pair(y, yhat) -> tuple[np.ndarray, np.ndarray]:
    y, yhat = np.asarray(y, dtype=float), np.asarray(yhat, dtype=float)
    if y.ndim != 1 or y.shape != yhat.shape or len(y) == 0:
        raise ValueError(f"y, yhat must be non-empty 1-D, same length: {y.shape}, {yhat.shape}")
    return y, yhat
