"""FieldAnchor: a suggestion belongs to one field, one caret offset and one
text before it; checked against a brute-force oracle that compares the texts
themselves."""

from __future__ import annotations

from hypothesis import given, strategies as st

from daemon.controller.anchor import ANCHOR_CHARS, FieldAnchor, field_agrees

texts = st.text(alphabet="ab \n\u00e9\U0001f600", max_size=40)


def oracle_holds(field, caret, known, now_field, now_caret, now_text) -> bool:
    if now_field != field:
        return False
    if now_caret is not None and caret is not None and now_caret != caret:
        return False
    if now_text is None:
        return True
    tail = known[-ANCHOR_CHARS:]
    return now_text.endswith(tail) and (len(tail) == 0 or now_text[-len(tail):] == tail)


@given(texts, texts, st.sampled_from(["f1", "f2"]), st.sampled_from(["f1", "f2"]),
       st.integers(0, 3), st.integers(0, 3))
def test_holds_matches_the_oracle(known, now, field, now_field, caret, now_caret) -> None:
    anchor = FieldAnchor.of(field, caret, known)
    assert anchor.holds(now_field, now_caret, now) == oracle_holds(field, caret, known, now_field, now_caret, now)


@given(texts, texts)
def test_a_field_that_holds_more_text_before_the_buffer_still_holds(before, buffer) -> None:
    anchor = FieldAnchor.of("f", 5, buffer)
    assert anchor.holds("f", 5, before + buffer)
    assert field_agrees(before + buffer, buffer)


def test_any_change_breaks_the_anchor() -> None:
    anchor = FieldAnchor.of("tab1", 12, "Hello world ")
    assert anchor.holds("tab1", 12, "Hello world ")
    assert anchor.holds("tab1", None, None)  # nothing readable cannot contradict it
    assert not anchor.holds("tab2", 12, "Hello world ")  # another field (a new browser tab)
    assert not anchor.holds("tab1", 13, "Hello world ")  # the caret moved
    assert not anchor.holds("tab1", 12, "Hello world!")  # the text changed
    assert not anchor.holds("tab1", 0, "")  # select-all + BackSpace


def test_advanced_follows_typing_through() -> None:
    anchor = FieldAnchor.of("f", 3, "abc").advanced("de", "abcde")
    assert anchor == FieldAnchor.of("f", 5, "abcde")
    assert anchor.holds("f", 5, "xxabcde")


def test_only_the_last_chars_count() -> None:
    long = "x" * (ANCHOR_CHARS + 50)
    anchor = FieldAnchor.of("f", None, "y" + long)
    assert anchor.holds("f", None, "z" + long)
    assert anchor.length == ANCHOR_CHARS
