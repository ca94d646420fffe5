"""Where the suggestion starts, from the cursor rectangles a client reports.

IBus hands the engine and GNOME Shell one rectangle per report, and
clients mean different things by it (read in the desktop tier, GNOME 51):

* GTK 4, Chromium, Firefox, kwrite, Writer: a thin caret (width 0 or 1); the
  next character's ink starts where it is.
* Qt's line edit: a 10 px box centred on a thin caret
  (``QWidgetLineControl::cursorRect``: ``QRect(cix-5, 0, w+9, ch)``); the next
  character goes at its middle.
* Terminals (VTE): the block cursor, one character cell; the next character
  goes into it.
* Some clients report one change **late**: after each key (BackSpace too),
  Firefox and GTK 3 (mousepad) send the rectangle of the caret *before* that
  key, and nothing more until the next change (after text the input method
  commits: the late rectangle, then the right one; see
  ``tests/desktop/upstream.md``).  Drawn there, a suggestion stands one
  character left, over the last typed one.

:class:`CaretTrail` follows one field's changes before the caret (typed
characters, commits, BackSpace: the engine counts the characters each put
there or took away) and the rectangles its client reports, and tells how many
pixels right of the last rectangle's left edge the suggestion starts
(:class:`Shift`).

* **Late clients** are learned, not listed, from the first rectangle after
  each change.  An on-time client's caret moves
  the way the change went; a late one's the way the change *before* it went:
  where the two differ (BackSpace after typing, typing after BackSpace, the
  first key in a field whose caret was reported before it), the direction the
  rectangle moved tells which (Firefox: after BackSpace its rectangle moves
  right).  IBus passes no repeated rectangle on to the engine, so a late
  client's first rectangle in a field whose caret it reported before the
  first key never comes (it is that one again: GTK 3's mousepad); then the
  next two, read against that caret, tell: a late client's stand one
  character width apart per character only if each tells the change before
  its own.  A slow on-time client's can lag the same way for those keys
  (gnome-text-editor on a busy KWin); what they told is undone when its
  rectangles then come out of step, as a late client's never do (two in one
  change, or one a change too far).  Until then nothing is known to be late,
  but a field whose client said it had no caret before its first key (a
  rectangle of no size: Firefox says (0, 0, 0, 0) at focus) is placed as a
  late one's where the client is Gecko's (Firefox, Thunderbird) or the
  desktop did not name the application:
  of the clients of the desktop tier on GNOME 51 and KWin 6.7 (GTK 3 and 4,
  Qt, VTE, Chromium, Firefox, Thunderbird, kwrite, LibreOffice Writer) Firefox,
  Thunderbird and Writer do that, and only Gecko's are late.  Writer sends no
  rectangle after BackSpace, so nothing it reports ever tells; placed as a late
  one it would stand a character right of its caret, and after a commit a whole
  commit right.
* **How far behind** the last rectangle is, is counted in characters: the
  changes since the one it tells, and one that has no rectangle yet counts
  too (a client on time but slower than the suggestion).
* **One character's width** is learned from the client's own rectangles (the
  distance between two of them on one line over the characters added or taken
  between them, the median of the last few): exact for fixed-width fonts, the
  field's average otherwise.  While it is not known whether the client is late,
  only two rectangles both readings count the same characters between are
  measured (two keys' first rectangles, not a key's after the rectangle a commit
  ended on: read the wrong way, five 5 px characters would measure 4 px), so a
  client whose rectangles never tell (a field's first caret on another line:
  Qt's on KWin after another application) still has widths over its typed
  characters, and none has to be dropped when it is learned.  The width also tells a block
  cursor (as wide as a character, in a field whose characters are all as wide)
  from a padded thin caret (wider or narrower, or characters of different
  widths: Qt's 10 px box in a proportional font whose median is 10 px).  Until
  a width is known nothing is moved (a wide rectangle is taken as a block).
* **A fixed-width font** shows in those widths: once eight in a row are as wide
  (within a pixel), one of them over narrow characters (i, l, a space) and one
  over regular ones (n, a, a digit), the suggestion is drawn in one too, as wide
  (:attr:`Shift.advance`), until the field changes.  Only a width measured over
  one character is evidence of its kind.  A busy KWin passes some of a client's
  rectangles on late (gnome-text-editor in the tier's user session): one only
  after the next key, the two then together (the first is read as the key
  before's, the width read over both before that is taken back); or, for a few
  keys, each the key before's (come after the next key), then one that catches
  up: a rectangle that stands still over a typed character, or moves a character
  short of the keys since the last, leaves that character owed, and the jump a
  character wider than its keys that catches up is measured over it too (where
  the widths before say so; owed characters are forgotten after OWED_CHANGES
  changes).  While a character is owed, which characters a width spans is a
  reading, so it counts as a width and not as evidence of its kind.  The
  other test (:mod:`~daemon.frontends.ibus.fixed_width`), either telling: the
  line's rectangles lie on a straight line over the characters they tell, a
  rectangle read as the wrong key's taken as the key before's or left out
  instead of breaking a run (a simulated busy KWin: fixed-width told by a
  phrase's last key in 93.5% of phrases where eight in a row alone told 90%).
* Only changes on one line count: a line break, arrows, a click (an *anchor*)
  start the count again, and a rectangle on another line tells nothing of the
  width.  A rectangle of no height (Firefox's at focus) says nothing.

Nothing here sees or keeps text: only counts of characters and rectangles.
Thread-safe (keys and rectangles arrive on the D-Bus thread, suggestions are
drawn from the worker's).
"""

