"""Composition root of ``ghosttype run``: builds the pieces and wires them.

No logic lives here beyond the order of construction and tear-down:

    keyboard (pynput threads) -> Controller -> SuggestionWorker (model thread)
    Controller -> UiSink (front end's mailbox) -> overlay / tray
    KeySuppressor (X thread, or a filter in the keyboard hook on Windows/macOS)
        -> Controller.on_suppressed_key -> TextInjector
    ConfigWatcher (watchdog thread) -> Controller.apply_config
    StatsRecorder (its own thread) reads Controller.counters -> the stats file
    tray's "Off in <app>", "Settings..." -> UserActions -> config file, Controller

The front end (Qt) is passed in as a factory so this package never imports
Qt; ``daemon.commands.run`` supplies it.
"""

from __future__ import annotations

import logging
import pathlib
import threading
from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from daemon.frontends.overlay.keyboard import KeyboardSource
from daemon.config import Config
from daemon.config_watch import ConfigWatcher
from daemon.controller import Controller, UiSink
from daemon.frontends.overlay.event_pump import EventPump
from daemon.frontends.overlay.focus_memory import FocusMemory
from daemon.logsetup import set_level, setup_logging
from daemon.notices import STATUS_LOG, Notices, startup_line
from daemon.frontends.overlay.platform import Platform, select_platform
from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.notifications import desktop_notifier
from daemon.runtime import load_startup_config, make_decoder_factory, new_worker  # noqa: F401  (re-exported)
from daemon.stats import StatsRecorder
from daemon.user_actions import UserActions
from daemon.worker import SuggestionWorker

log = logging.getLogger(__name__)

#: How often the keyboard listener is checked (and restarted if its thread died)
#: and the focused window re-read (focus can move without a key or click).
WATCHDOG_INTERVAL_S = 2.0
FOCUS_POLL_INTERVAL_S = 0.5


class FrontEnd(Protocol):
    sink: UiSink

    def scale(self) -> float: ...

    def run(self) -> int: ...

    def quit(self) -> None: ...

    def close(self) -> None: ...


FrontEndFactory = Callable[
    [Optional[pathlib.Path], Callable[[bool], None], Callable[[bool], None], UserActions], FrontEnd
]


class StartupError(Exception):
    """The daemon cannot start; str() is one line saying what to do."""


@dataclass
class _Runtime:
    """Everything started, so it can be stopped in reverse order."""

    platform: Platform
    frontend: FrontEnd
    controller: Controller
    worker: SuggestionWorker
    keyboard: KeyboardSource
    watcher: ConfigWatcher
    stop: threading.Event
    stats: StatsRecorder
    field_events: Optional[EventPump] = None


