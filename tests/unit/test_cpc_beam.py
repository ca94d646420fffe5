"""Decoder end to end on a scripted LM: consistency with the typed text,
strategies, stopping, UTF-8, confidence, cancellation and bad input."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.beam import Decoder
from daemon.cpc.confidence import word_confidence
from daemon.cpc.covering import cover
from daemon.cpc.lm import Cancelled
from daemon.cpc.stopping import stop_position
from daemon.cpc.suggestion import BeamParams
from daemon.cpc.utf8 import decode_prefix
from daemon.cpc.word import Hypothesis, search_word
from tests.unit.cpc_fakes import ScriptedLM

WORDS = [b" the", b" there", b" then", b" th", b" in", b" inf", b" information", b" form", b"or",
         b"mation", b"at", b"ion", b".", b"!", b"\n", b" ", b"  ", b"\xc3", b"\xa9", b"caf", b" caf",
         b"\xc3\xa9", b" is", b" it", b"It", b"The"]
PIECES = sorted({bytes([b]) for b in range(32, 127)} | {b"\n", b"\xc3", b"\xa9"} | set(WORDS))
PIECES = PIECES + [None, None]  # EOG and an unused token at the end
EOG = len(PIECES) - 2
TOK = {p: i for i, p in enumerate(PIECES) if p}


def make_lm(seed: int = 0, **kw) -> ScriptedLM:
    return ScriptedLM(PIECES, eog=[EOG], seed=seed, **kw)


def reference(lm: ScriptedLM, decoder: Decoder, text: str, params: BeamParams) -> str:
    """Straight-line re-implementation: covering from ``cover``, then greedy
    continuation over plain Python, stop rules and UTF-8 cut at the end."""
    split = decoder.plan(text, params)
    cov = cover(make_lm(lm.seed), decoder.index, split.stable, split.remainder,
                params.beam_width if params.strategy == "cpc" else 1,
                allow_partial=params.strategy != "heal", guide=split.tail)
    if not cov.found:
        return ""
    seq = list(split.stable) + list(cov.tokens)
    spelled = split.stable_bytes(PIECES) + b"".join(PIECES[t] for t in cov.tokens)
    typed = (split.lead + text.encode()) if params.strategy == "cpc" else split.stable_bytes(PIECES) + split.remainder
    assert spelled.startswith(typed)
    out = spelled[len(typed):]
    for _ in range(params.max_tokens):
        if stop_position(out, params.single_line, params.stop_at_sentence_end) is not None:
            break
        if decode_prefix(out)[1]:
            break
        row = lm.row(seq)
        allowed = [t for t, p in enumerate(PIECES) if p or t == EOG]
        tok = max(allowed, key=lambda t: (row[t], -t))
        if tok == EOG:
            break
        seq.append(tok)
        out += PIECES[tok]
    cut = stop_position(out, params.single_line, params.stop_at_sentence_end)
    if cut is not None:
        out = out[:cut]
    return decode_prefix(out)[0]


def word_reference(lm: ScriptedLM, decoder: Decoder, text: str, params: BeamParams) -> str:
    """CPC with k >= 2: the covering, the word search (both checked against
    exhaustive oracles in their own tests), then the word's next token and a
    greedy continuation over plain Python, stop rules and UTF-8 cut at the end."""
    split = decoder.plan(text, params)
    cov = cover(make_lm(lm.seed), decoder.index, split.stable, split.remainder, params.beam_width, guide=split.tail)
    if not cov.found:
        return ""
    starts = [Hypothesis(c.tokens, c.logprob, c.overshoot) for c in (cov, *cov.others)]

    def cut(data: bytes):
        at = stop_position(data, params.single_line, params.stop_at_sentence_end)
        head, broken = decode_prefix(data)
        return (len(head.encode()) if at is None else min(at, len(head.encode()))) if broken else at

    in_word = text[-1].isalnum() or text[-1] == "_" or ord(text[-1]) > 127
    word = search_word(make_lm(lm.seed), PIECES, decoder._word_tables, split.stable, starts, params.beam_width,
                       in_word, params.max_tokens, cut).best
    seq = list(split.stable) + list(word.hyp.tokens)
    out = word.hyp.data
    produced = word.hyp.produced
    if word.next_token is not None and cut(out) is None and produced < params.max_tokens:
        produced += 1
        if word.next_token == EOG:
            produced = params.max_tokens
        else:
            seq.append(word.next_token)
            out += PIECES[word.next_token]
    while produced < params.max_tokens and cut(out) is None:
        row = lm.row(seq)
        tok = max((t for t, p in enumerate(PIECES) if p or t == EOG), key=lambda t: (row[t], -t))
        produced += 1
        if tok == EOG:
            break
        seq.append(tok)
        out += PIECES[tok]
    at = cut(out)
    return decode_prefix(out if at is None else out[:at])[0]


_text = st.text(alphabet="thereinformaction .!\n\u00e9It", min_size=1, max_size=30)


@settings(max_examples=120, deadline=None)
@given(_text, st.integers(0, 1000), st.sampled_from(["cpc", "heal", "naive"]), st.integers(1, 4),
       st.booleans(), st.booleans())
def test_suggestion_matches_the_reference(text, seed, strategy, k, single_line, sentence_end):
    lm = make_lm(seed)
    decoder = Decoder(lm)
    params = BeamParams(strategy=strategy, beam_width=k, max_tokens=5, continue_min_prob=0.0,
                        single_line=single_line, stop_at_sentence_end=sentence_end)
    if not text.strip():
        assert decoder.complete(text, params).text == ""
        return
    got = decoder.complete(text, params)
    if strategy == "cpc" and k >= 2:
        assert got.text == word_reference(lm, decoder, text, params)
    else:
        assert got.text == reference(lm, decoder, text, params)
    assert got.steps == lm.calls
    assert 0.0 <= got.confidence <= 1.0
    if single_line:
        assert "\n" not in got.text


@settings(max_examples=60, deadline=None)
@given(_text, st.integers(0, 1000))
def test_every_batch_is_one_call_with_the_stable_prefix(text, seed):
    lm = make_lm(seed)
    decoder = Decoder(lm)
    params = BeamParams(beam_width=3, max_tokens=4)
    split = decoder.plan(text, params)
    decoder.complete(text, params)
    for batch in lm.batches:
        assert 1 <= len(batch) <= 3 + 1  # a covering step may add the text's own tokenization
        assert all(seq[: len(split.stable)] == split.stable for seq in batch)


def test_cpc_completes_a_word_split_over_two_tokens_where_healing_cannot():
    """Typed " informa": tokens " inf" + "or"... healing re-chooses only the last token."""
    text = "It is informa"
    lm = make_lm(0)
    decoder = Decoder(lm)
    split = decoder.plan(text, BeamParams())
    assert split.remainder == b" informa"
    lm.overrides[split.stable] = {TOK[b" information"]: 0.0, TOK[b" inf"]: -1.0}
    lm.overrides[split.stable + (TOK[b" information"],)] = {TOK[b"."]: 0.0}
    lm.overrides[split.stable + (TOK[b" information"], TOK[b"."])] = {EOG: 0.0}
    got = decoder.complete(text, BeamParams(max_tokens=4))
    assert got.text == "tion."
    # share of " information" among tokens agreeing with " informa" (e^0 vs e^-1)
    share = 1.0 / (1.0 + np.exp(-1.0))
    sig = got.signals
    assert sig.first_logprob == pytest.approx(np.log(share), abs=1e-4)
    assert (sig.word_chars, sig.typed_chars) == (4, 7)
    # the word ends with "." (p=1): its probability given the typed text is at most the share
    assert np.log(share) - 1e-3 <= sig.word_logprob <= 0.0
    assert got.confidence == pytest.approx(word_confidence(sig))
    heal = decoder.complete(text, BeamParams(strategy="heal", max_tokens=4))
    assert not heal.text.startswith("tion")


def test_on_partial_streams_the_covering_then_the_search_then_each_token():
    lm = make_lm(5)
    decoder = Decoder(lm)
    seen = []
    got = decoder.complete("It is the", BeamParams(max_tokens=6, stop_at_sentence_end=False,
                                                   single_line=False), on_partial=seen.append)
    assert len(seen) >= 2
    for part in seen[1:]:  # after the word search, every update extends the last
        assert got.text.startswith(part.text)
    assert seen[-1].text == got.text


def test_the_search_replaces_the_coverings_word_when_another_word_is_more_likely():
    """" th" is covered best by " the" (0.55) but the word "there" (0.45) beats
    "then" (0.33) and "the" (0.22): the covering's word is streamed first, then
    replaced; greedy (k = 1) keeps " the"'s word."""
    text = "It is th"
    lm = make_lm(0)
    decoder = Decoder(lm)
    stable = decoder.plan(text, BeamParams()).stable
    lm.overrides[stable] = {TOK[b" the"]: np.log(0.55), TOK[b" there"]: np.log(0.45)}
    lm.overrides[stable + (TOK[b" the"],)] = {TOK[b"n"]: np.log(0.6), TOK[b" "]: np.log(0.4)}
    lm.overrides[stable + (TOK[b" the"], TOK[b"n"])] = {EOG: 0.0}
    lm.overrides[stable + (TOK[b" the"], TOK[b" "])] = {EOG: 0.0}
    lm.overrides[stable + (TOK[b" there"],)] = {TOK[b"."]: 0.0}
    lm.overrides[stable + (TOK[b" there"], TOK[b"."])] = {EOG: 0.0}
    seen = []
    got = decoder.complete(text, BeamParams(beam_width=2, max_tokens=4, continue_min_prob=0.0), on_partial=seen.append)
    assert seen[0].text == "e"
    assert got.text == "ere."
    assert seen[-1].text == "ere."
    sig = got.signals
    assert sig.word_logprob == pytest.approx(np.log(0.45), abs=1e-3)
    assert sig.margin == pytest.approx(np.log(0.45 / 0.33), abs=1e-3)
    assert sig.share == pytest.approx(0.45, abs=1e-3)
    assert got.words[0] == ("ere", pytest.approx(np.log(0.45), abs=1e-3))
    greedy = decoder.complete(text, BeamParams(beam_width=1, max_tokens=4))
    assert greedy.text == "en"


