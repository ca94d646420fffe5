"""What of a field's text the memory learns, and when: the controller's side.

**Only what the model was already asked about, and only what the user
typed.**  The controller tells the learner each text it sends to the model
(:meth:`Learner.asked`); it never sends one for a private field (passwords,
PIN and no-echo fields, denylisted applications, ghosttype off or paused:
nothing is captured there) nor for a terminal line its terminal has not shown
(a password at a no-echo prompt), so none of those can reach the memory.  Of
that text the learner keeps only the end the user produced in this stretch:
the characters typed (and accepted with Tab) since the stretch began, counted
key by key, not what the field held before (a quoted mail, a page's text).

A *stretch* is the run of keys between two resets of the controller's buffer
(focus change, click, caret move, shortcut) or line ends; when it ends
(:meth:`Learner.flush`) its typed text becomes one piece of the memory.  A
stretch the controller learns was private after all (a terminal line typed
with echo off) is dropped unsaved (:meth:`Learner.drop`).  Where the buffer
is taken from the field because the two disagree (a key the listener missed,
a field that stayed behind the keys on a busy machine), the stretch goes on
while the field still holds the text it began after (:meth:`Learner.resync`):
a name typed across such a correction is learned whole, not in two pieces
that each know half of it.

Not thread-safe by itself: the controller calls it with its lock held.  Never
logs text.
"""

from __future__ import annotations

import logging
from typing import Optional

from daemon.memory.store import Memory

log = logging.getLogger(__name__)

#: Characters in which the field may differ from the keys past their common beginning for a resync to go on
#: with the same stretch (keys the listener missed on a busy machine).
MISSED_KEYS = 3


class Learner:
    """See the module docstring."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._typed = 0  #: characters the user produced in this stretch (keys and accepts)
        self._asked: Optional[str] = None  #: the last text the model was asked about in this stretch
        self._typed_at_ask = 0  #: ``_typed`` when that was
        #: the text before the stretch's first character, as the stretch's first ask showed it
        self._base: Optional[str] = None

    def typed(self, count: int) -> None:
        """``count`` characters were typed or accepted (negative: erased)."""
        self._typed = max(0, self._typed + count)

    def asked(self, text: str) -> None:
        """The model is asked about ``text``, the whole text before the caret."""
        if self._base is None:
            self._base = text[:max(0, len(text) - self._typed)]
        self._asked = text
        self._typed_at_ask = self._typed

    def resync(self, field: str, keys: str) -> bool:
        """The buffer, ``keys``, is about to be taken from the field, which holds ``field`` before the caret.
        The stretch goes on where the field still begins with the text the stretch began after and holds
        the keys but for at most :data:`MISSED_KEYS` characters more or fewer (keys the listener missed,
        keys the application dropped), perhaps without the latest of them yet (a busy application); its
        typed part is counted from the field from then on.  Anything else (text pasted, the field changed
        under the keys) ends it.  True when it ended."""
        base = self._base
        goes_on = (base is not None and field.startswith(base) and keys.startswith(base)
                   and _near(field, keys, len(base), len(base), MISSED_KEYS))
        log.debug("the buffer taken from the field (%d characters, the keys' %d, the stretch's %s after %s): the "
                  "stretch %s", len(field), len(keys), self._typed, "nothing" if base is None else len(base),
                  "goes on" if goes_on else "ends")
        if goes_on:
            self._typed = len(field) - len(base or "")
            return False
        self.flush()
        return True

    def flush(self) -> bool:
        """The stretch ends: remember what the user typed in it (as far as the
        model was asked about it).  True when a piece went into the memory."""
        asked, typed = self._asked, min(self._typed_at_ask, len(self._asked or ""))
        self.drop()
        if not asked or typed <= 0:
            return False
        return self.memory.add(asked[-typed:])

    def drop(self) -> None:
        """Forget the stretch unsaved."""
        self._typed = 0
        self._asked = None
        self._typed_at_ask = 0
        self._base = None


def _near(field: str, keys: str, i: int, j: int, budget: int) -> bool:
    """Whether ``field[i:]`` and ``keys[j:]`` agree after at most ``budget`` characters are left out of
    either, up to where the field ends (it may lag the keys) and with at most the budget left over where
    the keys end (the field may not run on past them: that is text from elsewhere)."""
    while i < len(field) and j < len(keys) and field[i] == keys[j]:
        i, j = i + 1, j + 1
    if i == len(field):
        return True
    if j == len(keys):
        return len(field) - i <= budget
    return budget > 0 and (_near(field, keys, i + 1, j, budget - 1) or _near(field, keys, i, j + 1, budget - 1))
