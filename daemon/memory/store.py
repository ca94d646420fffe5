"""The memory of what the user typed: pieces of text, oldest first, bounded.

A *piece* is one stretch of text typed in an ordinary field (see
:mod:`daemon.memory.learner` for what qualifies), learned line by line: the
newest piece may grow while its stretch goes on (:meth:`Memory.add` with the
stretch's token), up to :data:`MAX_PIECE_CHARS`, so that the lines of one
text stay together.  Otherwise the memory only appends, evicts the oldest
whole pieces when the total passes ``max_chars``, or forgets everything.
``generation`` changes with every change, so readers (the cache model on the
worker's thread) can rebuild what they derive from it only when it moved.

Thread-safe: the controller's thread adds, the worker's thread reads, the
settings window's ``forget`` clears.  Never logs text.
"""

from __future__ import annotations

import collections
import threading
from typing import Callable, Iterable, Optional

#: The default bound, in characters (about 40,000 tokens of English prose).
DEFAULT_MAX_CHARS = 200_000
#: A piece shorter than this is not worth remembering (a word typed into a search box).
MIN_PIECE_CHARS = 8
#: The newest piece grows with its stretch up to this many characters; the stretch goes on in a new piece.
MAX_PIECE_CHARS = 8_000


class Memory:
    """See the module docstring."""

    def __init__(self, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        if max_chars < 1:
            raise ValueError("max_chars must be positive")
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._pieces: collections.deque[str] = collections.deque()
        self._chars = 0
        self._generation = 0
        self._listeners: list[Callable[[], None]] = []
        #: the stretch the newest piece belongs to (see :meth:`add`); None: no piece may grow
        self._newest: Optional[object] = None

    # ------------------------------------------------------------------ changes

    def add(self, text: str, stretch: Optional[object] = None) -> bool:
        """Remember ``text``: one piece, or with ``stretch`` (a token the
        learner keeps for one stretch) the next part of that stretch, added
        to the newest piece where that piece is the stretch's and stays
        within :data:`MAX_PIECE_CHARS`.  False when a new piece would be too
        short to keep (:data:`MIN_PIECE_CHARS`).  A piece longer than the
        whole bound keeps its newest ``max_chars``."""
        with self._lock:
            grows = (stretch is not None and stretch is self._newest and bool(self._pieces)
                     and len(self._pieces[-1]) + len(text) <= MAX_PIECE_CHARS)
            if grows:
                newest = self._pieces.pop()
                self._chars -= len(newest)
                text = newest + text
            elif len(text.strip()) < MIN_PIECE_CHARS:
                return False
            text = text[-self.max_chars:]
            self._pieces.append(text)
            self._chars += len(text)
            while self._chars > self.max_chars:
                self._chars -= len(self._pieces.popleft())
            self._newest = stretch  # the piece just appended is never the one evicted
            self._generation += 1
        self._changed()
        return True

    def extend(self, pieces: Iterable[str]) -> int:
        """Remember several pieces, oldest first; returns how many were kept."""
        return sum(1 for piece in pieces if self.add(piece))

    def prepend(self, pieces: Iterable[str]) -> int:
        """Put ``pieces`` (oldest first) before everything held: what an
        earlier run kept (:mod:`daemon.memory.persist`), read after this run
        began to learn.  The same rules as :meth:`add`; past ``max_chars``
        the oldest go first.  Returns the generation after the change, read
        under the same lock (so a saver can tell its own load from a later
        change)."""
        older = [text[-self.max_chars:] for text in pieces if len(text.strip()) >= MIN_PIECE_CHARS]
        with self._lock:
            if older:
                self._pieces.extendleft(reversed(older))
                self._chars += sum(len(text) for text in older)
                while self._chars > self.max_chars:
                    self._chars -= len(self._pieces.popleft())
                self._generation += 1
            generation = self._generation
        if older:
            self._changed()
        return generation

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._pieces.clear()
            self._newest = None
            self._chars = 0
            self._generation += 1
        self._changed()

    # ------------------------------------------------------------------ reading

    @property
    def generation(self) -> int:
        with self._lock:
            return self._generation

    def pieces(self) -> tuple[str, ...]:
        """A snapshot of the pieces, oldest first."""
        with self._lock:
            return tuple(self._pieces)

    def snapshot(self) -> tuple[int, tuple[str, ...]]:
        """(generation, pieces) read together."""
        with self._lock:
            return self._generation, tuple(self._pieces)

    def __len__(self) -> int:
        """Characters held."""
        with self._lock:
            return self._chars

    # ------------------------------------------------------------------ listeners

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` (on the changing thread, no lock held) after each change."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def __repr__(self) -> str:  # never the text
        with self._lock:
            return f"Memory({len(self._pieces)} pieces, {self._chars} chars of {self.max_chars})"


def memory_for(learn: str, max_chars: int = DEFAULT_MAX_CHARS) -> Optional[Memory]:
    """The memory a ``learn`` setting asks for: none for ``"off"``."""
    return None if learn == "off" else Memory(max_chars)
