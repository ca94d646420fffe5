"""What the user has typed before the caret in the focused field, as far as we
can tell from keystrokes alone.

:class:`InputTracker` is a bounded ring buffer (``deque(maxlen=...)``): memory
stays bounded however long the daemon runs, and the text before the buffer's
start is simply forgotten.  Keys whose effect on the text we cannot know (caret
moves, shortcuts, focus changes) reset it, unless accessibility re-reads the
field (:meth:`InputTracker.replace`).

:class:`InjectionEcho` exists because text ghosttype types into an application
comes back through the keyboard listener (on X11, XTest events are recorded
like real ones).  The tracker already learned that text from
:meth:`InputTracker.accept`; the echo must not be appended a second time.

Neither class locks: their owners serialise access (the controller owns the
tracker, the overlay's ``AcceptKeys`` the echo).  Neither ever logs or
persists the text.
"""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass
from typing import Callable, Optional

from daemon.capture.events import KeyEvent, Kind

#: Events after which the text before the caret is unknown.
RESET_KINDS = frozenset({Kind.CARET_MOVED, Kind.FOCUS_CHANGED, Kind.SHORTCUT})


@dataclass(frozen=True)
class Snapshot:
    """Identifies one state of the buffer so a later state can be related to
    it: same ``epoch`` and a larger ``end`` means "the same text with more
    characters typed after it"."""

    epoch: int  #: bumped by every change that is not an append
    end: int  #: characters appended since the epoch began (not bounded)
    generation: int  #: bumped by every change of any kind


class InputTracker:
    """Bounded text-before-caret buffer driven by :class:`KeyEvent` s."""

    def __init__(self, buffer_chars: int = 2000) -> None:
        if buffer_chars < 1:
            raise ValueError("buffer_chars must be at least 1")
        self._buf: collections.deque[str] = collections.deque(maxlen=buffer_chars)
        self._epoch = 0
        self._end = 0
        self._generation = 0

    # ------------------------------------------------------------------ reading

    @property
    def text(self) -> str:
        """The known text before the caret (at most ``buffer_chars`` characters)."""
        return "".join(self._buf)

    @property
    def generation(self) -> int:
        """Changes whenever the content changes (or is reset)."""
        return self._generation

    @property
    def buffer_chars(self) -> int:
        return self._buf.maxlen or 0

    def __len__(self) -> int:
        return len(self._buf)

    def snapshot(self) -> Snapshot:
        return Snapshot(self._epoch, self._end, self._generation)

    def typed_since(self, snap: Snapshot) -> Optional[str]:
        """The characters appended since ``snap`` if nothing else happened in
        between (no deletion, reset, replace), else ``None``."""
        if snap.epoch != self._epoch or snap.end > self._end:
            return None
        n = self._end - snap.end
        if n == 0:
            return ""
        if n > len(self._buf):
            return None
        return "".join(list(self._buf)[-n:])

    # ------------------------------------------------------------------ writing

    def feed(self, event: KeyEvent) -> None:
        """Apply one key event (see the module docstring for what each does)."""
        kind = event.kind
        if kind is Kind.CHAR:
            self._append(event.char)
        elif kind is Kind.ENTER:
            self._append("\n")
        elif kind is Kind.TAB:
            self._append("\t")
        elif kind is Kind.BACKSPACE:
            self.backspace()
        elif kind in RESET_KINDS:
            self.clear()
        # DELETE (after the caret), ESCAPE, MODIFIER, OTHER: text before the caret unchanged

    def backspace(self) -> None:
        if self._buf:
            self._buf.pop()
        self._new_epoch()

    def accept(self, text: str) -> None:
        """Record text ghosttype inserted itself (an accepted suggestion): it is
        now before the caret exactly as if typed."""
        self._append(text)

    def replace(self, text: str) -> None:
        """Replace the buffer with text re-read from the field (accessibility);
        only the last ``buffer_chars`` characters are kept."""
        self._buf.clear()
        self._buf.extend(text)
        self._new_epoch()

    def clear(self) -> None:
        """Forget everything (caret moved, focus changed, disabled, paused)."""
        self._buf.clear()
        self._new_epoch()

    def _append(self, s: str) -> None:
        if not s:
            return
        self._buf.extend(s)
        self._end += len(s)
        self._generation += 1

    def _new_epoch(self) -> None:
        self._epoch += 1
        self._end = 0
        self._generation += 1


def _echo_of(ch: str) -> tuple[Kind, str]:
    if ch in "\r\n":
        return (Kind.ENTER, "")
    if ch == "\t":
        return (Kind.TAB, "")
    return (Kind.CHAR, ch)


class InjectionEcho:
    """The key events our own injection is expected to produce, in order.

    :meth:`expect` is called (before injecting) with the text about to be
    typed; :meth:`consume` returns True for each listener event that is that
    echo, which the caller then ignores.  Expectations expire (``grace_s``
    plus ``per_char_s`` per character after the last :meth:`expect`) so a
    backend that does not echo cannot make us ignore real typing for long.
    If one echo event is lost, up to ``lookahead`` expected events are skipped
    to resynchronise.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        grace_s: float = 1.0,
        per_char_s: float = 0.02,
        lookahead: int = 3,
    ) -> None:
        self._clock = clock
        self._grace = grace_s
        self._per_char = per_char_s
        self._lookahead = lookahead
        self._pending: collections.deque[tuple[Kind, str]] = collections.deque()
        self._deadline = 0.0

    def __len__(self) -> int:
        return len(self._pending)

    def expect(self, text: str) -> None:
        self._expire()
        self._pending.extend(_echo_of(c) for c in text)
        self._deadline = self._clock() + self._grace + self._per_char * len(self._pending)

    def consume(self, event: KeyEvent) -> bool:
        self._expire()
        if not self._pending or event.kind not in (Kind.CHAR, Kind.ENTER, Kind.TAB):
            return False
        got = (event.kind, event.char if event.kind is Kind.CHAR else "")
        for i, want in enumerate(list(self._pending)[: self._lookahead + 1]):
            if want == got:
                for _ in range(i + 1):
                    self._pending.popleft()
                return True
        return False

    def clear(self) -> None:
        self._pending.clear()

    def _expire(self) -> None:
        if self._pending and self._clock() > self._deadline:
            self._pending.clear()