def test_utf8_is_never_cut_and_invalid_bytes_stop_generation():
    lm = make_lm(0)
    decoder = Decoder(lm)
    stable = decoder.plan("It is caf", BeamParams()).stable
    lm.overrides[stable] = {TOK[b" caf"]: 0.0}
    lm.overrides[stable + (TOK[b" caf"],)] = {TOK[b"\xc3"]: 0.0}
    lm.overrides[stable + (TOK[b" caf"], TOK[b"\xc3"])] = {TOK[b"\xa9"]: 0.0}
    half = decoder.complete("It is caf", BeamParams(max_tokens=1))
    assert half.text == ""  # only b"\xc3" so far: nothing shown
    whole = decoder.complete("It is caf", BeamParams(max_tokens=2))
    assert whole.text == "\u00e9"
    lm.overrides[stable + (TOK[b" caf"],)] = {TOK[b"\xa9"]: 0.0}  # a stray continuation byte
    calls = lm.calls
    broken = decoder.complete("It is caf", BeamParams(max_tokens=6))
    assert broken.text == ""
    assert lm.calls - calls == 2  # covering + one token, then it stopped


def test_stops_at_eog_newline_and_sentence_end():
    lm = make_lm(0)
    decoder = Decoder(lm)
    stable = decoder.plan("It is th", BeamParams()).stable
    base = stable + (TOK[b" the"],)
    lm.overrides[stable] = {TOK[b" the"]: 0.0}
    lm.overrides[base] = {TOK[b" in"]: 0.0}
    lm.overrides[base + (TOK[b" in"],)] = {TOK[b"."]: 0.0}
    lm.overrides[base + (TOK[b" in"], TOK[b"."])] = {TOK[b"\n"]: 0.0}
    lm.overrides[base + (TOK[b" in"], TOK[b"."], TOK[b"\n"])] = {TOK[b"It"]: 0.0}
    lm.overrides[base + (TOK[b" in"], TOK[b"."], TOK[b"\n"], TOK[b"It"])] = {EOG: 0.0}
    assert decoder.complete("It is th", BeamParams(max_tokens=8)).text == "e in."
    multi = BeamParams(max_tokens=8, single_line=False, stop_at_sentence_end=False)
    assert decoder.complete("It is th", multi).text == "e in.\nIt"
    no_sentence = BeamParams(max_tokens=8, stop_at_sentence_end=False)
    assert decoder.complete("It is th", no_sentence).text == "e in."
    assert decoder.complete("It is th", BeamParams(max_tokens=1)).text == "e in"


