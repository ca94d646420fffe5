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
(focus change, click, caret move, shortcut); its typed text becomes one piece
of the memory, learned line by line: at each line end
(:meth:`Learner.line_end`) the lines typed since the last one are added to
the stretch's piece, so that what follows a line in code or a letter is
learned with it, and the rest when the stretch ends (:meth:`Learner.flush`);
a line longer than :data:`PART_CHARS` (or half the controller's buffer) is
learned in parts as it is asked about, before the buffer lets its beginning
go.  (Learned one line a piece instead, the lines of pyparsing's modules
saved 0.4 and 1.2 points fewer keystrokes: ``daemon/evaluation/README.md``.)
In a terminal each command line is a stretch of its own (the controller
flushes at Enter there).  A stretch the controller learns was private after
all (a terminal line typed with echo off) is dropped unsaved
(:meth:`Learner.drop`).  Erasing back into a line already learned leaves
that line as it was learned: the corrected line begins a new piece.  Where the buffer
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
#: Unsaved typed characters after which a line is learned in part, before its line end (at most half the
#: controller's buffer, which keeps only its newest characters).
PART_CHARS = 512


class Learner:
    """See the module docstring."""

    def __init__(self, memory: Memory, buffer_chars: int = 2 * PART_CHARS) -> None:
        self.memory = memory
        self.set_buffer(buffer_chars)
        self._typed = 0  #: characters the user produced in this stretch (keys and accepts)
        self._asked: Optional[str] = None  #: the last text the model was asked about in this stretch
        self._typed_at_ask = 0  #: ``_typed`` when that was
        #: the text before the stretch's first character, as the stretch's first ask showed it
        self._base: Optional[str] = None
        self._saved = 0  #: characters of the stretch's typed text already in the memory
        self._piece = object()  #: the stretch's token for :meth:`Memory.add <daemon.memory.store.Memory.add>`
        self._restart = False  #: the next part begins a new piece after an erase: from its line's start

    def set_buffer(self, buffer_chars: int) -> None:
        """The controller's buffer keeps ``buffer_chars`` characters: a line is learned in parts of at most
        half of it."""
        self.part_chars = max(1, min(PART_CHARS, buffer_chars // 2))

    def typed(self, count: int) -> None:
        """``count`` characters were typed or accepted (negative: erased)."""
        self._typed = max(0, self._typed + count)
        self._unsave()

    def _unsave(self) -> None:
        """Where the stretch's typed text went back into what was saved, that stays as it was saved and
        what is typed next begins a new piece."""
        if self._typed < self._saved:
            self._saved = self._typed
            self._piece = object()
            self._restart = True

    def asked(self, text: str) -> None:
        """The model is asked about ``text``, the whole text before the caret."""
        if self._base is None:
            self._base = text[:max(0, len(text) - self._typed)]
        self._asked = text
        self._typed_at_ask = self._typed
        if self._typed_at_ask - self._saved >= self.part_chars:
            self._save()  # a long line, in part: its piece grows with the rest

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
            self._unsave()
            return False
        self.flush()
        return True

    def line_end(self) -> bool:
        """A line ends and the stretch goes on: what was typed since the last
        part saved goes into the stretch's piece.  True when it did."""
        return self._save()

    def flush(self) -> bool:
        """The stretch ends: remember what the user typed in it (as far as the
        model was asked about it).  True when a part went into the memory."""
        saved = self._save()
        self.drop()
        return saved

    def _save(self) -> bool:
        """Add the typed text the model was asked about and the memory does not hold yet (a part too short
        for a piece of its own waits for the next)."""
        asked, unsaved = self._asked, self._typed_at_ask - self._saved
        if not asked or unsaved <= 0:
            return False
        part = asked[-unsaved:]
        if self._restart:  # the line that was corrected, whole: from its start in the typed text
            typed = asked[-self._typed_at_ask:]
            part = typed[typed.rfind("\n", 0, len(typed) - len(part)) + 1:]
        if not self.memory.add(part, self._piece):
            return False
        self._saved = self._typed_at_ask
        self._restart = False
        return True

    def drop(self) -> None:
        """Forget the stretch: what it has not saved yet is not saved."""
        self._typed = 0
        self._asked = None
        self._typed_at_ask = 0
        self._base = None
        self._saved = 0
        self._piece = object()
        self._restart = False


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


def learn_text(memory: Memory, text: str) -> int:
    """Put ``text`` into ``memory`` as the learner keeps a stretch that typed it without a correction: line
    by line, long lines in parts, into pieces of at most :data:`~daemon.memory.store.MAX_PIECE_CHARS` (what
    ``ghosttype eval --learn-from`` reads).  Returns the characters kept."""
    piece, pending, kept = object(), "", 0
    for i, line in enumerate(text.split("\n")):
        line = "\n" + line if i else line  # the line end is typed after the line was saved
        for at in range(0, len(line), PART_CHARS):
            pending += line[at:at + PART_CHARS]
            if memory.add(pending, piece):
                kept, pending = kept + len(pending), ""
    return kept
