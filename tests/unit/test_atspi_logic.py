"""The pure parts of the AT-SPI adapter: state bits, password verdict, caret geometry."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from daemon.frontends.overlay.platform.atspi import constants as C
from daemon.frontends.overlay.platform.atspi.reader import (
    StallBackoff,
    at_line_end,
    caret_from_extents,
    font_from_attributes,
    normalise_text,
    password_verdict,
    single_line,
)
from daemon.frontends.overlay.platform.caret_geometry import centre_in_single_line
from daemon.controller.ports import Rect

words = st.lists(st.integers(0, 2**32 - 1), min_size=0, max_size=3)


@given(words, st.integers(0, 95))
def test_has_state_matches_the_64_bit_set(ws: list[int], state: int) -> None:
    as_int = sum(w << (32 * i) for i, w in enumerate(ws))
    assert C.has_state(ws, state) == bool(as_int >> state & 1)


def test_has_state_on_a_real_qt_reply() -> None:
    # A focused, editable, single-line QLineEdit as Qt 6 reports it.
    ws = [0x43001980, 0]
    assert C.has_state(ws, C.STATE_FOCUSED)
    assert C.has_state(ws, C.STATE_EDITABLE)
    assert C.has_state(ws, C.STATE_SHOWING)
    assert not C.has_state(ws, C.STATE_ACTIVE)


def test_password_role_and_attributes() -> None:
    assert password_verdict(C.ROLE_PASSWORD_TEXT, {}) is True
    assert password_verdict(C.ROLE_ENTRY, {}) is False
    assert password_verdict(C.ROLE_ENTRY, {"text-input-type": "Password"}) is True
    assert password_verdict(C.ROLE_ENTRY, {"input-type": "password "}) is True
    assert password_verdict(C.ROLE_ENTRY, {"text-input-type": "email"}) is False
    assert password_verdict(C.ROLE_TERMINAL, {}) is None
    assert password_verdict(C.ROLE_TERMINAL, {"input-type": "password"}) is True


@given(st.integers(C.ROLE_PASSWORD_TEXT + 1, 200), st.dictionaries(st.text(max_size=8), st.text(max_size=8)))
def test_password_verdict_oracle(role: int, attributes: dict[str, str]) -> None:
    marked = any((k.strip().lower(), v.strip().lower()) in C.PASSWORD_ATTRIBUTES
                 for k, v in attributes.items())
    expected = True if marked else (None if role == C.ROLE_TERMINAL else False)
    assert password_verdict(role, attributes) is expected


def test_caret_after_a_character() -> None:
    assert caret_from_extents((10, 20, 7, 14), None, "a") == Rect(17, 20, 1, 14)


def test_caret_at_start_uses_the_next_character() -> None:
    assert caret_from_extents(None, (10, 20, 7, 14), None) == Rect(10, 20, 1, 14)


def test_caret_after_newline_prefers_the_next_character() -> None:
    assert caret_from_extents((90, 20, 0, 14), (10, 34, 7, 14), "\n") == Rect(10, 34, 1, 14)


def test_caret_after_final_newline_goes_one_line_down_at_line_start() -> None:
    # Qt answers (0, 0, 0, 0) for the offset after the last character.
    got = caret_from_extents((90, 20, 0, 14), (0, 0, 0, 0), "\n", line_start=(10, 20, 7, 14))
    assert got == Rect(10, 34, 1, 14)


def test_no_geometry_means_no_caret() -> None:
    assert caret_from_extents(None, None, None) is None
    assert caret_from_extents((0, 0, 0, 0), (0, 0, 0, 0), "a") is None
    assert caret_from_extents((5, 5, 3, -1), None, "a") is None


boxes = st.one_of(st.none(), st.tuples(st.integers(-50, 2000), st.integers(-50, 2000),
                                       st.integers(-5, 40), st.integers(-5, 40)))


@given(boxes, boxes, st.sampled_from([None, "a", "\n", " "]), boxes)
def test_caret_comes_from_a_usable_box(before, at, prev, line_start) -> None:
    """Whatever the toolkit answers, the caret is None or derived from a box
    with a positive height, and has that height."""
    got = caret_from_extents(before, at, prev, line_start)
    usable = [b for b in (before, at) if b is not None and b[3] > 0 and b[2] >= 0]
    if got is None:
        assert not usable
    else:
        assert got.width == 1
        assert got.height in {b[3] for b in usable}


def test_single_line_caret_is_centred_in_the_field() -> None:
    # Qt's QLineEdit (neither SINGLE_LINE nor MULTI_LINE): character box at the
    # top of the 22 px field, the glyphs lower; a 22 px field shows one line.
    caret = Rect(303, 11, 1, 14)
    assert centre_in_single_line(caret, (74, 11, 435, 22)) == Rect(303, 15, 1, 14)
    # Marked single-line: centred even in a tall box; a taller caret is clipped.
    assert centre_in_single_line(caret, (74, 0, 435, 40), True) == Rect(303, 13, 1, 14)
    assert centre_in_single_line(Rect(100, 0, 1, 40), (74, 11, 435, 22), True) == Rect(100, 11, 1, 22)


def test_multi_line_and_unknown_fields_keep_the_caret() -> None:
    caret = Rect(303, 11, 1, 14)
    assert centre_in_single_line(caret, (74, 11, 435, 22), False) == caret  # MULTI_LINE
    assert centre_in_single_line(caret, (74, 11, 435, 200)) == caret  # a tall unmarked editor
    assert centre_in_single_line(caret, None) == caret
    assert centre_in_single_line(caret, (0, 0, 0, 0)) == caret
    assert centre_in_single_line(caret, (400, 11, 100, 22)) == caret  # caret left of the field


def test_single_line_from_state_words() -> None:
    assert single_line([1 << 26, 0]) is True  # SINGLE_LINE (GTK entries)
    assert single_line([1 << 17, 0]) is False  # MULTI_LINE
    assert single_line([1124080000, 0]) is None  # Qt's QLineEdit: neither


# --------------------------------------------------------------------------- field text helpers

def test_at_line_end_looks_only_at_the_rest_of_the_caret_line() -> None:
    assert at_line_end("")
    assert at_line_end("   ")
    assert at_line_end("\nnext line has text")
    assert at_line_end("  \n more")
    assert not at_line_end(" world")
    assert not at_line_end("x\n")


def test_font_from_attributes_reads_points_and_pixels() -> None:
    assert font_from_attributes({"family-name": "DejaVu Sans", "size": "12pt"}) == ("DejaVu Sans", 16.0)
    assert font_from_attributes({"family-name": "'Noto Sans', sans-serif", "size": "9"}) == ("Noto Sans", 12.0)
    assert font_from_attributes({"size": "20px"}) == ("", 20.0)
    assert font_from_attributes({"size": "large"}) == ("", 0.0)
    assert font_from_attributes({}) == ("", 0.0)


def test_browser_no_break_spaces_read_as_spaces() -> None:
    assert normalise_text("a\u00a0b ") == "a b "


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_application_that_timed_out_once_is_asked_again_soon_and_a_hung_one_rarely() -> None:
    clock = _Clock()
    stalls = StallBackoff(0.25, 2.0, clock)
    assert not stalls.stalled("firefox")
    waits = []
    for _ in range(6):  # it keeps timing out
        stalls.timed_out("firefox")
        start = clock.now
        while stalls.stalled("firefox"):
            clock.now += 0.01
        waits.append(round(clock.now - start, 2))
    assert waits == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    stalls.answered("firefox")  # it answers: a later timeout is a new hiccup
    stalls.timed_out("firefox")
    assert stalls.stalled("firefox") and not stalls.stalled("chromium")
    clock.now += 0.26
    assert not stalls.stalled("firefox")


def test_stall_records_stay_bounded() -> None:
    stalls = StallBackoff(0.25, 2.0, _Clock(), size=4)
    for i in range(10):
        stalls.timed_out(f"app{i}")
    assert len(stalls._stalls) <= 4 and stalls.stalled("app9")
