"""The focused text field on Linux, read through AT-SPI (the accessibility bus).

``AtspiFocus.query()`` answers the questions the daemon asks on every
keystroke: is the focused widget a password field, what text is before the
caret, and where on screen is the caret.  Qt (with accessibility on), GTK and
browsers with accessibility enabled all answer over AT-SPI, which is why the
daemon does not need per-toolkit code.

How the focused object is found, cheapest first:

1. A background listener (``FocusTracker``) remembers the object of the last
   ``StateChanged("focused", 1)`` event.  Before trusting it, ``query()``
   re-reads its state: focus may have moved to an application that does not
   speak AT-SPI, which sends no event.
2. Otherwise (focus was set before ghosttype started, or the remembered object
   lost focus) it walks the tree of the active window looking for the FOCUSED
   state, bounded in depth, node count and time, and caches a miss until the
   next focus event so a non-accessible app does not cost a walk per keystroke.

Known toolkit quirk: Qt 6's ``QPlainTextEdit`` reports every character's
box on the first line of its paragraph block (``QTextEdit`` and ``QLineEdit``
are right), so in a multi-line ``QPlainTextEdit`` the caret's x is right but
its y may be a few lines too high.

Every D-Bus call has a short deadline; any failure makes ``query()`` return
None (the caller falls back to its own keystroke buffer), never raise.  Text
read from applications is returned to the caller only: it is never logged,
and a password field's text is not even read.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from daemon.frontends.overlay.platform.atspi import constants as C
from daemon.frontends.atspi_bus import (
    ACCESSIBLE,
    APP_ROOT_PATH,
    COMPONENT,
    COORD_SCREEN,
    DESKTOP_PATH,
    REGISTRY_BUS,
    TEXT,
    accessibility_bus_address,
    set_toolkit_accessibility,
)
from daemon.frontends.overlay.platform.atspi.bus import AtspiBus, AtspiCallError
from daemon.frontends.overlay.platform.atspi.focus_tracker import FocusTracker, ObjectRef
from daemon.controller.ports import FieldLook, Rect
from daemon.controller.terminal_prompt import line_before_caret, secret_prompt
from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.caret_geometry import caret_from_extents, centre_in_single_line, usable

log = logging.getLogger(__name__)

#: Default number of characters of context read before the caret.
DEFAULT_MAX_CHARS = 2000
#: Characters read after the caret to tell whether it is at the end of its line.
LINE_PEEK_CHARS = 80
#: CSS/toolkit pixels per typographic point (AT-SPI reports sizes in points).
PX_PER_PT = 96 / 72


@dataclass(frozen=True)
class AtspiAnswer:
    """What AT-SPI says about the focused widget at one moment."""

    #: True for a password field, False for an ordinary one, None when the
    #: widget's kind cannot tell (a terminal may be showing a password prompt).
    is_password: Optional[bool]
    #: Up to ``max_chars`` characters before the caret; None when the widget
    #: has no text interface, no caret, or is a password field.
    text_before_caret: Optional[str]
    #: The caret as a 1-pixel-wide rectangle in screen coordinates, as the
    #: application reports them (logical pixels for Qt); None when unknown.
    caret: Optional[Rect]
    #: The application's accessible name (e.g. "kate", "Firefox"); "" if unknown.
    app_name: str
    #: (bus name, object path) of the focused object: a change means the focus
    #: moved to another widget.
    object_ref: ObjectRef = ("", "")
    #: The caret's offset in the widget's text; None without a caret.
    caret_offset: Optional[int] = None
    #: False when non-blank text follows the caret on its line; None unknown.
    at_line_end: Optional[bool] = None
    #: Font from the text attributes and, for single-line fields, their box.
    look: Optional[FieldLook] = None
    #: A terminal (role TERMINAL): a password field while its caret's line
    #: asks for a secret, and its typed text waits for its echo (``FocusState.terminal``).
    terminal: bool = False


class AtspiFocus:
    """Reads the focused widget over AT-SPI; see the module docstring.

    Raises ``PlatformError`` from the constructor when there is no session bus
    or no accessibility bus, so the platform selector can fall back.
    """

    #: Tree walk limits (fallback when no usable focus event is known).
    WALK_MAX_DEPTH = 24
    WALK_MAX_NODES = 400
    #: How long a fruitless walk is trusted when no focus event arrives (short:
    #: Chromium builds its page tree only once asked, and a field focused
    #: before ghosttype started sends no event).
    WALK_MISS_TTL_S = 0.3
    #: How long an application that let a call time out is left alone: at
    #: first briefly (a browser busy for a moment answers again soon), doubling
    #: while it keeps timing out, up to the longest (a hung application must
    #: not cost every keystroke a call timeout).
    STALL_BACKOFF_S = 0.25
    STALL_BACKOFF_MAX_S = 2.0

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_CHARS,
        call_timeout: float = 0.08,
        walk_budget: float = 0.15,
        track_events: bool = True,
        session_bus: str = "SESSION",
        enable_toolkits: bool = False,
    ) -> None:
        """``enable_toolkits`` turns on the session's accessibility flag so
        that Qt applications started without ``QT_LINUX_ACCESSIBILITY_ALWAYS_ON``
        expose their fields too (see ``set_toolkit_accessibility``); the
        previous value is restored by ``close()``."""
        if max_chars < 0:
            raise ValueError("max_chars must be >= 0")
        self.max_chars = max_chars
        self.walk_budget = walk_budget
        address = accessibility_bus_address(session_bus)
        self._session_bus = session_bus
        self._restore_toolkits: Optional[bool] = None
        self._bus = AtspiBus(address, timeout=call_timeout)
        if enable_toolkits:
            try:
                if not set_toolkit_accessibility(True, session_bus):
                    self._restore_toolkits = False
            except PlatformError:
                self._bus.close()
                raise
        self._tracker: Optional[FocusTracker] = None
        if track_events:
            try:
                self._tracker = FocusTracker(address)
            except (AtspiCallError, PlatformError) as exc:
                # No registry daemon: focus events cannot be requested, the
                # tree walk still works.
                log.warning("AT-SPI focus events unavailable (%s); using tree walks only", exc)
        self._app_names: dict[str, str] = {}
        self._walk_miss: Optional[tuple[int, float]] = None  # (tracker generation, time)
        self._stalled = StallBackoff(self.STALL_BACKOFF_S, self.STALL_BACKOFF_MAX_S)

    # -- public -------------------------------------------------------------

    def query(self, max_chars: Optional[int] = None) -> Optional[AtspiAnswer]:
        """Describe the focused widget, or None when AT-SPI cannot tell
        (nothing accessible is focused, or an application did not answer in
        time).  Never raises."""
        limit = self.max_chars if max_chars is None else max(0, max_chars)
        try:
            located = self._locate()
            if located is None:
                log.debug("AT-SPI: no focused accessible found")
                return None
            answer = self._describe(*located, limit)
            self._stalled.answered(located[0][0])
            return answer
        except AtspiCallError as exc:
            if exc.timed_out and exc.bus_name:
                self._stalled.timed_out(exc.bus_name)
            log.debug("AT-SPI query failed: %s", exc)
            return None
        except Exception:  # noqa: BLE001 - an odd application must never crash the daemon
            log.warning("AT-SPI query failed unexpectedly", exc_info=True)
            return None

    def watch(self, callback) -> bool:
        """Call ``callback()`` (on the listener thread; it must return
        quickly) on focus changes and on caret moves and text changes of the
        focused object.  False when events are unavailable."""
        if self._tracker is None:
            return False
        self._tracker.watch(callback)
        return True

    def focused_object(self) -> Optional[ObjectRef]:
        """(bus name, path) of the focused accessible, or None."""
        located = self._locate()
        return None if located is None else located[0]

    def _locate(self) -> Optional[tuple[ObjectRef, Sequence[int]]]:
        """The focused accessible and its state words (read while finding it,
        so describing it does not ask again)."""
        tracker = self._tracker
        if tracker is not None:
            ref = tracker.last()
            words = None if ref is None else self._focused_state(ref)
            if ref is not None and words is not None:
                if not C.has_state(words, C.STATE_EDITABLE):
                    # A container (a browser's document) that announced focus
                    # after the field inside it: prefer that field while it
                    # still has focus.
                    for older in tracker.recent()[1:]:
                        older_words = self._focused_state(older)
                        if older_words is not None and C.has_state(older_words, C.STATE_EDITABLE):
                            return older, older_words
                return ref, words
            generation = tracker.generation
        else:
            generation = 0
        if self._walk_miss is not None:
            miss_generation, when = self._walk_miss
            if miss_generation == generation and time.monotonic() - when < self.WALK_MISS_TTL_S:
                return None
        found = self._walk_for_focus(time.monotonic() + self.walk_budget)
        if found is None:
            self._walk_miss = (generation, time.monotonic())
        else:
            self._walk_miss = None
            if tracker is not None:
                tracker.remember(found[0])
        return found

    def close(self) -> None:
        if self._tracker is not None:
            self._tracker.close()
        self._bus.close()
        if self._restore_toolkits is not None:
            try:
                set_toolkit_accessibility(self._restore_toolkits, self._session_bus)
            except PlatformError as exc:
                log.warning("could not restore the accessibility flag: %s", exc)
            self._restore_toolkits = None

    def __enter__(self) -> "AtspiFocus":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one object ----------------------------------------------------------

    def _describe(self, ref: ObjectRef, words: Sequence[int], limit: int) -> AtspiAnswer:
        bus_name, path = ref
        role = int(self._bus.call(bus_name, path, ACCESSIBLE, "GetRole")[0])
        try:
            attributes = dict(self._bus.call(bus_name, path, ACCESSIBLE, "GetAttributes")[0])
        except AtspiCallError:
            attributes = {}
        is_password = password_verdict(role, attributes)
        app_name = self._app_name(bus_name)
        if is_password:
            return AtspiAnswer(True, None, None, app_name, ref)
        single = single_line(words)
        try:
            offset = int(self._bus.get_property(bus_name, path, TEXT, "CaretOffset"))
        except AtspiCallError:
            offset = -1  # no Text interface: not a text field
        terminal = role == C.ROLE_TERMINAL
        if offset < 0:
            return AtspiAnswer(is_password, None, None, app_name, ref, terminal=terminal)
        text = self._text(bus_name, path, max(0, offset - limit), offset, limit)
        if terminal and secret_prompt(line_before_caret(text)):  # sudo's, ssh's prompt...
            return AtspiAnswer(True, None, None, app_name, ref, terminal=True)
        try:  # some toolkits (Firefox) answer "" for a range past the end
            count = int(self._bus.get_property(bus_name, path, TEXT, "CharacterCount"))
        except AtspiCallError:
            count = offset + LINE_PEEK_CHARS
        after = self._text(bus_name, path, offset, min(count, offset + LINE_PEEK_CHARS), LINE_PEEK_CHARS)
        field = self._extents(bus_name, path) if single is not False else None
        caret = self._caret_rect(bus_name, path, offset, text, single, field)
        look = self._look(bus_name, path, offset, single, field, caret)
        log.debug("AT-SPI focus role=%d app=%s object=%s chars=%d caret=%s", role, app_name, path.rsplit("/", 1)[-1],
                  len(text), caret is not None)
        if terminal:  # its caret's line alone: what the screen shows above it is not what was typed there
            text = line_before_caret(text)
        return AtspiAnswer(is_password, text, caret, app_name, ref, offset, at_line_end(after), look, terminal)

    def _text(self, bus_name: str, path: str, start: int, end: int, limit: int) -> str:
        text = normalise_text(str(self._bus.call(bus_name, path, TEXT, "GetText", "ii", (start, end))[0]))
        if len(text) > limit:  # an application that ignores the bounds
            text = (text[len(text) - limit:] if start else text[:limit]) if limit else ""
        return text

    def _look(self, bus_name: str, path: str, offset: int, single: Optional[bool],
              field: Optional[tuple[int, int, int, int]], caret: Optional[Rect]) -> FieldLook:
        """The font of the text at the caret and, for a single-line field,
        the field's box (the ghost text must stay inside it)."""
        try:
            attributes = dict(self._bus.call(bus_name, path, TEXT, "GetAttributeRun", "ib",
                                             (max(0, offset - 1), True))[0])
        except AtspiCallError:
            attributes = {}
        family, px = font_from_attributes(attributes)
        clip = None
        if field is not None and caret is not None and usable(field):
            fx, fy, fw, fh = field
            if single or (single is None and fh < 2 * caret.height):
                clip = Rect(fx, fy, fw, fh)
        return FieldLook(family, px, clip)

    def _caret_rect(self, bus_name: str, path: str, offset: int, text: str,
                    single: Optional[bool], field: Optional[tuple[int, int, int, int]]) -> Optional[Rect]:
        """The caret from character geometry: right after the character before
        it, or at the character under it (after a newline, or at offset 0);
        centred in the field when it is single-line (``single``: see
        :func:`single_line`)."""

        def extents(at: int) -> Optional[tuple[int, int, int, int]]:
            try:
                box = self._bus.call(bus_name, path, TEXT, "GetCharacterExtents", "iu",
                                     (at, COORD_SCREEN))
            except AtspiCallError:
                return None
            return tuple(int(v) for v in box) if len(box) == 4 else None  # type: ignore[return-value]

        before = extents(offset - 1) if offset > 0 else None
        at = extents(offset)
        line_start = None
        if text.endswith("\n") and not usable(at):
            # Caret at the start of an empty last line: below the line the
            # newline ends, at the x where that line starts.
            previous_line = text.rfind("\n", 0, len(text) - 1) + 1
            line_start = extents(offset - len(text) + previous_line)
        caret = caret_from_extents(before, at, text[-1:] or None, line_start)
        if caret is None or single is False:
            return caret
        return centre_in_single_line(caret, field, single)

    def _extents(self, bus_name: str, path: str) -> Optional[tuple[int, int, int, int]]:
        """The widget's box on screen (Component interface), or None."""
        try:
            box = self._bus.call(bus_name, path, COMPONENT, "GetExtents", "u", (COORD_SCREEN,))[0]
        except AtspiCallError:
            return None
        return tuple(int(v) for v in box) if len(box) == 4 else None  # type: ignore[return-value]

    # -- focus lookup ----------------------------------------------------------

    def _state(self, bus_name: str, path: str) -> Sequence[int]:
        return self._bus.call(bus_name, path, ACCESSIBLE, "GetState")[0]

    def _focused_state(self, ref: ObjectRef) -> Optional[Sequence[int]]:
        """The state words of ``ref`` if it is focused (and alive), else None."""
        if self._stalled.stalled(ref[0]):
            return None
        try:
            words = self._state(*ref)
        except AtspiCallError as exc:
            if exc.timed_out:
                self._stalled.timed_out(ref[0])
            return None
        # A field in a browser tab that is no longer shown keeps its FOCUSED
        # state; it is not where keys go.
        if (C.has_state(words, C.STATE_FOCUSED) and C.has_state(words, C.STATE_SHOWING)
                and not C.has_state(words, C.STATE_DEFUNCT)):
            return words
        return None

    def _children(self, bus_name: str, path: str) -> list[ObjectRef]:
        return [(str(b), str(p)) for b, p in self._bus.call(bus_name, path, ACCESSIBLE, "GetChildren")[0]]

    def _walk_for_focus(self, deadline: float) -> Optional[tuple[ObjectRef, Sequence[int]]]:
        """Depth-first search of the active windows for a FOCUSED object."""
        try:
            apps = self._children(REGISTRY_BUS, DESKTOP_PATH)
        except AtspiCallError:
            return None
        budget = [self.WALK_MAX_NODES]
        for app in apps:
            if time.monotonic() > deadline:
                return None
            if self._stalled.stalled(app[0]):
                continue
            try:
                windows = self._children(*app)
            except AtspiCallError as exc:
                if exc.timed_out:
                    self._stalled.timed_out(app[0])
                continue
            for window in windows:
                try:
                    if not C.has_state(self._state(*window), C.STATE_ACTIVE):
                        continue
                except AtspiCallError:
                    continue
                found = self._search(window, deadline, budget)
                if found is not None:
                    return found
        return None

    def _search(self, root: ObjectRef, deadline: float,
                budget: list[int]) -> Optional[tuple[ObjectRef, Sequence[int]]]:
        stack: list[tuple[ObjectRef, int]] = [(root, 0)]
        while stack:
            if budget[0] <= 0 or time.monotonic() > deadline:
                return None
            ref, depth = stack.pop()
            budget[0] -= 1
            try:
                words = self._state(*ref)
                if C.has_state(words, C.STATE_FOCUSED) and C.has_state(words, C.STATE_SHOWING):
                    return ref, words
                if depth >= self.WALK_MAX_DEPTH or (depth > 0 and not C.has_state(words, C.STATE_SHOWING)):
                    continue
                children = self._children(*ref)
            except AtspiCallError:
                continue
            stack.extend((child, depth + 1) for child in reversed(children))
        return None

    def _app_name(self, bus_name: str) -> str:
        name = self._app_names.get(bus_name)
        if name is None:
            try:
                name = str(self._bus.get_property(bus_name, APP_ROOT_PATH, ACCESSIBLE, "Name"))
            except AtspiCallError:
                return ""
            if len(self._app_names) >= 64:  # bounded: bus names are never reused
                self._app_names.clear()
            self._app_names[bus_name] = name
        return name


