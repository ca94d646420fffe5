"""Whether a field's font is fixed-width, from where its caret stood on one line.

In a fixed-width font the caret after ``n`` characters stands at ``x0 + n * advance``: the rectangles a
client reported on one line lie on a straight line, each within a pixel of it (whole pixels, rounded).
:func:`fixed_advance` looks for the line most of them lie on, and reads each rectangle at the characters
it told or at one fewer: a busy KWin passes some rectangles on only after the next key (the key before's,
read as this key's), and those lie a character off the line.  The rectangles on the line must be one run
(no more than GAP characters between two: a few never passed on, or off the line, leave a gap).

Equal steps alone are no proof: a proportional font's regular letters ("dependen") are as wide as each
other, and so are its narrow ones (indentation, "il:").  So the run must also step over one narrow
character (i, l, a space) and over one regular character (n, a, a digit), each within a pixel of the
line's advance, EVIDENCE times each: in DejaVu Sans and Serif, Nimbus Sans and Roman the two kinds stay 0.31
of an "n" apart (2.5 px at 13 px).  A step between two rectangles read a key late counts only where the
characters on both sides of it are of one kind: the reading is the line's choice, and read on time they
would step over the next character (choosing freely let DejaVu Sans pass for fixed-width).  Inside a run of
such steps, though, each character but the run's first is stepped over either way (read on time, by the step
before), so there it counts too: a busy KWin passed gnome-text-editor's rectangles on a key late for seven
keys in a row in the desktop tier, and the narrow letters' steps lay only there.

This is the caret trail's second test, beside its run of eight equal widths
(:mod:`~daemon.frontends.ibus.caret_trail`); either tells.  Measured on a simulated busy KWin (each key's
rectangle never passed on, passed on after the next key, or the key before's for 2-5 keys), 200 phrases of
30-45 characters of the eval texts in DejaVu Sans Mono, Sans and Serif at 11, 14.67 and 20 px: fixed-width
told by the phrase's last key in 93.5% of phrases where the run alone told 90% (busier: 82% where 75%); a
proportional font taken for fixed-width in at most 3 of 400 phrases (by the run alone: 1 of 400).  With the
steps inside runs of key-late rectangles counted (25-50 characters of the README and the eval texts, 54 fonts
of the machine at 11, 14.67 and 20 px, KWin's recorded pattern and simulated runs of late keys): fixed-width
told in 75.7% of the monospace phrases where it was 52.4%, proportional fonts taken for fixed-width in 21 of
88,320 where 20.

Only counts of characters and pixels come in: the kind of each character, never the character.
"""

from __future__ import annotations

import collections
import statistics
from typing import Sequence

#: A fixed-width font: at least this many rectangles (at different characters) on one straight line (eight
#: widths, as many as the run of equal widths asks for).
MIN_POINTS = 9
#: How far (px) a rectangle may stand from the line: positions are whole pixels, so a fixed-width font's
#: stand up to half a pixel off its true line, and the line fitted through them is as far off again.
TOLERANCE = 1.0
#: The line is looked for through two rectangles at least this many characters apart (a shorter pair
#: gives a slope too rough to hold over the line).
MIN_SPAN = 4
#: The fitted line: each rectangle within this many px of it (half a pixel of rounding, and the fit's own error).
FIT = 0.75
#: The rectangles on the line are one run: no more than this many characters between two of them (a rectangle
#: never passed on, or one read as another key's, leaves a gap).
GAP = 2
#: Steps over one narrow and over one regular character each as wide as the line's advance: this many of each.
EVIDENCE = 2

Point = tuple[int, int]  #: characters before the caret, the caret's x (px)
#: a point placed on the line: the characters it is read at, its x, and whether that is a character fewer than
#: it told (a rectangle a busy KWin passed on a key late)
Placed = tuple[int, int, bool]


def fixed_advance(points: Sequence[Point], kinds: Sequence[str]) -> float:
    """The width of every character, where the caret positions ``points`` (on one line, in any order)
    show a fixed-width font; 0.0 where they do not, or too few to tell.  ``kinds``: of each character
    before the caret, "n" (narrow), "r" (regular) or "" (neither, or not known), by position."""
    pts = sorted(set(points))
    if len({n for n, _ in pts}) < MIN_POINTS:
        return 0.0
    best: list[Placed] = []
    for i, (n1, x1) in enumerate(pts):
        for n2, x2 in pts[i + 1:]:
            if n2 - n1 < MIN_SPAN or x2 <= x1:
                continue
            on = _on_line(pts, (x2 - x1) / (n2 - n1), x1 - n1 * (x2 - x1) / (n2 - n1), TOLERANCE)
            if len(on) > len(best):
                best = on
    if len(best) < MIN_POINTS:
        return 0.0
    slope, intercept = _fit(best)
    run = _longest_run(_on_line(pts, slope, intercept, FIT))
    if len(run) < MIN_POINTS:
        return 0.0
    slope, _ = _fit(run)
    seen: collections.Counter[str] = collections.Counter()
    late_before = False  #: the step before this one was between two key-late readings a character apart
    for (n1, x1, lag1), (n2, x2, lag2) in zip(run, run[1:]):
        step = n2 - n1 == 1 and lag1 == lag2 and abs(x2 - x1 - slope) <= TOLERANCE
        # a step between two key-late readings is over the character after the one read, were they on time
        # after all (a reading is a choice the line made): evidence where both are of one kind, or where the
        # step before was between key-late readings too (read on time, that one is over this character)
        if step and n1 < len(kinds) and (not lag1 or late_before or (n2 < len(kinds) and kinds[n1] == kinds[n2])):
            seen[kinds[n1]] += 1
        late_before = step and lag1
    return slope if seen["n"] >= EVIDENCE and seen["r"] >= EVIDENCE else 0.0


def _longest_run(on: Sequence[Placed]) -> list[Placed]:
    """The longest run of ``on`` (sorted) with no more than GAP characters between neighbours."""
    best: list[Placed] = []
    run: list[Placed] = []
    for p in on:
        if run and p[0] - run[-1][0] > GAP:
            run = []
        run.append(p)
        if len(run) > len(best):
            best = list(run)
    return best


def _on_line(pts: Sequence[Point], slope: float, intercept: float, tolerance: float) -> list[Placed]:
    """The points within ``tolerance`` px of the line, each at the characters it told or a character fewer
    (a rectangle a busy KWin passed on a key late: the key before's), one per character (the nearest), sorted."""
    near: dict[int, tuple[float, Placed]] = {}
    for n, x in pts:
        for at in (n, n - 1):
            off = abs(x - (intercept + slope * at))
            if off <= tolerance and (at not in near or off < near[at][0]):
                near[at] = (off, (at, x, at != n))
    return [near[n][1] for n in sorted(near)]


def _fit(pts: Sequence[Placed]) -> tuple[float, float]:
    """The least-squares line through ``pts`` (x against the characters; they are at MIN_POINTS characters or
    more, so never all at one): its slope and intercept."""
    return statistics.linear_regression([p[0] for p in pts], [p[1] for p in pts])


__all__ = ["fixed_advance", "MIN_POINTS"]
