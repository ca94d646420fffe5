"""History completion (daemon.memory.history) against brute-force oracles, and its place in front of the
decoder."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.cpc.suggestion import BeamParams, Suggestion
from daemon.memory.history import (
    MAX_OCCURRENCES, HistoryCompleter, HistoryIndex, HistoryParams, trim, with_history,
)
from daemon.memory.store import Memory

PROSE = BeamParams()
CODE = BeamParams(stop_at_sentence_end=False)


def memory_of(*pieces: str) -> Memory:
    memory = Memory()
    for piece in pieces:
        assert memory.add(piece)
    return memory


# ------------------------------------------------------------------ oracles

def brute_longest(typed: str, pieces: list[str], cap: int = 256) -> int:
    best = 0
    for n in range(1, min(len(typed), cap) + 1):
        if any(typed[-n:] in piece for piece in pieces):
            best = n
    return best


def brute_common_prefix(texts: list[str]) -> str:
    if not texts:
        return ""
    return max((texts[0][:n] for n in range(len(texts[0]) + 1) if all(t.startswith(texts[0][:n]) for t in texts)),
               key=len)


def brute_follows(ending: str, pieces: list[str], max_chars: int) -> list[str]:
    """What followed each occurrence of ``ending`` (overlapping ones too), newest first."""
    found = []
    for piece in pieces:
        for m in re.finditer(f"(?={re.escape(ending)})", piece):
            found.append(piece[m.start() + len(ending):m.start() + len(ending) + max_chars + 1])
    return found[::-1][:MAX_OCCURRENCES]


pieces_st = st.lists(st.text(alphabet="ab c.\n", min_size=8, max_size=40).filter(lambda s: len(s.strip()) >= 8),
                     min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(pieces=pieces_st, typed=st.text(alphabet="ab c.\n", max_size=30))
def test_the_longest_ending_found_is_the_brute_force_one(pieces, typed):
    index = HistoryIndex(memory_of(*pieces))
    assert index.longest_ending(typed) == brute_longest(typed, pieces)


@settings(max_examples=300, deadline=None)
@given(pieces=pieces_st, typed=st.text(alphabet="ab c.\n", min_size=1, max_size=30),
       min_context=st.integers(1, 6), code=st.booleans())
def test_a_proposal_is_what_every_occurrence_of_the_longest_ending_shares(pieces, typed, min_context, code):
    params = HistoryParams(min_context=min_context, min_chars=1, max_chars=12)
    beam = CODE if code else PROSE
    got = HistoryIndex(memory_of(*pieces), params).propose(typed, beam)
    n = brute_longest(typed, pieces)
    follows = brute_follows(typed[-n:], pieces, params.max_chars) if n else []
    shared = brute_common_prefix(follows)
    ends_word = all(len(f) == len(shared) or not (f[len(shared)].isalnum() or f[len(shared)] == "_") for f in follows)
    shared = trim(shared, beam, params.max_chars, ends_word) if n >= min_context else ""
    if len(shared.strip()) < params.min_chars:
        assert got is None
    else:
        assert got is not None
        assert (got.text, got.occurrences, got.context) == (shared, len(follows), n)
        # it spells on from what was typed: some piece holds the typed ending followed by it
        assert any(typed[-n:] + got.text in piece for piece in pieces)


# ------------------------------------------------------------------ where a proposal ends

def test_it_ends_where_the_decoder_ends_a_suggestion():
    assert trim("tion of the text. Then more", PROSE, 80) == "tion of the text."
    assert trim("ResultsList(self):\n        return", CODE, 80) == "ResultsList(self):"
    assert trim("alpha beta gamma delta", PROSE, 13) == "alpha beta"  # cut for length: whole words only
    assert trim("alpha beta gamma", PROSE, 10) == "alpha beta"  # cut right before a space
    assert trim("ding, Ada", PROSE, 80) == "ding, Ada"  # the memory's piece ended there
    assert trim("ding, Ada", PROSE, 80, ends_word=False) == "ding,"  # the occurrences part inside "Ada..."
    assert trim("ement", CODE, 80, ends_word=False) == "ement"  # inside the word at the caret: kept
    assert trim("return x ", CODE, 80) == "return x"


def test_a_memory_that_parts_mid_word_offers_only_the_shared_whole_words():
    index = HistoryIndex(memory_of("we parse the grammar quickly now", "we parse the grammar quietly now"),
                         HistoryParams(min_context=8))
    proposal = index.propose("so we parse t", PROSE)
    assert proposal is not None and proposal.text == "he grammar"
    assert proposal.occurrences == 2 and proposal.context == len("we parse t")


def test_occurrences_that_disagree_at_once_offer_nothing():
    index = HistoryIndex(memory_of("the return value is ok", "the return type is ok"), HistoryParams(min_context=8))
    assert index.propose("so the return ", PROSE) is None


def test_a_short_match_offers_nothing():
    index = HistoryIndex(memory_of("ParserElement.enable_packrat()"), HistoryParams(min_context=16))
    assert index.propose("x = ParserEl", CODE) is None
    assert index.propose("foo(); ParserElement.ena", CODE).text == "ble_packrat()"


def test_no_match_runs_across_two_pieces():
    index = HistoryIndex(memory_of("first piece ends here", "second piece starts there"),
                         HistoryParams(min_context=4, min_chars=1))
    assert index.longest_ending("ends heresecond") == len("second")


def test_the_confidence_grows_with_the_occurrences_and_the_context():
    params = HistoryParams(min_context=4, context_weight=32)
    once = HistoryIndex(memory_of("call parse_string(text)"), params).propose("x parse_str", CODE)
    twice = HistoryIndex(memory_of("call parse_string(text)", "then parse_string(text)"), params) \
        .propose("x parse_str", CODE)
    longer = HistoryIndex(memory_of("now we call parse_string(text)"), params).propose("now we call parse_str", CODE)
    assert once.confidence < twice.confidence < 1 and once.confidence < longer.confidence
    c = 1 + len(" parse_str") / 32
    assert once.confidence == pytest.approx(c / (c + 1))


# ------------------------------------------------------------------ in front of the decoder

class Inner:
    """The decoder: answers ``answer`` (suppressed when ``withheld``) and records what it was asked."""

    def __init__(self, answer: str = "", withheld: bool = False) -> None:
        self.answer, self.withheld = answer, withheld
        self.asked: list[str] = []
        self.prefilled: list[str] = []
        self.warming = True

    def complete(self, text, params, cancel=None, on_partial=None):
        self.asked.append(text)
        return Suggestion(text=self.answer, confidence=0.3 if self.withheld else 0.9, suppressed=self.withheld,
                          steps=3, words=(("w", -0.1),), tail=((1, -0.2),))

    def prefill(self, text, params, cancel=None):
        self.prefilled.append(text)

    def warm_step(self, cancel=None):
        return False


TYPED = "        results = ParseRes"
SURE = memory_of("results = ParseResults(toklist, name, asList)", "results = ParseResults(toklist, name, x)")


@pytest.mark.parametrize("inner", [Inner(""), Inner("ults()", withheld=True)], ids=["nothing", "withheld"])
def test_where_the_decoder_shows_nothing_the_memory_s_sure_continuation_is_shown(inner):
    completer = HistoryCompleter(inner, SURE, HistoryParams(min_context=12))
    got = completer.complete(TYPED, CODE)
    assert (got.visible, got.steps, got.words, got.tail) == ("ults(toklist, name,", 3, (), ())
    assert got.confidence >= CODE.confidence_threshold and inner.asked == [TYPED] and completer.answered == 1


def test_what_the_decoder_shows_is_kept_and_the_memory_is_not_asked_for_more():
    completer = HistoryCompleter(Inner("ults()"), SURE, HistoryParams(min_context=12))
    assert completer.complete(TYPED, CODE).visible == "ults()" and completer.answered == 0


def test_an_unsure_or_absent_continuation_leaves_the_decoder_s_answer():
    inner = Inner("", withheld=False)
    completer = HistoryCompleter(inner, SURE, HistoryParams(min_context=12))
    assert completer.complete("something else entirely", CODE).visible == ""
    strict = BeamParams(stop_at_sentence_end=False, confidence_threshold=0.99)  # below the threshold
    assert completer.complete(TYPED, strict).visible == ""
    # naive decoding (a baseline) never asks the memory
    assert completer.complete(TYPED, BeamParams(strategy="naive")).visible == ""
    assert completer.answered == 0 and len(inner.asked) == 3
    completer.prefill("abc", CODE)
    assert inner.prefilled == ["abc"] and completer.warming is True and completer.warm_step() is False


def test_what_the_memory_learns_or_forgets_is_seen_at_the_next_request():
    memory = memory_of("nothing to see in this piece")
    completer = HistoryCompleter(Inner(), memory, HistoryParams(min_context=10))
    assert completer.complete("the sign-off: Kind regar", PROSE).visible == ""
    memory.add("the sign-off: Kind regards, Ada")
    assert completer.complete("the sign-off: Kind regar", PROSE).visible == "ds, Ada"
    memory.clear()
    assert completer.complete("the sign-off: Kind regar", PROSE).visible == ""


def test_without_a_memory_the_decoder_is_used_as_it_is():
    inner = Inner()
    assert with_history(inner, None) is inner
    assert isinstance(with_history(inner, Memory()), HistoryCompleter)


def test_bad_params_are_refused():
    with pytest.raises(ValueError):
        HistoryParams(min_context=0)
    with pytest.raises(ValueError):
        HistoryParams(min_chars=5, max_chars=4)
