"""``KeySuppressor`` for systems where the keyboard listener's hook can drop keys.

On Windows and macOS the keyboard listener (pynput) already sits in the one
place where a key can be swallowed: the low-level keyboard hook, or the
Quartz event tap.  So the suppressor there is not a second hook but a
decision that hook consults for every key (:class:`~daemon.frontends.base.ListenerHook`).
This module is that decision, free of OS calls: the backend modules
(``windows.keys``, ``macos.keys``) turn a raw event into
``(code, pressed, modifiers, ours)`` and the key specs into :class:`HookKey`
values; everything else (armed or not, exact modifiers, pairing a swallowed
press with its release, reporting to ``on_key``) is here and unit-tested.

Threads: :meth:`HookKeySuppressor.decide` runs on the OS hook thread, which
Windows and macOS cut off (and eventually unhook) when it is slow, so it only
takes a short lock and queues ``on_key`` to a dispatch thread.  ``on_key``
itself (the controller's accept, which types text) must not run on the hook
thread: typing from inside the hook that receives the typed keys would
stall both.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

from daemon.capture.keymap import KeySpecError, normalize_key_spec
from daemon.frontends.base import ListenerHook

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HookKey:
    """One accept key as the OS hook sees it."""

    code: int  #: Windows virtual-key code or macOS virtual keycode
    modifiers: frozenset[str]  #: exactly these of {"ctrl", "alt", "shift", "super"} must be held
    name: str  #: the key as configured, reported to ``on_key``


@dataclass(frozen=True)
class RawKey:
    """A raw hook event, decoded by the backend."""

    code: int
    pressed: bool  #: False for a release
    modifiers: frozenset[str]  #: modifiers held at the time of the event
    ours: bool = False  #: synthesised by ghosttype's own injector: never swallowed


def split_spec(name: str) -> tuple[frozenset[str], str]:
    """``"Ctrl+Right"`` -> ``({"ctrl"}, "right")``, through the one key-spec
    vocabulary the config and the controller use (``normalize_key_spec``).
    Raises ``ValueError`` (``KeySpecError``) for a name that is no key."""
    canonical = normalize_key_spec(name)
    parts = canonical.split("+")
    if len(parts) >= 2 and parts[-1] == "" and parts[-2] == "":  # "ctrl++"
        parts = [*parts[:-2], "+"]
    *mods, key = parts
    return frozenset(mods), key


def parse_hook_keys(names: Iterable[str], code_for: Callable[[str], Optional[int]],
                    system: str) -> list[HookKey]:
    """Key specs -> :class:`HookKey` s, with ``code_for(key)`` giving the OS key
    code of a canonical key name ("tab", "right", "a") or None.  ``system``
    names the OS in error messages.  Raises ``ValueError`` for an unknown key,
    a key this OS has no code for, or two names for the same combination."""
    keys: list[HookKey] = []
    seen: dict[tuple[int, frozenset[str]], str] = {}
    for name in names:
        try:
            mods, key = split_spec(name)
        except KeySpecError as exc:
            raise ValueError(f"{name!r}: {exc}") from None
        code = code_for(key)
        if code is None:
            raise ValueError(f"{name!r}: {system} has no key code for {key!r}")
        if (code, mods) in seen:
            raise ValueError(f"{name!r} and {seen[(code, mods)]!r} are the same key")
        seen[(code, mods)] = name
        keys.append(HookKey(code, mods, name))
    return keys


Dispatch = Callable[[Callable[[str], Any], str], None]


class CallbackThread:
    """Runs callbacks in order on one daemon thread, so the hook never waits."""

    def __init__(self, name: str) -> None:
        self._queue: "queue.Queue[Optional[tuple[Callable[[str], Any], str]]]" = queue.Queue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def __call__(self, fn: Callable[[str], Any], arg: str) -> None:
        self._queue.put((fn, arg))

    def close(self, timeout: float = 1.0) -> None:
        self._queue.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, arg = item
            try:
                fn(arg)
            except Exception:  # one failing accept must not end the thread
                log.exception("accept-key handler failed")


class HookKeySuppressor:
    """``KeySuppressor`` whose swallowing happens in the keyboard listener's hook.

    ``parse(names)`` maps key specs to :class:`HookKey` s (raising
    ``ValueError``); ``decode(a, b)`` turns the hook's raw event pair into a
    :class:`RawKey`, or None for events that are not key presses/releases.
    :attr:`listener_hook` is what the keyboard adapter installs.

    Rules (:meth:`decide`):

    * Only while armed, only the configured keys with exactly their modifiers
      (Tab with Ctrl held is Ctrl+Tab and passes), and never our own
      synthetic keys (the injector passing a Tab on).
    * A swallowed press's release is swallowed too, even if ``disarm()``
      came in between, so applications never see half a key stroke; a press
      that passed makes its release pass.
    * Each swallowed press is reported once to the ``on_key`` that was armed
      at that moment, on the dispatch thread.  ``on_key`` may therefore run
      just after ``disarm()`` returned, for a press swallowed just before it
      (a Tab with nothing left to accept is then typed as a plain Tab, see
      :class:`~daemon.frontends.overlay.accept_keys.AcceptKeys`).  Auto-repeat presses count as presses.
    """

    def __init__(self, keys: Sequence[str], parse: Callable[[Sequence[str]], list[HookKey]],
                 decode: Callable[[Any, Any], Optional[RawKey]], backend: str,
                 dispatch: Optional[Dispatch] = None) -> None:
        self._parse = parse
        self._keys = parse(keys)
        self._decode = decode
        self._lock = threading.Lock()
        self._on_key: Optional[Callable[[str], Any]] = None
        self._down: set[int] = set()  #: codes whose press we swallowed, awaiting release
        self._thread = CallbackThread("ghosttype-accept-key") if dispatch is None else None
        self._dispatch: Dispatch = dispatch or self._thread  # type: ignore[assignment]
        self._decode_failed = False
        self.listener_hook = ListenerHook(backend, self.swallow)
        #: see ``KeySuppressor``: pynput reports a press to ``on_press`` before
        #: macOS's intercept can drop it, while Windows' filter drops it first
        self.listener_sees_swallowed = backend != "win32"

    # -- KeySuppressor ---------------------------------------------------------

    @property
    def armed(self) -> bool:
        return self._on_key is not None

    @property
    def keys(self) -> list[str]:
        return [k.name for k in self._keys]

    def arm(self, on_key: Callable[[str], None]) -> None:
        with self._lock:
            self._on_key = on_key

    def disarm(self) -> None:
        with self._lock:
            self._on_key = None

    def set_keys(self, keys: Sequence[str]) -> None:
        """Change the accept keys (config reload).  Raises ``ValueError`` for a
        bad name and keeps the old keys."""
        parsed = self._parse(keys)
        with self._lock:
            self._keys = parsed

    def close(self) -> None:
        self.disarm()
        if self._thread is not None:
            self._thread.close()

    # -- the hook --------------------------------------------------------------

    def swallow(self, a: Any, b: Any) -> bool:
        """The :class:`ListenerHook` callable: decode, then :meth:`decide`.
        Never raises (an exception in the hook would let pynput stop)."""
        try:
            raw = self._decode(a, b)
        except Exception:
            if not self._decode_failed:
                self._decode_failed = True
                log.exception("cannot decode a key event; accept keys pass through")
            return False
        return raw is not None and self.decide(raw)

    def decide(self, raw: RawKey) -> bool:
        """True to swallow this event (see the class docstring)."""
        if raw.ours:
            return False
        with self._lock:
            if not raw.pressed:
                if raw.code in self._down:
                    self._down.discard(raw.code)
                    return True
                return False
            on_key = self._on_key
            match = None if on_key is None else self._match(raw)
            if match is None:
                self._down.discard(raw.code)
                return False
            self._down.add(raw.code)
        self._dispatch(on_key, match.name)  # type: ignore[arg-type]
        return True

    def _match(self, raw: RawKey) -> Optional[HookKey]:
        for key in self._keys:
            if key.code == raw.code and key.modifiers == raw.modifiers:
                return key
        return None
