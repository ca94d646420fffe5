"""Status and settings: the part of the :class:`~daemon.controller.Controller`
that turns the switches (enabled, paused), the configuration and the model's
state into one status for the frontend (``loading`` | ``ready`` | ``disabled``
| ``paused`` | ``error``, published through ``UiSink.set_status`` and the
``ghosttype.status`` log line when it changes).

Threads: :meth:`set_enabled` / :meth:`set_paused` run on the frontend's main
thread (the tray, the IBus engine's properties), the pause key's toggle on
the keyboard listener's; :meth:`apply_config` / :meth:`on_config_error` on
the config watcher's thread; :meth:`on_backend_status` on the worker thread.
"""

from __future__ import annotations

import logging

from daemon.capture.tracker import InputTracker
from daemon.config import Config
from daemon.logsetup import STATUS_LOGGER

log = logging.getLogger(__name__)
STATUS_LOG = logging.getLogger(STATUS_LOGGER)


class StatusAndSettings:
    """Part of :class:`~daemon.controller.Controller`: switches, configuration, status."""

    def _active(self) -> bool:
        return self._enabled and not self._paused and not self._blocked and self._backend[0] == "ready"

    def set_enabled(self, enabled: bool) -> None:
        with self._lock:
            self._enabled = bool(enabled)
            if not self._enabled:
                self._reset("disabled")
            self._publish_status()

    def set_paused(self, paused: bool) -> None:
        with self._lock:
            self._set_paused_locked(bool(paused))

    def toggle_pause(self) -> None:
        with self._lock:
            self._set_paused_locked(not self._paused)

    def _set_paused_locked(self, paused: bool) -> None:
        self._paused = paused
        if paused:
            self._reset("paused")
        self._publish_status()

    def apply_config(self, config: Config) -> None:
        """A new valid configuration (from the watcher).  ``enabled`` follows
        the file when the file's value changed; the tray may override it."""
        with self._lock:
            old = self._config
            self._config = config
            self._params = config.beam_params()
            self._config_error = ""
            if config.buffer_chars != old.buffer_chars:
                kept = self.tracker.text
                self.tracker = InputTracker(config.buffer_chars)
                self.tracker.replace(kept)
                self._pending = None
                if self._learner is not None:
                    self._learner.set_buffer(config.buffer_chars)
            if config.enabled != old.enabled:
                self._enabled = config.enabled
                if not self._enabled:
                    self._reset("disabled")
            if self._worker is not None and config.debounce_ms != old.debounce_ms:
                self._worker.set_debounce(config.debounce_ms)
            self._update_block()  # the denylist or unknown_fields may have changed
            self._publish_status()

    def on_config_error(self, message: str) -> None:
        """The config file became invalid; the previous config stays in force."""
        with self._lock:
            self._config_error = message
            self._publish_status()

    def on_backend_status(self, state: str, message: str = "") -> None:
        """The worker reports ``loading`` / ``ready`` / ``error``."""
        with self._lock:
            self._backend = (state, message)
            if state != "ready":
                self._reset("backend-" + state)
            self._publish_status()

    def _publish_status(self) -> None:
        if not self._enabled:
            status = ("disabled", "")
        elif self._paused:
            status = ("paused", "")
        elif self._backend[0] != "ready":
            status = self._backend
        elif self._config_error:
            status = ("error", self._config_error)
        else:
            status = ("ready", self._backend[1])  # e.g. where suggestions come from
        if status != self._status:
            self._status = status
            STATUS_LOG.info("status: %s%s", status[0], f" ({status[1]})" if status[1] else "")
            self._sink.set_status(*status)
