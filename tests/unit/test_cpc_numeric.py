"""The decoder's one logsumexp, against the plain formula."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from daemon.cpc.numeric import logsumexp


@given(st.lists(st.floats(min_value=-700, max_value=700), min_size=1, max_size=30))
def test_matches_the_formula_where_it_does_not_overflow(values: list[float]) -> None:
    expected = math.log(sum(math.exp(v) for v in values))
    assert math.isclose(logsumexp(np.array(values)), expected, rel_tol=1e-9, abs_tol=1e-9)


def test_large_values_do_not_overflow() -> None:
    assert math.isclose(logsumexp(np.array([1000.0, 1000.0])), 1000.0 + math.log(2.0))


def test_no_mass_is_minus_infinity_and_ignored_entries_count_nothing() -> None:
    assert logsumexp(np.array([-np.inf, -np.inf])) == -np.inf
    assert math.isclose(logsumexp(np.array([-np.inf, 0.0])), 0.0)
