"""What the likeliest words agree on (daemon.cpc.agree), against a brute-force oracle, and its place in
the decoder: only where the confidence gate withholds the suggestion, and only with agree_prefix."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.agree import MIN_AGREED_CHARS, agreed_prefix


def oracle(words: list[tuple[str, float]], mass: float) -> str:
    """The shortest run of top words reaching ``mass``, their longest common beginning, character by character."""
    for n in range(1, len(words) + 1):
        if sum(math.exp(lp) for _, lp in words[:n]) >= mass:
            group = [w for w, _ in words[:n]]
            common = ""
            for chars in zip(*group):
                if len(set(chars)) > 1:
                    break
                common += chars[0]
            return common if len(common.strip()) >= MIN_AGREED_CHARS else ""
    return ""


def test_two_likely_words_that_begin_alike_give_their_common_beginning():
    words = [("uration", math.log(0.4)), ("urable", math.log(0.35)), ("use", math.log(0.1))]
    assert agreed_prefix(words, 0.6) == "ura"  # 0.4 + 0.35: the two begin with "ura"
    assert agreed_prefix(words, 0.8) == ""  # all three needed (0.85): "u" is too short to save a key


def test_nothing_when_the_words_never_hold_the_mass_or_disagree_at_once():
    assert agreed_prefix([("ation", math.log(0.3)), ("ed", math.log(0.2))], 0.6) == ""
    assert agreed_prefix([("ation", math.log(0.4)), ("ed", math.log(0.4))], 0.6) == ""
    assert agreed_prefix([], 0.6) == ""


def test_one_word_that_holds_the_mass_alone_is_agreed_on_whole():
    assert agreed_prefix([(" the", math.log(0.7)), (" a", math.log(0.1))], 0.6) == " the"
    assert agreed_prefix([(" a", math.log(0.7))], 0.6) == ""  # one character besides the blank


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="abc ", max_size=5), st.floats(-6.0, 0.0)), max_size=5),
       st.floats(0.0, 1.0))
def test_agrees_with_the_oracle(words, mass):
    assert agreed_prefix(words, mass) == oracle(words, mass)


def test_the_decoder_offers_the_agreed_part_only_where_the_gate_withholds(monkeypatch):
    """Through the decoder on the scripted model: with agree_prefix a withheld suggestion becomes what its
    words agree on (or stays withheld); without it, or where the gate lets it through, nothing changes."""
    import dataclasses

    from daemon.cpc import beam
    from daemon.cpc.beam import Decoder
    from daemon.cpc.suggestion import BeamParams
    from tests.unit.test_cpc_beam import make_lm

    decoder = Decoder(make_lm(seed=3))
    seen = []
    for text in ["It is the inf", "The caf", "It is th", "the form"]:
        plain = decoder.complete(text, BeamParams(confidence_threshold=1.0))
        monkeypatch.setattr(beam, "agreed_prefix", lambda words, mass: "ok")
        agreed = decoder.complete(text, BeamParams(confidence_threshold=1.0, agree_prefix=True))
        monkeypatch.undo()
        if plain.text:
            assert plain.suppressed and agreed.text == "ok" and not agreed.suppressed
            assert dataclasses.replace(agreed, text=plain.text, suppressed=True, timings_ms={}) == \
                dataclasses.replace(plain, timings_ms={})
            seen.append(text)
        shown = decoder.complete(text, BeamParams(confidence_threshold=0.0, agree_prefix=True))
        assert shown == dataclasses.replace(decoder.complete(text, BeamParams(confidence_threshold=0.0)),
                                            timings_ms=shown.timings_ms)
    assert seen, "the scripted model suggested nothing to withhold"
