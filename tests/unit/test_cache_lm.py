"""The memory's token cache (daemon/memory/cache_lm.py) on a scripted LM:
the index against a brute-force scan of the token streams, the mixed rows
against the formula, empty memory, memory changes, and a decoder that
suggests a remembered phrase the model alone would not."""

from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.beam import Decoder
from daemon.cpc.lm import TokenLM
from daemon.cpc.suggestion import BeamParams
from daemon.memory.cache_lm import CacheIndex, CacheParams, MemoryLM
from daemon.memory.store import Memory
from tests.unit.cpc_fakes import ScriptedLM

LETTERS = "abcdefgh"
#: one token per letter, plus a space: a text's tokens are its characters
CHAR_PIECES = [c.encode() for c in LETTERS + " "]
CHAR_TOK = {c: i for i, c in enumerate(LETTERS + " ")}


def char_lm(seed: int = 0) -> ScriptedLM:
    return ScriptedLM(CHAR_PIECES, seed=seed, tokenizer=lambda text: [CHAR_TOK[c] for c in text])


def brute_followers(streams: list[list[int]], seq: list[int], max_order: int):
    """(order, {token: count}) of the longest suffix of ``seq`` followed by a
    token somewhere in ``streams`` (never across two streams), by scanning."""
    for n in range(min(max_order, len(seq)), 0, -1):
        suffix = tuple(seq[-n:])
        counts: dict[int, int] = {}
        for s in streams:
            for i in range(len(s) - n):
                if tuple(s[i:i + n]) == suffix:
                    counts[s[i + n]] = counts.get(s[i + n], 0) + 1
        if counts:
            return n, counts
    return None


def brute_row(row: np.ndarray, found, params: CacheParams, pieces, last: int, trust: float = 1.0) -> np.ndarray:
    """The mixed row by the formula, in float64: ``(1 - s) p_LM + sum_f lam_f
    share_f`` at each follower f, where ``lam_f`` is ``lam_word``'s weight
    for a follower that goes on with a word the last token ends inside of
    (letters; CHAR_PIECES has no digits),
    ``lam_max``'s otherwise, times ``trust``, and ``s = sum_f lam_f share_f``."""
    p = np.exp(row.astype(np.float64))
    if found is None:
        return np.log(p)
    order, counts = found
    total = sum(counts.values())
    in_word = pieces[last][-1:].isalpha() or pieces[last][-1:] == b"_"
    cache = np.zeros_like(p)
    for tok, c in counts.items():
        goes_on = in_word and (pieces[tok][:1].isalpha() or pieces[tok][:1] == b"_")
        cache[tok] = trust * params.weight(order, total, len(counts), goes_on) * c / total
    with np.errstate(divide="ignore"):
        return np.log((1 - cache.sum()) * p + cache)


streams_st = st.lists(st.lists(st.integers(0, 4), max_size=30), max_size=5)
seq_st = st.lists(st.integers(0, 5), max_size=10)


@settings(max_examples=300, deadline=None)
@given(streams=streams_st, seqs=st.lists(seq_st, min_size=1, max_size=8), max_order=st.integers(1, 8))
def test_index_finds_the_longest_suffix_and_its_followers_as_a_scan_does(streams, seqs, max_order):
    index = CacheIndex(streams, max_order)
    for seq in seqs:
        found = brute_followers(streams, seq, max_order)
        match = index.lookup(seq[-max_order:])
        if found is None:
            assert match is None
        else:
            assert match is not None and match.order == found[0]
            assert dict(zip(match.followers.tolist(), match.counts.tolist())) == found[1]


texts_st = st.lists(st.text(alphabet=LETTERS + " ", min_size=8, max_size=40).filter(lambda t: len(t.strip()) >= 8),
                    max_size=4)


