"""The model's context window: bounded, a suffix of the text, and a start that
moves only in coarse steps while the user types (so the KV cache survives)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.window import ContextWindow, cut_context

WORDS = "the quick brown fox jumps over a lazy dog while typing text\n".split(" ")


def _prose(n: int, seed: int) -> str:
    rng = random.Random(seed)
    out = []
    while sum(len(w) + 1 for w in out) < n:
        out.append(rng.choice(WORDS))
    return " ".join(out)[:n]


def test_short_text_is_kept_whole():
    w = ContextWindow()
    assert w.window("hello world", 100) == "hello world"


def test_cut_snaps_forward_to_whitespace():
    assert cut_context("abc def ghi", 6) == " ghi"
    assert cut_context("abcdefghi", 4) == "fghi"


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(40, 400))
def test_typing_moves_the_start_rarely_and_the_window_stays_a_bounded_suffix(seed, limit):
    text = _prose(3 * limit + 200, seed)
    w = ContextWindow()
    starts = []
    for end in range(1, len(text) + 1):
        typed = text[:end]
        win = w.window(typed, limit)
        assert typed.endswith(win)
        assert len(win) <= limit
        assert len(win) >= min(len(typed), limit - ContextWindow.step_for(limit) - 32) or len(typed) <= limit
        starts.append(end - len(win))
    moves = sum(1 for a, b in zip(starts, starts[1:]) if a != b)
    overflow = max(0, len(text) - limit)
    # A fresh cut every key would move it ``overflow`` times; coarse steps move
    # it about once per step (snapping can shorten a step by the snap width).
    step = ContextWindow.step_for(limit)
    assert moves <= overflow // max(1, step - 32 - 1) + 2


def test_ring_buffer_dropping_from_the_front_keeps_the_start():
    """The daemon's buffer drops old characters: offsets shift, content does not."""
    text = _prose(3000, 1)
    w = ContextWindow()
    first = w.window(text[:2000], 1500)
    shifted = w.window(text[10:2005], 1500)  # 10 dropped at the front, 5 typed
    assert shifted == first + text[2000:2005]


def test_unrelated_text_gets_a_fresh_window():
    w = ContextWindow()
    w.window(_prose(2000, 2), 1500)
    other = "x " * 1000
    win = w.window(other, 1500)
    assert other.endswith(win) and len(win) <= 1500