class StallBackoff:
    """Which applications to leave alone after one of their calls timed out,
    and until when: ``first`` seconds after a timeout, twice as long after
    each further timeout in a row, at most ``longest``; an answer starts it
    over.  (A browser busy for a moment must not lose its field for seconds;
    a hung application must not cost every keystroke a call timeout.)"""

    def __init__(self, first: float, longest: float, clock=time.monotonic, size: int = 64) -> None:
        self.first = first
        self.longest = longest
        self._clock = clock
        self._size = size
        #: bus name -> (when it may be asked again, its last wait), until it answers
        self._stalls: dict[str, tuple[float, float]] = {}

    def timed_out(self, name: str) -> None:
        if len(self._stalls) >= self._size:  # bounded: entries go when applications answer
            self._stalls.clear()
        previous = self._stalls.get(name)
        wait = min(self.longest, 2 * previous[1]) if previous else self.first
        self._stalls[name] = (self._clock() + wait, wait)

    def answered(self, name: str) -> None:
        self._stalls.pop(name, None)

    def stalled(self, name: str) -> bool:
        stall = self._stalls.get(name)
        return stall is not None and self._clock() < stall[0]


# -- pure helpers (unit-tested; the caret geometry lives in caret_geometry) ----

def single_line(words: Sequence[int]) -> Optional[bool]:
    """True / False when the toolkit marks a field single- or multi-line in
    its state, None when it says neither (Qt's line edits)."""
    if C.has_state(words, C.STATE_SINGLE_LINE):
        return True
    if C.has_state(words, C.STATE_MULTI_LINE):
        return False
    return None