def test_the_next_token_and_a_words_spelling_have_their_own_trust():
    """The shipped trust (Witten-Bell's, full from a two-token match, a word's continuation at 0.9), and a
    word's schedule set apart from the next token's."""
    p = CacheParams()
    assert p.weight(1, 3, 1) == pytest.approx(0.5 * 0.5 * 3 / 4)
    assert p.weight(2, 1, 1) == pytest.approx(0.5 * 0.5)
    assert p.weight(3, 1, 1, in_word=True) == pytest.approx(0.9 * 0.5)  # a name seen once
    assert p.weight(3, 0, 0) == 0.0
    q = CacheParams(lam_max=0.6, ramp=6, beta=16.0, min_order_word=2, ramp_word=2, beta_word=1.0)
    assert q.weight(1, 10, 1) == pytest.approx(0.6 * (1 / 6) * 10 / 26)
    assert q.weight(1, 5, 1, in_word=True) == 0.0  # one token says nothing of how the word goes on here
    assert q.weight(2, 1, 1, in_word=True) == pytest.approx(0.9 * 0.5 * 0.5)
    assert q.weight(3, 1, 1, in_word=True) == p.weight(3, 1, 1, in_word=True)
    for bad in (dict(min_order_word=0), dict(ramp_word=0), dict(beta_word=0.0)):
        with pytest.raises(ValueError):
            CacheParams(**bad)


@settings(max_examples=150, deadline=None)
@given(texts=texts_st, queries=st.lists(st.text(alphabet=LETTERS + " ", max_size=12), min_size=1, max_size=6),
       lam_max=st.floats(0.0, 0.95), lam_word=st.floats(0.0, 0.95), min_order=st.integers(1, 3),
       ramp=st.integers(1, 6), beta=st.floats(0.1, 16.0), word=st.tuples(st.integers(1, 3), st.integers(1, 6),
                                                                            st.floats(0.1, 16.0)),
       seed=st.integers(0, 3), trust=st.floats(0.01, 1.0), longest=st.integers(1, 6))
def test_rows_are_the_mixture_of_the_model_and_the_memory_and_stay_normalised(texts, queries, lam_max, lam_word,
                                                                               min_order, ramp, beta, word, seed,
                                                                               trust, longest):
    """Oracle: the formula (brute_row) over a scan of the streams (brute_followers); the trust scales a row
    whose longest match has at most ``trust_max_order`` tokens, a longer one is mixed with the memory whole."""
    params = CacheParams(max_order=6, min_order=min_order, lam_max=lam_max, lam_word=lam_word, ramp=ramp, beta=beta,
                         min_order_word=word[0], ramp_word=word[1], beta_word=word[2], trust_max_order=longest)
    memory = Memory()
    memory.extend(texts)
    base = char_lm(seed)
    lm = MemoryLM(base, memory, params, background=False)
    lm.trust = trust
    streams = [[CHAR_TOK[c] for c in piece] for piece in memory.pieces()]
    seqs = [[CHAR_TOK[c] for c in q] for q in queries]
    rows = lm.logprobs(seqs)
    assert rows.shape == (len(seqs), base.n_vocab) and rows.dtype == np.float32
    for seq, row in zip(seqs, rows):
        found = brute_followers(streams, seq, params.max_order) if seq else None
        scale = trust if found is not None and found[0] <= longest else 1.0
        expect = brute_row(base.row(seq), found, params, CHAR_PIECES, seq[-1] if seq else 0, scale)
        np.testing.assert_allclose(row, expect, rtol=0, atol=2e-5)
        assert math.isclose(float(np.exp(row.astype(np.float64)).sum()), 1.0, abs_tol=1e-4)


def test_a_token_impossible_for_both_stays_impossible_and_the_memory_makes_one_possible():
    # the model gives ``b`` nothing (-inf) after "ab"; the memory saw "ab" followed by "b"
    base = char_lm()
    row = base.row([0, 1]).copy()
    row[CHAR_TOK["b"]] = -np.inf
    row[CHAR_TOK["h"]] = -np.inf
    row -= np.log(np.exp(row.astype(np.float64)).sum())

    class Fixed(ScriptedLM):
        def row(self, seq):
            return row if list(seq) == [0, 1] else super().row(seq)

    fixed = Fixed(CHAR_PIECES, tokenizer=lambda text: [CHAR_TOK[c] for c in text])
    memory = Memory()
    memory.add("abbabbabb")
    lm = MemoryLM(fixed, memory, CacheParams(min_order=1), background=False)
    out = lm.logprobs([[0, 1]])[0]
    assert np.isfinite(out[CHAR_TOK["b"]]) and out[CHAR_TOK["b"]] > math.log(0.3)
    assert out[CHAR_TOK["h"]] == -np.inf
    assert math.isclose(float(np.exp(out.astype(np.float64)).sum()), 1.0, abs_tol=1e-5)


