"""Composition root of ``ghosttype ibus run``: builds the pieces and wires them.

    ibus-daemon -> IBusService (D-Bus thread) -> Engine -> Controller -> SuggestionWorker
    Controller -> IBusFrontend (sink, injector, suppressor) -> focused Engine -> signals
    ConfigWatcher (watchdog thread) -> Controller.apply_config
    StatsRecorder (its own thread) reads Controller.counters -> the stats file
    menu's "Off in <app>", "Settings..." -> UserActions -> config file, Controller

The same Controller, worker, config and privacy rules as ``ghosttype run``,
started, reloaded and stopped the same way (:class:`daemon.lifecycle.Lifecycle`);
no Qt, no keyboard listener, no platform backend.
"""

from __future__ import annotations

import functools
import logging
import pathlib
import signal
import threading
import time
from typing import Callable, Optional

from daemon import __version__
from daemon.checks import program_version
from daemon.controller import Controller
from daemon.frontends.base import PlatformError
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.a11y_caret import A11yCaret
from daemon.frontends.ibus.inline import shell_extension
from daemon.frontends.ibus.bus import IBusService, IBusUnavailable, ibus_address
from daemon.frontends.ibus.inline.compositor import program
from daemon.frontends.ibus.frontend import IBusFrontend
from daemon.frontends.ibus.inline.shell_ghost import ShellGhost
from daemon.lifecycle import Lifecycle
from daemon.user_actions import UserActions

log = logging.getLogger(__name__)

ENGINE_NAME = "ghosttype"
BUS_NAME = "org.freedesktop.IBus.GhostType"
HOMEPAGE = ""
#: ibus-daemon versions that understand IBUS_ATTR_PREEDIT_PREDICTION.
PREDICTION_HINT_SINCE = (1, 5, 33)


def engine_desc(layout: str = "default", variant: str = "") -> wire.EngineDesc:
    """The engine's description.  ``layout`` is the keyboard layout GNOME
    applies while the engine is the input source; ``"default"`` leaves the
    layout in use as it is (GNOME applies nothing for it)."""
    return wire.EngineDesc(
        name=ENGINE_NAME, longname="ghosttype", description="Local AI autocomplete: grey suggestion, Tab accepts",
        language="en", license="MIT", author="ghosttype", icon="", layout=layout, layout_variant=variant, rank=0,
        symbol="G", version=__version__,
    )


def component(exec_line: str = "", layout: str = "default", variant: str = "") -> wire.Component:
    """The component: ``exec_line`` is the command ibus-daemon runs (empty
    when the engine registers itself at run time)."""
    return wire.Component(
        name=BUS_NAME, description="ghosttype autocomplete engine", version=__version__, license="MIT",
        author="ghosttype", homepage=HOMEPAGE, exec=exec_line, textdomain="",
        engines=(engine_desc(layout, variant),),
    )


def since_process_start_ms() -> float:
    """Milliseconds since this process was created (interpreter start included)."""
    import psutil

    return (time.time() - psutil.Process().create_time()) * 1000.0


def ibus_version() -> Optional[tuple[int, ...]]:
    """The installed IBus version (``ibus version``), or None."""
    version = program_version("ibus", "version", pattern=r"\d+\.\d+\.\d+")
    return tuple(int(x) for x in version.split(".")) if version else None


def start_shell_ghost(frontend: IBusFrontend, verify: Callable[[int], Optional[str]] = program) -> ShellGhost:
    """Reach ghosttype's GNOME Shell extension or KWin effect on the session bus, on a thread
    of its own (keys never wait for it), and follow it: the frontend draws
    with it from the moment it answers.  Where it is installed and the user
    has not switched it off, it is then enabled for this user.  ``verify``: which program a
    connection's process runs (:class:`ShellGhost`)."""
    def redisplay() -> None:  # the extension came or went: draw with the display that applies now
        engine = frontend.focused
        if engine is not None:
            engine.display(engine.shown)

    def caret(x: int, y: int, w: int, h: int) -> None:  # KWin's effect: where the focused field's caret is
        engine = frontend.focused
        if engine is not None:
            engine.set_cursor_location(x, y, w, h)

    def stale(text: str, drawn: Optional[Callable[[str], None]]) -> None:  # KWin's effect could not place it:
        # IBus's popup shows it, and who waits to hear what is on screen hears it from there
        engine = frontend.focused
        if engine is not None:
            engine.carets.stale()  # read from the accessibility bus from now on
        if engine is not None and engine.shown == text:
            engine.display(text, drawn)

    def app() -> None:  # the plug-in named another application that has the keys
        engine = frontend.focused
        if engine is not None:
            engine.app_changed()
            engine.carets.app_changed()  # a Gecko application's field on KWin: read its caret

    shell = ShellGhost(on_change=redisplay, on_caret=caret, on_stale=stale, on_app=app, verify=verify)

    def connect() -> None:
        try:
            shell.start()
        except (OSError, TimeoutError, ValueError, KeyError) as e:
            log.info("no session bus (%s): suggestions use IBus's popup", type(e).__name__)
            return
        except Exception:
            log.exception("cannot follow the GNOME Shell extension: suggestions use IBus's popup")
            return
        frontend.shell = shell
        redisplay()
        reader = start_a11y_caret(frontend)
        if reader is not None:
            frontend.a11y_caret = reader
        if shell_extension.installed() and not shell.present:
            log.info("GNOME Shell extension for this user: %s",
                     shell_extension.enable_when_loaded() or "GNOME Shell's settings cannot be read")

    threading.Thread(target=connect, name="shell-ghost-start", daemon=True).start()
    return shell


