"""The IBus engine's state machine, free of D-Bus.

ibus-daemon creates one engine object per input context (roughly: per toplevel window of each
application) and tells the engine which one has focus (the controller's side of that is
:class:`~daemon.frontends.ibus.frontend.IBusFrontend`).

:class:`Engine` turns the calls ibus-daemon makes on one engine object (keys, focus, surrounding text,
content type, reset, property clicks) into controller calls, and the controller's decisions into the
engine's signals through an :class:`EngineOutput` (the D-Bus layer sends them; tests record them).

Rules worth knowing:

* Keys pass through (``process_key`` returns False) unless an accept key inserts something
  (``Controller.accept``; committed here, Tab or Ctrl+Right consumed, press and release) or Esc
  dismisses a suggestion (consumed).
* **What is on screen and what the engine believes never diverge.**  A key passes through only after
  ``process_key`` has answered, so nothing the engine shows while handling a key may reach the
  application before that key: desktops turn an unhandled key into a commit (KWin's IBus input method:
  ``commit_string``), and text-input clients drop an open preedit at a commit; Chromium inserts the key
  inside an open preedit, Qt draws it after.  So while a key is being handled, hiding happens at once,
  but showing (a new suggestion, or one advanced by typing through it) waits until the answer to the key
  has been sent (:meth:`Engine.key_done`, which the D-Bus layer calls right after the reply); and an
  open *preedit* is closed before any key other than a modifier passes through, then drawn again after
  it.  The popup is not part of the application's text and stays up.
* **The last word on the preedit comes after the key.**  A client in IBus's sync mode (GTK 4's module;
  ibus >= 1.5.28) gets what is sent during a key with its answer (``PostProcessKeyEvent``), ahead of an
  older preedit signal it has not dispatched yet, which would come back and stay; so a preedit a key
  closed is closed once more in :meth:`Engine.key_done`.
* Display (``ibus_display = "auto"``): the preedit only where it is drawn grey and stays private, i.e. a GTK3
  application through its IBus module that is not a browser; the popup everywhere else (GNOME Shell and KWin forward
  no colours, GTK4 and Qt draw the preedit like typed text, a web page reads preedit as the field's value), as long as
  a panel draws popups (GNOME Shell, ibus-ui-gtk3); with no panel the preedit is the only display. ``shell``:
  ghosttype's GNOME Shell extension or KWin effect, where it answers (``shell_ghost``), and the popup while KWin's
  caret is stale (``ShellGhost.stale``). A field whose caret the desktop never passes on, or KWin holds keys behind,
  has it read from the accessibility bus (``carets``: :mod:`~daemon.frontends.ibus.caret_reading`).
* Context: the text before the caret as the controller tracks it from keys, re-synchronised from the field's own
  surrounding text when the client sends one (GTK, Qt, Firefox): when that text does not continue what we tracked (a
  click, an edit by the application), the field's text wins.  A field that reports its text late (Firefox on KWin) is
  not a change (:class:`~daemon.frontends.ibus.clients.LateEchoes` tells echoes from edits).
* Each focus-in starts a new field id; a result for an older field is dropped (its buffer generation moved on);
  showing goes to the focused engine only.
* Privacy: PASSWORD / PIN purposes and the PRIVATE hint are treated like a password field (no capture, no suggestion);
  TERMINAL follows the ``ibus_terminals`` setting, and its keys wait until the terminal shows them on a line that asks
  for no secret (:mod:`~daemon.frontends.ibus.terminal_echo`, which sees only the caret's line); a field whose text is
  all mask characters is a password field whatever it declares (Firefox on Wayland declares nothing). **No key of a
  field reaches the controller before the engine knows the field is not masked**, however many keys that takes: while
  nothing tells (no password or terminal purpose, no text that is not all mask characters) and the client can still
  report the field's text, the field is unidentified (``is_password`` None) and its keys are held here, in memory (the
  newest :data:`HELD_KEYS`); they are replayed into the controller once the text shows the field is plain, and dropped
  when it shows mask characters or a password purpose (Firefox on KWin reports each key's text a key late or more, and
  a field's first report may come many keys late).  Whether the client can still report is what IBus says of it
  (:meth:`Engine.can_report`): until ibus-daemon has told the client's capabilities it may; after that exactly while
  they hold ``IBUS_CAP_SURROUNDING_TEXT``.  No count of keys ends the wait: a client that offers its text and never
  sends any (konsole on KWin) gets nothing. A client without the capability (XIM, a GTK widget with no text to give:
  GTK's module drops the capability there) cannot tell: its keys go on, held ones first, and ``unknown_fields``
  decides; the denylist applies to the IBus client's name (``gtk3-im:gedit`` -> ``gedit``), on Wayland to the
  application the desktop's plug-in names (every client there is the compositor).

Threads: ibus calls arrive on the D-Bus thread; results arrive on the worker thread through the sink."""

