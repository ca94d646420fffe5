"""The keys of a terminal field wait until the terminal shows them.

A field whose input purpose is *terminal* may be at a password prompt
(``sudo``, ``ssh``, ``passwd``, ``gpg``) at any Return, and no terminal tells
an input method that its echo is off (see
:mod:`daemon.controller.terminal_prompt`).  So the engine gives a terminal's
keys to the controller only once the terminal has reported its caret's line
(surrounding text) showing every character typed on it and no prompt for a
secret:

* each key waits here while a character typed on the line has not been seen
  on it, and while the line begun by focus-in, Return or a reset has not been
  reported (a report of the line the Return left does not count);
* a report that shows them lets every waiting key go on, in order;
* a line that asks for a secret (:func:`~daemon.controller.terminal_prompt.secret_prompt`)
  makes the field private (the controller then clears and blocks it) and
  its keys are dropped, until a report shows another line;
* a Return while a typed character was never seen drops the line's keys:
  they were typed with echo off; a BackSpace that takes such a character
  away goes nowhere either, with it.

A terminal that reports no text (VTE: gnome-console, gnome-terminal) never
shows its keys, so they never go on; ``ibus_terminals = "suggest"`` lets the
keys of a terminal that has reported nothing since focus-in go on at once.

The waiting keys live in memory only, at most ``size`` of them, and are
dropped at focus-in and reset.  Threads: the engine's (the D-Bus thread).
"""

from __future__ import annotations

import collections
from typing import Optional

from daemon.capture.events import KeyEvent, Kind
from daemon.controller.terminal_prompt import secret_prompt, shows_typed


class TerminalEcho:
    """One terminal field's waiting keys; see the module docstring."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._held: collections.deque[KeyEvent] = collections.deque(maxlen=size)
        self._typed = ""  #: characters typed on the caret's line, not seen on it yet
        self._line: Optional[str] = None  #: the caret's line (to the caret) as last reported; None: none since focus-in
        self._seen = False  #: the caret's line has been reported since it began
        self._left: Optional[str] = None  #: the line a Return left (a late report of it is not the new line)
        self.secret = False  #: the caret's line asks for a secret

    @property
    def waiting(self) -> bool:
        """Keys wait here: the controller has not seen the field's newest keys."""
        return bool(self._held)

    def clear(self) -> None:
        """A new field (focus-in): nothing of the last one is kept."""
        self._held.clear()
        self._typed = ""
        self._line = self._left = None
        self._seen = self.secret = False

    def restart(self) -> None:
        """The client reset its context: the waiting keys are dropped and the
        next report tells the line again."""
        self._held.clear()
        self._typed = ""
        self._left, self._seen = self._line, False

    def hold(self, event: KeyEvent, suggest_unread: bool) -> bool:
        """True when ``event`` stays here or is dropped; False when it goes
        on to the controller now.  ``suggest_unread``: a terminal that has
        reported no text since focus-in lets its keys go on."""
        if suggest_unread and self._line is None:
            return False
        kind = event.kind
        if kind is Kind.CHAR:
            self._typed = (self._typed + event.char)[-self._size:]
        elif kind is Kind.BACKSPACE and self._typed:
            # It takes away a character the controller never got: both go nowhere.
            self._typed = self._typed[:-1]
            for i in range(len(self._held) - 1, -1, -1):
                if self._held[i].kind is Kind.CHAR:
                    del self._held[i]
                    break
            return True
        elif kind is Kind.ENTER:
            unseen = bool(self._typed)
            self._left, self._seen, self._typed = self._line, False, ""
            if unseen:  # typed with echo off: the line's keys go nowhere
                self._held.clear()
                return True
        if self.secret:
            self._held.clear()
            self._typed = ""
            return True
        if self._typed or not self._seen or self._held:
            self._held.append(event)
            return True
        return False

    def report(self, line: str) -> list[KeyEvent]:
        """The terminal reported its caret's line (up to the caret); returns
        the keys that go on now, in order."""
        self._line = line
        self.secret = secret_prompt(line)
        if self.secret:
            self._held.clear()
            self._typed = ""
            self._seen = True
            return []
        if not self._seen:
            if line == self._left:
                return []
            self._seen = True
        if not shows_typed(line, self._typed):
            return []
        self._typed = ""
        released = list(self._held)
        self._held.clear()
        return released
