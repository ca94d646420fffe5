"""The overlay's own touchpoints for the accept keys, implemented once per OS
(:mod:`daemon.frontends.overlay.platform` chooses them): the key suppressor
that swallows them while a suggestion shows, and the injector that types what
they insert.  :class:`~daemon.frontends.overlay.accept_keys.AcceptKeys`
drives both."""

from __future__ import annotations

from typing import Callable, Optional, Protocol, Sequence


class KeySuppressor(Protocol):
    """Swallows the accept keys while armed.

    ``listener_sees_swallowed``: whether the keyboard listener still reports a
    press this suppressor swallowed (X11: the grabbed key is recorded too;
    macOS: pynput reports it before the intercept drops it; Windows: the
    hook drops it before pynput reports it).  The two views of one press are
    paired only when both exist.
    """

    listener_sees_swallowed: bool

    @property
    def armed(self) -> bool:
        """Whether it swallows the keys now (a request still on its way does not count)."""

    def arm(self, on_key: Callable[[str], Optional[bool]]) -> None:
        """Start swallowing the configured keys; call ``on_key(name)`` (from a
        backend thread) for each swallowed press.  When it returns False, the
        press is the application's after all: a suppressor that can replays
        it."""

    def disarm(self) -> None:
        """Stop swallowing: the keys reach applications untouched again."""

    def set_keys(self, keys: Sequence[str]) -> None:
        """Swallow these accept keys from now on (a config reload); raises
        ``ValueError`` for a key it cannot grab, keeping the old ones."""

    def close(self) -> None: ...


class TextInjector(Protocol):
    """Types text as if from the keyboard; the keys come back through the
    keyboard listener, as every synthetic key does."""

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused application (any Unicode; ``\\n`` as Return)."""
