"""The simulated user's policy (``ghosttype eval --simulate-user``), counted
exactly on scripted suggesters through the real Controller and worker."""

from __future__ import annotations

import re

import pytest

from daemon.config import Config
from daemon.cpc.suggestion import BeamParams, Suggestion
from daemon.evaluation.simulate import FieldWordCompleter, as_typed, kind_of, simulate_user, user_table

_PARTIAL = re.compile(r"\w+\Z")


class Scripted:
    """Suggests, after at least one typed letter of a word of ``reference``,
    the rest of that word followed by ``tail``; nothing elsewhere."""

    def __init__(self, reference: str, tail: str = "") -> None:
        self.reference = reference
        self.tail = tail
        self.requests: list[str] = []

    def complete(self, text, params, cancel=None, on_partial=None):
        self.requests.append(text)
        assert self.reference.startswith(text), "the field must only ever hold the reference's beginning"
        if not _PARTIAL.search(text):
            return Suggestion("", 0.0)
        rest = re.match(r"\w*", self.reference[len(text):]).group(0)
        return Suggestion(rest + self.tail if rest else "", 1.0)

    def prefill(self, text, params, cancel=None):
        pass


CONFIG = Config(debounce_ms=0)


def test_a_right_suggestion_is_accepted_whole_with_one_keystroke():
    text = "the cat sat on a mat"
    run = simulate_user(Scripted(text), CONFIG, text, key_interval_ms=0, name="oracle")
    # Each word of two or more letters: its first letter, then Tab; "a": one key; 5 spaces.
    assert (run.keystrokes, run.accepts, run.word_accepts, run.wrong_ghosts) == (5 * 2 + 1 + 5, 5, 0, 0)
    assert run.chars == len(text) and run.accepted_chars == 2 + 2 + 2 + 1 + 2
    assert run.saved == pytest.approx(1 - 16 / 20)
    assert run.chars_per_accept == pytest.approx(9 / 5)


def test_a_suggestion_right_only_in_its_first_word_is_taken_word_by_word_and_its_tail_counts_wrong():
    text = "the cat sat"
    run = simulate_user(Scripted(text, tail=" zzz"), CONFIG, text, key_interval_ms=0)
    # t, Ctrl+Right ("he"), space (types through the ghost's own space), c (the ghost "zzz" is wrong),
    # Ctrl+Right ("at"), space, s (wrong again), Ctrl+Right ("at").
    assert (run.keystrokes, run.accepts, run.word_accepts, run.wrong_ghosts) == (8, 0, 3, 2)
    assert run.wrong_per_100 == pytest.approx(25.0)


def test_a_field_that_already_holds_text_is_continued_not_retyped():
    text = "one two three four"
    suggester = Scripted(text)
    run = simulate_user(suggester, CONFIG, text, start=len("one two "), key_interval_ms=0)
    assert run.chars == len("three four")
    assert run.keystrokes == 2 + 1 + 2
    assert all(r.startswith("one two ") for r in suggester.requests)


def test_a_low_confidence_suggestion_stays_hidden_and_saves_nothing():
    class Unsure(Scripted):
        def complete(self, text, params, cancel=None, on_partial=None):
            s = super().complete(text, params)
            return Suggestion(s.text, 0.1, suppressed=bool(s.text) and 0.1 < params.confidence_threshold)

    text = "the cat"
    run = simulate_user(Unsure(text), CONFIG, text, key_interval_ms=0)
    assert run.keystrokes == len(text) and run.accepts == run.word_accepts == 0


def test_the_field_word_completer_suggests_the_most_frequent_earlier_word():
    c = FieldWordCompleter()
    params = BeamParams()
    assert c.complete("a thing, a theory, a thing, th", params).text == "ing"
    assert c.complete("a theory then a thing; th", params).text == "ing"  # equally frequent: the most recent
    assert c.complete("the cat ", params).text == ""  # no partial word
    assert c.complete("cat c", params).text == "at"
    assert c.complete("cat cat", params).text == ""  # nothing longer than what was typed


def test_as_typed_and_kind():
    assert as_typed("Para one\nline two\n\n  next", "prose") == "Para one line two next"
    assert as_typed("def f():\n\treturn 1\r\n", "code") == "def f():\n    return 1\n"
    assert kind_of("x.py") == "code" and kind_of("README.md") == "prose"


def test_the_table_names_every_figure():
    run = simulate_user(Scripted("ab cd"), CONFIG, "ab cd", key_interval_ms=0, name="cpc2")
    table = user_table([run])
    assert "cpc2" in table and "saved" in table and "wrong ghosts /100 keys" in table


# --------------------------------------------------------------------------- the offline replay


def records_of(suggester, text: str) -> dict[int, dict]:
    return {pos: {"text": suggester.complete(text[:pos], BeamParams()).text, "confidence": 1.0, "tail": [],
                  "features": None} for pos in range(len(text))}


@pytest.mark.parametrize("tail", ["", " zzz", " the"])
def test_the_offline_replay_takes_the_path_the_patient_user_takes_through_the_daemon(tail):
    from tests.research.user_policy import Policy, replay

    text = "the cat sat on the mat and the dog sat on the log"
    live = simulate_user(Scripted(text, tail=tail), CONFIG, text, key_interval_ms=0)
    offline = replay(text, 0, records_of(Scripted(text, tail=tail), text), Policy(0.0, 0.0))
    assert (offline.keystrokes, offline.accepts, offline.word_accepts, offline.wrong_ghosts, offline.accepted_chars) \
        == (live.keystrokes, live.accepts, live.word_accepts, live.wrong_ghosts, live.accepted_chars)


def test_the_policy_gates_and_cuts_the_continuation_as_the_decoder_does():
    import math

    from tests.research.user_policy import Policy, shown_text

    record = {"text": "tor that allows users", "confidence": 0.8, "features": None,
              "tail": [[8, math.log(0.9)], [15, math.log(0.5)], [21, math.log(0.9)]]}
    assert shown_text(record, "text edi", Policy(0.85, 0.0)) == ""  # gated
    assert shown_text(record, "text edi", Policy(0.6, 0.0)) == "tor that allows users"
    assert shown_text(record, "text edi", Policy(0.6, 0.5)) == "tor that"  # 0.8 * 0.9 >= 0.5 > 0.8 * 0.9 * 0.5
    assert shown_text(record, "text edi", Policy(0.6, 0.75)) == "tor"  # the first word stays whole
    assert shown_text(record, "text edi", Policy(0.6, 0.3)) == "tor that allows users"