def test_confidence_threshold_suppresses_but_keeps_text():
    lm = make_lm(3)
    decoder = Decoder(lm)
    shown = decoder.complete("It is the", BeamParams(max_tokens=3))
    hidden = decoder.complete("It is the", BeamParams(max_tokens=3, confidence_threshold=1.0))
    assert shown.text and hidden.text == shown.text
    assert hidden.suppressed and hidden.visible == ""
    assert not shown.suppressed and shown.visible == shown.text


def test_k1_is_greedy_masking_end_to_end():
    for seed in range(20):
        lm = make_lm(seed)
        decoder = Decoder(lm)
        text = "It is the inform"
        params = BeamParams(beam_width=1, max_tokens=3, continue_min_prob=0.0)
        assert decoder.complete(text, params).text == reference(lm, decoder, text, params)


def test_cancel_raises_and_later_requests_still_work():
    lm = make_lm(1)
    decoder = Decoder(lm)
    with pytest.raises(Cancelled):
        decoder.complete("It is the inform", BeamParams(), cancel=lambda: True)
    state = {"n": 0}

    def stale() -> bool:
        state["n"] += 1
        return state["n"] > 3

    with pytest.raises(Cancelled):
        decoder.complete("It is the inform", BeamParams(max_tokens=8), cancel=stale)
    assert decoder.complete("It is the inform", BeamParams()).steps > 0


