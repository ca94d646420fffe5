"""Progressive context and batch threads on the real SmolLM2 backend."""

from __future__ import annotations

import pytest

from daemon.cpc.beam import Decoder
from daemon.cpc.progressive import WARM_CHUNK
from daemon.cpc.suggestion import BeamParams
from daemon.evaluation.replay import CountingLM, PlanRecordingDecoder
from daemon.backends.llamacpp.llama import LlamaLM
from daemon.backends.llamacpp.threads import BatchThreads

TOPICS = ["the caret", "a small model", "the grey text", "the Tab key", "your own disk", "a busy CPU",
          "the first click", "a long email", "the cache", "a browser tab", "the input method", "a password"]
# Long enough for two windows, and without repeated stretches the window start could re-anchor on.
PROSE = " ".join(f"Note {i}: ghosttype thinks about {t} while you write line {i * 7}." for i, t in enumerate(TOPICS * 2)) \
    + " The suggestion appears after a short pa"


@pytest.fixture()
def lm(smol_model_path):
    backend = LlamaLM(str(smol_model_path), n_seq_max=6, batch_threads=1)
    yield backend
    backend.close()


def test_cached_tokens_follows_the_kv_cache(lm):
    toks = lm.tokenize(PROSE)
    assert lm.cached_tokens(toks) == 0
    lm.logprobs([toks[:40]])
    assert lm.cached_tokens(toks) == 40
    assert lm.cached_tokens(toks[:40]) == 40
    assert lm.cached_tokens(toks[:10] + [toks[11]] * 3) == 10
    lm.clear_cache()
    assert lm.cached_tokens(toks) == 0


def test_cold_field_answers_from_near_the_caret_and_warms_without_decoding_twice(lm):
    counting = CountingLM(lm)
    decoder = PlanRecordingDecoder(counting)
    params = BeamParams(context_chars=1200, quick_context_chars=160)
    first = decoder.complete(PROSE, params)
    assert decoder.used_near_window and decoder.warming
    assert first.text and first.stable_tokens < 60
    steps = 0
    while decoder.warm_step():
        steps += 1
    full = decoder.plan(PROSE, params)
    assert not decoder.used_near_window and steps == -(-len(full.stable) // WARM_CHUNK)
    again = counting.prompt_reeval_tokens
    for extra in ("u", "us"):  # typing inside the word: the full prompt is cached
        s = decoder.complete(PROSE + extra, params)
        assert not decoder.used_near_window and s.stable_tokens == len(full.stable)
    assert counting.prompt_reeval_tokens == again == 0


def test_batch_threads_follow_the_policy(smol_model_path):
    answers = iter([2, 2, 1, 1, 1, 1, 1, 1])
    backend = LlamaLM(str(smol_model_path), n_seq_max=2, n_threads=1, batch_threads=lambda: next(answers, 1))
    try:
        toks = backend.tokenize(PROSE)
        backend.logprobs([toks[:20]])  # a batch: asks the policy
        assert backend.threads == (1, 2)
        backend.logprobs([toks[:21]])  # one token: a callable policy governs batches only
        assert backend.threads == (1, 2)
        backend.logprobs([toks[:30]])
        assert backend.threads == (1, 2)
        backend.logprobs([toks[:50]])
        assert backend.threads == (1, 1)
    finally:
        backend.close()


class _Load:
    """A settable reading of the cores other processes keep busy."""

    def __init__(self) -> None:
        self.busy = None

    def other_busy_cores(self):
        return self.busy


def test_single_token_decodes_follow_the_load_policy(smol_model_path):
    """With the load policy one-token steps take the idle core too while the
    rest of the machine is nearly idle, and give it back as soon as other
    programs keep part of a core busy; batches keep the idle-core rule."""
    load = _Load()
    ticks = iter(range(10_000))
    policy = BatchThreads(1, 2, cores=4, sampler=load, interval_s=1.0, clock=lambda: float(next(ticks)))
    backend = LlamaLM(str(smol_model_path), n_seq_max=2, n_threads=1, batch_threads=policy)
    try:
        toks = backend.tokenize(PROSE)
        load.busy = 0.0
        backend.logprobs([toks[:20]])  # a batch on an idle machine
        assert backend.threads == (2, 2)
        backend.logprobs([toks[:21]])  # one token, still idle
        assert backend.threads == (2, 2)
        load.busy = 0.5  # half a core busy elsewhere: batches may still add a thread, one-token steps not
        backend.logprobs([toks[:22]])
        assert backend.threads == (1, 2)
        backend.logprobs([toks[:30]])
        assert backend.threads == (1, 2)
        load.busy = 3.5
        backend.logprobs([toks[:40]])  # a batch under load
        assert backend.threads == (1, 1)
    finally:
        backend.close()


def test_warm_up_leaves_the_cache_empty(lm):
    lm.warm_up()
    assert lm.cached_tokens(lm.tokenize("Hello, world. This is")) == 0