def test_empty_memory_returns_the_models_rows_exactly():
    base = char_lm()
    memory = Memory()
    for background in (False, True):
        lm = MemoryLM(base, memory, background=background)
        seqs = [[0, 1, 2], [], [3] * 9]
        np.testing.assert_array_equal(lm.logprobs(seqs), base.logprobs(seqs))
    memory.add("abcabcabcabc")
    lm = MemoryLM(base, memory, background=False)
    seqs = [[7, 7, 7, 7]]  # nothing in the memory ends with "hhhh" or "h"
    np.testing.assert_array_equal(lm.logprobs(seqs), base.logprobs(seqs))


def test_a_memory_change_is_picked_up_and_forget_restores_the_model():
    base = char_lm()
    memory = Memory()
    lm = MemoryLM(base, memory, background=False)
    seq = [CHAR_TOK[c] for c in "hello"[:0] + "cab"]
    before = lm.logprobs([seq])[0]
    memory.add("cab cabd cabd cabd")
    after = lm.logprobs([seq])[0]
    assert after[CHAR_TOK["d"]] > before[CHAR_TOK["d"]] + 0.5
    memory.add("dddd cabe cabe cabe cabe cabe")
    later = lm.logprobs([seq])[0]
    assert later[CHAR_TOK["e"]] > after[CHAR_TOK["e"]] + 0.5
    assert lm.builds == 2
    memory.clear()
    np.testing.assert_array_equal(lm.logprobs([seq])[0], base.row(seq))


def test_the_background_build_keeps_answering_with_the_previous_index_until_it_is_done():
    base = char_lm()
    memory = Memory()
    lm = MemoryLM(base, memory)  # background builds, as in the daemon
    seq = [CHAR_TOK[c] for c in "cab"]
    memory.add("cabd cabd cabd cabd")
    first = lm.logprobs([seq])[0]  # may or may not see the new piece yet
    assert lm.wait_index()
    now = lm.logprobs([seq])[0]
    assert now[CHAR_TOK["d"]] > base.row(seq)[CHAR_TOK["d"]] + 0.5
    assert first.shape == now.shape


def test_pieces_are_tokenized_once_and_ngrams_never_span_two_pieces():
    calls: list[int] = []

    def tokenize(text: str) -> list[int]:
        calls.append(len(text))
        return [CHAR_TOK[c] for c in text]

    base = ScriptedLM(CHAR_PIECES, tokenizer=tokenize)
    memory = Memory()
    lm = MemoryLM(base, memory, CacheParams(min_order=1), background=False)
    memory.add("aaaaaaaab")
    memory.add("cccccccch")
    lm.logprobs([[0]])
    memory.add("dddddddde")
    lm.logprobs([[0]])
    assert calls == [9, 9, 9]  # the first two pieces were not tokenized again
    # "b" ends a piece and "c" starts the next: nothing follows "b" in the memory
    assert lm.match([CHAR_TOK["b"]]) is None


def test_the_backends_extras_are_the_base_models():
    class Extras(ScriptedLM):
        cleared = 0

        def clear_cache(self) -> None:
            self.cleared += 1

        def cached_tokens(self, seq) -> int:
            return len(seq)

    base = Extras(CHAR_PIECES, tokenizer=lambda text: [CHAR_TOK[c] for c in text])
    lm = MemoryLM(base, Memory(), background=False)
    assert isinstance(lm, TokenLM)
    lm.clear_cache()
    assert base.cleared == 1 and lm.cached_tokens([1, 2]) == 2
    assert lm.n_vocab == base.n_vocab and lm.n_ctx == base.n_ctx and lm.stats is base.stats
    assert lm.token_bytes() == base.token_bytes() and lm.eog_ids() == base.eog_ids()
    with pytest.raises(AttributeError):
        lm.no_such_method  # noqa: B018
    assert "tokens indexed" in repr(lm)


