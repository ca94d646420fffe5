"""Composition root of ``ghosttype run``: builds the pieces and wires them.

No logic lives here beyond the order of construction and tear-down:

    keyboard (pynput threads) -> AcceptKeys.on_key -> Controller -> SuggestionWorker (model thread)
    Controller -> AcceptKeys (arms the KeySuppressor once drawn) -> UiSink (front end's mailbox) -> overlay / tray
    KeySuppressor (X thread, or a filter in the keyboard hook on Windows/macOS)
        -> AcceptKeys.on_grabbed -> Controller.accept, then TextInjector, then Controller.inserted
    ConfigWatcher (watchdog thread) -> Controller.apply_config
    StatsRecorder (its own thread) reads Controller.counters -> the stats file
    tray's "Off in <app>", "Settings..." -> UserActions -> config file, Controller

The config, the worker, the config watcher, the stats, a reload and the
order of tear-down are the same for the IBus frontend: :class:`daemon.lifecycle.Lifecycle`.
The front end (Qt) is passed in as a factory so this package never imports
Qt; ``daemon.commands.run`` supplies it.
"""

from __future__ import annotations

import logging
import pathlib
import threading
from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from daemon.controller import Controller, UiSink
from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.accept_keys import AcceptKeys
from daemon.frontends.overlay.event_pump import EventPump
from daemon.frontends.overlay.focus_memory import FocusMemory
from daemon.frontends.overlay.keyboard import KeyboardSource
from daemon.frontends.overlay.platform import Platform, select_platform
from daemon.frontends.overlay.platform.notifications import desktop_notifier
from daemon.lifecycle import Lifecycle
from daemon.notices import STATUS_LOG, Notices, startup_line
from daemon.user_actions import UserActions

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
    """What this frontend started besides the lifecycle's parts, so it can be
    stopped around them."""

    platform: Platform
    frontend: FrontEnd
    controller: Controller
    accept_keys: AcceptKeys
    keyboard: KeyboardSource
    stop: threading.Event
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
        self.frontend_factory = frontend_factory
        self._rt: Optional[_Runtime] = None
        self.notices = Notices(desktop_notifier())
        self.lifecycle = Lifecycle(config_path, overrides, log_level, self.notices, log)

    def run(self) -> int:
        lifecycle = self.lifecycle
        config = lifecycle.load()
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
        actions = UserActions(self.config_path, lambda: controller_box[0].config, lifecycle.on_config_change,
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

        accept_keys = AcceptKeys(frontend.sink, platform.suppressor, platform.injector)
        controller = Controller(config, accept_keys, focus=focus, caret=platform.caret)
        accept_keys.attach(controller)
        controller_box.append(controller)
        actions.stats = lifecycle.adopt(controller, accept_keys)
        lifecycle.start()
        field_events = self._follow_field_events(platform, controller)

        keyboard = KeyboardSource(accept_keys.on_key, hook=platform.listener_hook)
        keyboard.start()
        lifecycle.watch()
        stop = threading.Event()
        self._rt = _Runtime(platform, frontend, controller, accept_keys, keyboard, stop, field_events)
        threading.Thread(target=self._housekeeping, name="ghosttype-watchdog", daemon=True).start()
        log.info("config %s", self.config_path)
        STATUS_LOG.info("%s", startup_line(config, platform.name))
        try:
            return frontend.run()
        finally:
            self._shutdown()

    @staticmethod
    def _follow_field_events(platform: Platform, controller: Controller) -> Optional[EventPump]:
        """Accessibility events (focus, caret, text changes inside a window)
        re-check the focused field on a thread of their own."""
        pump = EventPump(controller.on_field_event, name="ghosttype-field-events")
        if not platform.focus.watch(pump.poke):
            return None
        pump.start()
        return pump

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
                    log.debug("state: %s; counters: %s; accept keys: %s; worker: %s", rt.controller.state(),
                              dict(rt.controller.counters), dict(rt.accept_keys.counters),
                              self.lifecycle.worker.stats if self.lifecycle.worker is not None else None)
            except Exception:  # housekeeping must never end the daemon
                log.exception("housekeeping failed")

    def _shutdown(self) -> None:
        rt = self._rt
        if rt is None:
            return
        rt.stop.set()
        self.lifecycle.shutdown(
            inputs=(("keyboard", rt.keyboard.stop),
                    ("field events", rt.field_events.stop if rt.field_events is not None else lambda: None)),
            outputs=(("platform", rt.platform.close), ("front end", rt.frontend.close)),
        )
        self._rt = None
        log.info("ghosttype stopped")
