"""Coverage beam search against brute-force oracles on tiny vocabularies."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.covering import HOPELESS, cover
from daemon.cpc.lm import Cancelled
from daemon.cpc.vocab import VocabIndex
from tests.unit.cpc_fakes import ScriptedLM

PIECES = [b"a", b"b", b"ab", b"ba", b"abb", b" ", b" a", b"bab", b"aa", b" ab", b"bb", None, b"a b"]
EOG = 11

_remainder = st.text(alphabet="ab ", min_size=1, max_size=6).map(str.encode)
_stable = st.lists(st.integers(0, len(PIECES) - 1).filter(lambda t: PIECES[t] is not None), max_size=3)


def all_coverings(remainder: bytes, pieces=PIECES):
    """Every token sequence whose bytes start with ``remainder`` and whose
    tokens before the last lie strictly inside it."""
    out = []

    def walk(prefix: tuple[int, ...], covered: int) -> None:
        rest = remainder[covered:]
        for t, p in enumerate(pieces):
            if not p:
                continue
            if p.startswith(rest):
                out.append(prefix + (t,))
            elif len(p) < len(rest) and rest.startswith(p):
                walk(prefix + (t,), covered + len(p))

    walk((), 0)
    return out


def score(lm: ScriptedLM, stable, tokens) -> float:
    total = 0.0
    seq = tuple(stable)
    for t in tokens:
        total += float(lm.row(seq)[t])
        seq += (t,)
    return total


def greedy_masking(lm: ScriptedLM, stable, remainder: bytes):
    seq, covered, chosen = tuple(stable), 0, ()
    while True:
        rest = remainder[covered:]
        row = lm.row(seq)
        valid = [t for t, p in enumerate(PIECES) if p and (p.startswith(rest) or (len(p) < len(rest) and rest.startswith(p)))]
        if not valid:
            return None
        best = max(valid, key=lambda t: (row[t], -t))
        chosen += (best,)
        seq += (best,)
        if PIECES[best].startswith(rest):
            return chosen
        covered += len(PIECES[best])


@settings(max_examples=200, deadline=None)
@given(_stable, _remainder, st.integers(0, 10_000))
def test_wide_beam_finds_the_exhaustive_maximum(stable, remainder, seed):
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    index = VocabIndex(PIECES)
    result = cover(lm, index, stable, remainder, beam_width=10_000)
    candidates = all_coverings(remainder)
    assert result.found == bool(candidates)
    if not candidates:
        return
    best = max(score(lm, stable, c) for c in candidates)
    assert result.logprob == pytest.approx(best, abs=1e-6)
    assert result.logprob == pytest.approx(score(lm, stable, result.tokens), abs=1e-6)
    spelled = b"".join(PIECES[t] for t in result.tokens)
    assert spelled.startswith(remainder)
    assert result.overshoot == spelled[len(remainder):]
    assert result.tokens in candidates


@settings(max_examples=200, deadline=None)
@given(_stable, _remainder, st.integers(0, 10_000))
def test_k1_is_never_worse_than_greedy_masking(stable, remainder, seed):
    """With one beam, greedy masking's path is the best partial beam at every
    step until a complete covering beats it, so ``k = 1`` finds one at least
    as likely.  (A wider beam carries no such guarantee: other prefixes whose
    extensions score higher can push greedy's path out of the ``k`` best and
    still end worse, e.g. stable [1, 1, 3], remainder b"bbaa", seed 2926,
    k = 2; a beam wide enough is checked against the exhaustive maximum above.)"""
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    result = cover(lm, VocabIndex(PIECES), stable, remainder, beam_width=1)
    expected = greedy_masking(lm, stable, remainder)
    assert result.found == (expected is not None)
    if expected is not None:
        assert result.logprob >= score(lm, stable, expected) - 1e-9


def test_a_likely_partial_token_does_not_push_out_a_complete_covering():
    """k = 1: "a" (partial) is more likely than "ab" (complete), but "a" then
    "b" is far worse; the complete covering is kept without a live slot."""
    overrides = {(): {0: -0.1, 2: -1.0, 4: -9.0, 8: -9.0}, (0,): {1: -8.0, 10: -9.0, 3: -9.0, 5: 0.0}}
    lm = ScriptedLM(PIECES, eog=[EOG], overrides=overrides)
    result = cover(lm, VocabIndex(PIECES), [], b"ab", beam_width=1)
    assert result.tokens == (2,)
    assert result.logprob == pytest.approx(score(lm, [], (2,)))
    assert score(lm, [], (0, 1)) < result.logprob - 5  # what the old mixed beam returned


def test_the_guide_path_survives_a_narrow_beam():
    """k = 1 keeps "a" + "b" + "b" (the text's own tokens) alive although
    "ab" is the likelier first step; the guide's covering wins."""
    overrides = {
        (): {2: -0.5, 0: -1.5, 9: -20.0},
        (2,): {1: -6.0, 10: -9.0, 5: 0.0},
        (0,): {1: -0.2, 10: -3.0},
        (0, 1): {1: -0.1},
    }
    lm = ScriptedLM(PIECES, eog=[EOG], overrides=overrides)
    index = VocabIndex(PIECES)
    plain = cover(lm, index, [], b"abb", beam_width=1)
    guided = cover(lm, index, [], b"abb", beam_width=1, guide=(0, 1, 1))
    assert guided.logprob >= score(lm, [], (0, 1, 1)) - 1e-9
    assert guided.logprob > plain.logprob
    assert all(len(batch) <= 2 for batch in lm.batches)


@settings(max_examples=150, deadline=None)
@given(_stable, _remainder, st.integers(0, 10_000), st.integers(1, 3))
def test_guided_search_is_at_least_as_good_as_its_guide(stable, remainder, seed, k):
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    index = VocabIndex(PIECES)
    coverings = [c for c in all_coverings(remainder) if b"".join(PIECES[t] for t in c) == remainder]
    if not coverings:
        return
    guide = coverings[seed % len(coverings)]
    lm.batches.clear()
    result = cover(lm, index, stable, remainder, beam_width=k, guide=guide)
    assert result.logprob >= score(lm, stable, guide) - 1e-9
    assert all(len(batch) <= k + 1 for batch in lm.batches)
    ignored = cover(lm, index, stable, remainder, beam_width=k, guide=guide + (0,))  # spells more than typed
    assert ignored.tokens == cover(lm, index, stable, remainder, beam_width=k).tokens


@settings(max_examples=150, deadline=None)
@given(_stable, _remainder, st.integers(0, 10_000), st.integers(1, 4))
def test_one_batched_call_per_step_and_at_most_k_beams(stable, remainder, seed, k):
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    result = cover(lm, VocabIndex(PIECES), stable, remainder, beam_width=k)
    assert lm.calls == result.steps
    assert result.steps <= len(remainder)
    for batch in lm.batches:
        assert 1 <= len(batch) <= k
        assert all(seq[: len(stable)] == tuple(stable) for seq in batch)
    # No claim that a wider beam beats greedy: beam search is not monotonic in
    # its width (greedy's path can be pushed out of the k best by the other
    # beams' extensions); optimality is checked against the exhaustive oracle
    # with a large k instead.


@settings(max_examples=100, deadline=None)
@given(_stable, _remainder, st.integers(0, 10_000))
def test_conditional_probability_of_the_last_token(stable, remainder, seed):
    """last_cond_logprob = log share of the last token among valid tokens at its step."""
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    result = cover(lm, VocabIndex(PIECES), stable, remainder, beam_width=4)
    if not result.found:
        return
    before = b"".join(PIECES[t] for t in result.tokens[:-1])
    rest = remainder[len(before):]
    row = lm.row(tuple(stable) + result.tokens[:-1])
    valid = [t for t, p in enumerate(PIECES) if p and (p.startswith(rest) or (len(p) < len(rest) and rest.startswith(p)))]
    norm = math.log(sum(math.exp(float(row[t])) for t in valid))
    assert result.last_cond_logprob == pytest.approx(float(row[result.tokens[-1]]) - norm, abs=1e-5)
    assert result.last_cond_logprob <= 1e-9


def test_healing_mode_uses_one_token_that_starts_with_the_remainder():
    lm = ScriptedLM(PIECES, eog=[EOG], seed=3)
    result = cover(lm, VocabIndex(PIECES), [], b"ab", beam_width=1, allow_partial=False)
    assert len(result.tokens) == 1 and PIECES[result.tokens[0]].startswith(b"ab")
    assert lm.calls == 1
    assert not cover(lm, VocabIndex(PIECES), [], b"aba", beam_width=1, allow_partial=False).found


def test_empty_and_uncoverable_remainders():
    lm = ScriptedLM(PIECES, eog=[EOG])
    empty = cover(lm, VocabIndex(PIECES), [0], b"", beam_width=2)
    assert empty.found and empty.tokens == () and lm.calls == 0
    missing = cover(lm, VocabIndex(PIECES), [0], b"az", beam_width=2)
    assert not missing.found and missing.tokens == ()


def test_lower_bound_prunes_worse_live_beams():
    """"a" then anything is worse than the k complete coverings "ab" and "abb": one step only."""
    overrides = {(): {2: 0.0, 4: -1.0, 0: -5.0, 1: -6.0}}
    lm = ScriptedLM(PIECES, eog=[EOG], overrides=overrides)
    result = cover(lm, VocabIndex(PIECES), [], b"ab", beam_width=2)
    assert result.tokens == (2,)
    assert [o.tokens for o in result.others] == [(4,)]
    assert lm.calls == 1


@settings(max_examples=150, deadline=None)
@given(_stable, _remainder, st.integers(0, 10_000), st.integers(1, 4))
def test_wide_beam_returns_the_k_best_coverings(stable, remainder, seed, k):
    """With room for every beam, the best and the ``others`` are the k best
    coverings of the exhaustive oracle, best first."""
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    wide = cover(lm, VocabIndex(PIECES), stable, remainder, beam_width=10_000)
    candidates = all_coverings(remainder)
    if not candidates:
        return
    ranked = sorted((score(lm, stable, c) for c in candidates), reverse=True)
    ranked = [r for r in ranked if r > ranked[0] - HOPELESS]  # hopeless coverings are dropped
    got = [wide.logprob] + [o.logprob for o in wide.others]
    assert got == pytest.approx(ranked[: len(got)], abs=1e-6)
    assert len(got) == len(ranked) or ranked[len(got)] <= ranked[0] - HOPELESS + 1e-3
    narrow = cover(lm, VocabIndex(PIECES), stable, remainder, beam_width=k)
    assert len(narrow.others) <= k - 1
    assert [narrow.logprob] + [o.logprob for o in narrow.others] == sorted(
        [narrow.logprob] + [o.logprob for o in narrow.others], reverse=True)


@settings(max_examples=100, deadline=None)
@given(_stable, _remainder, st.integers(0, 10_000))
def test_typed_mass_and_last_step_entropy(stable, remainder, seed):
    """With an exhaustive beam the mass is the sum over every covering (the
    probability of the typed bytes); the entropy is that of the last step's
    distribution among the tokens agreeing with the typed tail."""
    lm = ScriptedLM(PIECES, eog=[EOG], seed=seed)
    result = cover(lm, VocabIndex(PIECES), stable, remainder, beam_width=10_000)
    if not result.found:
        return
    total = math.log(sum(math.exp(score(lm, stable, c)) for c in all_coverings(remainder)))
    assert result.typed_logmass == pytest.approx(total, abs=1e-3)  # less the hopeless beams' descendants
    before = b"".join(PIECES[t] for t in result.tokens[:-1])
    rest = remainder[len(before):]
    row = lm.row(tuple(stable) + result.tokens[:-1])
    valid = [t for t, p in enumerate(PIECES) if p and (p.startswith(rest) or (len(p) < len(rest) and rest.startswith(p)))]
    lp = [float(row[t]) for t in valid]
    norm = math.log(sum(math.exp(x) for x in lp))
    expected = -sum(math.exp(x - norm) * (x - norm) for x in lp)
    assert result.last_entropy == pytest.approx(expected, abs=1e-5)


def test_cancel_raises_before_the_next_step():
    lm = ScriptedLM(PIECES, eog=[EOG], seed=1)
    with pytest.raises(Cancelled):
        cover(lm, VocabIndex(PIECES), [], b"abab", beam_width=2, cancel=lambda: True)
    assert lm.calls == 0
    calls = {"n": 0}

    def cancel_after_first() -> bool:
        calls["n"] += 1
        return calls["n"] > 2

    lm2 = ScriptedLM(PIECES, eog=[EOG], overrides={(): {0: 0.0}, (0,): {1: 0.0}, (0, 1): {0: 0.0}})
    with pytest.raises(Cancelled):
        cover(lm2, VocabIndex(PIECES), [], b"abab", beam_width=1, cancel=cancel_after_first)