def test_lookups_are_not_scans():
    rng = np.random.default_rng(0)
    index = CacheIndex([rng.integers(0, 3000, 50_000)], 8)
    seq = list(rng.integers(0, 3000, 8))

    t0 = time.perf_counter()
    for _ in range(200):
        index.lookup(seq)
    per = (time.perf_counter() - t0) / 200
    assert per < 2e-3  # a scan of 50,000 tokens per order would take far longer; typically ~20 us


def test_concurrent_reads_while_the_memory_changes():
    """Rows stay distributions while another thread adds to the memory and the index is rebuilt in the
    background.  The reads go on until twenty of them saw the memory change while they ran (not a fixed
    count: on Python 3.14 two hundred reads took 0.05 s, and the writer may not have added ten pieces
    by then), bounded by a deadline."""
    base = char_lm()
    memory = Memory(max_chars=20_000)  # a small bound keeps each background rebuild cheap
    lm = MemoryLM(base, memory)
    stop = threading.Event()
    errors: list[BaseException] = []
    adds = [0]

    def writer() -> None:
        try:
            while not stop.is_set():
                memory.add("abcdefgh " * (1 + adds[0] % 5))
                adds[0] += 1
                time.sleep(0)  # hands the GIL on: the reader's calls interleave with the adds, not queue behind them
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    t = threading.Thread(target=writer)
    reads = overlapped = 0
    deadline = time.monotonic() + 60
    t.start()
    try:
        while (reads < 200 or overlapped < 20) and time.monotonic() < deadline:
            before = memory.generation
            rows = lm.logprobs([[0, 1, 2], [3, 4]])
            overlapped += memory.generation != before
            reads += 1
            assert np.all(np.abs(np.exp(rows.astype(np.float64)).sum(axis=1) - 1) < 1e-4)
    except BaseException as exc:  # pragma: no cover - reported below
        errors.append(exc)
    finally:
        stop.set()
        t.join()
    assert not errors
    assert overlapped >= 20, (reads, overlapped, adds)  # the memory did change while reads ran
    assert lm.builds >= 1 and lm.matched > 0  # ... and the rows read the rebuilt index


# --------------------------------------------------------------------- the decoder

WORD_PIECES = sorted({bytes([b]) for b in range(32, 127)} | {b" Zyx", b"om", b"atic", b" Ltd", b" ask", b" please"})
WORD_PIECES = WORD_PIECES + [None]
EOG = len(WORD_PIECES) - 1
_LETTER_START = np.array([bool(p) and p[:1].isalpha() for p in WORD_PIECES])


class WordishLM(ScriptedLM):
    """A scripted model that, like a real one, expects a word it is inside
    of to go on (letters are likely after a letter) without knowing how,
    and is unsure which letters (``scale`` 1.5: flat-ish rows)."""

    def logits(self, seq):
        row = super().logits(seq)
        last = WORD_PIECES[seq[-1]] if seq else None
        if last and last[-1:].isalpha():
            row = row + np.where(_LETTER_START, 4.0, 0.0)
        return row


def test_the_decoder_suggests_a_remembered_phrase_that_covers_the_typed_characters():
    params = BeamParams(confidence_threshold=0.0, max_tokens=6)
    text = "Before you sign, please ask Zyx"
    for seed in range(3):
        base = WordishLM(WORD_PIECES, eog=[EOG], seed=seed, scale=1.5)
        alone = Decoder(base).complete(text, params).text
        assert not alone.startswith("omatic")  # the model alone does not know the name
        memory = Memory()
        memory.extend(["We signed. Now please ask Zyxomatic Ltd for the invoice.", "Then please ask Zyxomatic Ltd.",
                       "Next time please ask Zyxomatic Ltd first.", "Or please ask Zyxomatic Ltd again."])
        decoder = Decoder(MemoryLM(base, memory, background=False))
        s = decoder.complete(text, params)
        assert s.text.startswith("omatic"), (seed, s.text)
        # the covering spells exactly what was typed: mid-word, the typed part is not repeated
        assert s.remainder == b" Zyx"


