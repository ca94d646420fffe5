"""Progressive context on a scripted LM that remembers what it decoded: a cold
request answers from the window near the caret, background warm-up fills the
full window's prompt in aligned chunks, and then the full window answers."""

from __future__ import annotations

import random
from typing import Optional, Sequence

import pytest

from daemon.cpc.beam import Decoder
from daemon.cpc.lm import Cancelled, CancelCheck
from daemon.cpc.progressive import COLD_TOKENS, WARM_CHUNK
from daemon.cpc.suggestion import BeamParams
from tests.unit.cpc_fakes import ScriptedLM
from tests.unit.test_cpc_beam import EOG, PIECES

WORDS = "the information is then there form it is the caf then the information".split()
# ~900 characters of seeded word salad (no repeated stretch the window could re-anchor on)
_RNG = random.Random(0)
TEXT = " ".join(_RNG.choice(WORDS) for _ in range(160)) + " inf"
P = BeamParams(context_chars=600, quick_context_chars=80)


class CachingLM(ScriptedLM):
    """A ScriptedLM with the cache query of the llama.cpp backend: every prefix
    of a sequence it evaluated is cached."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.evaluated: list[tuple[int, ...]] = []

    def logprobs(self, seqs: Sequence[Sequence[int]], cancel: Optional[CancelCheck] = None):
        out = super().logprobs(seqs, cancel)
        self.evaluated.extend(tuple(s) for s in seqs)
        return out

    def cached_tokens(self, seq: Sequence[int]) -> int:
        best = 0
        for s in self.evaluated:
            n = 0
            while n < min(len(s), len(seq)) and s[n] == seq[n]:
                n += 1
            best = max(best, n)
        return best


def full_stable(text: str, params: BeamParams = P) -> tuple[int, ...]:
    """The full window's stable prompt, from a decoder that has no cache query."""
    return Decoder(ScriptedLM(PIECES, eog=[EOG])).plan(text, params).stable


def test_cold_request_answers_from_the_window_near_the_caret():
    lm = CachingLM(PIECES, eog=[EOG])
    d = Decoder(lm)
    full = full_stable(TEXT)
    assert len(full) > COLD_TOKENS
    split = d.plan(TEXT, P)
    assert d.used_near_window and d.warming
    assert len(split.stable) < len(full) // 3
    assert split.remainder == b"inf" or split.remainder.endswith(b"inf")
    near_text = lm.tokenize(TEXT[-P.quick_context_chars:])
    assert len(split.stable) <= len(near_text)


def test_warm_up_fills_the_full_prompt_in_aligned_chunks_then_the_full_window_answers():
    lm = CachingLM(PIECES, eog=[EOG])
    d = Decoder(lm)
    d.complete(TEXT, P)
    full = full_stable(TEXT)
    lm.batches.clear()
    steps = 0
    while d.warm_step():
        steps += 1
        assert steps < 1000
    assert not d.warming
    assert lm.cached_tokens(full) == len(full)
    ends = [len(b[0]) for b in lm.batches]
    assert all(e % WARM_CHUNK == 0 for e in ends[:-1]) and ends[-1] == len(full)
    assert len(ends) == -(-len(full) // WARM_CHUNK)
    split = d.plan(TEXT, P)
    assert not d.used_near_window and split.stable == full


def test_typing_inside_a_word_keeps_the_near_prompt():
    lm = CachingLM(PIECES, eog=[EOG])
    d = Decoder(lm)
    first = d.plan(TEXT, P).stable
    for extra in ("o", "or", "orm"):
        assert d.plan(TEXT + extra, P).stable == first
        assert d.used_near_window


def test_warm_up_that_is_cancelled_resumes_where_it_stopped():
    lm = CachingLM(PIECES, eog=[EOG])
    d = Decoder(lm)
    d.plan(TEXT, P)
    assert d.warm_step()
    done = lm.cached_tokens(full_stable(TEXT))
    with pytest.raises(Cancelled):
        d.warm_step(lambda: True)
    assert d.warming and lm.cached_tokens(full_stable(TEXT)) == done
    assert d.warm_step()
    assert lm.cached_tokens(full_stable(TEXT)) == done + WARM_CHUNK


@pytest.mark.parametrize("params", [BeamParams(context_chars=600, quick_context_chars=0),
                                    BeamParams(context_chars=600, quick_context_chars=600)])
def test_near_window_off(params):
    lm = CachingLM(PIECES, eog=[EOG])
    d = Decoder(lm)
    assert d.plan(TEXT, params).stable == full_stable(TEXT, params)
    assert not d.used_near_window and not d.warming and not d.warm_step()


def test_backend_without_cache_query_always_gets_the_full_window():
    d = Decoder(ScriptedLM(PIECES, eog=[EOG]))
    assert d.plan(TEXT, P).stable == full_stable(TEXT)
    assert not d.warming


def test_short_text_and_a_mostly_cached_prompt_use_the_full_window():
    lm = CachingLM(PIECES, eog=[EOG])
    d = Decoder(lm)
    short = TEXT[-P.quick_context_chars:]
    d.plan(short, P)
    assert not d.used_near_window
    full = full_stable(TEXT)
    lm.logprobs([full[: len(full) - COLD_TOKENS]])  # all but COLD_TOKENS cached
    assert d.plan(TEXT, P).stable == full and not d.used_near_window