def normalise_text(text: str) -> str:
    """Browsers keep typed spaces in editable HTML as no-break spaces; the
    key buffer and the model know them as spaces."""
    return text.replace("\u00a0", " ")


def at_line_end(after: str) -> bool:
    """Whether only whitespace follows the caret up to the end of its line
    (``after`` is the text right after the caret)."""
    return not after.split("\n", 1)[0].strip()


def font_from_attributes(attributes: Mapping[str, str]) -> tuple[str, float]:
    """(family, pixel size) from AT-SPI text attributes (``family-name``,
    ``size`` in points such as ``"12"`` or ``"12pt"``); ("", 0) parts when
    absent or unreadable."""
    family = str(attributes.get("family-name", "") or "").split(",")[0].strip().strip("'\"")
    size = str(attributes.get("size", "") or "").strip().lower()
    px = 0.0
    try:
        if size.endswith("px"):
            px = float(size[:-2])
        elif size:
            px = float(size.removesuffix("pt")) * PX_PER_PT
    except ValueError:
        px = 0.0
    return family, px if px > 0 else 0.0


def password_verdict(role: int, attributes: Mapping[str, str]) -> Optional[bool]:
    """Whether a widget with this role and these attributes holds a secret.

    PASSWORD_TEXT is the standard marker (Qt maps every non-Normal
    ``QLineEdit`` echo mode to it; GTK and browsers use it for password
    inputs).  Some toolkits instead mark the input type in attributes.  A
    terminal may be at a password prompt with echo off, which AT-SPI cannot
    reveal, so it gets None ("cannot tell") rather than False.
    """
    if role == C.ROLE_PASSWORD_TEXT:
        return True
    for key, value in attributes.items():
        if (str(key).strip().lower(), str(value).strip().lower()) in C.PASSWORD_ATTRIBUTES:
            return True
    if role == C.ROLE_TERMINAL:
        return None
    return False
