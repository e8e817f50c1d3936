"""ILA's interference prediction model (baselines/ila_model.py; ILA §4.1 eqs. 1-3, §5.4)."""

from __future__ import annotations

import numpy as np
import pytest

from baselines.ila_model import (
    ExpTerm,
    InterferenceModel,
    LinearModel,
    QuadraticModel,
    prediction_error,
    r2,
)
from baselines.ila_profile import CPU_FEATURES, IO_FEATURES

CPU, IO = np.array(CPU_FEATURES), np.array(IO_FEATURES)
# true identifiable coefficients of eq. 3: S = a·exp(γ·x_cpu) + b·exp(τ·x_io) + k
GAMMA = np.array([1.2, 0.8, 1.5, 0.6])
TAU = np.array([0.9, 0.7, 0.5, 0.4, 0.8, 0.6, 1.0, 0.5])
A, B, K = 0.3, 0.2, 0.5


def truth(X: np.ndarray) -> np.ndarray:
    return A * np.exp(X[:, CPU] @ GAMMA) + B * np.exp(X[:, IO] @ TAU) + K


def synthetic(n: int = 400, noise: float = 0.01, seed: int = 0):
    """Random inputs in [0, 1]; the first half CPU-bound (small read/write demand), the rest
    I/O-bound (small CPU demand); slowdowns from the combined model plus a little noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (n, 11))
    cb = np.arange(n) < n // 2
    X[np.ix_(cb, [1, 2])] *= 0.2
    X[~cb, 0] *= 0.2
    return X, truth(X) + noise * rng.standard_normal(n), cb


def sse(model, X, y) -> float:
    return float(np.sum((model.predict(X) - y) ** 2))


def assert_recovers(model: InterferenceModel) -> None:
    eff = model.effective()  # errors are ~0.002 (exponents) and ~1% (a, b, k) at this noise
    np.testing.assert_allclose(eff["gamma"], GAMMA, atol=0.02)
    np.testing.assert_allclose(eff["tau"], TAU, atol=0.02)
    np.testing.assert_allclose([eff["a"], eff["b"], eff["k"]], [A, B, K], rtol=0.04)


def test_fit_recovers_identifiable_coefficients():
    X, y, cb = synthetic()
    m = InterferenceModel().fit(X, y, cb)
    assert_recovers(m)
    assert r2(y, m.predict(X)) > 0.98
    Xt, yt, _ = synthetic(seed=1)  # and generalizes to fresh rows
    assert r2(yt, m.predict(Xt)) > 0.98


def test_stages_recover_pure_models():
    """Pure CPU-bound rows follow eq. 1, pure I/O-bound rows eq. 2: stages 1 and 2 alone
    recover each (α_cpu, γ, C_1) and (β_io, τ, C_2)."""
    rng = np.random.default_rng(2)
    X = rng.uniform(0.0, 1.0, (300, 11))
    cb = np.arange(300) < 150
    y = np.where(cb, 0.4 * np.exp(X[:, CPU] @ GAMMA) + 0.7, 0.25 * np.exp(X[:, IO] @ TAU) + 0.9)
    m = InterferenceModel().fit(X, y + 0.005 * rng.standard_normal(300), cb, joint=False)
    c = m.coefficients
    np.testing.assert_allclose(m.cpu.coef, GAMMA, atol=0.03)
    np.testing.assert_allclose(m.io.coef, TAU, atol=0.03)
    np.testing.assert_allclose([c["alpha_cpu"], c["C_1"]], [0.4, 0.7], atol=0.03)
    np.testing.assert_allclose([c["beta_io"], c["C_2"]], [0.25, 0.9], atol=0.03)
    assert c["C_cpu"] == c["C_io"] == 0.0


def test_coefficients_reproduce_predictions_through_eqs_1_to_3():
    X, y, cb = synthetic()
    m = InterferenceModel().fit(X, y, cb)
    c = m.coefficients
    g = np.array([c[k] for k in ("gamma_t", "gamma_1", "gamma_2", "gamma_3")])
    t = np.array([c[k] for k in ("tau_tr", "tau_tw", *(f"tau_{i}" for i in range(1, 6)), "tau_0")])
    s_cpu = c["alpha_cpu"] * np.exp(X[:, CPU] @ g + c["C_cpu"]) + c["C_1"]
    s_io = c["beta_io"] * np.exp(X[:, IO] @ t + c["C_io"]) + c["C_2"]
    np.testing.assert_allclose(
        c["alpha"] * s_cpu + c["beta"] * s_io + c["C_3"], m.predict(X), rtol=1e-9
    )


def perturbed(m: InterferenceModel, seed: int = 3) -> InterferenceModel:
    rng = np.random.default_rng(seed)
    cpu, io = m.cpu, m.io
    return InterferenceModel(
        ExpTerm(cpu.idx, cpu.amp * 1.3, cpu.coef + rng.uniform(-0.3, 0.3, 4), cpu.const + 0.2),
        ExpTerm(io.idx, io.amp * 0.8, io.coef + rng.uniform(-0.3, 0.3, 8), io.const - 0.1),
        m.alpha * 1.1,
        m.beta * 0.9,
        m.C_3 + 0.3,
    )


def test_refit_recovers_from_perturbed_parameters():
    X, y, cb = synthetic()
    m = perturbed(InterferenceModel().fit(X, y, cb))
    before = sse(m, X, y)
    m.refit(X, y)
    assert sse(m, X, y) < 0.01 * before
    assert_recovers(m)


@pytest.mark.parametrize("loss", ["sse", "log"])
def test_refit_never_increases_its_loss(loss):
    X, y, cb = synthetic()
    m = InterferenceModel(loss=loss).fit(X, y, cb)
    Xn, yn, _ = synthetic(200, noise=0.3, seed=4)
    rng = np.random.default_rng(4)
    for y_new in (yn, 2 * yn, 1.0 + rng.uniform(0, 3, 200), np.full(200, 2.0)):
        before = m.loss_of(Xn, y_new)
        m.refit(Xn, y_new)
        assert m.loss_of(Xn, y_new) <= before
    if loss == "sse":
        # the same sum, in another order: equal up to rounding (here ~1e-12, one ulp apart)
        assert m.loss_of(Xn, y_new) == pytest.approx(sse(m, Xn, y_new), rel=1e-9, abs=0)


def test_log_loss_resists_a_heavy_tail():
    """A few huge slowdowns (the page cache's throttled writers) pull a raw-SSE fit away
    from the bulk; the log loss keeps the bulk's predictions close."""
    X, y, cb = synthetic(400, noise=0.01, seed=5)
    y_tail = y.copy()
    y_tail[:8] *= 40.0
    bulk = np.arange(len(y)) >= 8
    err = {}
    for loss in ("sse", "log"):
        m = InterferenceModel(loss=loss).fit(X, y_tail, cb)
        err[loss] = prediction_error(y[bulk], m.predict(X[bulk]))
    assert err["log"] < 0.5 * err["sse"], err


class _Result:
    def __init__(self, x, status=1):
        self.x, self.status = x, status


def _raising(fun, x0, jac, **kw):
    raise ValueError("the solver gave up")


@pytest.mark.parametrize(
    "fake",
    [
        lambda fun, x0, jac, **kw: _Result(x0 + 5.0),  # a much worse point
        lambda fun, x0, jac, **kw: _Result(x0 * np.nan),  # a non-finite one
        lambda fun, x0, jac, **kw: _Result(x0 + 1e-3, status=-1),  # a solver failure
        _raising,
    ],
)
def test_refit_keeps_old_parameters_when_the_solve_is_worse_or_fails(monkeypatch, fake):
    X, y, cb = synthetic()
    m = InterferenceModel().fit(X, y, cb)
    old, pred = m.coefficients, m.predict(X)
    monkeypatch.setattr("baselines.ila_model.least_squares", fake)
    m.refit(X, y + 0.5)
    assert m.coefficients == old
    np.testing.assert_array_equal(m.predict(X), pred)


def test_constant_column_gets_no_coefficient():
    X, y, cb = synthetic()
    X[:, 4] = 0.3  # c_a never varies: its effect folds into the constant
    y = truth(X)
    m = InterferenceModel().fit(X, y, cb)
    assert m.coefficients["gamma_2"] == 0.0
    assert r2(y, m.predict(X)) > 0.99


def test_exponential_beats_linear_and_quadratic():
    X, y, cb = synthetic()
    Xt, yt, _ = synthetic(seed=5)
    scores = {
        type(mod).__name__: r2(yt, mod.fit(X, y, cb).predict(Xt))
        for mod in (InterferenceModel(), LinearModel(), QuadraticModel())
    }
    assert scores["InterferenceModel"] > scores["QuadraticModel"] + 0.05
    assert scores["InterferenceModel"] > scores["LinearModel"] + 0.05
    assert scores["QuadraticModel"] > scores["LinearModel"]


def test_linear_and_quadratic_fit_their_own_forms_exactly():
    rng = np.random.default_rng(6)
    X = rng.uniform(0, 1, (60, 11))
    w = rng.normal(size=11)
    np.testing.assert_allclose(LinearModel().fit(X, 2.0 + X @ w).predict(X), 2.0 + X @ w)
    yq = 1.0 + X @ w + (X**2) @ w[::-1]
    assert r2(yq, QuadraticModel().fit(X, yq).predict(X)) > 1 - 1e-10
    assert r2(yq, LinearModel().fit(X, yq).predict(X)) < 0.999
    assert len(QuadraticModel().fit(X, yq).coef) == 23  # squares only, no cross terms


def test_r2_and_prediction_error_by_hand():
    assert r2([1, 2, 3], [1, 2, 4]) == pytest.approx(0.5)  # 1 - 1/2
    assert r2([2, 4], [1, 5]) == pytest.approx(0.0)  # 1 - 2/2
    assert r2([1, 2, 3], [1, 2, 3]) == 1.0
    assert r2([2, 2], [2, 2]) == 1.0 and r2([2, 2], [1, 2]) == 0.0
    assert prediction_error([1, 2, 3], [1, 2, 4]) == pytest.approx(1 / 9)  # (0 + 0 + 1/3) / 3
    assert prediction_error([2, 4], [1, 5]) == pytest.approx(0.375)  # (1/2 + 1/4) / 2
    with pytest.raises(ValueError):
        r2([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        prediction_error([0, 1], [1, 1])


def test_predict_one_equals_predict():
    X, y, cb = synthetic()
    m = InterferenceModel().fit(X, y, cb)
    extreme = np.full(11, 60.0)  # exponent clipped, no overflow
    rows = np.vstack([X[:20], extreme, -extreme])
    np.testing.assert_allclose([m.predict_one(r) for r in rows], m.predict(rows), rtol=1e-12)
    assert all(np.isfinite(m.predict(rows)))


def test_clear_errors_for_bad_inputs():
    X, y, cb = synthetic(40)
    with pytest.raises(ValueError, match="stage 1.*CPU-bound"):
        InterferenceModel().fit(X, y, np.arange(40) < 5)
    with pytest.raises(ValueError, match="stage 2.*I/O-bound"):
        InterferenceModel().fit(X, y, np.arange(40) < 31)
    with pytest.raises(ValueError, match="one value per row"):
        InterferenceModel().fit(X, y[:-1], cb)
    with pytest.raises(ValueError, match="11"):
        InterferenceModel().fit(X[:, :10], y, cb)
    with pytest.raises(ValueError, match="cpu_bound"):
        InterferenceModel().fit(X, y, cb[:-1])
    with pytest.raises(ValueError, match="NaN"):
        InterferenceModel().fit(np.where(X > 0.99, np.nan, X), y, cb)
    with pytest.raises(RuntimeError, match="fit first"):
        InterferenceModel().predict(X)
    m = InterferenceModel().fit(X, y, cb)
    with pytest.raises(ValueError, match="15 parameters"):
        m.refit(X[:14], y[:14])
    with pytest.raises(ValueError, match="got shape"):
        m.predict(X[0])
    with pytest.raises(ValueError, match="parameters"):
        LinearModel().fit(X[:11], y[:11])
    with pytest.raises(ValueError, match="parameters"):
        QuadraticModel().fit(X[:22], y[:22])
