"""ModelPolicy's "launch-first" decoding: decline only with half of the probability."""

from __future__ import annotations

import numpy as np
import pytest

th = pytest.importorskip("torch")

from mrgym.policy import ModelPolicy  # noqa: E402
from tests.helpers import StubModel as _StubModel  # noqa: E402

OBS = np.zeros(3, dtype=np.float32)
# four launches and decline (last): decline is the single most likely action (0.4), but
# the launches together hold 0.6
PROBS = [0.2, 0.15, 0.15, 0.1, 0.4]


def _act(probs, mask=None, decode="launch-first") -> int:
    mask = np.ones(len(probs), dtype=bool) if mask is None else np.asarray(mask)
    return ModelPolicy(_StubModel(probs), decode=decode).predict(OBS, {"action_mask": mask})


def test_argmax_declines_where_launch_first_launches_the_most_likely_job():
    assert _act(PROBS, decode="argmax") == 4
    assert _act(PROBS) == 0


def test_launch_first_declines_with_half_the_probability_or_more():
    assert _act([0.2, 0.1, 0.1, 0.1, 0.5]) == 4
    assert _act([0.3, 0.1, 0.05, 0.05, 0.5]) == 4
    assert _act([0.3, 0.1, 0.05, 0.06, 0.49]) == 0


def test_launch_first_keeps_to_legal_actions():
    # the most likely launch is masked: the next legal one; with no legal launch, decline
    assert _act([0.25, 0.2, 0.1, 0.1, 0.35], mask=[False, True, True, True, True]) == 1
    assert _act(PROBS, mask=[False, False, False, False, True]) == 4
    # decline masked (work-conserving): always a launch
    assert _act([0.05, 0.03, 0.01, 0.01, 0.9], mask=[True, True, True, True, False]) == 0


def test_a_stochastic_policy_is_not_decoded():
    pol = ModelPolicy(_StubModel(PROBS), deterministic=False, decode="launch-first")
    pol.model.predict = lambda obs, action_masks=None, deterministic=True: (3, None)
    assert pol.predict(OBS, {"action_mask": np.ones(5, dtype=bool)}) == 3


def test_an_unknown_decode_is_refused_by_name():
    with pytest.raises(ValueError, match="decode: must be one of"):
        ModelPolicy(_StubModel(PROBS), decode="greedy")


def test_the_training_config_validates_eval_decode(tmp_path):
    from agents.config import load_train_config

    p = tmp_path / "t.yaml"
    p.write_text("eval: {decode: launch-first}\n")
    assert load_train_config(p).eval.decode == "launch-first"
    p.write_text("eval: {decode: greedy}\n")
    with pytest.raises(ValueError, match="decode"):
        load_train_config(p)


def test_sample_draws_from_the_masked_policy_and_repeats_for_a_seed():
    pol = ModelPolicy(_StubModel(PROBS), decode="sample")
    mask = np.array([True, False, True, True, True])
    info = {"action_mask": mask}

    def draws(seed):
        pol.start_episode(seed)
        return [pol.predict(OBS, info) for _ in range(2000)]

    a = draws(5)
    assert a == draws(5) and a != draws(6)
    counts = np.bincount(a, minlength=5) / len(a)
    assert counts[1] == 0.0  # masked
    want = np.where(mask, PROBS, 0.0) / np.where(mask, PROBS, 0.0).sum()
    assert np.abs(counts - want).max() < 0.04


def test_launch_first_counts_the_waits_as_declining():
    # two launches, decline (0.3) and two waits (0.05, 0.35): declining holds 0.7, and the
    # most likely way to decline is the second wait
    probs = [0.2, 0.1, 0.3, 0.05, 0.35]
    mask = np.ones(5, dtype=bool)

    def act(p):
        pol = ModelPolicy(_StubModel(p), decode="launch-first", env_kwargs={"wait_actions": 2})
        return pol.predict(OBS, {"action_mask": mask})

    assert act(probs) == 4
    assert act([0.4, 0.2, 0.2, 0.1, 0.1]) == 0  # the launches hold 0.6


def test_a_temperature_below_one_samples_the_likely_actions_more():
    from agents.sampling import sharpen

    mask = np.array([True, False, True, True, True])
    info = {"action_mask": mask}
    legal = np.where(mask, PROBS, 0.0)

    def shares(temperature, seed=5, n=4000):
        pol = ModelPolicy(_StubModel(PROBS), decode="sample", temperature=temperature)
        pol.start_episode(seed)
        return np.bincount([pol.predict(OBS, info) for _ in range(n)], minlength=5) / n

    # temperature 1 is the plain sample: the same draws, bit for bit
    plain = ModelPolicy(_StubModel(PROBS), decode="sample")
    plain.start_episode(5)
    one = ModelPolicy(_StubModel(PROBS), decode="sample", temperature=1.0)
    one.start_episode(5)
    assert [plain.predict(OBS, info) for _ in range(300)] == [
        one.predict(OBS, info) for _ in range(300)
    ]
    # 0.5: drawn in proportion to the squares; near 0: argmax (decline, 0.4) every time
    half = shares(0.5)
    want = legal**2 / (legal**2).sum()
    assert half[1] == 0.0 and np.abs(half - want).max() < 0.03
    assert half[4] > legal[4] / legal.sum() + 0.1
    assert shares(1e-3)[4] == 1.0
    # on the logs: a tiny temperature neither underflows nor revives a masked action
    tiny = sharpen(np.array([1e-30, 0.0, 2e-30]), 1e-4)
    assert tiny[2] == 1.0 and tiny[1] == 0.0 and 0.0 <= tiny[0] < 1e-100


def test_a_temperature_needs_the_sample_decode_and_a_positive_value(tmp_path):
    from agents.config import load_train_config

    with pytest.raises(ValueError, match="temperature: expected a number > 0"):
        ModelPolicy(_StubModel(PROBS), decode="sample", temperature=0.0)
    with pytest.raises(ValueError, match="temperature: 0.5 acts on decode 'sample' only"):
        ModelPolicy(_StubModel(PROBS), decode="argmax", temperature=0.5)
    p = tmp_path / "t.yaml"
    p.write_text("eval: {decode: sample, temperature: 0.5}\n")
    assert load_train_config(p).eval.temperature == 0.5
    p.write_text("eval: {decode: launch-first, temperature: 0.5}\n")
    with pytest.raises(ValueError, match="temperature"):
        load_train_config(p)