def caret_read(frontend: IBusFrontend, pid: int, x: int, y: int, w: int, h: int) -> None:
    """A caret read from the accessibility bus: the focused field's engine places the suggestion there."""
    engine = frontend.focused
    if engine is not None:
        engine.carets.read(pid, x, y, w, h)


def start_a11y_caret(frontend: IBusFrontend) -> Optional[A11yCaret]:
    """The reader of carets from the accessibility bus, for fields whose caret the desktop never passes on
    (it listens only when a field asks: :mod:`~daemon.frontends.ibus.a11y_caret`); None without that bus."""
    reader = A11yCaret(on_caret=functools.partial(caret_read, frontend))
    try:
        reader.start()
    except (PlatformError, OSError, TimeoutError, ValueError) as e:
        log.info("no accessibility bus (%s): a field that reports no caret gets no inline suggestion",
                 type(e).__name__)
        return None
    return reader


class EngineProcess:
    """Builds and runs the engine; :meth:`run` blocks until ibus-daemon goes away."""

    def __init__(self, config_path: pathlib.Path, overrides: dict, log_level: Optional[str] = None,
                 started_by_ibus: bool = False) -> None:
        self.config_path = config_path
        self.started_by_ibus = started_by_ibus
        self.lifecycle = Lifecycle(config_path, overrides, log_level, log=log)
        self._service: Optional[IBusService] = None

    def run(self) -> int:
        lifecycle = self.lifecycle
        config = lifecycle.load()
        address = ibus_address()
        if address is None:
            raise IBusUnavailable("no ibus-daemon is running for this session (start it with `ibus-daemon -d`, "
                                  "or select ghosttype as an input source)")
        frontend = IBusFrontend()
        controller = Controller(config, frontend)
        frontend.attach(controller)
        stats = lifecycle.adopt(controller)
        frontend.actions = UserActions(self.config_path, lambda: controller.config, lifecycle.on_config_change, stats)
        # Register before anything slow (the model loads on the worker's
        # thread afterwards): a desktop gives a selected engine only a few
        # seconds to appear.  Keys pass through untouched until the model is ready.
        service = IBusService(address, frontend)
        self._service = service
        if self.started_by_ibus:
            service.request_name(BUS_NAME)
        else:
            service.register_component(component())
        log.info("registered with ibus-daemon %.0f ms after the process started", since_process_start_ms())
        try:
            service.watch_panel()
        except IBusUnavailable as e:
            log.warning("cannot tell whether an IBus panel runs (%s): assuming one does", e)
        shell = start_shell_ghost(frontend)
        lifecycle.start()
        version = ibus_version()
        frontend.prediction_hint = version is not None and version >= PREDICTION_HINT_SINCE
        lifecycle.watch()
        previous = {s: signal.signal(s, lambda *_: service.stop()) for s in (signal.SIGTERM, signal.SIGINT)}
        log.info("ghosttype IBus engine running (%s, config %s)",
                 "started by ibus-daemon" if self.started_by_ibus else "registered at run time", self.config_path)
        try:
            service.run()
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
            a11y = frontend.a11y_caret
            lifecycle.shutdown(links=(("GNOME Shell link", shell.close),
                                      *((("accessibility bus", a11y.close),) if a11y is not None else ())),
                               outputs=(("connection", service.close),))
            log.info("ghosttype IBus engine stopped")
        return 0
