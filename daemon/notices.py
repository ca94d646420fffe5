"""What ghosttype tells the user without a tray: status lines and
notifications for errors that need them.

* The ``ghosttype.status`` logger carries one line at start (running, the
  accept keys, how to pause and quit) and one per status change (ready,
  paused, disabled, error).  It is shown at the default log level
  (``warning``), like warnings, unless the user asks for less than that.
* :class:`Notices` turns the errors that need the user (the model failed to
  load, the config file is invalid, the session cannot be used, the learned
  words cannot be kept) into desktop notifications, once per distinct message.
"""

from __future__ import annotations

import logging
from typing import Optional, Protocol

from daemon.config import Config
from daemon.logsetup import STATUS_LOGGER

STATUS_LOG = logging.getLogger(STATUS_LOGGER)


class Notifier(Protocol):
    def notify(self, summary: str, body: str = "", urgency: int = 2) -> bool: ...


def key_label(spec: str) -> str:
    """``ctrl+right`` -> ``Ctrl+Right`` (for messages)."""
    return "+".join(part[:1].upper() + part[1:] for part in spec.split("+")) if spec else ""


def startup_line(config: Config, platform: str) -> str:
    """The one line printed when the daemon is up."""
    parts = [f"ghosttype running on {platform}: {key_label(config.accept_key)} accepts a suggestion"]
    if config.accept_word_key:
        parts.append(f"{key_label(config.accept_word_key)} accepts one word")
    parts.append(f"{key_label(config.dismiss_key) or 'Esc'} dismisses")
    if config.pause_key:
        parts.append(f"{key_label(config.pause_key)} pauses and resumes")
    parts.append("Ctrl+C or `kill` (SIGTERM) quits")
    return ", ".join(parts)


class Notices:
    """Desktop notifications for the errors that need the user, each sent
    once per distinct message (a config file that stays broken, or a model
    that fails again with the same error, does not notify again)."""

    def __init__(self, notifier: Optional[Notifier]) -> None:
        self._notifier = notifier
        self._sent: dict[str, str] = {}  #: kind -> last message notified

    def config_error(self, message: str) -> None:
        self._once("config", "ghosttype: config file invalid",
                   message + "\nThe previous settings stay in force until the file is fixed.")

    def config_ok(self) -> None:
        self._sent.pop("config", None)

    def backend_status(self, state: str, message: str = "") -> None:
        if state == "error":
            self._once("model", "ghosttype: the model failed to load",
                       message + "\nTyping is unaffected; no suggestions until this is fixed.")
        elif state == "ready":
            self._sent.pop("model", None)

    def memory_warning(self, message: str) -> None:
        """``learn = "persist"`` cannot keep the memory (a locked or absent
        keyring: session only) or a memory file was not loaded
        (:class:`daemon.memory.persist.MemoryKeeper`'s ``on_warning``)."""
        self._once("memory", "ghosttype: what it learns of your words", message)

    def startup_failed(self, message: str) -> None:
        self._once("startup", "ghosttype cannot run here", message)

    def _once(self, kind: str, summary: str, body: str) -> None:
        if self._sent.get(kind) == body:
            return
        self._sent[kind] = body
        notify(self._notifier, summary, body)


def notify(notifier: Optional[Notifier], summary: str, body: str) -> bool:
    """Send one notification if a notifier exists; never raises."""
    if notifier is None:
        return False
    try:
        sent = notifier.notify(summary, body)
    except Exception:  # noqa: BLE001 - a notification is best effort
        STATUS_LOG.debug("notification failed", exc_info=True)
        return False
    STATUS_LOG.debug("desktop notification %s", "sent" if sent else "not sent (no notification server)")
    return sent
