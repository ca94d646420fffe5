"""The confidence model: a logistic regression over the decoder's word signals,
its fitting script, and the shipped coefficients being that script's output."""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
import pytest

from daemon.cpc.confidence import COEFFICIENTS, FEATURE_NAMES, MARGIN_CAP, WordSignals, features, word_confidence
from tests.research import confidence_fit as fit

TRAINING = pathlib.Path(__file__).parent / "data" / "confidence_training.json"


def signals(**kw) -> WordSignals:
    base = dict(word_logprob=-0.5, margin=2.0, share=0.8, first_logprob=-0.3, first_entropy=1.0,
                word_chars=3, typed_chars=4, in_context=True)
    base.update(kw)
    return WordSignals(**base)


def test_score_is_the_logistic_of_the_coefficients_times_the_features():
    s = signals()
    z = COEFFICIENTS[0] + sum(w * v for w, v in zip(COEFFICIENTS[1:], features(s)))
    assert word_confidence(s) == pytest.approx(1.0 / (1.0 + math.exp(-z)))
    assert len(COEFFICIENTS) == len(FEATURE_NAMES) + 1
    assert word_confidence(s, [0.0] * len(COEFFICIENTS)) == 0.5


def test_features_are_clamped_and_a_missing_margin_is_the_cap():
    x = features(signals(margin=None, word_logprob=-1e9, share=1.5, first_entropy=-1.0))
    assert x[FEATURE_NAMES.index("margin")] == MARGIN_CAP
    assert x[FEATURE_NAMES.index("word_logprob")] == -20.0
    assert x[FEATURE_NAMES.index("share")] == 1.0
    assert x[FEATURE_NAMES.index("first_entropy")] == 0.0
    assert features(signals(margin=50.0))[FEATURE_NAMES.index("margin")] == MARGIN_CAP


def test_fit_recovers_the_coefficients_that_generated_the_labels():
    rng = np.random.default_rng(0)
    n, d = 20_000, 3
    x = np.hstack([np.ones((n, 1)), rng.normal(size=(n, d))])
    true = np.array([0.5, 1.5, -2.0, 0.0])
    y = (rng.random(n) < 1 / (1 + np.exp(-(x @ true)))).astype(float)
    beta = fit.fit_logistic(x, y, ridge=0.0)
    assert beta == pytest.approx(true, abs=0.08)


def test_the_fit_is_calibrated_on_its_own_data():
    """At the maximum-likelihood optimum the mean score equals the rate of
    right answers (the intercept's score equation)."""
    rng = np.random.default_rng(1)
    x = np.hstack([np.ones((500, 1)), rng.normal(size=(500, 2))])
    y = (rng.random(500) < 0.7).astype(float)
    beta = fit.fit_logistic(x, y, ridge=1e-3)
    assert fit.predict(beta, x).mean() == pytest.approx(y.mean(), abs=1e-6)


def test_reliability_trade_offs_and_the_threshold_rule():
    scores = np.array([0.05, 0.15, 0.75, 0.72, 0.95, 1.0])
    right = np.array([0, 0, 1, 0, 1, 1], dtype=float)
    bins = fit.reliability(scores, right)
    assert [b.n for b in bins] == [1, 1, 0, 0, 0, 0, 0, 2, 0, 2]
    assert bins[7].right == 0.5 and bins[7].mean_score == pytest.approx(0.735)
    rows = fit.trade_offs(scores, right, [0.1, 0.2, 0.8])
    assert [(r.withheld_right, r.withheld_wrong) for r in rows] == [(0, 1), (0, 2), (1, 3)]
    assert fit.choose_threshold(rows).threshold == 0.2  # 0.8 loses a third of the right ones
    assert fit.choose_threshold(rows, max_right_lost=0.5).threshold == 0.8
    assert fit.choose_threshold([fit.TradeOff(0.1, 5, 0, 10, 2)]) is None


def test_leave_one_text_out_scores_each_text_with_a_model_fitted_without_it():
    rng = np.random.default_rng(2)
    ex = [fit.Example(f, signals(word_logprob=float(-rng.random() * 3)), bool(rng.random() < 0.6))
          for f in ("a", "b", "c") for _ in range(40)]
    oof = fit.leave_one_text_out(ex)
    x, y = fit.design(ex)
    without_a = fit.fit_logistic(x[40:], y[40:])
    assert oof[:40] == pytest.approx(fit.predict(without_a, x[:40]))


def test_the_shipped_coefficients_are_what_the_script_fits_on_the_saved_training_data():
    """The training data is ``--save-training`` output of the runs in
    daemon/evaluation/README.md (signals and labels only); refitting it must
    give the shipped tuple."""
    examples = fit.examples_from_training(json.loads(TRAINING.read_text(encoding="utf-8")))
    assert len({e.file for e in examples}) == 4
    x, y = fit.design(examples)
    beta = fit.fit_logistic(x, y)
    assert np.round(beta, 6) == pytest.approx(np.asarray(COEFFICIENTS), abs=1e-5)