from __future__ import annotations

import collections
import logging
import statistics
import threading
from dataclasses import dataclass
from typing import Callable, Optional

from daemon.frontends.ibus.fixed_width import fixed_advance

#: Widths kept for the median, and the widest one believed (in caret heights: a
#: jump wider than this is another line or another place, not one character).
WIDTHS = 8
MAX_WIDTH_OF_CARET = 3.0
#: Characters a rectangle a key late left owed are forgotten after this many changes without the one that catches up.
OWED_CHANGES = 8

log = logging.getLogger(__name__)

Rect = tuple[int, int, int, int]  #: x, y, width, height as the client reports it


#: A rectangle at most this wide is a thin caret: the suggestion starts at its left edge, where the next
#: character's ink starts (read off the desktop tier's screenshots: GTK 4 and 3, Chromium, Firefox, kwrite
#: and Writer draw the character typed after a thin caret at x to x + 1 px; a pixel's gap after the caret
#: put the suggestion 2-3 px right of it).
THIN = 2

#: The applications (the names the desktop's plug-in gives, lower case) whose text fields are Gecko's: late
#: where they said they had no caret at focus (measured: tests/desktop/upstream.md).
GECKO = ("firefox", "firefox-esr", "org.mozilla.firefox", "thunderbird", "org.mozilla.thunderbird",
         "librewolf", "io.gitlab.librewolf-community", "waterfox", "floorp", "zen", "icecat")


#: How far apart (a share of the wider) two widths per character may be and still be one line's text, when a
#: field's first rectangles are fitted to its caret before the first key (:meth:`CaretTrail._fit_reference`);
#: the other reading must be twice as far off.
FIT = 0.2

#: A fixed-width font: MONO_SAMPLES widths in a row all within a pixel of each other, one of them measured over
#: NARROW characters only and one over REGULAR ones only; then the field's advance is the mean of the last
#: MONO_WIDTHS widths within a pixel of it (a rectangle KWin passed on after the next key gives two widths off,
#: one twice and one half as wide).
MONO_WIDTHS = 16
MONO_SAMPLES = 8
#: Rectangles of one line kept for the other test of a fixed-width font (:mod:`~daemon.frontends.ibus.fixed_width`).
LINE_POINTS = 24
#: At most 0.62 of an "n" wide, and between 0.85 and 1.15 of it, in DejaVu Sans and Serif, Nimbus Sans and
#: Roman (Helvetica's and Times' metrics); the two sets stay 0.31 n apart, 2.5 px at 13 px. Eight equal widths
#: alone are no proof: a proportional font's "dependen" (all regular) or indentation with i, l and ':' (all
#: narrow) measure alike too; one of each does not.
NARROW = frozenset("ijl',./:;\\| ")
REGULAR = frozenset("abcdeghknopquvxy0123456789")


def _kind(char: str) -> str:
    return "n" if char in NARROW else "r" if char in REGULAR else ""


@dataclass(frozen=True)
class Shift:
    """The suggestion starts ``dx`` pixels right of the left edge of ``rect`` (the rectangle it was
    measured from; any other rectangle says nothing of it).  ``advance``: every character of the field
    is this many pixels wide (a fixed-width font), so the suggestion's should be; 0: they differ, or too
    few were seen to tell."""

    rect: Rect
    dx: int
    advance: float = 0.0