def test_bad_input_gives_empty_suggestions():
    lm = make_lm(0)
    decoder = Decoder(lm)
    for text in ("", "   ", "\n\t\n"):
        got = decoder.complete(text, BeamParams())
        assert got.text == "" and got.confidence == 0.0
    assert lm.calls == 0
    # a remainder no token can spell (the byte 0x01 is not in the vocabulary)
    odd = ScriptedLM(PIECES, eog=[EOG], tokenizer=lambda s: [])
    got = Decoder(odd).complete("It is \x01", BeamParams())
    assert got.text == "" and not got.suppressed


def test_long_context_is_trimmed_to_context_chars_and_n_ctx():
    lm = make_lm(0, n_ctx=40)
    decoder = Decoder(lm)
    text = "It is the information " * 200 + "It is inf"
    params = BeamParams(max_tokens=4, context_chars=300)
    split = decoder.plan(text, params)
    assert len(split.stable) + len(split.remainder) + params.max_tokens + 1 <= lm.n_ctx
    spelled = split.stable_bytes(PIECES) + split.remainder
    assert text.encode().endswith(spelled)
    decoder.complete(text, params)  # the fake asserts every sequence fits n_ctx
    assert Decoder.context_of("abc def ghi", 6) == " ghi"
    assert Decoder.context_of("abcdefghi", 4) == "fghi"
    assert Decoder.context_of("short", 100) == "short"


def test_prefill_evaluates_the_stable_prefix_once():
    lm = make_lm(0)
    decoder = Decoder(lm)
    params = BeamParams()
    decoder.prefill("It is the inform", params)
    assert lm.batches == [[decoder.plan("It is the inform", params).stable]]
    decoder.prefill("   ", params)
    assert lm.calls == 1


def test_generation_never_picks_excluded_tokens():
    lm = make_lm(0)
    unused = len(PIECES) - 1
    decoder = Decoder(lm)
    stable = decoder.plan("It is th", BeamParams()).stable
    lm.overrides[stable] = {TOK[b" the"]: 0.0}
    lm.overrides[stable + (TOK[b" the"],)] = {unused: 5.0, TOK[b" in"]: 0.0}
    got = decoder.complete("It is th", BeamParams(max_tokens=1, continue_min_prob=0.0))
    assert got.text == "e in"
    assert np.isinf(decoder._gen_mask[unused]) and decoder._gen_mask[EOG] == 0.0


@settings(max_examples=120, deadline=None)
@given(_text, st.integers(0, 1000), st.integers(1, 3), st.sampled_from([0.05, 0.2, 0.3, 0.5, 0.9]))
def test_the_continuation_stops_at_a_word_end_once_the_joint_probability_falls(text, seed, k, floor):
    """With ``continue_min_prob`` the suggestion is the one generated without
    it, cut at a word end (never inside the first word) once the confidence
    times the continuation's probability falls below the floor."""
    if not text.strip():
        return
    full = Decoder(make_lm(seed)).complete(text, BeamParams(beam_width=k, max_tokens=6, continue_min_prob=0.0))
    short = Decoder(make_lm(seed)).complete(text, BeamParams(beam_width=k, max_tokens=6, continue_min_prob=floor))
    assert full.text.startswith(short.text)
    assert short.confidence == pytest.approx(full.confidence)
    first = re.match(r"\s*(?:\w+|[^\w\s]+)", full.text)
    first_word = first.end() if first else 0
    assert len(short.text) >= min(len(full.text), first_word)  # the first word is always whole
    kept = [lp for end, lp in full.tail if end <= len(short.text)]
    if short.text != full.text:
        # What is kept beyond the first word still holds; the first token left out made it fall.
        joint = math.log(max(full.confidence, 1e-300)) + sum(kept)
        assert joint >= math.log(floor) - 1e-9 or len(short.text) == first_word
        # Something made it fall: a left-out continuation token, or the confidence itself.
        assert [lp for end, lp in full.tail if end > len(short.text)] or full.confidence < floor
        rest = full.text[len(short.text):]
        assert not (short.text[-1:].isalnum() and rest[:1].isalnum()), "cut inside a word"
        assert not short.text.endswith(" ")
