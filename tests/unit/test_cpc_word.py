"""Word-level search against a brute-force oracle on a tiny vocabulary: the
oracle enumerates every token path and adds up each word's probability."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.lm import Cancelled
from daemon.cpc.word import HOPELESS, Hypothesis, WordTables, search_word, word_end, word_started
from tests.unit.cpc_fakes import ScriptedLM

PIECES = [b"a", b"b", b"ab", b" ", b" a", b"a.", b".", b"ba", b"\n", None]
EOG = 9
STEPS = 3


def tables() -> WordTables:
    gen = np.array([0.0 if p else -np.inf for p in PIECES], dtype=np.float32)
    gen[EOG] = 0.0
    return WordTables(PIECES, gen, frozenset([EOG]))


def no_stop(data: bytes):
    return None


def oracle(lm: ScriptedLM, stable, start: Hypothesis, in_word: bool, steps: int):
    """Every word reachable from ``start`` within ``steps`` tokens, with its
    summed probability: {(word bytes, finished): logprob}."""
    probs: dict = defaultdict(float)

    def walk(tokens, logprob, data, depth):
        end = word_end(data, in_word)
        if end is not None:
            probs[(data[:end], True)] += math.exp(logprob)
            return
        if depth == steps:
            probs[(data, False)] += math.exp(logprob)
            return
        row = lm.row(tuple(stable) + tokens)
        started = word_started(data, in_word)
        for t, p in enumerate(PIECES):
            lp = float(row[t])
            if t == EOG or (started and not p[0:1].isalnum() and p[0:1] != b"_"):
                if started or t == EOG:
                    probs[(data, True)] += math.exp(logprob + lp)
                    continue
            walk(tokens + (t,), logprob + lp, data + p, depth + 1)

    walk(start.tokens, start.logprob, start.data, 0)
    return {key: math.log(v) for key, v in probs.items() if v > 0}


_data = st.sampled_from([b"", b"a", b"ab", b" ", b"b"])


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), _data, st.booleans())
def test_exhaustive_search_finds_the_most_likely_word(seed, data, in_word):
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed, scale=2.0)
    start = Hypothesis((0,), -0.5, data)
    result = search_word(lm, PIECES, tables(), [1], [start], k=10_000, in_word=in_word, max_steps=STEPS, stop=no_stop)
    expected = oracle(lm, [1], start, in_word, STEPS)
    best_key = max(expected, key=expected.get)
    # The search drops paths HOPELESS nats below the best, so it may miss up to
    # one such path's share per path of the tree (PIECES ** STEPS of them); it
    # never finds more probability than there is.
    missed = math.log1p(len(PIECES) ** STEPS * math.exp(-HOPELESS))
    assert expected[best_key] - missed - 1e-2 <= result.best.logprob <= expected[best_key] + 1e-2
    assert result.best.key == best_key or expected[result.best.key] >= expected[best_key] - missed - 1e-2
    total = math.log(sum(math.exp(v) for v in expected.values()))
    assert total - missed - 1e-2 <= result.total <= total + 1e-2
    ranked = sorted(expected.values(), reverse=True)
    if len(ranked) > 1 and ranked[1] > ranked[0] - HOPELESS + 0.1:
        # pruning may lose some of the runner-up's paths, and may even swap the two
        assert ranked[1] - missed - 1e-2 <= result.runner_up <= ranked[0] + 1e-2
    elif result.runner_up is not None:
        assert result.runner_up <= ranked[0] - HOPELESS + 0.1 + 1e-5


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), _data, st.booleans(), st.integers(1, 4))
def test_one_batched_call_per_step_with_at_most_k_hypotheses(seed, data, in_word, k):
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    starts = [Hypothesis((0,), -0.5, data), Hypothesis((2,), -0.9, data)]
    result = search_word(lm, PIECES, tables(), [1], starts, k=k, in_word=in_word, max_steps=STEPS, stop=no_stop)
    assert result.steps == lm.calls <= STEPS
    for batch in lm.batches:
        assert 1 <= len(batch) <= k
        assert all(seq[:1] == (1,) for seq in batch)
    w = result.best
    assert w.hyp.data[: w.end] == w.key[0]
    if w.finished and w.end < len(w.hyp.data):
        assert w.next_token is None  # the word ended inside its last token


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), _data, st.booleans())
def test_width_one_follows_the_most_likely_token(seed, data, in_word):
    """k = 1 is greedy decoding: the path is the argmax of every step, and the
    word ends where the argmax token starts with a non-word byte."""
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    start = Hypothesis((0,), 0.0, data)
    result = search_word(lm, PIECES, tables(), [], [start], k=1, in_word=in_word, max_steps=STEPS, stop=no_stop)
    tokens, out = (0,), data
    for _ in range(STEPS):
        if word_end(out, in_word) is not None:
            break
        row = lm.row(tokens)
        t = int(np.argmax(row))
        if t == EOG or (word_started(out, in_word) and PIECES[t][:1] in (b" ", b".", b"\n")):
            assert result.best.next_token == t
            break
        tokens, out = tokens + (t,), out + PIECES[t]
    assert result.best.hyp.tokens == tokens


def test_the_search_prefers_the_more_likely_word_over_the_more_likely_first_token():
    """"a" -> "b" (0.4) then the word ends; "a" -> "ba" (0.35) ... ; greedy
    would take "b" by its first token, but the word "aba" is more likely
    because after "ab" the model wants more letters."""
    t = {p: i for i, p in enumerate(PIECES) if p}
    lm = ScriptedLM(PIECES, eog=[EOG], overrides={
        (0,): {t[b"b"]: math.log(0.4), t[b"ba"]: math.log(0.35), t[b" "]: math.log(0.25)},
        (0, t[b"b"]): {t[b"b"]: math.log(0.9), t[b" "]: math.log(0.1)},
        (0, t[b"ba"]): {t[b" "]: 0.0},
        (0, t[b"b"], t[b"b"]): {t[b" "]: 0.0},
    })
    start = Hypothesis((0,), 0.0, b"a")
    greedy = search_word(lm, PIECES, tables(), [], [start], k=1, in_word=True, max_steps=4, stop=no_stop)
    assert greedy.best.key == (b"abb", True)  # 0.4 * 0.9
    wide = search_word(lm, PIECES, tables(), [], [start], k=2, in_word=True, max_steps=4, stop=no_stop)
    assert wide.best.key == (b"abb", True)
    assert wide.best.logprob == pytest.approx(math.log(0.36), abs=1e-4)
    assert wide.runner_up == pytest.approx(math.log(0.35), abs=1e-4)
    lm.overrides[(0, t[b"b"])] = {t[b"b"]: math.log(0.5), t[b" "]: math.log(0.5)}
    greedy = search_word(lm, PIECES, tables(), [], [start], k=1, in_word=True, max_steps=4, stop=no_stop)
    wide = search_word(lm, PIECES, tables(), [], [start], k=2, in_word=True, max_steps=4, stop=no_stop)
    assert greedy.best.key[0] in (b"ab", b"abb")  # 0.2 each: greedy follows "b"
    assert wide.best.key == (b"aba", True)  # 0.35 beats 0.2 + nothing else
    assert wide.best.next_token == t[b" "]


def test_a_word_ended_inside_a_token_and_the_same_word_by_two_paths_add_up():
    t = {p: i for i, p in enumerate(PIECES) if p}
    lm = ScriptedLM(PIECES, eog=[EOG], overrides={
        (): {t[b"a."]: math.log(0.3), t[b"a"]: math.log(0.3), t[b"b"]: math.log(0.4)},
        (t[b"a"],): {t[b"."]: math.log(0.5), t[b"a"]: math.log(0.5)},
        (t[b"b"],): {t[b" "]: 0.0},
        (t[b"a"], t[b"a"]): {t[b" "]: 0.0},
    })
    start = Hypothesis((), 0.0, b"")
    result = search_word(lm, PIECES, tables(), [], [start], k=4, in_word=True, max_steps=4, stop=no_stop)
    # "a" ends: 0.3 (inside "a.") + 0.3 * 0.5 (boundary after "a") = 0.45
    assert result.best.key == (b"a", True)
    assert result.best.logprob == pytest.approx(math.log(0.45), abs=1e-4)
    assert result.runner_up == pytest.approx(math.log(0.4), abs=1e-4)


def test_a_stop_rule_ends_the_word_and_a_finished_start_needs_no_model_call():
    lm = ScriptedLM(PIECES, eog=[EOG], seed=2)
    start = Hypothesis((0,), 0.0, b"ab a")
    result = search_word(lm, PIECES, tables(), [], [start], k=2, in_word=True, max_steps=4, stop=no_stop)
    assert result.best.key == (b"ab", True) and lm.calls == 0 and result.steps == 0
    stop_at_newline = lambda d: d.index(b"\n") if b"\n" in d else None  # noqa: E731
    start = Hypothesis((0,), 0.0, b"\n")
    result = search_word(lm, PIECES, tables(), [], [start], k=2, in_word=False, max_steps=4, stop=stop_at_newline)
    assert result.best.key == (b"", True) and lm.calls == 0


def test_cancel_is_checked_before_each_step():
    lm = ScriptedLM(PIECES, eog=[EOG], seed=1)
    with pytest.raises(Cancelled):
        search_word(lm, PIECES, tables(), [], [Hypothesis((0,), 0.0, b"a")], k=2, in_word=True,
                    max_steps=4, stop=no_stop, cancel=lambda: True)
    assert lm.calls == 0


def test_word_end_and_started():
    assert word_end(b"abc def", True) == 3
    assert word_end(b" abc", True) == 0
    assert word_end(b"abc", True) is None
    assert word_end(b" abc", False) is None
    assert word_end(b" abc.", False) == 4
    assert word_end(b"  ", False) is None
    assert word_end("é!".encode(), True) == 2  # non-ASCII letters are word bytes
    assert word_started(b"", True) and not word_started(b" (", False) and word_started(b" a", False)