from __future__ import annotations

import collections
import logging
import threading
from typing import Optional

from daemon.capture.events import KeyEvent, Kind
from daemon.controller import Controller, Drawn, event_spec
from daemon.controller.ports import FocusState
from daemon.controller.terminal_prompt import caret_line
from daemon.frontends.ibus import menu, wire
from daemon.frontends.ibus.caret_reading import CaretReading
from daemon.frontends.ibus.caret_trail import CaretTrail
from daemon.frontends.ibus.clients import (  # noqa: F401  (re-exported)
    _GREY_PREEDIT_PREFIXES, _WEB_APPS, ECHO_WINDOW, LAG_KEYS, MASK_CHARS, LateEchoes, app_from_client, app_from_plugin,
    continues,
)
from daemon.frontends.ibus.frontend import EngineOutput, IBusFrontend
from daemon.frontends.ibus.keys import key_event
from daemon.frontends.ibus.terminal_echo import TerminalEcho
from daemon.worker import describe_exception

log = logging.getLogger(__name__)

#: Colour of the suggestion drawn as preedit (0xRRGGBB), where the toolkit honours it.
GHOST_COLOUR = 0x808080
#: Keys of an unidentified field kept for the controller: the newest ones
#: (older ones are forgotten, never sent; the field's own text, once
#: reported, gives the context before them).
HELD_KEYS = 256