class CaretTrail:
    """See the module docstring.  Call :meth:`clear` for a new field,
    :meth:`anchor` when the caret moved in a way no count tells,
    :meth:`changed` for characters put before the caret (or taken away), :meth:`report`
    for each rectangle, and :meth:`shift` when drawing."""

    def __init__(self, app: Callable[[], str] = lambda: "") -> None:
        """``app``: the focused application's name as the desktop named it ("" where it named none)."""
        self._app = app
        self._lock = threading.Lock()
        self.late: Optional[bool] = None  #: the client reports each change's first rectangle late
        #: ``late`` came from the fit to the caret before the first key: a rectangle out of step undoes it
        self._fitted = False
        #: placed as a late client until its rectangles tell: it reported no caret before its first key
        self._assumed_late = False
        self._blind = False  #: the client said, before a new field's first key, that it has no caret yet
        self._widths: collections.deque[float] = collections.deque(maxlen=WIDTHS)
        self._advances: collections.deque[float] = collections.deque(maxlen=MONO_WIDTHS)  # the same, longer
        self._kinds: collections.deque[str] = collections.deque(maxlen=MONO_WIDTHS)  # what each was measured over
        self._fixed = 0.0  #: the field's font is fixed-width, its characters about this wide (0: not known to be)
        #: since the anchor: each rectangle's x and y, and the characters before the caret it tells if the
        #: client is late, and if it is on time
        self._points: collections.deque[tuple[int, int, int, int]] = collections.deque(maxlen=LINE_POINTS)
        self._positions = [0]
        self._owed = 0  #: typed characters the caret did not move over (rectangles a key late, see report)
        self._stood = False  #: the last rectangle stood still over typed characters
        self._owed_at = 0  #: the change in which characters were last owed
        #: of each character before the caret since the anchor, whether it is NARROW, REGULAR or neither ("n",
        #: "r", ""; "" where not told): the kind only, never the character
        self._typed: list[str] = []
        self._reports_since_change = 0
        self._firsts: dict[int, Rect] = {}  # change number -> its first rectangle (0: at a new field)
        self._commits: set[int] = set()  # the changes that were the input method's commits
        #: the last rectangle and the position it tells if the client is late, and if it is on time
        self._last: Optional[tuple[Rect, int, int]] = None
        self._reports = 0  #: rectangles reported (of some height)
        #: the last width measured: from (x, characters told), at which report, in which change
        self._sample: Optional[tuple[int, int, int, int]] = None
        self._new_field = True
        #: the caret's x and y before the input method's last commit, and its characters (:meth:`short_of_commit`)
        self._commit_from: Optional[tuple[int, int, int]] = None

    def clear(self) -> None:
        """Another field (or application): nothing learned holds."""
        with self._lock:
            self.late = None
            self._assumed_late = self._blind = self._fitted = False
            self._widths.clear()
            self._advances.clear()
            self._kinds.clear()
            self._fixed = 0.0
            self._anchor()
            self._new_field = True

    def anchor(self) -> None:
        with self._lock:
            self._anchor()

    def _anchor(self) -> None:
        self._positions = [0]
        self._typed = []
        self._points.clear()
        self._owed = 0
        self._stood = False
        self._reports_since_change = 0
        self._firsts = {}
        self._commits = set()
        self._last = None
        self._sample = None
        self._new_field = False
        self._commit_from = None

    def changed(self, chars: int, line_break: bool = False, commit: bool = False, text: str = "") -> None:
        """``chars`` characters were put before the caret (a key; ``commit``: the input method's; ``text``:
        which, where known), or taken from before it (negative: BackSpace)."""
        with self._lock:
            if line_break or chars == 0:
                self._anchor()
                return
            self._positions.append(self._positions[-1] + chars)
            if chars > 0:
                self._typed += [_kind(c) for c in text] if len(text) == chars else [""] * chars
            else:
                del self._typed[max(0, len(self._typed) + chars):]
                kept = [p for p in self._points if max(p[2:]) <= self._positions[-1]]  # not over what went
                self._points.clear()
                self._points.extend(kept)
            self._reports_since_change = 0
            if commit:
                self._commits.add(len(self._positions) - 1)
            self._commit_from = (*self._last[0][:2], chars) if commit and chars > 0 and self._last else None

    def report(self, rect: Rect) -> None:
        """The client says its caret is at ``rect`` (one of no height says nothing of where, but before a
        new field's first key it says the client does not know yet: a rectangle GNOME Shell repeated at the
        focus-in, the last application's, is then no reference)."""
        if rect[3] <= 0:
            with self._lock:
                if len(self._positions) == 1 and self._new_field:
                    self._firsts.pop(0, None)
                    self._blind = True
            return
        with self._lock:
            self._reports += 1
            change = len(self._positions) - 1
            first = change > 0 and self._reports_since_change == 0
            self._reports_since_change += 1
            if change == 0 and self._new_field:
                # where a new field's caret is before any change: a reference; the latest one (GNOME Shell
                # repeats the last application's caret at the focus-in, then the client says its own)
                self._firsts[0] = rect
            told = self._last[1] if self._last is not None else None
            if self._fitted and change > 1 and change not in self._commits:
                self._out_of_step(change, rect, first)
            if first:
                self._firsts[change] = rect
                if change not in self._commits:  # after a commit a late client sends the right one too
                    self._decide(change, rect)
            if_late = self._positions[change - 1] if first else self._positions[change]
            if first and change in self._commits and told == if_late:
                # a late client's first rectangle after a commit is where the last one already said (IBus
                # passes no repeat on): this one is the right one, that follows it
                if_late = self._positions[change]
            if_on_time = self._positions[change]
            last, self._last = self._last, (rect, if_late, if_on_time)
            self._points.append((rect[0], rect[1], if_late, if_on_time))
            if not self._fixed:
                self._fixed = self._line_advance(rect[1])
            if last is None:
                return
            (lx, ly, _lw, _lh), lif_late, lif_on_time = last
            x, y, _w, h = rect
            sample = self._sample
            if if_on_time == lif_on_time and not first and not self._reading() and change not in self._commits \
                    and y == ly and x > lx and sample is not None and sample[2:] == (self._reports - 1, change):
                # a second rectangle in one change, further on: the first told the change before (a busy KWin
                # passed it only after this change's key, then this one); measured again so
                self._sample = None
                self._unmeasure()
                (sx, stells), before = sample[:2], self._positions[change - 1]
                if before > stells:
                    self._measure(sx, stells, lx, before, h, change)
                self._measure(lx, before, x, if_on_time, h, change)
                return
            if self.late is None and if_late - lif_late != if_on_time - lif_on_time:
                return  # the two readings count other characters between them: no width until one is known
            tells, ltells = (if_late, lif_late) if self._reading() else (if_on_time, lif_on_time)
            if y != ly or tells == ltells:
                return
            chars = tells - ltells
            if x == lx:
                # the caret did not move over typed characters: a rectangle a key late (a busy KWin passes some
                # of a client's on so, then never the one between): the one that catches up spans these too
                self._owed, self._owed_at = (self._owed + chars if chars > 0 else 0), change
                self._stood = True
                return
            if self._owed and change - self._owed_at > OWED_CHANGES:
                self._owed = 0  # never caught up: what stood still was not a rectangle a key late after all
            # after the caret stood still, or while a character is owed, which characters a width spans is a
            # reading: its width counts, not as evidence of what kinds of characters are as wide (two narrow ones
            # read as one regular)
            guessed, self._stood = self._stood or self._owed > 0, False
            width = statistics.median(self._widths) if self._widths else 0.0
            if self._owed and chars > 0 and width and abs(x - lx - (chars + self._owed) * width) <= 1:
                ltells, self._owed = tells - chars - self._owed, 0
            elif chars > 1 and len(self._widths) >= 3 and abs(x - lx - (chars - 1) * width) <= 1 < width - 1:
                # a character short: the rectangle is the key before's, come after this key (a busy KWin does
                # so for a few keys, then passes on one that catches up): the next jump spans that one too
                tells, self._owed, self._owed_at, guessed = tells - 1, self._owed + 1, change, True
            self._measure(lx, ltells, x, tells, h, change, kinds=not guessed)

    def _measure(self, lx: int, ltells: int, x: int, tells: int, h: int, change: int, kinds: bool = True) -> None:
        """Lock held: one width per character, from a rectangle at ``lx`` telling the caret after ``ltells``
        characters to one at ``x`` after ``tells`` (the same line), remembered as this report's sample
        (``kinds``: the characters between are known, and their kinds count as evidence of a fixed width)."""
        chars = tells - ltells
        width = (x - lx) / chars
        if not 0 < width <= MAX_WIDTH_OF_CARET * max(h, 1):
            return
        self._widths.append(width)
        self._advances.append(width)
        over = set(self._typed[ltells:tells]) if kinds and chars == 1 and ltells >= 0 else {""}
        self._kinds.append(over.pop() if len(over) == 1 else "")
        self._sample = (lx, ltells, self._reports, change)
        if not self._fixed:
            last = list(self._advances)[-MONO_SAMPLES:]
            if len(last) == MONO_SAMPLES and max(last) - min(last) <= 1 \
                    and {"n", "r"} <= set(list(self._kinds)[-MONO_SAMPLES:]):
                self._fixed = statistics.fmean(last)

    def _line_advance(self, y: int) -> float:
        """Lock held: the field's advance where the rectangles on line ``y`` since the anchor lie on a straight
        line, each at the characters it tells as the client is read now (late or on time); 0.0 if they do not."""
        late = self._reading()
        points = [(if_late if late else if_on_time, x) for x, py, if_late, if_on_time in self._points if py == y]
        return fixed_advance(points, self._typed)

    def _unmeasure(self) -> None:
        """Lock held: take back the last width measured (read over the wrong characters)."""
        for kept in (self._widths, self._advances, self._kinds):
            if kept:
                kept.pop()

    def _decide(self, change: int, rect: Rect) -> None:
        """Whether the client is late, where this change's first rectangle tells
        (lock held): against the previous change's first rectangle on the same
        line, an on-time client moved the way this change went, a late one the
        way the previous change went (or not at all, after a new field's first
        rectangle).  Told only where the two differ."""
        before = self._firsts.get(change - 1)
        if self.late is None and change > 1 and 1 not in self._firsts:  # the first key's never came
            self._fit_reference(change, rect)
            if self.late is not None:
                return
        if before is None and change == 1 and self._new_field and self._blind and self.late is None:
            try:
                app = self._app()
            except Exception:  # the engine's record of the application; never worth losing a rectangle over
                log.debug("the focused application's name could not be read", exc_info=True)
                app = ""
            # no caret before the first key (see the module docstring)
            self._assumed_late = not app or app in GECKO
            log.debug("the client said nothing of its caret before the first key: placed as %s one",
                      "a late" if self._assumed_late else "an on-time")
        if before is None or before[1] != rect[1]:
            return
        now = _sign(self._positions[change] - self._positions[change - 1])
        then = 0 if change == 1 else _sign(self._positions[change - 1] - self._positions[change - 2])
        if now == then:
            return
        moved = _sign(rect[0] - before[0])
        if moved not in (now, then):
            return
        late = moved == then
        if late != self.late:
            log.debug("the client reports its caret %s", "a change late" if late else "on time")
            if self.late is not None:
                self._widths.clear()  # measured on what the rectangles now contradict
            self._owed = 0  # a rectangle that stood still was a late client's, not one a key late
            self.late = late
        self._fitted = False  # told by the way the caret moved: it stands

    def _fit_reference(self, change: int, rect: Rect) -> None:
        """Whether the client is late, where a new field's caret before any key (the reference) and the
        first rectangles of two later changes on its line tell (lock held; characters only added). The
        first key's rectangle never came: a late client's is the reference itself, and IBus passes no
        repeat on (GTK 3's mousepad on GNOME 51: IBus got the same rectangle after the first key, the
        engine did not). The reading that puts the three rectangles one character width apart per
        character, as a line of text does, wins, where the other does not. Only the first two rectangles
        after the reference are read: a client whose first one came late once and the next on time
        (gnome-text-editor on KWin, which applied the first with the window's next commit) fits neither
        there, and would fit the late reading over the characters after it."""
        ref = self._firsts.get(0)
        known = [c for c in self._firsts if 0 < c < change]
        if ref is None or known != [change - 1] or ref[1] != rect[1] or self._firsts[known[0]][1] != rect[1]:
            return  # told once, by the first rectangles of the two changes after the one that had none
        if any(b <= a for a, b in zip(self._positions, self._positions[1:change + 1])) or \
                any(c <= change for c in self._commits):
            return  # not only typed characters: the direction rule tells instead
        a, ra = known[0], self._firsts[known[0]]

        def misfit(late: bool) -> float:
            ia, ib = (self._positions[a - 1], self._positions[change - 1]) if late else \
                (self._positions[a], self._positions[change])
            if ia <= 0 or ib <= ia:
                return 1.0
            w1, w2 = (ra[0] - ref[0]) / ia, (rect[0] - ra[0]) / (ib - ia)
            return abs(w1 - w2) / max(abs(w1), abs(w2), 1e-9)

        late, on_time = misfit(True), misfit(False)
        if min(late, on_time) <= FIT and max(late, on_time) >= 2 * FIT:
            self.late, self._fitted = late < on_time, True
            log.debug("the client reports its caret %s (its rectangles against its caret before the first key)",
                      "a change late" if self.late else "on time")

    def _out_of_step(self, change: int, rect: Rect, first: bool) -> None:
        """Undo what the fit told (lock held; a typed change after the first): a client whose rectangles
        stood a change behind for a few keys only because they came slowly (gnome-text-editor on KWin, the
        machine busy with the first suggestions: the first two after the reference each told the key before
        its own, as a late client's do) catches up, and then shows it: a second rectangle in one change (the
        one that was still to come), or a first one a change's characters further than one change's
        characters take (the one between never came).  A late client reports one rectangle per change,
        each one change's characters past the last."""
        last = self._last[0] if self._last is not None else None
        if last is None or last[1] != rect[1]:
            return
        why = ""
        if not first and change in self._firsts:
            why = "a second rectangle in one change"
        elif first and change - 1 in self._firsts and self._widths:
            now = self._positions[change] - self._positions[change - 1]
            then = self._positions[change - 1] - self._positions[change - 2]
            width = statistics.median(self._widths)
            if now == then > 0 and change - 1 not in self._commits and rect[0] - last[0] >= 1.5 * width * now:
                why = "a rectangle a change further than its change"
        if why:
            log.debug("the client's rectangles came out of step (%s): not known to be late after all", why)
            self.late, self._fitted = None, False
            self._widths.clear()  # measured on the reading now in doubt

    def short_of_commit(self) -> bool:
        """Whether the last rectangle is an on-time client's from before the input method's last commit, passed on
        after it (a busy KWin after Tab, the tier's user session: the next suggestion stood over the text Tab put
        in): on its line, less than a third of its characters (at the field's average width; i, l, a space: half)
        right of the caret before it.  A late client's is read as such already.  Once one reaches past: caught up."""
        with self._lock:
            if self._commit_from is None or self._last is None or not self._widths or self._reading():
                return False
            (x0, y0, chars), (x, y) = self._commit_from, self._last[0][:2]
            if y == y0 and x < x0 + chars * statistics.median(self._widths) / 3:
                return True
            self._commit_from = None
            return False

    def _reading(self) -> bool:
        """Lock held: whether rectangles are read as a late client's: what is known, else what is assumed
        (a client that said it had no caret before its first key: late; any other: on time)."""
        return self.late if self.late is not None else self._assumed_late

    def shift(self) -> Optional[Shift]:
        """Where the suggestion starts against the last rectangle; None before any."""
        with self._lock:
            if self._last is None:
                return None
            rect, if_late, if_on_time = self._last
            tells = if_late if self._reading() else if_on_time
            width = statistics.median(self._widths) if self._widths else None
            alike = bool(self._widths) and max(self._widths) - min(self._widths) <= 1
            _x, _y, w, _h = rect
            if w <= THIN:
                start = 0
            elif width is None or (abs(w - width) <= 1 and alike):
                start = 0  # a block cursor: the next character's cell (a terminal's cells are all alike)
            else:
                start = w // 2  # a thin caret padded on both sides (Qt's line edit)
            behind = self._positions[-1] - tells if width is not None else 0
            return Shift(rect, start + round(behind * (width or 0)), self._advance())

    def _advance(self) -> float:
        """Lock held: how wide every character of the field is, where its font is fixed-width (0: not known).
        Kept when the client turns out late: what was measured before that was known, both readings agree on."""
        if not self._fixed:
            return 0.0
        core = [v for v in self._advances if abs(v - self._fixed) <= 1] or [self._fixed]
        return round(statistics.fmean(core), 2)  # the mean: the advance may be fractional (12.04 px: 12s and 13s)


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


__all__ = ["CaretTrail", "Shift"]
