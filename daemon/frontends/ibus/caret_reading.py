"""When the engine reads the focused field's caret from the accessibility bus instead of the desktop's.

The desktop hands the engine and its plug-in the caret rectangle each field reports (GNOME Shell as IBus's
``SetCursorLocation``, KWin's effect as ``Caret``).  Two kinds of field have none that holds
(tests/desktop/upstream.md): one whose rectangles the desktop never applies (Thunderbird's compose window
on GNOME: only the empty field's caret of no size), and one whose caret KWin holds keys behind (Firefox
and Thunderbird on KWin: its effect answers ``StaleCaret``).  For those, :class:`CaretReading` has the
caret read from the accessibility bus (:mod:`~daemon.frontends.ibus.a11y_caret`) until the field loses
the focus, and the suggestion starts at the caret read: it comes after each key, on time whatever the
trail learned of the field's own rectangles.  On KWin a Gecko application's field is read from the moment
it has the focus, as if KWin had been found behind already: KWin passes Firefox's caret on seldom, and a
first suggestion waiting for ``StaleCaret`` went to IBus's popup (the desktop tier's user session).

Only Gecko's applications (:data:`~daemon.frontends.ibus.caret_trail.GECKO`, as the desktop's plug-in names
them) are read: their character extents are relative to the window's surface, which the plug-ins place
(measured, tests/desktop/upstream.md), in Gecko's device pixels (KWin's effect divides them by the window's
output scale: measured at scale 2 in the desktop tier's ``kde-hidpi``; GNOME Shell's extension brings them to
the stage's pixels through the monitor's scale: Thunderbird's compose window measured at scales 2 and 1.5 in
``gnome-hidpi`` and ``gnome-frac``); GTK 4's are relative to its window widget, inside
the client-side shadow (16 px left of the caret on KWin at scale 2, in the desktop tier).
"""

from __future__ import annotations

import logging
from typing import Callable, Optional

from daemon.frontends.ibus.caret_trail import GECKO, CaretTrail, Shift

#: Printable keys typed into a field since it last reported a caret before its caret is read from the
#: accessibility bus: a client a key late (Firefox, Chromium on GNOME) has reported one by then.
AFTER_KEYS = 3

log = logging.getLogger(__name__)


class CaretReading:
    """One engine's side of the reading (the reader and the plug-in's link are the frontend's)."""

    def __init__(self, frontend, trail: CaretTrail, app: Callable[[], str] = lambda: "") -> None:
        """``app``: the focused application's name as the desktop's plug-in named it."""
        self._frontend = frontend
        self._trail = trail
        self._app = app
        self._unreported = 0  #: printable keys since the field last reported a caret (of some height)
        self._stale = False  #: KWin's caret for this field was found keys behind

    def new_field(self) -> None:
        """Another field has the focus: it reports its own caret, or shows that it must be read (a Gecko
        application's on KWin is read from the start: KWin passes its caret on seldom)."""
        self._unreported, self._stale = 0, self._gecko_on_kwin()
        self._read(self._stale)

    def app_changed(self) -> None:
        """The plug-in named the application that has the keys (it may do so after the focus came)."""
        if self._gecko_on_kwin():
            self.stale()
        elif self.reading and not self._gecko():
            self._stale = False
            self._read(False)

    def focus_lost(self) -> None:
        self._read(False)

    def key_typed(self) -> None:
        """A printable key went to the field: read its caret when the field reported none for its last keys
        (Thunderbird on GNOME reports none at all; KWin passes on Firefox's seldom)."""
        self._unreported += 1
        if self._unreported >= AFTER_KEYS:
            self._read(True)

    def reported(self, height: int, keys_since_focus: int) -> None:
        """The client reported a caret: one of some height after a key says where it is after all (unless
        KWin was found holding it keys behind)."""
        if height > 0 and keys_since_focus > 0:
            self._unreported = 0
            if not self._stale:
                self._read(False)

    def stale(self) -> None:
        """KWin's effect could not draw at KWin's caret, keys behind the field's: read it until focus-out,
        whatever KWin applies meanwhile."""
        self._stale = True
        self._read(True)

    def read(self, pid: int, x: int, y: int, w: int, h: int) -> None:
        """The focused field's caret read from the accessibility bus, relative to the surface of process
        ``pid``'s window: the plug-in draws there, and the trail learns the field's character width from it
        (a fixed-width font is drawn as one)."""
        shell = self._frontend.shell
        log.debug("caret read from the accessibility bus: (%d, %d, %d, %d) on process %d's surface%s", x, y, w, h,
                  pid, "" if self.reading and shell is not None else " (no longer reading)")
        if self.reading and shell is not None:
            self._trail.report((x, y, w, h))
            shell.surface_caret(pid, x, y, w, h, self.shift())

    @property
    def reading(self) -> bool:
        a11y = self._frontend.a11y_caret
        return a11y is not None and a11y.following

    def shift(self) -> Optional[Shift]:
        """Where the suggestion starts against the last caret: the trail's, or, while reading, at the caret
        read (the trail's advance kept: the field's fixed-width font)."""
        shift = self._trail.shift()
        return Shift(shift.rect, 0, shift.advance) if shift is not None and self.reading else shift

    def logged_shift(self, w: int) -> Optional[Shift]:
        """:meth:`shift` for a caret the field reported (``w`` px wide), logged where it moves the suggestion off it."""
        shift = self.shift()
        if shift is not None and (shift.dx > w or shift.advance):
            log.debug("the suggestion starts %d px right of the reported caret (client late: %s; characters "
                      "%.2f px wide, 0: not known to be alike)", shift.dx, self._trail.late, shift.advance)
        return shift

    def _gecko(self) -> bool:
        """The focused application is Gecko's by any name the plug-in gave it: its app id (the window's class)
        or its program (Debian runs ``thunderbird-bin``, ``firefox-bin``)."""
        shell = self._frontend.shell
        names = (*(shell.app if shell is not None else ()), self._app())
        return any(name.removesuffix("-bin") in GECKO for name in names if name)

    def _gecko_on_kwin(self) -> bool:
        shell = self._frontend.shell
        return shell is not None and shell.kwin and self._gecko()

    def _read(self, on: bool) -> None:
        """Start or stop reading; the plug-in hears when it stops, and goes back to the desktop's caret."""
        a11y, shell = self._frontend.a11y_caret, self._frontend.shell
        if a11y is None or shell is None or a11y.following == on or (on and not shell.present):
            return
        if on and not self._gecko():  # the extents are the surface's only where measured so
            return
        a11y.follow(on)
        if not on:
            shell.surface_caret(0, 0, 0, 0, 0)