class Engine:
    """One IBus engine object (one input context); see the module docstring."""

    def __init__(self, frontend: IBusFrontend, output: EngineOutput) -> None:
        self.frontend = frontend
        self.output = output
        self.client = ""
        self.capabilities = 0
        self._caps_told = False  #: ibus-daemon has told the client's capabilities
        self.purpose = wire.PURPOSE_FREE_FORM
        self.hints = 0
        self._field = 0
        self._surrounding: Optional[tuple[str, int, int]] = None
        self._surrounding_fresh = False
        self.echoes = LateEchoes()
        self._keys_since_focus = 0
        self._swallowed: set[int] = set()
        self._shown: tuple[str, str] = ("", "")  #: (text, "preedit" | "popup") currently displayed
        self._masked = False  #: the field's text is password mask characters
        self._text_seen = False  #: the field has reported text that is not all mask characters
        #: keys of a field not known yet to be unmasked (see "Privacy" above)
        self._held: collections.deque[KeyEvent] = collections.deque(maxlen=HELD_KEYS)
        self.terminal = TerminalEcho(HELD_KEYS)  #: a terminal's keys wait until it shows them
        self._in_key = False  #: a key press is being handled: showing waits for key_done()
        self._after_key: Optional[str] = None  #: what to show once the key's answer is sent
        self._drawn: Optional[Drawn] = None  #: told once ``_after_key`` is sent
        self._preedit_in_key = False  #: the preedit changed while the key was handled
        #: where the inline suggestion starts against the client's caret rectangle (late ones included)
        self.trail = CaretTrail(self.app_id)
        self.carets = CaretReading(frontend, self.trail, self.app_id)  #: its caret read from the accessibility bus?
        self._lock = threading.Lock()

    @property
    def controller(self) -> Controller:
        assert self.frontend.controller is not None, "IBusFrontend.attach() was not called"
        return self.frontend.controller

    # -- what the controller sees of this field ---------------------------------------

    def app_id(self) -> str:
        """The application the client names, else the one the desktop's plug-in says has the keys
        (GNOME Shell and KWin forward every Wayland client to IBus under their own name)."""
        named, shell = app_from_client(self.client), self.frontend.shell
        if named or shell is None:
            return named
        return app_from_plugin(shell.app, self.controller.config.is_denied)

    def app_changed(self) -> None:
        """The desktop's plug-in named another application: its rules (the denylist, "Off in") apply now."""
        if self.frontend.focused is self and not app_from_client(self.client):
            self.controller.on_focus(self.focus_state())
            self.publish_properties(update=False)  # the menu's entries change with the application

    def is_private(self) -> bool:
        """No capture, no suggestion (treated like a password field)."""
        if self.purpose in (wire.PURPOSE_PASSWORD, wire.PURPOSE_PIN) or self.hints & (wire.HINT_PRIVATE | wire.HINT_HIDDEN_TEXT):
            return True
        if self._masked:
            return True
        return self.purpose == wire.PURPOSE_TERMINAL and (self.controller.config.skips_terminals or self.terminal.secret)

    def password_verdict(self) -> Optional[bool]:
        """``FocusState.is_password``: True for a private field, False once
        the field is known not to be masked (its text seen, or a terminal),
        None while it cannot be told."""
        if self.is_private():
            return True
        if self._text_seen or self.purpose == wire.PURPOSE_TERMINAL:
            return False
        return None

    def can_report(self) -> bool:
        """Whether the client may still report the field's text: IBus has not
        told its capabilities yet, or they offer surrounding text."""
        return not self._caps_told or bool(self.capabilities & wire.CAP_SURROUNDING_TEXT)

    def unidentified(self) -> bool:
        """Whether this field's keys are held: nothing tells yet whether it
        is masked, and its client can still tell by reporting its text (for
        as many keys as that takes)."""
        return self.password_verdict() is None and self.can_report()

    def focus_state(self, text_before_caret: Optional[str] = None) -> FocusState:
        return FocusState(app_id=self.app_id(), window_id=self._field, is_password=self.password_verdict(),
                          text_before_caret=text_before_caret)

    def display_mode(self) -> str:
        """``preedit``, ``popup`` or ``shell`` for this client (see the module docstring)."""
        mode = self.controller.config.ibus_display
        if mode != "auto":
            return mode
        shell = self.frontend.shell
        popup = "shell" if shell is not None and shell.present and not shell.stale else "popup"
        if self.capabilities and not self.capabilities & wire.CAP_PREEDIT_TEXT:
            return popup
        if self.frontend.panel is False:
            return "preedit"  # nothing would draw a popup
        app = self.app_id()
        if self.client.startswith(_GREY_PREEDIT_PREFIXES) and not any(w in app for w in _WEB_APPS):
            return "preedit"
        return popup

    # -- calls from ibus-daemon -------------------------------------------------------

    def process_key(self, keyval: int, keycode: int, state: int) -> bool:
        """True when the key is consumed (the application never sees it).
        What the key shows waits for :meth:`key_done`, which must follow
        once the answer has been sent (see the module docstring)."""
        if state & wire.RELEASE_MASK:
            with self._lock:
                if keyval in self._swallowed:
                    self._swallowed.discard(keyval)
                    return True
            return False
        with self._lock:
            self._in_key = True
            self._after_key = None
            self._preedit_in_key = False
        if self.frontend.focused is not self:
            self.focus_in()  # a client without focus events (no CAP_FOCUS)
        self._sync_surrounding()
        self.echoes.key_pressed()
        self._keys_since_focus += 1
        event = key_event(keyval, state)
        consumed = self._decide(keyval, event)
        if not consumed and event.kind is not Kind.MODIFIER:
            self._close_preedit()
            if event.kind is Kind.CHAR:  # the application puts it before the caret
                self.trail.changed(1, line_break=event.char == "\n", text=event.char)
                self.carets.key_typed()
            elif event.kind is Kind.BACKSPACE:  # and takes this one away
                self.trail.changed(-1)
            elif event.kind not in (Kind.ESCAPE, Kind.DELETE, Kind.OTHER):  # the caret stays for those
                self.trail.anchor()  # it moves or edits in ways no count tells
        return consumed

    def _decide(self, keyval: int, event: KeyEvent) -> bool:
        spec = event_spec(event)
        controller = self.controller
        if (controller.visible and not self.terminal.waiting
                and (self._shown[1] != "shell" or self.frontend.shell.drawn(controller.visible))):
            piece = controller.accept(spec)  # None: not an accept key, or nothing readable to insert
            if piece is not None:
                self._swallow(keyval)
                controller.inserted(self.commit(piece))
                return True
            if spec == controller.config.dismiss_key or event.kind is Kind.ESCAPE:
                controller.on_key(event)
                self._swallow(keyval)
                return True
        self._feed(event)
        return False

    def _feed(self, event: KeyEvent) -> None:
        """A key that passes on goes to the controller, or is held while the
        field is unidentified."""
        if self.purpose == wire.PURPOSE_TERMINAL and self.terminal.hold(
                event, self.controller.config.ibus_terminals == "suggest"):
            return  # it waits until the terminal shows it (terminal_echo)
        if self.unidentified():
            self._held.append(event)
            return
        if self._held:  # left over from before the client said it cannot report text
            self._release_held("the client reports no text")
        self._pass(event)

    def _pass(self, event: KeyEvent) -> None:
        self.echoes.key_passed(self.controller.buffer_text)
        self.controller.on_key(event)

    def _release_held(self, why: str) -> None:
        """The held keys go on to the controller, in order."""
        log.debug("%s: %d held keys go on", why, len(self._held))
        while self._held:
            self._pass(self._held.popleft())

    def _privacy_changed(self, verdict: Optional[bool]) -> None:
        """Something the privacy rules look at changed (``verdict``: the one
        before): the controller hears of it, held keys go or are dropped."""
        if self.is_private():
            self._held.clear()
        if self.frontend.focused is not self:
            return
        if self.password_verdict() != verdict:
            self.controller.on_focus(self.focus_state())  # the privacy rules again
        if self._held and not self.unidentified():
            self._release_held("the field is not masked")

    def key_done(self) -> None:
        """The answer to the key press has been sent: the application has the
        key (or knows it was consumed), so what waited for it is shown now."""
        with self._lock:
            if not self._in_key:
                return
            self._in_key = False
            text, self._after_key = self._after_key, None
            drawn, self._drawn = self._drawn, None
            changed, self._preedit_in_key = self._preedit_in_key, False
            if text:
                self._render(text)
            elif changed and self._shown[1] != "popup":  # see "The last word" above
                self._draw("preedit", self._shown[0])
        if text and drawn is not None:
            self._tell(text, drawn)

    def focus_in(self, object_path: str = "", client: Optional[str] = None) -> None:
        if client is not None:
            self.client = client
        self._field = self.frontend.next_field_id()
        self._keys_since_focus = 0
        self.echoes.reset()
        self._masked = False
        self._text_seen = False
        self._held.clear()
        self.terminal.clear()
        self._surrounding = None
        self._surrounding_fresh = False
        self.trail.clear()
        self.carets.new_field()
        # Nothing is focused while the controller switches fields: a result
        # for the old field that is being shown right now goes nowhere, and
        # once on_focus() returns no result for it can be shown any more.
        previous = self.frontend.set_focused(None)
        if previous is not None and previous is not self:
            previous.display("")
        log.debug("focus in (field %d, client %s)", self._field, self.client or "unnamed")
        self.controller.on_focus(self.focus_state())
        self.frontend.set_focused(self)
        if self.frontend.shell is not None:
            self.frontend.shell.recall_caret()  # KWin's effect: the new field's caret before its first key
        self.publish_properties(update=False)
        self.output.require_surrounding_text()

    def focus_out(self, object_path: str = "") -> None:
        if self.frontend.unfocus(self):  # from now on nothing is shown here
            self.carets.focus_lost()
            # A new, empty field id: the controller resets and cancels pending work,
            # so a late result cannot paint anywhere.
            self.controller.on_focus(FocusState(window_id=self.frontend.next_field_id()))
        self.display("")

    def reset(self) -> None:
        """The client reset the context (a click, a programmatic change)."""
        self.display("")
        self.trail.anchor()
        self._held.clear()  # the caret moved: the keys before it no longer tell the text before it
        self.terminal.restart()
        if self.frontend.focused is self:
            self.controller.on_key(KeyEvent(Kind.CARET_MOVED, name="reset"))

    def enable(self) -> None:
        self.output.require_surrounding_text()

    def disable(self) -> None:
        self.focus_out()

    def set_capabilities(self, caps: int) -> None:
        verdict = self.password_verdict()
        self.capabilities, self._caps_told = caps, True
        self._privacy_changed(verdict)  # a client that stops reporting text leaves the field unidentified

    def set_content_type(self, purpose: int, hints: int) -> None:
        if (purpose, hints) == (self.purpose, self.hints):
            return
        log.debug("content type: purpose %d, hints %#x", purpose, hints)
        verdict = self.password_verdict()
        self.purpose, self.hints = purpose, hints
        if self.frontend.focused is self and self.password_verdict() == verdict:
            self.controller.on_focus(self.focus_state())
        self._privacy_changed(verdict)

    def set_surrounding_text(self, text: str, cursor: int, anchor: int) -> None:
        verdict = self.password_verdict()
        released: list[KeyEvent] = []
        if self.purpose == wire.PURPOSE_TERMINAL:  # its caret's line alone counts (terminal_echo)
            text, cursor, anchor = caret_line(text, cursor, anchor)
            released = self.terminal.report(text[: min(cursor, anchor)])
        masked = bool(text) and set(text) <= MASK_CHARS
        if text:  # an empty field tells nothing
            self._masked = masked
            self._text_seen = self._text_seen or not masked
        self._privacy_changed(verdict)
        if self._masked:
            self._surrounding = None  # nothing of a password field is kept
            return
        self.echoes.reported()
        log.debug("surrounding text: caret at %d of %d", cursor, len(text))
        self._surrounding = (text, cursor, anchor)
        self._surrounding_fresh = True
        if self._keys_since_focus == 0 and self.frontend.focused is self:
            self._sync_surrounding()  # the field's text at focus-in: context before any key
        for event in released if self.frontend.focused is self else ():
            self._pass(event)  # the terminal shows them

    def set_cursor_location(self, x: int, y: int, w: int, h: int) -> None:
        """Where the client says its caret is (IBus's popup is drawn there)."""
        log.debug("cursor location (%d, %d, %d, %d)", x, y, w, h)
        self.trail.report((x, y, w, h))
        if self.frontend.shell is not None and self.frontend.focused is self:
            self.carets.reported(h, self._keys_since_focus)
            if not self.trail.short_of_commit():  # else a caret from before a commit: the suggestion waits on
                self.frontend.shell.caret_moved(self.carets.logged_shift(w))

    def commit(self, text: str) -> bool:
        """Put ``text`` into the field (an accepted suggestion); False when that failed."""
        try:
            if self.frontend.shell is not None:
                self.frontend.shell.caret_pending()  # draw the next suggestion where the caret goes
            self.trail.changed(len(text), line_break="\n" in text, commit=True, text=text)
            self.output.commit_text(text)
        except Exception as e:
            log.error("committing %d characters failed: %s", len(text), describe_exception(e))
            return False
        return True

    def property_activate(self, name: str, state: int) -> None:
        """A menu entry chosen, by the panel or by any IBus client: see :mod:`menu`."""
        if menu.activate(self.controller, self.frontend.actions, name, state == wire.PROP_STATE_CHECKED):
            self.publish_properties(update=False)

    # -- helpers ----------------------------------------------------------------------

    def _swallow(self, keyval: int) -> None:
        with self._lock:
            self._swallowed.add(keyval)

    def _sync_surrounding(self) -> None:
        """Compare the field's newest text with ours (see the module docstring)."""
        if not self._surrounding_fresh or self._surrounding is None:
            return
        self._surrounding_fresh = False
        text, cursor, anchor = self._surrounding
        before = text[: min(cursor, anchor)]
        tracked = self.controller.buffer_text
        if self.echoes.is_echo(tracked, before):
            if not continues(tracked, before):
                log.debug("the field's text lags the keys: kept the tracked text")
            return
        log.debug("surrounding text differs from the tracked text: taking the field's (%d chars)", len(before))
        self.controller.on_focus(self.focus_state(text_before_caret=before))

    def display(self, text: str, drawn: Optional[Drawn] = None) -> None:
        """Show ``text`` as the suggestion ("" hides it); ``drawn`` hears once it is sent.  While
        a key press is being handled, hiding happens at once and showing waits for :meth:`key_done`."""
        with self._lock:
            if self._in_key:
                self._after_key, self._drawn = text or None, drawn
                if text:
                    return
            self._render(text)
        if text and drawn is not None:
            self._tell(text, drawn)

    def _tell(self, text: str, drawn: Drawn) -> None:
        """``drawn`` hears what of ``text`` is on screen: all of it once sent to the
        popup or the preedit; what GNOME Shell answers for its extension."""
        shell = self.frontend.shell
        if self._shown == (text, "shell") and shell is not None:
            shell.when_drawn(text, drawn)
        else:
            drawn(text)

    def _close_preedit(self) -> None:
        """A key is about to pass through: close an open preedit first (it
        is drawn again after the key, if it is still wanted)."""
        with self._lock:
            text, mode = self._shown
            if mode != "preedit" or not text:
                return
            if self._in_key and self._after_key is None:
                self._after_key = text
            self._shown = ("", "")
            self._draw(mode, "")

    def _render(self, text: str) -> None:
        """Lock held: draw ``text`` ("" hides) unless it is what is shown.
        The signals are sent under the lock, so two threads never draw out
        of order."""
        mode = self.display_mode() if text else self._shown[1]
        if (text, mode) == self._shown or (not text and not self._shown[0]):
            return
        old_mode = self._shown[1]
        self._shown = (text, mode if text else "")
        if text and old_mode and old_mode != mode:
            self._draw(old_mode, "")
        if text:
            log.debug("suggestion shown as %s (%d chars)", mode, len(text))
        self._draw(mode, text)

    def _draw(self, mode: str, text: str) -> None:
        if self._in_key and mode == "preedit":
            self._preedit_in_key = True
        if mode == "popup":
            self.output.update_auxiliary(text, bool(text))
        elif mode == "shell":
            self.frontend.shell.draw(text, self._surrounding, self.carets.shift())
        else:
            attrs = wire.ghost_attributes(len(text), GHOST_COLOUR, self.frontend.prediction_hint) if text else []
            # Cursor 0: the caret stays before the suggestion.
            self.output.update_preedit(text, attrs, 0, bool(text))

    @property
    def shown(self) -> str:
        with self._lock:
            return self._shown[0]

    def publish_properties(self, update: bool) -> None:
        controller = self.frontend.controller
        if controller is None:
            return
        st = controller.state()
        props = menu.entries(st.enabled, st.paused, *self.frontend.status, self.frontend.actions, self.app_id())
        if update:
            for p in props:
                self.output.update_property(p)
        else:
            self.output.register_properties(props)


def new_engine(frontend: IBusFrontend, output: EngineOutput) -> Engine:
    """A new engine object on ``frontend`` (ibus-daemon's CreateEngine)."""
    engine = Engine(frontend, output)
    frontend.add_engine(engine)
    return engine
