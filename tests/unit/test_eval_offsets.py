"""Offset selection for ``ghosttype eval``: hand-computed cases and properties
checked against a direct re-statement of the definition."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.evaluation.offsets import (
    candidate_offsets,
    choose_offsets,
    is_mid_word,
    is_word_char,
)


def test_word_chars_follow_regex_w():
    assert is_word_char("a") and is_word_char("Z") and is_word_char("7") and is_word_char("_")
    assert is_word_char("é") and is_word_char("ß")
    assert not is_word_char(" ") and not is_word_char("-") and not is_word_char("\n")
    assert not is_word_char("") and not is_word_char("ab")


def test_mid_offsets_hand_computed():
    #         0123456789
    text = "ab cd_e-f"
    # mid: both neighbours word chars: 1 (a|b), 4 (c|d), 5 (d|_), 6 (_|e)
    assert candidate_offsets(text, "mid") == [1, 4, 5, 6]
    assert candidate_offsets(text, "any") == list(range(1, len(text)))


def test_edges_are_never_offsets():
    assert candidate_offsets("word", "mid") == [1, 2, 3]
    assert not is_mid_word("word", 0) and not is_mid_word("word", 4)
    assert candidate_offsets("", "any") == [] and candidate_offsets("x", "mid") == []


def test_unknown_kind_and_negative_n():
    with pytest.raises(ValueError, match="unknown offset kind"):
        candidate_offsets("abc", "word")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        choose_offsets("abc", -1)


def test_seeded_and_sorted():
    text = "the quick brown fox jumps over the lazy dog " * 20
    a = choose_offsets(text, 30, "mid", seed=0)
    assert a == choose_offsets(text, 30, "mid", seed=0)
    assert a != choose_offsets(text, 30, "mid", seed=1)
    assert a == sorted(set(a)) and len(a) == 30


def test_fewer_candidates_than_asked_returns_all():
    assert choose_offsets("ab cd", 10, "mid", seed=3) == [1, 4]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab_1 .\n-é"), max_size=60),
    n=st.integers(0, 80),
    kind=st.sampled_from(["mid", "any"]),
    seed=st.integers(0, 10),
)
def test_chosen_offsets_satisfy_their_kind(text, n, kind, seed):
    chosen = choose_offsets(text, n, kind, seed)
    if kind == "mid":
        brute = [
            i
            for i in range(len(text) + 1)
            if 0 < i < len(text) and text[i - 1].isalnum() | (text[i - 1] == "_")
            and (text[i].isalnum() or text[i] == "_")
        ]
    else:
        brute = list(range(1, len(text)))
    assert chosen == sorted(set(chosen))
    assert set(chosen) <= set(brute)
    assert len(chosen) == min(n, len(brute))
