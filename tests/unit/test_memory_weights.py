"""The offline score of the memory's weights (tests.research.memory_weights) is exactly what the shipped
mixing (daemon.memory.cache_lm.mix_row) gives the true token."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.memory.cache_lm import CacheIndex, CacheParams, mix_row
from tests.research.memory_weights import gains, summary

VOCAB = 6
#: the shipped weights, the ones chosen offline (daemon/evaluation/README.md), and others far from both
PARAMS = [CacheParams(), CacheParams(lam_max=0.6, ramp=6, beta=16.0, min_order_word=2, ramp_word=2),
          CacheParams(lam_max=0.9, min_order=2, ramp=1, beta=0.5, lam_word=0.3, min_order_word=3, ramp_word=4)]


@settings(max_examples=200, deadline=None)
@given(streams=st.lists(st.lists(st.integers(0, VOCAB - 1), min_size=2, max_size=30), min_size=1, max_size=4),
       seq=st.lists(st.integers(0, VOCAB - 1), min_size=1, max_size=8), token=st.integers(0, VOCAB - 1),
       word=st.one_of(st.none(), st.lists(st.booleans(), min_size=VOCAB, max_size=VOCAB)),
       which=st.integers(0, len(PARAMS) - 1), seed=st.integers(0, 9))
def test_the_offline_gain_is_the_mixed_rows_for_the_true_token(streams, seq, token, word, which, seed):
    params = PARAMS[which]
    row = np.random.default_rng(seed).normal(size=VOCAB).astype(np.float32)
    row -= np.float32(np.log(np.exp(row.astype(np.float64)).sum()))
    match = CacheIndex(streams, params.max_order).lookup(seq)
    continues = None if word is None or match is None else np.asarray(word)[match.followers]
    mixed = mix_row(row, match, params, continues)
    found = summary(float(row[token]), token, match, continues)
    if found is None:
        assert mixed is row
        return
    got = gains(np.asarray([found], dtype=float), params)[0]
    assert got == pytest.approx(float(mixed[token]) - float(row[token]), abs=2e-5)
