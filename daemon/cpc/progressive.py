"""Progressive context: answer from the text near the caret first, while the
full context window is prefilled in the background.

Clicking into a field with 1,500 characters before the caret means ~300-400
prompt tokens to decode before the first suggestion (1.3-1.7 s with one
thread on a laptop CPU): the user has typed their first word long before.
So when most of the full window's prompt is not in the backend's cache yet,
a request is answered from a short window near the caret
(``BeamParams.quick_context_chars``, a few dozen tokens), and the full
window's prompt becomes *pending warm-up*: the worker decodes it in small
chunks (:data:`WARM_CHUNK` tokens, so a keystroke waits at most one chunk)
whenever it has nothing else to do.  Once it is cached, requests use the full
window again.

Both windows keep their own coarse-stepped start (:class:`ContextWindow`),
so neither prompt changes while the user types inside a word and no prompt
token is decoded twice; the backend keeps the two prompts in different
sequence slots.  A backend that cannot say what it has cached (no
``cached_tokens``) always gets the full window.
"""

from __future__ import annotations

from typing import Callable, Optional

from .lm import CancelCheck, TokenLM
from .split import Split
from .suggestion import BeamParams
from .window import ContextWindow

#: Uncached prompt tokens of the full window above which the near window
#: answers first (about 0.1 s of prefill with one thread on SmolLM2).
COLD_TOKENS = 32
#: Prompt tokens decoded per background warm-up step (tens of milliseconds:
#: the longest a keystroke waits for the background work to yield).
WARM_CHUNK = 16

SplitFor = Callable[[str, BeamParams], Split]


class ProgressivePrompt:
    """Chooses each request's prompt and remembers the warm-up left to do
    (one per decoder; used on the worker thread only)."""

    def __init__(self, lm: TokenLM) -> None:
        self._lm = lm
        self._cached: Optional[Callable[[tuple[int, ...]], int]] = getattr(lm, "cached_tokens", None)
        self._full = ContextWindow()
        self._near = ContextWindow()
        self._pending: Optional[tuple[int, ...]] = None
        self.used_near = False  #: the last plan answered from the near window

    @property
    def warming(self) -> bool:
        """A full-window prompt is waiting to be decoded in the background."""
        return self._pending is not None

    def plan(self, text: str, params: BeamParams, split_for: SplitFor) -> Split:
        """The split of the window this request should use; ``split_for``
        tokenizes and splits a window's text for ``params.strategy``."""
        full = split_for(self._full.window(text, int(params.context_chars)), params)
        self._pending = None
        self.used_near = False
        near_chars = int(params.quick_context_chars)
        if self._cached is None or not 0 < near_chars < int(params.context_chars) or len(text) <= near_chars:
            return full
        missing = len(full.stable) - self._have(full.stable)
        if missing <= COLD_TOKENS:
            return full
        near = split_for(self._near.window(text, near_chars), params)
        if len(near.stable) - self._have(near.stable) >= missing:
            return full
        self._pending = tuple(full.stable)
        self.used_near = True
        return near

    def warm_step(self, cancel: Optional[CancelCheck] = None) -> bool:
        """Decode up to :data:`WARM_CHUNK` more tokens of the pending prompt.
        Returns True when it did some work (call again), False when nothing
        is pending.  Raises ``Cancelled``; what was decoded stays cached."""
        target = self._pending
        if target is None or self._cached is None:
            return False
        have = self._cached(target)
        if have >= len(target):
            self._pending = None
            return False
        # Chunks end on multiples of WARM_CHUNK, so a warm-up that was cancelled
        # and resumed cuts the prompt where an uninterrupted one would.
        end = min(len(target), (have // WARM_CHUNK + 1) * WARM_CHUNK)
        self._lm.logprobs([target[:end]], cancel)
        return True

    def _have(self, stable: tuple[int, ...]) -> int:
        """Leading tokens of ``stable`` already cached."""
        assert self._cached is not None
        return self._cached(tuple(stable)) if stable else 0


__all__ = ["COLD_TOKENS", "ProgressivePrompt", "WARM_CHUNK"]
