"""Scores of ``ghosttype eval``: hand-computed cases and properties against
brute-force restatements of the definitions in daemon.evaluation.metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.evaluation.metrics import (
    CaseScore,
    gets_next_word,
    matched_chars,
    next_word_target,
    percentile,
    score_case,
    starts_with_whitespace,
    summarize,
    threshold_sweep,
)
from daemon.evaluation.report import format_table, quality_table, sweep_table

ALPHABET = st.sampled_from("ab_ .\n-")
texts = st.text(alphabet=ALPHABET, max_size=12)


def test_matched_stops_at_first_mismatch():
    assert matched_chars("rmation about", "rmation on") == 8
    assert matched_chars("abcXef", "abcdef") == 3
    assert matched_chars("", "abc") == 0
    assert matched_chars("abc", "") == 0
    assert matched_chars(" world", "world") == 0


def test_next_word_target():
    assert next_word_target("rmation, please") == "rmation"
    assert next_word_target(" the cat") == " the"
    assert next_word_target(".\n    return x") == ".\n    return"
    assert next_word_target("...") == "..."
    assert next_word_target("") == ""


@pytest.mark.parametrize(
    "suggestion, reference, expected",
    [
        ("rmation", "rmation about it", True),  # exactly the rest of the word
        ("rmation about", "rmation on it", True),  # word right, later text wrong
        ("rmation.", "rmation about", True),  # a non-word char after the word
        ("rmational", "rmation about", False),  # overshoots the word
        ("rmatio", "rmation about", False),  # stops short
        (" rmation", "rmation about", False),  # whitespace inside the word
        ("", "rmation", False),  # nothing suggested
        ("ing_x", "ing_x = 1", True),  # underscores are word characters
        ("ing", "ing_x = 1", False),
        (" the", " the cat", True),  # at a word boundary: the next word
        ("", "", True),
    ],
)
def test_gets_next_word_hand_cases(suggestion, reference, expected):
    assert gets_next_word(suggestion, reference) is expected


def test_score_case_mid_word_whitespace():
    s = score_case(" is", "rmation", mid_word=True)
    assert s == CaseScore(matched=0, next_word=False, mid_word=True, whitespace_in_word=True)
    assert s.word_completion is False
    assert score_case(" is", " is", mid_word=False).whitespace_in_word is False
    assert score_case(" is", " is", mid_word=False).word_completion is None
    assert starts_with_whitespace("\tx") and not starts_with_whitespace("x ")


def test_summarize_hand_computed():
    scores = [
        score_case("rmation", "rmation x", True),  # matched 7, word ok
        score_case("rm", "rmation x", True),  # matched 2, word not finished
        score_case(" x", "y", False),  # matched 0, boundary case, wrong
        score_case("ab", "ab c", False),  # matched 2, right, suppressed
    ]
    summary = summarize(scores, [False, True, True, True], [10.0, 20.0, 30.0, 40.0])
    assert summary.n == 4
    assert summary.mean_matched == pytest.approx(11 / 4)
    assert summary.median_matched == 2.0
    assert summary.n_mid == 2
    assert summary.word_completion == 0.5
    assert summary.whitespace_in_word == 0
    assert summary.suppressed_right == 1  # "ab"
    assert summary.suppressed_wrong == 2  # "rm", " x"
    assert summary.mean_ms == 25.0


def test_summarize_empty_and_mismatched():
    empty = summarize([], [], [])
    assert empty.n == 0 and math.isnan(empty.mean_matched) and empty.word_completion is None
    with pytest.raises(ValueError):
        summarize([score_case("a", "a", True)], [], [1.0])


@settings(max_examples=300, deadline=None)
@given(s=texts, r=texts)
def test_matched_equals_brute_force(s, r):
    brute = max(k for k in range(min(len(s), len(r)) + 1) if s[:k] == r[:k])
    assert matched_chars(s, r) == brute


@settings(max_examples=300, deadline=None)
@given(s=texts, r=texts)
def test_next_word_brute_force(s, r):
    # Restated: some cut point c of s is a word boundary (end of s or a
    # non-word char at c), s[:c] equals the reference up to the end of its next
    # word, and the reference's next word really ends there.
    def word(ch: str) -> bool:
        return ch.isalnum() or ch == "_"

    i = 0
    while i < len(r) and not word(r[i]):
        i += 1
    while i < len(r) and word(r[i]):
        i += 1
    target = r[:i]
    expected = (s == "" and r == "") if target == "" else (
        s[: len(target)] == target and (len(s) == len(target) or not word(s[len(target)]))
    )
    assert gets_next_word(s, r) is expected
    # a right next word means at least the whole target matched
    if gets_next_word(s, r) and target:
        assert matched_chars(s, r) >= len(target)


@settings(max_examples=100, deadline=None)
@given(xs=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=40), q=st.floats(0, 100))
def test_percentile_bounds_and_numpy(xs, q):
    p = percentile(xs, q)
    assert min(xs) <= p <= max(xs) or math.isclose(p, min(xs)) or math.isclose(p, max(xs))
    assert p == pytest.approx(float(np.percentile(xs, q)))


def test_threshold_sweep_hand_computed():
    cases = [("ation", 0.9, True), ("al", 0.25, True), (" the", 0.1, False), ("", 0.0, False), ("ing", 0.35, False)]
    rows = threshold_sweep(cases, [0.0, 0.3, 0.5])
    assert [(r.shown, r.shown_right, r.withheld_right, r.withheld_wrong) for r in rows] == [
        (4, 2, 0, 0),
        (2, 1, 1, 1),
        (1, 1, 1, 2),
    ]
    assert sweep_table({"cpc2": rows}).splitlines()[3].split() == ["cpc2", "0.3", "2", "50.0%", "1", "1"]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["", "a", "bc"]), st.floats(0, 1), st.booleans()), max_size=20),
    st.lists(st.floats(0, 1), max_size=5),
)
def test_threshold_sweep_partitions_the_shown_suggestions(cases, thresholds):
    n = sum(1 for text, _, _ in cases if text)
    for t, row in zip(thresholds, threshold_sweep(cases, thresholds)):
        assert row.shown + row.withheld_right + row.withheld_wrong == n
        assert row.withheld_right + row.withheld_wrong == sum(1 for x, c, _ in cases if x and c < t)


def test_percentile_hand_values():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert math.isnan(percentile([], 50))


def test_format_table_aligns_and_checks_width():
    out = format_table(["a", "bb"], [["x", "1"], ["yyy", "22"]]).splitlines()
    assert out[0] == "a    bb"
    assert out[1] == "---  --"
    assert out[2] == "x     1"
    assert out[3] == "yyy  22"
    with pytest.raises(ValueError):
        format_table(["a"], [["x", "y"]])


def test_quality_table_rows():
    s = summarize([score_case("ab", "ab c", True)], [False], [12.34])
    table = quality_table({"cpc2": s})
    row = table.splitlines()[2].split()
    assert row[0] == "cpc2" and row[1] == "1" and row[2] == "2.00" and "100.0%" in table
    assert row[-1] == "12.3"


# --- strategy names and the quality loop (with a scripted decoder) -----------

from daemon.cpc.suggestion import BeamParams, Suggestion  # noqa: E402
from daemon.evaluation.quality import (  # noqa: E402
    REFERENCE_CHARS,
    StrategySpec,
    parse_strategies,
    parse_strategy,
    run_quality,
    summary_json,
)


def test_parse_strategies():
    specs = parse_strategies("naive, heal,cpc1,cpc2,cpc4")
    assert [s.name for s in specs] == ["naive", "heal", "cpc1", "cpc2", "cpc4"]
    assert specs[4] == StrategySpec("cpc4", "cpc", 4)
    p = specs[3].params(BeamParams(max_tokens=5))
    assert (p.strategy, p.beam_width, p.max_tokens) == ("cpc", 2, 5)
    assert parse_strategy("cpc8").beam_width == 8


@pytest.mark.parametrize("bad", ["", "cpc", "cpc0", "cpc9", "beam2", "naive,naive", "cpc-1", "Naive"])
def test_parse_strategies_rejects(bad):
    with pytest.raises(ValueError, match="strateg"):
        parse_strategies(bad)


class ScriptedDecoder:
    """Answers with the true continuation cut after ``good`` characters per
    strategy, and records the calls it got."""

    def __init__(self, text: str, good: dict[str, int]) -> None:
        self.text, self.good, self.calls = text, good, []

    def prefill(self, text, params, cancel=None):
        self.calls.append(("prefill", len(text)))

    def complete(self, text, params, cancel=None, on_partial=None):
        self.calls.append(("complete", params.strategy, params.beam_width, len(text)))
        key = params.strategy if params.strategy != "cpc" else f"cpc{params.beam_width}"
        at = self.text.find(text)  # the test text's early offsets are found first
        rest = self.text[at + len(text) :]
        n = self.good[key]
        return Suggestion(text=rest[:n] + "#", confidence=0.25 if n else 0.9,
                          suppressed=params.confidence_threshold > (0.25 if n else 0.9))


def test_run_quality_prefills_once_per_offset_and_scores():
    text = "alpha beta gamma delta " * 8
    dec = ScriptedDecoder(text, {"naive": 0, "cpc2": 3})
    specs = parse_strategies("naive,cpc2")
    at, bt = 2 + 23 * 3, 8 + 23 * 3  # past the smallest context window: "al|pha", "beta g|amma"'s "ta "
    run = run_quality(dec, text, [at, bt], specs, BeamParams(context_chars=50, confidence_threshold=0.5))
    kinds = [c[0] for c in dec.calls]
    assert kinds == ["prefill", "complete", "complete"] * 2
    assert all(c[-1] <= 50 for c in dec.calls)  # context limited to context_chars
    by = {(c.offset, c.strategy): c for c in run.cases}
    assert by[(at, "cpc2")].matched == 3 and by[(at, "cpc2")].suggestion == "pha#"
    assert by[(bt, "naive")].matched == 0 and by[(bt, "naive")].whitespace_in_word is False
    assert by[(at, "cpc2")].reference == text[at : at + REFERENCE_CHARS]
    summaries = run.summaries()
    assert summaries["cpc2"].mean_matched == 3.0
    assert summaries["cpc2"].word_completion == 1.0  # "pha#" and "ta #" end their words
    assert summaries["cpc2"].suppressed_right == 2 and summaries["cpc2"].suppressed_wrong == 0
    assert summaries["naive"].suppressed_wrong == 0
    js = summary_json(summaries)
    assert set(js["cpc2"]) >= {"mean_matched", "median_matched", "word_completion", "n"}


def test_run_quality_rejects_offsets_outside_the_text():
    with pytest.raises(ValueError):
        run_quality(ScriptedDecoder("abc", {"naive": 0}), "abc", [3], parse_strategies("naive"), BeamParams())


# --- replay bookkeeping -------------------------------------------------------

from daemon.cpc.lm import Cancelled, LMStats  # noqa: E402
from daemon.evaluation.replay import (  # noqa: E402
    CountingLM,
    KeyRecord,
    DecodedSet,
    choose_start,
    is_mid_word_key,
    key_record,
    summarize_replay,
)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.integers(0, 3), max_size=6), st.integers(-1, 6), st.integers(0, 6)),
        max_size=8,
    )
)
def test_decoded_set_counts_positions_decoded_twice(calls):
    """Oracle: a set of token histories (each position is identified by the
    tokens up to and including it)."""
    decoded: set[tuple[int, ...]] = set()
    ds = DecodedSet()
    for seq, start, prompt_len in calls:
        want_again = [p for p in range(max(start, 0), len(seq)) if tuple(seq[: p + 1]) in decoded]
        got = ds.record(seq, start, prompt_len)
        assert got == (len(want_again), sum(p < prompt_len for p in want_again))
        decoded |= {tuple(seq[: p + 1]) for p in range(len(seq))}


class FakeLM:
    """Decodes every position a request needs beyond what it still caches (one
    slot, longest common prefix kept), like a one-sequence backend."""

    def __init__(self) -> None:
        self.stats = LMStats()
        self.cached: tuple[int, ...] = ()
        self.cancel_next = False

    def logprobs(self, seqs, cancel=None):
        if self.cancel_next:
            self.cancel_next = False
            raise Cancelled()
        self.decoded_from = []
        for s in seqs:
            s = tuple(s)
            lcp = 0
            while lcp < min(len(s), len(self.cached)) and s[lcp] == self.cached[lcp]:
                lcp += 1
            if lcp < len(s):
                self.decoded_from.append((s, lcp))
            self.stats.tokens_decoded += len(s) - lcp
            self.stats.decode_calls += 1
            self.cached = s
        return np.zeros((len(seqs), 4), dtype=np.float32)

    def clear_cache(self):
        self.cached = ()


def test_counting_lm_counts_only_tokens_decoded_twice():
    inner = FakeLM()
    lm = CountingLM(inner)
    lm.prompt_len = 2
    lm.logprobs([[1, 2, 3]])  # all new
    lm.logprobs([[1, 2, 3, 4]])  # one new token, reuses the cache
    assert (lm.reeval_tokens, lm.prompt_reeval_tokens) == (0, 0)
    lm.logprobs([[1, 2, 9]])  # new branch: 1 decoded, 1 new
    assert (lm.reeval_tokens, lm.prompt_reeval_tokens) == (0, 0)
    lm.logprobs([[1, 2, 3, 4, 5]])  # back to the old branch: 3, 4 decoded again (beyond the prompt)
    assert (lm.reeval_tokens, lm.prompt_reeval_tokens) == (2, 0)
    lm.logprobs([[7]])
    lm.logprobs([[1, 2, 3]])  # the slot was lost: the whole prompt and one beam token again
    assert (lm.reeval_tokens, lm.prompt_reeval_tokens) == (5, 2)
    inner.cancel_next = True
    with pytest.raises(Cancelled):
        lm.logprobs([[7]])
    assert lm.cancelled == 1
    lm.clear_cache()  # a new run: the backend is cleared and nothing counts as seen
    assert inner.cached == ()
    lm.logprobs([[1, 2, 3]])
    assert (lm.reeval_tokens, lm.prompt_reeval_tokens) == (5, 2)


def test_key_record_typed_through_and_model_keys():
    work = LMStats(decode_calls=2, tokens_decoded=5)
    # typed through: a show before on_key returned, then a final update later
    r = key_record(10.0, 10.001, [(10.0005, "show", "ation"), (10.050, "show", "ation about")], True, work, 0)
    assert r.typed_through and r.first_ms == pytest.approx(0.5) and r.final_ms == pytest.approx(50.0)
    # model key: hide inside on_key, then a partial and a final show
    r = key_record(1.0, 1.001, [(1.0005, "hide", ""), (1.020, "show", "ab"), (1.040, "show", "abc")], False, work, 3)
    assert not r.typed_through and r.first_ms == pytest.approx(20.0) and r.final_ms == pytest.approx(40.0)
    assert (r.model_calls, r.tokens_decoded, r.reeval_tokens) == (2, 5, 3)
    # nothing shown
    r = key_record(1.0, 1.001, [(1.0005, "hide", "")], False, LMStats(), 0)
    assert r.first_ms is None and not r.typed_through and r.final_ms == pytest.approx(0.5)
    assert key_record(1.0, 1.0, [], False, LMStats(), 0).final_ms == 0.0


def test_summarize_replay_hand_computed():
    recs = [
        KeyRecord(True, True, 0.1, 30.0, 1, 2, 0, 0),
        KeyRecord(True, False, 20.0, 40.0, 2, 6, 3, 1),
        KeyRecord(False, False, 40.0, 60.0, 3, 10, 3, 2),
        KeyRecord(False, False, None, 10.0, 2, 2, 0, 0),
    ]
    s = summarize_replay(recs, cancelled_calls=1)
    assert (s.keys, s.shown, s.typed_through, s.model_keys, s.midword_keys) == (4, 3, 1, 3, 2)
    assert s.p50_all_ms == 20.0 and s.p50_ms == 30.0 and s.p95_ms == pytest.approx(39.0)
    assert s.p50_final_ms == 40.0 and s.p50_typed_through_ms == 0.1
    assert s.calls_per_key == 2.0 and s.tokens_per_key == 5.0
    assert s.prompt_tokens_reeval_midword == 0.5 and s.reeval_per_key == 1.5
    assert s.cancelled_calls == 1


def test_choose_start_and_mid_word_keys():
    text = "one two three four five six seven eight nine ten " * 5
    start = choose_start(text, 40, 100, seed=0)
    assert 100 <= start <= len(text) - 40 and text[start - 1] == " " and text[start] != " "
    assert start == choose_start(text, 40, 100, seed=0)
    assert choose_start("short", 10, 100, 0) == 0
    assert [is_mid_word_key("ab c", i) for i in range(4)] == [False, True, False, False]


def test_stale_shows_counts_ghosts_that_disagree_with_keys_not_yet_seen():
    from daemon.evaluation.replay import stale_shows

    # key "a" pressed at 1.0, seen at 1.0; key "b" pressed at 2.0, seen late at 2.5
    presses = [(1.0, 1.0, "a"), (2.0, 2.5, "b")]
    events = [
        (1.5, "show", "bc"),  # before "b" was pressed: fine
        (2.1, "show", "xyz"),  # "b" pressed, not seen, ghost disagrees: stale
        (2.2, "show", "bcd"),  # agrees with the pending "b" (typing through): fine
        (2.3, "hide", ""),
        (2.6, "show", "zz"),  # after "b" was seen: fine
    ]
    assert stale_shows(events, presses) == 1
    assert stale_shows(events, [(1.0, 1.0, "a"), (2.0, 2.0, "b")]) == 0


def test_busy_load_runs_and_stops_its_spinners():
    from daemon.evaluation.load import BusyLoad

    with BusyLoad(2, settle_s=0.0) as load:
        assert load.running() == 2
        procs = list(load._procs)
    assert all(p.poll() is not None for p in procs)
    with BusyLoad(0) as none:
        assert none.running() == 0
