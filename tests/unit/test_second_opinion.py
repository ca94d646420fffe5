"""The decoder's second opinion: with a memory mixed in, a suggestion the gate would withhold is asked again
of the model alone (``Decoder(plain=...)``, :func:`daemon.memory.cache_lm.decoder_with_memory`).

The oracle is the two decoders run apart: the one over the mixed rows and the one over the model alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.beam import Decoder
from daemon.cpc.suggestion import BeamParams, Suggestion
from daemon.memory.cache_lm import MemoryLM, decoder_with_memory
from daemon.memory.store import Memory
from tests.unit.test_cache_lm import LETTERS, char_lm

TEXT = st.text(alphabet=LETTERS + " ", min_size=1, max_size=12).filter(str.strip)


def _memory(texts: list[str]) -> Memory:
    memory = Memory()
    memory.extend(texts)
    return memory


def _apart(seed: int, memory: Memory, text: str, params: BeamParams) -> tuple[Suggestion, Suggestion, bool]:
    """(the mixed decoder's suggestion, the model's alone, whether the memory changed a row of the request)."""
    mixed_lm = MemoryLM(char_lm(seed), memory, background=False)
    mixed = Decoder(mixed_lm).complete(text, params)
    alone = Decoder(char_lm(seed)).complete(text, params)
    return mixed, alone, mixed_lm.changed_rows > 0


def _key(s: Suggestion) -> tuple:
    return s.text, round(s.confidence, 9), s.suppressed


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4), TEXT, st.integers(0, 50),
       st.sampled_from([0.2, 0.4, 0.6, 0.8]), st.sampled_from([1, 2]))
def test_the_gate_shows_the_mixed_suggestion_else_the_models_own_as_the_two_decoders_apart_say(
        texts, text, seed, threshold, width):
    params = BeamParams(confidence_threshold=threshold, beam_width=width, max_tokens=4)
    memory = _memory(texts)
    mixed, alone, changed = _apart(seed, memory, text, params)
    got = decoder_with_memory(char_lm(seed), memory, background=False).complete(text, params)
    if (mixed.text and not mixed.suppressed) or not changed:
        want, plain = mixed, False
    elif alone.text and not alone.suppressed:
        want, plain = alone, True
    else:
        plain = alone.confidence > mixed.confidence
        want = alone if plain else mixed
    assert _key(got) == _key(want)
    assert got.plain is plain


def test_a_right_suggestion_the_mixed_rows_would_withhold_is_shown_from_the_model_alone():
    """Some memory of other text spreads the rows enough that the gate withholds what the model alone is sure
    of; the decoder then shows the model's suggestion (without the second opinion it showed nothing)."""
    params = BeamParams(confidence_threshold=0.5, max_tokens=4)
    memory = _memory(["ab ab ac ad ae af ag", "ba ca da ea fa ga ha"])
    found = 0
    for seed in range(60):
        for text in ("ab a", "hg f", "ca d", "ed c"):
            mixed, alone, changed = _apart(seed, memory, text, params)
            if not (changed and mixed.suppressed and alone.text and not alone.suppressed):
                continue
            found += 1
            got = decoder_with_memory(char_lm(seed), memory, background=False).complete(text, params)
            assert (got.text, got.suppressed, got.plain) == (alone.text, False, True)
            assert got.confidence == alone.confidence
    assert found >= 3  # the case is not rare: the test checks it, not a vacuous loop


def test_the_model_is_not_asked_again_when_the_memory_changed_no_row():
    """An empty memory (the default ``learn = "session"`` at start) or one with nothing that matches costs
    nothing: the same model calls as the decoder without a memory, even for a withheld suggestion."""
    params = BeamParams(confidence_threshold=0.99, max_tokens=4)
    for memory in (_memory([]), _memory(["hhhh"])):
        for seed in range(5):
            alone_lm, with_lm = char_lm(seed), char_lm(seed)
            alone = Decoder(alone_lm).complete("abc de", params)
            decoder = decoder_with_memory(with_lm, memory, background=False)
            got = decoder.complete("abc de", params)
            assert alone.suppressed and decoder.lm.changed_rows == 0
            assert _key(got) == _key(alone) and not got.plain
            assert with_lm.calls == alone_lm.calls