def _typed_through(lm: MemoryLM, text: str) -> list[float]:
    """``text`` typed a character a request, as the decoder asks (its stable tokens observed, then their row);
    the trust after each."""
    seen = []
    for n in range(1, len(text) + 1):
        stable = [CHAR_TOK[c] for c in text[:n]]
        lm.observe(stable)
        lm.logprobs([stable])
        seen.append(lm.trust)
    return seen


@settings(max_examples=100, deadline=None)
@given(texts=texts_st, typed=st.text(alphabet=LETTERS + " ", min_size=2, max_size=30), seed=st.integers(0, 3),
       prior=st.floats(0.05, 0.99), share=st.floats(0.0, 0.5), longest=st.integers(1, 6))
def test_the_trust_is_the_posterior_weight_of_the_memory_against_the_model_alone(texts, typed, seed, prior, share,
                                                                                  longest):
    """Oracle: Bayes over two models, the model alone and the model with the memory trusted whole, scored on
    each typed token by the row the decoder asked after the tokens before it, then drawn back toward the prior
    by the share; the trust is the second one's weight.  Only rows of matches of at most ``trust_max_order``
    tokens are evidence (longer ones are mixed whole, whatever the trust)."""
    params = CacheParams(max_order=6, trust_prior=prior, trust_share=share, trust_max_order=longest)
    memory = Memory()
    memory.extend(texts)
    base = char_lm(seed)
    lm = MemoryLM(base, memory, params, background=False)
    streams = [[CHAR_TOK[c] for c in piece] for piece in memory.pieces()]
    w, expect = prior, []
    for n in range(1, len(typed) + 1):
        seq = [CHAR_TOK[c] for c in typed[:n - 1]]
        if seq:
            found = brute_followers(streams, seq, params.max_order)
            p_lm = np.exp(np.asarray(base.row(seq), dtype=np.float64))
            p_mix = np.exp(brute_row(base.row(seq), found, params, CHAR_PIECES, seq[-1]))
            t = CHAR_TOK[typed[n - 1]]
            if found is not None and found[0] <= longest:
                r = p_mix[t] / p_lm[t]
                w = (1 - share) * (w * r / ((1 - w) + w * r)) + share * prior
        expect.append(w)
    np.testing.assert_allclose(_typed_through(lm, typed), expect, rtol=1e-6, atol=1e-9)


def test_a_memory_that_predicts_the_typed_text_is_trusted_and_an_unrelated_one_soon_hardly_mixed_in():
    """Typed: a sentence the first memory holds; with trust_prior 0.8 its trust rises toward whole, and a memory
    of other words, whose rows after a space make the typed letter less likely, falls below a tenth; with
    trust_prior 1 the memory is always trusted whole."""
    typed = "bad cab fed a bead " * 6
    related, unrelated = Memory(), Memory()
    related.extend([typed])
    unrelated.extend(["hhh ggg hhh ggg " * 6])  # after a space: letters never typed
    base, learning = char_lm(1), CacheParams(trust_prior=0.8, trust_max_order=8)  # every match learns
    assert _typed_through(MemoryLM(base, related, learning, background=False), typed)[-1] > 0.95
    assert _typed_through(MemoryLM(base, unrelated, learning, background=False), typed)[-1] < 0.1
    whole = CacheParams(trust_prior=1.0)
    assert set(_typed_through(MemoryLM(base, unrelated, whole, background=False), typed)) == {1.0}
    for bad in (dict(trust_prior=0.0), dict(trust_max_order=0)):
        with pytest.raises(ValueError):
            CacheParams(**bad)
