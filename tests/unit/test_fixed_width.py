"""fixed_advance: a fixed-width font told from where a field's caret stood on one line
(daemon/frontends/ibus/fixed_width.py), against fonts whose advances are known."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.frontends.ibus.caret_trail import _kind
from daemon.frontends.ibus.fixed_width import FIT, MIN_POINTS, fixed_advance

#: English prose of this project's own (its README)
PROSE = Path(__file__).resolve().parents[2] / "README.md"


def kinds_of(text: str) -> list[str]:
    """The kind of each character, as the engine tells the caret trail."""
    return [_kind(c) for c in text]


def readme_phrases() -> list[str]:
    """The README's first 4,800 characters (whitespace runs as one space), cut into phrases of 40."""
    text = re.sub(r"\s+", " ", PROSE.read_text(encoding="utf-8"))
    return [p for p in (text[i:i + 40] for i in range(0, 4800, 40)) if len(p) == 40]


#: kinds of characters with at least two narrow and two regular ones among the first ten
KINDS = st.lists(st.sampled_from(["n", "r", ""]), min_size=10, max_size=30).filter(
    lambda k: k[:9].count("n") >= 2 and k[:9].count("r") >= 2)


@settings(max_examples=200, deadline=None)
@given(advance=st.floats(5.0, 20.0), x0=st.integers(0, 900), kinds=KINDS)
def test_a_fixed_width_font_gives_its_advance(advance, x0, kinds):
    """The caret after every key of a fixed-width font (whole pixels, rounded): its advance, within a tenth of
    a pixel."""
    points = [(n, round(x0 + n * advance)) for n in range(len(kinds) + 1)]
    assert abs(fixed_advance(points, kinds) - advance) < 0.1


@settings(max_examples=200, deadline=None)
@given(advance=st.floats(5.0, 20.0), kinds=KINDS, data=st.data())
def test_rectangles_a_busy_kwin_passed_on_late_or_never_leave_the_advance_told(advance, kinds, data):
    """One rectangle in five, at most, never passed on or passed on a key late (the key before's x at this
    key): the advance is still told, once two rectangles stand on each side of each step the evidence needs."""
    n_keys = len(kinds) + 1
    trouble = data.draw(st.sets(st.integers(10, n_keys - 1), max_size=n_keys // 5))
    late = data.draw(st.sets(st.sampled_from(sorted(trouble)) if trouble else st.nothing()))
    points = [(n, round(100 + (n - 1 if n in late else n) * advance)) for n in range(n_keys) if n not in trouble - late]
    got = fixed_advance(points, kinds)
    assert abs(got - advance) < 0.1, (points, got)


def _on_some_line(points, slope):
    """Brute force: the most points within FIT px of one line of ``slope``, each at its characters or one
    fewer, one per character."""
    best = 0
    for n0, x0 in points:
        for at0 in (n0, n0 - 1):
            intercept = x0 - slope * at0
            for shift in (-FIT, 0.0, FIT):  # the line through this point, or a band edge at it
                near = {}
                for n, x in points:
                    for at in (n, n - 1):
                        if abs(x - (intercept + shift + slope * at)) <= FIT + 1e-9:
                            near[at] = True
                best = max(best, len(near))
    return best


@settings(max_examples=300, deadline=None)
@given(widths=st.lists(st.integers(3, 14), min_size=8, max_size=24), kinds=st.lists(st.sampled_from(["n", "r", ""]),
                                                                                    min_size=24, max_size=24))
def test_an_advance_told_is_a_line_the_rectangles_lie_on(widths, kinds):
    """Whatever it tells of any field's rectangles (characters of any widths), at least MIN_POINTS of them lie
    within FIT px of a line of that slope (checked by brute force over every line through a rectangle)."""
    points = [(0, 100)]
    for n, w in enumerate(widths, 1):
        points.append((n, points[-1][1] + w))
    got = fixed_advance(points, kinds)
    assert got == 0.0 or _on_some_line(points, got) >= MIN_POINTS


def test_too_few_rectangles_tell_nothing():
    kinds = kinds_of("is a test")
    assert fixed_advance([(n, 100 + 9 * n) for n in range(MIN_POINTS - 1)], kinds) == 0.0
    assert fixed_advance([(n, 100 + 9 * n) for n in range(MIN_POINTS)], kinds) > 0


def test_equal_steps_over_one_kind_of_character_are_no_proof():
    """Regular letters alone ("dependence") or narrow ones alone (indentation) step alike in any font."""
    for text in ("dependencedependence", "        il: il: ;:il;       |il"):
        assert fixed_advance([(n, 100 + 9 * n) for n in range(len(text) + 1)], kinds_of(text)) == 0.0


def test_english_in_proportional_fonts_is_not_taken_for_fixed_width_and_in_a_fixed_width_one_is():
    """The README's first 4,800 characters, cut into phrases of 40, in DejaVu Sans and Serif at 11, 13 and 20 px
    (the caret after each key, whole pixels): none is taken for fixed-width; in DejaVu Sans Mono nearly every
    one is (a phrase with fewer than two narrow or regular steps tells nothing)."""
    from PIL import ImageFont
    phrases = readme_phrases()
    for size in (11, 13, 20):
        for name in ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf"):
            font = ImageFont.truetype(name, size)
            told = [fixed_advance([(n, 100 + round(font.getlength(p[:n]))) for n in range(41)], kinds_of(p))
                    for p in phrases]
            if "Mono" in name:
                assert sum(abs(a - font.getlength("M")) < 0.1 for a in told) >= 0.97 * len(phrases), (name, size)
            else:
                assert not any(told), (name, size, [p for p, a in zip(phrases, told) if a])


#: Each key's rectangle as a busy KWin 6.7 passed it on in the desktop tier (kde-user, gnome-text-editor; read
#: off the application's Wayland log): "O" on time, "L" only after the next key, "N" never.
KWIN_FATES = "NOONONONOONOLLLLNONOLLLLLLLNONOONOONO"


def test_runs_of_key_late_rectangles_tell_a_fixed_width_font_and_not_a_proportional_one():
    """The README's phrases of 40 typed with KWIN_FATES (begun at a different key for each phrase): DejaVu Sans
    Mono is told in at least three phrases of four (83% measured; before the steps inside a run of key-late
    rectangles counted, 43%), DejaVu Sans and Serif in none."""
    from PIL import ImageFont
    phrases = readme_phrases()
    for name in ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf"):
        font = ImageFont.truetype(name, 13)
        told = []
        for i, p in enumerate(phrases):
            fates = (KWIN_FATES * 3)[i % len(KWIN_FATES):]
            points = []
            for n in range(1, 41):
                x = 100 + round(font.getlength(p[:n]))
                if fates[n - 1] == "O":
                    points.append((n, x))
                elif fates[n - 1] == "L" and n < 40:  # told after the next key: read as that key's
                    points.append((n + 1, x))
            told.append(fixed_advance(points, kinds_of(p)))
        if "Mono" in name:
            assert sum(abs(a - font.getlength("M")) < 0.1 for a in told) >= 0.75 * len(phrases)
        else:
            assert not any(told), [p for p, a in zip(phrases, told) if a]