class Daemon:
    """Builds and runs ghosttype.  ``run()`` blocks in the front end's event loop."""

    def __init__(
        self,
        config_path: pathlib.Path,
        overrides: dict,
        frontend_factory: FrontEndFactory,
        log_level: Optional[str] = None,
    ) -> None:
        self.config_path = config_path
        self.overrides = overrides
        self.frontend_factory = frontend_factory
        self.log_level = log_level
        self._worker_lock = threading.Lock()
        self._rt: Optional[_Runtime] = None
        self._controller: Optional[Controller] = None
        self.notices = Notices(desktop_notifier())

    # -- configuration ---------------------------------------------------------------

    def _load(self) -> tuple[Config, str]:
        return load_startup_config(self.config_path, self.overrides)

    # -- run -------------------------------------------------------------------------

    def run(self) -> int:
        config, config_error = self._load()
        setup_logging(self.log_level or config.log_level)
        if config_error:
            log.error("config: %s (using defaults until it is fixed)", config_error.splitlines()[0])
        scale_holder: list[Callable[[], float]] = [lambda: 1.0]
        try:
            platform = select_platform(
                accept_keys=(config.accept_key, config.accept_word_key),
                scale=lambda: scale_holder[0](),
            )
        except PlatformError as e:
            self.notices.startup_failed(str(e))
            raise StartupError(str(e)) from None
        controller_box: list[Controller] = []
        focus = FocusMemory(platform.focus)
        actions = UserActions(self.config_path, lambda: controller_box[0].config, self._on_config_change,
                              last_app=focus.last_app)
        try:
            frontend = self.frontend_factory(
                self.config_path,
                lambda on: controller_box[0].set_enabled(on),
                lambda on: controller_box[0].set_paused(on),
                actions,
            )
        except Exception as e:
            platform.close()
            raise StartupError(str(e)) from None
        scale_holder[0] = frontend.scale

        controller = Controller(
            config,
            frontend.sink,
            injector=platform.injector,
            suppressor=platform.suppressor,
            focus=focus,
            caret=platform.caret,
        )
        controller_box.append(controller)
        actions.stats = stats = StatsRecorder(controller.counters, lambda: controller.config.stats)
        stats.start()
        self._controller = controller
        worker = self._new_worker(config, controller)
        controller.attach_worker(worker)
        worker.start()
        if config_error:
            controller.on_config_error(config_error)
            self.notices.config_error(config_error.splitlines()[0])
        controller.start()
        field_events = self._follow_field_events(platform, controller)

        keyboard = KeyboardSource(controller.on_key, hook=platform.listener_hook)
        keyboard.start()
        watcher = ConfigWatcher(
            self.config_path,
            on_change=self._on_config_change,
            on_error=self._on_config_error,
            current=config,
        )
        watcher.start()
        stop = threading.Event()
        self._rt = _Runtime(platform, frontend, controller, worker, keyboard, watcher, stop, stats, field_events)
        threading.Thread(target=self._housekeeping, name="ghosttype-watchdog", daemon=True).start()
        log.info("config %s", self.config_path)
        STATUS_LOG.info("%s", startup_line(config, platform.name))
        try:
            return frontend.run()
        finally:
            self._shutdown()

    def _new_worker(self, config: Config, controller: Controller) -> SuggestionWorker:
        return new_worker(config, controller, on_status=self.notices.backend_status)

    @staticmethod
    def _follow_field_events(platform: Platform, controller: Controller) -> Optional[EventPump]:
        """Accessibility events (focus, caret, text changes inside a window)
        re-check the focused field on a thread of their own."""
        watch = getattr(platform.focus, "watch", None)
        if watch is None:
            return None
        pump = EventPump(controller.on_field_event, name="ghosttype-field-events")
        if not watch(pump.poke):
            return None
        pump.start()
        return pump

    def _on_config_change(self, config: Config) -> None:
        self.notices.config_ok()
        self._apply_config(config.with_overrides(**self.overrides))

    def _on_config_error(self, message: str) -> None:
        if self._controller is not None:
            self._controller.on_config_error(message)
        self.notices.config_error(message)

    def _apply_config(self, config: Config) -> None:
        rt = self._rt
        if rt is None:
            return
        old = rt.controller.config
        set_level(config.log_level if self.log_level is None else self.log_level)
        if (config.accept_key, config.accept_word_key) != (old.accept_key, old.accept_word_key):
            set_keys = getattr(rt.platform.suppressor, "set_keys", None)
            if set_keys is not None:
                set_keys((config.accept_key, config.accept_word_key))
        rt.controller.apply_config(config)
        if config.worker_settings() != old.worker_settings():
            # A different model (or more beams than the context has sequences
            # for) needs a new backend: load it on a new worker, drop the old.
            with self._worker_lock:
                old_worker = rt.worker
                rt.worker = self._new_worker(config, rt.controller)
                rt.controller.attach_worker(rt.worker)
                rt.worker.start()
            old_worker.stop()
            log.info("model settings changed: reloading the model")

    def _housekeeping(self) -> None:
        rt = self._rt
        assert rt is not None
        ticks_per_watchdog = max(1, round(WATCHDOG_INTERVAL_S / FOCUS_POLL_INTERVAL_S))
        tick = 0
        while not rt.stop.wait(FOCUS_POLL_INTERVAL_S):
            tick += 1
            try:
                rt.controller.on_focus(only_if_changed=True)
                if tick % ticks_per_watchdog == 0:
                    if rt.keyboard.watchdog():
                        log.warning("keyboard listener had stopped; restarted it")
                    log.debug("state: %s; counters: %s; worker: %s", rt.controller.state(), dict(rt.controller.counters), rt.worker.stats)
            except Exception:  # housekeeping must never end the daemon
                log.exception("housekeeping failed")

    def _shutdown(self) -> None:
        rt = self._rt
        if rt is None:
            return
        rt.stop.set()
        for step, action in (
            ("keyboard", rt.keyboard.stop),
            ("field events", rt.field_events.stop if rt.field_events is not None else lambda: None),
            ("config watcher", rt.watcher.stop),
            ("controller", rt.controller.close),
            ("stats", rt.stats.stop),
            ("worker", rt.worker.stop),
            ("platform", rt.platform.close),
            ("front end", rt.frontend.close),
        ):
            try:
                action()
            except Exception:
                log.exception("stopping the %s failed", step)
        self._rt = None
        log.info("ghosttype stopped")
